//! What every Rust contestant shares: the command line `<server> <scenario> <host> <port> <workers>`,
//! the `SB_TIMEOUT_MS` limit of `hello-timeout`, the `hello` response, and (module `requests`) the
//! parsing and answers of the raw contestants' `work` and `counter` scenarios.

pub mod requests;

use std::time::Duration;
use std::{env, process};

pub use requests::{Requests, Route};

pub const HELLO: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello world!";

pub struct Args {
    pub scenario: String,
    pub host: String,
    pub port: u16,
    pub workers: usize,
}

/// Reads the command line. A scenario outside `scenarios`, or a malformed argument, exits with status 2.
pub fn parse(scenarios: &[&str]) -> Args {
    let a: Vec<String> = env::args().collect();
    let usage = || -> Args {
        eprintln!("usage: {} <{}> <host> <port> <workers>", a[0], scenarios.join("|"));
        process::exit(2)
    };
    if a.len() != 5 {
        return usage();
    }
    if !scenarios.contains(&a[1].as_str()) {
        eprintln!("unsupported scenario: {}", a[1]);
        process::exit(2);
    }
    match (a[3].parse(), a[4].parse()) {
        (Ok(port), Ok(workers)) => Args { scenario: a[1].clone(), host: a[2].clone(), port, workers },
        _ => usage(),
    }
}

/// The scenarios of a raw runtime contestant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Raw {
    Hello,
    HelloTimeout(Duration),
    Echo,
    /// `work` or `counter`: HTTP requests parsed and answered by [`Requests`].
    Requests(Route),
}

impl Raw {
    /// The command line and the scenario it names (hello, hello-timeout, echo, work or counter).
    pub fn from_args() -> (Args, Raw) {
        let args = parse(&["hello", "hello-timeout", "echo", "work", "counter"]);
        let scenario = match args.scenario.as_str() {
            "hello" => Raw::Hello,
            "hello-timeout" => Raw::HelloTimeout(timeout_from_env()),
            "work" => Raw::Requests(Route::Work),
            "counter" => Raw::Requests(Route::Counter),
            _ => Raw::Echo,
        };
        (args, scenario)
    }
}

/// The scenarios of a framework contestant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Http {
    Hello,
    Plaintext,
    Json,
}

impl Http {
    /// The command line and the scenario it names (hello, plaintext or json).
    pub fn from_args() -> (Args, Http) {
        let args = parse(&["hello", "plaintext", "json"]);
        let scenario = match args.scenario.as_str() {
            "hello" => Http::Hello,
            "plaintext" => Http::Plaintext,
            _ => Http::Json,
        };
        (args, scenario)
    }
}

/// The `hello-timeout` limit on each read and each write (default 5 s).
pub fn timeout_from_env() -> Duration {
    let ms = env::var("SB_TIMEOUT_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(5000);
    Duration::from_millis(ms)
}
