//! The wire contract of each scenario (DESIGN.md): exact hello bytes, plaintext's headers, Date, 404 and
//! pipelining, json's echoed sequence, echo's bytes in order; and `probe`, the one exchange that shows a
//! server still answers after something was done to it.

use std::io::{Read as _, Write as _};
use std::time::{Duration, Instant};

use super::values::{parse_http_date, random_bytes, unix_now_s, Rng};
use crate::wire::client::{is_timeout, parse_response, show, Conn, Response};
use crate::wire::request::{get, post_json};
use super::case::{Failed, Options, Target};
use crate::wire::Scenario;
use crate::wire::{HELLO_BODY, HELLO_RESPONSE, PLAINTEXT_BODY};

const MIB: usize = 1 << 20;

/// Reads one `hello` answer: exactly the 51 bytes for micro contestants, a 200 with body `Hello world!`
/// for platform ones.
pub fn read_hello(c: &mut Conn, micro: bool) -> Result<Response, Failed> {
    if micro {
        let bytes = c.read_exact(HELLO_RESPONSE.len())?;
        if bytes != HELLO_RESPONSE {
            return Err(format!("expected exactly {} ({} bytes), got {}", show(HELLO_RESPONSE, 80), HELLO_RESPONSE.len(), show(&bytes, 120)).into());
        }
        return Ok(parse_response(&bytes)?.expect("the hello response is complete").0);
    }
    let r = c.read_response()?;
    if r.status != 200 || r.body != HELLO_BODY {
        return Err(format!("expected status 200 with body \"Hello world!\", got {}", r.brief()).into());
    }
    Ok(r)
}

/// Reads the answer to the scenario's ordinary request (`Scenario::request`) for `hello`, `hello-timeout`,
/// `work`, `counter` and `file`.
pub fn read_ordinary(c: &mut Conn, t: &Target) -> Result<(), Failed> {
    match t.scenario {
        Scenario::Work => super::work::read_decimal(c, t.micro, Some(crate::wire::DEFAULT_WORK_US)).map(|_| ()),
        Scenario::Counter => super::work::read_decimal(c, t.micro, None).map(|_| ()),
        Scenario::File => super::file::read_file(c, t.micro).map(|_| ()),
        _ => read_hello(c, t.micro).map(|_| ()),
    }
}

/// Media type of a Content-Type value, lowercased, parameters (`; charset=utf-8`) dropped.
fn media_type(r: &Response) -> Option<String> {
    r.header("content-type").map(|v| v.split(';').next().unwrap_or("").trim().to_ascii_lowercase())
}

/// Status 200, HTTP/1.1, `Content-Type: text/plain`, one `Content-Length: 13`, body `Hello, World!`.
pub fn check_plaintext(r: &Response) -> Result<(), Failed> {
    if r.status != 200 {
        return Err(format!("expected status 200, got {}", r.brief()).into());
    }
    if r.minor_version != 1 {
        return Err(format!("expected an HTTP/1.1 response, got HTTP/1.{}", r.minor_version).into());
    }
    match media_type(r).as_deref() {
        Some("text/plain") => {}
        Some(_) => return Err(format!("Content-Type is {:?}; expected text/plain", r.header("content-type").unwrap_or("")).into()),
        None => return Err(format!("no Content-Type header (expected text/plain): {}", show(&r.raw, 200)).into()),
    }
    if r.chunked {
        return Err("the body is chunked; expected Content-Length: 13".into());
    }
    match (r.header_count("content-length"), r.header("content-length")) {
        (1, Some("13")) => {}
        (0, _) => return Err("no Content-Length header (expected 13)".into()),
        (1, Some(v)) => return Err(format!("Content-Length is {v:?}; expected 13").into()),
        (n, _) => return Err(format!("{n} Content-Length headers; expected one").into()),
    }
    if r.body != PLAINTEXT_BODY {
        return Err(format!("body is {}; expected \"Hello, World!\"", show(&r.body, 80)).into());
    }
    Ok(())
}

/// Status 200, `Content-Type: application/json`, a body that is a JSON object `{"sequence": N}` with the
/// same N as an integer.
pub fn check_json(r: &Response, n: u64) -> Result<(), Failed> {
    if r.status != 200 {
        return Err(format!("sequence {n}: expected status 200, got {}", r.brief()).into());
    }
    match media_type(r).as_deref() {
        Some("application/json") => {}
        other => return Err(format!("sequence {n}: Content-Type is {other:?}; expected application/json").into()),
    }
    let value: serde_json::Value = serde_json::from_slice(&r.body)
        .map_err(|e| Failed(format!("sequence {n}: the body is not JSON ({e}): {}", show(&r.body, 80))))?;
    let ok = value.as_object().is_some_and(|o| o.len() == 1 && o.get("sequence").and_then(|v| v.as_u64()) == Some(n));
    if !ok {
        return Err(format!("sent sequence {n}, got the body {}; expected {{\"sequence\":{n}}}", show(&r.body, 80)).into());
    }
    Ok(())
}

/// One ordinary exchange on a fresh connection: the proof, after bad input, that the server still answers.
pub fn probe(t: &Target, o: &Options, timeout: Duration) -> Result<(), Failed> {
    let mut c = Conn::open(t.addr, timeout)?;
    let mut rng = Rng::with_seed(o.seed ^ unix_now_s() as u64);
    match (t.scenario, t.scenario.request()) {
        (Scenario::Json, Some(request)) => {
            let n = rng.u64(..1 << 31);
            c.send(&request.render(n))?;
            check_json(&c.read_response()?, n)?;
        }
        (Scenario::Plaintext, Some(request)) => {
            c.send(&request.render(0))?;
            check_plaintext(&c.read_response()?)?;
        }
        (_, Some(request)) => {
            c.send(&request.render(0))?;
            read_ordinary(&mut c, t)?;
        }
        (_, None) => {
            let payload = random_bytes(&mut rng, 1000);
            c.send(&payload)?;
            let back = c.read_exact(payload.len())?;
            if back != payload {
                return Err("the 1,000 bytes sent came back different".into());
            }
        }
    }
    Ok(())
}

/// Ten `hello` requests on one connection, each answered; nothing more arrives.
pub fn hello_response(t: &Target, o: &Options) -> Result<String, Failed> {
    let mut c = Conn::open(t.addr, o.answer_timeout)?;
    let mut size = 0;
    for i in 1..=10 {
        c.send(&get("/"))?;
        let r = read_hello(&mut c, t.micro).map_err(|e| Failed(format!("request {i} of 10 on one connection: {e}")))?;
        size = r.raw.len();
    }
    let extra = c.extra_bytes(Duration::from_millis(100));
    if !extra.is_empty() {
        return Err(format!("after 10 answers the server sent {} bytes nobody asked for: {}", extra.len(), show(&extra, 80)).into());
    }
    Ok(if t.micro {
        "10 requests on one connection, each answered with exactly the 51-byte response".into()
    } else {
        format!("10 requests on one connection, each a 200 with body \"Hello world!\" ({size} bytes)")
    })
}

pub fn plaintext_response(t: &Target, o: &Options) -> Result<String, Failed> {
    let mut c = Conn::open(t.addr, o.answer_timeout)?;
    let mut size = 0;
    for i in 1..=3 {
        c.send(&get("/plaintext"))?;
        let r = c.read_response().map_err(|e| Failed(format!("request {i} of 3: {e}")))?;
        check_plaintext(&r).map_err(|e| Failed(format!("request {i} of 3: {e}")))?;
        if r.closes() && i < 3 {
            return Err(format!("response {i} closes the connection (keep-alive expected): {}", show(&r.raw, 200)).into());
        }
        size = r.raw.len();
    }
    Ok(format!("3 requests on one connection: 200, text/plain, Content-Length 13, \"Hello, World!\" ({size} bytes)"))
}

/// A Date header in IMF-fixdate form, near this machine's clock, that moves on from one second to the next.
pub fn plaintext_date(t: &Target, o: &Options) -> Result<String, Failed> {
    let mut c = Conn::open(t.addr, o.answer_timeout)?;
    let date = |c: &mut Conn| -> Result<(String, i64), Failed> {
        c.send(&get("/plaintext"))?;
        let r = c.read_response()?;
        let v = r.header("date").ok_or_else(|| format!("no Date header: {}", show(&r.raw, 200)))?.to_string();
        let s = parse_http_date(&v)
            .ok_or_else(|| format!("Date {v:?} is not an IMF-fixdate such as \"Sun, 06 Nov 1994 08:49:37 GMT\""))?;
        Ok((v, s))
    };
    let start = Instant::now();
    let (first, first_s) = date(&mut c)?;
    let skew = first_s - unix_now_s();
    if skew.abs() > 2 {
        return Err(format!("Date {first:?} is {skew} s away from this machine's clock").into());
    }
    while start.elapsed() < Duration::from_millis(3000) {
        std::thread::sleep(Duration::from_millis(250));
        let (now, now_s) = date(&mut c)?;
        if now_s < first_s {
            return Err(format!("Date went back from {first:?} to {now:?}").into());
        }
        if now_s > first_s {
            return Ok(format!("Date {first:?} became {now:?} after {} ms", start.elapsed().as_millis()));
        }
    }
    Err(format!("Date stayed {first:?} for 3 s").into())
}

/// Unknown paths get 404 and the connection stays usable.
pub fn plaintext_404(t: &Target, o: &Options) -> Result<String, Failed> {
    let mut c = Conn::open(t.addr, o.answer_timeout)?;
    for path in ["/sb-no-such-path", "/plaintextx", "/"] {
        c.send(&get(path))?;
        let r = c.read_response().map_err(|e| Failed(format!("GET {path}: {e}")))?;
        if r.status != 404 {
            return Err(format!("GET {path}: expected 404, got {}", r.brief()).into());
        }
        if r.closes() {
            c = Conn::open(t.addr, o.answer_timeout)?;
        }
    }
    c.send(&get("/plaintext"))?;
    let r = c.read_response().map_err(|e| Failed(format!("GET /plaintext after three 404s: {e}")))?;
    check_plaintext(&r).map_err(|e| Failed(format!("GET /plaintext after three 404s: {e}")))?;
    Ok("/sb-no-such-path, /plaintextx and / answered 404; /plaintext then 200 on the same connection".into())
}

/// Which of the 16 pipelined requests ask for an unknown path (404), so that the order of the answers shows.
const PIPELINE_404: [bool; 16] =
    [false, false, true, false, true, true, false, false, false, true, false, true, true, true, false, false];

/// 16 requests in one write, a mix of /plaintext and unknown paths; the answers must come in the same order.
pub fn plaintext_pipeline(t: &Target, o: &Options) -> Result<String, Failed> {
    let mut c = Conn::open(t.addr, o.answer_timeout)?;
    let mut batch = Vec::new();
    for (i, missing) in PIPELINE_404.iter().enumerate() {
        batch.extend(get(&if *missing { format!("/sb-missing-{i}") } else { "/plaintext".to_string() }));
    }
    c.send(&batch)?;
    for (i, missing) in PIPELINE_404.iter().enumerate() {
        let r = c.read_response().map_err(|e| Failed(format!("answer {} of 16: {e}", i + 1)))?;
        let want = if *missing { 404 } else { 200 };
        if r.status != want {
            let order: String = PIPELINE_404.iter().map(|m| if *m { '4' } else { '2' }).collect();
            return Err(format!(
                "answer {} of 16 has status {}, expected {want} (requests asked for 200/404 in the order {order}, 2 = 200, 4 = 404)",
                i + 1,
                r.status
            ).into());
        }
        if !*missing {
            check_plaintext(&r).map_err(|e| Failed(format!("answer {} of 16: {e}", i + 1)))?;
        }
        if r.closes() && i < 15 {
            return Err(format!("answer {} of 16 closes the connection in the middle of a pipeline", i + 1).into());
        }
    }
    let extra = c.extra_bytes(Duration::from_millis(100));
    if !extra.is_empty() {
        return Err(format!("after 16 answers the server sent {} more bytes: {}", extra.len(), show(&extra, 80)).into());
    }
    Ok("16 pipelined requests (10 x 200, 6 x 404) answered in order".into())
}

/// The sequence values sent: edges, then random ones below 2^31 (the load generator counts up from 0 per
/// connection, so a run stays far below that).
pub fn json_values(seed: u64) -> Vec<u64> {
    let mut v = vec![0, 1, 2, 9, 10, 99, 100, 255, 256, 1000, 4095, 65_535, 65_536, 1_000_000, 2_147_483_647];
    let mut rng = Rng::with_seed(seed);
    let random: Vec<u64> = (0..49).map(|_| rng.u64(..1 << 31)).collect();
    v.extend(random);
    v
}

/// `POST /ping` with many sequence numbers, the body written in several JSON layouts so that only a real
/// parser gets them all.
pub fn json_sequence(t: &Target, o: &Options) -> Result<String, Failed> {
    let layouts: [fn(u64) -> String; 4] = [
        |n| format!("{{\"sequence\": {n}}}"),
        |n| format!("{{\"sequence\":{n}}}"),
        |n| format!(" {{ \"sequence\" : {n} }} "),
        |n| format!("{{\n  \"sequence\": {n}\n}}"),
    ];
    let values = json_values(o.seed);
    let mut c = Conn::open(t.addr, o.answer_timeout)?;
    for (i, n) in values.iter().enumerate() {
        let body = layouts[i % layouts.len()](*n);
        c.send(&post_json(&body))?;
        let r = c.read_response().map_err(|e| Failed(format!("body {}: {e}", show(body.as_bytes(), 60))))?;
        check_json(&r, *n).map_err(|e| Failed(format!("{e} (request body {})", show(body.as_bytes(), 60))))?;
        if r.closes() {
            c = Conn::open(t.addr, o.answer_timeout)?;
        }
    }
    Ok(format!("{} sequence numbers from 0 to 2147483647, in 4 JSON layouts, each echoed", values.len()))
}

/// Piece sizes of the echo payload: odd, prime, from 1 byte to just under 64 KiB.
const ECHO_PIECES: [usize; 10] = [1, 3, 7, 13, 101, 1001, 4093, 65_521, 17, 257];

/// 1 MiB of random bytes sent in pieces of odd sizes while reading; what comes back must be the same
/// bytes in the same order, and nothing more.
pub fn echo_1mib(t: &Target, o: &Options) -> Result<String, Failed> {
    let payload = random_bytes(&mut Rng::with_seed(o.seed), MIB);
    let mut c = Conn::open(t.addr, o.answer_timeout)?;
    let mut writer = c.stream.try_clone().map_err(|e| e.to_string())?;
    let to_send = payload.clone();
    let sender = std::thread::spawn(move || -> Result<(), Failed> {
        let mut at = 0;
        for size in ECHO_PIECES.iter().cycle() {
            if at == to_send.len() {
                return Ok(());
            }
            let end = (at + size).min(to_send.len());
            writer.write_all(&to_send[at..end]).map_err(|e| Failed(format!("write failed after {at} bytes: {e}")))?;
            at = end;
        }
        Ok(())
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut back = Vec::with_capacity(MIB);
    let mut chunk = vec![0u8; 64 * 1024];
    let mut failure = None;
    while back.len() < MIB {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            failure = Some(format!("only {} of {MIB} bytes came back within 20 s", back.len()));
            break;
        }
        let _ = c.stream.set_read_timeout(Some(left));
        match c.stream.read(&mut chunk) {
            Ok(0) => {
                failure = Some(format!("the server closed the connection after echoing {} of {MIB} bytes", back.len()));
                break;
            }
            Ok(n) => back.extend_from_slice(&chunk[..n]),
            Err(e) if is_timeout(&e) => continue,
            Err(e) => {
                failure = Some(format!("read failed after {} bytes: {e}", back.len()));
                break;
            }
        }
    }
    if failure.is_some() {
        // Unblock the sender if the server stopped reading.
        let _ = c.stream.shutdown(std::net::Shutdown::Both);
    }
    let sent = sender.join().map_err(|_| "the sending thread panicked".to_string())?;
    if let Some(f) = failure {
        return Err(Failed(match sent {
            Err(w) => format!("{f}; {w}"),
            Ok(()) => f,
        }));
    }
    sent?;
    let common = back.len().min(MIB);
    if let Some(at) = (0..common).find(|&i| back[i] != payload[i]) {
        return Err(format!(
            "byte {at} differs: sent {}, got {} (seed {:#x})",
            show(&payload[at..(at + 16).min(MIB)], 16),
            show(&back[at..(at + 16).min(back.len())], 16),
            o.seed
        ).into());
    }
    if back.len() > MIB {
        return Err(format!("{} more bytes came back than were sent", back.len() - MIB).into());
    }
    let extra = c.extra_bytes(Duration::from_millis(100));
    if !extra.is_empty() {
        return Err(format!("{} more bytes came back than were sent", extra.len()).into());
    }
    Ok("1 MiB of random bytes, sent in pieces of 1 to 65,521 bytes, came back intact and in order".into())
}
