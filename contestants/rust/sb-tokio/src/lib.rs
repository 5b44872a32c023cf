//! The connection handlers of the two raw-tokio contestants, which differ only in how runtimes and
//! listeners are arranged (work-stealing vs per-core), not in what a connection does.

use std::io;
use std::path::Path;
use std::time::Duration;

use sb_args::files::{self, Pipeline, Request};
use sb_args::requests::{BAD_REQUEST, NOT_FOUND};
use sb_args::{Raw, Requests, Route, ECHO_BUFFER_BYTES, HELLO};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

/// The raw scenarios, `file` among them.
pub use sb_args::Raw as Scenario;

/// Serves one connection until the peer closes, an error occurs or a timeout expires.
pub async fn serve_connection(stream: TcpStream, scenario: Scenario) {
    let _ = stream.set_nodelay(true);
    let _ = match scenario {
        Raw::Hello => hello(stream).await,
        Raw::HelloTimeout(limit) => hello_timeout(stream, limit).await,
        Raw::Echo => echo(stream).await,
        Raw::Requests(route) => requests(stream, route).await,
        Raw::File(folder) => file(stream, folder).await,
    };
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
    // A timer per read and per write; an elapsed one becomes an io::Error, which ends the task and
    // closes the connection.
    while timeout(limit, stream.read(&mut buf)).await?? > 0 {
        timeout(limit, stream.write_all(HELLO)).await??;
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
/// A `work` request busy-waits inside this task, so it holds the worker thread that polls it.
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
/// anew by tokio's fs (its blocking pool does the file's reads), anything else with a 404 or a 400.
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

async fn send_file(stream: &mut TcpStream, path: &Path) -> io::Result<()> {
    let mut file = tokio::fs::File::open(path).await?;
    let length_bytes = file.metadata().await?.len();
    stream.write_all(files::head(length_bytes).as_bytes()).await?;
    tokio::io::copy(&mut file, stream).await?;
    Ok(())
}
