//! A figure over a measurement's rounds as run.json holds it (each summary's `requests_per_s` and
//! `bytes_per_s`): its median and the median's 95% interval, mean, spread, extremes and outliers. The
//! statistics are `stats::rounds`'; the model computes them from its own rounds (at every save and on
//! `serverbench report`) and takes their result apart field by field, so a field added to the statistics
//! does not compile until it is given a place in the file format (or left out here).

use serde::{Deserialize, Serialize};

use crate::stats::rounds::{relative_half_width_pct, Summary};

/// A figure (req/s, bytes/s, CPU µs per request) over the rounds that count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundsSummary {
    pub n: usize,
    pub mean: f64,
    pub median: f64,
    /// Sample standard deviation (n − 1 in the denominator); 0 for a single value.
    pub stdev: f64,
    /// 95% confidence interval of the median (order statistics); absent below 6 rounds.
    pub ci95: Option<(f64, f64)>,
    pub min: f64,
    pub max: f64,
    /// Indices (into the rounds) of the values whose modified Z-score exceeds 3.5.
    pub outliers: Vec<usize>,
}

impl RoundsSummary {
    /// None for no value.
    pub fn of(values: &[f64]) -> Option<RoundsSummary> {
        Summary::of(values).map(RoundsSummary::from)
    }

    /// Half the width of the 95% confidence interval relative to the median, in percent.
    pub fn ci95_relative_pct(&self) -> Option<f64> {
        relative_half_width_pct(self.ci95?, self.median)
    }
}

impl From<Summary> for RoundsSummary {
    fn from(s: Summary) -> RoundsSummary {
        let Summary { n, mean, median, stdev, ci95, min, max, outliers } = s;
        RoundsSummary { n, mean, median, stdev, ci95, min, max, outliers }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_every_figure_of_the_statistics() {
        let values = [10.0, 11.0, 9.0, 10.5, 9.5, 10.2, 30.0];
        let s = RoundsSummary::of(&values).unwrap();
        let from = Summary::of(&values).unwrap();
        assert_eq!((s.n, s.mean, s.median, s.stdev, s.ci95, s.min, s.max), (from.n, from.mean, from.median, from.stdev, from.ci95, from.min, from.max));
        assert_eq!(s.outliers, vec![6]);
        assert_eq!(s.ci95_relative_pct(), from.ci95_relative_pct());
        assert!(RoundsSummary::of(&[]).is_none());
    }
}
