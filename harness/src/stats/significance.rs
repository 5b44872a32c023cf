//! Whether two sets of rounds differ beyond noise: Welch's unequal-variances t-test.
//!
//! - Statistic: t = (x̄_B − x̄_A) / √(s_A²/n_A + s_B²/n_B), with the Welch–Satterthwaite degrees of freedom
//!   ν = (s_A²/n_A + s_B²/n_B)² / ((s_A²/n_A)²/(n_A − 1) + (s_B²/n_B)²/(n_B − 1))
//!   (B. L. Welch, "The generalization of 'Student's' problem when several different population variances
//!   are involved", Biometrika 34, 1947; F. E. Satterthwaite, Biometrics Bulletin 2, 1946). Two runs of a
//!   benchmark rarely have equal variances, so the pooled Student test does not apply.
//! - Two-sided p-value: P(|T_ν| ≥ |t|) = I_x(ν/2, 1/2) with x = ν / (ν + t²), where I is the regularized
//!   incomplete beta function (Abramowitz & Stegun 26.7.1 with 26.5.27), evaluated by its continued fraction
//!   (A&S 26.5.8) with the modified Lentz method, as in Numerical Recipes §6.4. ln Γ by Lanczos' series
//!   (g = 7, nine coefficients), good to about 15 digits.
//! - 95% interval of B − A: (x̄_B − x̄_A) ± t(0.975, ν) · √(s_A²/n_A + s_B²/n_B), the quantile found by
//!   bisection on the p-value, since ν is not a whole number.
//!
//! The test compares means of per-round values: req/s, CPU per request, and each round's own p99.

use serde::{Deserialize, Serialize};

/// The result of comparing B against A.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Welch {
    pub mean_a: f64,
    pub mean_b: f64,
    /// Positive when B's mean is higher.
    pub t: f64,
    pub df: f64,
    /// Two-sided p-value: the chance of a difference at least this large if both runs measured the same thing.
    pub p: f64,
    /// 95% confidence interval of mean_B − mean_A.
    pub diff_ci95: (f64, f64),
}

/// Welch's test of B against A; None unless both have at least two values.
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (mean_a, var_a) = mean_var(a);
    let (mean_b, var_b) = mean_var(b);
    let (wa, wb) = (var_a / a.len() as f64, var_b / b.len() as f64);
    let se = (wa + wb).sqrt();
    let diff = mean_b - mean_a;
    if se == 0.0 {
        // No spread on either side: the difference is exact, or there is none.
        let p = if diff == 0.0 { 1.0 } else { 0.0 };
        let t = if diff == 0.0 { 0.0 } else { diff.signum() * f64::INFINITY };
        return Some(Welch { mean_a, mean_b, t, df: (a.len() + b.len() - 2) as f64, p, diff_ci95: (diff, diff) });
    }
    let t = diff / se;
    let df = (wa + wb).powi(2) / (wa * wa / (a.len() - 1) as f64 + wb * wb / (b.len() - 1) as f64);
    let half = t_quantile_two_sided(0.05, df) * se;
    Some(Welch { mean_a, mean_b, t, df, p: t_two_sided_p(t, df), diff_ci95: (diff - half, diff + half) })
}

fn mean_var(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    (mean, x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0))
}

/// P(|T| ≥ |t|) for Student's t with `df` degrees of freedom (need not be whole).
pub fn t_two_sided_p(t: f64, df: f64) -> f64 {
    if t.is_infinite() {
        return 0.0;
    }
    inc_beta(df / 2.0, 0.5, df / (df + t * t))
}

/// The t with P(|T| ≥ t) = `p`, e.g. p = 0.05 gives t(0.975, df).
pub fn t_quantile_two_sided(p: f64, df: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, 1.0);
    while t_two_sided_p(hi, df) > p {
        lo = hi;
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if t_two_sided_p(mid, df) > p { lo = mid } else { hi = mid }
        if hi - lo <= 1e-13 * hi {
            break;
        }
    }
    (lo + hi) / 2.0
}

/// ln Γ(x) for x > 0 by the Lanczos approximation (g = 7, n = 9), with the reflection formula below 0.5.
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = C[0];
    for (i, c) in C.iter().enumerate().skip(1) {
        sum += c / (x + i as f64);
    }
    let t = x + G + 0.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// The regularized incomplete beta function I_x(a, b).
pub fn inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    // The continued fraction converges fast for x < (a + 1) / (a + b + 2); use the symmetry I_x(a, b) =
    // 1 − I_{1−x}(b, a) on the other side.
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// The continued fraction of A&S 26.5.8 by the modified Lentz method.
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    const EPS: f64 = 1e-15;
    let nonzero = |v: f64| if v.abs() < TINY { TINY } else { v };
    let mut c = 1.0;
    let mut d = 1.0 / nonzero(1.0 - (a + b) * x / (a + 1.0));
    let mut h = d;
    for m in 1..=500 {
        let m = m as f64;
        // even step: d_{2m} = m (b − m) x / ((a + 2m − 1)(a + 2m))
        let even = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        d = 1.0 / nonzero(1.0 + even * d);
        c = nonzero(1.0 + even / c);
        h *= d * c;
        // odd step: d_{2m+1} = −(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1))
        let odd = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        d = 1.0 / nonzero(1.0 + odd * d);
        c = nonzero(1.0 + odd / c);
        let step = d * c;
        h *= step;
        if (step - 1.0).abs() < EPS {
            break;
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::rounds::t_quantile_975;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-300)
    }

    #[test]
    fn ln_gamma_of_known_values() {
        assert!(ln_gamma(1.0).abs() < 1e-14 && ln_gamma(2.0).abs() < 1e-14);
        assert!(close(ln_gamma(0.5), std::f64::consts::PI.sqrt().ln(), 1e-14));
        assert!(close(ln_gamma(10.0), 362_880.0f64.ln(), 1e-14));
        assert!(close(ln_gamma(0.1), 2.252_712_651_734_206, 1e-13));
    }

    #[test]
    fn p_values_match_closed_forms() {
        // ν = 1 (Cauchy): P(|T| ≥ t) = 1 − (2/π) atan t;  ν = 2: 1 − t / √(2 + t²)
        for t in [0.1, 0.5, 1.0, 2.0, 6.3, 40.0] {
            let cauchy = 1.0 - 2.0 / std::f64::consts::PI * f64::atan(t);
            assert!(close(t_two_sided_p(t, 1.0), cauchy, 1e-12), "ν=1 t={t}");
            let two = 1.0 - t / (2.0 + t * t).sqrt();
            assert!(close(t_two_sided_p(t, 2.0), two, 1e-12), "ν=2 t={t}");
            // ν = 4: P(|T| ≥ t) = 1 − (3/4) u (1 − t² / (12 (1 + t²/4))) with u = t / √(1 + t²/4); the closed
            // form cancels digits in the far tail, so compare absolutely.
            let u = t / (1.0 + t * t / 4.0).sqrt();
            let four = 1.0 - 0.75 * u * (1.0 - t * t / (12.0 * (1.0 + t * t / 4.0)));
            assert!((t_two_sided_p(t, 4.0) - four).abs() < 1e-14, "ν=4 t={t}");
        }
        assert_eq!(t_two_sided_p(0.0, 7.3), 1.0);
        assert_eq!(t_two_sided_p(f64::INFINITY, 7.3), 0.0);
    }

    #[test]
    fn quantiles_match_the_published_t_table() {
        // The same table rounds.rs tabulates (six decimals), for every whole ν up to 30, and beyond.
        for df in 1..=40 {
            let q = t_quantile_two_sided(0.05, df as f64);
            assert!((q - t_quantile_975(df)).abs() < 2e-6, "df={df}: {q} vs {}", t_quantile_975(df));
        }
    }

    #[test]
    fn matches_r_t_test_output() {
        // R: t.test(ts1, ts2) prints "t = -1.8325, df = 17.9, p-value = 0.08356,
        // 95 percent confidence interval: -2.1469104 0.1469104" (for A − B; ours is B − A).
        // Reference values to 10 digits from mpmath at 30 digits: t = 1.832541665, ν = 17.90031015,
        // p = 0.08355979162, CI of B − A = (−0.1469103661, 2.146910366).
        let a = [11.0, 9.0, 10.0, 11.0, 10.0, 12.0, 9.0, 11.0, 12.0, 9.0];
        let b = [11.0, 13.0, 10.0, 13.0, 12.0, 9.0, 11.0, 12.0, 12.0, 11.0];
        let w = welch(&a, &b).unwrap();
        assert_eq!((w.mean_a, w.mean_b), (10.4, 11.4));
        assert!(close(w.t, 1.832541665, 1e-9), "{}", w.t);
        assert!(close(w.df, 17.90031015, 1e-9), "{}", w.df);
        assert!(close(w.p, 0.08355979162, 1e-8), "{}", w.p);
        assert!(close(w.diff_ci95.0, -0.1469103661, 1e-8), "{:?}", w.diff_ci95);
        assert!(close(w.diff_ci95.1, 2.146910366, 1e-8), "{:?}", w.diff_ci95);
    }

    #[test]
    fn matches_worked_examples() {
        // The first worked example of the Wikipedia article "Welch's t-test": t = −2.46, ν = 25.0, p = 0.021
        // (for A1 − A2); more digits from mpmath: t = −2.455356398, ν = 24.98852929, p = 0.02137800146.
        let a1 = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4];
        let a2 = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4];
        let w = welch(&a1, &a2).unwrap();
        assert!(close(w.t, 2.455356398, 1e-9) && close(w.df, 24.98852929, 1e-9) && close(w.p, 0.02137800146, 1e-8), "{w:?}");
        // Rosetta Code "Welch's t-test": p = 0.010751 (ν ≈ 2.0009, t ≈ 9.56), a tiny and very unequal sample.
        let w = welch(&[3.0, 4.0, 1.0, 2.1], &[490.2, 340.0, 433.9]).unwrap();
        assert!(close(w.p, 0.01075156115, 1e-8) && close(w.df, 2.000852349, 1e-9), "{w:?}");
        // By hand: A = 1..5 (mean 3, s² 2.5), B = 2,4,..,10 (mean 6, s² 10): se² = 0.5 + 2 = 2.5,
        // t = 3 / √2.5 = 1.897366596, ν = 6.25 / (0.25/4 + 4/4) = 5.882352941; p from mpmath 0.1075311949.
        let w = welch(&[1.0, 2.0, 3.0, 4.0, 5.0], &[2.0, 4.0, 6.0, 8.0, 10.0]).unwrap();
        assert!(close(w.t, 3.0 / 2.5f64.sqrt(), 1e-14));
        assert!(close(w.df, 6.25 / 1.0625, 1e-14));
        assert!(close(w.p, 0.1075311949, 1e-8), "{}", w.p);
    }

    #[test]
    fn identical_samples_do_not_differ() {
        let x = [100.0, 102.0, 98.0, 101.0];
        let w = welch(&x, &x).unwrap();
        assert_eq!((w.t, w.p), (0.0, 1.0));
        assert!(w.diff_ci95.0 < 0.0 && w.diff_ci95.1 > 0.0);
    }

    #[test]
    fn samples_without_spread() {
        let w = welch(&[5.0, 5.0], &[5.0, 5.0, 5.0]).unwrap();
        assert_eq!((w.t, w.p, w.diff_ci95), (0.0, 1.0, (0.0, 0.0)));
        let w = welch(&[5.0, 5.0], &[4.0, 4.0]).unwrap();
        assert_eq!((w.t, w.p, w.diff_ci95), (f64::NEG_INFINITY, 0.0, (-1.0, -1.0)));
    }

    #[test]
    fn needs_two_rounds_each() {
        assert!(welch(&[1.0], &[1.0, 2.0]).is_none());
        assert!(welch(&[1.0, 2.0], &[]).is_none());
    }
}
