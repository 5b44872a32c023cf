//! may_minihttp: a minimal HTTP/1.1 server on may's stackful coroutines. Each connection is a
//! coroutine written as blocking code; may's `workers` scheduler threads steal coroutines from each other.
use std::io::{self, Read};
use std::net::Shutdown;
use std::os::fd::BorrowedFd;
use std::process;

use may_minihttp::{HttpService, HttpServiceFactory, Request, Response};
use sb_args::Http as Scenario;
use serde::{Deserialize, Serialize};
use socket2::SockRef;

#[derive(Deserialize, Serialize)]
struct Ping {
    sequence: u64,
}

/// Makes one service per connection; may_minihttp names each connection by its socket's descriptor.
struct Factory(Scenario);

struct Service {
    scenario: Scenario,
    /// The connection's socket, which the coroutine calling this service owns while it lives.
    socket: BorrowedFd<'static>,
}

impl HttpServiceFactory for Factory {
    type Service = Service;

    fn new_service(&self, id: usize) -> Service {
        // SAFETY: the id is the descriptor of the connection's open socket, and the service is
        // dropped with the connection's coroutine, before the socket is closed.
        let socket = unsafe { BorrowedFd::borrow_raw(id as i32) };
        // may_minihttp sets no socket option on the connections it accepts.
        let _ = SockRef::from(&socket).set_tcp_nodelay(true);
        Service { scenario: self.0, socket }
    }
}

// may_minihttp writes `HTTP/1.1`, `Server: M`, Date and Content-Length itself.
impl HttpService for Service {
    fn call(&mut self, req: Request, rsp: &mut Response) -> io::Result<()> {
        // HTTP/1.1 keeps the connection unless told to close; HTTP/1.0 closes it unless asked to keep it.
        let asked = |token: &str| {
            req.headers().iter().any(|h| h.name.eq_ignore_ascii_case("connection") && h.value.eq_ignore_ascii_case(token.as_bytes()))
        };
        let keep_alive = if req.version() == 0 { asked("keep-alive") } else { !asked("close") };
        if !keep_alive {
            // may_minihttp answers every request on the same connection and has no way to end one:
            // shutting the read side makes its connection loop's next read return 0, which ends the
            // connection once this answer has been written.
            rsp.header("Connection: close");
            let _ = SockRef::from(&self.socket).shutdown(Shutdown::Read);
        } else if req.version() == 0 {
            rsp.header("Connection: keep-alive");
        }
        match self.scenario {
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
    match Factory(scenario).start((host, port)) {
        Ok(server) => server.wait(),
        Err(e) => {
            eprintln!("cannot listen on {host} port {port}: {e}");
            process::exit(1);
        }
    }
}
