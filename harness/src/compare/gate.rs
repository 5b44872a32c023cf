//! `compare --fail-on worse[:METRICS]`: a comparison as a gate for continuous integration. A figure that
//! the comparison calls worse, of a metric the gate selects, trips it; the command then exits with
//! `REGRESSION_EXIT`, apart from an error's 1 and a usage error's 2 (clap's), so that a job can tell a
//! regression from a broken run.

use std::str::FromStr;

use super::verdict::{Change, Metric, Verdict};
use super::{Comparison, Row};

/// The exit status of a regression.
pub const REGRESSION_EXIT: i32 = 3;

/// Which figures fail the command when worse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailOn {
    pub metrics: Vec<Metric>,
}

/// A `--fail-on` value that names no verdict or metric the gate knows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadFailOn {
    #[error("'{0}' is not a verdict the gate knows: give worse, or worse:rps,p99,cpu")]
    Verdict(String),
    #[error("'{0}' is not a metric compare judges: give rps, p99 or cpu")]
    Metric(String),
}

impl FromStr for FailOn {
    type Err = BadFailOn;

    /// `worse` (every metric) or `worse:rps,p99,cpu` (those named; `req/s` and `CPU/req` as the tables
    /// write them are taken too).
    fn from_str(s: &str) -> Result<FailOn, BadFailOn> {
        let (verdict, list) = s.split_once(':').unwrap_or((s, ""));
        if !verdict.eq_ignore_ascii_case("worse") {
            return Err(BadFailOn::Verdict(verdict.to_string()));
        }
        if list.trim().is_empty() {
            return Ok(FailOn { metrics: Metric::ALL.to_vec() });
        }
        let mut metrics = Vec::new();
        for name in list.split(',').map(str::trim) {
            let metric = Metric::ALL
                .into_iter()
                .find(|m| name.eq_ignore_ascii_case(m.flag()) || name.eq_ignore_ascii_case(m.name()))
                .ok_or_else(|| BadFailOn::Metric(name.to_string()))?;
            if !metrics.contains(&metric) {
                metrics.push(metric);
            }
        }
        Ok(FailOn { metrics })
    }
}

impl FailOn {
    /// The figures that trip the gate, in the order of the rows.
    pub fn tripped<'c>(&self, c: &'c Comparison) -> Vec<(&'c Row, &'c Change)> {
        c.rows
            .iter()
            .flat_map(|r| r.changes.iter().map(move |ch| (r, ch)))
            .filter(|(_, ch)| self.trips(ch.metric, ch.verdict))
            .collect()
    }

    /// Whether one figure's verdict trips the gate: worse, of a metric it selects (`compare`'s rows and an
    /// A/B run of `bench` alike).
    pub fn trips(&self, metric: Metric, verdict: Verdict) -> bool {
        verdict == Verdict::Worse && self.metrics.contains(&metric)
    }

    /// "worse:rps,p99,cpu", as it would be given.
    pub fn spec(&self) -> String {
        format!("worse:{}", self.metrics.iter().map(|m| m.flag()).collect::<Vec<_>>().join(","))
    }
}

/// The error a tripped gate ends the command with (`compare`, or `bench` in an A/B run); `crate::exit_code`
/// maps it to `REGRESSION_EXIT`.
#[derive(Debug, thiserror::Error)]
#[error("{} figure(s) worse (--fail-on {spec}): {}", list.len(), list.join("; "))]
pub struct Regressed {
    pub spec: String,
    /// "ref-epoll · hello · throughput · 64 connections: req/s 0.660×" per tripped figure.
    pub list: Vec<String>,
}

impl Regressed {
    pub fn new(fail_on: &FailOn, tripped: &[(&Row, &Change)]) -> Regressed {
        let list = tripped
            .iter()
            .map(|(r, ch)| format!("{} · {}: {} {:.3}×", r.key.contestant, r.key.configuration(), ch.metric.name(), ch.ratio.unwrap_or(f64::NAN)))
            .collect();
        Regressed { spec: fail_on.spec(), list }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gate_reads_a_verdict_and_metrics() {
        assert_eq!("worse".parse::<FailOn>().unwrap().metrics, Metric::ALL.to_vec());
        let f: FailOn = "worse:rps, p99,req/s".parse().unwrap();
        assert_eq!(f.metrics, [Metric::RequestsPerS, Metric::P99]);
        assert_eq!(f.spec(), "worse:rps,p99");
        assert_eq!("WORSE:CPU/req".parse::<FailOn>().unwrap().metrics, [Metric::CpuPerRequest]);
        assert!("better".parse::<FailOn>().unwrap_err().to_string().contains("worse:rps,p99,cpu"));
        assert!("worse:p95".parse::<FailOn>().unwrap_err().to_string().contains("'p95'"));
    }
}
