//! The connection handlers of the two raw-tokio contestants, which differ only in how runtimes and
//! listeners are arranged (work-stealing vs per-core), not in what a connection does.

use std::io;
use std::time::Duration;

use sb_args::{Requests, Route, HELLO};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

pub use sb_args::Raw as Scenario;

/// Serves one connection until the peer closes, an error occurs or a timeout expires.
pub async fn serve_connection(stream: TcpStream, scenario: Scenario) {
    let _ = stream.set_nodelay(true);
    let _ = match scenario {
        Scenario::Hello => hello(stream).await,
        Scenario::HelloTimeout(limit) => hello_timeout(stream, limit).await,
        Scenario::Echo => echo(stream).await,
        Scenario::Requests(route) => requests(stream, route).await,
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
    // An elapsed timeout becomes an io::Error, which ends the task and closes the connection.
    while timeout(limit, stream.read(&mut buf)).await?? > 0 {
        timeout(limit, stream.write_all(HELLO)).await??;
    }
    Ok(())
}

async fn echo(mut stream: TcpStream) -> io::Result<()> {
    let mut buf = vec![0u8; 64 * 1024];
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
