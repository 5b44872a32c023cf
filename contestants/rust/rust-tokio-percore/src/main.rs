//! Per-core tokio: one OS thread per worker, each with a current_thread runtime and its own
//! SO_REUSEPORT listener, so the kernel spreads connections and tasks never change threads.
use std::net::{SocketAddr, ToSocketAddrs};
use std::{io, process, thread};

use sb_tokio::{serve_connection, Scenario};
use tokio::net::TcpSocket;

fn main() {
    let (args, scenario) = Scenario::from_args();
    let addr = (args.host.as_str(), args.port)
        .to_socket_addrs()
        .ok()
        .and_then(|mut addrs| addrs.next())
        .expect("cannot resolve the listen address");

    let threads: Vec<_> = (0..args.workers.max(1))
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
        // Spawned on this thread's runtime: the connection stays on this core.
        tokio::spawn(serve_connection(stream, scenario));
    }
}
