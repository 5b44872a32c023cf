//! may_minihttp: a minimal HTTP/1.1 server on may's stackful coroutines. Each connection is a
//! coroutine written as blocking code; may's `workers` scheduler threads steal coroutines from each other.
use std::io::{self, Read};
use std::process;

use may_minihttp::{HttpServer, HttpService, Request, Response};
use serde::{Deserialize, Serialize};
use sb_args::Http as Scenario;

#[derive(Deserialize, Serialize)]
struct Ping {
    sequence: u64,
}

#[derive(Clone)]
struct Service(Scenario);

// may_minihttp writes Content-Length, Date and `Server: M` itself.
impl HttpService for Service {
    fn call(&mut self, req: Request, rsp: &mut Response) -> io::Result<()> {
        match self.0 {
            Scenario::Hello => rsp.body("Hello world!"),
            Scenario::Plaintext if req.method() == "GET" && req.path() == "/plaintext" => {
                rsp.header("Content-Type: text/plain").body("Hello, World!")
            }
            Scenario::Json if req.method() == "POST" && req.path() == "/ping" => {
                let mut body = Vec::new();
                req.body().read_to_end(&mut body)?;
                match serde_json::from_slice::<Ping>(&body) {
                    Ok(ping) => rsp
                        .header("Content-Type: application/json")
                        .body_vec(serde_json::to_vec(&ping)?),
                    Err(_) => {
                        rsp.status_code(400, "Bad Request");
                    }
                }
            }
            _ => {
                // Dropping the body reader consumes any body, so the next pipelined request parses.
                drop(req.body());
                rsp.status_code(404, "Not Found");
            }
        }
        Ok(())
    }
}

fn main() {
    let (args, scenario) = Scenario::from_args();
    let workers: usize = args.workers;
    may::config().set_workers(workers);
    let (host, port) = (args.host.as_str(), args.port);
    match HttpServer(Service(scenario)).start((host, port)) {
        Ok(server) => server.wait(),
        Err(e) => {
            eprintln!("cannot listen on {host} port {port}: {e}");
            process::exit(1);
        }
    }
}
