//! After each round, the drift factors of every round of the same configuration (`stats::drift`): the
//! machine's speed around each round, read from the other servers' rounds near it in time, so that the
//! summaries (and the stop rule of `--rounds auto`) see the servers rather than the machine's stretches.

use crate::model::Round;
use crate::stats::drift::{factors, Point, WINDOW_S};

use super::runner::{Live, Runner};

impl Runner<'_, '_> {
    /// Recomputes the factors of the measured rounds of connection count `ci`, level `li` of every server.
    /// Rate rounds are left without: the client paces their req/s.
    pub(super) fn update_drift(&mut self, live: &[Live], ci: usize, li: usize) {
        let slots: Vec<usize> = live.iter().map(|l| l.measurements[ci][li]).collect();
        if slots.iter().any(|&mi| self.run.measurements[mi].rate_rps.is_some()) {
            return;
        }
        let counts = |r: &Round| r.counts() && r.machine.started_s.is_some();
        let mut points = Vec::new();
        for (series, &mi) in slots.iter().enumerate() {
            for r in self.run.measurements[mi].rounds.iter().filter(|r| counts(r)) {
                points.push(Point { series, t: r.machine.started_s.unwrap_or_default(), value: r.load.requests_per_s() });
            }
        }
        let mut found = factors(&points, WINDOW_S).into_iter();
        for &mi in &slots {
            for r in self.run.measurements[mi].rounds.iter_mut().filter(|r| counts(r)) {
                r.machine.drift_factor = found.next().flatten();
            }
        }
    }
}
