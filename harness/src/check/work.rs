//! The contract of `work` (busy-wait N µs, answer N) and `counter` (increment a shared counter, answer
//! its new value, never the same value twice).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use super::case::{Failed, Options, Target};
use crate::wire::client::{show, Conn, Response};
use crate::wire::request::get;
use crate::wire::{counter_path, decimal_response, parse_decimal, work_path, COUNTER_KEYS, DEFAULT_WORK_US, MAX_WORK_US};

/// Reads one answer to `work` or `counter`: a 200 whose body is a decimal (`want` when given). A micro
/// contestant sends exactly `decimal_response`.
pub fn read_decimal(c: &mut Conn, micro: bool, want: Option<u64>) -> Result<u64, Failed> {
    let r = c.read_response()?;
    decimal_of(&r, micro, want)
}

fn decimal_of(r: &Response, micro: bool, want: Option<u64>) -> Result<u64, Failed> {
    if r.status != 200 {
        return Err(format!("expected status 200, got {}", r.brief()).into());
    }
    let Some(value) = parse_decimal(&r.body) else {
        return Err(format!("the body must be a decimal number, got {}", show(&r.body, 80)).into());
    };
    if let Some(want) = want.filter(|w| *w != value) {
        return Err(format!("expected the body {want}, got {value}").into());
    }
    if micro && r.raw != decimal_response(value) {
        return Err(format!("a micro contestant must answer exactly {}, got {}", show(&decimal_response(value), 80), show(&r.raw, 160)).into());
    }
    Ok(value)
}

/// A request with a bad N or key must be refused with 400 (the connection may then close).
fn refused(t: &Target, o: &Options, path: &str) -> Result<(), Failed> {
    let mut c = Conn::open(t.addr, o.answer_timeout)?;
    c.send(&get(path))?;
    let r = c.read_response().map_err(|e| Failed(format!("GET {path}: {e}")))?;
    if r.status != 400 {
        return Err(format!("GET {path} answered {}; expected 400", r.brief()).into());
    }
    Ok(())
}

/// `/work/0`, `/work/7` and `/work/<DEFAULT>` answered with their N; `/work/20000` not before 20 ms;
/// three pipelined requests answered in order; an N that is not a decimal or above the maximum refused
/// with 400.
pub fn work_response(t: &Target, o: &Options) -> Result<String, Failed> {
    let mut c = Conn::open(t.addr, o.answer_timeout)?;
    for n in [0, 7, DEFAULT_WORK_US] {
        c.send(&get(&work_path(n)))?;
        read_decimal(&mut c, t.micro, Some(n)).map_err(|e| Failed(format!("GET {}: {e}", work_path(n))))?;
    }
    let asked = Duration::from_millis(20);
    let start = Instant::now();
    c.send(&get(&work_path(asked.as_micros() as u64)))?;
    read_decimal(&mut c, t.micro, Some(asked.as_micros() as u64))?;
    let took = start.elapsed();
    if took < asked {
        return Err(format!("GET /work/20000 was answered after {:.1} ms; it must take at least 20 ms", took.as_secs_f64() * 1e3).into());
    }
    let ns = [5, 50, 7];
    c.send(&ns.iter().flat_map(|n| get(&work_path(*n))).collect::<Vec<u8>>())?;
    for n in ns {
        read_decimal(&mut c, t.micro, Some(n)).map_err(|e| Failed(format!("pipelined /work/5, /work/50, /work/7: {e}")))?;
    }
    for bad in ["/work/".to_string(), "/work/abc".into(), work_path(MAX_WORK_US + 1)] {
        refused(t, o, &bad)?;
    }
    Ok(format!("N echoed, /work/20000 took {:.1} ms, pipelined answers in order, bad N refused with 400", took.as_secs_f64() * 1e3))
}

/// Requests sent at once by `work-busy`: enough that a server that sleeps instead of working answers
/// them all in about one request's time.
const BUSY_REQUESTS: u64 = 8;
const BUSY_US: u64 = 25_000;

/// The wait is work, not sleep: BUSY_REQUESTS requests of 25 ms at once, each on its own connection,
/// take at least their total CPU time spread over the server's CPUs (a server that sleeps answers all of
/// them in about 25 ms).
pub fn work_busy(t: &Target, o: &Options) -> Result<String, Failed> {
    let cpus = o.server_cpus.max(1) as u64;
    let mut conns = (0..BUSY_REQUESTS).map(|_| Conn::open(t.addr, o.answer_timeout)).collect::<Result<Vec<_>, _>>()?;
    let start = Instant::now();
    for c in &mut conns {
        c.send(&get(&work_path(BUSY_US)))?;
    }
    for c in &mut conns {
        read_decimal(c, t.micro, Some(BUSY_US))?;
    }
    let took = start.elapsed();
    // A little under the bound: the requests' clocks start when each is parsed, not when the first is sent.
    let bound = Duration::from_micros(BUSY_REQUESTS * BUSY_US / cpus * 9 / 10);
    if took < bound {
        return Err(format!(
            "{BUSY_REQUESTS} requests of /work/{BUSY_US} at once on {cpus} server CPU(s) were all answered after {:.1} ms; busy-waiting needs at least {:.1} ms (does the handler sleep?)",
            took.as_secs_f64() * 1e3,
            bound.as_secs_f64() * 1e3
        )
        .into());
    }
    Ok(format!("{BUSY_REQUESTS} requests of 25 ms at once on {cpus} server CPU(s): {:.0} ms (at least {:.0} ms of CPU each)", took.as_secs_f64() * 1e3, bound.as_secs_f64() * 1e3))
}

/// Connections that increment one counter at once in `counter-concurrent`, and requests on each.
const CONCURRENT_CONNECTIONS: usize = 8;
const CONCURRENT_REQUESTS: usize = 250;

/// The counter's key for one check: random, so that an earlier check's counts do not matter.
fn key(o: &Options, salt: u64) -> u32 {
    (o.seed.rotate_left(17) ^ salt ^ super::values::unix_now_s() as u64) as u32 % COUNTER_KEYS
}

/// Two increments of one key answer v and v + 1; the highest key is served; a key that is not a decimal
/// or above the highest is refused with 400.
pub fn counter_response(t: &Target, o: &Options) -> Result<String, Failed> {
    let mut c = Conn::open(t.addr, o.answer_timeout)?;
    let k = key(o, 1);
    c.send(&get(&counter_path(k)))?;
    let first = read_decimal(&mut c, t.micro, None).map_err(|e| Failed(format!("GET {}: {e}", counter_path(k))))?;
    c.send(&get(&counter_path(k)))?;
    read_decimal(&mut c, t.micro, Some(first + 1)).map_err(|e| Failed(format!("a second GET {} after {first}: {e}", counter_path(k))))?;
    c.send(&get(&counter_path(COUNTER_KEYS - 1)))?;
    read_decimal(&mut c, t.micro, None).map_err(|e| Failed(format!("GET {}: {e}", counter_path(COUNTER_KEYS - 1))))?;
    for bad in ["/counter/".to_string(), "/counter/x".into(), counter_path(COUNTER_KEYS)] {
        refused(t, o, &bad)?;
    }
    Ok(format!("{} then {}, the highest key served, bad keys refused with 400", first, first + 1))
}

/// CONCURRENT_CONNECTIONS connections increment one key CONCURRENT_REQUESTS times each, all at once: no
/// value comes back twice, and the next increment answers the value before them plus all of them plus one
/// (an update lost to a race shows as a repeated value, a short count, or both).
pub fn counter_concurrent(t: &Target, o: &Options) -> Result<String, Failed> {
    let k = key(o, 2);
    let mut c = Conn::open(t.addr, o.answer_timeout)?;
    c.send(&get(&counter_path(k)))?;
    let before = read_decimal(&mut c, t.micro, None)?;
    let request = get(&counter_path(k));
    let values: Vec<Result<Vec<u64>, Failed>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..CONCURRENT_CONNECTIONS)
            .map(|_| {
                let request = &request;
                s.spawn(move || -> Result<Vec<u64>, Failed> {
                    let mut c = Conn::open(t.addr, o.answer_timeout)?;
                    (0..CONCURRENT_REQUESTS)
                        .map(|_| {
                            c.send(request)?;
                            read_decimal(&mut c, t.micro, None)
                        })
                        .collect()
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap_or_else(|_| Err("a client thread panicked".into()))).collect()
    });
    let mut seen = BTreeSet::new();
    let mut repeated = 0;
    for v in values {
        for value in v? {
            repeated += usize::from(!seen.insert(value));
        }
    }
    let total = CONCURRENT_CONNECTIONS * CONCURRENT_REQUESTS;
    c.send(&request)?;
    let after = read_decimal(&mut c, t.micro, None)?;
    let expected = before + total as u64 + 1;
    if repeated > 0 || after != expected {
        return Err(format!(
            "lost updates: {total} increments of counter {k} from {CONCURRENT_CONNECTIONS} connections at once returned {repeated} values twice, and the counter went from {before} to {after} (expected {expected})"
        )
        .into());
    }
    Ok(format!("{total} increments from {CONCURRENT_CONNECTIONS} connections at once: every value once, {before} then {after}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::client::parse_response;

    fn response(raw: &[u8]) -> Response {
        parse_response(raw).unwrap().unwrap().0
    }

    #[test]
    fn a_decimal_answer_is_held_to_its_bytes_and_value() {
        assert_eq!(decimal_response(100), b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n100");
        assert_eq!(decimal_of(&response(&decimal_response(42)), true, Some(42)).unwrap(), 42);
        assert!(decimal_of(&response(&decimal_response(41)), true, Some(42)).is_err());
        let with_header = b"HTTP/1.1 200 OK\r\nServer: x\r\nContent-Length: 2\r\n\r\n42";
        assert!(decimal_of(&response(with_header), true, None).is_err(), "a micro contestant sends no other header");
        assert_eq!(decimal_of(&response(with_header), false, None).unwrap(), 42);
        assert!(decimal_of(&response(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n4 2"), false, None).is_err());
        assert!(decimal_of(&response(b"HTTP/1.1 500 No\r\nContent-Length: 1\r\n\r\n1"), false, None).is_err());
    }
}
