//! The scenarios of DESIGN.md's wire contract: each one's name (the only place the names are written),
//! the request a client sends, and the answer a server must give.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::request::HttpRequest;

/// The response of the `hello` scenario, byte for byte.
pub const HELLO_RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello world!";
pub const HELLO_BODY: &[u8] = b"Hello world!";
pub const PLAINTEXT_BODY: &[u8] = b"Hello, World!";

/// `work`: the microseconds a request asks the server to busy-wait when nothing else is said.
pub const DEFAULT_WORK_US: u64 = 100;
/// The answer's body to `GET /work/<DEFAULT_WORK_US>`.
pub const DEFAULT_WORK_BODY: &[u8] = b"100";
/// `work`: the most a request may ask; more is a bad request (400).
pub const MAX_WORK_US: u64 = 1_000_000;
/// `counter`: how many counters a server holds (keys 0 to COUNTER_KEYS - 1); another key is a bad request.
pub const COUNTER_KEYS: u32 = 65_536;

/// `GET /work/<us>`: busy-wait `us` microseconds, answer the decimal `us`.
pub fn work_path(us: u64) -> String {
    format!("/work/{us}")
}

/// `GET /counter/<key>`: increment counter `key`, answer its new value.
pub fn counter_path(key: u32) -> String {
    format!("/counter/{key}")
}

/// The answer of a micro contestant to `work` or `counter`: a status line, one Content-Length, the decimal.
pub fn decimal_response(value: u64) -> Vec<u8> {
    let body = value.to_string();
    format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

/// The body of a 200 answer to `work` or `counter`: a decimal, nothing else.
pub fn parse_decimal(body: &[u8]) -> Option<u64> {
    if body.is_empty() || body.len() > 19 || !body.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(body).ok()?.parse().ok()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
#[value(rename_all = "kebab-case")]
pub enum Scenario {
    Hello,
    HelloTimeout,
    Plaintext,
    Json,
    Echo,
    Work,
    Counter,
    File,
}

/// What an HTTP answer must carry: its status, its body (any when empty) and the start of its
/// Content-Type (any when None).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expected {
    pub status: u16,
    pub body: &'static [u8],
    pub content_type: Option<&'static str>,
}

impl Scenario {
    pub const ALL: [Scenario; 8] = [
        Scenario::Hello,
        Scenario::HelloTimeout,
        Scenario::Plaintext,
        Scenario::Json,
        Scenario::Echo,
        Scenario::Work,
        Scenario::Counter,
        Scenario::File,
    ];
    /// The names, in the order of `ALL`; manifests, `--scenario` and run.json use them.
    pub const NAMES: &'static [&'static str] = &["hello", "hello-timeout", "plaintext", "json", "echo", "work", "counter", "file"];

    pub fn parse(name: &str) -> Option<Scenario> {
        Scenario::ALL.into_iter().find(|s| s.name() == name)
    }
    pub fn name(self) -> &'static str {
        Scenario::NAMES[self as usize]
    }
    pub fn is_http(self) -> bool {
        self != Scenario::Echo
    }
    /// Whether bytes per second is this scenario's headline figure (a byte stream, not requests).
    pub fn streams_bytes(self) -> bool {
        !self.is_http()
    }
    pub fn is_hello(self) -> bool {
        matches!(self, Scenario::Hello | Scenario::HelloTimeout)
    }

    /// The request a client sends: `hello`/`hello-timeout` GET /, `plaintext` GET /plaintext, `json` POST
    /// /ping with `{"sequence": N}`, `work` GET /work/<N> (here the default N, DEFAULT_WORK_US; the load
    /// generator varies it, see `wire::Mix`), `counter` GET /counter/<k> (here key 0), `file` GET /file/4k;
    /// None for `echo`,
    /// which is not HTTP.
    pub fn request(self) -> Option<HttpRequest> {
        match self {
            Scenario::Hello | Scenario::HelloTimeout => Some(HttpRequest::get("/")),
            Scenario::Plaintext => Some(HttpRequest::get("/plaintext")),
            Scenario::Json => Some(HttpRequest::json_ping()),
            Scenario::Work => Some(HttpRequest::get(&work_path(DEFAULT_WORK_US))),
            Scenario::Counter => Some(HttpRequest::get(&counter_path(0))),
            Scenario::File => Some(HttpRequest::get(super::FILE_PATH)),
            Scenario::Echo => None,
        }
    }

    /// What every answer must carry (`json` must also echo the sequence it was sent, `work` the N it was
    /// asked, `counter` a value never returned before for its key: their bodies are checked by who sends
    /// them); None for `echo`.
    pub fn expected(self) -> Option<Expected> {
        match self {
            Scenario::Hello | Scenario::HelloTimeout => Some(Expected { status: 200, body: HELLO_BODY, content_type: None }),
            Scenario::Plaintext => Some(Expected { status: 200, body: PLAINTEXT_BODY, content_type: Some("text/plain") }),
            Scenario::Json => Some(Expected { status: 200, body: &[], content_type: Some("application/json") }),
            Scenario::Work => Some(Expected { status: 200, body: DEFAULT_WORK_BODY, content_type: None }),
            Scenario::Counter => Some(Expected { status: 200, body: &[], content_type: None }),
            Scenario::File => Some(Expected { status: 200, body: &super::FILE_4K, content_type: None }),
            Scenario::Echo => None,
        }
    }
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl HttpRequest {
    /// The request a scenario sends, by the scenario's name (see `Scenario::request`).
    pub fn for_scenario(scenario: &str) -> Option<Self> {
        Scenario::parse(scenario)?.request()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    #[test]
    fn names_parse_back_and_match_serde_and_clap() {
        for s in Scenario::ALL {
            assert_eq!(Scenario::parse(s.name()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.name());
            assert_eq!(s.to_possible_value().unwrap().get_name(), s.name());
        }
        assert_eq!(Scenario::parse("nope"), None);
    }

    #[test]
    fn work_and_counter_paths_and_answers() {
        assert_eq!(DEFAULT_WORK_BODY, DEFAULT_WORK_US.to_string().as_bytes());
        assert_eq!(Scenario::Work.request().unwrap().path, "/work/100");
        assert_eq!(Scenario::Counter.request().unwrap().path, "/counter/0");
        assert_eq!(parse_decimal(b"0"), Some(0));
        assert_eq!(parse_decimal(b"18446744073709551"), Some(18446744073709551));
        for bad in [&b""[..], b"-1", b"1 ", b"+1", b"12345678901234567890", b"x"] {
            assert_eq!(parse_decimal(bad), None, "{bad:?}");
        }
    }
}
