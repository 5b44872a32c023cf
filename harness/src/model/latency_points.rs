//! Latency figures of a round or a measurement, in nanoseconds: from a histogram, or what an external tool
//! printed.

use serde::{Deserialize, Serialize};

use crate::stats::histogram::LatencySummary;

/// Latency figures in nanoseconds; a figure the source did not provide is absent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyPoints {
    pub min: Option<f64>,
    pub mean: Option<f64>,
    pub stdev: Option<f64>,
    pub p25: Option<f64>,
    pub p50: Option<f64>,
    pub p75: Option<f64>,
    pub p90: Option<f64>,
    pub p99: Option<f64>,
    pub p999: Option<f64>,
    pub p9999: Option<f64>,
    pub max: Option<f64>,
}

impl From<LatencySummary> for LatencyPoints {
    fn from(s: LatencySummary) -> Self {
        if s.count == 0 {
            return LatencyPoints::default();
        }
        let f = |v: u64| Some(v as f64);
        LatencyPoints {
            min: f(s.min_ns),
            mean: Some(s.mean_ns),
            stdev: Some(s.stdev_ns),
            p25: f(s.p25_ns),
            p50: f(s.p50_ns),
            p75: f(s.p75_ns),
            p90: f(s.p90_ns),
            p99: f(s.p99_ns),
            p999: f(s.p999_ns),
            p9999: f(s.p9999_ns),
            max: f(s.max_ns),
        }
    }
}

impl LatencyPoints {
    /// Every figure times `by` (a spread, the standard deviation, scales as the figures do).
    pub fn scaled(self, by: f64) -> LatencyPoints {
        let f = |v: Option<f64>| v.map(|v| v * by);
        LatencyPoints {
            min: f(self.min),
            mean: f(self.mean),
            stdev: f(self.stdev),
            p25: f(self.p25),
            p50: f(self.p50),
            p75: f(self.p75),
            p90: f(self.p90),
            p99: f(self.p99),
            p999: f(self.p999),
            p9999: f(self.p9999),
            max: f(self.max),
        }
    }

    /// Combines per-round figures where no histogram exists: the extremes for min and max, the mean of the
    /// rounds for the rest (an approximation, labelled as such in the reports).
    pub fn average(points: &[LatencyPoints]) -> LatencyPoints {
        let avg = |f: fn(&LatencyPoints) -> Option<f64>| {
            let v: Vec<f64> = points.iter().filter_map(f).collect();
            (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
        };
        let fold = |f: fn(&LatencyPoints) -> Option<f64>, pick: fn(f64, f64) -> f64| {
            points.iter().filter_map(f).reduce(pick)
        };
        LatencyPoints {
            min: fold(|p| p.min, f64::min),
            mean: avg(|p| p.mean),
            stdev: avg(|p| p.stdev),
            p25: avg(|p| p.p25),
            p50: avg(|p| p.p50),
            p75: avg(|p| p.p75),
            p90: avg(|p| p.p90),
            p99: avg(|p| p.p99),
            p999: avg(|p| p.p999),
            p9999: avg(|p| p.p9999),
            max: fold(|p| p.max, f64::max),
        }
    }
}
