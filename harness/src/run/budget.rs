//! The run's time budget (`--budget`): the measured passes of `--rounds auto` stop once the next one, with
//! the rounds still to come after it, would end the measuring past the budget. It counts from the start of
//! the measuring (the first server's start), not the run's: installs and builds are a fresh machine's
//! alone, and a fresh run measures as long as a warm one. Each load still to measure gets an
//! equal share of what is left when its passes begin; a pass's cost is estimated from the passes so far
//! (every round with its probes, waits and the save after it). A measurement with fewer rounds that count
//! than an interval needs goes on regardless: the budget cuts rounds beyond the fewest, never below.

use std::time::{Duration, Instant};

/// Time spent in passes so far, and how many rounds they ran.
#[derive(Debug, Default, Clone, Copy)]
struct Spent {
    time: Duration,
    rounds: u32,
}

/// The budget of one run, shared out over its loads as their passes begin.
#[derive(Debug)]
pub(super) struct Budget {
    /// When the run must end; None without a budget.
    end: Option<Instant>,
    /// Loads (scenario, workers, connections, level) whose measured passes have not begun.
    loads_left: usize,
    /// When the current load's measured passes must end.
    load_end: Option<Instant>,
    /// What the passes so far took.
    passes: Spent,
    /// Set before a measured pass that, with the rounds after it, would end past the load's share: from
    /// then on only measurements short of their fewest rounds take another.
    spent: bool,
}

impl Budget {
    /// A budget of `total` from `began` (the measuring's start) for `loads` loads; `None`: no budget.
    pub(super) fn new(began: Instant, total: Option<Duration>, loads: usize) -> Budget {
        Budget { end: total.map(|t| began + t), loads_left: loads.max(1), load_end: None, passes: Spent::default(), spent: false }
    }

    /// The next load's measured passes begin at `now`: its share is what is left of the run's budget,
    /// divided among it and the loads after it.
    pub(super) fn begin_load(&mut self, now: Instant) {
        self.load_end = self.end.map(|end| now + end.saturating_duration_since(now) / self.loads_left as u32);
        self.loads_left = self.loads_left.saturating_sub(1).max(1);
        self.spent = false;
    }

    /// Whether the current load's passes are past its share (`spends`).
    pub(super) fn spent(&self) -> bool {
        self.spent
    }

    /// Before a pass of `rounds` rounds (with those after it) begun at `now`: true the first time they do
    /// not fit the current load's share, after which the load's budget stays spent.
    pub(super) fn spends(&mut self, now: Instant, rounds: usize) -> bool {
        let newly = !self.spent && !self.fits(now, rounds);
        self.spent |= newly;
        newly
    }

    /// A pass of `rounds` rounds took `took`: the estimate of a round's cost learns from it.
    pub(super) fn passed(&mut self, rounds: usize, took: Duration) {
        self.passes.time += took;
        self.passes.rounds += rounds as u32;
    }

    /// A round's cost so far (with its probes, waits and its share of the save after its pass); None before
    /// the first pass.
    fn per_round(&self) -> Option<Duration> {
        (self.passes.rounds > 0).then(|| self.passes.time / self.passes.rounds)
    }

    /// Whether `rounds` more rounds, begun at `now`, end within the current load's share. True without a
    /// budget, or before any pass has given a round's cost.
    fn fits(&self, now: Instant, rounds: usize) -> bool {
        match (self.load_end, self.per_round()) {
            (Some(end), Some(per)) => now + per * rounds as u32 <= end,
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn without_a_budget_every_pass_fits() {
        let t0 = Instant::now();
        let mut b = Budget::new(t0, None, 1);
        b.begin_load(t0);
        b.passed(10, 10 * S);
        assert!(b.fits(t0 + 3600 * S, 1_000));
    }

    #[test]
    fn a_pass_fits_until_its_rounds_at_the_cost_so_far_would_end_past_the_share() {
        let t0 = Instant::now();
        let mut b = Budget::new(t0, Some(100 * S), 1);
        b.begin_load(t0 + 10 * S);
        assert!(b.fits(t0 + 10 * S, 1_000), "no cost known before the first pass");
        // 10 rounds in 5 s: half a second a round.
        b.passed(10, 5 * S);
        assert!(b.fits(t0 + 15 * S, 170), "85 s of rounds end at 100 s");
        assert!(!b.fits(t0 + 15 * S, 171), "85.5 s of rounds end past it");
    }

    #[test]
    fn each_load_gets_an_equal_share_of_what_is_left_when_it_begins() {
        let t0 = Instant::now();
        let mut b = Budget::new(t0, Some(90 * S), 3);
        b.passed(1, S);
        // The first of three loads begins at 30 s: a third of the 60 s left, 20 s.
        b.begin_load(t0 + 30 * S);
        assert!(b.fits(t0 + 30 * S, 20) && !b.fits(t0 + 30 * S, 21));
        // The second begins late, at 60 s: half of the 30 s left.
        b.begin_load(t0 + 60 * S);
        assert!(b.fits(t0 + 60 * S, 15) && !b.fits(t0 + 60 * S, 16));
        // The last has what is left; past the end, nothing fits.
        b.begin_load(t0 + 95 * S);
        assert!(!b.fits(t0 + 95 * S, 1));
    }

    #[test]
    fn a_load_s_budget_is_spent_once_and_stays_spent_until_the_next_load() {
        let t0 = Instant::now();
        let mut b = Budget::new(t0, Some(10 * S), 2);
        b.passed(1, S);
        b.begin_load(t0);
        assert!(!b.spends(t0, 5) && !b.spent(), "5 s of the 5 s share fit");
        assert!(b.spends(t0, 6) && b.spent(), "6 s do not: spent, and said once");
        assert!(!b.spends(t0, 1) && b.spent(), "a smaller pass later does not make it unspent, nor is it said again");
        b.begin_load(t0 + 5 * S);
        assert!(!b.spent(), "the next load has its own share");
    }
}
