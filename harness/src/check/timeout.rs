//! Timeouts: `hello-timeout` closes idle and silent connections and cuts off a client that never reads,
//! within a bounded time, but not a client that keeps talking; `hello` keeps an idle connection open.

use std::io;
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use crate::os::proc::{self, TcpState};
use crate::os::socket;
use crate::wire::client::{show, Closed, Conn};
use crate::wire::request::get;
use super::wire::read_hello;
use super::case::{Failed, Options, Target};

/// `hello` ignores `SB_TIMEOUT_MS`: a connection idle for `idle_open` is still served.
pub fn idle_open(t: &Target, o: &Options) -> Result<String, Failed> {
    let mut c = Conn::open(t.addr, o.answer_timeout)?;
    c.send(&get("/"))?;
    read_hello(&mut c, t.micro)?;
    let since = Instant::now();
    match c.wait_close(since, o.idle_open) {
        Closed::Open => {}
        Closed::Fin(d) | Closed::Reset(d) => {
            return Err(format!(
                "the server closed an idle connection after {} ms; hello has no timeout (it was started with SB_TIMEOUT_MS={})",
                d.as_millis(),
                o.server_timeout.as_millis()
            ).into())
        }
        Closed::Data(b) => return Err(format!("the server sent {} bytes while the connection was idle: {}", b.len(), show(&b, 80)).into()),
    }
    c.send(&get("/"))?;
    read_hello(&mut c, t.micro).map_err(|e| Failed(format!("after {} ms idle: {e}", o.idle_open.as_millis())))?;
    Ok(format!("answered again after {} ms idle", o.idle_open.as_millis()))
}

/// A client that keeps talking, with pauses shorter than the timeout, stays connected well past it.
pub fn active(t: &Target, o: &Options) -> Result<String, Failed> {
    let mut c = Conn::open(t.addr, o.answer_timeout)?;
    let gap = o.server_timeout / 3;
    let start = Instant::now();
    for i in 1..=8 {
        c.send(&get("/")).map_err(|e| Failed(format!("request {i} of 8, {} ms in: {e}", start.elapsed().as_millis())))?;
        read_hello(&mut c, t.micro).map_err(|e| Failed(format!("request {i} of 8, {} ms in: {e}", start.elapsed().as_millis())))?;
        std::thread::sleep(gap);
    }
    Ok(format!(
        "8 requests {} ms apart over {} ms (timeout {} ms) all answered",
        gap.as_millis(),
        start.elapsed().as_millis(),
        o.server_timeout.as_millis()
    ))
}

fn judge_close(what: &str, closed: Closed, o: &Options) -> Result<String, Failed> {
    let timeout_ms = o.server_timeout.as_millis();
    match closed {
        Closed::Fin(d) | Closed::Reset(d) if d < o.server_timeout / 2 => {
            Err(format!("closed {} ms after {what}, well before the {timeout_ms} ms timeout", d.as_millis()).into())
        }
        Closed::Fin(d) => Ok(format!("closed {} ms after {what} (timeout {timeout_ms} ms)", d.as_millis())),
        Closed::Reset(d) => Ok(format!("reset {} ms after {what} (timeout {timeout_ms} ms)", d.as_millis())),
        Closed::Open => Err(format!(
            "still open {} ms after {what}; with SB_TIMEOUT_MS={timeout_ms} it must close within {} ms",
            o.close_bound().as_millis(),
            o.close_bound().as_millis()
        ).into()),
        Closed::Data(b) => Err(format!("sent {} bytes after {what} instead of closing: {}", b.len(), show(&b, 80)).into()),
    }
}

/// After an answer, an idle connection is closed between half the timeout and `close_bound`.
pub fn idle_close(t: &Target, o: &Options) -> Result<String, Failed> {
    let mut c = Conn::open(t.addr, o.answer_timeout)?;
    c.send(&get("/"))?;
    read_hello(&mut c, t.micro)?;
    let since = Instant::now();
    judge_close("the last answer", c.wait_close(since, o.close_bound()), o)
}

/// A connection that never sends anything is closed within the same bound.
pub fn silent_close(t: &Target, o: &Options) -> Result<String, Failed> {
    let mut c = Conn::open(t.addr, o.answer_timeout)?;
    let since = Instant::now();
    judge_close("connecting without sending", c.wait_close(since, o.close_bound()), o)
}

/// How long the client writes before it stops on its own, if its writes never block.
const NO_READER_WRITE_FOR: Duration = Duration::from_secs(3);
/// Blocked this long, the client takes it that the server has stopped reading.
const STALL: Duration = Duration::from_millis(200);

/// A client that sends requests and never reads: the answers fill the socket buffers, the server's write
/// blocks, and the server must close the connection within the bound after the client went quiet.
pub fn no_reader(t: &Target, o: &Options) -> Result<String, Failed> {
    let stream = connect_small_rcvbuf(t.addr, 4096).map_err(|e| Failed(format!("cannot connect to {}: {e}", t.addr)))?;
    stream.set_nonblocking(true).map_err(|e| e.to_string())?;
    let _ = stream.set_nodelay(true);
    let local = stream.local_addr().map_err(|e| e.to_string())?;
    let fd = stream.as_raw_fd();
    let mut watch = CloseWatch { server: t.addr, client: local, fd, seen: false };
    let request = get("/");
    let start = Instant::now();
    let (mut at, mut sent_bytes) = (0usize, 0u64);
    let mut stalled_since: Option<Instant> = None;
    let mut last_look = Instant::now() - Duration::from_secs(1);
    let mut unsent_at_stall = None;
    // Phase 1: write requests until the writes block (the server stopped reading) or time is up.
    let quiet_from = loop {
        if last_look.elapsed() >= Duration::from_millis(20) {
            last_look = Instant::now();
            if let Some(how) = watch.closed() {
                return Ok(format!(
                    "cut off ({how}) {} ms after the start, while the client was still sending ({sent_bytes} bytes sent, none read)",
                    start.elapsed().as_millis()
                ));
            }
        }
        if let Some(s) = stalled_since {
            if s.elapsed() >= STALL {
                unsent_at_stall = server_unsent_bytes(t.addr, local);
                break s;
            }
        }
        if start.elapsed() >= NO_READER_WRITE_FOR {
            break Instant::now();
        }
        match socket::write(fd, &request[at..]) {
            Ok(n) => {
                sent_bytes += n as u64;
                at = (at + n) % request.len();
                stalled_since = None;
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                stalled_since.get_or_insert_with(Instant::now);
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) => {
                return Ok(format!(
                    "cut off ({e}) {} ms after the start, while the client was still sending ({sent_bytes} bytes sent, none read)",
                    start.elapsed().as_millis()
                ))
            }
        }
    };
    // Phase 2: quiet; the server must give up on its blocked write.
    let stuck = match unsent_at_stall {
        Some(n) if n > 0 => format!("the server had {n} bytes it could not send; "),
        _ => String::new(),
    };
    let deadline = quiet_from + o.close_bound();
    while Instant::now() < deadline {
        if let Some(how) = watch.closed() {
            return Ok(format!(
                "{stuck}cut off ({how}) {} ms after the client's writes blocked ({sent_bytes} bytes sent, none read; timeout {} ms)",
                quiet_from.elapsed().as_millis(),
                o.server_timeout.as_millis()
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Err(format!(
        "{stuck}still connected {} ms after the client stopped reading and its writes blocked ({sent_bytes} bytes sent, none read); with SB_TIMEOUT_MS={} the server must close it",
        quiet_from.elapsed().as_millis(),
        o.server_timeout.as_millis()
    ).into())
}

/// A connected socket whose receive buffer is capped (which also stops its autotuning), so the server's
/// answers back up quickly.
fn connect_small_rcvbuf(addr: SocketAddr, rcvbuf_bytes: i32) -> io::Result<TcpStream> {
    let stream = TcpStream::connect(addr)?;
    socket::try_setsockopt(stream.as_raw_fd(), libc::SOL_SOCKET, libc::SO_RCVBUF, &rcvbuf_bytes)?;
    Ok(stream)
}

/// Watches one connection for the server's close: from the client (a FIN or reset arrived) or, when the
/// server's FIN is stuck behind answers the client never read, from the server's socket in /proc/net/tcp
/// (it leaves ESTABLISHED when the server closes it, and disappears on a reset).
struct CloseWatch {
    server: SocketAddr,
    client: SocketAddr,
    fd: i32,
    /// The server's socket was seen in /proc/net/tcp (so its absence later means it is gone).
    seen: bool,
}

impl CloseWatch {
    /// Some(how) once closed.
    fn closed(&mut self) -> Option<&'static str> {
        match socket::tcp_state(self.fd) {
            Some(TCP_ESTABLISHED) | None => {}
            Some(TCP_CLOSE_WAIT) => return Some("FIN"),
            Some(_) => return Some("reset"),
        }
        match proc::tcp_socket(self.server, self.client) {
            Some(entry) if entry.state == TcpState::Established => {
                self.seen = true;
                None
            }
            Some(_) => Some("closed by the server, its FIN queued behind unread answers"),
            None if self.seen => Some("the server's socket is gone"),
            None => None,
        }
    }
}

const TCP_ESTABLISHED: u8 = 1;
const TCP_CLOSE_WAIT: u8 = 8;

/// Bytes the server's socket holds that the client has not acknowledged (its blocked answers).
fn server_unsent_bytes(server: SocketAddr, client: SocketAddr) -> Option<u64> {
    proc::tcp_socket(server, client).map(|e| e.tx_queue)
}
