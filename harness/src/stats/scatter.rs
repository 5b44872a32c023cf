//! The change many ratios share and how far each stands from it: the median of their logarithms as the
//! common change, and the median absolute deviation around it, scaled by 1.4826, as their spread.
//!
//! Between two runs most servers do not change. The machine moves them all alike, and each also moves a
//! little its own way: the noise of its rounds, and how it meets the machine's change (a server heavy in
//! system calls feels a slower kernel path more than one that computes). The median of the log ratios is
//! the change they share; with a breakdown point of one half, fewer than half of them changing cannot
//! carry it past the others. The MAD around it, times 1/Φ⁻¹(¾) = 1.4826, estimates the standard
//! deviation of the others' scatter without being inflated by the few that changed (F. R. Hampel, "The
//! influence curve and its role in robust estimation", JASA 69, 1974; P. J. Rousseeuw and C. Croux,
//! "Alternatives to the median absolute deviation", JASA 88, 1993). A ratio's distance from the common
//! change, counted in spreads, is then a robust z-score, as the modified Z-score of Iglewicz and Hoaglin
//! counts a round's (`stats/rounds.rs`).
//!
//! Logarithms, so that 0.8x and 1.25x stand equally far from 1. When more than half the ratios are
//! equal the MAD is zero; the caller's floor keeps the spread from claiming that every other ratio
//! stands infinitely far out.

use super::rounds::{mad, median};

/// Scales a MAD to the standard deviation of a normal distribution: 1/Φ⁻¹(¾).
pub const MAD_TO_SD: f64 = 1.4826;

/// Ratios B/A, their common change and their spread.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scatter {
    /// The common change: exp of the median of the log ratios.
    pub centre: f64,
    /// 1.4826 × MAD of the log ratios around their median, at least the floor given.
    pub spread_ln: f64,
    /// Whether the floor, not the ratios, set the spread.
    pub floored: bool,
    /// How many ratios.
    pub n: usize,
}

impl Scatter {
    /// None for no ratios or any that is not positive and finite. `min_spread_ln` is the floor of the
    /// spread, on the log scale.
    pub fn of(ratios: &[f64], min_spread_ln: f64) -> Option<Scatter> {
        if ratios.is_empty() || ratios.iter().any(|r| !(r.is_finite() && *r > 0.0)) {
            return None;
        }
        let logs: Vec<f64> = ratios.iter().map(|r| r.ln()).collect();
        let measured = MAD_TO_SD * mad(&logs);
        Some(Scatter {
            centre: median(&logs).exp(),
            spread_ln: measured.max(min_spread_ln),
            floored: measured < min_spread_ln,
            n: ratios.len(),
        })
    }

    /// How many spreads `ratio` stands from the common change: above it positive, below negative.
    pub fn spreads(&self, ratio: f64) -> f64 {
        (ratio / self.centre).ln() / self.spread_ln
    }

    /// How many spreads the nearer end of an interval of ratios stands from the common change (signed as
    /// `spreads`), or 0 when the interval holds it.
    pub fn interval_spreads(&self, (low, high): (f64, f64)) -> f64 {
        let (lo, hi) = (self.spreads(low), self.spreads(high));
        if lo > 0.0 {
            lo
        } else if hi < 0.0 {
            hi
        } else {
            0.0
        }
    }

    /// The spread as a percentage of the ratio: exp(spread) − 1.
    pub fn spread_pct(&self) -> f64 {
        (self.spread_ln.exp() - 1.0) * 100.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FLOOR: f64 = 0.01;

    #[test]
    fn centre_and_spread_of_a_hand_made_sample() {
        // Logs 0, ±0.02, ±0.04 around a common 1.1x: median 0, deviations 0, .02, .02, .04, .04, MAD .02.
        let ratios: Vec<f64> = [0.0, 0.02, -0.02, 0.04, -0.04].iter().map(|d: &f64| 1.1 * d.exp()).collect();
        let s = Scatter::of(&ratios, FLOOR).unwrap();
        assert!((s.centre - 1.1).abs() < 1e-12, "{s:?}");
        assert!((s.spread_ln - 1.4826 * 0.02).abs() < 1e-12, "{s:?}");
        assert!(!s.floored && s.n == 5);
        assert!((s.spreads(1.1 * (0.02 * 1.4826f64 * 3.0).exp()) - 3.0).abs() < 1e-9);
        assert!((s.spread_pct() - ((1.4826f64 * 0.02).exp() - 1.0) * 100.0).abs() < 1e-12);
    }

    #[test]
    fn one_changed_ratio_in_seven_moves_neither_centre_nor_spread() {
        // Six servers 1.20x to 1.25x with the machine, one 0.87x: the centre stays among the six, the
        // spread is theirs, and the changed one stands far out.
        let six = [1.245, 1.215, 1.237, 1.206, 1.227, 1.203];
        let mut all = six.to_vec();
        all.push(0.870);
        let (with, without) = (Scatter::of(&all, FLOOR).unwrap(), Scatter::of(&six, FLOOR).unwrap());
        assert!((1.203..=1.245).contains(&with.centre), "{with:?}");
        assert!(with.spread_ln < 0.03 && without.spread_ln < 0.03, "{with:?} {without:?}");
        assert!(with.spreads(0.870) < -10.0, "{}", with.spreads(0.870));
    }

    #[test]
    fn identical_ratios_take_the_floor() {
        let s = Scatter::of(&[1.0, 1.0, 1.0, 1.3], FLOOR).unwrap();
        assert_eq!((s.centre, s.spread_ln, s.floored), (1.0, FLOOR, true));
        assert!((s.spreads(1.3) - 1.3f64.ln() / FLOOR).abs() < 1e-9);
    }

    #[test]
    fn an_interval_counts_from_its_nearer_end() {
        let s = Scatter::of(&[1.0, 1.0, 1.0], 0.1).unwrap();
        assert!((s.interval_spreads((1.2, 1.5)) - 1.2f64.ln() / 0.1).abs() < 1e-9);
        assert!((s.interval_spreads((0.5, 0.8)) - 0.8f64.ln() / 0.1).abs() < 1e-9);
        assert_eq!(s.interval_spreads((0.9, 1.1)), 0.0);
    }

    #[test]
    fn needs_positive_finite_ratios() {
        assert!(Scatter::of(&[], FLOOR).is_none());
        assert!(Scatter::of(&[1.0, 0.0], FLOOR).is_none());
        assert!(Scatter::of(&[1.0, f64::NAN], FLOOR).is_none());
    }
}
