//! Capacity under a latency objective (mutilate's `--search`): the highest rate whose open-loop rounds
//! keep a latency percentile under a bound, found by bracketing and geometric bisection.
//!
//! A step passes when the round held its rate (valid responses per second at least `RATE_HELD_SHARE` of
//! the rate), had no error, and its corrected latency at the percentile was under the bound. The search
//! doubles a passing rate (or halves a failing one) until it has a passing and a failing rate, then
//! bisects between them until they are within `PRECISION` of each other, in at most `MAX_STEPS` rounds.
//! A rate fails only when a second round at it fails too: on a shared machine one stall can be the
//! percentile of a round, and a search never goes back above a rate that failed.

use serde::{Deserialize, Serialize};

use super::report::LoadReport;

/// A search ends when the failing rate is within this factor of the passing one.
pub const PRECISION: f64 = 1.05;
/// A search ends after this many rounds at most (a failing rate takes two).
pub const MAX_STEPS: usize = 24;
/// A step must hold at least this many responses per 1 − quantile of the objective to judge its percentile
/// (p99: 1,000 responses, whose 99th percentile lies beyond 10 of them). Below that, one stall of the
/// machine is the percentile: on a shared VM a search then halved its rate down to 2 req/s.
pub const RESPONSES_PER_TAIL: f64 = 10.0;
/// The share of the asked rate a round must reach to pass (the `rate-not-held` rule).
pub const RATE_HELD_SHARE: f64 = 0.98;

/// A latency objective: `p99<1ms`, `p99.9<500us`, `p50<2ms`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Slo {
    /// As written, for reports.
    pub text: String,
    /// 0.99 for `p99`.
    pub quantile: f64,
    pub bound_ns: u64,
}

/// A latency objective that does not parse, with what is expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--search '{text}': {expected}")]
pub struct BadObjective {
    pub text: String,
    pub expected: &'static str,
}

impl Slo {
    /// The fewest responses a step needs for its percentile to be judged.
    pub fn min_responses(&self) -> f64 {
        // Less a hair: 10 / (1 − 0.9) is 100.00000000000001 in floating point.
        (RESPONSES_PER_TAIL / (1.0 - self.quantile) - 1e-6).ceil()
    }

    pub fn parse(text: &str) -> Result<Slo, BadObjective> {
        let fail = |expected| BadObjective { text: text.to_string(), expected };
        let bad = || fail("expected pQ<DURATION, such as p99<1ms or p99.9<500us");
        let (p, bound) = text.trim().split_once('<').ok_or_else(bad)?;
        let percent: f64 = p.trim().strip_prefix('p').ok_or_else(bad)?.parse().map_err(|_| bad())?;
        if !(percent > 0.0 && percent < 100.0) {
            return Err(fail("the percentile must be above 0 and below 100"));
        }
        let bound = humantime::parse_duration(bound.trim()).map_err(|_| bad())?;
        if bound.is_zero() {
            return Err(fail("the bound must be longer than 0"));
        }
        Ok(Slo { text: text.trim().to_string(), quantile: percent / 100.0, bound_ns: bound.as_nanos() as u64 })
    }
}

/// One round of a search; `F` is what its flags are where a benchmark ran it (the load generator's own
/// search raises none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound(deserialize = "F: Deserialize<'de>"))]
pub struct Step<F = String> {
    pub rate: f64,
    /// Valid responses per second.
    pub achieved: f64,
    /// The corrected latency at the objective's percentile; absent with no response.
    pub latency_ns: Option<u64>,
    pub errors: u64,
    pub pass: bool,
    /// The round's flags where a benchmark ran it (`disturbed`, `rate-not-held`, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<F>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound(deserialize = "F: Deserialize<'de>"))]
pub struct SearchResult<F = String> {
    pub slo: Slo,
    /// The highest passing rate; absent when no rate passed.
    pub capacity_rps: Option<f64>,
    /// The highest passing and the lowest failing rate.
    pub bracket: (Option<f64>, Option<f64>),
    pub steps: Vec<Step<F>>,
}

impl<F> SearchResult<F> {
    /// "41200 req/s (passed at 41200, failed at 43100)", or why there is no figure.
    pub fn describe(&self) -> String {
        match self.bracket {
            (Some(lo), Some(hi)) => format!("{lo:.0} req/s (passed at {lo:.0}, failed at {hi:.0})"),
            (Some(lo), None) => format!("at least {lo:.0} req/s (no failing rate found)"),
            (None, Some(hi)) => format!("none (every rate tried failed, down to {hi:.0} req/s)"),
            (None, None) => "none (no rate tried met it)".to_string(),
        }
    }
}

/// Whether one round met the objective at `rate`.
pub fn judge(slo: &Slo, rate: f64, r: &LoadReport) -> Step {
    judge_figures(slo, rate, r.requests_per_s(), &r.latency, r.errors.total())
}

/// `judge` on a round's figures wherever they are kept: valid responses per second, the corrected latency
/// histogram and the count of errors.
pub fn judge_figures<F>(slo: &Slo, rate: f64, achieved: f64, latency: &hdrhistogram::Histogram<u64>, errors: u64) -> Step<F> {
    let latency_ns = (!latency.is_empty()).then(|| latency.value_at_quantile(slo.quantile));
    let pass = achieved >= RATE_HELD_SHARE * rate && errors == 0 && latency_ns.is_some_and(|l| l < slo.bound_ns);
    Step { rate, achieved, latency_ns, errors, pass, flags: Vec::new() }
}

/// Searches from `start_rps`, one round per step: `run_step(rate)` runs it and judges it (with `judge`).
/// `window_s` is the length of a step's measured window: no rate is tried whose steps would hold fewer than
/// `Slo::min_responses`.
pub fn search<F>(slo: &Slo, start_rps: f64, window_s: f64, mut run_step: impl FnMut(f64) -> anyhow::Result<Step<F>>) -> anyhow::Result<SearchResult<F>> {
    let (mut lo, mut hi): (Option<f64>, Option<f64>) = (None, None);
    let mut steps = Vec::new();
    let lowest = (slo.min_responses() / window_s.max(1e-3)).max(1.0);
    let mut rate = start_rps.max(lowest);
    while steps.len() < MAX_STEPS {
        let mut step = run_step(rate)?;
        if !step.pass && steps.len() + 1 < MAX_STEPS {
            // A stall of a shared machine only ever adds latency, and one round's percentile can be a single
            // stall: a failure counts once a second round at the same rate fails too (both are kept).
            steps.push(step);
            step = run_step(rate)?;
        }
        if step.pass {
            lo = Some(lo.map_or(rate, |l| l.max(rate)));
        } else {
            hi = Some(hi.map_or(rate, |h| h.min(rate)));
        }
        steps.push(step);
        rate = match (lo, hi) {
            (Some(l), Some(h)) if h / l <= PRECISION => break,
            (Some(l), Some(h)) => (l * h).sqrt(),
            (Some(l), None) => l * 2.0,
            (None, Some(h)) if h > lowest => (h / 2.0).max(lowest),
            (None, _) => break,
        };
    }
    Ok(SearchResult { slo: slo.clone(), capacity_rps: lo, bracket: (lo, hi), steps })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::histogram::new_latency_histogram;

    #[test]
    fn objectives_parse_and_bad_ones_say_what_is_expected() {
        let s = Slo::parse("p99<1ms").unwrap();
        assert_eq!((s.quantile, s.bound_ns), (0.99, 1_000_000));
        let s = Slo::parse(" p99.9 < 500us ").unwrap();
        assert!((s.quantile - 0.999).abs() < 1e-12 && s.bound_ns == 500_000);
        for bad in ["99<1ms", "p99>1ms", "p100<1ms", "p99<", "p99<0ms", "px<1ms"] {
            let e = Slo::parse(bad).unwrap_err().to_string();
            assert!(e.contains("--search"), "{bad}: {e}");
        }
    }

    /// A model server of capacity 1,000/s whose latency is 100 µs below it and 10 ms above.
    fn model(rate: f64) -> anyhow::Result<LoadReport> {
        let mut r = LoadReport::empty(1, 1);
        r.duration_s = 1.0;
        r.requests = rate.min(1000.0) as u64;
        let mut h = new_latency_histogram();
        let latency = if rate <= 1000.0 { 100_000 } else { 10_000_000 };
        h.record_n(latency, r.requests.max(1)).unwrap();
        r.latency = h;
        Ok(r)
    }

    #[test]
    fn bracketing_and_bisection_find_the_capacity() {
        let slo = Slo::parse("p99<1ms").unwrap();
        for start in [10.0, 1000.0, 50_000.0] {
            let got = search(&slo, start, 1.0, |rate| Ok(judge(&slo, rate, &model(rate)?))).unwrap();
            let (lo, hi) = (got.bracket.0.unwrap(), got.bracket.1.unwrap());
            assert!(lo <= 1000.0 && hi > 1000.0 && hi / lo <= PRECISION, "start {start}: {lo}..{hi}");
            assert_eq!(got.capacity_rps, Some(lo));
            assert!(got.steps.len() <= MAX_STEPS);
        }
    }

    #[test]
    fn a_failure_counts_once_a_second_round_at_the_rate_fails_too() {
        // The first round at every rate stalls (10 ms at the percentile); the capacity is still found, each
        // failing rate was tried twice, and no passing rate once failed is given up for it.
        let slo = Slo::parse("p99<1ms").unwrap();
        let mut tried = std::collections::HashMap::new();
        let got = search(&slo, 1000.0, 1.0, |rate| {
            let first = tried.insert(rate.to_bits(), ()).is_none();
            let r = model(if first { 1e9 } else { rate })?;
            Ok(Step { rate, ..judge(&slo, if first { 1e9 } else { rate }, &r) })
        })
        .unwrap();
        let (lo, hi) = (got.bracket.0.unwrap(), got.bracket.1.unwrap());
        assert!(lo <= 1000.0 && hi > 1000.0 && hi / lo <= PRECISION, "{lo}..{hi}: {:#?}", got.steps);
        assert!(got.steps.iter().any(|s| !s.pass), "the first round at every rate fails: {:#?}", got.steps);
        for s in got.steps.iter().filter(|s| !s.pass) {
            assert_eq!(got.steps.iter().filter(|t| t.rate == s.rate).count(), 2, "{} tried once: {:#?}", s.rate, got.steps);
        }
    }

    #[test]
    fn a_rate_never_held_has_no_capacity() {
        let slo = Slo::parse("p99<1ms").unwrap();
        let got = search(&slo, 100.0, 1.0, |rate| Ok(judge(&slo, rate, &LoadReport::empty(1, 1)))).unwrap();
        assert_eq!(got.capacity_rps, None);
        assert!(!got.steps.is_empty() && got.steps.iter().all(|s| !s.pass), "{:#?}", got.steps);
    }

    #[test]
    fn no_rate_is_tried_whose_steps_hold_too_few_responses_to_judge() {
        // Every step fails: a p99 needs 1,000 responses, so with steps of 2 s the search stops at 500/s
        // instead of halving down to 1/s, and says how far down it went.
        let slo = Slo::parse("p99<1ms").unwrap();
        let got = search(&slo, 40_000.0, 2.0, |rate| Ok(Step::<String> { rate, achieved: rate, latency_ns: Some(5_000_000), errors: 0, pass: false, flags: vec![] })).unwrap();
        let lowest = got.steps.iter().map(|s| s.rate).fold(f64::MAX, f64::min);
        assert_eq!(lowest, 500.0, "{:?}", got.steps);
        assert_eq!(got.describe(), "none (every rate tried failed, down to 500 req/s)");
        assert_eq!(Slo::parse("p90<1ms").unwrap().min_responses(), 100.0);
    }
}
