//! An A/B run (`bench NAME --baseline REV`, or `bench --ab DIR_A DIR_B`): two versions of one contestant
//! measured in one run, their rounds paired back to back (A then B, then B then A: ABBA), and B/A of each
//! figure estimated from the pairs (`stats::paired`: the Hodges–Lehmann estimate of the paired log-ratios
//! with the Wilcoxon signed-rank 95% interval). What the machine did to both rounds of a pair cancels in
//! their ratio, so no model of its drift is needed, and the run has no control.

use serde::{Deserialize, Serialize};

use super::measurement::{Measurement, Round};
use super::verdict::{Metric, Verdict};
use crate::stats::paired::{paired_ratio, PairedRatio, PairedVerdict};

/// What run.json's `config.ab` records of the options of an A/B run. `rounds`, `target_ci_pct` and
/// `max_rounds` of the config then count pairs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AbConfig {
    /// `--baseline REV` as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    /// `--ab DIR_A DIR_B` as given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub folders: Vec<String>,
    /// An interval of B/A wholly beyond ±this many percent is a change (better or worse).
    pub noise_pct: f64,
    /// An interval wholly within ±this many percent is no change (same); absent in runs that judged both
    /// by `noise_pct`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_pct: Option<f64>,
    /// `--fail-on` as it reads in full ("worse:rps,p99,cpu").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_on: Option<String>,
}

impl AbConfig {
    /// The bands the run's verdicts are read against.
    pub fn bands(&self) -> Bands {
        Bands { change_pct: self.noise_pct, same_pct: self.same_pct.unwrap_or(self.noise_pct) }
    }
}

/// The two bands an A/B verdict is read against, in percent of B/A: a change is shown when the interval
/// lies wholly beyond ±`change_pct`, its absence when it lies wholly within ±`same_pct`. The second may be
/// wider than the first: an interval narrow enough to show a change of 1% takes far more pairs than one that
/// shows that no change reaches 2% (docs/ab.md, "Checking the method, and the defaults").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bands {
    pub change_pct: f64,
    pub same_pct: f64,
}

impl Bands {
    /// One band for both readings.
    pub fn one(pct: f64) -> Bands {
        Bands { change_pct: pct, same_pct: pct }
    }
}

impl Default for Bands {
    fn default() -> Bands {
        Bands { change_pct: DEFAULT_CHANGE_PCT, same_pct: DEFAULT_SAME_PCT }
    }
}

/// Which version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    A,
    B,
}

impl Side {
    pub fn letter(self) -> &'static str {
        match self {
            Side::A => "A",
            Side::B => "B",
        }
    }
    pub fn other(self) -> Side {
        match self {
            Side::A => Side::B,
            Side::B => Side::A,
        }
    }
}

/// The two versions and their pairs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbRun {
    pub a: AbSide,
    pub b: AbSide,
    pub pairs: Vec<AbPair>,
    /// Why the pairs ended: `decided` (every figure the gate selects better, worse or same), `count`
    /// (--rounds N pairs that count), `most` (--max-rounds pairs run), `interrupted`; absent while they run.
    /// Runs of an earlier rule say `settled` (the req/s interval ±1% wide or wholly beyond the band).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
    /// With `--profile`: B's profile against A's, per request (each side's own is in its measurement).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile_change: Option<crate::model::profile::ProfileChange>,
}

/// One version: its name in every table and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbSide {
    /// Its contestant name in this run: `NAME@REV` for a baseline, `NAME` for the working tree.
    pub name: String,
    /// Where it came from, in words: "git revision HEAD~1 (commit 1a2b…)", "the working tree", "folder …".
    pub from: String,
    /// The commit of a baseline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Its folder as built (a baseline's is in a worktree removed after the run).
    pub dir: String,
}

/// One pair: a measured round of each version, back to back.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AbPair {
    /// 1-based, over every pair run (those left out too).
    pub index: u32,
    /// Which version ran first: A in odd pairs, B in even ones (A B, B A, A B, ...: ABBA).
    pub first: Side,
    /// The `index` of A's and of B's measured round.
    pub a_round: u32,
    pub b_round: u32,
}

/// The figures of one pair, as the estimates read them.
#[derive(Debug, Clone, Copy)]
pub struct PairFigures<'r> {
    pub pair: AbPair,
    pub a: &'r Round,
    pub b: &'r Round,
}

impl PairFigures<'_> {
    /// Both rounds count (neither disturbed): the pair is in the estimates.
    pub fn counts(&self) -> bool {
        self.a.counts() && self.b.counts()
    }
    /// B/A of one figure, where both rounds have it.
    pub fn ratio(&self, metric: Metric) -> Option<f64> {
        Some(value(metric, self.b)? / value(metric, self.a)?).filter(|r| r.is_finite() && *r > 0.0)
    }
}

/// A round's value of a figure for pairing: req/s as the client measured it (the pairing cancels the
/// machine's drift, which no factor then corrects), the round's own p99, server CPU per request.
pub fn value(metric: Metric, r: &Round) -> Option<f64> {
    match metric {
        Metric::RequestsPerS => Some(r.load.requests_per_s()).filter(|v| v.is_finite()),
        _ => metric.of(r),
    }
    .filter(|v| *v > 0.0)
}

/// B/A of one figure over the pairs, read against the noise band.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AbEstimate {
    pub metric: Metric,
    /// Pairs that count and have the figure on both sides.
    pub pairs: usize,
    /// Absent below two such pairs; its interval absent below six.
    pub ratio: Option<PairedRatio>,
    pub bands: Bands,
    /// Higher, lower, within the band, or unclear; absent without an interval.
    pub reading: Option<PairedVerdict>,
    /// In `compare`'s words: better or worse when the interval lies wholly beyond the change band (by the
    /// metric's direction), same when it lies wholly within the same band, unclear when neither, untested
    /// without an interval.
    pub verdict: Verdict,
}

impl AbEstimate {
    pub fn of(metric: Metric, pairs: &[(f64, f64)], bands: Bands) -> AbEstimate {
        let ratio = paired_ratio(pairs);
        let reading = ratio.filter(|r| r.ci95.is_some()).map(|r| r.verdict(bands.change_pct / 100.0, bands.same_pct / 100.0));
        let verdict = match reading {
            None => Verdict::Untested,
            Some(PairedVerdict::Higher) if metric.higher_is_better() => Verdict::Better,
            Some(PairedVerdict::Lower) if !metric.higher_is_better() => Verdict::Better,
            Some(PairedVerdict::Higher | PairedVerdict::Lower) => Verdict::Worse,
            Some(PairedVerdict::Within) => Verdict::Same,
            Some(PairedVerdict::Unclear) => Verdict::Unclear,
        };
        AbEstimate { metric, pairs: pairs.len(), ratio, bands, reading, verdict }
    }

    /// Whether the pairs have answered for this figure: better, worse or same.
    pub fn decided(&self) -> bool {
        matches!(self.verdict, Verdict::Better | Verdict::Worse | Verdict::Same)
    }

    /// The smallest change the pairs could tell apart: the interval's half-width, in percent.
    pub fn resolution_pct(&self) -> Option<f64> {
        self.ratio.and_then(|r| r.ci95_half_width_pct())
    }

    /// What the estimate says, as the summary leads with it: "B is 3.2% slower (95% CI 2.1% to 4.4%)";
    /// "no difference beyond ±2% (B/A 1.002, 95% CI 0.995 to 1.008)" when the interval lies within the same
    /// band; "B is 1.4% slower (95% CI 0.5% to 2.4%): not shown beyond ±1%, nor within ±2%" when it lies on
    /// one side of 1 and neither; "B/A 0.998 (95% CI 0.978 to 1.028): not shown beyond ±1%, nor within ±2%"
    /// when it holds 1 and reaches past the same band.
    pub fn sentence(&self) -> String {
        let Some(r) = self.ratio else {
            return format!("no estimate: {} pair(s) that count with this figure on both sides", self.pairs);
        };
        let Some((lo, hi)) = r.ci95 else {
            return format!("too few pairs for an interval (B/A {:.3} from {} pairs; 6 give one)", r.ratio, r.pairs);
        };
        let (change, same) = (fmt_pct(self.bands.change_pct), fmt_pct(self.bands.same_pct));
        let neither = if change == same { format!("not shown beyond ±{change}%, nor within it") } else { format!("not shown beyond ±{change}%, nor within ±{same}%") };
        match self.reading {
            Some(PairedVerdict::Higher | PairedVerdict::Lower) => self.change(r.ratio, lo, hi),
            Some(PairedVerdict::Within) => format!("no difference beyond ±{same}% (B/A {:.3}, 95% CI {lo:.3} to {hi:.3})", r.ratio),
            _ if hi < 1.0 || lo > 1.0 => format!("{}: {neither}", self.change(r.ratio, lo, hi)),
            _ => format!("B/A {:.3} (95% CI {lo:.3} to {hi:.3}): {neither}", r.ratio),
        }
    }

    /// "B is 3.2% slower (95% CI 2.1% to 4.4%)", for an interval on one side of 1.
    fn change(&self, ratio: f64, lo: f64, hi: f64) -> String {
        let (more, less) = match self.metric {
            Metric::RequestsPerS => ("B is {}% faster", "B is {}% slower"),
            Metric::P99 => ("B's p99 is {}% higher", "B's p99 is {}% lower"),
            Metric::CpuPerRequest => ("B uses {}% more CPU per request", "B uses {}% less CPU per request"),
        };
        let pct = |x: f64| format!("{:.1}", x * 100.0);
        if ratio >= 1.0 {
            format!("{} (95% CI {}% to {}%)", more.replace("{}", &pct(ratio - 1.0)), pct(lo - 1.0), pct(hi - 1.0))
        } else {
            format!("{} (95% CI {}% to {}%)", less.replace("{}", &pct(1.0 - ratio)), pct(1.0 - hi), pct(1.0 - lo))
        }
    }
}

/// A percentage without trailing zeros: 1, 0.5, 2.25.
fn fmt_pct(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

impl AbRun {
    /// A version's name.
    pub fn name(&self, side: Side) -> &str {
        match side {
            Side::A => &self.a.name,
            Side::B => &self.b.name,
        }
    }

    /// A version's measurement among the run's: the one configuration of an A/B run.
    pub fn measurement<'r>(&self, measurements: &'r [Measurement], side: Side) -> Option<&'r Measurement> {
        measurements.iter().find(|m| m.contestant == self.name(side))
    }

    /// Each pair with its two rounds (a pair whose rounds are missing is left out).
    pub fn figures<'r>(&self, measurements: &'r [Measurement]) -> Vec<PairFigures<'r>> {
        let (Some(ma), Some(mb)) = (self.measurement(measurements, Side::A), self.measurement(measurements, Side::B)) else { return Vec::new() };
        let round = |m: &'r Measurement, index: u32| m.rounds.iter().find(|r| !r.warmup && r.index == index);
        self.pairs
            .iter()
            .filter_map(|p| Some(PairFigures { pair: *p, a: round(ma, p.a_round)?, b: round(mb, p.b_round)? }))
            .collect()
    }

    /// (A, B) of one figure over the pairs that count.
    pub fn values(&self, measurements: &[Measurement], metric: Metric) -> Vec<(f64, f64)> {
        self.figures(measurements).iter().filter(|f| f.counts()).filter_map(|f| Some((value(metric, f.a)?, value(metric, f.b)?))).collect()
    }

    /// B/A of each figure (`Metric::ALL`), judged against the bands.
    pub fn estimates(&self, measurements: &[Measurement], bands: Bands) -> Vec<AbEstimate> {
        Metric::ALL.iter().map(|&m| AbEstimate::of(m, &self.values(measurements, m), bands)).collect()
    }

    /// Pairs run, and those that count.
    pub fn counted(&self, measurements: &[Measurement]) -> (usize, usize) {
        (self.pairs.len(), self.figures(measurements).iter().filter(|f| f.counts()).count())
    }
}

/// The change band of an A/B run: an interval of B/A wholly beyond ±1% is a change, a third of `compare`'s
/// band between runs.
pub const DEFAULT_CHANGE_PCT: f64 = 1.0;

/// The same band of an A/B run: an interval wholly within ±2% is no change. On a 2-CPU VM an unchanged
/// version's interval reaches ±1% only after 100 pairs or more, while within ±2% it lay after 36 to 62 in
/// the runs that got there; a wider band let a real 3% slowdown read `same` (docs/ab.md, "Checking the
/// method, and the defaults", with the series).
pub const DEFAULT_SAME_PCT: f64 = 2.0;

/// The fewest pairs that count before `--rounds auto` may end an A/B run's pairs: an interval exists from
/// 6, but its edges are then the extreme pairs, and stopping at the first lucky look would call unchanged
/// versions different (or the same) more often than the 95% promises.
pub const MIN_PAIRS: usize = 10;

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(ratios: &[f64]) -> Vec<(f64, f64)> {
        ratios.iter().enumerate().map(|(i, r)| (1000.0 + i as f64 * 37.0, (1000.0 + i as f64 * 37.0) * r)).collect()
    }

    #[test]
    fn the_sentences_say_how_much_and_which_way() {
        let slower = pairs(&[0.968, 0.97, 0.965, 0.969, 0.972, 0.966, 0.967, 0.971, 0.968, 0.97]);
        let e = AbEstimate::of(Metric::RequestsPerS, &slower, Bands::one(1.0));
        assert_eq!(e.verdict, Verdict::Worse);
        let s = e.sentence();
        assert!(s.starts_with("B is 3.2% slower (95% CI "), "{s}");
        let p99 = AbEstimate::of(Metric::P99, &slower, Bands::one(1.0));
        assert_eq!(p99.verdict, Verdict::Better);
        assert!(p99.sentence().starts_with("B's p99 is 3.2% lower"), "{}", p99.sentence());
        let cpu = AbEstimate::of(Metric::CpuPerRequest, &pairs(&[1.05, 1.04, 1.06, 1.05, 1.045, 1.055, 1.05, 1.048]), Bands::one(1.0));
        assert_eq!(cpu.verdict, Verdict::Worse);
        assert!(cpu.sentence().starts_with("B uses 5.0% more CPU per request (95% CI 4."), "{}", cpu.sentence());
        let same = AbEstimate::of(Metric::RequestsPerS, &pairs(&[1.001, 0.999, 1.002, 0.998, 1.0, 1.001, 0.9995, 1.0005]), Bands::one(1.0));
        assert_eq!(same.verdict, Verdict::Same);
        assert!(same.sentence().starts_with("no difference beyond ±1% (B/A 1.000, 95% CI 0.99"), "{}", same.sentence());
        let unsure = AbEstimate::of(Metric::RequestsPerS, &pairs(&[0.95, 1.04, 0.97, 1.0, 0.93, 1.02, 0.99, 0.96]), Bands::one(1.0));
        assert_eq!((unsure.verdict, unsure.reading), (Verdict::Unclear, Some(PairedVerdict::Unclear)));
        assert!(unsure.sentence().starts_with("B/A 0.9") && unsure.sentence().ends_with(": not shown beyond ±1%, nor within it"), "{}", unsure.sentence());
        let small = AbEstimate::of(Metric::RequestsPerS, &pairs(&[0.985, 0.995, 0.98, 0.997, 0.986, 0.993, 0.984, 0.996, 0.987, 0.994]), Bands::one(1.0));
        assert_eq!((small.verdict, small.reading), (Verdict::Unclear, Some(PairedVerdict::Unclear)), "{small:?}");
        let (lo, hi) = small.ratio.unwrap().ci95.unwrap();
        assert!(lo < 0.99 && hi < 1.0, "{small:?}");
        let said = small.sentence();
        assert!(said.starts_with("B is 1.") && said.contains("% slower (95% CI ") && said.ends_with("): not shown beyond ±1%, nor within it"), "{said}");
        // Against a wider same band the same pairs are shown to be no larger than 2%.
        let wide = AbEstimate::of(Metric::RequestsPerS, &pairs(&[0.985, 0.995, 0.98, 0.997, 0.986, 0.993, 0.984, 0.996, 0.987, 0.994]), Bands { change_pct: 1.0, same_pct: 2.0 });
        assert_eq!(wide.verdict, Verdict::Same, "{wide:?}");
        assert!(wide.sentence().starts_with("no difference beyond ±2% (B/A 0.9"), "{}", wide.sentence());
        let neither = AbEstimate::of(Metric::RequestsPerS, &pairs(&[0.95, 1.04, 0.97, 1.0, 0.93, 1.02, 0.99, 0.96]), Bands { change_pct: 1.0, same_pct: 2.0 });
        assert!(neither.sentence().ends_with(": not shown beyond ±1%, nor within ±2%"), "{}", neither.sentence());
        assert!(wide.resolution_pct().is_some_and(|w| w > 0.0 && w < 1.0), "{wide:?}");
        let few = AbEstimate::of(Metric::RequestsPerS, &pairs(&[0.9, 0.91, 0.92]), Bands::one(1.0));
        assert_eq!(few.verdict, Verdict::Untested);
        assert!(few.sentence().contains("too few pairs"), "{}", few.sentence());
        assert_eq!(AbEstimate::of(Metric::RequestsPerS, &[], Bands::one(0.5)).verdict, Verdict::Untested);
        assert_eq!(fmt_pct(0.5), "0.5");
    }
}
