//! How a figure moves with one measured covariate of the machine, fitted over many series (servers) at once.
//!
//! Each series has its own level; the covariate moves every series' (log) value by a common slope, which is
//! estimated by least squares within the series (the "within" or fixed-effects estimator: each series'
//! values and covariates taken about their own means, then pooled). A series may react more or less than the
//! others; its own slope, fitted on its few points alone, would be mostly noise, so it is shrunk toward the
//! pooled one by how much the series' own points can tell (an empirical-Bayes random-slope estimate:
//! weight τ² / (τ² + se²), where se² is the sampling variance of its own slope and τ² the spread of the true
//! slopes between series, by DerSimonian and Laird's precision-weighted moments; C. N. Morris, "Parametric
//! empirical Bayes inference", JASA 78, 1983). Only a series whose points support a slope of its own takes
//! part: they span the covariate, and no one of them carries a third of the fit.

/// One observation: its series, its value and its covariate (both on a log scale).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Observation {
    pub series: usize,
    pub value: f64,
    pub covariate: f64,
}

/// The fitted slopes.
#[derive(Debug, Clone, PartialEq)]
pub struct Slopes {
    /// The pooled slope, or the default where the observations spanned too little of the covariate.
    pub pooled: f64,
    /// Whether `pooled` was fitted on these observations (else it is the default given).
    pub fitted: bool,
    /// Each series' slope after shrinkage, indexed by series (the pooled one where it had too few points).
    pub by_series: Vec<f64>,
}

impl Slopes {
    /// The factor a point of `series` at `covariate` (log scale) takes: e^(slope × covariate), with the
    /// series' own slope where it has one, else the pooled one.
    pub fn factor(&self, series: usize, covariate: f64) -> f64 {
        (self.by_series.get(series).copied().unwrap_or(self.pooled) * covariate).exp()
    }
}

/// The fewest observations, over all series, whose pooled slope is fitted.
pub const MIN_OBSERVATIONS: usize = 12;
/// The least standard deviation of the covariate about its series' means (log scale) whose slope is fitted:
/// below it, the slope is mostly the values' noise divided by a small spread.
pub const MIN_SPREAD_LN: f64 = 0.1;
/// The fewest points of a series whose own slope is considered at all.
const MIN_OWN: usize = 4;
/// The least standard deviation of a series' own covariate (log scale) whose own slope is considered: its
/// rounds met more than one regime (regimes differ 2.5x to 5x, 0.9 to 1.6 on this scale). Within one
/// regime the rate wanders by some 10% from probe to probe, which is noise in the covariate, not a
/// regime: a server whose 16 rounds read 3,400 to 4,800 got an own slope of 2.5 and, shrunk, read its
/// req/s at the reference 3x of what was measured.
pub const MIN_OWN_SPREAD_LN: f64 = 0.3;
/// The largest share of a series' own fit that one of its points may carry (its leverage, x² / Σx² about
/// the series' mean) for the series to keep part of its own slope: beyond it, one or two rounds in another
/// regime decide the slope. On a day when the rate sat near 4,400 and a few rounds read 20,000 to 36,000,
/// such series read own slopes of −0.4 to +2.5 where the pooled one was +0.16, and their req/s at the
/// reference came out 0.8x to 3x of what was measured.
const MAX_LEVERAGE: f64 = 1.0 / 3.0;

/// Fits the slope of value on covariate within series, pooled, with each series' own deviation shrunk.
/// `default` stands in where the observations span too little of the covariate.
pub fn fit(observations: &[Observation], default: f64) -> Slopes {
    let series = observations.iter().map(|o| o.series).max().map_or(0, |m| m + 1);
    let centred = centred(observations, series);
    let sxx: f64 = centred.iter().map(|(_, x, _)| x * x).sum();
    let sxy: f64 = centred.iter().map(|(_, x, y)| x * y).sum();
    let n = centred.len();
    let spread = (sxx / n.max(1) as f64).sqrt();
    if n < MIN_OBSERVATIONS || spread < MIN_SPREAD_LN || sxx <= 0.0 {
        return Slopes { pooled: default, fitted: false, by_series: vec![default; series] };
    }
    let pooled = sxy / sxx;
    // The residual variance about the pooled fit, with one level per series and the slope taken out.
    let dof = n.saturating_sub(series + 1).max(1) as f64;
    let sigma2 = centred.iter().map(|(_, x, y)| (y - pooled * x).powi(2)).sum::<f64>() / dof;
    // Each series' own slope and its sampling variance, where its points support one: enough of them,
    // spanning more than one regime (`MIN_OWN_SPREAD_LN`), and none carrying more than `MAX_LEVERAGE` of
    // the fit.
    let own: Vec<Option<(f64, f64)>> = (0..series)
        .map(|s| {
            let points: Vec<(f64, f64)> = centred.iter().filter(|(k, _, _)| *k == s).map(|(_, x, y)| (*x, *y)).collect();
            let sxx: f64 = points.iter().map(|(x, _)| x * x).sum();
            let spread = (sxx / points.len().max(1) as f64).sqrt();
            let leverage = points.iter().map(|(x, _)| x * x / sxx).fold(0.0, f64::max);
            (points.len() >= MIN_OWN && sxx > 0.0 && spread >= MIN_OWN_SPREAD_LN && leverage <= MAX_LEVERAGE)
                .then(|| (points.iter().map(|(x, y)| x * y).sum::<f64>() / sxx, sigma2 / sxx))
        })
        .collect();
    let tau2 = between_series_variance(&own.iter().flatten().copied().collect::<Vec<_>>());
    let by_series = own
        .iter()
        .map(|o| match o {
            Some((b, se2)) if tau2 > 0.0 => pooled + tau2 / (tau2 + se2) * (b - pooled),
            _ => pooled,
        })
        .collect();
    Slopes { pooled, fitted: true, by_series }
}

/// The variance of the true slopes between series, from their own slopes and sampling variances, by
/// DerSimonian and Laird's estimator (each slope weighted by its precision, so that a series whose points
/// say little moves it little; R. DerSimonian and N. Laird, "Meta-analysis in clinical trials", Controlled
/// Clinical Trials 7, 1986). 0 with fewer than three series.
fn between_series_variance(own: &[(f64, f64)]) -> f64 {
    if own.len() < 3 || own.iter().any(|(_, se2)| *se2 <= 0.0) {
        return 0.0;
    }
    let w: Vec<f64> = own.iter().map(|(_, se2)| 1.0 / se2).collect();
    let (sw, sw2): (f64, f64) = (w.iter().sum(), w.iter().map(|w| w * w).sum());
    let mean = own.iter().zip(&w).map(|((b, _), w)| w * b).sum::<f64>() / sw;
    let q: f64 = own.iter().zip(&w).map(|((b, _), w)| w * (b - mean).powi(2)).sum();
    ((q - (own.len() - 1) as f64) / (sw - sw2 / sw)).max(0.0)
}

/// Each observation's series, covariate and value about its series' means.
fn centred(observations: &[Observation], series: usize) -> Vec<(usize, f64, f64)> {
    let mut sums = vec![(0.0, 0.0, 0usize); series];
    for o in observations {
        let s = &mut sums[o.series];
        s.0 += o.covariate;
        s.1 += o.value;
        s.2 += 1;
    }
    observations
        .iter()
        .map(|o| {
            let (x, y, k) = sums[o.series];
            (o.series, o.covariate - x / k as f64, o.value - y / k as f64)
        })
        .collect()
}

/// The median over series (with at least 3 values) of the standard deviation of their values: the
/// round-to-round scatter a model leaves, on a log scale; None without such a series.
pub fn median_scatter(values: &[(usize, f64)]) -> Option<f64> {
    let series = values.iter().map(|(s, _)| *s).max().map_or(0, |m| m + 1);
    let sds: Vec<f64> = (0..series)
        .filter_map(|s| {
            let v: Vec<f64> = values.iter().filter(|(k, _)| *k == s).map(|(_, v)| *v).collect();
            (v.len() >= 3).then(|| {
                let mean = v.iter().sum::<f64>() / v.len() as f64;
                (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt()
            })
        })
        .collect();
    (!sds.is_empty()).then(|| super::rounds::median(&sds))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Series with levels 0, 1, 2…, a covariate that alternates between two regimes, and a slope per series.
    fn observations(slopes: &[f64], per_series: usize, noise: impl Fn(usize) -> f64) -> Vec<Observation> {
        let mut out = Vec::new();
        for (s, b) in slopes.iter().enumerate() {
            for i in 0..per_series {
                let covariate = if (i + s) % 2 == 0 { -1.2 } else { 0.4 };
                out.push(Observation { series: s, value: s as f64 + b * covariate + noise(s * per_series + i), covariate });
            }
        }
        out
    }

    /// A small deterministic noise in [−0.02, 0.02].
    fn jitter(i: usize) -> f64 {
        ((i * 7919 % 101) as f64 / 100.0 - 0.5) * 0.04
    }

    #[test]
    fn a_common_slope_is_recovered_whatever_the_levels() {
        let s = fit(&observations(&[0.15; 6], 8, jitter), 0.0);
        assert!(s.fitted && (s.pooled - 0.15).abs() < 0.01, "{s:?}");
        assert!(s.by_series.iter().all(|b| (b - 0.15).abs() < 0.02), "{s:?}");
    }

    #[test]
    fn a_series_that_reacts_otherwise_keeps_part_of_its_own_slope_only_where_its_points_show_it() {
        let mut slopes = vec![0.15; 6];
        slopes[2] = 0.45;
        let s = fit(&observations(&slopes, 12, jitter), 0.0);
        assert!(s.by_series[2] > 0.3 && s.by_series[2] <= 0.46, "{s:?}");
        // The pooled slope is pulled up by it; the others, whose points show 0.15 well, keep theirs.
        assert!(s.pooled > 0.16, "{s:?}");
        assert!(s.by_series.iter().enumerate().filter(|(k, _)| *k != 2).all(|(_, b)| (b - 0.15).abs() < 0.01), "{s:?}");
        // With noise far larger than the differences, every series takes the pooled slope.
        let loud = |i: usize| ((i * 7919 % 101) as f64 / 100.0 - 0.5) * 2.0;
        let s = fit(&observations(&[0.15, 0.2, 0.1, 0.15], 6, loud), 0.0);
        assert!(s.by_series.iter().all(|b| (b - s.pooled).abs() < 0.05), "{s:?}");
    }

    #[test]
    fn too_little_spread_of_the_covariate_or_too_few_points_take_the_default() {
        let flat: Vec<Observation> =
            observations(&[0.15; 4], 8, jitter).into_iter().map(|o| Observation { covariate: o.covariate * 0.01, ..o }).collect();
        let s = fit(&flat, 0.13);
        assert!(!s.fitted && s.pooled == 0.13 && s.by_series == vec![0.13; 4], "{s:?}");
        let few = fit(&observations(&[0.15; 2], 4, jitter), 0.13);
        assert!(!few.fitted && few.pooled == 0.13, "{few:?}");
    }

    #[test]
    fn the_scatter_is_the_median_of_the_series_deviations() {
        let v = [(0, 1.0), (0, 1.2), (0, 0.8), (1, 5.0), (1, 5.0), (1, 5.0), (2, 1.0), (2, 3.0), (2, 2.0), (3, 9.0)];
        assert!(median_scatter(&v).is_some_and(|s| (s - 0.2).abs() < 1e-9), "{:?}", median_scatter(&v));
        assert_eq!(median_scatter(&[(0, 1.0)]), None);
    }

    #[test]
    fn a_series_whose_own_rounds_span_little_of_the_covariate_takes_the_pooled_slope() {
        // Five series span both regimes; a sixth met one regime alone, its covariate moving by 2% and its
        // values by 20%: its own slope would be about ten, and it must not keep any of it.
        let mut obs = observations(&[0.15; 5], 8, jitter);
        for i in 0..8 {
            let covariate = 0.4 + if i % 2 == 0 { 0.01 } else { -0.01 };
            let value = 5.0 + if i % 2 == 0 { 0.1 } else { -0.1 };
            obs.push(Observation { series: 5, value, covariate });
        }
        let s = fit(&obs, 0.0);
        assert!(s.fitted && (s.by_series[5] - s.pooled).abs() < 1e-12, "{s:?}");
    }

    #[test]
    fn a_series_whose_slope_one_round_decides_takes_the_pooled_slope() {
        // Five series span both regimes; a sixth sat in one regime but for a single round in the other,
        // which read 60% high: that round alone would give it a slope of about 0.3, and the others 0.15.
        let mut obs = observations(&[0.15; 5], 8, jitter);
        for i in 0..16 {
            let (covariate, value) = if i == 7 { (1.1, 5.0 + 0.47 + 1.1 * 0.15) } else { (-0.8 + jitter(i) / 4.0, 5.0 - 0.8 * 0.15 + jitter(i + 3)) };
            obs.push(Observation { series: 5, value, covariate });
        }
        let s = fit(&obs, 0.0);
        assert!(s.fitted && (s.by_series[5] - s.pooled).abs() < 1e-12, "{s:?}");
        // Spread over both regimes, the same rounds would keep part of their own slope.
        let mut spread = observations(&[0.15; 5], 8, jitter);
        spread.extend(observations(&[0.0, 0.0, 0.0, 0.0, 0.0, 0.45], 16, jitter).into_iter().filter(|o| o.series == 5));
        let s = fit(&spread, 0.0);
        assert!(s.by_series[5] > s.pooled + 0.1, "{s:?}");
    }
}
