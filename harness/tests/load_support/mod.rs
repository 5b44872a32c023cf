//! Fake servers for the load generator's tests: a thread per connection on loopback, each told how to
//! answer by a closure. They count what they receive so tests can compare both sides.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
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

/// What a connection handler gets: the stream and the shared counters.
pub type Handler = Arc<dyn Fn(TcpStream, &Counters) + Send + Sync>;

/// A loopback listener with the backlog real servers ask for (SOMAXCONN, as Go and Netty do), not the
/// 128 of `TcpListener::bind`: with 128, thousands of simultaneous connects overflow the accept queue
/// and the kernel drops handshakes, which measures the fake server, not the load generator.
pub fn listen_loopback() -> TcpListener {
    use std::os::fd::FromRawFd;
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
        let one: libc::c_int = 1;
        libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, &one as *const _ as *const libc::c_void, 4);
        let addr = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: 0,
            sin_addr: libc::in_addr { s_addr: u32::from_ne_bytes([127, 0, 0, 1]) },
            sin_zero: [0; 8],
        };
        let rc = libc::bind(fd, &addr as *const _ as *const libc::sockaddr, std::mem::size_of::<libc::sockaddr_in>() as u32);
        assert_eq!(rc, 0, "bind: {}", std::io::Error::last_os_error());
        assert_eq!(libc::listen(fd, libc::SOMAXCONN), 0, "listen: {}", std::io::Error::last_os_error());
        TcpListener::from_raw_fd(fd)
    }
}

pub fn serve(handler: Handler) -> FakeServer {
    let listener = listen_loopback();
    let addr = listener.local_addr().unwrap();
    let counters = Arc::new(Counters::default());
    let stop = Arc::new(AtomicBool::new(false));
    let (c, s) = (counters.clone(), stop.clone());
    std::thread::spawn(move || {
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
