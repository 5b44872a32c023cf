//! What the checks of one contestant concluded, as printed and as stored in `run.json` and `check.json`.

use serde::{Deserialize, Serialize};

use super::scale::RssPoint;
use super::{CheckResult, Status};

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
