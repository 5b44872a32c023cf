//! smol: one Executor run by `workers` threads (the main thread is one of them), Async<TcpStream>
//! tasks that any of those threads may steal.
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::path::Path;
use std::time::Duration;
use std::{io, process, thread};

use smol::fs::File;
use smol::future::{self, FutureExt};
use smol::io::{AsyncReadExt, AsyncWriteExt};
use smol::{Async, Executor, Timer};

use sb_args::files::{self, Pipeline, Request};
use sb_args::requests::{BAD_REQUEST, NOT_FOUND};
use sb_args::{Raw as Scenario, Requests, Route, ECHO_BUFFER_BYTES, HELLO};

static EX: Executor<'static> = Executor::new();

fn main() {
    let (args, scenario) = Scenario::from_args();
    let addr = (args.host.as_str(), args.port)
        .to_socket_addrs()
        .ok()
        .and_then(|mut addrs| addrs.next())
        .expect("cannot resolve the listen address");
    let workers: usize = args.workers;

    // smol::block_on also drives the I/O reactor whenever its thread would otherwise sleep.
    for _ in 1..workers {
        thread::spawn(|| smol::block_on(EX.run(future::pending::<()>())));
    }
    if let Err(e) = smol::block_on(EX.run(serve(addr, scenario))) {
        eprintln!("cannot listen on {addr}: {e}");
        process::exit(1);
    }
}


async fn serve(addr: SocketAddr, scenario: Scenario) -> io::Result<()> {
    // std's bind, underneath, sets SO_REUSEADDR on Unix.
    let listener = Async::<TcpListener>::bind(addr)?;
    loop {
        // An accept error (EMFILE, ECONNABORTED) concerns one connection, not the server.
        let Ok((stream, _)) = listener.accept().await else { continue };
        let _ = stream.get_ref().set_nodelay(true);
        EX.spawn(async move {
            let _ = match scenario {
                Scenario::Hello => hello(stream).await,
                Scenario::HelloTimeout(limit) => hello_timeout(stream, limit).await,
                Scenario::Echo => echo(stream).await,
                Scenario::Requests(route) => requests(stream, route).await,
                Scenario::File(folder) => file(stream, folder).await,
            };
        })
        .detach();
    }
}

async fn hello(mut stream: Async<TcpStream>) -> io::Result<()> {
    let mut buf = [0u8; 4096];
    while stream.read(&mut buf).await? > 0 {
        stream.write_all(HELLO).await?;
    }
    Ok(())
}

async fn hello_timeout(mut stream: Async<TcpStream>, limit: Duration) -> io::Result<()> {
    let mut buf = [0u8; 4096];
    // Whichever finishes first wins; expiry is an error, which ends the task and closes the connection.
    while stream.read(&mut buf).or(expire(limit)).await? > 0 {
        stream.write_all(HELLO).or(expire(limit)).await?;
    }
    Ok(())
}

async fn expire<T>(limit: Duration) -> io::Result<T> {
    Timer::after(limit).await;
    Err(io::ErrorKind::TimedOut.into())
}

async fn echo(mut stream: Async<TcpStream>) -> io::Result<()> {
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
async fn requests(mut stream: Async<TcpStream>, route: Route) -> io::Result<()> {
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
async fn file(mut stream: Async<TcpStream>, folder: &'static Path) -> io::Result<()> {
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

/// smol::fs (async-fs) runs the open, the stat and each read on smol's blocking pool (the blocking
/// crate's Unblock); smol's io::copy moves the bytes from the file to the socket.
async fn send_file(stream: &mut Async<TcpStream>, path: &Path) -> io::Result<()> {
    let mut file = File::open(path).await?;
    let length_bytes = file.metadata().await?.len();
    stream.write_all(files::head(length_bytes).as_bytes()).await?;
    smol::io::copy(&mut file, stream).await?;
    Ok(())
}
