//! Statistics over the measured rounds of one configuration: median with a distribution-free 95%
//! confidence interval, mean, sample standard deviation, min, max, and outliers.
//!
//! - Confidence interval of the median from order statistics: [x_(k), x_(n+1−k)] of the sorted rounds, with
//!   the largest k for which P(B ≤ k − 1) ≤ 0.025, B ~ Binomial(n, ½) (the number of rounds below the
//!   true median). It assumes nothing about the shape of the distribution, which matters here: rounds on a
//!   shared machine are mostly within a percent of each other with a few at half speed (docs/methodology.md).
//!   Its coverage is at least 95% but jumps with n (97.9% with 16 rounds, 99.2% with 8), so each end is
//!   then interpolated toward the next order statistic in, as far as brings the coverage to 95%
//!   (T. P. Hettmansperger and S. J. Sheather, "Confidence intervals based on interpolated order
//!   statistics", Statistics & Probability Letters 4, 1986, pp. 75-79): still distribution-free to a close
//!   approximation, and no wider than the level asked. Fewer than 6 rounds cannot give one (with 5,
//!   P(B = 0) = 1/32 > 0.025). See W. J. Conover, "Practical Nonparametric Statistics", 3rd ed., §3.2.
//! - Outliers: the modified Z-score M = 0.6745 · (x − median) / MAD, where MAD is the median absolute
//!   deviation; a sample with |M| > 3.5 is an outlier (Iglewicz & Hoaglin, "How to Detect and Handle
//!   Outliers", 1993). It is robust where the plain Z-score is not: one wild round cannot hide itself by
//!   inflating the standard deviation. hyperfine uses the same rule.

use serde::{Deserialize, Serialize};

/// |M| above this marks an outlier (Iglewicz & Hoaglin).
pub const MODIFIED_Z_THRESHOLD: f64 = 3.5;
/// The 0.75 quantile of the standard normal distribution: scales MAD to the standard deviation.
const MAD_SCALE: f64 = 0.6745;
/// The fewest values with a 95% interval of the median.
pub const MIN_FOR_CI: usize = 6;

/// Summary of a sample (for example the req/s of each measured round).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    pub median: f64,
    /// Sample standard deviation (n − 1 in the denominator); 0 for a single value.
    pub stdev: f64,
    /// 95% confidence interval of the median (order statistics); absent for fewer than `MIN_FOR_CI` values.
    pub ci95: Option<(f64, f64)>,
    pub min: f64,
    pub max: f64,
    /// Indices (into the input) of the values whose modified Z-score exceeds 3.5.
    pub outliers: Vec<usize>,
}

impl Summary {
    /// None for an empty sample.
    pub fn of(values: &[f64]) -> Option<Summary> {
        if values.is_empty() {
            return None;
        }
        let n = values.len();
        let mean = values.iter().sum::<f64>() / n as f64;
        let stdev = if n > 1 {
            (values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        let ci95 = median_ci95(values);
        Some(Summary {
            n,
            mean,
            median: median(values),
            stdev,
            ci95,
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            outliers: outliers(values),
        })
    }

    /// Half the width of the 95% confidence interval relative to the median, in percent.
    pub fn ci95_relative_pct(&self) -> Option<f64> {
        relative_half_width_pct(self.ci95?, self.median)
    }
}

/// Half the width of `interval` relative to `centre`, in percent; none for a centre of 0.
pub fn relative_half_width_pct((low, high): (f64, f64), centre: f64) -> Option<f64> {
    (centre != 0.0).then(|| (high - low) / 2.0 / centre.abs() * 100.0)
}

/// Median; the mean of the two middle values for an even count. NaN for an empty slice.
pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len().is_multiple_of(2) { (sorted[mid - 1] + sorted[mid]) / 2.0 } else { sorted[mid] }
}

/// Median absolute deviation from the median.
pub fn mad(values: &[f64]) -> f64 {
    let m = median(values);
    median(&values.iter().map(|x| (x - m).abs()).collect::<Vec<_>>())
}

/// Modified Z-scores; all zero when MAD is zero (more than half the values are equal, so nothing can be
/// said to stand out on this scale).
pub fn modified_z_scores(values: &[f64]) -> Vec<f64> {
    let m = median(values);
    let d = mad(values);
    values
        .iter()
        .map(|x| if d > 0.0 { MAD_SCALE * (x - m) / d } else { 0.0 })
        .collect()
}

/// Indices of the outliers by the modified Z-score rule.
pub fn outliers(values: &[f64]) -> Vec<usize> {
    modified_z_scores(values)
        .iter()
        .enumerate()
        .filter(|(_, z)| z.abs() > MODIFIED_Z_THRESHOLD)
        .map(|(i, _)| i)
        .collect()
}

/// The 1-based rank k of the order-statistic 95% interval of the median of n values, [x_(k), x_(n+1−k)]:
/// the largest k with P(B ≤ k − 1) ≤ 0.025 for B ~ Binomial(n, ½). None below `MIN_FOR_CI`.
pub fn median_ci_rank(n: usize) -> Option<usize> {
    if n < MIN_FOR_CI {
        return None;
    }
    if n > 1000 {
        // 0.5^n underflows beyond about 1,070; the normal approximation is exact enough long before.
        return Some(((n as f64 / 2.0 - 0.98 * (n as f64).sqrt()).floor() as usize).max(1));
    }
    let mut pmf = 0.5f64.powi(n as i32);
    let mut cdf = 0.0;
    let mut k = None;
    for j in 0..n {
        cdf += pmf;
        if cdf > 0.025 {
            break;
        }
        k = Some(j + 1);
        pmf *= (n - j) as f64 / (j + 1) as f64;
    }
    k
}

/// The 95% confidence interval of the median: the order statistics [x_(k), x_(n+1−k)], each interpolated
/// toward the next one in (Hettmansperger and Sheather) so that the coverage is 95% rather than the
/// order statistics' own, higher one; None below `MIN_FOR_CI` values.
pub fn median_ci95(values: &[f64]) -> Option<(f64, f64)> {
    let n = values.len();
    let k = median_ci_rank(n)?;
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let (low, high) = (sorted[k - 1], sorted[n - k]);
    // The inner pair must exist (k + 1 ≤ n − k) and its coverage be computable exactly.
    if n > 1000 || k + 1 > n - k {
        return Some((low, high));
    }
    let (outer, inner) = (order_statistic_coverage(n, k), order_statistic_coverage(n, k + 1));
    let share = (outer - 0.95) / (outer - inner);
    let lambda = (n - k) as f64 * share / (k as f64 + (n - 2 * k) as f64 * share);
    Some(((1.0 - lambda) * low + lambda * sorted[k], (1.0 - lambda) * high + lambda * sorted[n - k - 1]))
}

/// The coverage of [x_(k), x_(n+1−k)] as an interval of the median: 1 − 2 P(B ≤ k − 1), B ~ Binomial(n, ½).
fn order_statistic_coverage(n: usize, k: usize) -> f64 {
    let mut pmf = 0.5f64.powi(n as i32);
    let mut below = 0.0;
    for j in 0..k {
        below += pmf;
        pmf *= (n - j) as f64 / (j + 1) as f64;
    }
    1.0 - 2.0 * below
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, eps: f64) -> bool {
        (a - b).abs() <= eps
    }

    #[test]
    fn summary_of_a_hand_made_sample() {
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sample variance 32/7.
        let s = Summary::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(s.n, 8);
        assert_eq!(s.mean, 5.0);
        assert_eq!(s.median, 4.5);
        assert!(close(s.stdev, (32.0f64 / 7.0).sqrt(), 1e-12));
        assert_eq!((s.min, s.max), (2.0, 9.0));
        // n = 8: P(B = 0) = 1/256, P(B ≤ 1) = 9/256 = 0.035 > 0.025, so k = 1: the extremes 2 and 9, which
        // cover 99.2%; [x_(2), x_(7)] = [4, 7] covers 92.97%. Interpolated: share (0.99219 − 0.95) /
        // (0.99219 − 0.92969) = 0.675, λ = 7 · 0.675 / (1 + 6 · 0.675) = 0.9356.
        let (low, high) = s.ci95.unwrap();
        assert!(close(low, 0.0644 * 2.0 + 0.9356 * 4.0, 1e-3) && close(high, 0.0644 * 9.0 + 0.9356 * 7.0, 1e-3), "{low} {high}");
        // MAD is 0.5 (most values sit within 0.5 of the median 4.5), so 9 scores 0.6745 * 4.5 / 0.5 = 6.07
        // while 2 and 7 score 3.37: only 9 stands out.
        assert_eq!(s.outliers, vec![7]);
    }

    #[test]
    fn too_few_values_have_no_interval() {
        let s = Summary::of(&[42.0]).unwrap();
        assert_eq!((s.mean, s.median, s.stdev, s.min, s.max), (42.0, 42.0, 0.0, 42.0, 42.0));
        assert_eq!(s.ci95, None);
        assert_eq!(s.ci95_relative_pct(), None);
        assert!(Summary::of(&[]).is_none());
        assert_eq!(Summary::of(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap().ci95, None);
    }

    #[test]
    fn median_interval_ranks_match_the_binomial_tables() {
        // Published ranks of the 95% interval of the median (e.g. Conover, Table A3): n → k.
        for (n, k) in [(6, 1), (7, 1), (8, 1), (9, 2), (10, 2), (11, 2), (12, 3), (13, 3), (15, 4), (20, 6), (30, 10), (40, 14), (100, 40)] {
            assert_eq!(median_ci_rank(n), Some(k), "n = {n}");
        }
        assert_eq!(median_ci_rank(5), None);
        // The normal form beyond the exact range lands near the exact rank.
        let exact = median_ci_rank(1000).unwrap() as f64;
        assert!((exact - (500.0 - 0.98 * 1000f64.sqrt()).floor()).abs() <= 1.0, "{exact}");
    }

    #[test]
    fn one_slow_round_in_ten_leaves_the_interval_narrow() {
        // The shape of rounds on a shared machine: nine within 1%, one at half speed.
        let rps = [154.0, 155.0, 153.5, 77.0, 154.5, 155.2, 153.8, 154.1, 154.9, 153.9];
        let s = Summary::of(&rps).unwrap();
        let (low, high) = s.ci95.unwrap();
        // k = 2, interpolated toward the third smallest and largest: the half-speed round is out of it.
        assert!(153.5 < low && low < 153.8 && 154.9 < high && high < 155.0, "{low} {high}");
        assert!(s.ci95_relative_pct().unwrap() < 0.5);
    }

    #[test]
    fn the_interval_covers_the_median_95_times_in_100() {
        // Rounds drawn from a skewed distribution of known median (exponential: ln 2), 20,000 times for each
        // count the runner uses; with 20,000 draws a coverage is known to about ±0.3%. The order statistics
        // alone cover 96.4-99.3% at these counts, which the upper bound rejects.
        let mut rng = fastrand::Rng::with_seed(7);
        for n in [6, 8, 10, 12, 16] {
            let trials = 20_000;
            let covered = (0..trials)
                .filter(|_| {
                    let v: Vec<f64> = (0..n).map(|_| -(1.0 - rng.f64()).ln()).collect();
                    let (low, high) = median_ci95(&v).unwrap();
                    low <= std::f64::consts::LN_2 && std::f64::consts::LN_2 <= high
                })
                .count() as f64
                / trials as f64;
            assert!((0.935..=0.962).contains(&covered), "n = {n}: covered {covered}");
        }
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn mad_of_a_hand_made_sample() {
        // median 4; deviations 3,2,1,0,1,2,96 -> median 2
        assert_eq!(mad(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 100.0]), 2.0);
    }

    #[test]
    fn one_wild_round_is_an_outlier() {
        let rps = [100_000.0, 101_000.0, 99_500.0, 100_400.0, 60_000.0, 100_200.0];
        assert_eq!(outliers(&rps), vec![4]);
        let z = modified_z_scores(&rps);
        assert!(z[4] < -MODIFIED_Z_THRESHOLD);
        assert!(z.iter().enumerate().all(|(i, z)| i == 4 || z.abs() < 1.5));
    }

    #[test]
    fn plain_spread_has_no_outliers() {
        assert!(outliers(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]).is_empty());
    }

    #[test]
    fn zero_mad_flags_nothing() {
        assert!(outliers(&[5.0, 5.0, 5.0, 5.0, 9.0]).is_empty());
        assert_eq!(modified_z_scores(&[1.0, 1.0, 1.0]), vec![0.0; 3]);
    }
}
