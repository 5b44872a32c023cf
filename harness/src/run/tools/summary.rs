//! What an external tool reported, and the `SERVERBENCH key=value ...` line the harness makes wrk and hey
//! print.

use hdrhistogram::Histogram;

use crate::load::{ErrorCounts, StatusCounts};
use crate::model::LatencyPoints;

/// What a tool reported.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolReport {
    pub requests: u64,
    pub errors: ErrorCounts,
    pub status: StatusCounts,
    pub duration_s: f64,
    pub bytes_read: u64,
    pub latency: LatencyPoints,
    /// Every counted request's latency in ns, from a tool that prints them (hey).
    pub histogram: Option<Histogram<u64>>,
}

/// The `SERVERBENCH key=value ...` line a tool is made to print (wrk's script, hey's template).
pub(super) struct SummaryLine<'a> {
    line: &'a str,
    tool: &'static str,
}

impl<'a> SummaryLine<'a> {
    pub(super) fn find(text: &'a str, tool: &'static str) -> anyhow::Result<Self> {
        let line = text
            .lines()
            .find_map(|l| l.strip_prefix("SERVERBENCH "))
            .ok_or_else(|| anyhow::anyhow!("no summary line from {tool}"))?;
        Ok(SummaryLine { line, tool })
    }

    pub(super) fn get<T: std::str::FromStr>(&self, key: &str) -> anyhow::Result<T> {
        self.line
            .split_whitespace()
            .find_map(|kv| kv.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| anyhow::anyhow!("{}'s summary lacks {key}", self.tool))
    }
}
