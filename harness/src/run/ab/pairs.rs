//! The pairs of an A/B run: a round of each version back to back, A first in one pair and B first in the
//! next (ABBA: over two pairs a steady drift of the machine weighs on both versions alike, and so does
//! going first), each pair judged by its req/s ratio B/A, in which what the machine did to both rounds
//! cancels. Pairs go on until every figure the gate selects is decided (`Rounds::Auto`: better, worse or
//! same by its paired 95% interval against the bands, from `MIN_PAIRS` pairs that count on; req/s without
//! a gate) or until a count of pairs that count (`Rounds::Fixed`), and never beyond `max_pairs` pairs run,
//! left-out ones included; what is undecided then reads `unclear`. A pair counts when both its rounds do
//! (neither was disturbed by other work on the server's CPUs) and both served requests.
//!
//! The loop is generic over how one round of one version is measured (`PairedRounds`): the runner measures
//! real servers (`measure.rs`), a test a fake machine.

pub use crate::model::ab::MIN_PAIRS;
use crate::model::ab::{AbEstimate, AbPair, Bands, Side};
use crate::model::verdict::Metric;
use crate::stats::paired::{paired_ratio, PairedRatio};

use crate::run::options::Rounds;

/// What the loop reads of one round.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measured {
    /// The round's `index` among its version's measured rounds.
    pub index: u32,
    /// Each figure as pairing reads it (`model::ab::value`), in `Metric::ALL` order.
    pub figures: [Option<f64>; 3],
    /// It counts (not disturbed).
    pub counts: bool,
}

impl Measured {
    /// A round with req/s alone (a test's, or a round without the other figures).
    pub fn requests_per_s(index: u32, requests_per_s: f64, counts: bool) -> Measured {
        Measured { index, figures: [Some(requests_per_s), None, None], counts }
    }

    fn figure(&self, metric: Metric) -> Option<f64> {
        Metric::ALL.iter().position(|m| *m == metric).and_then(|k| self.figures[k]).filter(|v| v.is_finite() && *v > 0.0)
    }
}

/// How the rounds of the two versions are measured.
pub trait PairedRounds {
    /// One measured round of `side` for pair `pair` (1-based). None when the run was interrupted; an
    /// error ends the run (a version that failed).
    fn round(&mut self, side: Side, pair: u32) -> anyhow::Result<Option<Measured>>;
    /// After each pair: the pair, whether it counts, and B/A of req/s over the pairs that count so far.
    fn paired(&mut self, pair: &AbPair, counts: bool, requests_per_s: Option<&PairedRatio>);
}

/// When the pairs end.
#[derive(Debug, Clone, PartialEq)]
pub struct PairPlan {
    /// `auto` (until decided) or a count of pairs that count.
    pub rounds: Rounds,
    /// The most pairs run, left-out ones included.
    pub max_pairs: u32,
    pub bands: Bands,
    /// The figures that must be decided before `auto` stops: those `--fail-on` selects, req/s without it.
    pub decide: Vec<Metric>,
}

/// Why the pairs ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// `auto`: every figure of `PairPlan::decide` better, worse or same.
    Decided,
    /// A fixed count of pairs that count.
    Count,
    /// `max_pairs` run first.
    Most,
    Interrupted,
}

impl Ended {
    /// Its word in run.json (`ab.ended`).
    pub fn word(self) -> &'static str {
        match self {
            Ended::Decided => "decided",
            Ended::Count => "count",
            Ended::Most => "most",
            Ended::Interrupted => "interrupted",
        }
    }
}

/// The pairs run and what they say.
#[derive(Debug, Clone, PartialEq)]
pub struct PairsOutcome {
    pub pairs: Vec<AbPair>,
    /// (A, B) of the pairs that count.
    pub counted: Vec<(Measured, Measured)>,
    pub requests_per_s: Option<PairedRatio>,
    pub ended: Ended,
}

impl PairsOutcome {
    /// (A, B) of one figure over the pairs that count where both rounds have it.
    pub fn values(&self, metric: Metric) -> Vec<(f64, f64)> {
        self.counted.iter().filter_map(|(a, b)| Some((a.figure(metric)?, b.figure(metric)?))).collect()
    }

    /// B/A of one figure so far, judged against the bands.
    pub fn estimate(&self, metric: Metric, bands: Bands) -> AbEstimate {
        AbEstimate::of(metric, &self.values(metric), bands)
    }
}

/// Which version goes first in pair `pair` (1-based): A in odd pairs, B in even ones (A B, B A, A B, ...).
pub fn first_of(pair: u32) -> Side {
    if pair % 2 == 1 {
        Side::A
    } else {
        Side::B
    }
}

/// Runs pairs until `plan` says they are enough.
pub fn run_pairs(plan: &PairPlan, rounds: &mut dyn PairedRounds) -> anyhow::Result<PairsOutcome> {
    let mut out = PairsOutcome { pairs: Vec::new(), counted: Vec::new(), requests_per_s: None, ended: Ended::Most };
    for index in 1..=plan.max_pairs {
        if let Some(ended) = enough(plan, &out) {
            out.ended = ended;
            return Ok(out);
        }
        let first = first_of(index);
        let Some(x) = rounds.round(first, index)? else { return Ok(interrupted(out)) };
        let Some(y) = rounds.round(first.other(), index)? else { return Ok(interrupted(out)) };
        let (a, b) = if first == Side::A { (x, y) } else { (y, x) };
        let pair = AbPair { index, first, a_round: a.index, b_round: b.index };
        let served = |m: &Measured| m.figure(Metric::RequestsPerS).is_some();
        let counts = a.counts && b.counts && served(&a) && served(&b);
        if counts {
            out.counted.push((a, b));
            out.requests_per_s = paired_ratio(&out.values(Metric::RequestsPerS));
        }
        rounds.paired(&pair, counts, out.requests_per_s.as_ref());
        out.pairs.push(pair);
    }
    out.ended = enough(plan, &out).unwrap_or(Ended::Most);
    Ok(out)
}

fn interrupted(mut out: PairsOutcome) -> PairsOutcome {
    out.ended = Ended::Interrupted;
    out
}

/// Whether the pairs so far are enough, and why.
fn enough(plan: &PairPlan, so_far: &PairsOutcome) -> Option<Ended> {
    let n = so_far.counted.len();
    match plan.rounds {
        Rounds::Fixed(want) => (n >= want as usize).then_some(Ended::Count),
        Rounds::Auto { .. } => {
            (n >= MIN_PAIRS && plan.decide.iter().all(|&m| so_far.estimate(m, plan.bands).decided())).then_some(Ended::Decided)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rounds read from a list per version; a round whose value is negative is disturbed.
    struct Listed {
        a: Vec<f64>,
        b: Vec<f64>,
        order: Vec<Side>,
        stop_after: Option<usize>,
    }

    impl PairedRounds for Listed {
        fn round(&mut self, side: Side, _pair: u32) -> anyhow::Result<Option<Measured>> {
            if self.stop_after.is_some_and(|n| self.order.len() >= n) {
                return Ok(None);
            }
            self.order.push(side);
            let list = if side == Side::A { &self.a } else { &self.b };
            let index = self.order.iter().filter(|s| **s == side).count();
            let v = list[(index - 1) % list.len()];
            Ok(Some(Measured::requests_per_s(index as u32, v.abs(), v > 0.0)))
        }
        fn paired(&mut self, _: &AbPair, _: bool, _: Option<&PairedRatio>) {}
    }

    fn listed(a: &[f64], b: &[f64]) -> Listed {
        Listed { a: a.to_vec(), b: b.to_vec(), order: Vec::new(), stop_after: None }
    }

    #[test]
    fn the_versions_take_turns_going_first() {
        let mut r = listed(&[100.0], &[99.0]);
        let plan = PairPlan { rounds: Rounds::Fixed(4), max_pairs: 8, bands: Bands::one(1.0), decide: vec![Metric::RequestsPerS] };
        let out = run_pairs(&plan, &mut r).unwrap();
        use Side::{A, B};
        assert_eq!(r.order, [A, B, B, A, A, B, B, A]);
        assert_eq!(out.pairs.iter().map(|p| p.first).collect::<Vec<_>>(), [A, B, A, B]);
        assert_eq!(out.ended, Ended::Count);
        assert_eq!((out.pairs[1].a_round, out.pairs[1].b_round), (2, 2));
    }

    #[test]
    fn a_disturbed_round_leaves_its_pair_out_and_another_is_run() {
        // A's second round is disturbed: pair 2 does not count, a fifth pair is run.
        let mut r = listed(&[100.0, -100.0, 100.0, 100.0, 100.0], &[99.0]);
        let plan = PairPlan { rounds: Rounds::Fixed(4), max_pairs: 8, bands: Bands::one(1.0), decide: vec![Metric::RequestsPerS] };
        let out = run_pairs(&plan, &mut r).unwrap();
        assert_eq!((out.pairs.len(), out.counted.len()), (5, 4));
        // At most max_pairs, left-out ones included.
        let mut r = listed(&[100.0, -100.0], &[99.0]);
        let out = run_pairs(&PairPlan { rounds: Rounds::Fixed(4), max_pairs: 5, bands: Bands::one(1.0), decide: vec![Metric::RequestsPerS] }, &mut r).unwrap();
        assert_eq!((out.pairs.len(), out.counted.len(), out.ended), (5, 3, Ended::Most));
    }

    #[test]
    fn auto_stops_once_decided_and_not_before_the_fewest_pairs() {
        // B steadily 5% slower while the machine swings: wholly beyond ±1% as soon as it may stop.
        let a: Vec<f64> = (0..40).map(|i| if i % 3 == 0 { 70_000.0 } else { 100_000.0 }).collect();
        let b: Vec<f64> = a.iter().enumerate().map(|(i, v)| v * 0.95 * (1.0 + 0.002 * ((i % 5) as f64 - 2.0))).collect();
        // Pairs are A-first and B-first in turn, so a version's k-th round is in pair k.
        let mut r = listed(&a, &b);
        let plan = PairPlan { rounds: Rounds::Auto { target_ci_pct: 1.0 }, max_pairs: 200, bands: Bands::one(1.0), decide: vec![Metric::RequestsPerS] };
        let out = run_pairs(&plan, &mut r).unwrap();
        assert_eq!((out.ended, out.pairs.len()), (Ended::Decided, MIN_PAIRS));
        let ratio = out.requests_per_s.unwrap();
        assert!((ratio.ratio - 0.95).abs() < 0.003, "{ratio:?}");
        // Identical versions with a little noise: decided once the interval lies within ±1%.
        let same: Vec<f64> = (0..40).map(|i| 1000.0 * (1.0 + 0.004 * ((i * 7 % 11) as f64 - 5.0) / 5.0)).collect();
        let mut r = listed(&same, &same.iter().rev().copied().collect::<Vec<_>>());
        let out = run_pairs(&plan, &mut r).unwrap();
        assert_eq!(out.ended, Ended::Decided);
        let (lo, hi) = out.requests_per_s.unwrap().ci95.unwrap();
        assert!(lo >= 0.99 && hi <= 1.01, "({lo}, {hi})");
        // Rounds that swing by ±8% never narrow to ±1% in 40 pairs: the pairs run to the most allowed, and
        // the figure reads unclear.
        let swing: Vec<f64> = (0..40).map(|i| 1000.0 * (1.0 + 0.08 * ((i * 7 % 11) as f64 - 5.0) / 5.0)).collect();
        let mut r = listed(&swing, &swing.iter().rev().copied().collect::<Vec<_>>());
        let out = run_pairs(&PairPlan { max_pairs: 40, ..plan.clone() }, &mut r).unwrap();
        assert_eq!((out.ended, out.pairs.len()), (Ended::Most, 40));
        assert_eq!(out.estimate(Metric::RequestsPerS, Bands::one(1.0)).verdict, crate::model::verdict::Verdict::Unclear);
    }

    #[test]
    fn auto_waits_for_every_figure_the_gate_selects() {
        // req/s is clearly 5% lower from the start; the second figure swings and is never decided.
        let mut rounds: Vec<(Measured, Measured)> = Vec::new();
        for i in 0..60u32 {
            let swing = 1.0 + 0.08 * f64::from(i * 7 % 11) / 5.0 - 0.08;
            let a = Measured { index: i + 1, figures: [Some(1000.0), Some(500.0), None], counts: true };
            let b = Measured { index: i + 1, figures: [Some(950.0 + f64::from(i % 3)), Some(500.0 * swing), None], counts: true };
            rounds.push((a, b));
        }
        struct Figures(Vec<(Measured, Measured)>);
        impl PairedRounds for Figures {
            fn round(&mut self, side: Side, pair: u32) -> anyhow::Result<Option<Measured>> {
                let (a, b) = self.0[pair as usize - 1];
                Ok(Some(if side == Side::A { a } else { b }))
            }
            fn paired(&mut self, _: &AbPair, _: bool, _: Option<&PairedRatio>) {}
        }
        let plan = |decide: Vec<Metric>| PairPlan { rounds: Rounds::Auto { target_ci_pct: 1.0 }, max_pairs: 60, bands: Bands::one(1.0), decide };
        let out = run_pairs(&plan(vec![Metric::RequestsPerS]), &mut Figures(rounds.clone())).unwrap();
        assert_eq!((out.ended, out.pairs.len()), (Ended::Decided, MIN_PAIRS));
        let out = run_pairs(&plan(vec![Metric::RequestsPerS, Metric::P99]), &mut Figures(rounds)).unwrap();
        assert_eq!((out.ended, out.pairs.len()), (Ended::Most, 60));
    }

    #[test]
    fn an_interrupt_ends_the_pairs_with_what_was_measured() {
        let mut r = listed(&[100.0], &[99.0]);
        r.stop_after = Some(5);
        let out = run_pairs(&PairPlan { rounds: Rounds::Fixed(10), max_pairs: 20, bands: Bands::one(1.0), decide: vec![Metric::RequestsPerS] }, &mut r).unwrap();
        assert_eq!((out.ended, out.pairs.len()), (Ended::Interrupted, 2));
        assert_eq!(first_of(1), Side::A);
        assert_eq!(first_of(2), Side::B);
    }
}
