//! Tokio's multi-thread work-stealing runtime with raw TcpListener/TcpStream, one task per connection.
use std::{io, process};

use sb_tokio::{serve_connection, Scenario};
use tokio::net::TcpListener;

fn main() {
    let (args, scenario) = Scenario::from_args();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.workers)
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
        // Spawned on the shared runtime: any worker may run it, and idle workers steal.
        tokio::spawn(serve_connection(stream, scenario));
    }
}
