//! The loads a server is measured at, per connection count: the run's mode as asked, or with `--rate auto`
//! its capacity first (throughput rounds) and then open-loop rounds at shares of that capacity, so that
//! latency is compared at equal utilisation rather than at one absolute rate that is light for one server
//! and beyond another's capacity.

use crate::model::{MeasurementStatus, RunResult};

use super::options::BenchOptions;
use super::runner::Live;

/// What one measurement of a server asks of it, beside its connection count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Level {
    /// The run's mode as given: throughput, latency, or rate at `--rate`.
    Asked,
    /// `--rate auto`: throughput rounds whose median req/s is the server's capacity.
    Capacity,
    /// `--rate auto`: rate rounds at this share of the capacity.
    Share(f64),
}

impl Level {
    /// The mode a measurement at this level records.
    pub(super) fn mode(self, o: &BenchOptions) -> &'static str {
        match self {
            Level::Asked => o.mode.name(),
            Level::Capacity => "throughput",
            Level::Share(_) => "rate",
        }
    }
}

/// The levels of every connection count, in the order they are measured.
pub(super) fn levels(o: &BenchOptions) -> Vec<Level> {
    if o.load_fractions.is_empty() {
        vec![Level::Asked]
    } else {
        std::iter::once(Level::Capacity).chain(o.load_fractions.iter().map(|&f| Level::Share(f))).collect()
    }
}

/// Sets the rate of every live server's measurement at `share` of its capacity (the median req/s of its
/// capacity measurement, level 0, as measured: the rate rounds run on the machine as it is, not at the
/// machine model's reference state); a server without one has that measurement failed with the reason.
pub(super) fn set_rates<S>(run: &mut RunResult, live: &[Live<S>], ci: usize, li: usize, share: f64) {
    for l in live.iter().filter(|l| !l.failed) {
        let capacity = run.measurements[l.measurements[ci][0]].requests_per_s_as_measured().map(|s| s.median);
        let mi = l.measurements[ci][li];
        match capacity.filter(|c| *c > 0.0) {
            Some(c) => run.measurements[mi].rate_rps = Some((c * share).max(1.0)),
            None => {
                let m = &mut run.measurements[mi];
                if m.status == MeasurementStatus::Pending {
                    m.status = MeasurementStatus::Failed;
                    m.reason = Some("no capacity to take a share of: its throughput measurement has no rounds that count".into());
                }
            }
        }
    }
}
