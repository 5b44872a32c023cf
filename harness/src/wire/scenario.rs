//! The scenarios of DESIGN.md's wire contract: each one's name (the only place the names are written),
//! the request a client sends, and the answer a server must give.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::request::HttpRequest;

/// The response of the `hello` scenario, byte for byte.
pub const HELLO_RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello world!";
pub const HELLO_BODY: &[u8] = b"Hello world!";
pub const PLAINTEXT_BODY: &[u8] = b"Hello, World!";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
#[value(rename_all = "kebab-case")]
pub enum Scenario {
    Hello,
    HelloTimeout,
    Plaintext,
    Json,
    Echo,
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
    pub const ALL: [Scenario; 5] = [Scenario::Hello, Scenario::HelloTimeout, Scenario::Plaintext, Scenario::Json, Scenario::Echo];
    /// The names, in the order of `ALL`; manifests, `--scenario` and run.json use them.
    pub const NAMES: &'static [&'static str] = &["hello", "hello-timeout", "plaintext", "json", "echo"];

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
    /// /ping with `{"sequence": N}`; None for `echo`, which is not HTTP.
    pub fn request(self) -> Option<HttpRequest> {
        match self {
            Scenario::Hello | Scenario::HelloTimeout => Some(HttpRequest::get("/")),
            Scenario::Plaintext => Some(HttpRequest::get("/plaintext")),
            Scenario::Json => Some(HttpRequest {
                method: "POST".into(),
                headers: vec![("Content-Type".into(), "application/json".into())],
                json_sequence: true,
                ..HttpRequest::get("/ping")
            }),
            Scenario::Echo => None,
        }
    }

    /// What every answer must carry (`json` must also echo the sequence it was sent); None for `echo`.
    pub fn expected(self) -> Option<Expected> {
        match self {
            Scenario::Hello | Scenario::HelloTimeout => Some(Expected { status: 200, body: HELLO_BODY, content_type: None }),
            Scenario::Plaintext => Some(Expected { status: 200, body: PLAINTEXT_BODY, content_type: Some("text/plain") }),
            Scenario::Json => Some(Expected { status: 200, body: &[], content_type: Some("application/json") }),
            Scenario::Echo => None,
        }
    }
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
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
}
