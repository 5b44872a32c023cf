//! The parsed scenarios of the raw contestants, `work` and `counter`: `GET /work/<N>` busy-waits N µs
//! and answers N; `GET /counter/<k>` increments counter k and answers its new value. Requests are
//! HTTP/1.1, keep-alive and may be pipelined: every complete request that has arrived is answered, in
//! order, before the connection reads again. The runtimes differ only in how they read and write.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The answer to a malformed request (bad number, request line or head); the connection is closed after it.
pub const BAD_REQUEST: &[u8] = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
/// The answer to a well-formed GET of another path; the connection stays open.
pub const NOT_FOUND: &[u8] = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";

/// A head longer than this without its blank line is a bad request.
const MAX_HEAD: usize = 8192;

/// The number of `counter` keys, 0..=65535.
pub const COUNTER_KEYS: usize = 65_536;

/// The `counter` scenario's state, shared by every worker thread of the process: one AtomicU64 per
/// key. Each key is an independent counter and an increment is one read-modify-write of it, which is
/// what atomics are for: no lock to contend on or to hold across an `.await`, and every runtime's
/// threads can share a `static` without wrapping it in an Arc.
static COUNTERS: [AtomicU64; COUNTER_KEYS] = [const { AtomicU64::new(0) }; COUNTER_KEYS];

/// Increments counter `key` and returns its new value (the first is 1). Relaxed is enough: a
/// read-modify-write on one location never returns the same value twice, whatever the ordering.
pub fn increment(key: usize) -> u64 {
    COUNTERS[key].fetch_add(1, Ordering::Relaxed) + 1
}

/// A clock step at least this long means the thread was descheduled (preempted, or another thread ran
/// on its CPU): that time was not spent on the request, so `busy_wait` does not count it.
const SB_WORK_GAP_NS: Duration = Duration::from_nanos(50_000);

/// Blocks the calling thread until it has RUN for `micros` µs since `start`: spins reading the
/// monotonic clock (Instant is CLOCK_MONOTONIC on Linux) and adds each step shorter than
/// `SB_WORK_GAP_NS` to the total, so time spent descheduled is not counted and every request costs
/// `micros` µs of CPU however many threads share a CPU. No sleep, no yield: the worker is busy.
pub fn busy_wait(start: Instant, micros: u64) {
    let length = Duration::from_micros(micros);
    let (mut total, mut last) = (Duration::ZERO, start);
    while total < length {
        let now = Instant::now();
        let step = now - last;
        if step < SB_WORK_GAP_NS {
            total += step;
        }
        last = now;
    }
}

/// The parsed scenarios: which path prefix a request names and what is done with its number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// `GET /work/<N>`, N in 0..=1000000: busy-wait N µs, answer N.
    Work,
    /// `GET /counter/<k>`, k in 0..=65535: increment counter k, answer its new value.
    Counter,
}

impl Route {
    fn prefix(self) -> &'static [u8] {
        match self {
            Route::Work => b"/work/",
            Route::Counter => b"/counter/",
        }
    }

    fn max(self) -> u64 {
        match self {
            Route::Work => 1_000_000,
            Route::Counter => COUNTER_KEYS as u64 - 1,
        }
    }
}

/// What a route answers to a request target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// 200 with this number as the body.
    Ok(u64),
    /// A path outside the route: 404.
    NotFound,
    /// A missing, malformed or too large number: 400.
    BadRequest,
}

impl Route {
    /// Does what `target` (`/work/<N>` or `/counter/<k>`) asks: busy-waits N µs counted from `start`,
    /// the moment the request was taken up, or increments counter k. Shared with the framework
    /// contestants, whose own HTTP stack parses the request and hands over its path.
    pub fn answer(self, target: &[u8], start: Instant) -> Answer {
        let Some(digits) = target.strip_prefix(self.prefix()) else { return Answer::NotFound };
        let Some(n) = decimal(digits, self.max()) else { return Answer::BadRequest };
        Answer::Ok(match self {
            Route::Work => {
                busy_wait(start, n);
                n
            }
            Route::Counter => increment(n as usize),
        })
    }
}

/// One connection's requests: the part of a request that has arrived without its end, kept until the
/// rest comes.
pub struct Requests {
    route: Route,
    pending: Vec<u8>,
}

impl Requests {
    pub fn new(route: Route) -> Requests {
        Requests { route, pending: Vec::new() }
    }

    /// Appends to `out` the answers to every complete request in the bytes received so far, of
    /// which `data` is the newest read. Returns true when the connection must be closed once `out` is
    /// written (a bad request: whatever followed it is not answered).
    pub fn answer(&mut self, data: &[u8], out: &mut Vec<u8>) -> bool {
        if self.pending.is_empty() {
            // The usual case: whole requests in one read, nothing to copy.
            let (used, close) = answer_all(self.route, data, out);
            if !close {
                self.pending.extend_from_slice(&data[used..]);
            }
            close
        } else {
            let mut input = std::mem::take(&mut self.pending);
            input.extend_from_slice(data);
            let (used, close) = answer_all(self.route, &input, out);
            input.drain(..used);
            self.pending = input;
            close
        }
    }
}

/// Answers the complete requests at the front of `input`; returns the bytes they took and whether to close.
fn answer_all(route: Route, input: &[u8], out: &mut Vec<u8>) -> (usize, bool) {
    let mut used = 0;
    loop {
        let start = Instant::now();
        let answer = match parse_head(&input[used..]) {
            Head::Partial => return (used, false),
            Head::Bad => Answer::BadRequest,
            Head::Get { target, len } => {
                used += len;
                route.answer(target, start)
            }
        };
        match answer {
            Answer::Ok(value) => ok(out, value),
            Answer::NotFound => out.extend_from_slice(NOT_FOUND),
            Answer::BadRequest => {
                out.extend_from_slice(BAD_REQUEST);
                return (input.len(), true);
            }
        }
    }
}

/// The request at the front of a connection's input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Head<'a> {
    /// Its blank line has not arrived yet.
    Partial,
    /// Malformed, not a GET (a GET carries no body; any other method is refused rather than
    /// guessing where its body ends), or longer than `MAX_HEAD`: a 400, then the connection closes.
    Bad,
    /// `GET <target> HTTP/1.x`, whose head (request line and headers) takes `len` bytes.
    Get { target: &'a [u8], len: usize },
}

/// Parses the request line of the request at the front of `input`.
pub fn parse_head(input: &[u8]) -> Head<'_> {
    let Some(len) = input.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4) else {
        return if input.len() > MAX_HEAD { Head::Bad } else { Head::Partial };
    };
    let line_end = input.windows(2).position(|w| w == b"\r\n").unwrap_or(len);
    let mut parts = input[..line_end].split(|&c| c == b' ');
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(b"GET"), Some(target), Some(version), None) if version.starts_with(b"HTTP/1.") => Head::Get { target, len },
        _ => Head::Bad,
    }
}

/// The decimal number `digits` spells if it has at least one digit, only digits, and is at most `max`.
fn decimal(digits: &[u8], max: u64) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    let mut n: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        n = n * 10 + u64::from(c - b'0');
        if n > max {
            return None;
        }
    }
    Some(n)
}

/// Appends `HTTP/1.1 200 OK\r\nContent-Length: <len>\r\n\r\n<value>`.
fn ok(out: &mut Vec<u8>, value: u64) {
    let (mut body, mut length) = ([0u8; 20], [0u8; 20]);
    let body = spell(value, &mut body);
    out.extend_from_slice(b"HTTP/1.1 200 OK\r\nContent-Length: ");
    out.extend_from_slice(spell(body.len() as u64, &mut length));
    out.extend_from_slice(b"\r\n\r\n");
    out.extend_from_slice(body);
}

/// Writes `value` in decimal at the end of `buf` and returns those digits.
fn spell(mut value: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            return &buf[i..];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(route: Route, chunks: &[&[u8]]) -> (Vec<u8>, bool) {
        let mut r = Requests::new(route);
        let mut out = Vec::new();
        let mut close = false;
        for c in chunks {
            close = r.answer(c, &mut out);
            if close {
                break;
            }
        }
        (out, close)
    }

    #[test]
    fn work_echoes_the_number_after_waiting() {
        let t = Instant::now();
        let (out, close) = run(Route::Work, &[b"GET /work/007 HTTP/1.1\r\nHost: bench\r\n\r\n"]);
        assert_eq!(out, b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n7");
        assert!(!close);
        assert!(t.elapsed() >= Duration::from_micros(7));
        let (out, _) = run(Route::Work, &[b"GET /work/1000 HTTP/1.1\r\nHost: bench\r\n\r\n"]);
        assert_eq!(out, b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n1000");
    }

    #[test]
    fn pipelined_and_split_requests_are_answered_in_order() {
        let (out, close) = run(
            Route::Work,
            &[b"GET /work/5 HTTP/1.1\r\nHost: bench\r\n\r\nGET /work/50 HTTP/1.1\r\nHo", b"st: bench\r\n\r\nGET /work/7 HTTP/1.1\r\n\r\n"],
        );
        assert!(!close);
        assert_eq!(
            out,
            b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n5HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n50HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n7"
        );
    }

    #[test]
    fn bad_numbers_are_refused_and_close() {
        for bad in ["/work/", "/work/abc", "/work/-1", "/work/1000001", "/work/99999999999999999999999"] {
            let req = format!("GET {bad} HTTP/1.1\r\nHost: bench\r\n\r\n");
            assert_eq!(run(Route::Work, &[req.as_bytes()]), (BAD_REQUEST.to_vec(), true), "{bad}");
        }
        for bad in ["/counter/", "/counter/x", "/counter/65536"] {
            let req = format!("GET {bad} HTTP/1.1\r\nHost: bench\r\n\r\n");
            assert_eq!(run(Route::Counter, &[req.as_bytes()]), (BAD_REQUEST.to_vec(), true), "{bad}");
        }
        assert_eq!(run(Route::Work, &[&[b'x'; MAX_HEAD + 1]]), (BAD_REQUEST.to_vec(), true));
        assert_eq!(run(Route::Work, &[b"POST /work/1 HTTP/1.1\r\n\r\n"]), (BAD_REQUEST.to_vec(), true));
        assert_eq!(run(Route::Work, &[b"GET /other HTTP/1.1\r\n\r\n"]), (NOT_FOUND.to_vec(), false));
    }

    #[test]
    fn counters_count_from_one() {
        let (out, _) = run(Route::Counter, &[b"GET /counter/65535 HTTP/1.1\r\n\r\nGET /counter/65535 HTTP/1.1\r\n\r\n"]);
        assert_eq!(out, b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n1HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n2");
    }

    #[test]
    fn long_values_have_their_length() {
        let mut out = Vec::new();
        ok(&mut out, 12_345_678_901);
        assert_eq!(out, b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n12345678901");
        out.clear();
        ok(&mut out, 0);
        assert_eq!(out, b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n0");
    }
}
