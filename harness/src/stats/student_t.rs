//! Student's t: the two-sample test with a pooled variance (the test Apache Otava applies to a candidate
//! change point's two sides), its two-sided p-value and the distribution's quantiles, from statrs's
//! Student's t distribution.

use statrs::distribution::{ContinuousCDF, StudentsT};

use super::rounds::Summary;

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
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (sa, sb) = (Summary::of(a)?, Summary::of(b)?);
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let df = na + nb - 2.0;
    let pooled = ((na - 1.0) * sa.stdev.powi(2) + (nb - 1.0) * sb.stdev.powi(2)) / df;
    let se = (pooled * (1.0 / na + 1.0 / nb)).sqrt();
    let t = if se > 0.0 {
        (sb.mean - sa.mean) / se
    } else if sb.mean == sa.mean {
        0.0
    } else {
        f64::INFINITY.copysign(sb.mean - sa.mean)
    };
    Some(TTest { t, df, p: two_sided_p(t, df) })
}

fn distribution(df: f64) -> StudentsT {
    StudentsT::new(0.0, 1.0, df).expect("a positive number of degrees of freedom")
}

/// P(|T| ≥ |t|) for T of Student's distribution with `df` degrees of freedom.
pub fn two_sided_p(t: f64, df: f64) -> f64 {
    if !t.is_finite() {
        return if t.is_nan() { 1.0 } else { 0.0 };
    }
    (2.0 * distribution(df).cdf(-t.abs())).clamp(0.0, 1.0)
}

/// The t with P(T ≤ t) = `p` (0 < p < 1).
pub fn quantile(p: f64, df: f64) -> f64 {
    distribution(df).inverse_cdf(p)
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
