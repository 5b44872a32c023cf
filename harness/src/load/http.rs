//! The load generator's response framer: httparse for the head; bodies by Content-Length or chunked
//! encoding, skipped by counting, or held against the body the workload expects. (Requests are rendered
//! by `wire::RequestTemplate`.)

use crate::wire::{Scenario, HELLO_RESPONSE};


/// Why a byte stream is not a valid HTTP response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FramingError {
    BadHead,
    HeadTooLarge,
    BadContentLength,
    BadChunk,
    /// Neither Content-Length nor chunked: the body could only end with the connection.
    NoLength,
}

/// What a valid answer must be, beyond a complete response with a 2xx status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// The status only (`--no-expect`).
    Status,
    /// These exact bytes, head and body (`hello` of micro contestants, which send no other header).
    Response(Vec<u8>),
    /// This exact body, whatever the headers (`hello` of platform servers, `plaintext`).
    Body(Vec<u8>),
    /// A JSON object that echoes the request's `sequence` (`json`). The framer keeps the body for the
    /// receiver, which checks its shape on every response and parses it on a sample.
    JsonSequence,
    /// A decimal body (`work`: the N asked; `counter`: a value never returned before for its key). The
    /// framer keeps the body for the receiver.
    Decimal,
}

impl Expect {
    /// What a scenario's answers must be. `exact` holds `hello` to the micro contestants' exact bytes;
    /// platform servers, which add headers, are held to the body.
    pub fn for_scenario(scenario: Scenario, exact: bool) -> Expect {
        match scenario.expected() {
            _ if exact && scenario.is_hello() => Expect::Response(HELLO_RESPONSE.to_vec()),
            _ if scenario == Scenario::Json => Expect::JsonSequence,
            _ if matches!(scenario, Scenario::Work | Scenario::Counter) => Expect::Decimal,
            Some(e) => Expect::Body(e.body.to_vec()),
            None => Expect::Status,
        }
    }
}

/// The longest `json` body kept for checking; a longer one is a mismatch.
pub const MAX_JSON_BODY: usize = 256;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Head,
    Body,
    /// Chunk sizes, CRLFs and trailers: part of the response, not of its body.
    Framing,
}

/// One complete response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Complete {
    pub status: u16,
    pub bytes: u64,
    /// The response (or its body) differs from what was expected.
    pub mismatch: bool,
    /// The server said `Connection: close`.
    pub close: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Head,
    Body { remaining: u64 },
    ChunkSize { value: u64, digits: u32, in_ext: bool, cr: bool },
    ChunkData { remaining: u64 },
    ChunkDataEnd { seen: u8 },
    Trailer { line_len: u32, cr: bool },
}

pub const MAX_HEAD_BYTES: usize = 64 * 1024;
const MAX_HEADERS: usize = 64;

/// Frames responses out of a byte stream fed in arbitrary pieces.
pub struct ResponseParser {
    phase: Phase,
    /// Head bytes carried over from an earlier read when a head is split across reads. Allocated at the
    /// first split and kept: most connections never split a head, and 20,000 of them would otherwise
    /// hold 20 MiB of empty carry space.
    carry: Vec<u8>,
    status: u16,
    close: bool,
    bytes: u64,
    body_bytes: u64,
    /// The body, kept only for `Expect::JsonSequence`.
    body: Vec<u8>,
    mismatch: bool,
}

impl Default for ResponseParser {
    fn default() -> Self {
        Self::new()
    }
}

impl ResponseParser {
    pub fn new() -> Self {
        ResponseParser {
            phase: Phase::Head,
            carry: Vec::new(),
            status: 0,
            close: false,
            bytes: 0,
            body_bytes: 0,
            body: Vec::new(),
            mismatch: false,
        }
    }

    pub fn reset(&mut self) {
        self.phase = Phase::Head;
        self.carry.clear();
        self.bytes = 0;
        self.body_bytes = 0;
        self.body.clear();
        self.mismatch = false;
    }

    /// True when no response has been partly received.
    pub fn idle(&self) -> bool {
        self.phase == Phase::Head && self.carry.is_empty()
    }

    /// Holds `piece`, a part of the response, against `expect`.
    #[inline]
    fn check(&mut self, expect: &Expect, piece: &[u8], part: Part) {
        match expect {
            Expect::Response(e) => self.compare(e, self.bytes, piece),
            Expect::Body(e) if part == Part::Body => self.compare(e, self.body_bytes, piece),
            Expect::JsonSequence | Expect::Decimal if part == Part::Body => {
                if self.body.len() + piece.len() <= MAX_JSON_BODY {
                    self.body.extend_from_slice(piece);
                } else {
                    self.mismatch = true;
                }
            }
            _ => {}
        }
        self.bytes += piece.len() as u64;
        if part == Part::Body {
            self.body_bytes += piece.len() as u64;
        }
    }

    /// Compares `piece` with `expected` at offset `at`.
    #[inline]
    fn compare(&mut self, expected: &[u8], at: u64, piece: &[u8]) {
        let at = at as usize;
        if !self.mismatch && (at + piece.len() > expected.len() || &expected[at..at + piece.len()] != piece) {
            self.mismatch = true;
        }
    }

    fn finish(&mut self, expect: &Expect) -> Complete {
        let short = match expect {
            Expect::Response(e) => e.len() as u64 != self.bytes,
            Expect::Body(e) => e.len() as u64 != self.body_bytes,
            _ => false,
        };
        let done = Complete { status: self.status, bytes: self.bytes, mismatch: self.mismatch || short, close: self.close };
        self.phase = Phase::Head;
        done
    }

    /// Feeds bytes; calls `on_complete` for each response that completes, with its body when the
    /// expectation keeps it (else empty). Returns the first framing error, after which the stream cannot
    /// be trusted and the connection must be reopened.
    pub fn feed(&mut self, mut data: &[u8], expect: &Expect, mut on_complete: impl FnMut(Complete, &[u8])) -> Result<(), FramingError> {
        while !data.is_empty() {
            match self.phase {
                Phase::Head => {
                    let used = if self.carry.is_empty() {
                        match self.parse_head(data, expect)? {
                            Some(n) => n,
                            None => {
                                if data.len() > MAX_HEAD_BYTES {
                                    return Err(FramingError::HeadTooLarge);
                                }
                                self.carry.extend_from_slice(data);
                                return Ok(());
                            }
                        }
                    } else {
                        let before = self.carry.len();
                        let take = data.len().min(MAX_HEAD_BYTES + 1 - before.min(MAX_HEAD_BYTES));
                        self.carry.extend_from_slice(&data[..take]);
                        let carry = std::mem::take(&mut self.carry);
                        let parsed = self.parse_head(&carry, expect);
                        self.carry = carry;
                        match parsed? {
                            Some(n) => {
                                self.carry.clear();
                                n - before
                            }
                            None => {
                                if self.carry.len() > MAX_HEAD_BYTES {
                                    return Err(FramingError::HeadTooLarge);
                                }
                                return Ok(());
                            }
                        }
                    };
                    data = &data[used..];
                    if matches!(self.phase, Phase::Body { remaining: 0 }) {
                        on_complete(self.finish(expect), &self.body);
                    }
                }
                Phase::Body { remaining } => {
                    let n = (remaining as usize).min(data.len());
                    self.check(expect, &data[..n], Part::Body);
                    data = &data[n..];
                    if remaining as usize == n {
                        on_complete(self.finish(expect), &self.body);
                    } else {
                        self.phase = Phase::Body { remaining: remaining - n as u64 };
                    }
                }
                Phase::ChunkData { remaining } => {
                    let n = (remaining as usize).min(data.len());
                    self.check(expect, &data[..n], Part::Body);
                    data = &data[n..];
                    self.phase = if remaining as usize == n { Phase::ChunkDataEnd { seen: 0 } } else { Phase::ChunkData { remaining: remaining - n as u64 } };
                }
                _ => {
                    // Chunk framing lines are short: byte by byte keeps the state machine simple.
                    let b = data[0];
                    self.check(expect, &data[..1], Part::Framing);
                    data = &data[1..];
                    if self.chunk_byte(b)? {
                        on_complete(self.finish(expect), &self.body);
                    }
                }
            }
        }
        Ok(())
    }

    /// Parses a head at the start of `buf`. Some(n): complete, n bytes long, phase set for the body.
    fn parse_head(&mut self, buf: &[u8], expect: &Expect) -> Result<Option<usize>, FramingError> {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut resp = httparse::Response::new(&mut headers);
        let n = match resp.parse(buf) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) => return Ok(None),
            Err(_) => return Err(FramingError::BadHead),
        };
        let status = resp.code.unwrap_or(0);
        let mut length = None;
        let mut chunked = false;
        let mut close = false;
        for h in resp.headers.iter() {
            if h.name.eq_ignore_ascii_case("content-length") {
                let v = std::str::from_utf8(h.value).ok().and_then(|s| s.trim().parse::<u64>().ok());
                length = Some(v.ok_or(FramingError::BadContentLength)?);
            } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = h.value.windows(7).any(|w| w.eq_ignore_ascii_case(b"chunked"));
            } else if h.name.eq_ignore_ascii_case("connection") {
                close = h.value.eq_ignore_ascii_case(b"close");
            }
        }
        self.status = status;
        self.close = close || resp.version == Some(0);
        self.bytes = 0;
        self.body_bytes = 0;
        self.body.clear();
        self.mismatch = false;
        self.check(expect, &buf[..n], Part::Head);
        self.phase = if chunked {
            Phase::ChunkSize { value: 0, digits: 0, in_ext: false, cr: false }
        } else if let Some(len) = length {
            Phase::Body { remaining: len }
        } else if status / 100 == 1 || status == 204 || status == 304 {
            Phase::Body { remaining: 0 }
        } else {
            return Err(FramingError::NoLength);
        };
        Ok(Some(n))
    }

    /// One byte of chunk-size line, chunk-data CRLF or trailer. Returns true when the response completed.
    fn chunk_byte(&mut self, b: u8) -> Result<bool, FramingError> {
        match &mut self.phase {
            Phase::ChunkSize { value, digits, in_ext, cr } => {
                if *cr {
                    if b != b'\n' || *digits == 0 {
                        return Err(FramingError::BadChunk);
                    }
                    self.phase = if *value == 0 { Phase::Trailer { line_len: 0, cr: false } } else { Phase::ChunkData { remaining: *value } };
                } else if b == b'\r' {
                    *cr = true;
                } else if *in_ext || b == b';' {
                    *in_ext = true;
                } else {
                    let d = (b as char).to_digit(16).ok_or(FramingError::BadChunk)?;
                    if *digits >= 15 {
                        return Err(FramingError::BadChunk);
                    }
                    *value = *value * 16 + d as u64;
                    *digits += 1;
                }
            }
            Phase::ChunkDataEnd { seen } => {
                let want = if *seen == 0 { b'\r' } else { b'\n' };
                if b != want {
                    return Err(FramingError::BadChunk);
                }
                if *seen == 1 {
                    self.phase = Phase::ChunkSize { value: 0, digits: 0, in_ext: false, cr: false };
                } else {
                    *seen = 1;
                }
            }
            Phase::Trailer { line_len, cr } => {
                if *cr {
                    if b != b'\n' {
                        return Err(FramingError::BadChunk);
                    }
                    if *line_len == 0 {
                        return Ok(true);
                    }
                    *line_len = 0;
                    *cr = false;
                } else if b == b'\r' {
                    *cr = true;
                } else {
                    *line_len += 1;
                    if *line_len as usize > MAX_HEAD_BYTES {
                        return Err(FramingError::HeadTooLarge);
                    }
                }
            }
            _ => unreachable!("chunk_byte is called only in chunk framing phases"),
        }
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed_all(p: &mut ResponseParser, pieces: &[&[u8]], expect: &Expect) -> Result<Vec<Complete>, FramingError> {
        Ok(feed_bodies(p, pieces, expect)?.into_iter().map(|(c, _)| c).collect())
    }

    fn feed_bodies(p: &mut ResponseParser, pieces: &[&[u8]], expect: &Expect) -> Result<Vec<(Complete, Vec<u8>)>, FramingError> {
        let mut out = Vec::new();
        for piece in pieces {
            p.feed(piece, expect, |c, body| out.push((c, body.to_vec())))?;
        }
        Ok(out)
    }

    fn exact() -> Expect {
        Expect::Response(HELLO_RESPONSE.to_vec())
    }

    #[test]
    fn a_body_is_held_to_its_bytes_whatever_the_headers() {
        let body = Expect::Body(b"Hello, World!".to_vec());
        let with_headers = b"HTTP/1.1 200 OK\r\nServer: x\r\nContent-Length: 13\r\n\r\nHello, World!";
        let mut p = ResponseParser::new();
        assert!(!feed_all(&mut p, &[with_headers], &body).unwrap()[0].mismatch);
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nHello\r\n8\r\n, World!\r\n0\r\n\r\n";
        for split in 1..chunked.len() {
            let got = feed_all(&mut p, &[&chunked[..split], &chunked[split..]], &body).unwrap();
            assert!(!got[0].mismatch, "split at {split}");
        }
        let other = b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\nHello, world!";
        assert!(feed_all(&mut p, &[other], &body).unwrap()[0].mismatch);
        let short = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nHello";
        assert!(feed_all(&mut p, &[short], &body).unwrap()[0].mismatch);
        let longer = b"HTTP/1.1 200 OK\r\nContent-Length: 14\r\n\r\nHello, World!\n";
        assert!(feed_all(&mut p, &[longer], &body).unwrap()[0].mismatch);
    }

    #[test]
    fn a_json_body_is_handed_over_and_a_huge_one_is_a_mismatch() {
        let resp = b"HTTP/1.1 200 OK\r\nContent-Length: 14\r\n\r\n{\"sequence\":7}HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
        let mut p = ResponseParser::new();
        let got = feed_bodies(&mut p, &[resp], &Expect::JsonSequence).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].1, b"{\"sequence\":7}");
        assert_eq!(got[1].1, b"{}");
        let big = format!("HTTP/1.1 200 OK\r\nContent-Length: {n}\r\n\r\n{}", " ".repeat(MAX_JSON_BODY + 1), n = MAX_JSON_BODY + 1);
        assert!(feed_all(&mut p, &[big.as_bytes()], &Expect::JsonSequence).unwrap()[0].mismatch);
    }

    #[test]
    fn hello_in_one_piece_and_byte_by_byte() {
        let mut p = ResponseParser::new();
        let got = feed_all(&mut p, &[HELLO_RESPONSE], &exact()).unwrap();
        assert_eq!(got, vec![Complete { status: 200, bytes: 51, mismatch: false, close: false }]);
        let bytes: Vec<&[u8]> = HELLO_RESPONSE.chunks(1).collect();
        let got = feed_all(&mut p, &bytes, &exact()).unwrap();
        assert_eq!(got.len(), 1);
        assert!(!got[0].mismatch);
    }

    #[test]
    fn many_responses_in_one_read() {
        let many = HELLO_RESPONSE.repeat(100);
        let mut p = ResponseParser::new();
        let got = feed_all(&mut p, &[&many], &exact()).unwrap();
        assert_eq!(got.len(), 100);
        assert!(got.iter().all(|c| !c.mismatch && c.status == 200));
        assert!(p.idle());
    }

    #[test]
    fn detects_wrong_bytes_of_the_right_length_and_of_another_length() {
        let wrong = b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello World!";
        let mut p = ResponseParser::new();
        assert!(feed_all(&mut p, &[wrong], &exact()).unwrap()[0].mismatch);
        let longer = b"HTTP/1.1 200 OK\r\nServer: x\r\nContent-Length: 12\r\n\r\nHello world!";
        assert!(feed_all(&mut p, &[longer], &exact()).unwrap()[0].mismatch);
        assert!(!feed_all(&mut p, &[longer], &Expect::Status).unwrap()[0].mismatch);
    }

    #[test]
    fn chunked_bodies_split_anywhere() {
        let resp = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nHello\r\n7\r\n, World\r\n0\r\nX-Trailer: 1\r\n\r\n";
        for split in 1..resp.len() {
            let mut p = ResponseParser::new();
            let got = feed_all(&mut p, &[&resp[..split], &resp[split..]], &Expect::Status).unwrap();
            assert_eq!(got.len(), 1, "split at {split}");
            assert_eq!(got[0].bytes, resp.len() as u64);
        }
    }

    #[test]
    fn garbage_is_a_framing_error() {
        let mut p = ResponseParser::new();
        assert_eq!(feed_all(&mut p, &[b"SSH-2.0-OpenSSH\r\n\r\n"], &Expect::Status), Err(FramingError::BadHead));
        let mut p = ResponseParser::new();
        assert_eq!(feed_all(&mut p, &[b"HTTP/1.1 200 OK\r\n\r\n"], &Expect::Status), Err(FramingError::NoLength));
        let mut p = ResponseParser::new();
        assert_eq!(feed_all(&mut p, &[b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"], &Expect::Status), Err(FramingError::BadChunk));
        let mut p = ResponseParser::new();
        let huge = vec![b'a'; MAX_HEAD_BYTES + 10];
        let head = [b"HTTP/1.1 200 OK\r\nX: ".as_slice(), &huge].concat();
        assert_eq!(feed_all(&mut p, &[&head[..100], &head[100..]], &Expect::Status), Err(FramingError::HeadTooLarge));
    }

    #[test]
    fn status_and_close_are_reported() {
        let mut p = ResponseParser::new();
        let got = feed_all(&mut p, &[b"HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"], &Expect::Status).unwrap();
        assert_eq!(got[0].status, 404);
        assert!(got[0].close);
    }
}
