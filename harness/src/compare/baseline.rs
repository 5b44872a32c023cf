//! What the machine alone did to each figure between two runs: per metric, the servers' common change (the
//! median over configurations of each one's B/A) and how far they scatter around it, or the CPU speed
//! probes where too few configurations were measured; and, per configuration, whether its cross-CPU
//! regime moved as the rest's did, so that the common change accounts for it.

use crate::model::cross_cpu_moved;
use crate::stats::scatter::Scatter;

use super::verdict::{Expected, Metric, Rules};

/// The fewest configurations whose common change and scatter are used: three is the fewest whose median
/// one changed server cannot move (of two, the median is their mean, and a server that changed drags it
/// halfway). Below it the CPU speed probes stand in, without a scatter.
pub const MIN_CONFIGURATIONS: usize = 3;
/// The least spread credited to the servers' scatter, in percent: where more than half the ratios are
/// equal (a run compared with itself, synthetic runs) the MAD is zero. 1% times the default 2.5 spreads lies
/// inside the default noise band, so the floor never makes the scatter stricter than the band; the steadiest
/// real pairs scattered by 1.6% (req/s).
pub const MIN_SPREAD_PCT: f64 = 1.0;

/// Where a metric's machine change came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A control server measured in both runs: its own B/A (the runs do not record one yet).
    Control,
    /// The servers' common change, with their scatter.
    Servers,
    /// The CPU speed probes (too few configurations for a common change).
    Probes,
}

impl Source {
    pub fn word(self) -> &'static str {
        match self {
            Source::Control => "control",
            Source::Servers => "servers",
            Source::Probes => "probes",
        }
    }
}

/// One metric's machine change over one kind of load (closed loop, or at a fixed rate).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Baseline {
    pub metric: Metric,
    /// Whether this covers the configurations measured at a fixed rate (else the closed-loop ones).
    pub fixed_rate: bool,
    pub source: Source,
    /// B/A of the metric the machine alone gave (1: no change).
    pub factor: f64,
    /// The configurations' ratios around their common change, with at least `MIN_CONFIGURATIONS`.
    pub scatter: Option<Scatter>,
    /// Configurations with a ratio of this metric.
    pub configurations: usize,
}

impl Baseline {
    /// A metric's machine change from the configurations' ratios B/A, the probes' change of req/s
    /// (`probed_rps`, 1 when within the noise band) and the run's control's B/A of this metric, when both
    /// runs measured it. How they combine: the control is one of the configurations (its ratio is among
    /// `ratios`), so from `MIN_CONFIGURATIONS` on the median of them all is the change, and the control
    /// alone cannot move it; below that floor (a run of one or two servers) the control's ratio is the
    /// change, a measurement of the machine beside the servers where the probes only see the CPUs' loops.
    /// The probes stand in where neither is there.
    pub fn of(metric: Metric, fixed_rate: bool, ratios: &[f64], probed_rps: f64, control: Option<f64>) -> Baseline {
        let scatter = (ratios.len() >= MIN_CONFIGURATIONS)
            .then(|| Scatter::of(ratios, (1.0 + MIN_SPREAD_PCT / 100.0).ln()))
            .flatten();
        // A faster machine raises req/s and lowers latency and CPU per request by the same factor, as far
        // as the probes can tell.
        let probed = if metric.higher_is_better() { probed_rps } else { 1.0 / probed_rps };
        let (source, factor) = match (scatter, control) {
            (Some(s), _) => (Source::Servers, s.centre),
            (None, Some(c)) => (Source::Control, c),
            (None, None) => (Source::Probes, probed),
        };
        Baseline { metric, fixed_rate, source, factor, scatter, configurations: ratios.len() }
    }

    /// What a configuration is judged against: this change, the scatter, and whether its own cross-CPU
    /// regime moved as the one the change was taken in (`regime` below).
    pub fn expected(&self, regime_accounted: bool) -> Expected {
        Expected { factor: self.factor, spread_ln: self.scatter.map(|s| s.spread_ln), regime_accounted }
    }

    /// The band a change must clear, as a ratio: the larger of the noise band and the scatter's.
    pub fn band(&self, rules: Rules) -> f64 {
        self.scatter.map_or(rules.noise_ln(), |s| (rules.spreads * s.spread_ln).max(rules.noise_ln())).exp()
    }
}

/// The cross-CPU regime per configuration: B/A of the median cross-CPU probe of its rounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Regime {
    /// The configurations' common B/A of the cross-CPU rate (their median), where there are
    /// `MIN_CONFIGURATIONS`: the regime their common change was measured across.
    pub common: Option<f64>,
    /// Configurations with probes in both runs.
    pub configurations: usize,
}

impl Regime {
    pub fn of(ratios: &[f64]) -> Regime {
        let common = (ratios.len() >= MIN_CONFIGURATIONS).then(|| crate::stats::rounds::median(ratios));
        Regime { common, configurations: ratios.len() }
    }

    /// Whether a change common to the servers (`source`) can account for the regime a configuration met
    /// (`ratio`: its B/A of the cross-CPU rate). The servers' common change was taken across their common
    /// regime change, so a configuration whose regime moved otherwise (within a run, the regime changed
    /// while it was measured, or before it) is not described by it. The probes and a control see no
    /// regime, so there the configuration's regime must have held. Without probes nothing can be said.
    pub fn accounts(&self, source: Source, ratio: Option<f64>) -> bool {
        let Some(ratio) = ratio else { return true };
        let reference = match source {
            Source::Servers => self.common.unwrap_or(1.0),
            Source::Probes | Source::Control => 1.0,
        };
        !cross_cpu_moved(ratio / reference)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_configurations_give_a_common_change_fewer_the_probes() {
        let b = Baseline::of(Metric::RequestsPerS, false, &[1.2, 1.22, 0.9], 1.05, None);
        assert_eq!((b.source, b.factor, b.configurations), (Source::Servers, 1.2, 3));
        let b = Baseline::of(Metric::P99, false, &[1.2, 1.22], 1.25, None);
        assert_eq!((b.source, b.factor, b.scatter), (Source::Probes, 0.8, None));
        assert_eq!(b.expected(true), Expected { factor: 0.8, spread_ln: None, regime_accounted: true });
    }

    #[test]
    fn a_control_sets_the_factor_below_the_floor_and_counts_as_one_configuration_above_it() {
        let b = Baseline::of(Metric::CpuPerRequest, false, &[0.9, 0.93], 1.0, Some(0.93));
        assert_eq!((b.source, b.factor, b.scatter), (Source::Control, 0.93, None));
        let b = Baseline::of(Metric::CpuPerRequest, false, &[0.9, 0.92, 0.95, 0.91, 0.93], 1.0, Some(0.93));
        assert_eq!((b.source, b.factor), (Source::Servers, 0.92));
        assert!(b.scatter.is_some());
    }

    #[test]
    fn the_band_is_the_wider_of_noise_and_scatter() {
        let rules = Rules::default();
        let same = Baseline::of(Metric::RequestsPerS, false, &[1.0, 1.0, 1.0], 1.0, None);
        assert!((same.band(rules) - 1.03).abs() < 1e-3, "the floor: 3 × 1% is about the noise band");
        let wide = Baseline::of(Metric::RequestsPerS, false, &[0.9, 1.0, 1.1], 1.0, None);
        assert!(wide.band(rules) > 1.2, "{}", wide.band(rules));
    }

    #[test]
    fn a_regime_change_is_accounted_for_only_where_the_rest_made_it() {
        // Four configurations went from the slow regime to the fast (about 4.9x), one stayed fast.
        let r = Regime::of(&[4.93, 0.98, 4.91, 4.92, 5.05]);
        assert_eq!(r.common, Some(4.92));
        assert!(r.accounts(Source::Servers, Some(4.93)));
        assert!(!r.accounts(Source::Servers, Some(0.98)));
        assert!(!r.accounts(Source::Probes, Some(4.93)) && r.accounts(Source::Probes, Some(0.98)));
        assert!(r.accounts(Source::Servers, None));
    }
}
