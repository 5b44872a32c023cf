//! actix-web 4: HttpServer starts `workers` threads, each running its own single-threaded
//! runtime with its own copy of the App; an acceptor thread hands connections to them.
use std::{env, io, process};

use actix_web::{web, App, HttpResponse, HttpServer};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy)]
enum Scenario {
    Hello,
    Plaintext,
    Json,
}

#[derive(Deserialize, Serialize)]
struct Ping {
    sequence: u64,
}

// actix adds Content-Length and Date itself.
async fn hello() -> HttpResponse {
    HttpResponse::Ok().body("Hello world!")
}

async fn plaintext() -> HttpResponse {
    HttpResponse::Ok().content_type("text/plain").body("Hello, World!")
}

async fn ping(ping: web::Json<Ping>) -> web::Json<Ping> {
    ping
}

fn main() -> io::Result<()> {
    let args: Vec<String> = env::args().collect();
    if args.len() != 5 {
        eprintln!("usage: {} <hello|plaintext|json> <host> <port> <workers>", args[0]);
        process::exit(2);
    }
    let scenario = match args[1].as_str() {
        "hello" => Scenario::Hello,
        "plaintext" => Scenario::Plaintext,
        "json" => Scenario::Json,
        other => {
            eprintln!("unsupported scenario: {other}");
            process::exit(2);
        }
    };
    let host = args[2].clone();
    let port: u16 = args[3].parse().expect("port must be a number");
    let workers: usize = args[4].parse().expect("workers must be a number");

    actix_web::rt::System::new().block_on(async move {
        HttpServer::new(move || {
            // Unrouted paths get actix's default 404.
            let app = App::new();
            match scenario {
                Scenario::Hello => app.default_service(web::to(hello)),
                Scenario::Plaintext => app.route("/plaintext", web::get().to(plaintext)),
                Scenario::Json => app.route("/ping", web::post().to(ping)),
            }
        })
        .workers(workers)
        .bind((host, port))?
        .run()
        .await
    })
}
