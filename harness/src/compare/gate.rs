//! `compare --fail-on worse[+unclear][:METRICS]`: a comparison as a gate for continuous integration. A
//! figure that the comparison calls worse, of a metric the gate selects, trips it; with `+unclear`, so
//! does one it could not show to hold (`unclear`, `untested`); a configuration of A that B lost (absent,
//! failed, newly erroring) trips every gate. The command then exits with `REGRESSION_EXIT`, apart from
//! an error's 1 and a usage error's 2 (clap's), so that a job can tell a regression from a broken run.

use std::str::FromStr;

use super::lost::Lost;
use super::verdict::{Change, Metric, Verdict};
use super::{Comparison, Row};

/// The exit status of a regression.
pub const REGRESSION_EXIT: i32 = 3;

/// Which figures fail the command, and on which verdicts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailOn {
    /// `worse+unclear`: a figure not shown to hold (`unclear`, `untested`) trips the gate too.
    pub unclear: bool,
    pub metrics: Vec<Metric>,
}

/// A `--fail-on` value that names no verdict or metric the gate knows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadFailOn {
    #[error("'{0}' is not a verdict the gate knows: give worse or worse+unclear, optionally with metrics (worse:rps,p99,cpu)")]
    Verdict(String),
    #[error("'{0}' is not a metric compare judges: give rps, p99 or cpu")]
    Metric(String),
}

impl FromStr for FailOn {
    type Err = BadFailOn;

    /// `worse` or `worse+unclear`, for every metric or followed by `:rps,p99,cpu` (those named; `req/s`
    /// and `CPU/req` as the tables write them are taken too).
    fn from_str(s: &str) -> Result<FailOn, BadFailOn> {
        let (verdict, list) = s.split_once(':').unwrap_or((s, ""));
        let unclear = match verdict.trim().to_ascii_lowercase().as_str() {
            "worse" => false,
            "worse+unclear" => true,
            _ => return Err(BadFailOn::Verdict(verdict.to_string())),
        };
        if list.trim().is_empty() {
            return Ok(FailOn { unclear, metrics: Metric::ALL.to_vec() });
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
        Ok(FailOn { unclear, metrics })
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

    /// Whether one figure's verdict trips the gate: worse (with `+unclear` also unclear or untested), of a
    /// metric it selects (`compare`'s rows and an A/B run of `bench` alike).
    pub fn trips(&self, metric: Metric, verdict: Verdict) -> bool {
        let tripping = match verdict {
            Verdict::Worse => true,
            Verdict::Unclear | Verdict::Untested => self.unclear,
            Verdict::Better | Verdict::Same | Verdict::Machine => false,
        };
        tripping && self.metrics.contains(&metric)
    }

    /// "worse:rps,p99,cpu" or "worse+unclear:rps", as it would be given.
    pub fn spec(&self) -> String {
        let verdict = if self.unclear { "worse+unclear" } else { "worse" };
        format!("{verdict}:{}", self.metrics.iter().map(|m| m.flag()).collect::<Vec<_>>().join(","))
    }
}

/// The error a tripped gate ends the command with (`compare`, or `bench` in an A/B run); `crate::exit_code`
/// maps it to `REGRESSION_EXIT`.
#[derive(Debug, thiserror::Error)]
#[error("{} tripped the gate (--fail-on {spec}): {}", list.len(), list.join("; "))]
pub struct Regressed {
    pub spec: String,
    /// "ref-epoll · hello · throughput · 64 connections: req/s 0.660× worse" per tripped figure,
    /// "c-epoll · hello · throughput · 64 connections: absent from B" per lost configuration.
    pub list: Vec<String>,
}

impl Regressed {
    /// None when nothing tripped the gate.
    pub fn new(fail_on: &FailOn, tripped: &[(&Row, &Change)], lost: &[Lost]) -> Option<Regressed> {
        let figures = tripped.iter().map(|(r, ch)| Regressed::figure(&r.key.contestant, &r.key.configuration(), ch.metric, ch.ratio, ch.verdict));
        let lost = lost.iter().map(|l| format!("{} · {}: {}", l.key.contestant, l.key.configuration(), l.why.text()));
        let list: Vec<String> = lost.chain(figures).collect();
        (!list.is_empty()).then(|| Regressed { spec: fail_on.spec(), list })
    }

    /// One tripped figure as the list says it: "ref-epoll · hello · throughput · 64 connections: req/s
    /// 0.660× worse", `who` and `configuration` as the caller names them.
    pub fn figure(who: &str, configuration: &str, metric: Metric, ratio: Option<f64>, verdict: Verdict) -> String {
        let ratio = ratio.map_or("no ratio".into(), |x| format!("{x:.3}×"));
        format!("{who} · {configuration}: {} {ratio} {}", metric.name(), verdict.word())
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
        let strict: FailOn = "worse+unclear:rps".parse().unwrap();
        assert_eq!((strict.unclear, strict.spec()), (true, "worse+unclear:rps".to_string()));
        assert!(!"worse".parse::<FailOn>().unwrap().unclear);
        assert!("worse+same".parse::<FailOn>().is_err());
    }

    #[test]
    fn the_strict_gate_trips_on_what_was_not_shown_to_hold() {
        let (worse, strict): (FailOn, FailOn) = ("worse:rps".parse().unwrap(), "worse+unclear:rps".parse().unwrap());
        for v in Verdict::ALL {
            let shown_bad = v == Verdict::Worse;
            let not_shown = matches!(v, Verdict::Unclear | Verdict::Untested);
            assert_eq!(worse.trips(Metric::RequestsPerS, v), shown_bad, "{v:?}");
            assert_eq!(strict.trips(Metric::RequestsPerS, v), shown_bad || not_shown, "{v:?}");
            assert!(!strict.trips(Metric::P99, v), "a metric the gate does not select never trips it");
        }
        assert!("worse:p95".parse::<FailOn>().unwrap_err().to_string().contains("'p95'"));
    }
}
