//! A round's intervals as run.json stores them (`RoundLoad::intervals`): the measured window cut into equal
//! intervals, each with the responses and errors that completed in it and their latency histogram, stored
//! like the round's own (HdrHistogram V2, base64). Interval i covers [i × length, (i + 1) × length) from the
//! window's opening; the last one ends with the window and may be shorter. The load generator's own series
//! (`stats::intervals`, which adds threads' and hosts' shares and writes HdrHistogram's log) becomes this one
//! in `run/to_model.rs`.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::stats::histogram::from_base64;
use crate::stats::intervals::spans_s;

/// One interval of a round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Valid responses completed in the interval (what req/s counts).
    pub requests: u64,
    /// Errors of every class counted in the interval.
    pub errors: u64,
    /// The latencies of those responses, in ns (in rate mode from each request's intended send time):
    /// HdrHistogram V2, base64, as the round's `latency`.
    pub latency: String,
}

/// A round's intervals, in order from the window's opening.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Intervals {
    /// Every interval's length but the last's, which ends with the window.
    pub length_ms: f64,
    pub each: Vec<Interval>,
}

impl Interval {
    /// The interval's latency histogram, decoded.
    pub fn histogram(&self) -> anyhow::Result<Histogram<u64>> {
        from_base64(&self.latency)
    }
}

impl Intervals {
    /// Each interval's start and length in seconds from the window's opening, given the window's length.
    pub fn spans_s(&self, window_s: f64) -> impl Iterator<Item = (f64, f64)> {
        spans_s(self.length_ms, self.each.len(), window_s)
    }
}
