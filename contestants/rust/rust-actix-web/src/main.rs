//! actix-web 4: HttpServer starts `workers` threads, each running its own single-threaded
//! runtime with its own copy of the App; an acceptor thread hands connections to them.
use std::io;
use std::path::Path;

use actix_files::NamedFile;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::middleware::{from_fn, Next};
use actix_web::{web, App, Error, HttpRequest, HttpResponse, HttpServer};
use serde::{Deserialize, Serialize};
use sb_args::{files, Http as Scenario};

#[derive(Deserialize, Serialize)]
struct Ping {
    sequence: u64,
}

// actix adds Content-Length and Date itself; it has no way to leave Date out.
async fn hello() -> HttpResponse {
    HttpResponse::Ok().body("Hello world!")
}

async fn plaintext() -> HttpResponse {
    HttpResponse::Ok().content_type("text/plain").body("Hello, World!")
}

async fn ping(ping: web::Json<Ping>) -> web::Json<Ping> {
    ping
}

/// actix-files' NamedFile, opened anew at every request (std's open and stat, on the worker thread);
/// its body is read in chunks on actix's blocking pool (web::block). It adds its own headers
/// (Content-Type, Content-Disposition, ETag, Last-Modified, Accept-Ranges).
async fn file(folder: &Path, req: HttpRequest) -> actix_web::Result<HttpResponse> {
    match files::named(folder, req.path().as_bytes()) {
        Some(path) => Ok(NamedFile::open(path)?.into_response(&req)),
        None => Ok(HttpResponse::NotFound().finish()),
    }
}

// actix-http 3 has no header-size setting (only its fixed 128 KiB read buffer): refuse headers over 64 KiB here.
const MAX_HEADER_BYTES: usize = 64 << 10;

async fn limit_headers(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse, Error> {
    // Each header line is "name: value\r\n".
    let size: usize = req.headers().iter().map(|(name, value)| name.as_str().len() + value.len() + 4).sum();
    if size > MAX_HEADER_BYTES {
        let response = HttpResponse::build(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE).force_close().finish();
        return Ok(req.into_response(response));
    }
    Ok(next.call(req).await?.map_into_boxed_body())
}

fn main() -> io::Result<()> {
    let (args, scenario) = Scenario::from_args_among(&[Scenario::SCENARIOS, &["file"]].concat());
    let host = args.host.clone();
    let port: u16 = args.port;
    let workers: usize = args.workers;

    actix_web::rt::System::new().block_on(async move {
        HttpServer::new(move || {
            // Unrouted paths get actix's default 404.
            let app = App::new().wrap(from_fn(limit_headers));
            match scenario {
                Scenario::Hello => app.default_service(web::to(hello)),
                Scenario::Plaintext => app.route("/plaintext", web::get().to(plaintext)),
                Scenario::Json => app.route("/ping", web::post().to(ping)),
                Scenario::File(folder) => app.route("/file/{name}", web::get().to(move |req| file(folder, req))),
            }
        })
        .workers(workers)
        .tcp_nodelay(true)
        .bind((host, port))?
        .run()
        .await
    })
}
