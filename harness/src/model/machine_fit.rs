//! What the machine model (`model::machine_model`) stores: each round's factors, and per kind of load what
//! the model took out.

use serde::{Deserialize, Serialize};

/// A round's factors from the machine model, one per figure compared (1 = the reference state).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MachineFactors {
    pub requests_per_s: f64,
    pub p99: f64,
    pub cpu_per_request: f64,
}

/// What the model did to one kind of load of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MachineFit {
    /// The load's label, as the tables group rows: "hello, 64 connections, throughput".
    pub load: String,
    pub reference_cross_cpu_per_ms: f64,
    /// Rounds that count, and those of them without a cross-CPU probe, or with one beyond
    /// `machine_model::CROSS_CPU_RANGE` of the reference (adjusted by the speed and drift stages alone).
    pub rounds: usize,
    pub rounds_without_cross_cpu: usize,
    pub metrics: Vec<MetricFit>,
}

/// One figure's fit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricFit {
    /// `requests_per_s`, `p99`, `cpu_per_request`.
    pub metric: String,
    /// The pooled slope of the figure's log on the log of the cross-CPU rate.
    pub slope: f64,
    /// `fitted` on this run's rounds, or `default` (they spanned too little of the rate).
    pub slope_from: String,
    /// The pooled slope of what the rate left on the log of the server CPUs' system-call speed against the
    /// load's median: `fitted`, or `default` (0, none: the speed varied too little to fit one); absent for
    /// p99, which the speed does not adjust, where no round had a speed probe, and in an older run.json.
    #[serde(default)]
    pub speed_slope: Option<f64>,
    #[serde(default)]
    pub speed_slope_from: Option<String>,
    /// Each server's round-to-round scatter (standard deviation of the log), the median over servers, as
    /// measured and as adjusted, in percent; absent without a server of three rounds.
    pub scatter_pct: Option<f64>,
    pub scatter_adjusted_pct: Option<f64>,
}

impl MetricFit {
    /// The share of the round-to-round variance the model took out, in percent.
    pub fn explained_pct(&self) -> Option<f64> {
        let (before, after) = (self.scatter_pct?, self.scatter_adjusted_pct?);
        (before > 0.0).then(|| (1.0 - (after / before).powi(2)) * 100.0)
    }
}
