//! A contestant's capacity under a latency objective (`bench --search`) as run.json stores it in its
//! measurement: the objective, the highest rate that met it, the bracket and each step's rate round.

use serde::{Deserialize, Serialize};

/// A latency objective such as `p99<1ms`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Objective {
    /// As written, for reports.
    pub text: String,
    /// 0.99 for `p99`.
    pub quantile: f64,
    pub bound_ns: u64,
}

/// One rate round of a search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchStep {
    pub rate: f64,
    /// Valid responses per second.
    pub achieved: f64,
    /// The corrected latency at the objective's percentile; absent with no response.
    pub latency_ns: Option<u64>,
    pub errors: u64,
    pub pass: bool,
    /// The round's flags (`disturbed`, `rate-not-held`, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<super::flag::Flag>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Capacity {
    pub slo: Objective,
    /// The highest passing rate; absent when no rate passed.
    pub capacity_rps: Option<f64>,
    /// The highest passing and the lowest failing rate.
    pub bracket: (Option<f64>, Option<f64>),
    pub steps: Vec<SearchStep>,
}
