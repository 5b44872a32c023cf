//! Tokio's multi-thread work-stealing runtime with raw TcpListener/TcpStream, one task per connection.
use std::time::Duration;
use std::{env, io, process};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::timeout;

const HELLO: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello world!";

#[derive(Clone, Copy)]
enum Scenario {
    Hello,
    HelloTimeout(Duration),
    Echo,
}

fn main() {
    let args: Vec<String> = env::args().collect();
    if args.len() != 5 {
        eprintln!("usage: {} <hello|hello-timeout|echo> <host> <port> <workers>", args[0]);
        process::exit(2);
    }
    let scenario = match args[1].as_str() {
        "hello" => Scenario::Hello,
        "hello-timeout" => Scenario::HelloTimeout(timeout_from_env()),
        "echo" => Scenario::Echo,
        other => {
            eprintln!("unsupported scenario: {other}");
            process::exit(2);
        }
    };
    let workers: usize = args[4].parse().expect("workers must be a number");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .expect("failed to build the tokio runtime");
    let (host, port) = (args[2].as_str(), args[3].parse::<u16>().expect("port must be a number"));
    if let Err(e) = runtime.block_on(serve((host, port), scenario)) {
        eprintln!("cannot listen on {host} port {port}: {e}");
        process::exit(1);
    }
}

fn timeout_from_env() -> Duration {
    let ms = env::var("SB_TIMEOUT_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(5000);
    Duration::from_millis(ms)
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
