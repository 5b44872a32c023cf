//! Bad input, after which the server must still answer a fresh connection correctly: random bytes, a
//! request cut in the middle, a reset mid-request, a half-closed socket, headers over 64 KiB, and
//! thousands of connections opened and dropped at once.

use std::io::Write as _;
use std::net::Shutdown;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

use super::values::{self, Rng};
use crate::wire::client::{find, set_linger_zero, show, Closed, Conn, CLOSED_WITHOUT_ANSWER};
use super::wire::{check_json, check_plaintext, probe, read_ordinary};
use super::case::{Failed, Options, Target};
use crate::wire::Scenario;
use crate::os::socket;

/// The scenario's ordinary request, `json` with sequence 7 (echo: a few bytes).
fn request(t: &Target) -> Vec<u8> {
    t.scenario.request().map_or_else(|| b"0123456789abcdef".to_vec(), |r| r.render(7))
}

/// The proof that the bad input did no harm: one ordinary exchange on a fresh connection.
fn still_answers(t: &Target, o: &Options, after: &str, timeout: Duration) -> Result<(), Failed> {
    probe(t, o, timeout).map_err(|e| Failed(format!("after {after}, a fresh connection got no correct answer: {e}")))
}

/// Writes `bytes` from a second thread while reading whatever comes back until the server closes,
/// `enough` holds for what came back, or `wait` passes. Returns the bytes read, whether the server
/// closed, and the write error if any.
fn send_and_drain(c: &mut Conn, bytes: Vec<u8>, wait: Duration, enough: fn(&[u8]) -> bool) -> (Vec<u8>, bool, Option<String>) {
    let mut writer = match c.stream.try_clone() {
        Ok(w) => w,
        Err(e) => return (Vec::new(), false, Some(e.to_string())),
    };
    let sender = std::thread::spawn(move || writer.write_all(&bytes).err().map(|e| e.to_string()));
    let deadline = Instant::now() + wait;
    let (mut answer, mut closed) = (Vec::new(), false);
    // Short slices, so that a verdict the first bytes already give does not wait for the deadline.
    while !closed && !enough(&answer) && Instant::now() < deadline {
        let (more, end) = c.drain_until_close(deadline.min(Instant::now() + Duration::from_millis(50)));
        answer.extend(more);
        closed = end;
    }
    if !closed {
        // Unblock a sender the server no longer reads from.
        let _ = c.stream.shutdown(Shutdown::Write);
    }
    let write_error = sender.join().unwrap_or_else(|_| Some("the writing thread panicked".into()));
    (answer, closed, write_error)
}

fn what_came_back(answer: &[u8], closed: bool, write_error: &Option<String>) -> String {
    let mut parts = Vec::new();
    parts.push(if answer.is_empty() { "no answer".to_string() } else { format!("answered {} bytes starting {}", answer.len(), show(answer, 24)) });
    if closed {
        parts.push("closed".into());
    }
    if let Some(e) = write_error {
        parts.push(format!("stopped reading ({e})"));
    }
    parts.join(", ")
}

/// 64 KiB of random bytes on one connection.
pub fn random_bytes(t: &Target, o: &Options) -> Result<String, Failed> {
    let mut junk = values::random_bytes(&mut Rng::with_seed(o.seed), 64 * 1024);
    junk[0] = 0; // not the first letter of any method
    let mut c = Conn::open(t.addr, o.answer_timeout)?;
    let (answer, closed, write_error) = send_and_drain(&mut c, junk, Duration::from_secs(1), |_| false);
    drop(c);
    still_answers(t, o, "64 KiB of random bytes", o.answer_timeout)?;
    Ok(format!("64 KiB of random bytes: {}; then served a fresh connection", what_came_back(&answer, closed, &write_error)))
}

/// Half a request left hanging while another connection is served; then the half request's connection
/// goes away.
pub fn cut_request(t: &Target, o: &Options) -> Result<String, Failed> {
    let full = request(t);
    let half = full[..full.len() / 2].to_vec();
    let mut c = Conn::open(t.addr, o.answer_timeout)?;
    c.send(&half)?;
    std::thread::sleep(Duration::from_millis(50));
    still_answers(t, o, "half a request left hanging on another connection", o.answer_timeout)?;
    c.shutdown_write()?;
    let (_, closed) = c.drain_until_close(Instant::now() + Duration::from_secs(1));
    drop(c);
    still_answers(t, o, "a request cut in the middle", o.answer_timeout)?;
    Ok(format!(
        "served another connection while {} of {} request bytes hung, and again after the cut ({})",
        half.len(),
        full.len(),
        if closed { "the server closed the cut connection" } else { "the cut connection was left to the client" }
    ))
}

/// Connections reset (RST) mid-request, and right after many pipelined requests whose answers the server
/// is still writing (a server that does not ignore SIGPIPE dies here).
pub fn reset(t: &Target, o: &Options) -> Result<String, Failed> {
    let full = request(t);
    let after = |e: Failed| format!("after connections reset mid-request: {e}");
    let c = Conn::open(t.addr, o.answer_timeout).map_err(|e| after(e.into()))?;
    (&c.stream).write_all(&full[..full.len() / 2]).map_err(|e| after(Failed(e.to_string())))?;
    std::thread::sleep(Duration::from_millis(20));
    c.reset();
    let pipelined: Vec<u8> = full.iter().copied().cycle().take(full.len() * 200).collect();
    for i in 0..20 {
        let c = Conn::open(t.addr, o.answer_timeout).map_err(|e| after(e.into()))?;
        let _ = (&c.stream).write_all(&pipelined);
        // Vary the moment of the reset so some land while the server is writing.
        std::thread::sleep(Duration::from_micros(200 * (i % 5)));
        c.reset();
    }
    std::thread::sleep(Duration::from_millis(100));
    still_answers(t, o, "connections reset mid-request", o.answer_timeout)?;
    Ok("1 connection reset in the middle of a request and 20 reset after 200 pipelined requests; then served a fresh connection".into())
}

/// A whole request, then the client shuts down its sending side: the request is still answered (a
/// platform contestant may instead close without answering, as some HTTP stacks do), the server then
/// closes, and serves the next connection.
pub fn half_close(t: &Target, o: &Options) -> Result<String, Failed> {
    let mut c = Conn::open(t.addr, o.answer_timeout)?;
    let payload = values::random_bytes(&mut Rng::with_seed(o.seed), 1000);
    let what = match t.scenario {
        Scenario::Echo => {
            c.send(&payload)?;
            c.shutdown_write()?;
            let back = c.read_exact(payload.len()).map_err(|e| Failed(format!("1,000 bytes then a half-close: {e}")))?;
            if back != payload {
                return Err("1,000 bytes then a half-close: different bytes came back".into());
            }
            "1,000 bytes then a half-close: echoed"
        }
        _ => {
            c.send(&request(t))?;
            c.shutdown_write()?;
            let answered = match t.scenario {
                Scenario::Plaintext => c.read_response().map_err(Failed::from).and_then(|r| check_plaintext(&r)),
                Scenario::Json => c.read_response().map_err(Failed::from).and_then(|r| check_json(&r, 7)),
                _ => read_ordinary(&mut c, t),
            };
            match answered {
                Ok(()) => "a request then a half-close: answered",
                // HTTP leaves this open; some frameworks (hyper's default) take the half-close for an abort.
                Err(e) if !t.micro && e.0 == CLOSED_WITHOUT_ANSWER => {
                    drop(c);
                    still_answers(t, o, "a half-closed connection", o.answer_timeout)?;
                    return Ok("a request then a half-close: closed without an answer (the framework takes a half-close for an abort); then served a fresh connection".into());
                }
                Err(e) => return Err(format!("a request followed by a half-close (shutdown SHUT_WR) was not answered: {e}").into()),
            }
        }
    };
    let since = Instant::now();
    let closed = match c.wait_close(since, o.answer_timeout) {
        Closed::Fin(d) | Closed::Reset(d) => format!("closed {} ms later", d.as_millis()),
        Closed::Open => {
            return Err(format!("{what}, but the server kept the half-closed connection open for {} s", o.answer_timeout.as_secs()).into())
        }
        Closed::Data(b) => return Err(format!("{what}, then {} more bytes nobody asked for: {}", b.len(), show(&b, 80)).into()),
    };
    drop(c);
    still_answers(t, o, "a half-closed connection", o.answer_timeout)?;
    Ok(format!("{what}, {closed}; then served a fresh connection"))
}

/// Size of the oversized head: over 64 KiB of headers.
const HUGE_HEADERS_BYTES: usize = 80 * 1024;

/// How long a micro contestant's answers to the oversized request are read: it only has to survive.
const MICRO_DRAIN: Duration = Duration::from_secs(2);

/// A request with 80 KiB of headers. Platform contestants must refuse it within the answer timeout (a
/// 4xx/5xx status or a close); one that takes the headers in and waits holds that memory for as long as
/// the client likes, and fails. Micro ones only have to survive it.
pub fn huge_headers(t: &Target, o: &Options) -> Result<String, Failed> {
    let full = request(t);
    let split = find(&full, b"\r\n").expect("a request line") + 2;
    let mut req = full[..split].to_vec();
    let filler = "x".repeat(1000);
    let mut i = 0;
    while req.len() < HUGE_HEADERS_BYTES {
        req.extend(format!("X-Fill-{i}: {filler}\r\n").into_bytes());
        i += 1;
    }
    req.extend_from_slice(&full[split..]);
    let kib = HUGE_HEADERS_BYTES / 1024;
    let mut c = Conn::open(t.addr, o.answer_timeout)?;
    let (answer, closed, write_error) = if t.micro {
        send_and_drain(&mut c, req, MICRO_DRAIN, |_| false)
    } else {
        // A status line is the verdict; the rest of the answer and the close need not be waited for.
        send_and_drain(&mut c, req, o.answer_timeout, |a| status_of(a).is_some())
    };
    drop(c);
    let status = status_of(&answer);
    let seen = match status {
        Some(s) => format!("status {s}{}", if closed { ", then closed" } else { "" }),
        None => what_came_back(&answer, closed, &write_error),
    };
    if !t.micro {
        match status {
            Some(s) if s < 400 => {
                return Err(format!("{kib} KiB of headers were accepted ({seen}); a platform server must answer an error (431/400) or close").into());
            }
            None if !closed => {
                return Err(format!(
                    "{kib} KiB of headers were neither refused nor closed within {} s ({seen}); a platform server must answer an error (431/400) or close",
                    o.answer_timeout.as_secs_f64()
                ).into());
            }
            _ => {}
        }
    }
    still_answers(t, o, "a request with 80 KiB of headers", o.answer_timeout)?;
    Ok(format!("{kib} KiB of headers: {seen}; then served a fresh connection"))
}

/// The status code of the answer's first line, if it starts like an HTTP response.
fn status_of(answer: &[u8]) -> Option<u16> {
    let rest = answer.strip_prefix(b"HTTP/1.")?;
    std::str::from_utf8(rest.get(2..5)?).ok()?.parse().ok()
}

/// How many handshakes are in flight at once while the drop's connections are opened: a burst of 5,000
/// SYNs overflows a listen backlog of 1,024 even at a server that accepts promptly, and the kernel's SYN
/// backoff (1, 3, 7 s) then decides the check rather than the server.
const CONNECT_WINDOW: usize = 256;

/// How long the opening may go without one more connection established before it gives up.
const CONNECT_STALL: Duration = Duration::from_secs(5);

/// The drop's connections: every socket opened, which of them were established, how many were refused
/// and how many never got through (still connecting, or never started, when the opening stalled).
struct Opened {
    fds: Vec<RawFd>,
    connected: Vec<bool>,
    refused: usize,
    stalled: usize,
}

/// Opens `n` non-blocking connections, at most `CONNECT_WINDOW` of them handshaking at a time, until all
/// are established or refused or `CONNECT_STALL` passes without progress.
fn open_many(addr: &std::net::SocketAddr, n: usize) -> Opened {
    let mut o = Opened { fds: Vec::with_capacity(n), connected: Vec::with_capacity(n), refused: 0, stalled: 0 };
    let mut pending: Vec<usize> = Vec::new();
    let mut started = 0;
    let mut progress = Instant::now();
    while started < n || !pending.is_empty() {
        while started < n && pending.len() < CONNECT_WINDOW {
            started += 1;
            match socket::connect_nonblocking(addr, None) {
                Ok((fd, done)) => {
                    o.fds.push(fd);
                    o.connected.push(done);
                    if !done {
                        pending.push(o.fds.len() - 1);
                    }
                }
                Err(_) => o.refused += 1,
            }
        }
        if progress.elapsed() >= CONNECT_STALL {
            o.stalled = pending.len() + (n - started);
            break;
        }
        let mut polls: Vec<libc::pollfd> =
            pending.iter().map(|&i| libc::pollfd { fd: o.fds[i], events: libc::POLLOUT, revents: 0 }).collect();
        // An interrupted wait leaves every revents 0: those sockets are asked again.
        let _ = socket::poll(&mut polls, 100);
        let mut still = Vec::with_capacity(pending.len());
        for (k, &i) in pending.iter().enumerate() {
            let r = polls[k].revents;
            if r == 0 {
                still.push(i);
            } else if r & (libc::POLLERR | libc::POLLHUP) == 0 && socket::socket_error(o.fds[i]) == 0 {
                o.connected[i] = true;
                progress = Instant::now();
            } else {
                o.refused += 1;
                progress = Instant::now();
            }
        }
        pending = still;
    }
    o
}

/// `drop_connections` connections opened (at most `CONNECT_WINDOW` handshaking at a time), all of which
/// must be established (a third send a request, a third half of one, a third nothing), then all closed
/// at once, half of them with a reset.
pub fn drop_many(t: &Target, o: &Options) -> Result<String, Failed> {
    let n = o.drop_connections;
    crate::os::limits::ensure_open_files(n as u64 + 256).map_err(|e| Failed(format!("{e:#}")))?;
    let full = request(t);
    let Opened { fds, connected, refused, stalled } = open_many(&t.addr, n);
    let up = connected.iter().filter(|c| **c).count();
    let mut note = format!("{up} of {n} connections established");
    if refused > 0 {
        note.push_str(&format!(", {refused} refused or failed"));
    }
    if stalled > 0 {
        note.push_str(&format!(", {stalled} not through after {} s without progress", CONNECT_STALL.as_secs()));
    }
    if up < n {
        for &fd in &fds {
            socket::close(fd);
        }
        // Dropping fewer connections than asked tests less than the check claims (a server that never
        // accepts would pass with a handful): the load must be there before its drop counts.
        return Err(format!("{note}: all {n} must be, so that they can be dropped at once (is the listen backlog small, or does the server stop accepting?)").into());
    }
    for (i, &fd) in fds.iter().enumerate() {
        if connected[i] {
            match i % 3 {
                0 => drop(socket::write(fd, &full)),
                1 => drop(socket::write(fd, &full[..full.len() / 2])),
                _ => {}
            }
        }
    }
    for (i, &fd) in fds.iter().enumerate() {
        if i % 2 == 0 {
            set_linger_zero(fd);
        }
        socket::close(fd);
    }
    let recovered = recovers(t, o, &format!("{n} connections opened and dropped at once"), DROP_RECOVERY)?;
    Ok(format!(
        "{note}, then all dropped at once (half reset); then served a fresh connection {} ms after the drop",
        recovered.as_millis()
    ))
}

/// How long a server may take to work through the dropped connections before it answers again.
pub const DROP_RECOVERY: Duration = Duration::from_secs(20);

/// Like `still_answers`, but a fresh connection is tried every second until `within` passes: a server
/// whose accept queue is still full of dropped connections loses SYNs, and a single attempt would then
/// wait on the kernel's SYN backoff (1, 3, 7, 15 s) rather than on the server. Returns the time taken.
fn recovers(t: &Target, o: &Options, after: &str, within: Duration) -> Result<Duration, Failed> {
    let start = Instant::now();
    loop {
        let left = within.saturating_sub(start.elapsed());
        match std::net::TcpStream::connect_timeout(&t.addr, left.clamp(Duration::from_millis(1), Duration::from_secs(1))) {
            Ok(_) => return still_answers(t, o, after, o.answer_timeout).map(|()| start.elapsed()),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                return Err(format!("after {after}, nothing listens on {} any more (connection refused)", t.addr).into());
            }
            Err(e) if start.elapsed() >= within => {
                return Err(format!("after {after}, no fresh connection was accepted within {} s: {e}", within.as_secs()).into());
            }
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}
