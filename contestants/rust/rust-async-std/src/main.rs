//! async-std: its global work-stealing executor, one task per connection.
use std::path::Path;
use std::time::Duration;
use std::{env, process};

use async_std::fs::File;
use async_std::io::{self, ReadExt, WriteExt};
use async_std::net::{TcpListener, TcpStream};
use async_std::stream::StreamExt;
use async_std::task;

use sb_args::files::{self, Pipeline, Request};
use sb_args::requests::{BAD_REQUEST, NOT_FOUND};
use sb_args::{Raw as Scenario, Requests, Route, ECHO_BUFFER_BYTES, HELLO};

fn main() {
    let (args, scenario) = Scenario::from_args();
    let workers: usize = args.workers;
    // The global executor sizes its thread pool from this variable when it first starts;
    // no other thread exists yet.
    env::set_var("ASYNC_STD_THREAD_COUNT", workers.to_string());
    let (host, port) = (args.host.as_str(), args.port);
    if let Err(e) = task::block_on(serve((host, port), scenario)) {
        eprintln!("cannot listen on {host} port {port}: {e}");
        process::exit(1);
    }
}


async fn serve(addr: (&str, u16), scenario: Scenario) -> io::Result<()> {
    // std's bind, underneath, sets SO_REUSEADDR on Unix.
    let listener = TcpListener::bind(addr).await?;
    let mut incoming = listener.incoming();
    while let Some(stream) = incoming.next().await {
        // An accept error (EMFILE, ECONNABORTED) concerns one connection, not the server.
        let Ok(stream) = stream else { continue };
        let _ = stream.set_nodelay(true);
        task::spawn(async move {
            let _ = match scenario {
                Scenario::Hello => hello(stream).await,
                Scenario::HelloTimeout(limit) => hello_timeout(stream, limit).await,
                Scenario::Echo => echo(stream).await,
                Scenario::Requests(route) => requests(stream, route).await,
                Scenario::File(folder) => file(stream, folder).await,
            };
        });
    }
    Ok(())
}

async fn hello(mut stream: TcpStream) -> io::Result<()> {
    let mut buf = [0u8; 4096];
    while stream.read(&mut buf).await? > 0 {
        stream.write_all(HELLO).await?;
    }
    Ok(())
}

async fn hello_timeout(mut stream: TcpStream, limit: Duration) -> io::Result<()> {
    let mut buf = [0u8; 4096];
    // io::timeout turns expiry into an io::Error, which ends the task and closes the connection.
    while io::timeout(limit, stream.read(&mut buf)).await? > 0 {
        io::timeout(limit, stream.write_all(HELLO)).await?;
    }
    Ok(())
}

async fn echo(mut stream: TcpStream) -> io::Result<()> {
    let mut buf = [0u8; ECHO_BUFFER_BYTES];
    loop {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        stream.write_all(&buf[..n]).await?;
    }
}

/// `work` and `counter`: answers every complete request read so far, in one write, then reads again.
/// A `work` request busy-waits inside this task, so it holds the executor thread that polls it.
async fn requests(mut stream: TcpStream, route: Route) -> io::Result<()> {
    let mut requests = Requests::new(route);
    let (mut buf, mut out) = ([0u8; 4096], Vec::with_capacity(4096));
    loop {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        let close = requests.answer(&buf[..n], &mut out);
        stream.write_all(&out).await?;
        out.clear();
        if close {
            return Ok(());
        }
    }
}

/// `file`: answers each complete request in order, `GET /file/4k` with the file opened and copied
/// anew, anything else with a 404 or a 400.
async fn file(mut stream: TcpStream, folder: &'static Path) -> io::Result<()> {
    let (mut pipeline, mut buf) = (Pipeline::new(folder), [0u8; 4096]);
    loop {
        while let Some(request) = pipeline.next() {
            match request {
                Request::File(path) => send_file(&mut stream, &path).await?,
                Request::NotFound => stream.write_all(NOT_FOUND).await?,
                Request::Bad => return stream.write_all(BAD_REQUEST).await,
            }
        }
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        pipeline.push(&buf[..n]);
    }
}

/// async-std's fs::File runs the open, the stat and each read on async-std's blocking pool;
/// async-std's io::copy moves the bytes from the file to the socket.
async fn send_file(stream: &mut TcpStream, path: &Path) -> io::Result<()> {
    let mut file = File::open(path).await?;
    let length_bytes = file.metadata().await?.len();
    stream.write_all(files::head(length_bytes).as_bytes()).await?;
    io::copy(&mut file, stream).await?;
    Ok(())
}
