//! What the harness and the agent on a server host (`serverbench agent`) say over the ssh channel: one JSON
//! request a line on the agent's stdin, one JSON reply a line on its stdout, in turn. The agent's first
//! line says it is ready (or why it cannot be).

use std::net::IpAddr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::catalog::build::BuildResult;
use crate::launch::round_watch::ServerSide;
use crate::launch::verify::{Failure, Sample};
use crate::launch::server::StopReport;
use crate::os::syscalls::NotCounted;

/// A server the agent started, by the number it gave it.
pub type ServerId = u32;

// Externally tagged (`{"start": {...}}`): an internally tagged enum buffers its content, and a buffered map
// key no longer reads back as a number (the per-CPU counters are keyed by CPU).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Request {
    /// A contestant's dependencies (installed with apt-get as root when `install`) and build.
    Prepare { contestant: String, install: bool, workers: usize },
    /// Its server for `scenario` on a free port of `address`, pinned to `cpus`, once it accepts, and its
    /// answer verified there (`launch::verify`, each read and write within `verify_timeout`).
    Start { contestant: String, scenario: String, address: IpAddr, cpus: Vec<usize>, workers: usize, start_timeout: Duration, verify_timeout: Duration },
    Freeze { server: ServerId },
    Thaw { server: ServerId },
    /// Whether its leader has exited, and how.
    Exited { server: ServerId },
    /// A failure message: `what`, then the tail of its log.
    Explain { server: ServerId, what: String },
    /// A round begins (`launch::round_watch`): its system calls counted on these CPUs, or why not.
    RoundBegin { server: ServerId, syscall_cpus: Result<Vec<usize>, NotCounted> },
    /// An edge of the measured window.
    Mark { open: bool },
    RoundEnd,
    Stop { server: ServerId, grace: Duration },
    /// The speed of these CPUs (`os::speed::probe`, each loop for `each`).
    Probe { cpus: Vec<usize>, each: Duration },
    /// A wait until these CPUs are quiet, at most `limit` (`os::cpustat::wait_quiet`).
    WaitQuiet { cpus: Vec<usize>, limit: Duration },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reply {
    /// The first line: the catalog was read, requests are welcome.
    Ready { contestants: usize },
    Done,
    Prepared { outcome: BuildOutcomeThere, version: Option<String>, log: Option<String> },
    /// It accepts; `answer` is its verification (a failed one leaves it running, to be stopped).
    Started { server: ServerId, port: u16, answer: Result<Sample, Failure> },
    /// It did not start or accept; the server was stopped there.
    StartFailed { reason: String, log: String },
    Exited { status: Option<String> },
    Explained { text: String },
    Round { side: Box<ServerSide> },
    /// With the server's log (its last `LOG_COPY_BYTES`).
    Stopped { report: StopReport, log: String },
    Speeds { speeds: Vec<crate::os::speed::CpuSpeed> },
    /// How long the CPUs took to be quiet (ms), absent when /proc/stat could not be read.
    Waited { ms: Option<f64> },
    /// The request could not be done.
    Failed { error: String },
}

/// How a contestant came out of its dependency check and build on the server host (`launch::Prepared`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum BuildOutcomeThere {
    Ready { result: BuildResult, seconds: f64 },
    Skipped { reason: String },
    Failed { reason: String, seconds: f64 },
    Interrupted,
}

/// A log is copied back to the run's folder up to this many bytes, its end kept.
pub const LOG_COPY_BYTES: u64 = 1 << 20;

impl Request {
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("a request serializes") + "\n"
    }
}

impl Reply {
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("a reply serializes") + "\n"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_replies_read_back() {
        let r = Request::RoundBegin { server: 3, syscall_cpus: Err("off".into()) };
        let back: Request = serde_json::from_str(r.to_line().trim()).unwrap();
        assert!(matches!(back, Request::RoundBegin { server: 3, syscall_cpus: Err(ref why) } if why.0 == "off"));
        let stat = crate::os::cpustat::CpuStat::parse("cpu0 1 2 3 4 5 6 7 8\ncpu3 9 9 9 9 9 9 9 9\n");
        let usage = crate::launch::probe::Usage { cpu_s: Some(0.25), ..Default::default() };
        let side = ServerSide { wall_s: 0.5, usage, stat_before: stat, ..Default::default() };
        let back: Reply = serde_json::from_str(Reply::Round { side: Box::new(side.clone()) }.to_line().trim()).unwrap();
        assert!(matches!(back, Reply::Round { side: s } if *s == side));
    }
}
