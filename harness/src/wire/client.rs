//! The one blocking client: connections with deadlines, whole HTTP/1.1 responses with their exact bytes,
//! closes told apart from timeouts. The checks use all of it; verification reads through `fill` and
//! `parse_head` and words its own failures.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// Why an exchange failed, in words for a verdict: what was sent or seen and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct WireError(pub String);

/// The error of a read that found the connection closed before any byte of an answer.
pub const CLOSED_WITHOUT_ANSWER: &str = "the server closed the connection without answering";

/// One client connection. Every wait is bounded by `timeout` (or by the deadline a call takes).
pub struct Conn {
    pub stream: TcpStream,
    /// Bytes read but not yet handed out (the start of the next response).
    buf: Vec<u8>,
    pub timeout: Duration,
}

/// One HTTP response as it came over the wire.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    pub minor_version: u8,
    pub headers: Vec<(String, String)>,
    /// The decoded body (chunked encoding removed).
    pub body: Vec<u8>,
    /// Head and body exactly as received.
    pub raw: Vec<u8>,
    pub chunked: bool,
}

impl Response {
    /// The first header of that name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
    pub fn header_count(&self, name: &str) -> usize {
        self.headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case(name)).count()
    }
    /// Whether the server said it will close the connection after this response.
    pub fn closes(&self) -> bool {
        let close = self.header("connection").is_some_and(|v| v.to_ascii_lowercase().contains("close"));
        close || (self.minor_version == 0 && !self.header("connection").is_some_and(|v| v.eq_ignore_ascii_case("keep-alive")))
    }
    /// `200 text/plain 13 B` style summary for messages.
    pub fn brief(&self) -> String {
        format!("status {} with {} bytes ({})", self.status, self.raw.len(), show(&self.raw, 120))
    }
}

/// How a wait for the server to close ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Closed {
    /// End of stream (FIN) after this long.
    Fin(Duration),
    /// Connection reset after this long.
    Reset(Duration),
    /// Still open when the wait ended.
    Open,
    /// The server sent bytes instead of closing.
    Data(Vec<u8>),
}

impl Conn {
    pub fn open(addr: SocketAddr, timeout: Duration) -> Result<Conn, WireError> {
        let stream = TcpStream::connect_timeout(&addr, timeout).map_err(|e| WireError(format!("cannot connect to {addr}: {e}")))?;
        stream.set_nodelay(true).map_err(|e| WireError(e.to_string()))?;
        stream.set_write_timeout(Some(timeout)).map_err(|e| WireError(e.to_string()))?;
        Ok(Conn { stream, buf: Vec::new(), timeout })
    }

    pub fn send(&mut self, bytes: &[u8]) -> Result<(), WireError> {
        self.stream.write_all(bytes).map_err(|e| match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => format!("the server took none of {} bytes within {:?}", bytes.len(), self.timeout),
            _ => format!("write failed: {e}"),
        })
        .map_err(WireError)
    }

    pub fn shutdown_write(&self) -> Result<(), WireError> {
        self.stream.shutdown(Shutdown::Write).map_err(|e| WireError(format!("shutdown(SHUT_WR) failed: {e}")))
    }

    /// Closes with a reset (SO_LINGER 0) instead of a FIN.
    pub fn reset(self) {
        set_linger_zero(self.stream.as_raw_fd());
        drop(self);
    }

    /// Bytes read but not yet handed out.
    pub fn buffered(&self) -> &[u8] {
        &self.buf
    }

    /// Hands out the first `n` buffered bytes.
    pub fn take(&mut self, n: usize) -> Vec<u8> {
        self.buf.drain(..n).collect()
    }

    /// Reads more bytes into the buffer before `deadline`. Ok(0) is end of stream.
    pub fn fill(&mut self, deadline: Instant) -> io::Result<usize> {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "deadline"));
        }
        self.stream.set_read_timeout(Some(left))?;
        let mut chunk = [0u8; 16 * 1024];
        let n = self.stream.read(&mut chunk)?;
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(n)
    }

    /// Reads exactly `n` bytes.
    pub fn read_exact(&mut self, n: usize) -> Result<Vec<u8>, WireError> {
        let deadline = Instant::now() + self.timeout;
        while self.buf.len() < n {
            match self.fill(deadline) {
                Ok(0) => return Err(WireError(format!("the server closed the connection after {} of {n} bytes ({})", self.buf.len(), show(&self.buf, 80)))),
                Ok(_) => {}
                Err(e) => return Err(read_error(&e, self.timeout, &self.buf)),
            }
        }
        Ok(self.buf.drain(..n).collect())
    }

    /// Reads one whole response: the head with httparse, then the body by Content-Length, chunked
    /// encoding, or until the server closes.
    pub fn read_response(&mut self) -> Result<Response, WireError> {
        let deadline = Instant::now() + self.timeout;
        loop {
            match parse_response(&self.buf) {
                Ok(Some((resp, used))) => {
                    self.buf.drain(..used);
                    return Ok(resp);
                }
                Ok(None) => {}
                Err(e) => return Err(e),
            }
            match self.fill(deadline) {
                Ok(0) => {
                    if let Some(resp) = until_close_response(&self.buf)? {
                        self.buf.clear();
                        return Ok(resp);
                    }
                    return Err(WireError(if self.buf.is_empty() {
                        CLOSED_WITHOUT_ANSWER.to_string()
                    } else {
                        format!("the server closed the connection in the middle of a response: {}", show(&self.buf, 120))
                    }));
                }
                Ok(_) => {}
                Err(e) => return Err(read_error(&e, self.timeout, &self.buf)),
            }
        }
    }

    /// Whether any byte arrives within `wait` (used to catch answers nobody asked for).
    pub fn extra_bytes(&mut self, wait: Duration) -> Vec<u8> {
        let deadline = Instant::now() + wait;
        while let Ok(n) = self.fill(deadline) {
            if n == 0 {
                break;
            }
        }
        std::mem::take(&mut self.buf)
    }

    /// Waits up to `bound` for the server to close, reading nothing but the close. `since` is when the
    /// clock of the close started (the durations in `Closed` are measured from it).
    pub fn wait_close(&mut self, since: Instant, bound: Duration) -> Closed {
        let deadline = since + bound;
        if !self.buf.is_empty() {
            return Closed::Data(std::mem::take(&mut self.buf));
        }
        match self.fill(deadline) {
            Ok(0) => Closed::Fin(since.elapsed()),
            Ok(_) => Closed::Data(std::mem::take(&mut self.buf)),
            Err(e) if is_timeout(&e) => Closed::Open,
            Err(_) => Closed::Reset(since.elapsed()),
        }
    }

    /// Reads and drops everything until the server closes or `deadline`; returns the bytes and whether it closed.
    pub fn drain_until_close(&mut self, deadline: Instant) -> (Vec<u8>, bool) {
        loop {
            match self.fill(deadline) {
                Ok(0) => return (std::mem::take(&mut self.buf), true),
                Ok(_) => {}
                Err(e) => return (std::mem::take(&mut self.buf), !is_timeout(&e)),
            }
        }
    }
}

pub fn is_timeout(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut)
}

fn read_error(e: &io::Error, timeout: Duration, so_far: &[u8]) -> WireError {
    WireError(if is_timeout(e) {
        if so_far.is_empty() {
            format!("no answer within {timeout:?}")
        } else {
            format!("an incomplete answer after {timeout:?}: {}", show(so_far, 120))
        }
    } else {
        format!("read failed: {e}")
    })
}

/// Parses a complete response at the start of `buf`; Ok(None) when more bytes are needed. A response
/// without a length (framed by the close) is also Ok(None) here.
pub fn parse_response(buf: &[u8]) -> Result<Option<(Response, usize)>, WireError> {
    let Head { status, minor_version, headers, len: head_len } = match parse_head(buf) {
        Ok(Some(head)) => head,
        Ok(None) => return Ok(None),
        Err(e) => return Err(WireError(format!("not a valid HTTP response ({e}): {}", show(buf, 120)))),
    };
    let mut resp = Response { status, minor_version, headers, body: Vec::new(), raw: Vec::new(), chunked: false };
    let no_body = status / 100 == 1 || status == 204 || status == 304;
    let te_chunked = resp.header("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    let end = if no_body {
        head_len
    } else if te_chunked {
        resp.chunked = true;
        match decode_chunked(&buf[head_len..])? {
            Some((body, used)) => {
                resp.body = body;
                head_len + used
            }
            None => return Ok(None),
        }
    } else if let Some(v) = resp.header("content-length") {
        let len: usize = v.parse().map_err(|_| WireError(format!("Content-Length is not a number: {v:?}")))?;
        if buf.len() < head_len + len {
            return Ok(None);
        }
        resp.body = buf[head_len..head_len + len].to_vec();
        head_len + len
    } else {
        return Ok(None);
    };
    resp.raw = buf[..end].to_vec();
    Ok(Some((resp, end)))
}

/// The head of a response: status line and headers, and how many bytes it takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    pub status: u16,
    pub minor_version: u8,
    pub headers: Vec<(String, String)>,
    pub len: usize,
}

/// Parses the head at the start of `buf` (httparse, up to 64 headers); Ok(None) when more bytes are needed.
pub fn parse_head(buf: &[u8]) -> Result<Option<Head>, httparse::Error> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut parsed = httparse::Response::new(&mut headers);
    Ok(match parsed.parse(buf)? {
        httparse::Status::Complete(len) => Some(Head {
            status: parsed.code.unwrap_or(0),
            minor_version: parsed.version.unwrap_or(1),
            headers: parsed
                .headers
                .iter()
                .map(|h| (h.name.to_string(), String::from_utf8_lossy(h.value).trim().to_string()))
                .collect(),
            len,
        }),
        httparse::Status::Partial => None,
    })
}

/// A response framed by the close of the connection (no Content-Length, not chunked), once closed.
fn until_close_response(buf: &[u8]) -> Result<Option<Response>, WireError> {
    let Ok(Some(head)) = parse_head(buf) else { return Ok(None) };
    let has_length = head.headers.iter().any(|(name, _)| {
        name.eq_ignore_ascii_case("content-length") || name.eq_ignore_ascii_case("transfer-encoding")
    });
    if has_length {
        return Ok(None);
    }
    Ok(Some(Response {
        status: head.status,
        minor_version: head.minor_version,
        headers: head.headers,
        body: buf[head.len..].to_vec(),
        raw: buf.to_vec(),
        chunked: false,
    }))
}

/// Decodes a chunked body at the start of `buf`: Some((body, bytes used)) once the last chunk and the
/// trailers are in.
fn decode_chunked(buf: &[u8]) -> Result<Option<(Vec<u8>, usize)>, WireError> {
    let mut body = Vec::new();
    let mut at = 0;
    loop {
        let Some(line_end) = find(&buf[at..], b"\r\n") else { return Ok(None) };
        let line = std::str::from_utf8(&buf[at..at + line_end]).map_err(|_| WireError("a chunk size line is not text".to_string()))?;
        let size_text = line.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16).map_err(|_| WireError(format!("bad chunk size {size_text:?}")))?;
        at += line_end + 2;
        if size == 0 {
            // Trailers end with an empty line.
            loop {
                let Some(end) = find(&buf[at..], b"\r\n") else { return Ok(None) };
                at += end + 2;
                if end == 0 {
                    return Ok(Some((body, at)));
                }
            }
        }
        if buf.len() < at + size + 2 {
            return Ok(None);
        }
        body.extend_from_slice(&buf[at..at + size]);
        if &buf[at + size..at + size + 2] != b"\r\n" {
            return Err(WireError("a chunk is not followed by CRLF".into()));
        }
        at += size + 2;
    }
}

pub fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Bytes shown in a message: printable ASCII as is, the rest escaped, cut at `max` bytes.
pub fn show(bytes: &[u8], max: usize) -> String {
    let mut out = String::from("\"");
    for &b in bytes.iter().take(max) {
        match b {
            b'\r' => out.push_str("\\r"),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('"');
    if bytes.len() > max {
        out.push_str(&format!("... ({} bytes)", bytes.len()));
    }
    out
}

/// Makes the close of `fd` a reset (SO_LINGER 0) instead of a FIN.
pub fn set_linger_zero(fd: std::os::fd::RawFd) {
    let linger = libc::linger { l_onoff: 1, l_linger: 0 };
    let len = std::mem::size_of::<libc::linger>() as libc::socklen_t;
    // SAFETY: the pointer and length describe the live `linger`, which the kernel only reads.
    unsafe { libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_LINGER, (&linger as *const libc::linger).cast(), len) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_content_length_chunked_and_partial_responses() {
        let r = b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello world!HTTP/1.1";
        let (resp, used) = parse_response(r).unwrap().unwrap();
        assert_eq!((resp.status, used, &resp.body[..]), (200, 51, &b"Hello world!"[..]));
        assert_eq!(resp.raw, &r[..51]);
        assert!(parse_response(&r[..50]).unwrap().is_none());

        let c = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nHello\r\n1;x=y\r\n!\r\n0\r\n\r\n";
        let (resp, used) = parse_response(c).unwrap().unwrap();
        assert_eq!((resp.body.as_slice(), used, resp.chunked), (&b"Hello!"[..], c.len(), true));
        assert!(parse_response(&c[..c.len() - 1]).unwrap().is_none());
        assert!(parse_response(b"HTTX/1.1 200 OK\r\n\r\n").is_err());
    }

    #[test]
    fn shown_bytes_are_escaped_and_cut() {
        assert_eq!(show(b"a\r\n\x00", 10), "\"a\\r\\n\\x00\"");
        assert_eq!(show(b"abcdef", 3), "\"abc\"... (6 bytes)");
    }
}
