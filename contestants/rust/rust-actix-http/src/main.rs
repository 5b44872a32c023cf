//! actix-http without actix-web: an actix-server whose workers each run an `HttpService` over a
//! plain `fn_service` that answers static responses. actix-server's accept thread hands each
//! connection to one worker thread, which runs its own single-threaded runtime; it never moves.
use std::convert::Infallible;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use std::{fs, io, process};

use actix_http::header::{HeaderValue, CONTENT_TYPE};
use actix_http::{ConnectionType, HttpService, KeepAlive, Method, Protocol, Request, Response, StatusCode};
use actix_rt::net::TcpStream;
use actix_server::Server;
use actix_service::{fn_service, ServiceFactoryExt};
use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use sb_args::requests::Answer;
use sb_args::{files, Route};
use serde::{Deserialize, Serialize};

mod timed;
use timed::Timed;

#[derive(Clone, Copy)]
enum Scenario {
    Hello,
    HelloTimeout(Duration),
    Plaintext,
    Json,
    Requests(Route),
    /// `file`, with the folder `SB_FILES` names.
    File(&'static Path),
}

#[derive(Deserialize, Serialize)]
struct Ping {
    sequence: u64,
}

/// actix-http's h1 decoder reads heads of up to 128 KiB: refuse those over 64 KiB here, as the
/// actix-web contestant does.
const MAX_HEADER_BYTES: usize = 64 << 10;
/// A `json` body longer than this is refused.
const MAX_BODY_BYTES: usize = 64 << 10;

fn main() {
    let args = sb_args::parse(&["hello", "hello-timeout", "plaintext", "json", "work", "counter", "file"]);
    let scenario = match args.scenario.as_str() {
        "hello" => Scenario::Hello,
        "hello-timeout" => Scenario::HelloTimeout(sb_args::timeout_from_env()),
        "plaintext" => Scenario::Plaintext,
        "json" => Scenario::Json,
        "work" => Scenario::Requests(Route::Work),
        "file" => Scenario::File(files::folder_from_env()),
        _ => Scenario::Requests(Route::Counter),
    };
    let (host, port) = (args.host.as_str(), args.port);
    if let Err(e) = actix_rt::System::new().block_on(serve((host, port), args.workers, scenario)) {
        eprintln!("cannot listen on {host} port {port}: {e}");
        process::exit(1);
    }
}

async fn serve(addr: (&str, u16), workers: usize, scenario: Scenario) -> io::Result<()> {
    let server = Server::build().workers(workers);
    // A factory per worker: each builds its own HttpService on its own thread. actix's keep-alive
    // and request-head timers are off (KeepAlive::Os, zero): no scenario has an idle limit but
    // hello-timeout, which bounds each read and write itself (timed.rs).
    let server = match scenario {
        Scenario::HelloTimeout(limit) => server.bind("rust-actix-http", addr, move || {
            // What HttpService::tcp() does, with the stream wrapped in its timers.
            fn_service(move |io: TcpStream| async move {
                let _ = io.set_nodelay(true);
                let peer = io.peer_addr().ok();
                Ok((Timed::new(io, limit), Protocol::Http1, peer))
            })
            .and_then(
                HttpService::build()
                    .keep_alive(KeepAlive::Os)
                    .client_request_timeout(Duration::ZERO)
                    .finish(fn_service(move |req| respond(scenario, req))),
            )
        })?,
        _ => server.bind("rust-actix-http", addr, move || {
            HttpService::build()
                .keep_alive(KeepAlive::Os)
                .client_request_timeout(Duration::ZERO)
                .tcp_nodelay(true)
                .finish(fn_service(move |req| respond(scenario, req)))
                .tcp()
        })?,
    };
    server.run().await
}

async fn respond(scenario: Scenario, mut req: Request) -> Result<Response<Bytes>, Infallible> {
    let start = Instant::now();
    let header_bytes: usize = req.head().headers().iter().map(|(name, value)| name.as_str().len() + value.len() + 4).sum();
    if header_bytes > MAX_HEADER_BYTES {
        let mut response = status(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE);
        response.head_mut().set_connection_type(ConnectionType::Close);
        return Ok(response);
    }
    // actix-http adds Content-Length and Date itself.
    let response = match (scenario, req.method(), req.path()) {
        (Scenario::Hello | Scenario::HelloTimeout(_), _, _) => {
            Response::with_body(StatusCode::OK, Bytes::from_static(b"Hello world!"))
        }
        (Scenario::Plaintext, &Method::GET, "/plaintext") => {
            with_type("text/plain", Bytes::from_static(b"Hello, World!"))
        }
        (Scenario::Json, &Method::POST, "/ping") => ping(&mut req).await,
        (Scenario::Requests(route), &Method::GET, path) => match route.answer(path.as_bytes(), start) {
            Answer::Ok(value) => Response::with_body(StatusCode::OK, Bytes::from(value.to_string())),
            Answer::NotFound => status(StatusCode::NOT_FOUND),
            Answer::BadRequest => status(StatusCode::BAD_REQUEST),
        },
        (Scenario::File(folder), &Method::GET, path) => match files::named(folder, path.as_bytes()) {
            Some(path) => file(path).await,
            None => status(StatusCode::NOT_FOUND),
        },
        _ => status(StatusCode::NOT_FOUND),
    };
    Ok(response)
}

async fn ping(req: &mut Request) -> Response<Bytes> {
    let mut payload = req.take_payload();
    let mut body = BytesMut::new();
    while let Some(chunk) = payload.next().await {
        match chunk {
            Ok(chunk) if body.len() + chunk.len() <= MAX_BODY_BYTES => body.extend_from_slice(&chunk),
            _ => return status(StatusCode::BAD_REQUEST),
        }
    }
    match serde_json::from_slice::<Ping>(&body) {
        Ok(ping) => with_type("application/json", Bytes::from(serde_json::to_vec(&ping).unwrap())),
        Err(_) => status(StatusCode::BAD_REQUEST),
    }
}

/// `file`: read anew at every request by std's fs::read on actix-rt's blocking pool (tokio's
/// spawn_blocking, which actix-web's web::block also runs on), then sent as one Bytes body; actix-http
/// has no file body of its own (actix-files' NamedFile needs actix-web).
async fn file(path: PathBuf) -> Response<Bytes> {
    match actix_rt::task::spawn_blocking(move || fs::read(path)).await {
        Ok(Ok(contents)) => Response::with_body(StatusCode::OK, Bytes::from(contents)),
        _ => status(StatusCode::INTERNAL_SERVER_ERROR),
    }
}

fn with_type(content_type: &'static str, body: Bytes) -> Response<Bytes> {
    let mut response = Response::with_body(StatusCode::OK, body);
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

fn status(code: StatusCode) -> Response<Bytes> {
    Response::with_body(code, Bytes::new())
}
