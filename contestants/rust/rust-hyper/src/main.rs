//! hyper 1.x HTTP/1.1 server on tokio's multi-thread work-stealing runtime, one task per connection.
use std::convert::Infallible;
use std::path::Path;
use std::{io, process};

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::CONTENT_TYPE;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde::{Deserialize, Serialize};
use tokio::net::TcpListener;
use sb_args::{files, Http as Scenario};

#[derive(Deserialize, Serialize)]
struct Ping {
    sequence: u64,
}

fn main() {
    let (args, scenario) = Scenario::from_args_among(&[Scenario::SCENARIOS, &["file"]].concat());
    let workers: usize = args.workers;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .expect("failed to build the tokio runtime");
    let (host, port) = (args.host.as_str(), args.port);
    if let Err(e) = runtime.block_on(serve((host, port), scenario)) {
        eprintln!("cannot listen on {host} port {port}: {e}");
        process::exit(1);
    }
}

async fn serve(addr: (&str, u16), scenario: Scenario) -> io::Result<()> {
    let listener = TcpListener::bind(addr).await?;
    loop {
        // An accept error (EMFILE, ECONNABORTED) concerns one connection, not the server.
        let Ok((stream, _)) = listener.accept().await else { continue };
        let _ = stream.set_nodelay(true);
        tokio::spawn(async move {
            let service = service_fn(move |req| route(scenario, req));
            // pipeline_flush: answers to pipelined requests leave in one write.
            let _ = http1::Builder::new()
                .pipeline_flush(true)
                // hello's contract has no Date (plaintext's and json's do); hyper may leave it out.
                .auto_date_header(scenario != Scenario::Hello)
                // Refuse (431) request heads over 64 KiB instead of buffering up to hyper's ~400 KiB default.
                .max_header_size(64 << 10)
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

// hyper adds Content-Length (the bodies are Full) and, but for hello, Date itself.
async fn route(scenario: Scenario, req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let response = match (scenario, req.method(), req.uri().path()) {
        (Scenario::Hello, _, _) => Response::new(Full::from("Hello world!")),
        (Scenario::Plaintext, &Method::GET, "/plaintext") => Response::builder()
            .header(CONTENT_TYPE, "text/plain")
            .body(Full::from("Hello, World!"))
            .unwrap(),
        (Scenario::Json, &Method::POST, "/ping") => ping(req).await,
        (Scenario::File(folder), &Method::GET, path) => file(folder, path).await,
        _ => status(StatusCode::NOT_FOUND),
    };
    Ok(response)
}

async fn ping(req: Request<Incoming>) -> Response<Full<Bytes>> {
    let Ok(body) = req.into_body().collect().await else {
        return status(StatusCode::BAD_REQUEST);
    };
    match serde_json::from_slice::<Ping>(&body.to_bytes()) {
        Ok(ping) => Response::builder()
            .header(CONTENT_TYPE, "application/json")
            .body(Full::from(serde_json::to_vec(&ping).unwrap()))
            .unwrap(),
        Err(_) => status(StatusCode::BAD_REQUEST),
    }
}

/// `file`: the file read anew by tokio's fs at every request (on its blocking pool), sent as the body.
async fn file(folder: &Path, target: &str) -> Response<Full<Bytes>> {
    let Some(path) = files::named(folder, target.as_bytes()) else {
        return status(StatusCode::NOT_FOUND);
    };
    match tokio::fs::read(path).await {
        Ok(bytes) => Response::new(Full::from(bytes)),
        Err(_) => status(StatusCode::INTERNAL_SERVER_ERROR),
    }
}

fn status(code: StatusCode) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::default());
    *response.status_mut() = code;
    response
}
