//! Change points of one series (a figure over runs in time order) by E-Divisive means (Matteson and James,
//! "A Nonparametric Approach for Multiple Change Point Analysis of Multivariate Data", JASA 2014) as Apache
//! Otava (formerly Hunter) applies it: the series is bisected recursively at the split with the largest
//! divergence statistic, and each candidate is kept when Student's t-test between its two sides (the runs
//! from the change point before it to the one after) says their means differ, instead of the original's
//! permutation test. Once none is left to add, each kept change point is tested again between its final
//! neighbours, and the weakest that no longer passes is dropped, until all pass.

use crate::stats::rounds::Summary;
use crate::stats::student_t::{quantile, student_t_test};

/// Otava's default: a change point needs p below 0.001.
pub const DEFAULT_MAX_P: f64 = 0.001;
/// The fewest runs on either side of a change point: three is the least that a t-test of means can tell
/// from noise, and two runs cannot make a segment of their own.
pub const DEFAULT_MIN_SEGMENT: usize = 3;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    pub max_p: f64,
    pub min_segment: usize,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings { max_p: DEFAULT_MAX_P, min_segment: DEFAULT_MIN_SEGMENT }
    }
}

/// Where a series changes: the first value after the change, and how much.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePoint {
    /// The index of the first value of the new level.
    pub index: usize,
    /// The mean after over the mean before, each between this change point and its neighbours.
    pub ratio: f64,
    /// The ratio's 95% interval: the t interval of the difference of the logs of the means (delta method).
    pub ratio_ci95: (f64, f64),
    /// Student's t-test between the two sides, two-sided.
    pub p: f64,
}

/// The change points of `values`, in order.
pub fn find(values: &[f64], settings: Settings) -> Vec<ChangePoint> {
    let divergence = Divergence::of(values);
    let mut indices = Vec::new();
    bisect(values, &divergence, 0, values.len(), settings, &mut indices);
    indices.sort_unstable();
    loop {
        let tested: Vec<ChangePoint> = (0..indices.len()).filter_map(|i| judge(values, &indices, i, settings.min_segment)).collect();
        let weakest = tested.iter().filter(|c| c.p >= settings.max_p).max_by(|a, b| a.p.total_cmp(&b.p));
        match weakest {
            Some(w) => indices.retain(|&i| i != w.index),
            None if tested.len() == indices.len() => return tested,
            None => indices.retain(|i| tested.iter().any(|c| c.index == *i)),
        }
    }
}

/// Adds the significant change points of `values[start..end]` to `found`, largest divergence first.
fn bisect(values: &[f64], divergence: &Divergence, start: usize, end: usize, settings: Settings, found: &mut Vec<usize>) {
    let Some(split) = divergence.best_split(start, end, settings.min_segment) else { return };
    let candidates = splits(start, end, settings.min_segment);
    let significant = student_t_test(&values[start..split], &values[split..end]).is_some_and(|t| corrected(t.p, candidates) < settings.max_p);
    if significant {
        found.push(split);
        bisect(values, divergence, start, split, settings, found);
        bisect(values, divergence, split, end, settings, found);
    }
}

/// The `i`th change point of `indices`, tested between its neighbours; None when a side has too few values.
fn judge(values: &[f64], indices: &[usize], i: usize, min_segment: usize) -> Option<ChangePoint> {
    let start = if i == 0 { 0 } else { indices[i - 1] };
    let end = indices.get(i + 1).copied().unwrap_or(values.len());
    let (before, after) = (&values[start..indices[i]], &values[indices[i]..end]);
    let test = student_t_test(before, after)?;
    let (sb, sa) = (Summary::of(before)?, Summary::of(after)?);
    let (mb, ma) = (sb.mean, sa.mean);
    let ratio = ma / mb;
    // The ratio's standard error on the log scale (the delta method): each side's (stdev / mean)² / n.
    let log_se = ((sb.stdev / mb).powi(2) / before.len() as f64 + (sa.stdev / ma).powi(2) / after.len() as f64).sqrt();
    let half = quantile(0.975, test.df) * log_se;
    let p = corrected(test.p, splits(start, end, min_segment));
    Some(ChangePoint { index: indices[i], ratio, ratio_ci95: (ratio * (-half).exp(), ratio * half.exp()), p })
}

/// How many splits of [start, end) leave `min_segment` values on each side: the candidates the divergence
/// chose among.
fn splits(start: usize, end: usize, min_segment: usize) -> usize {
    (end - start + 1).saturating_sub(2 * min_segment.max(2)).max(1)
}

/// The t-test's p-value of the split that looked most different among `candidates`, times their number
/// (Bonferroni): the plain p-value of a chosen split is too small, as if it had been the only one tested.
fn corrected(p: f64, candidates: usize) -> f64 {
    (p * candidates as f64).min(1.0)
}

/// Sums of |x_i − x_j| over any block of pairs in constant time: the two-dimensional prefix sums of the
/// distance matrix.
struct Divergence {
    n: usize,
    prefix: Vec<f64>,
}

impl Divergence {
    fn of(values: &[f64]) -> Divergence {
        let n = values.len();
        let mut prefix = vec![0.0; (n + 1) * (n + 1)];
        for i in 0..n {
            for j in 0..n {
                let d = (values[i] - values[j]).abs();
                prefix[(i + 1) * (n + 1) + j + 1] = d + prefix[i * (n + 1) + j + 1] + prefix[(i + 1) * (n + 1) + j] - prefix[i * (n + 1) + j];
            }
        }
        Divergence { n, prefix }
    }

    /// Σ |x_i − x_j| for i in rows, j in columns.
    fn block(&self, rows: (usize, usize), columns: (usize, usize)) -> f64 {
        let at = |i: usize, j: usize| self.prefix[i * (self.n + 1) + j];
        at(rows.1, columns.1) - at(rows.0, columns.1) - at(rows.1, columns.0) + at(rows.0, columns.0)
    }

    /// Matteson and James's Q̂ of splitting [start, end) at `split` (α = 1): the scaled energy distance
    /// between the two sides, 2/(nm) Σ|x−y| − Σ|x−x'|/C(n,2) − Σ|y−y'|/C(m,2), times nm/(n+m).
    fn q(&self, start: usize, split: usize, end: usize) -> f64 {
        let (n, m) = ((split - start) as f64, (end - split) as f64);
        let between = self.block((start, split), (split, end));
        // The square blocks count every unordered pair twice.
        let within_left = self.block((start, split), (start, split)) / 2.0;
        let within_right = self.block((split, end), (split, end)) / 2.0;
        let e = 2.0 * between / (n * m) - within_left / (n * (n - 1.0) / 2.0) - within_right / (m * (m - 1.0) / 2.0);
        e * n * m / (n + m)
    }

    /// The split of [start, end) with the largest Q̂, leaving at least `min_segment` values on each side.
    fn best_split(&self, start: usize, end: usize, min_segment: usize) -> Option<usize> {
        let min_segment = min_segment.max(2);
        if end < start + 2 * min_segment {
            return None;
        }
        (start + min_segment..=end - min_segment).max_by(|&a, &b| self.q(start, a, end).total_cmp(&self.q(start, b, end)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clean_step_is_found_where_it_is_with_its_ratio() {
        let values: Vec<f64> = (0..12).map(|i| if i < 6 { 100.0 + (i % 3) as f64 } else { 120.0 + (i % 3) as f64 }).collect();
        let found = find(&values, Settings::default());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].index, 6);
        assert!((found[0].ratio - 121.0 / 101.0).abs() < 1e-9);
        assert!(found[0].ratio_ci95.0 < found[0].ratio && found[0].ratio < found[0].ratio_ci95.1);
        assert!(found[0].p < 1e-6);
    }

    #[test]
    fn the_divergence_matches_its_definition() {
        let values = [1.0, 2.0, 4.0, 8.0, 16.0];
        let d = Divergence::of(&values);
        // Split at 2: between |1-4|+|1-8|+|1-16|+|2-4|+|2-8|+|2-16| = 47; within left 1, right 4+12+8 = 24.
        let e = 2.0 * 47.0 / 6.0 - 1.0 / 1.0 - 24.0 / 3.0;
        assert!((d.q(0, 2, 5) - e * 6.0 / 5.0).abs() < 1e-9);
    }

    #[test]
    fn too_short_a_series_has_no_change_point() {
        assert!(find(&[1.0, 2.0, 3.0, 100.0, 100.0], Settings::default()).is_empty());
        assert!(find(&[], Settings::default()).is_empty());
    }
}
