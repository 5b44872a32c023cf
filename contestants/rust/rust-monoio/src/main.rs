//! monoio: thread per core on io_uring. Each of `workers` threads owns a runtime on the io_uring
//! driver (no epoll fallback) and a SO_REUSEPORT listener; buffers are passed to the kernel by value.
use std::path::Path;
use std::time::Duration;
use std::{io, process, thread};

use monoio::buf::IoBuf;
use monoio::fs::File;
use monoio::io::{AsyncReadRent, AsyncWriteRentExt};
use monoio::net::{ListenerOpts, TcpListener, TcpStream};
use monoio::time::timeout;
use monoio::{IoUringDriver, RuntimeBuilder};

use sb_args::files::{self, Pipeline, Request};
use sb_args::requests::{BAD_REQUEST, NOT_FOUND};
use sb_args::{Raw as Scenario, Requests, Route, ECHO_BUFFER_BYTES, HELLO};

fn main() {
    let (args, scenario) = Scenario::from_args();
    let (host, port) = (args.host.clone(), args.port);
    let workers: usize = args.workers;

    let threads: Vec<_> = (0..workers.max(1))
        .map(|_| {
            let host = host.clone();
            thread::spawn(move || {
                let mut runtime = match RuntimeBuilder::<IoUringDriver>::new().enable_timer().build() {
                    Ok(runtime) => runtime,
                    Err(e) => {
                        eprintln!("cannot set up io_uring ({e}); is io_uring disabled (kernel.io_uring_disabled, seccomp)?");
                        process::exit(1);
                    }
                };
                if let Err(e) = runtime.block_on(serve((&host, port), scenario)) {
                    eprintln!("cannot listen on {host} port {port}: {e}");
                    process::exit(1);
                }
            })
        })
        .collect();
    for t in threads {
        let _ = t.join();
    }
}


async fn serve(addr: (&str, u16), scenario: Scenario) -> io::Result<()> {
    let opts = ListenerOpts::new().reuse_port(true).reuse_addr(true);
    let listener = TcpListener::bind_with_config(addr, &opts)?;
    loop {
        // An accept error (EMFILE, ECONNABORTED) concerns one connection, not the server.
        let Ok((stream, _)) = listener.accept().await else { continue };
        let _ = stream.set_nodelay(true);
        monoio::spawn(async move {
            let _ = match scenario {
                Scenario::Hello => hello(stream).await,
                Scenario::HelloTimeout(limit) => hello_timeout(stream, limit).await,
                Scenario::Echo => echo(stream).await,
                Scenario::Requests(route) => requests(stream, route).await,
                Scenario::File(folder) => file(stream, folder).await,
            };
        });
    }
}

async fn hello(mut stream: TcpStream) -> io::Result<()> {
    let mut buf = vec![0u8; 4096];
    loop {
        let (n, b) = stream.read(buf).await;
        buf = b;
        if n? == 0 {
            return Ok(());
        }
        stream.write_all(HELLO).await.0?;
    }
}

async fn hello_timeout(mut stream: TcpStream, limit: Duration) -> io::Result<()> {
    let mut buf = vec![0u8; 4096];
    loop {
        // On expiry the read is cancelled (async-cancel) and the connection closed.
        let (n, b) = timeout(limit, stream.read(buf)).await?;
        buf = b;
        if n? == 0 {
            return Ok(());
        }
        timeout(limit, stream.write_all(HELLO)).await?.0?;
    }
}

async fn echo(mut stream: TcpStream) -> io::Result<()> {
    let mut buf = vec![0u8; ECHO_BUFFER_BYTES];
    loop {
        let (n, b) = stream.read(buf).await;
        let n = n?;
        if n == 0 {
            return Ok(());
        }
        // Hand the first n bytes to the kernel and get the whole buffer back.
        let (written, b) = stream.write_all(b.slice(0..n)).await;
        written?;
        buf = b.into_inner();
    }
}

/// `work` and `counter`: answers every complete request read so far, in one write, then reads again.
/// A `work` request busy-waits inside this task, so it holds this thread's whole runtime.
async fn requests(mut stream: TcpStream, route: Route) -> io::Result<()> {
    let mut requests = Requests::new(route);
    let (mut buf, mut out) = (vec![0u8; 4096], Vec::with_capacity(4096));
    loop {
        let (n, b) = stream.read(buf).await;
        buf = b;
        let n = n?;
        if n == 0 {
            return Ok(());
        }
        let close = requests.answer(&buf[..n], &mut out);
        // The kernel owns `out` while it is written; it comes back to be reused.
        let (written, o) = stream.write_all(out).await;
        written?;
        out = o;
        out.clear();
        if close {
            return Ok(());
        }
    }
}

/// `file`: answers each complete request in order, `GET /file/4k` with the file opened and read
/// anew, anything else with a 404 or a 400.
async fn file(mut stream: TcpStream, folder: &'static Path) -> io::Result<()> {
    let mut pipeline = Pipeline::new(folder);
    let (mut buf, mut chunk) = (vec![0u8; 4096], Vec::with_capacity(4096));
    loop {
        while let Some(request) = pipeline.next() {
            match request {
                Request::File(path) => chunk = send_file(&mut stream, &path, chunk).await?,
                Request::NotFound => {
                    stream.write_all(NOT_FOUND).await.0?;
                }
                Request::Bad => return stream.write_all(BAD_REQUEST).await.0.map(|_| ()),
            }
        }
        let (n, b) = stream.read(buf).await;
        buf = b;
        let n = n?;
        if n == 0 {
            return Ok(());
        }
        pipeline.push(&buf[..n]);
    }
}

/// Every step goes through io_uring: open (openat), stat (statx), then read_at into `chunk` and
/// write_all from it until the file's length has been sent, then close. The kernel owns `chunk`
/// during each read and write; it comes back to be reused (and overwritten) by the next request.
async fn send_file(stream: &mut TcpStream, path: &Path, mut chunk: Vec<u8>) -> io::Result<Vec<u8>> {
    let file = File::open(path).await?;
    let length_bytes = file.metadata().await?.len();
    stream.write_all(files::head(length_bytes).into_bytes()).await.0?;
    let mut sent = 0;
    while sent < length_bytes {
        let (n, c) = file.read_at(chunk, sent).await;
        let n = n?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let (written, c) = stream.write_all(c.slice(0..n)).await;
        written?;
        chunk = c.into_inner();
        sent += n as u64;
    }
    file.close().await?;
    Ok(chunk)
}
