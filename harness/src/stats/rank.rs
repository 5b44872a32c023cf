//! Whether two sets of rounds differ beyond noise, without assuming a distribution: the Mann–Whitney U test
//! and the Hodges–Lehmann estimate of the ratio B/A with its distribution-free 95% interval.
//!
//! Rounds on a shared machine are not normal: most sit within a percent of each other and a few fall to
//! half (see docs/methodology.md). A test on means (Welch's t) is then either blind (one slow round
//! inflates the variance) or fooled (a shifted mean from two slow rounds). Ranks are neither.
//!
//! - U test (H. B. Mann and D. R. Whitney, Ann. Math. Statist. 18, 1947): U_B counts the pairs (a, b) with
//!   b > a, ties counting one half. Without ties and with at most `EXACT_MAX` values a side, the two-sided
//!   p-value is exact, from the distribution of U counted over every arrangement (the recurrence
//!   N(u; m, n) = N(u − n; m − 1, n) + N(u; m, n − 1)); otherwise the normal approximation with the tie
//!   correction of the variance and a continuity correction of ½.
//! - Ratio: the values are compared on a log scale, so a change reads as a ratio. The Hodges–Lehmann
//!   estimate is the median of the m·n pairwise differences ln b_j − ln a_i; its 95% interval is
//!   [d_(k+1), d_(mn−k)] of the sorted differences, where k is the largest count with P(U ≤ k) ≤ 0.025
//!   (L. E. Moses, in Walker & Lev, "Statistical Inference", 1953; Hollander & Wolfe, "Nonparametric
//!   Statistical Methods", §4.3). Exponentiated, both give the ratio B/A and its interval.

use serde::{Deserialize, Serialize};

/// Up to this many values a side (and no ties), p-values and intervals come from the exact distribution.
pub const EXACT_MAX: usize = 40;

/// B against A.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RankTest {
    /// U of B: pairs with b > a, ties one half. Above m·n/2 when B tends to be higher.
    pub u: f64,
    /// Two-sided p-value: the chance of U at least this far from m·n/2 if both sides measured the same thing.
    pub p: f64,
    /// Whether `p` and `ratio_ci95` come from the exact distribution of U.
    pub exact: bool,
    /// Hodges–Lehmann estimate of B/A.
    pub ratio: f64,
    /// Its 95% interval; absent when the samples are too small for one (fewer than 4 values a side when equal).
    pub ratio_ci95: Option<(f64, f64)>,
}

/// The test of B against A; None unless both sides have at least two values, all positive and finite.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<RankTest> {
    let ok = |x: &[f64]| x.len() >= 2 && x.iter().all(|v| v.is_finite() && *v > 0.0);
    if !ok(a) || !ok(b) {
        return None;
    }
    let (m, n) = (a.len(), b.len());
    let mut u: f64 = 0.0;
    let mut ties = false;
    for x in a {
        for y in b {
            if y > x {
                u += 1.0;
            } else if y == x {
                u += 0.5;
                ties = true;
            }
        }
    }
    let mn = (m * n) as f64;
    let exact = !ties && m <= EXACT_MAX && n <= EXACT_MAX;
    let (p, k): (f64, Option<usize>) = if exact {
        let counts = u_distribution(m, n);
        let total: f64 = counts.iter().sum();
        // Two-sided: twice the smaller tail, at most 1.
        let lower = u.min(mn - u) as usize;
        let tail: f64 = counts[..=lower].iter().sum::<f64>() / total;
        let mut cdf = 0.0;
        let mut k = None;
        for (j, c) in counts.iter().enumerate() {
            cdf += c / total;
            if cdf > 0.025 {
                break;
            }
            k = Some(j);
        }
        ((2.0 * tail).min(1.0), k)
    } else {
        let p = normal_p(a, b, u);
        let sd = (mn * (m + n + 1) as f64 / 12.0).sqrt();
        let k = (mn / 2.0 - Z_975 * sd - 0.5).floor();
        (p, (k >= 0.0).then_some(k as usize))
    };
    let mut d: Vec<f64> = a.iter().flat_map(|x| b.iter().map(move |y| y.ln() - x.ln())).collect();
    d.sort_by(f64::total_cmp);
    let ratio = super::rounds::median(&d).exp();
    let ratio_ci95 = k.filter(|&k| k < d.len() / 2).map(|k| (d[k].exp(), d[d.len() - 1 - k].exp()));
    Some(RankTest { u, p, exact, ratio, ratio_ci95 })
}

/// Counts of each value 0..=m·n of U over all C(m+n, m) arrangements of two samples without ties.
fn u_distribution(m: usize, n: usize) -> Vec<f64> {
    // table[j][i] = counts for (i values of A, j of B); built up over i and j.
    let mut prev: Vec<Vec<f64>> = (0..=n).map(|_| vec![1.0]).collect(); // i = 0: U is 0 in one way
    for i in 1..=m {
        let mut cur: Vec<Vec<f64>> = Vec::with_capacity(n + 1);
        cur.push(vec![1.0]); // j = 0
        for j in 1..=n {
            // The largest value is A's (U unchanged, from (i−1, j)) or B's (it beats all i of A: +i, from (i, j−1)).
            let mut c = vec![0.0; i * j + 1];
            for (u, v) in prev[j].iter().enumerate() {
                c[u] += v;
            }
            for (u, v) in cur[j - 1].iter().enumerate() {
                c[u + i] += v;
            }
            cur.push(c);
        }
        prev = cur;
    }
    prev.swap_remove(n)
}

/// Two-sided p from the normal approximation, with the tie correction and a continuity correction of ½.
fn normal_p(a: &[f64], b: &[f64], u: f64) -> f64 {
    let (m, n) = (a.len() as f64, b.len() as f64);
    let mut all: Vec<f64> = a.iter().chain(b).copied().collect();
    all.sort_by(f64::total_cmp);
    let mut tie_sum = 0.0;
    let mut i = 0;
    while i < all.len() {
        let j = all[i..].iter().take_while(|v| **v == all[i]).count();
        let t = j as f64;
        tie_sum += t * t * t - t;
        i += j;
    }
    let total = m + n;
    let var = m * n / 12.0 * ((total + 1.0) - tie_sum / (total * (total - 1.0)));
    if var <= 0.0 {
        return 1.0;
    }
    let z = ((u - m * n / 2.0).abs() - 0.5).max(0.0) / var.sqrt();
    erfc(z / std::f64::consts::SQRT_2).min(1.0)
}

/// z(0.975) of the standard normal distribution.
const Z_975: f64 = 1.959963984540054;

/// The complementary error function, from the Chebyshev fit of Numerical Recipes (2nd ed.) §6.2, with a
/// fractional error below 1.2e-7 everywhere.
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.26551223
        + t * (1.00002368
            + t * (0.37409196
                + t * (0.09678418
                    + t * (-0.18628806
                        + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
    let r = t * poly.exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// U and its two-sided p by listing every way to split the pooled values (independent of the recurrence).
    fn brute_force(a: &[f64], b: &[f64]) -> (f64, f64) {
        let all: Vec<f64> = a.iter().chain(b).copied().collect();
        let u_of = |xs: &[f64], ys: &[f64]| -> f64 {
            xs.iter().flat_map(|x| ys.iter().map(move |y| if y > x { 1.0 } else if y == x { 0.5 } else { 0.0 })).sum()
        };
        let u = u_of(a, b);
        let centre = (a.len() * b.len()) as f64 / 2.0;
        let (mut extreme, mut total) = (0.0, 0.0);
        for mask in 0u32..(1 << all.len()) {
            if mask.count_ones() as usize != a.len() {
                continue;
            }
            let xs: Vec<f64> = (0..all.len()).filter(|i| mask & (1 << i) != 0).map(|i| all[i]).collect();
            let ys: Vec<f64> = (0..all.len()).filter(|i| mask & (1 << i) == 0).map(|i| all[i]).collect();
            total += 1.0;
            if (u_of(&xs, &ys) - centre).abs() >= (u - centre).abs() - 1e-9 {
                extreme += 1.0;
            }
        }
        (u, extreme / total)
    }

    #[test]
    fn exact_p_values_match_every_arrangement() {
        let cases: [(&[f64], &[f64]); 4] = [
            (&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]),
            (&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]),
            (&[10.0, 12.0, 9.0, 15.0, 11.0, 14.0], &[13.0, 16.0, 18.0, 17.0, 8.0, 19.0, 20.0]),
            (&[5.0, 1.0, 9.0, 3.0], &[2.0, 8.0, 4.0, 6.0, 7.0]),
        ];
        for (a, b) in cases {
            let t = mann_whitney(a, b).unwrap();
            let (u, p) = brute_force(a, b);
            assert!(t.exact);
            assert_eq!(t.u, u);
            assert!((t.p - p).abs() < 1e-12, "{a:?} {b:?}: {} vs {p}", t.p);
        }
        // Completely separated samples of 3 and 5: 2 of C(6,3) = 20 and 2 of C(10,5) = 252 arrangements.
        assert!((mann_whitney(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap().p - 0.1).abs() < 1e-12);
        let p = mann_whitney(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]).unwrap().p;
        assert!((p - 2.0 / 252.0).abs() < 1e-12);
    }

    #[test]
    fn the_normal_approximation_is_close_with_ties() {
        // Ties force the approximation; with 7 and 8 values it lands near the exact enumeration.
        let a = [3.0, 4.0, 4.0, 5.0, 6.0, 6.0, 7.0];
        let b = [5.0, 6.0, 7.0, 7.0, 8.0, 9.0, 9.0, 10.0];
        let t = mann_whitney(&a, &b).unwrap();
        let (u, p) = brute_force(&a, &b);
        assert!(!t.exact);
        assert_eq!(t.u, u);
        assert!((t.p - p).abs() < 0.01, "{} vs {p}", t.p);
    }

    #[test]
    fn hodges_lehmann_ratio_and_interval() {
        // B is A times 0.64 with the same spread: the estimate is exactly 0.64 and its interval holds it.
        let a: Vec<f64> = (0..10).map(|i| 100.0 + i as f64).collect();
        let b: Vec<f64> = a.iter().map(|x| x * 0.64).collect();
        let t = mann_whitney(&a, &b).unwrap();
        assert!((t.ratio - 0.64).abs() < 1e-12);
        let (lo, hi) = t.ratio_ci95.unwrap();
        assert!(lo < 0.64 && 0.64 < hi && hi < 1.0, "({lo}, {hi})");
        assert!(t.p < 1e-4);
        // The interval's ranks: for 10 and 10 the two-sided 5% critical value of U is 23 (published tables of U),
        // so the interval runs from the 24th smallest to the 24th largest of the 100 differences.
        let d = {
            let mut d: Vec<f64> = a.iter().flat_map(|x| b.iter().map(move |y| y.ln() - x.ln())).collect();
            d.sort_by(f64::total_cmp);
            d
        };
        assert_eq!((lo, hi), (d[23].exp(), d[100 - 24].exp()));
    }

    #[test]
    fn identical_samples_do_not_differ() {
        let a = [100.0, 102.0, 98.0, 101.0, 99.0, 100.5];
        let t = mann_whitney(&a, &a).unwrap();
        assert!(t.p > 0.9);
        assert!((t.ratio - 1.0).abs() < 1e-12);
        let (lo, hi) = t.ratio_ci95.unwrap();
        assert!(lo < 1.0 && hi > 1.0);
    }

    #[test]
    fn needs_two_positive_values_each() {
        assert!(mann_whitney(&[1.0], &[1.0, 2.0]).is_none());
        assert!(mann_whitney(&[1.0, 2.0], &[0.0, 2.0]).is_none());
        assert!(mann_whitney(&[1.0, f64::NAN], &[1.0, 2.0]).is_none());
        // Too few for an interval: 3 and 3 give P(U = 0) = 0.05 > 0.025.
        assert_eq!(mann_whitney(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap().ratio_ci95, None);
    }

    #[test]
    fn erfc_of_known_values() {
        // erfc(0) = 1; erfc(1) = 0.157299207; erfc(1.959964/√2) = 0.05.
        assert!((erfc(0.0) - 1.0).abs() < 1e-7);
        assert!((erfc(1.0) - 0.157_299_207).abs() < 1e-7);
        assert!((erfc(Z_975 / std::f64::consts::SQRT_2) - 0.05).abs() < 1e-7);
        assert!((erfc(-1.0) - (2.0 - 0.157_299_207)).abs() < 1e-7);
    }
}
