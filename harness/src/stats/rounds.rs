//! Statistics over the measured rounds of one configuration: mean, median, sample standard deviation,
//! a 95% confidence interval of the mean, min, max, and outliers.
//!
//! - Confidence interval: mean ± t(0.975, n−1) · s / √n with Student's t distribution (the rounds are a
//!   small sample of a roughly normal quantity; see any statistics text, e.g. NIST/SEMATECH e-Handbook of
//!   Statistical Methods, §7.2.2.1). Quantiles of t for 1..=30 degrees of freedom are tabulated; above 30
//!   the Cornish–Fisher expansion of t around the normal quantile (Abramowitz & Stegun 26.7.5) is used,
//!   which agrees with the tables to 1e-5 there.
//! - Outliers: the modified Z-score M = 0.6745 · (x − median) / MAD, where MAD is the median absolute
//!   deviation; a sample with |M| > 3.5 is an outlier (Iglewicz & Hoaglin, "How to Detect and Handle
//!   Outliers", 1993). It is robust where the plain Z-score is not: one wild round cannot hide itself by
//!   inflating the standard deviation. hyperfine uses the same rule.

use serde::{Deserialize, Serialize};

/// |M| above this marks an outlier (Iglewicz & Hoaglin).
pub const MODIFIED_Z_THRESHOLD: f64 = 3.5;
/// The 0.75 quantile of the standard normal distribution: scales MAD to the standard deviation.
const MAD_SCALE: f64 = 0.6745;

/// Student's t quantile t(0.975, df) for df = 1..=30.
const T_975: [f64; 30] = [
    12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004, 2.262157, 2.228139,
    2.200985, 2.178813, 2.160369, 2.144787, 2.131450, 2.119905, 2.109816, 2.100922, 2.093024, 2.085963,
    2.079614, 2.073873, 2.068658, 2.063899, 2.059539, 2.055529, 2.051831, 2.048407, 2.045230, 2.042272,
];
/// The standard normal quantile z(0.975).
const Z_975: f64 = 1.959963984540054;

/// Summary of a sample (for example the req/s of each measured round).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    pub median: f64,
    /// Sample standard deviation (n − 1 in the denominator); 0 for a single value.
    pub stdev: f64,
    /// 95% confidence interval of the mean; absent for fewer than two values.
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
        let ci95 = (n > 1).then(|| {
            let half = t_quantile_975(n - 1) * stdev / (n as f64).sqrt();
            (mean - half, mean + half)
        });
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

    /// Half the width of the 95% confidence interval relative to the mean, in percent.
    pub fn ci95_relative_pct(&self) -> Option<f64> {
        let (low, high) = self.ci95?;
        (self.mean != 0.0).then(|| (high - low) / 2.0 / self.mean.abs() * 100.0)
    }
}

/// Median; the mean of the two middle values for an even count. NaN for an empty slice.
pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 0 { (sorted[mid - 1] + sorted[mid]) / 2.0 } else { sorted[mid] }
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

/// t(0.975, df): the two-sided 95% quantile of Student's t distribution.
pub fn t_quantile_975(df: usize) -> f64 {
    match df {
        0 => f64::INFINITY,
        1..=30 => T_975[df - 1],
        _ => {
            let (z, v) = (Z_975, df as f64);
            let g1 = (z.powi(3) + z) / 4.0;
            let g2 = (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / 96.0;
            let g3 = (3.0 * z.powi(7) + 19.0 * z.powi(5) + 17.0 * z.powi(3) - 15.0 * z) / 384.0;
            let g4 = (79.0 * z.powi(9) + 776.0 * z.powi(7) + 1482.0 * z.powi(5) - 1920.0 * z.powi(3) - 945.0 * z)
                / 92160.0;
            z + g1 / v + g2 / v.powi(2) + g3 / v.powi(3) + g4 / v.powi(4)
        }
    }
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
        // half width = 2.364624 * 2.138090 / sqrt(8) = 1.787488
        let (low, high) = s.ci95.unwrap();
        assert!(close(low, 5.0 - 1.787488, 1e-5), "{low}");
        assert!(close(high, 5.0 + 1.787488, 1e-5), "{high}");
        // MAD is 0.5 (most values sit within 0.5 of the median 4.5), so 9 scores 0.6745 * 4.5 / 0.5 = 6.07
        // while 2 and 7 score 3.37: only 9 stands out.
        assert_eq!(s.outliers, vec![7]);
    }

    #[test]
    fn a_single_value_has_no_interval() {
        let s = Summary::of(&[42.0]).unwrap();
        assert_eq!((s.mean, s.median, s.stdev, s.min, s.max), (42.0, 42.0, 0.0, 42.0, 42.0));
        assert_eq!(s.ci95, None);
        assert_eq!(s.ci95_relative_pct(), None);
        assert!(Summary::of(&[]).is_none());
    }

    #[test]
    fn two_values_use_twelve_point_seven() {
        let s = Summary::of(&[10.0, 12.0]).unwrap();
        // s = sqrt(2), half width = 12.706205 * sqrt(2) / sqrt(2)
        let (low, high) = s.ci95.unwrap();
        assert!(close(high - 11.0, 12.706205, 1e-6));
        assert!(close(11.0 - low, 12.706205, 1e-6));
        assert!(close(s.ci95_relative_pct().unwrap(), 12.706205 / 11.0 * 100.0, 1e-6));
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

    #[test]
    fn t_quantiles_match_the_tables() {
        assert_eq!(t_quantile_975(1), 12.706205);
        assert_eq!(t_quantile_975(29), 2.045230);
        // beyond the table: 40, 60 and 120 degrees of freedom, and the normal limit
        assert!(close(t_quantile_975(31), 2.039513, 1e-5));
        assert!(close(t_quantile_975(40), 2.021075, 1e-5));
        assert!(close(t_quantile_975(60), 2.000298, 1e-5));
        assert!(close(t_quantile_975(120), 1.979930, 1e-5));
        assert!(close(t_quantile_975(1_000_000), Z_975, 1e-5));
        assert!(t_quantile_975(0).is_infinite());
    }
}
