//! Fake servers for the conformance checks: a thread per connection on loopback that answers one scenario
//! correctly, or with one chosen flaw, so each check is shown to pass on a correct server and to fail on
//! a wrong one.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serverbench::check::{Failed, Options, Scenario, Target};

pub const HELLO: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello world!";

/// One way of being wrong; `Flaws::default()` is a correct server.
#[derive(Debug, Clone, Default)]
pub struct Flaws {
    /// hello: an extra header (wrong for micro, fine for platform).
    pub extra_header: bool,
    /// hello: a body other than "Hello world!".
    pub wrong_body: bool,
    /// Closes the connection after each answer.
    pub close_after_answer: bool,
    /// Sends each answer twice.
    pub double_answer: bool,
    /// Read and write timeout, as hello-timeout asks.
    pub timeout: Option<Duration>,
    /// hello without a timeout, but closes connections idle for this long.
    pub idle_close: Option<Duration>,
    /// Closes every connection this long after it was accepted, busy or not.
    pub connection_lifetime: Option<Duration>,
    /// plaintext: no Date header.
    pub no_date: bool,
    /// plaintext: the Date of the server's start, never updated.
    pub frozen_date: bool,
    /// plaintext: this Content-Type instead of text/plain.
    pub content_type: Option<&'static str>,
    /// plaintext: a chunked body instead of Content-Length.
    pub chunked: bool,
    /// plaintext: 200 for every path.
    pub no_404: bool,
    /// plaintext: the answers to one read's requests in reverse order.
    pub reverse_pipeline: bool,
    /// json: the sequence echoed as a string.
    pub json_string: bool,
    /// json: the sequence kept in an i16 (wraps).
    pub json_i16: bool,
    /// json: finds the number by skipping exactly `{"sequence": ` instead of parsing.
    pub json_fixed_layout: bool,
    /// echo: every 100,000th byte is dropped.
    pub echo_drop: bool,
    /// Bytes that do not start with an HTTP method end the whole server.
    pub die_on_junk: bool,
    /// One connection at a time: the accept loop serves each connection itself.
    pub serial: bool,
    /// A reset (read error) ends the whole server.
    pub die_on_reset: bool,
    /// A request followed by a half-close is neither answered nor closed.
    pub ignore_half_close: bool,
    /// A request followed by a half-close is not answered; the connection is closed.
    pub close_on_half_close: bool,
    /// plaintext/json: headers of any size accepted with a 200.
    pub accept_huge_headers: bool,
    /// plaintext/json: headers over 64 KiB read and dropped, neither answered nor closed.
    pub hang_on_huge_headers: bool,
    /// plaintext/json: headers over 64 KiB closed without an answer.
    pub close_on_huge_headers: bool,
    /// Accepting more than this many connections in all ends the whole server. Counted when accepted, not
    /// while open: a client sees a handshake complete as soon as the kernel queues it, and a starved accept
    /// loop would otherwise take the first ones only after the client dropped them, and never die.
    pub die_above: Option<usize>,
    /// Connections beyond this many open at once are closed right after their first answer.
    pub keep_at_most: Option<usize>,
    /// Nagle's algorithm left on (no TCP_NODELAY) on accepted connections.
    pub no_nodelay: bool,
    /// plaintext: HTTP/1.0 requests answered as HTTP/1.1 ones: kept open, without `Connection: keep-alive`.
    pub http10_as_11: bool,
    /// file: byte 1000 of the file is wrong.
    pub file_wrong_byte: bool,
    /// file: every /file/ path answers the file, `..` included.
    pub file_any_name: bool,
}

pub struct Fake {
    pub addr: SocketAddr,
    pub scenario: Scenario,
    stop: Arc<AtomicBool>,
    /// Set when a flaw ended the server: it accepts no more.
    pub dead: Arc<AtomicBool>,
    pub open: Arc<AtomicUsize>,
}

impl Fake {
    pub fn target(&self, micro: bool) -> Target {
        Target { addr: self.addr, scenario: self.scenario, micro, pid: Some(std::process::id() as i32) }
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
    }
}

/// Asserts that a check failed and that its reason mentions `words`.
pub fn assert_fails(r: Result<String, Failed>, words: &str) {
    match r {
        Ok(ok) => panic!("expected a failure mentioning {words:?}, got a pass: {ok}"),
        Err(Failed(reason)) => assert!(reason.contains(words), "the reason {reason:?} does not mention {words:?}"),
    }
}

/// Options that keep the tests short: a 300 ms server timeout as in `serverbench check`, shorter waits.
pub fn options() -> Options {
    Options {
        answer_timeout: Duration::from_secs(2),
        idle_open: Duration::from_millis(800),
        drop_connections: 1000,
        ..Options::default()
    }
}

/// A loopback listener with a backlog of one that never accepts: the kernel completes a handshake or two
/// and drops every further SYN, as a server whose accept queue stays full would.
pub fn deaf_listener() -> TcpListener {
    crate::common::listen_loopback(1)
}

pub fn start(scenario: Scenario, flaws: Flaws) -> Fake {
    let listener = crate::common::listen_loopback(libc::SOMAXCONN);
    let addr = listener.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let dead = Arc::new(AtomicBool::new(false));
    let open = Arc::new(AtomicUsize::new(0));
    let started = SystemTime::now();
    let (s, d, o) = (stop.clone(), dead.clone(), open.clone());
    std::thread::spawn(move || {
        let mut accepted = 0;
        for conn in listener.incoming() {
            if s.load(Ordering::SeqCst) || d.load(Ordering::SeqCst) {
                break;
            }
            let Ok(conn) = conn else { continue };
            accepted += 1;
            let now_open = o.fetch_add(1, Ordering::SeqCst) + 1;
            if flaws.die_above.is_some_and(|n| accepted > n) {
                d.store(true, Ordering::SeqCst);
                break;
            }
            let ctx = Ctx { scenario, flaws: flaws.clone(), dead: d.clone(), open: o.clone(), started, crowded: flaws.keep_at_most.is_some_and(|n| now_open > n) };
            if flaws.serial {
                handle(conn, &ctx);
            } else {
                std::thread::Builder::new().stack_size(128 * 1024).spawn(move || handle(conn, &ctx)).unwrap();
            }
        }
    });
    Fake { addr, scenario, stop, dead, open }
}

struct Ctx {
    scenario: Scenario,
    flaws: Flaws,
    dead: Arc<AtomicBool>,
    open: Arc<AtomicUsize>,
    started: SystemTime,
    /// Accepted while more than `keep_at_most` were open.
    crowded: bool,
}

fn handle(mut s: TcpStream, ctx: &Ctx) {
    serve(&mut s, ctx);
    ctx.open.fetch_sub(1, Ordering::SeqCst);
}

fn serve(s: &mut TcpStream, ctx: &Ctx) {
    let f = &ctx.flaws;
    let _ = s.set_nodelay(!f.no_nodelay);
    if let Some(t) = f.timeout {
        let _ = s.set_read_timeout(Some(t));
        let _ = s.set_write_timeout(Some(t));
    }
    if let Some(t) = f.idle_close {
        let _ = s.set_read_timeout(Some(t));
    }
    let accepted = Instant::now();
    if f.connection_lifetime.is_some() {
        // Poll, so the lifetime ends the connection even while it waits for a request.
        let _ = s.set_read_timeout(Some(Duration::from_millis(20)));
    }
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 16 * 1024];
    let mut echoed: u64 = 0;
    let mut close_after = false;
    loop {
        if ctx.dead.load(Ordering::SeqCst) {
            return;
        }
        if f.connection_lifetime.is_some_and(|l| accepted.elapsed() >= l) {
            return;
        }
        let n = match s.read(&mut chunk) {
            Ok(0) => {
                if f.ignore_half_close {
                    std::thread::sleep(Duration::from_secs(10));
                }
                return;
            }
            Ok(n) => n,
            Err(e) if f.connection_lifetime.is_some() && matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => continue,
            Err(_) => {
                if f.die_on_reset {
                    ctx.dead.store(true, Ordering::SeqCst);
                }
                return;
            }
        };
        buf.extend_from_slice(&chunk[..n]);
        let out = match ctx.scenario {
            Scenario::Hello | Scenario::HelloTimeout => {
                if f.ignore_half_close && peer_half_closed(s) {
                    std::thread::sleep(Duration::from_secs(10));
                    return;
                }
                buf.clear();
                let mut out = hello_answer(f);
                if f.double_answer {
                    out.extend(hello_answer(f));
                }
                out
            }
            Scenario::Echo => {
                let mut out = Vec::with_capacity(n);
                for b in std::mem::take(&mut buf) {
                    echoed += 1;
                    if f.echo_drop && echoed.is_multiple_of(100_000) {
                        continue;
                    }
                    out.push(b);
                }
                out
            }
            Scenario::Work | Scenario::Counter => unimplemented!("work and counter have their own fakes: tests/work_counter.rs"),
            Scenario::Plaintext | Scenario::Json | Scenario::File => {
                if !buf.is_empty() && !buf[0].is_ascii_uppercase() {
                    if f.die_on_junk {
                        ctx.dead.store(true, Ordering::SeqCst);
                    }
                    let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                    return;
                }
                let (answers, used, refuse, close) = http_answers(&buf, ctx);
                close_after = close;
                buf.drain(..used);
                if refuse && f.close_on_huge_headers {
                    return;
                }
                if refuse && f.hang_on_huge_headers {
                    // Takes every byte in and never answers: the connection stays until the client goes.
                    while s.read(&mut chunk).is_ok_and(|n| n > 0) {}
                    return;
                }
                if refuse {
                    let _ = s.write_all(b"HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                    return;
                }
                if (f.ignore_half_close || f.close_on_half_close) && !answers.is_empty() && peer_half_closed(s) {
                    if f.ignore_half_close {
                        std::thread::sleep(Duration::from_secs(10));
                    }
                    return;
                }
                let mut answers = answers;
                if f.reverse_pipeline {
                    answers.reverse();
                }
                answers.concat()
            }
        };
        if !out.is_empty() && s.write_all(&out).is_err() {
            if f.die_on_reset {
                ctx.dead.store(true, Ordering::SeqCst);
            }
            return;
        }
        if f.close_after_answer || ctx.crowded || close_after {
            if ctx.crowded {
                // Let the answer reach the client before the close.
                std::thread::sleep(Duration::from_millis(50));
            }
            return;
        }
    }
}

/// Whether the client has already sent its FIN (peeking, without blocking).
fn peer_half_closed(s: &TcpStream) -> bool {
    std::thread::sleep(Duration::from_millis(20));
    let _ = s.set_nonblocking(true);
    let mut b = [0u8; 1];
    let r = s.peek(&mut b);
    let _ = s.set_nonblocking(false);
    matches!(r, Ok(0))
}

fn hello_answer(f: &Flaws) -> Vec<u8> {
    if f.extra_header {
        b"HTTP/1.1 200 OK\r\nServer: fake\r\nContent-Length: 12\r\n\r\nHello world!".to_vec()
    } else if f.wrong_body {
        b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello World!".to_vec()
    } else {
        HELLO.to_vec()
    }
}

/// Answers every complete request at the start of `buf`: (answers, bytes used, refuse as too large, close
/// after the answers: an HTTP/1.0 request that did not ask to keep the connection).
fn http_answers(buf: &[u8], ctx: &Ctx) -> (Vec<Vec<u8>>, usize, bool, bool) {
    let mut answers = Vec::new();
    let mut at = 0;
    loop {
        let rest = &buf[at..];
        let Some(head_end) = rest.windows(4).position(|w| w == b"\r\n\r\n") else {
            let too_big = rest.len() > 64 * 1024 && !ctx.flaws.accept_huge_headers;
            return (answers, at, too_big, false);
        };
        if head_end > 64 * 1024 && !ctx.flaws.accept_huge_headers {
            return (answers, at, true, false);
        }
        let head = String::from_utf8_lossy(&rest[..head_end]).to_string();
        let length: usize = head
            .lines()
            .find_map(|l| l.split_once(':').filter(|(k, _)| k.trim().eq_ignore_ascii_case("content-length")).map(|(_, v)| v.trim().parse().unwrap_or(0)))
            .unwrap_or(0);
        let total = head_end + 4 + length;
        if rest.len() < total {
            return (answers, at, false, false);
        }
        let body = &rest[head_end + 4..total];
        let path = head.split(' ').nth(1).unwrap_or("").to_string();
        let http10 = head.lines().next().is_some_and(|l| l.trim_end().ends_with("HTTP/1.0")) && !ctx.flaws.http10_as_11;
        let keep_alive = head.lines().any(|l| {
            l.split_once(':').is_some_and(|(k, v)| k.trim().eq_ignore_ascii_case("connection") && v.trim().eq_ignore_ascii_case("keep-alive"))
        });
        let mut answer = match ctx.scenario {
            Scenario::Json => json_answer(body, &ctx.flaws),
            Scenario::File => file_answer(&path, &ctx.flaws),
            _ => plaintext_answer(&path, ctx),
        };
        at += total;
        if http10 && keep_alive {
            let head_end = answer.windows(2).position(|w| w == b"\r\n").unwrap();
            answer.splice(head_end + 2..head_end + 2, b"Connection: keep-alive\r\n".iter().copied());
        }
        answers.push(answer);
        if http10 && !keep_alive {
            return (answers, at, false, true);
        }
    }
}

fn file_answer(path: &str, f: &Flaws) -> Vec<u8> {
    if path != serverbench::wire::FILE_PATH && !(f.file_any_name && path.starts_with("/file/")) {
        return b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_vec();
    }
    let mut out = serverbench::wire::file_response();
    if f.file_wrong_byte {
        let at = out.len() - 4096 + 1000;
        out[at] = b'#';
    }
    out
}

fn plaintext_answer(path: &str, ctx: &Ctx) -> Vec<u8> {
    let f = &ctx.flaws;
    if path != "/plaintext" && !f.no_404 {
        return b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nNot Found".to_vec();
    }
    let date_of = if f.frozen_date { ctx.started } else { SystemTime::now() };
    let date = if f.no_date { String::new() } else { format!("Date: {}\r\n", http_date(date_of)) };
    let ctype = f.content_type.unwrap_or("text/plain");
    if f.chunked {
        return format!("HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\n{date}Transfer-Encoding: chunked\r\n\r\nd\r\nHello, World!\r\n0\r\n\r\n").into_bytes();
    }
    format!("HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\n{date}Content-Length: 13\r\n\r\nHello, World!").into_bytes()
}

fn json_answer(body: &[u8], f: &Flaws) -> Vec<u8> {
    let n: Option<u64> = if f.json_fixed_layout {
        body.strip_prefix(b"{\"sequence\": ").and_then(|r| std::str::from_utf8(&r[..r.len().saturating_sub(1)]).ok()?.parse().ok())
    } else {
        serde_json::from_slice::<serde_json::Value>(body).ok().and_then(|v| v.get("sequence")?.as_u64())
    };
    let Some(n) = n else {
        return b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".to_vec();
    };
    let out = if f.json_string {
        serde_json::json!({ "sequence": n.to_string() })
    } else if f.json_i16 {
        serde_json::json!({ "sequence": n as i16 })
    } else {
        serde_json::json!({ "sequence": n })
    };
    let text = out.to_string();
    format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{text}", text.len()).into_bytes()
}

/// IMF-fixdate of a time (civil-from-days, Howard Hinnant).
pub fn http_date(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).unwrap().as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    const WD: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MON: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    format!(
        "{}, {d:02} {} {y} {:02}:{:02}:{:02} GMT",
        WD[days.rem_euclid(7) as usize],
        MON[(m - 1) as usize],
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}
