//! What every Rust contestant shares: the command line `<server> <scenario> <host> <port> <workers>`,
//! the `SB_TIMEOUT_MS` limit of `hello-timeout`, the `hello` response, the `echo` buffer size, (module
//! `requests`) the parsing and answers of the raw contestants' `work` and `counter` scenarios, and
//! (module `files`) the file of the `file` scenario and the raw contestants' parsing of its requests.

pub mod files;
pub mod requests;

use std::path::Path;
use std::time::Duration;
use std::{env, process};

pub use requests::{Requests, Route};

pub const HELLO: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello world!";

/// `echo` reads what has arrived into a buffer of this size and writes it all back before reading again.
pub const ECHO_BUFFER_BYTES: usize = 512;

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
    /// `file`, with the folder `SB_FILES` names; its requests are parsed by [`files::Pipeline`].
    File(&'static Path),
}

impl Raw {
    /// The scenarios every raw contestant answers.
    pub const SCENARIOS: &'static [&'static str] = &["hello", "hello-timeout", "echo", "work", "counter", "file"];

    /// The command line and the scenario it names (one of [`Raw::SCENARIOS`]).
    pub fn from_args() -> (Args, Raw) {
        let args = parse(Raw::SCENARIOS);
        let scenario = Raw::named(&args.scenario);
        (args, scenario)
    }

    /// The scenario called `name`, one of [`Raw::SCENARIOS`].
    pub fn named(name: &str) -> Raw {
        match name {
            "hello" => Raw::Hello,
            "hello-timeout" => Raw::HelloTimeout(timeout_from_env()),
            "work" => Raw::Requests(Route::Work),
            "counter" => Raw::Requests(Route::Counter),
            "echo" => Raw::Echo,
            "file" => Raw::File(files::folder_from_env()),
            _ => panic!("not a raw scenario: {name}"),
        }
    }
}

/// The scenarios of a framework contestant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Http {
    Hello,
    Plaintext,
    Json,
    /// `file`, with the folder `SB_FILES` names.
    File(&'static Path),
}

impl Http {
    /// The scenarios every framework contestant answers.
    pub const SCENARIOS: &'static [&'static str] = &["hello", "plaintext", "json"];

    /// The command line and the scenario it names (one of [`Http::SCENARIOS`]).
    pub fn from_args() -> (Args, Http) {
        Http::from_args_among(Http::SCENARIOS)
    }

    /// The command line and the scenario it names, one of `scenarios` (some of [`Http::SCENARIOS`]
    /// and `file`).
    pub fn from_args_among(scenarios: &[&str]) -> (Args, Http) {
        let args = parse(scenarios);
        let scenario = match args.scenario.as_str() {
            "hello" => Http::Hello,
            "plaintext" => Http::Plaintext,
            "json" => Http::Json,
            "file" => Http::File(files::folder_from_env()),
            name => panic!("not a framework scenario: {name}"),
        };
        (args, scenario)
    }
}

/// The `hello-timeout` limit on each read and each write (default 5 s).
pub fn timeout_from_env() -> Duration {
    let ms = env::var("SB_TIMEOUT_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(5000);
    Duration::from_millis(ms)
}
