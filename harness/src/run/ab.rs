//! The pairs of an A/B run: a round of each version back to back, A first in one pair and B first in the
//! next (ABBA: over two pairs a steady drift of the machine weighs on both versions alike, and so does
//! going first), each pair judged by its req/s ratio B/A, in which what the machine did to both rounds
//! cancels. Pairs go on until the answer is clear (`Rounds::Auto`: the paired ratio's 95% interval within
//! ±`target_ci_pct` or wholly beyond the noise band, from `MIN_PAIRS` pairs that count on) or until a count
//! of pairs that count (`Rounds::Fixed`), and never beyond `max_pairs` pairs run, left-out ones included. A
//! pair counts when both its rounds do (neither was disturbed by other work on the server's CPUs) and both
//! served requests.
//!
//! The loop is generic over how one round of one version is measured (`PairedRounds`): the runner measures
//! real servers (`ab_measure.rs`), a test a fake machine.

pub use crate::model::ab::MIN_PAIRS;
use crate::model::ab::{AbPair, Side};
use crate::stats::paired::{paired_ratio, PairedRatio};

use super::options::Rounds;


/// What the loop reads of one round.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measured {
    /// The round's `index` among its version's measured rounds.
    pub index: u32,
    pub requests_per_s: f64,
    /// It counts (not disturbed).
    pub counts: bool,
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
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairPlan {
    /// `auto` (until clear) or a count of pairs that count.
    pub rounds: Rounds,
    /// The most pairs run, left-out ones included.
    pub max_pairs: u32,
    /// The noise band, ±percent.
    pub noise_pct: f64,
}

/// Why the pairs ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// `auto`: the interval within the target, or wholly beyond the band.
    Settled,
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
            Ended::Settled => "settled",
            Ended::Count => "count",
            Ended::Most => "most",
            Ended::Interrupted => "interrupted",
        }
    }
}

/// The pairs run and what they say of req/s.
#[derive(Debug, Clone, PartialEq)]
pub struct PairsOutcome {
    pub pairs: Vec<AbPair>,
    /// (A, B) req/s of the pairs that count.
    pub counted: Vec<(f64, f64)>,
    pub requests_per_s: Option<PairedRatio>,
    pub ended: Ended,
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
        let counts = a.counts && b.counts && a.requests_per_s > 0.0 && b.requests_per_s > 0.0;
        if counts {
            out.counted.push((a.requests_per_s, b.requests_per_s));
            out.requests_per_s = paired_ratio(&out.counted);
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
        Rounds::Auto { target_ci_pct } => (n >= MIN_PAIRS
            && so_far.requests_per_s.is_some_and(|r| r.settled(plan.noise_pct / 100.0, target_ci_pct)))
        .then_some(Ended::Settled),
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
            Ok(Some(Measured { index: index as u32, requests_per_s: v.abs(), counts: v > 0.0 }))
        }
        fn paired(&mut self, _: &AbPair, _: bool, _: Option<&PairedRatio>) {}
    }

    fn listed(a: &[f64], b: &[f64]) -> Listed {
        Listed { a: a.to_vec(), b: b.to_vec(), order: Vec::new(), stop_after: None }
    }

    #[test]
    fn the_versions_take_turns_going_first() {
        let mut r = listed(&[100.0], &[99.0]);
        let plan = PairPlan { rounds: Rounds::Fixed(4), max_pairs: 8, noise_pct: 1.0 };
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
        let plan = PairPlan { rounds: Rounds::Fixed(4), max_pairs: 8, noise_pct: 1.0 };
        let out = run_pairs(&plan, &mut r).unwrap();
        assert_eq!((out.pairs.len(), out.counted.len()), (5, 4));
        // At most max_pairs, left-out ones included.
        let mut r = listed(&[100.0, -100.0], &[99.0]);
        let out = run_pairs(&PairPlan { rounds: Rounds::Fixed(4), max_pairs: 5, noise_pct: 1.0 }, &mut r).unwrap();
        assert_eq!((out.pairs.len(), out.counted.len(), out.ended), (5, 3, Ended::Most));
    }

    #[test]
    fn auto_stops_once_the_interval_is_clear_and_not_before_the_fewest_pairs() {
        // B steadily 5% slower while the machine swings: wholly beyond ±1% as soon as it may stop.
        let a: Vec<f64> = (0..40).map(|i| if i % 3 == 0 { 70_000.0 } else { 100_000.0 }).collect();
        let b: Vec<f64> = a.iter().enumerate().map(|(i, v)| v * 0.95 * (1.0 + 0.002 * ((i % 5) as f64 - 2.0))).collect();
        // Pairs are A-first and B-first in turn, so a version's k-th round is in pair k.
        let mut r = listed(&a, &b);
        let plan = PairPlan { rounds: Rounds::Auto { target_ci_pct: 1.0 }, max_pairs: 200, noise_pct: 1.0 };
        let out = run_pairs(&plan, &mut r).unwrap();
        assert_eq!((out.ended, out.pairs.len()), (Ended::Settled, MIN_PAIRS));
        let ratio = out.requests_per_s.unwrap();
        assert!((ratio.ratio - 0.95).abs() < 0.003, "{ratio:?}");
        // Identical versions with a little noise: settled once the interval is within ±1%.
        let same: Vec<f64> = (0..40).map(|i| 1000.0 * (1.0 + 0.004 * ((i * 7 % 11) as f64 - 5.0) / 5.0)).collect();
        let mut r = listed(&same, &same.iter().rev().copied().collect::<Vec<_>>());
        let out = run_pairs(&plan, &mut r).unwrap();
        assert_eq!(out.ended, Ended::Settled);
        assert!(out.requests_per_s.unwrap().ci95_half_width_pct().unwrap() <= 1.0);
    }

    #[test]
    fn an_interrupt_ends_the_pairs_with_what_was_measured() {
        let mut r = listed(&[100.0], &[99.0]);
        r.stop_after = Some(5);
        let out = run_pairs(&PairPlan { rounds: Rounds::Fixed(10), max_pairs: 20, noise_pct: 1.0 }, &mut r).unwrap();
        assert_eq!((out.ended, out.pairs.len()), (Ended::Interrupted, 2));
        assert_eq!(first_of(1), Side::A);
        assert_eq!(first_of(2), Side::B);
    }
}
