//! What every check takes and gives: the server it checks, the limits it keeps, its verdict, and why a
//! step of it failed. The checks import these from here; the table in mod.rs only wires the checks.

use std::net::SocketAddr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::model::checks::Status;
use crate::wire::Scenario;

/// The `SB_TIMEOUT_MS` every server is started with while it is checked, so that `hello-timeout` can be
/// timed and `hello` is shown to ignore it.
pub const CHECK_TIMEOUT_MS: u64 = 300;

/// A running server to check: where it listens, what it serves and under which rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    pub addr: SocketAddr,
    pub scenario: Scenario,
    /// `micro` contestants answer `hello` byte for byte; `platform` ones may add headers.
    pub micro: bool,
    /// The server's process (the root of its tree, its process group), where known: `tcp-nodelay` looks
    /// for the server's side of a connection among the descriptors of that tree.
    pub pid: Option<i32>,
}

/// Limits and sizes of the checks. The defaults are what `serverbench check` uses.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// The `SB_TIMEOUT_MS` the server was started with.
    pub server_timeout: Duration,
    /// Longest wait for any one answer.
    pub answer_timeout: Duration,
    /// How long `hello` must keep an idle connection open.
    pub idle_open: Duration,
    /// Connections opened and dropped at once by `bad-drop`.
    pub drop_connections: usize,
    /// Seed of every random payload and value; printed with a failure so it can be replayed.
    pub seed: u64,
    /// The CPUs the server may run on (`work-busy` spreads its CPU time over them).
    pub server_cpus: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            server_timeout: Duration::from_millis(CHECK_TIMEOUT_MS),
            answer_timeout: Duration::from_secs(5),
            idle_open: Duration::from_secs(2),
            drop_connections: 5_000,
            seed: 0x005E_ED0F_5E4B_E7C4,
            server_cpus: 1,
        }
    }
}

impl Options {
    /// The latest a `hello-timeout` server may close a connection whose timer started at zero.
    pub fn close_bound(&self) -> Duration {
        self.server_timeout + Duration::from_millis(1500)
    }
}

/// What one check concluded and why; a pass says what was seen, a failure what was wrong.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    pub status: Status,
    pub reason: String,
}

impl Verdict {
    pub fn pass(reason: impl Into<String>) -> Verdict {
        Verdict { status: Status::Pass, reason: reason.into() }
    }
    pub fn fail(reason: impl Into<String>) -> Verdict {
        Verdict { status: Status::Fail, reason: reason.into() }
    }
    pub fn skip(reason: impl Into<String>) -> Verdict {
        Verdict { status: Status::Skip, reason: reason.into() }
    }
    pub fn passed(&self) -> bool {
        self.status == Status::Pass
    }
}

/// Why a check (or a step of one) failed, in words for the person who reads the verdict.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Failed(pub String);

impl From<String> for Failed {
    fn from(reason: String) -> Failed {
        Failed(reason)
    }
}

impl From<&str> for Failed {
    fn from(reason: &str) -> Failed {
        Failed(reason.to_string())
    }
}

impl From<crate::wire::WireError> for Failed {
    fn from(e: crate::wire::WireError) -> Failed {
        Failed(e.0)
    }
}

impl From<Result<String, Failed>> for Verdict {
    fn from(r: Result<String, Failed>) -> Verdict {
        match r {
            Ok(reason) => Verdict::pass(reason),
            Err(Failed(reason)) => Verdict::fail(reason),
        }
    }
}
