//! Student's t: the two-sample test with a pooled variance (the test Apache Otava applies to a candidate
//! change point's two sides), its two-sided p-value and the distribution's quantiles, from the regularized
//! incomplete beta function (Numerical Recipes, 3rd ed., §6.1 and §6.4).

/// A two-sample t-test of `b` against `a`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TTest {
    pub t: f64,
    /// Degrees of freedom: n_a + n_b − 2.
    pub df: f64,
    /// Two-sided.
    pub p: f64,
}

/// The pooled-variance t-test of two samples' means; None below two values on a side.
pub fn student_t_test(a: &[f64], b: &[f64]) -> Option<TTest> {
    let (na, nb) = (a.len() as f64, b.len() as f64);
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (ma, mb) = (mean(a), mean(b));
    let squares = |v: &[f64], m: f64| v.iter().map(|x| (x - m).powi(2)).sum::<f64>();
    let df = na + nb - 2.0;
    let pooled = (squares(a, ma) + squares(b, mb)) / df;
    let se = (pooled * (1.0 / na + 1.0 / nb)).sqrt();
    let t = if se > 0.0 {
        (mb - ma) / se
    } else if mb == ma {
        0.0
    } else {
        f64::INFINITY.copysign(mb - ma)
    };
    Some(TTest { t, df, p: two_sided_p(t, df) })
}

pub fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// The sample variance (n − 1 in the denominator); 0 for fewer than two values.
pub fn variance(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let m = mean(v);
    v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64
}

/// P(|T| ≥ |t|) for T of Student's distribution with `df` degrees of freedom.
pub fn two_sided_p(t: f64, df: f64) -> f64 {
    if !t.is_finite() {
        return if t.is_nan() { 1.0 } else { 0.0 };
    }
    incomplete_beta(df / 2.0, 0.5, df / (df + t * t)).clamp(0.0, 1.0)
}

/// The t with P(T ≤ t) = `p` (0 < p < 1), by bisection of the distribution function.
pub fn quantile(p: f64, df: f64) -> f64 {
    let cdf = |t: f64| if t >= 0.0 { 1.0 - two_sided_p(t, df) / 2.0 } else { two_sided_p(t, df) / 2.0 };
    let (mut low, mut high) = (-1e3, 1e3);
    for _ in 0..200 {
        let mid = (low + high) / 2.0;
        if cdf(mid) < p {
            low = mid;
        } else {
            high = mid;
        }
    }
    (low + high) / 2.0
}

/// The regularized incomplete beta function I_x(a, b).
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    // The continued fraction converges fast below (a + 1) / (a + b + 2); above it, the symmetry.
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// The continued fraction of the incomplete beta function, by the modified Lentz method.
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let (mut c, mut d) = (1.0, 1.0 - qab * x / qap);
    d = 1.0 / if d.abs() < TINY { TINY } else { d };
    let mut h = d;
    for m in 1..300 {
        let m = m as f64;
        let m2 = 2.0 * m;
        for aa in [m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))] {
            d = 1.0 + aa * d;
            d = 1.0 / if d.abs() < TINY { TINY } else { d };
            c = 1.0 + aa / c;
            c = if c.abs() < TINY { TINY } else { c };
            h *= d * c;
        }
        if (d * c - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// ln Γ(x) for x > 0 (Lanczos, as Numerical Recipes' gammln).
fn ln_gamma(x: f64) -> f64 {
    const COF: [f64; 6] = [76.18009172947146, -86.50532032941677, 24.01409824083091, -1.231739572450155, 0.1208650973866179e-2, -0.5395239384953e-5];
    let tmp = x + 5.5 - (x + 0.5) * (x + 5.5).ln();
    let series: f64 = 1.000000000190015 + COF.iter().enumerate().map(|(j, c)| c / (x + 1.0 + j as f64)).sum::<f64>();
    -tmp + (2.5066282746310005 * series / x).ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, eps: f64) -> bool {
        (a - b).abs() <= eps
    }

    #[test]
    fn p_values_match_the_tables() {
        // Two-sided critical values of Student's t.
        assert!(close(two_sided_p(2.228, 10.0), 0.05, 1e-4), "{}", two_sided_p(2.228, 10.0));
        assert!(close(two_sided_p(4.032, 5.0), 0.01, 1e-4));
        assert!(close(two_sided_p(3.291, 1e6), 0.001, 1e-5));
        assert!(close(two_sided_p(0.0, 7.0), 1.0, 1e-12));
        assert!(close(two_sided_p(-2.228, 10.0), two_sided_p(2.228, 10.0), 1e-12));
        assert_eq!(two_sided_p(f64::INFINITY, 3.0), 0.0);
    }

    #[test]
    fn quantiles_invert_the_distribution() {
        assert!(close(quantile(0.975, 10.0), 2.228, 1e-3), "{}", quantile(0.975, 10.0));
        assert!(close(quantile(0.975, 1.0), 12.706, 1e-3));
        assert!(close(quantile(0.025, 30.0), -2.042, 1e-3));
    }

    #[test]
    fn the_test_of_two_hand_made_samples() {
        // Pooled variance (2 + 2) / 6, se = sqrt(2/3 · (1/4 + 1/4)) = 0.5774, t = 2 / se = 3.4641 with 6
        // degrees of freedom, two-sided p 0.0134.
        let a = [9.0, 10.0, 11.0, 10.0];
        let b = [11.0, 12.0, 13.0, 12.0];
        let t = student_t_test(&a, &b).unwrap();
        assert!(close(t.t, 3.4641, 1e-4), "{t:?}");
        assert_eq!(t.df, 6.0);
        assert!(close(t.p, 0.0134, 1e-4), "{t:?}");
        assert!(student_t_test(&a, &b[..1]).is_none());
        assert_eq!(student_t_test(&[1.0, 1.0], &[1.0, 1.0]).unwrap().p, 1.0);
        assert_eq!(student_t_test(&[1.0, 1.0], &[2.0, 2.0]).unwrap().p, 0.0);
    }
}
