//! The words of a verdict on one figure, B against A, shared by `compare` (two runs) and an A/B run of
//! `bench` (two versions in one run, `model::ab`): the three figures judged and what each reads from a
//! round, and the verdicts with their markers and the words other tools read.

use super::Round;

/// The three figures compared, each from every measured round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    RequestsPerS,
    P99,
    CpuPerRequest,
}

impl Metric {
    pub const ALL: [Metric; 3] = [Metric::RequestsPerS, Metric::P99, Metric::CpuPerRequest];

    pub fn name(self) -> &'static str {
        match self {
            Metric::RequestsPerS => "req/s",
            Metric::P99 => "p99",
            Metric::CpuPerRequest => "CPU/req",
        }
    }
    /// The short name of the command line (`--fail-on worse:rps,p99,cpu`).
    pub fn flag(self) -> &'static str {
        match self {
            Metric::RequestsPerS => "rps",
            Metric::P99 => "p99",
            Metric::CpuPerRequest => "cpu",
        }
    }
    /// The name stored in run.json (`machine_model`'s `metric`).
    pub fn key(self) -> &'static str {
        match self {
            Metric::RequestsPerS => "requests_per_s",
            Metric::P99 => "p99",
            Metric::CpuPerRequest => "cpu_per_request",
        }
    }
    /// The figure whose `key` this is.
    pub fn from_key(key: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.key() == key)
    }
    pub fn higher_is_better(self) -> bool {
        self == Metric::RequestsPerS
    }
    /// The round's value at the machine model's reference state (`model::machine_model`): req/s, the
    /// round's own p99 (ns), server CPU µs per request.
    pub fn of(self, r: &Round) -> Option<f64> {
        let v = match self {
            Metric::RequestsPerS => Some(r.requests_per_s_adjusted()),
            Metric::P99 => r.p99_adjusted(),
            Metric::CpuPerRequest => r.cpu_us_per_request_adjusted(),
        };
        v.filter(|v| v.is_finite())
    }

    /// The round's value as measured, the machine left in.
    pub fn as_measured(self, r: &Round) -> Option<f64> {
        let v = match self {
            Metric::RequestsPerS => Some(r.load.requests_per_s()),
            Metric::P99 => r.latency().p99,
            Metric::CpuPerRequest => r.server.cpu_us_per_request,
        };
        v.filter(|v| v.is_finite())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Moved apart from the rest, in the good direction.
    Better,
    /// Moved apart from the rest, in the bad direction: a regression.
    Worse,
    /// Shown to be within the band: its whole interval lies inside it.
    Same,
    /// Neither shown beyond the band nor within it: the interval reaches across its edge, so the data
    /// cannot say.
    Unclear,
    /// Beyond noise as measured, within it once the machine's own change of this figure is taken out; or apart
    /// from it while the machine changed in a way its common change cannot account for (another
    /// cross-CPU regime for this configuration than for the rest).
    Machine,
    /// No interval (fewer than two rounds on a side, fewer than six pairs): nothing can be said.
    Untested,
}

impl Verdict {
    pub const ALL: [Verdict; 6] = [Verdict::Better, Verdict::Worse, Verdict::Same, Verdict::Unclear, Verdict::Machine, Verdict::Untested];

    /// A marker that reads without colour.
    pub fn marker(self) -> &'static str {
        match self {
            Verdict::Better => "▲ better",
            Verdict::Worse => "▼ worse",
            Verdict::Same => "~ same",
            Verdict::Unclear => "◇ unclear",
            Verdict::Machine => "≈ machine",
            Verdict::Untested => "? untested",
        }
    }

    /// The word other tools read (compare --json).
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Same => "same",
            Verdict::Unclear => "unclear",
            Verdict::Machine => "machine",
            Verdict::Untested => "untested",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Metric;

    #[test]
    fn every_figure_is_found_again_by_its_stored_name_and_nothing_else_is() {
        for m in Metric::ALL {
            assert_eq!(Metric::from_key(m.key()), Some(m));
        }
        assert_eq!(Metric::from_key("req/s"), None, "the display name is not the stored one");
    }
}
