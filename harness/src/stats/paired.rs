//! The change B/A from paired rounds (A and B measured back to back), without assuming a distribution:
//! the Hodges–Lehmann estimate of the paired log-ratios with the interval of the Wilcoxon signed-rank
//! test.
//!
//! Each pair gives d = ln(b / a); what the machine did to both rounds of a pair cancels in d. The estimate
//! is the median of the n(n+1)/2 Walsh averages (d_i + d_j)/2, i ≤ j (J. L. Hodges and E. L. Lehmann,
//! Ann. Math. Statist. 34, 1963; Tukey's Walsh averages); its 95% interval is [W_(k+1), W_(N−k)] of the
//! sorted averages, where k is the largest count with P(T⁺ ≤ k) ≤ 0.025 under the signed-rank statistic's
//! null distribution (F. Wilcoxon, Biometrics Bull. 1, 1945; Hollander & Wolfe, "Nonparametric Statistical
//! Methods", §3.2). The distribution is exact, counted over the 2ⁿ signs for every n this module is given
//! (a table of subset sums, n(n+1)/2 entries per step). The p-value of "no change" comes from the same
//! table; where some d is zero or magnitudes tie, zeros are dropped (Wilcoxon's rule), ties take their
//! mean rank, and the p-value comes from the normal approximation with the tie correction instead.

use serde::{Deserialize, Serialize};

/// B/A from pairs, as a ratio.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PairedRatio {
    pub pairs: usize,
    /// Hodges–Lehmann estimate of B/A.
    pub ratio: f64,
    /// Its 95% interval; absent below 6 pairs, which cannot give one (P(T⁺ = 0) = 1/32 > 0.025 at 5).
    pub ci95: Option<(f64, f64)>,
    /// Two-sided p-value of "B and A are the same" (signed-rank test).
    pub p: f64,
}

/// How a paired estimate reads against a change band and a same band (0.01 for ±1%).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PairedVerdict {
    /// The whole interval lies above 1 + the change band.
    Higher,
    /// The whole interval lies below 1 − the change band.
    Lower,
    /// The whole interval lies within the same band: no difference beyond it.
    Within,
    /// None of these (or no interval): more pairs are needed.
    Unclear,
}

impl PairedRatio {
    /// The interval against the bands: a change first, so that an interval both beyond the change band
    /// and within a wider same band reads as the change it shows.
    pub fn verdict(&self, change: f64, same: f64) -> PairedVerdict {
        match self.ci95 {
            Some((lo, _)) if lo > 1.0 + change => PairedVerdict::Higher,
            Some((_, hi)) if hi < 1.0 - change => PairedVerdict::Lower,
            Some((lo, hi)) if lo >= 1.0 - same && hi <= 1.0 + same => PairedVerdict::Within,
            _ => PairedVerdict::Unclear,
        }
    }

    /// Half the interval's width on the log scale, in percent: the smallest change the pairs could tell
    /// apart.
    pub fn ci95_half_width_pct(&self) -> Option<f64> {
        self.ci95.map(|(lo, hi)| (hi.ln() - lo.ln()) / 2.0 * 100.0)
    }
}

/// B/A from pairs (a_i, b_i); None unless there are at least two pairs, every value positive and finite.
pub fn paired_ratio(pairs: &[(f64, f64)]) -> Option<PairedRatio> {
    if pairs.len() < 2 || pairs.iter().any(|(a, b)| !(a.is_finite() && b.is_finite() && *a > 0.0 && *b > 0.0)) {
        return None;
    }
    let d: Vec<f64> = pairs.iter().map(|(a, b)| b.ln() - a.ln()).collect();
    let n = d.len();
    let mut walsh: Vec<f64> = Vec::with_capacity(n * (n + 1) / 2);
    for i in 0..n {
        for j in i..n {
            walsh.push((d[i] + d[j]) / 2.0);
        }
    }
    walsh.sort_by(f64::total_cmp);
    let ratio = super::rounds::median(&walsh).exp();
    let counts = signed_rank_distribution(n);
    let total: f64 = counts.iter().sum();
    let mut cdf = 0.0;
    let mut k = None;
    for (t, c) in counts.iter().enumerate() {
        cdf += c / total;
        if cdf > 0.025 {
            break;
        }
        k = Some(t);
    }
    let big_n = walsh.len();
    // [W_(k+1), W_(N−k)], counted from 1.
    let ci95 = k.filter(|&k| k < big_n - 1 - k).map(|k| (walsh[k].exp(), walsh[big_n - 1 - k].exp()));
    Some(PairedRatio { pairs: n, ratio, ci95, p: signed_rank_p(&d, &counts) })
}

/// Counts of each value 0..=n(n+1)/2 of T⁺ (the sum of the ranks with a positive sign) over the 2ⁿ
/// equally likely sign patterns.
fn signed_rank_distribution(n: usize) -> Vec<f64> {
    let max = n * (n + 1) / 2;
    let mut counts = vec![0.0; max + 1];
    counts[0] = 1.0;
    for rank in 1..=n {
        // Rank `rank` is positive (adds it) or not; from the top down so each rank is used once.
        for t in (rank..=rank * (rank + 1) / 2).rev() {
            counts[t] += counts[t - rank];
        }
    }
    counts
}

/// Two-sided p of the signed-rank test: exact without zeros and tied magnitudes, else the normal
/// approximation with the tie correction of the variance.
fn signed_rank_p(d: &[f64], exact_counts: &[f64]) -> f64 {
    let nonzero: Vec<f64> = d.iter().copied().filter(|x| *x != 0.0).collect();
    let n = nonzero.len();
    if n == 0 {
        return 1.0;
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| nonzero[i].abs().total_cmp(&nonzero[j].abs()));
    let mut ranks = vec![0.0; n];
    let mut tie_sum = 0.0;
    let mut i = 0;
    while i < n {
        let j = (i..n).take_while(|&j| nonzero[order[j]].abs() == nonzero[order[i]].abs()).count();
        let mean_rank = (2 * i + j + 1) as f64 / 2.0;
        for &o in &order[i..i + j] {
            ranks[o] = mean_rank;
        }
        let t = j as f64;
        tie_sum += t * t * t - t;
        i += j;
    }
    let t_plus: f64 = (0..n).filter(|&i| nonzero[i] > 0.0).map(|i| ranks[i]).sum();
    let nf = n as f64;
    let centre = nf * (nf + 1.0) / 4.0;
    if n == d.len() && tie_sum == 0.0 {
        let total: f64 = exact_counts.iter().sum();
        let lower = t_plus.min(nf * (nf + 1.0) / 2.0 - t_plus) as usize;
        return (2.0 * exact_counts[..=lower].iter().sum::<f64>() / total).min(1.0);
    }
    let var = nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0 - tie_sum / 48.0;
    if var <= 0.0 {
        return 1.0;
    }
    let z = ((t_plus - centre).abs() - 0.5).max(0.0) / var.sqrt();
    super::rank::erfc(z / std::f64::consts::SQRT_2).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signed_rank_distribution_matches_published_values() {
        // n = 5: 32 patterns, one with T⁺ = 0; n = 10: P(T⁺ ≤ 8) = 0.0244, P(T⁺ ≤ 9) = 0.0322 (tables of
        // the signed-rank statistic), so the 95% interval uses k = 8.
        let c5 = signed_rank_distribution(5);
        assert_eq!(c5.iter().sum::<f64>(), 32.0);
        assert_eq!(c5[0], 1.0);
        let c10 = signed_rank_distribution(10);
        let total: f64 = c10.iter().sum();
        assert_eq!(total, 1024.0);
        let cdf = |t: usize| c10[..=t].iter().sum::<f64>() / total;
        assert!((cdf(8) - 25.0 / 1024.0).abs() < 1e-12, "{}", cdf(8));
        assert!((cdf(9) - 33.0 / 1024.0).abs() < 1e-12, "{}", cdf(9));
    }

    #[test]
    fn a_planted_ratio_is_found_with_its_interval() {
        // A moves with the machine round by round; B is A × 0.97 with a little noise of its own.
        let noise = [0.002, -0.003, 0.001, 0.0, -0.001, 0.003, -0.002, 0.001, 0.002, -0.001, 0.0, 0.001];
        let pairs: Vec<(f64, f64)> = (0..12)
            .map(|i| {
                let machine = if i % 3 == 0 { 0.7 } else { 1.0 };
                let a = 100_000.0 * machine;
                (a, a * 0.97 * (1.0 + noise[i]))
            })
            .collect();
        let r = paired_ratio(&pairs).unwrap();
        assert!((r.ratio - 0.97).abs() < 0.002, "{r:?}");
        let (lo, hi) = r.ci95.unwrap();
        assert!(lo < 0.97 && 0.97 < hi && hi < 0.99, "{r:?}");
        assert_eq!(r.verdict(0.01, 0.01), PairedVerdict::Lower);
        assert_eq!(r.verdict(0.01, 0.05), PairedVerdict::Lower, "a change shown beyond the change band wins over a wide same band");
        assert!(r.p < 0.01, "every pair lower: {r:?}");
    }

    #[test]
    fn no_change_reads_within_the_band() {
        let noise = [0.002, -0.003, 0.001, 0.0005, -0.001, 0.003, -0.002, 0.001, 0.0015, -0.0012, -0.0004, 0.0008];
        let pairs: Vec<(f64, f64)> = noise.iter().enumerate().map(|(i, e)| (1000.0 + i as f64, (1000.0 + i as f64) * (1.0 + e))).collect();
        let r = paired_ratio(&pairs).unwrap();
        assert_eq!(r.verdict(0.01, 0.01), PairedVerdict::Within, "{r:?}");
        assert!(r.p > 0.05);
        assert_eq!(r.verdict(0.001, 0.001), PairedVerdict::Unclear, "an interval wider than the band shows neither");
    }

    #[test]
    fn the_interval_is_the_order_statistics_of_the_walsh_averages() {
        // Ten pairs with d = 1..10 (in logs): 55 Walsh averages; k = 8, so the interval runs from the 9th
        // smallest to the 9th largest.
        let pairs: Vec<(f64, f64)> = (1..=10).map(|i| (1.0, (i as f64).exp())).collect();
        let r = paired_ratio(&pairs).unwrap();
        let mut walsh: Vec<f64> = Vec::new();
        for i in 1..=10 {
            for j in i..=10 {
                walsh.push((i + j) as f64 / 2.0);
            }
        }
        walsh.sort_by(f64::total_cmp);
        let (lo, hi) = r.ci95.unwrap();
        assert!((lo.ln() - walsh[8]).abs() < 1e-9 && (hi.ln() - walsh[55 - 9]).abs() < 1e-9, "{lo} {hi}");
        assert!((r.ratio.ln() - 5.5).abs() < 1e-9);
    }

    #[test]
    fn too_few_pairs_give_no_interval() {
        let pairs = [(1.0, 1.1), (1.0, 1.2), (1.0, 1.05), (1.0, 1.3), (1.0, 1.15)];
        assert_eq!(paired_ratio(&pairs).unwrap().ci95, None);
        assert_eq!(paired_ratio(&pairs).unwrap().verdict(0.01, 0.01), PairedVerdict::Unclear);
        assert!(paired_ratio(&[(1.0, 1.0)]).is_none());
        assert!(paired_ratio(&[(1.0, 0.0), (1.0, 1.0)]).is_none());
    }
}
