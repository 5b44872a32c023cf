//! Fake servers for the load generator's tests: a thread per connection on loopback, each told how to
//! answer by a closure. They count what they receive so tests can compare both sides.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub const HELLO: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello world!";

#[derive(Default)]
pub struct Counters {
    pub requests: AtomicU64,
    pub bytes_in: AtomicU64,
    pub bytes_out: AtomicU64,
    pub connections: AtomicU64,
}

pub struct FakeServer {
    pub addr: SocketAddr,
    pub counters: Arc<Counters>,
    stop: Arc<AtomicBool>,
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr); // wakes the accept loop
    }
}

std::thread_local! {
    /// A CPU for the fake servers the calling thread starts, and their connections' threads (None:
    /// wherever the scheduler puts them).
    pub static SERVER_CPU: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// What a connection handler gets: the stream and the shared counters.
pub type Handler = Arc<dyn Fn(TcpStream, &Counters) + Send + Sync>;

pub fn serve(handler: Handler) -> FakeServer {
    let listener = crate::common::listen_loopback(libc::SOMAXCONN);
    let addr = listener.local_addr().unwrap();
    let counters = Arc::new(Counters::default());
    let stop = Arc::new(AtomicBool::new(false));
    let (c, s) = (counters.clone(), stop.clone());
    let cpu = SERVER_CPU.get();
    std::thread::spawn(move || {
        if let Some(cpu) = cpu {
            serverbench::os::cpus::pin_current_thread(cpu).unwrap();
        }
        for conn in listener.incoming() {
            if s.load(Ordering::SeqCst) {
                break;
            }
            let Ok(conn) = conn else { continue };
            c.connections.fetch_add(1, Ordering::SeqCst);
            let (h, c2) = (handler.clone(), c.clone());
            std::thread::Builder::new().stack_size(64 * 1024).spawn(move || h(conn, &c2)).unwrap();
        }
    });
    FakeServer { addr, counters, stop }
}

/// Reads requests (each ends with a blank line; no bodies) and calls `answer` with how many complete
/// requests arrived in one read; writes what it returns.
pub fn http_server(answer: impl Fn(u64, &Counters) -> Vec<u8> + Send + Sync + 'static) -> FakeServer {
    serve(Arc::new(move |mut s: TcpStream, c: &Counters| {
        let _ = s.set_nodelay(true);
        let mut buf = vec![0u8; 65536];
        let mut tail: Vec<u8> = Vec::new();
        loop {
            let n = match s.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            c.bytes_in.fetch_add(n as u64, Ordering::SeqCst);
            tail.extend_from_slice(&buf[..n]);
            let mut complete = 0;
            while let Some(end) = tail.windows(4).position(|w| w == b"\r\n\r\n") {
                tail.drain(..end + 4);
                complete += 1;
            }
            if complete == 0 {
                continue;
            }
            c.requests.fetch_add(complete, Ordering::SeqCst);
            let out = answer(complete, c);
            if s.write_all(&out).is_err() {
                return;
            }
            c.bytes_out.fetch_add(out.len() as u64, Ordering::SeqCst);
        }
    }))
}

/// The `hello` server: one response per request, all in one write.
pub fn hello_server() -> FakeServer {
    http_server(|n, _| HELLO.repeat(n as usize))
}

pub fn echo_server() -> FakeServer {
    serve(Arc::new(|mut s: TcpStream, c: &Counters| {
        let mut buf = vec![0u8; 65536];
        loop {
            let n = match s.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            c.bytes_in.fetch_add(n as u64, Ordering::SeqCst);
            if s.write_all(&buf[..n]).is_err() {
                return;
            }
            c.bytes_out.fetch_add(n as u64, Ordering::SeqCst);
        }
    }))
}

pub fn sleep_ms(ms: u64) {
    std::thread::sleep(Duration::from_millis(ms));
}
