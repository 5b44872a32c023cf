//! Verification before measuring: the server answers its scenario correctly, or it is not measured.
//! Micro contestants must answer `hello` byte for byte; platform ones with a valid HTTP 200 and the right
//! body; `echo` must send every byte back in order. The bytes travel through `wire`'s client; the
//! failures are worded here, with what was received.

use std::io::Write;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crate::wire::client::{is_timeout, parse_head};
use crate::wire::{Conn, Expected, HttpRequest, Response, Scenario, HELLO_RESPONSE};

const ECHO_BYTES: usize = 4096;
const SHOWN_BYTES: usize = 160;

/// What the server sent: one response (HTTP) or the echoed bytes.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Sample {
    pub bytes: Vec<u8>,
}

/// Why verification failed, with what was received when there was anything.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Failure {
    pub reason: String,
    pub sample: Option<Vec<u8>>,
}

fn fail(reason: impl Into<String>, sample: Option<&[u8]>) -> Failure {
    Failure { reason: reason.into(), sample: sample.map(<[u8]>::to_vec) }
}

/// Checks one scenario against a listening server.
pub fn verify(addr: SocketAddr, scenario: &str, micro: bool, timeout: Duration) -> Result<Sample, Failure> {
    let mut conn = Session::open(addr, timeout)?;
    let Some(s) = Scenario::parse(scenario) else {
        return Err(fail(format!("no verification for scenario `{scenario}`"), None));
    };
    let (Some(request), Some(expected)) = (s.request(), s.expected()) else {
        return verify_echo(&mut conn);
    };
    match s {
        Scenario::Plaintext => {
            let request = request.render(0);
            // Two pipelined requests must come back in order.
            conn.send(&[request.clone(), request].concat())?;
            let first = conn.response()?;
            expect(&first, &expected)?;
            if first.header("date").is_none() {
                return Err(fail("response to `plaintext` has no Date header", Some(&first.raw)));
            }
            expect(&conn.response()?, &expected)?;
            conn.send(&HttpRequest::get("/no-such-path").render(0))?;
            let missing = conn.response()?;
            if missing.status != 404 {
                return Err(fail(format!("GET /no-such-path answered {}, not 404", missing.status), Some(&missing.raw)));
            }
            Ok(Sample { bytes: first.raw })
        }
        Scenario::Json => {
            let mut first = None;
            for n in [17, 18] {
                conn.send(&request.render(n))?;
                let r = conn.response()?;
                expect(&r, &expected)?;
                let got: Option<i64> = serde_json::from_slice::<serde_json::Value>(&r.body)
                    .ok()
                    .and_then(|v| v.get("sequence").and_then(|s| s.as_i64()));
                if got != Some(n as i64) {
                    return Err(fail(
                        format!("POST /ping with {{\"sequence\": {n}}} answered the body {}", show(&r.body)),
                        Some(&r.raw),
                    ));
                }
                first.get_or_insert(r.raw);
            }
            Ok(Sample { bytes: first.unwrap_or_default() })
        }
        Scenario::Work | Scenario::Counter => {
            // Twice on one connection: `work` echoes its N, `counter` counts up by one.
            let mut first: Option<(u64, Vec<u8>)> = None;
            for n in [0, 1] {
                let path = if s == Scenario::Work { crate::wire::work_path(n * crate::wire::DEFAULT_WORK_US) } else { request.path.clone() };
                conn.send(&HttpRequest::get(&path).render(0))?;
                let r = conn.response()?;
                expect(&r, &Expected { body: &[], ..expected })?;
                let Some(value) = crate::wire::parse_decimal(&r.body) else {
                    return Err(fail(format!("GET {path} answered the body {}; expected a decimal", show(&r.body)), Some(&r.raw)));
                };
                let want = match (s, &first) {
                    (Scenario::Work, _) => n * crate::wire::DEFAULT_WORK_US,
                    (_, Some((v, _))) => v + 1,
                    (_, None) => value,
                };
                if value != want {
                    return Err(fail(format!("GET {path} answered {value}; expected {want}"), Some(&r.raw)));
                }
                let exact = crate::wire::decimal_response(value);
                if micro && r.raw != exact {
                    return Err(fail(format!("wrong response to `{scenario}`: a micro contestant must answer exactly {}; got {}", show(&exact), show(&r.raw)), Some(&r.raw)));
                }
                first.get_or_insert((value, r.raw));
            }
            Ok(Sample { bytes: first.map(|f| f.1).unwrap_or_default() })
        }
        _ => {
            let request = request.render(0);
            // Twice on one connection: keep-alive is part of the contract.
            let mut first = None;
            for _ in 0..2 {
                conn.send(&request)?;
                let r = conn.response()?;
                if micro && r.raw != HELLO_RESPONSE {
                    return Err(fail(
                        format!(
                            "wrong response to `{scenario}`: a micro contestant must answer exactly {} bytes {}; got {} bytes {}",
                            HELLO_RESPONSE.len(),
                            show(HELLO_RESPONSE),
                            r.raw.len(),
                            show(&r.raw)
                        ),
                        Some(&r.raw),
                    ));
                }
                expect(&r, &expected)?;
                first.get_or_insert(r.raw);
            }
            Ok(Sample { bytes: first.unwrap_or_default() })
        }
    }
}

fn verify_echo(conn: &mut Session) -> Result<Sample, Failure> {
    let sent = pattern(ECHO_BYTES);
    // Odd-sized pieces: the server must not depend on message boundaries.
    for piece in [&sent[..1], &sent[1..1001], &sent[1001..]] {
        conn.send(piece)?;
    }
    let got = conn.exactly(ECHO_BYTES)?;
    if got != sent {
        let at = got.iter().zip(&sent).position(|(a, b)| a != b).unwrap_or(0);
        return Err(fail(format!("echo sent {ECHO_BYTES} bytes and got different bytes back (first difference at byte {at})"), Some(&got)));
    }
    Ok(Sample { bytes: got })
}

/// Pseudo-random bytes, the same every time.
fn pattern(n: usize) -> Vec<u8> {
    let mut bytes = vec![0u8; n];
    fastrand::Rng::with_seed(0x9e37_79b9).fill(&mut bytes);
    bytes
}

/// Bytes shown in a message: escaped, quoted, cut at a readable length.
fn show(bytes: &[u8]) -> String {
    crate::wire::client::show(bytes, SHOWN_BYTES)
}

/// Status, body (when the expected one is not empty) and content type prefix.
fn expect(r: &Response, e: &Expected) -> Result<(), Failure> {
    if r.status != e.status {
        return Err(fail(format!("answered status {} instead of {}: {}", r.status, e.status, show(&r.raw)), Some(&r.raw)));
    }
    if !e.body.is_empty() && r.body != e.body {
        return Err(fail(format!("wrong body: expected {}, got {}", show(e.body), show(&r.body)), Some(&r.raw)));
    }
    if let Some(ct) = e.content_type {
        if !r.header("content-type").is_some_and(|v| v.to_ascii_lowercase().starts_with(ct)) {
            return Err(fail(format!("Content-Type is not {ct}: {}", show(&r.raw)), Some(&r.raw)));
        }
    }
    Ok(())
}

/// One connection of the verification: each read waits at most `timeout`, and a failure says what was
/// expected and what had arrived.
struct Session {
    conn: Conn,
    timeout: Duration,
}

impl Session {
    fn open(addr: SocketAddr, timeout: Duration) -> Result<Session, Failure> {
        let conn = Conn::open(addr, timeout).map_err(|e| fail(e.to_string(), None))?;
        Ok(Session { conn, timeout })
    }

    fn send(&mut self, bytes: &[u8]) -> Result<(), Failure> {
        self.conn.stream.write_all(bytes).map_err(|e| fail(format!("sending the request failed: {e}"), None))
    }

    /// Reads more bytes; an error names what was expected.
    fn fill(&mut self, wanted: &str) -> Result<(), Failure> {
        let read = self.conn.fill(Instant::now() + self.timeout);
        let so_far = self.conn.buffered();
        match read {
            Ok(0) => Err(fail(
                format!("the server closed the connection while {wanted} was expected (received so far: {})", show(so_far)),
                Some(so_far),
            )),
            Ok(_) => Ok(()),
            Err(e) if is_timeout(&e) => Err(fail(
                format!("no complete {wanted} before the timeout (received so far: {})", show(so_far)),
                Some(so_far),
            )),
            Err(e) => Err(fail(format!("reading {wanted} failed: {e}"), Some(so_far))),
        }
    }

    fn exactly(&mut self, n: usize) -> Result<Vec<u8>, Failure> {
        while self.conn.buffered().len() < n {
            self.fill(&format!("{n} echoed bytes"))?;
        }
        Ok(self.conn.take(n))
    }

    /// One HTTP/1.1 response framed by Content-Length.
    fn response(&mut self) -> Result<Response, Failure> {
        loop {
            let buf = self.conn.buffered();
            match parse_head(buf) {
                Ok(Some(head)) => {
                    let find = |n: &str| head.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(n)).map(|(_, v)| v.clone());
                    if find("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked")) {
                        return Err(fail(
                            "the response is chunked; the benchmark frames responses by Content-Length, so the server must send one",
                            Some(buf),
                        ));
                    }
                    let Some(len) = find("content-length").and_then(|v| v.parse::<usize>().ok()) else {
                        return Err(fail(format!("the response has no valid Content-Length header: {}", show(buf)), Some(buf)));
                    };
                    while self.conn.buffered().len() < head.len + len {
                        self.fill("the response body")?;
                    }
                    let raw = self.conn.take(head.len + len);
                    let body = raw[head.len..].to_vec();
                    return Ok(Response { status: head.status, minor_version: head.minor_version, headers: head.headers, body, raw, chunked: false });
                }
                Ok(None) => self.fill("an HTTP response")?,
                Err(e) => return Err(fail(format!("not a valid HTTP response ({e}): {}", show(buf)), Some(buf))),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::TcpListener;

    /// A one-connection server answering each read with `answer`.
    fn serve(answer: &'static [u8], echo: bool) -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut buf = [0u8; 8192];
            while let Ok(n) = s.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let out = if echo { &buf[..n] } else { answer };
                if s.write_all(out).is_err() {
                    break;
                }
            }
        });
        addr
    }

    const T: Duration = Duration::from_secs(5);

    #[test]
    fn exact_hello_passes() {
        let s = verify(serve(HELLO_RESPONSE, false), "hello", true, T).unwrap();
        assert_eq!(s.bytes, HELLO_RESPONSE);
    }

    #[test]
    fn wrong_bytes_fail_a_micro_contestant() {
        let wrong = b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello World?";
        let f = verify(serve(wrong, false), "hello", true, T).unwrap_err();
        assert!(f.reason.starts_with("wrong response to `hello`"), "{}", f.reason);
        assert!(f.reason.contains("Hello World?"), "{}", f.reason);
    }

    #[test]
    fn a_platform_contestant_may_add_headers() {
        let extra = b"HTTP/1.1 200 OK\r\nServer: x\r\nContent-Length: 12\r\n\r\nHello world!";
        assert!(verify(serve(extra, false), "hello", false, T).is_ok());
        assert!(verify(serve(extra, false), "hello", true, T).is_err());
        let wrong_body = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nHello";
        let f = verify(serve(wrong_body, false), "hello", false, T).unwrap_err();
        assert!(f.reason.contains("wrong body"), "{}", f.reason);
    }

    #[test]
    fn echo_comes_back() {
        assert_eq!(verify(serve(b"", true), "echo", true, T).unwrap().bytes.len(), ECHO_BYTES);
        let f = verify(serve(b"nope", false), "echo", true, Duration::from_millis(300));
        assert!(f.is_err());
    }
}
