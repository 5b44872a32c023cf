//! Verification before measuring: the server answers its scenario correctly, or it is not measured.
//! Micro contestants must answer `hello` byte for byte; platform ones with a valid HTTP 200 and the right
//! body; `echo` must send every byte back in order.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use crate::load::{HttpRequest, HELLO_RESPONSE};

const ECHO_BYTES: usize = 4096;
const SHOWN_BYTES: usize = 160;

/// What the server sent: one response (HTTP) or the echoed bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub bytes: Vec<u8>,
}

/// Why verification failed, with what was received when there was anything.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub reason: String,
    pub sample: Option<Vec<u8>>,
}

fn fail(reason: impl Into<String>, sample: Option<&[u8]>) -> Failure {
    Failure { reason: reason.into(), sample: sample.map(<[u8]>::to_vec) }
}

/// Checks one scenario against a listening server.
pub fn verify(addr: SocketAddr, scenario: &str, micro: bool, timeout: Duration) -> Result<Sample, Failure> {
    let mut conn = Conn::open(addr, timeout)?;
    match scenario {
        "hello" | "hello-timeout" => {
            let request = render(&HttpRequest::for_scenario(scenario).expect("known scenario"));
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
                r.expect(200, b"Hello world!", None)?;
                first.get_or_insert(r.raw);
            }
            Ok(Sample { bytes: first.unwrap_or_default() })
        }
        "plaintext" => {
            let request = render(&HttpRequest::for_scenario("plaintext").expect("known scenario"));
            // Two pipelined requests must come back in order.
            conn.send(&[request.clone(), request].concat())?;
            let first = conn.response()?;
            first.expect(200, b"Hello, World!", Some("text/plain"))?;
            if first.header("date").is_none() {
                return Err(fail("response to `plaintext` has no Date header", Some(&first.raw)));
            }
            conn.response()?.expect(200, b"Hello, World!", Some("text/plain"))?;
            conn.send(&render(&HttpRequest::get("/no-such-path")))?;
            let missing = conn.response()?;
            if missing.status != 404 {
                return Err(fail(format!("GET /no-such-path answered {}, not 404", missing.status), Some(&missing.raw)));
            }
            Ok(Sample { bytes: first.raw })
        }
        "json" => {
            let mut first = None;
            for n in [17, 18] {
                let mut request = HttpRequest::for_scenario("json").expect("known scenario");
                request.body = format!("{{\"sequence\": {n}}}").into_bytes();
                conn.send(&render(&request))?;
                let r = conn.response()?;
                r.expect(200, &[], Some("application/json"))?;
                let got: Option<i64> = serde_json::from_slice::<serde_json::Value>(&r.body)
                    .ok()
                    .and_then(|v| v.get("sequence").and_then(|s| s.as_i64()));
                if got != Some(n) {
                    return Err(fail(
                        format!("POST /ping with {{\"sequence\": {n}}} answered the body {}", show(&r.body)),
                        Some(&r.raw),
                    ));
                }
                first.get_or_insert(r.raw);
            }
            Ok(Sample { bytes: first.unwrap_or_default() })
        }
        "echo" => {
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
        other => Err(fail(format!("no verification for scenario `{other}`"), None)),
    }
}

/// Pseudo-random bytes (xorshift), the same every time.
fn pattern(n: usize) -> Vec<u8> {
    let mut x: u32 = 0x9e37_79b9;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

/// The bytes of a request as the load generator sends them.
pub fn render(r: &HttpRequest) -> Vec<u8> {
    let mut out = format!("{} {} HTTP/1.1\r\nHost: {}\r\n", r.method, r.path, r.host);
    for (k, v) in &r.headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    if !r.body.is_empty() || r.method == "POST" {
        out.push_str(&format!("Content-Length: {}\r\n", r.body.len()));
    }
    out.push_str("\r\n");
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(&r.body);
    bytes
}

/// Bytes shown in a message: escaped, quoted, cut at a readable length.
pub fn show(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(SHOWN_BYTES)];
    let more = if bytes.len() > SHOWN_BYTES { "..." } else { "" };
    format!("\"{}\"{more}", cut.escape_ascii())
}

struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

struct Response {
    raw: Vec<u8>,
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// Status, body (when `body` is not empty) and content type prefix.
    fn expect(&self, status: u16, body: &[u8], content_type: Option<&str>) -> Result<(), Failure> {
        if self.status != status {
            return Err(fail(format!("answered status {} instead of {status}: {}", self.status, show(&self.raw)), Some(&self.raw)));
        }
        if !body.is_empty() && self.body != body {
            return Err(fail(format!("wrong body: expected {}, got {}", show(body), show(&self.body)), Some(&self.raw)));
        }
        if let Some(ct) = content_type {
            if !self.header("content-type").is_some_and(|v| v.to_ascii_lowercase().starts_with(ct)) {
                return Err(fail(format!("Content-Type is not {ct}: {}", show(&self.raw)), Some(&self.raw)));
            }
        }
        Ok(())
    }
}

impl Conn {
    fn open(addr: SocketAddr, timeout: Duration) -> Result<Conn, Failure> {
        let stream =
            TcpStream::connect_timeout(&addr, timeout).map_err(|e| fail(format!("cannot connect to {addr}: {e}"), None))?;
        stream.set_read_timeout(Some(timeout)).ok();
        stream.set_write_timeout(Some(timeout)).ok();
        stream.set_nodelay(true).ok();
        Ok(Conn { stream, buf: Vec::new() })
    }

    fn send(&mut self, bytes: &[u8]) -> Result<(), Failure> {
        self.stream.write_all(bytes).map_err(|e| fail(format!("sending the request failed: {e}"), None))
    }

    /// Reads more bytes into the buffer; an error names what was expected.
    fn fill(&mut self, wanted: &str) -> Result<(), Failure> {
        let mut chunk = [0u8; 16 * 1024];
        match self.stream.read(&mut chunk) {
            Ok(0) => Err(fail(
                format!("the server closed the connection while {wanted} was expected (received so far: {})", show(&self.buf)),
                Some(&self.buf),
            )),
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                Ok(())
            }
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => Err(fail(
                format!("no complete {wanted} before the timeout (received so far: {})", show(&self.buf)),
                Some(&self.buf),
            )),
            Err(e) => Err(fail(format!("reading {wanted} failed: {e}"), Some(&self.buf))),
        }
    }

    fn exactly(&mut self, n: usize) -> Result<Vec<u8>, Failure> {
        while self.buf.len() < n {
            self.fill(&format!("{n} echoed bytes"))?;
        }
        Ok(self.buf.drain(..n).collect())
    }

    /// One HTTP/1.1 response framed by Content-Length.
    fn response(&mut self) -> Result<Response, Failure> {
        loop {
            let mut headers = [httparse::EMPTY_HEADER; 64];
            let mut parsed = httparse::Response::new(&mut headers);
            match parsed.parse(&self.buf) {
                Ok(httparse::Status::Complete(head_len)) => {
                    let status = parsed.code.unwrap_or(0);
                    let headers: Vec<(String, String)> = parsed
                        .headers
                        .iter()
                        .map(|h| (h.name.to_string(), String::from_utf8_lossy(h.value).trim().to_string()))
                        .collect();
                    let find = |n: &str| headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(n)).map(|(_, v)| v.clone());
                    if find("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked")) {
                        return Err(fail(
                            "the response is chunked; the benchmark frames responses by Content-Length, so the server must send one",
                            Some(&self.buf),
                        ));
                    }
                    let Some(len) = find("content-length").and_then(|v| v.parse::<usize>().ok()) else {
                        return Err(fail(
                            format!("the response has no valid Content-Length header: {}", show(&self.buf)),
                            Some(&self.buf),
                        ));
                    };
                    while self.buf.len() < head_len + len {
                        self.fill("the response body")?;
                    }
                    let raw: Vec<u8> = self.buf.drain(..head_len + len).collect();
                    let body = raw[head_len..].to_vec();
                    return Ok(Response { raw, status, headers, body });
                }
                Ok(httparse::Status::Partial) => self.fill("an HTTP response")?,
                Err(e) => {
                    return Err(fail(format!("not a valid HTTP response ({e}): {}", show(&self.buf)), Some(&self.buf)));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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

    #[test]
    fn renders_requests_like_the_load_generator() {
        assert_eq!(render(&HttpRequest::get("/")), b"GET / HTTP/1.1\r\nHost: bench\r\n\r\n");
        let mut j = HttpRequest::for_scenario("json").unwrap();
        j.body = b"{}".to_vec();
        assert_eq!(
            String::from_utf8(render(&j)).unwrap(),
            "POST /ping HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
        );
    }
}
