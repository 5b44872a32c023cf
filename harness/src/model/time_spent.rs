//! Where a run's wall time went: the measured windows, the ramps, the rest of each round, the probes
//! around rounds, the waits for quiet CPUs, the rounds counting system calls, the saves of the result
//! files, and what is left (builds, starts, verification, checks). Worked out from the rounds' own
//! clocks and the runner's, when the run ends; absent in runs stored before it was kept.

use serde::{Deserialize, Serialize};

use super::{Measurement, Round};

/// Seconds of the run's wall time, by what they were spent on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TimeSpent {
    /// From the start of `bench` to the last save.
    pub total_s: f64,
    /// The windows of warm-up and measured rounds, their load's own warm-up included.
    pub load_s: f64,
    /// Connecting and waiting for every connection to be served before each window (`ramp_s`).
    pub ramps_s: f64,
    /// The rest of those rounds: starting the client, closing, reading the server's figures.
    pub round_rest_s: f64,
    /// The CPU speed and cross-CPU probes before and after each round.
    pub probes_s: f64,
    /// Waits for the server's CPUs to be quiet before each round.
    pub quiet_waits_s: f64,
    /// The rounds that count system calls, with their probes and waits.
    pub counting_s: f64,
    /// Writing run.json and the reports after each pass.
    pub saves_s: f64,
    /// The rest: builds, starts, verification, conformance checks, capacity searches.
    pub other_s: f64,
}

/// A round's seconds as `TimeSpent` divides them: its window, ramp, the rest of it, its probes and its wait.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoundTime {
    pub window_s: f64,
    pub ramp_s: f64,
    pub rest_s: f64,
    pub probes_s: f64,
    pub wait_s: f64,
}

impl RoundTime {
    pub fn of(r: &Round) -> RoundTime {
        let window_s = r.load.duration_s;
        let ramp_s = r.load.ramp_s.unwrap_or(0.0);
        let whole = r.machine.round_s.unwrap_or(window_s + ramp_s);
        RoundTime {
            window_s,
            ramp_s,
            rest_s: (whole - window_s - ramp_s).max(0.0),
            probes_s: r.machine.probes_ms.unwrap_or(0.0) / 1e3,
            wait_s: r.machine.quiet_wait_ms.unwrap_or(0.0) / 1e3,
        }
    }

    fn total_s(&self) -> f64 {
        self.window_s + self.ramp_s + self.rest_s + self.probes_s + self.wait_s
    }
}

impl TimeSpent {
    /// The run's time from its measurements' rounds, `total_s` of wall time and `saves_s` of it spent
    /// saving.
    pub fn of(measurements: &[Measurement], total_s: f64, saves_s: f64) -> TimeSpent {
        let rounds = measurements.iter().flat_map(|m| m.rounds.iter().map(RoundTime::of));
        let counting = measurements.iter().flat_map(|m| m.counting_rounds.iter().map(RoundTime::of));
        TimeSpent::from_rounds(rounds, counting, total_s, saves_s)
    }

    /// The same from the rounds' times: warm-up and measured ones, and counting ones.
    pub fn from_rounds(rounds: impl Iterator<Item = RoundTime>, counting: impl Iterator<Item = RoundTime>, total_s: f64, saves_s: f64) -> TimeSpent {
        let mut t = TimeSpent { total_s, saves_s, ..TimeSpent::default() };
        for p in rounds {
            t.load_s += p.window_s;
            t.ramps_s += p.ramp_s;
            t.round_rest_s += p.rest_s;
            t.probes_s += p.probes_s;
            t.quiet_waits_s += p.wait_s;
        }
        t.counting_s = counting.map(|p| p.total_s()).sum();
        let accounted = t.load_s + t.ramps_s + t.round_rest_s + t.probes_s + t.quiet_waits_s + t.counting_s + t.saves_s;
        t.other_s = (total_s - accounted).max(0.0);
        t
    }

    /// "load 4 min 46 s, ramps 31 s, ...", in the order of the fields, each as minutes and seconds.
    pub fn text(&self) -> String {
        let parts = [
            ("load", self.load_s),
            ("ramps", self.ramps_s),
            ("rest of rounds", self.round_rest_s),
            ("probes", self.probes_s),
            ("waits for quiet CPUs", self.quiet_waits_s),
            ("counting rounds", self.counting_s),
            ("saves", self.saves_s),
            ("builds, starts and the rest", self.other_s),
        ];
        parts.iter().map(|(what, s)| format!("{what} {}", min_s(*s))).collect::<Vec<_>>().join(", ")
    }
}

/// "4 min 46 s", or "12.3 s" under a minute.
pub fn min_s(s: f64) -> String {
    if s < 60.0 {
        format!("{s:.1} s")
    } else {
        let whole = s.round() as u64;
        format!("{} min {:02} s", whole / 60, whole % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_second_of_a_round_goes_to_one_part_and_the_rest_is_other() {
        let r = RoundTime { window_s: 0.5, ramp_s: 1.0, rest_s: 0.2, probes_s: 0.08, wait_s: 0.02 };
        let t = TimeSpent::from_rounds([r, r].into_iter(), [r].into_iter(), 10.0, 0.5);
        let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(near(t.load_s, 1.0) && near(t.ramps_s, 2.0) && near(t.round_rest_s, 0.4), "{t:?}");
        assert!(near(t.probes_s, 0.16) && near(t.quiet_waits_s, 0.04) && near(t.counting_s, 1.8), "{t:?}");
        assert!(near(t.other_s, 10.0 - 1.0 - 2.0 - 0.4 - 0.16 - 0.04 - 1.8 - 0.5), "{t:?}");
        assert_eq!(min_s(286.4), "4 min 46 s");
        assert!(t.text().starts_with("load 1.0 s, ramps 2.0 s, rest of rounds 0.4 s"), "{}", t.text());
    }
}
