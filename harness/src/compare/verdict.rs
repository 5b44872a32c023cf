//! One figure of one configuration, A against B: the rank test over the rounds, the ratio B/A with its
//! interval, and the verdict, judged after the machine's own change of that figure is taken out and
//! against how far the unchanged servers scatter around that change.

pub use crate::model::verdict::{Metric, Verdict};
use crate::stats::rank::{mann_whitney, RankTest};
use crate::stats::rounds::median;

pub const DEFAULT_ALPHA: f64 = 0.05;
/// Changes smaller than this are noise, however significant (criterion's noise threshold does the same).
pub const DEFAULT_NOISE_PCT: f64 = 3.0;
/// A change must lie this many spreads of the servers' scatter beyond their common change, by the nearer
/// end of its corrected interval. In the data of docs/methodology.md ("Comparing two runs") no unchanged
/// server's interval reached 1.4 spreads out and the slowed one stood 3.8 spreads out at its nearest.
/// 2.5 catches one server's 25% change where the machine moved the servers unevenly over ±7% (a scatter
/// of about 5.5%) wherever that server stood in the scatter: at its edge the machine hides 7% of the
/// change (1.25 / 1.07 = 1.17, 2.8 spreads), which 3 spreads would miss.
pub const DEFAULT_SPREADS: f64 = 2.5;

/// The rules of a comparison.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rules {
    pub alpha: f64,
    /// The band [1/(1+n), 1+n] of B/A that counts as noise, n = noise_pct / 100.
    pub noise_pct: f64,
    /// How many spreads of the servers' scatter a change must lie beyond their common change.
    pub spreads: f64,
}

impl Default for Rules {
    fn default() -> Self {
        Rules { alpha: DEFAULT_ALPHA, noise_pct: DEFAULT_NOISE_PCT, spreads: DEFAULT_SPREADS }
    }
}

impl Rules {
    /// The noise band's half-width on the log scale.
    pub fn noise_ln(&self) -> f64 {
        (1.0 + self.noise_pct / 100.0).ln()
    }
}

/// What the machine alone did to one figure of one configuration between the runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Expected {
    /// B/A of the figure that the machine's change alone would give (1: none).
    pub factor: f64,
    /// How far unchanged configurations scatter around `factor` (log scale), where enough were measured.
    pub spread_ln: Option<f64>,
    /// False where the configuration met another cross-CPU regime than `factor` was taken in: then no
    /// change of it can be told from the machine's.
    pub regime_accounted: bool,
}

impl Expected {
    /// The machine did not move.
    pub const NONE: Expected = Expected { factor: 1.0, spread_ln: None, regime_accounted: true };
}

/// One metric of one configuration, A against B.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub metric: Metric,
    pub rounds_a: usize,
    pub rounds_b: usize,
    pub median_a: Option<f64>,
    pub median_b: Option<f64>,
    /// B/A: the Hodges–Lehmann estimate (the median of every ratio b/a).
    pub ratio: Option<f64>,
    /// Its distribution-free 95% interval.
    pub ratio_ci95: Option<(f64, f64)>,
    pub test: Option<RankTest>,
    /// The test of B's rounds divided by the machine's change against A's (absent when it did not move).
    pub corrected: Option<RankTest>,
    /// The interval with the machine's change taken out (absent when it did not move).
    pub corrected_ci95: Option<(f64, f64)>,
    /// How many spreads of the unchanged servers' scatter the ratio stands from their common change.
    pub spreads: Option<f64>,
    pub verdict: Verdict,
}

impl Change {
    pub fn of(metric: Metric, a: &[f64], b: &[f64], rules: Rules, expected: Expected) -> Change {
        let med = |x: &[f64]| (!x.is_empty()).then(|| median(x));
        let test = mann_whitney(a, b);
        let ratio_ci95 = test.and_then(|t| t.ratio_ci95);
        // Dividing B's rounds rather than the interval alone tests the corrected hypothesis too: a server
        // that stood still while the machine sped up has a raw p near 1 and is still a change.
        let corrected = (expected.factor != 1.0)
            .then(|| mann_whitney(a, &b.iter().map(|v| v / expected.factor).collect::<Vec<f64>>()))
            .flatten();
        let width_ln = expected.spread_ln.map_or(rules.noise_ln(), |s| (rules.spreads * s).max(rules.noise_ln()));
        let moved = |t: Option<RankTest>, width_ln: f64| -> Option<bool> {
            let t = t.filter(|t| t.p < rules.alpha)?;
            let (lo, hi) = t.ratio_ci95?;
            (lo.ln() > width_ln).then_some(true).or((hi.ln() < -width_ln).then_some(false))
        };
        // Same only where the whole interval lies within the band: an interval that reaches past it has
        // not shown that the figure held, however near 1 its estimate is.
        let within = |t: Option<RankTest>| t.and_then(|t| t.ratio_ci95).is_some_and(|(lo, hi)| lo.ln() >= -width_ln && hi.ln() <= width_ln);
        let verdict = match (test, moved(corrected.or(test), width_ln)) {
            (None, _) => Verdict::Untested,
            (Some(_), Some(_)) if !expected.regime_accounted => Verdict::Machine,
            (Some(_), Some(up)) if up == metric.higher_is_better() => Verdict::Better,
            (Some(_), Some(_)) => Verdict::Worse,
            // The machine's change explains the move: as measured beyond noise, with that change taken
            // out not. Beyond noise either way but not apart from the rest is `same` or `unclear` (below):
            // the figure moved more than the machine did, by no more than the servers scatter.
            (Some(_), None) if moved(test, rules.noise_ln()).is_some() && moved(corrected.or(test), rules.noise_ln()).is_none() => Verdict::Machine,
            (Some(_), None) if within(corrected.or(test)) => Verdict::Same,
            (Some(_), None) => Verdict::Unclear,
        };
        let ratio = test.map(|t| t.ratio);
        Change {
            metric,
            rounds_a: a.len(),
            rounds_b: b.len(),
            median_a: med(a),
            median_b: med(b),
            ratio,
            ratio_ci95,
            test,
            corrected,
            corrected_ci95: corrected.and_then(|t| t.ratio_ci95),
            spreads: ratio.zip(expected.spread_ln).map(|(r, s)| (r / expected.factor).ln() / s),
            verdict,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULES: Rules = Rules { alpha: 0.05, noise_pct: 3.0, spreads: 3.0 };

    fn spread(centre: f64) -> Vec<f64> {
        [1.0, 1.004, 0.996, 1.002, 0.998, 1.001, 0.999, 1.003].iter().map(|f| f * centre).collect()
    }

    fn machine(factor: f64, spread_ln: Option<f64>) -> Expected {
        Expected { factor, spread_ln, regime_accounted: true }
    }

    #[test]
    fn verdict_follows_the_direction_of_the_metric() {
        let (a, lower) = (spread(100.0), spread(80.0));
        let none = Expected::NONE;
        assert_eq!(Change::of(Metric::RequestsPerS, &a, &lower, RULES, none).verdict, Verdict::Worse);
        assert_eq!(Change::of(Metric::P99, &a, &lower, RULES, none).verdict, Verdict::Better);
        assert_eq!(Change::of(Metric::CpuPerRequest, &lower, &a, RULES, none).verdict, Verdict::Worse);
        assert_eq!(Change::of(Metric::RequestsPerS, &a, &a, RULES, none).verdict, Verdict::Same);
        assert_eq!(Change::of(Metric::RequestsPerS, &a, &[90.0], RULES, none).verdict, Verdict::Untested);
    }

    #[test]
    fn a_significant_change_inside_the_noise_band_is_the_same() {
        // +1.5%, clearly significant over 8 rounds each, but below the 3% band.
        let c = Change::of(Metric::RequestsPerS, &spread(100.0), &spread(101.5), RULES, Expected::NONE);
        assert!(c.test.unwrap().p < 0.01);
        assert_eq!(c.verdict, Verdict::Same);
    }

    #[test]
    fn a_machine_change_is_not_a_contestant_change() {
        // Everything 20% faster on a machine 20% faster: the machine moved.
        let (a, b) = (spread(100.0), spread(120.0));
        assert_eq!(Change::of(Metric::RequestsPerS, &a, &b, RULES, machine(1.2, None)).verdict, Verdict::Machine);
        assert_eq!(Change::of(Metric::CpuPerRequest, &b, &a, RULES, machine(1.0 / 1.2, None)).verdict, Verdict::Machine);
        // 0.64x on a machine 20% faster is still worse, judged on the corrected interval.
        let c = Change::of(Metric::RequestsPerS, &a, &spread(64.0 * 1.2), RULES, machine(1.2, None));
        assert_eq!(c.verdict, Verdict::Worse);
        let (lo, hi) = c.corrected_ci95.unwrap();
        assert!(lo < 0.64 && 0.64 < hi, "({lo}, {hi})");
        // A server that held still while the machine ran 20% faster moved apart from the rest: its raw
        // test sees nothing, the corrected one does.
        let c = Change::of(Metric::RequestsPerS, &a, &a, RULES, machine(1.2, None));
        assert!(c.test.unwrap().p > 0.9 && c.corrected.unwrap().p < 0.01);
        assert_eq!(c.verdict, Verdict::Worse);
    }

    #[test]
    fn a_change_within_the_servers_scatter_is_not_apart_from_them() {
        // 0.85x where unchanged servers scatter by 7% around the machine's 0.93x: 1.3 spreads out, its
        // whole interval within the band a change must clear (2.5 spreads), same; 0.95x is the machine's
        // move, within noise once it is taken out; 0.66x stands 4.6 spreads out, worse.
        let a = spread(100.0);
        let scatter = machine(0.93, Some(0.07));
        let near = Change::of(Metric::RequestsPerS, &a, &spread(85.0), RULES, scatter);
        assert_eq!(near.verdict, Verdict::Same, "{near:?}");
        assert!((near.spreads.unwrap() - (0.85f64 / 0.93).ln() / 0.07).abs() < 0.01);
        assert_eq!(Change::of(Metric::RequestsPerS, &a, &spread(95.0), RULES, scatter).verdict, Verdict::Machine);
        assert_eq!(Change::of(Metric::RequestsPerS, &a, &spread(66.0), RULES, scatter).verdict, Verdict::Worse);
        // Without the scatter the noise band alone would have called the first worse.
        assert_eq!(Change::of(Metric::RequestsPerS, &a, &spread(85.0), RULES, machine(0.93, None)).verdict, Verdict::Worse);
    }

    #[test]
    fn a_change_the_machine_did_not_make_is_never_the_machine_s() {
        // 10% slower where the machine stood still and unchanged servers scatter by 2.4% (a band of 2.5
        // spreads, 6%): beyond noise, its interval reaching into the band, so not shown apart from the
        // rest. The machine's change (none) does not explain it: unclear, not machine.
        let a = [100.0, 94.0, 106.0, 97.0, 103.0, 95.0, 105.0, 98.0, 102.0];
        let b: Vec<f64> = a.iter().map(|v| v * 0.9).collect();
        let c = Change::of(Metric::RequestsPerS, &a, &b, RULES, machine(1.0, Some(0.024)));
        let (_, hi) = c.ratio_ci95.unwrap();
        assert!(hi.ln() > -2.5 * 0.024 && hi.ln() < -RULES.noise_ln(), "the near end within the scatter's band, beyond noise: {hi}");
        assert_eq!(c.verdict, Verdict::Unclear, "{c:?}");
        // A server that moved 12% with a machine that sped up 12%: the machine's.
        let c = Change::of(Metric::RequestsPerS, &a, &a.map(|v| v * 1.12), RULES, machine(1.12, Some(0.024)));
        assert_eq!(c.verdict, Verdict::Machine, "{c:?}");
    }

    #[test]
    fn a_change_the_machine_regime_can_explain_is_never_better_or_worse() {
        let mut e = machine(1.0, Some(0.01));
        e.regime_accounted = false;
        let (a, b) = (spread(100.0), spread(60.0));
        assert_eq!(Change::of(Metric::RequestsPerS, &a, &b, RULES, e).verdict, Verdict::Machine);
        assert_eq!(Change::of(Metric::CpuPerRequest, &b, &a, RULES, e).verdict, Verdict::Machine);
        assert_eq!(Change::of(Metric::RequestsPerS, &a, &a, RULES, e).verdict, Verdict::Same);
    }

    #[test]
    fn ratio_and_its_interval() {
        let c = Change::of(Metric::RequestsPerS, &spread(100.0), &spread(90.0), RULES, Expected::NONE);
        assert!((c.ratio.unwrap() - 0.9).abs() < 1e-9);
        let (lo, hi) = c.ratio_ci95.unwrap();
        assert!(lo < 0.9 && 0.9 < hi && hi < 1.0, "({lo}, {hi})");
        assert!((c.median_a.unwrap() - 100.05).abs() < 1e-9 && (c.median_b.unwrap() - 90.045).abs() < 1e-9);
    }

    #[test]
    fn a_noisy_small_change_is_unclear_not_same() {
        // +1% on a spread of about ±5%: no change is shown, and neither is its absence, since the interval
        // reaches past the ±3% band.
        let a = [100.0, 95.0, 105.0, 98.0, 102.0];
        let b = [101.0, 96.0, 106.0, 99.0, 103.0];
        let c = Change::of(Metric::RequestsPerS, &a, &b, RULES, Expected::NONE);
        assert_eq!(c.verdict, Verdict::Unclear, "{c:?}");
        assert!(c.test.unwrap().p > 0.5);
        let (lo, hi) = c.ratio_ci95.unwrap();
        assert!(lo < 0.97 && hi > 1.03, "({lo}, {hi})");
        // The same rounds against a band wider than their interval: shown to be the same.
        let wide = Rules { noise_pct: 15.0, ..RULES };
        assert_eq!(Change::of(Metric::RequestsPerS, &a, &b, wide, Expected::NONE).verdict, Verdict::Same);
    }
}
