//! Per-core tokio: one OS thread per worker, each with a current_thread runtime and its own
//! SO_REUSEPORT listener, so the kernel spreads connections and tasks never change threads.
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;
use std::{io, process, thread};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
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
    let addr = (args.host.as_str(), args.port)
        .to_socket_addrs()
        .ok()
        .and_then(|mut addrs| addrs.next())
        .expect("cannot resolve the listen address");
    let workers: usize = args.workers;

    let threads: Vec<_> = (0..workers.max(1))
        .map(|_| {
            thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("failed to build the tokio runtime");
                if let Err(e) = runtime.block_on(serve(addr, scenario)) {
                    eprintln!("cannot listen on {addr}: {e}");
                    process::exit(1);
                }
            })
        })
        .collect();
    for t in threads {
        let _ = t.join();
    }
}


async fn serve(addr: SocketAddr, scenario: Scenario) -> io::Result<()> {
    let socket = if addr.is_ipv4() { TcpSocket::new_v4()? } else { TcpSocket::new_v6()? };
    socket.set_reuseaddr(true)?;
    socket.set_reuseport(true)?;
    socket.bind(addr)?;
    let listener = socket.listen(1024)?;
    loop {
        // An accept error (EMFILE, ECONNABORTED) concerns one connection, not the server.
        let Ok((stream, _)) = listener.accept().await else { continue };
        let _ = stream.set_nodelay(true);
        // Spawned on this thread's runtime: the connection stays on this core.
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
