//! What the conformance checks concluded, as printed and as stored in `run.json` and `check.json`. The
//! checks of `check/` write these; the runner stores them with a run; the exporters read them.

use std::fmt;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pass,
    Fail,
    /// Not run, with the reason (a tool that is missing and cannot be installed).
    Skip,
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Status::Pass => "pass",
            Status::Fail => "FAIL",
            Status::Skip => "skip",
        })
    }
}

/// One check's outcome as printed and as stored in run.json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    pub contestant: String,
    /// Empty for checks of the whole contestant (scale, start-up).
    pub scenario: String,
    pub check: String,
    pub status: Status,
    pub reason: String,
    pub seconds: f64,
}

/// The server's resident memory with this many connections open.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RssPoint {
    pub connections: usize,
    pub rss_bytes: Option<u64>,
}

/// The outcome of every check of one contestant, as printed and as stored next to a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ContestantChecks {
    pub contestant: String,
    pub results: Vec<CheckResult>,
    /// The scenario the scale check ran (None when it did not run).
    pub scale_scenario: Option<String>,
    /// Connections asked for and held open at once by the scale check.
    pub scale_asked: usize,
    pub scale_held: usize,
    /// The server's resident memory at each connection count of the scale check.
    pub rss: Vec<RssPoint>,
}

impl ContestantChecks {
    pub fn failed(&self) -> usize {
        self.results.iter().filter(|r| r.status == Status::Fail).count()
    }
    pub fn passed(&self) -> bool {
        self.failed() == 0
    }
}
