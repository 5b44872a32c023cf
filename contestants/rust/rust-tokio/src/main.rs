//! Tokio's multi-thread work-stealing runtime with raw TcpListener/TcpStream, one task per connection.
use std::time::Duration;
use std::{io, process};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::timeout;

use sb_args::HELLO;

#[derive(Clone, Copy)]
enum Scenario {
    Hello,
    HelloTimeout(Duration),
    Echo,
}

fn main() {
    let args = sb_args::parse(&["hello", "hello-timeout", "echo"]);
    let scenario = match args.scenario.as_str() {
        "hello" => Scenario::Hello,
        "hello-timeout" => Scenario::HelloTimeout(sb_args::timeout_from_env()),
        _ => Scenario::Echo,
    };
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
    // tokio sets SO_REUSEADDR on Unix listeners.
    let listener = TcpListener::bind(addr).await?;
    loop {
        // An accept error (EMFILE, ECONNABORTED) concerns one connection, not the server.
        let Ok((stream, _)) = listener.accept().await else { continue };
        let _ = stream.set_nodelay(true);
        tokio::spawn(async move {
            let _ = match scenario {
                Scenario::Hello => hello(stream).await,
                Scenario::HelloTimeout(limit) => hello_timeout(stream, limit).await,
                Scenario::Echo => echo(stream).await,
            };
        });
    }
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
