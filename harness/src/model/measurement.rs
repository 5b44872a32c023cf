//! A measurement: one configuration's rounds as the client and the /proc probe saw them, their flags,
//! and the summary over the measured rounds that every report prints.

use serde::{Deserialize, Serialize};

use crate::load::{ErrorCounts, LoadReport};
use crate::stats::histogram::{new_latency_histogram, LatencySummary};
use crate::stats::rounds::Summary;

/// The server was not busy while the client was: the round measured the client.
pub const FLAG_CLIENT_BOUND: &str = "client-bound";
/// Some requests failed.
pub const FLAG_ERRORS: &str = "errors";
/// The round was cut short by Ctrl-C.
pub const FLAG_INTERRUPTED: &str = "interrupted";
/// The server's process tree could not be read from /proc: its CPU and memory are absent, not zero.
pub const FLAG_SERVER_UNPROBED: &str = "server-unprobed";
/// Utilisation below this share of the server's CPUs, with the client at or above it, flags a round.
pub const BUSY_THRESHOLD_PCT: f64 = 90.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MeasurementStatus {
    Pending,
    Running,
    Measured,
    Failed,
    Interrupted,
}

/// One (contestant, scenario, mode, connections) configuration and its rounds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Measurement {
    pub contestant: String,
    pub scenario: String,
    pub mode: String,
    pub connections: usize,
    pub pipeline: u32,
    pub tool: String,
    pub status: MeasurementStatus,
    /// Why it failed (with the tail of the server's log where that helps).
    pub reason: Option<String>,
    /// Size of one response as the verification saw it (head and body).
    pub response_bytes: Option<u64>,
    pub server_log: Option<String>,
    pub rounds: Vec<Round>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Round {
    /// 1-based, counted separately for warm-up and measured rounds.
    pub index: u32,
    pub warmup: bool,
    /// What the client measured. With an external tool the latency histogram is empty (the tool keeps
    /// none) and `tool_latency_ns` holds what it printed.
    pub load: LoadReport,
    pub tool_latency_ns: Option<LatencyPoints>,
    pub server: ServerUsage,
    /// Client CPU time over (window × client threads), in percent; absent when it could not be read.
    pub client_busy_pct: Option<f64>,
    pub flags: Vec<String>,
}

/// The server's whole process tree during one round, from /proc. A figure that could not be read is
/// absent (null in run.json) and the round carries FLAG_SERVER_UNPROBED.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerUsage {
    /// utime + stime of every process of the tree (threads included) over the round.
    pub cpu_s: Option<f64>,
    /// The window the CPU time was taken over.
    pub wall_s: f64,
    /// CPUs the server was pinned to.
    pub cpus: usize,
    /// cpu_s / (wall_s × cpus), in percent.
    pub utilisation_pct: Option<f64>,
    pub cpu_us_per_request: Option<f64>,
    /// Largest sum of resident memory over the tree seen while sampling.
    pub peak_rss_bytes: Option<u64>,
    /// Processes seen in the tree.
    pub processes: usize,
}

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

impl Round {
    /// The round's latency: from its histogram, or what an external tool printed.
    pub fn latency(&self) -> LatencyPoints {
        match &self.tool_latency_ns {
            Some(points) if self.load.latency.is_empty() => *points,
            _ => self.load.latency_summary().into(),
        }
    }
}

/// A measurement summarised over its measured rounds (warm-ups excluded).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MeasurementSummary {
    pub rounds: usize,
    pub requests: u64,
    pub errors: ErrorCounts,
    /// req/s of each round.
    pub requests_per_s: Option<Summary>,
    pub bytes_per_s: Option<Summary>,
    pub server_utilisation_pct: Option<f64>,
    pub server_cpu_us_per_request: Option<f64>,
    pub peak_rss_bytes: Option<u64>,
    pub client_busy_pct: Option<f64>,
    /// From the histogram merged over the measured rounds; without histograms (external tools), the
    /// mean of the rounds' figures, and the extremes of min and max.
    pub latency_ns: LatencyPoints,
    pub latency_from_histogram: bool,
    pub client_bound_rounds: usize,
    pub response_bytes: Option<u64>,
}

impl Measurement {
    pub fn measured_rounds(&self) -> impl Iterator<Item = &Round> {
        self.rounds.iter().filter(|r| !r.warmup)
    }

    pub fn summary(&self) -> MeasurementSummary {
        let rounds: Vec<&Round> = self.measured_rounds().collect();
        if rounds.is_empty() {
            return MeasurementSummary { response_bytes: self.response_bytes, ..Default::default() };
        }
        let mut errors = ErrorCounts::default();
        rounds.iter().for_each(|r| errors.add(&r.load.errors));
        let requests: u64 = rounds.iter().map(|r| r.load.requests).sum();
        // A figure missing from any measured round is missing from the summary: a mean or a sum over the
        // other rounds would pass for one over all of them.
        let mean = |f: &dyn Fn(&Round) -> Option<f64>| rounds.iter().map(|r| f(r)).sum::<Option<f64>>().map(|s| s / rounds.len() as f64);
        let cpu_s: Option<f64> = rounds.iter().map(|r| r.server.cpu_s).sum();
        let with_histogram = rounds.iter().all(|r| !r.load.latency.is_empty());
        let latency_ns = if with_histogram {
            let mut merged = new_latency_histogram();
            for r in &rounds {
                let _ = merged.add(&r.load.latency);
            }
            LatencySummary::of(&merged).into()
        } else {
            average_points(&rounds.iter().map(|r| r.latency()).collect::<Vec<_>>())
        };
        MeasurementSummary {
            rounds: rounds.len(),
            requests,
            errors,
            requests_per_s: Summary::of(&rounds.iter().map(|r| r.load.requests_per_s()).collect::<Vec<_>>()),
            bytes_per_s: Summary::of(&rounds.iter().map(|r| r.load.bytes_read_per_s()).collect::<Vec<_>>()),
            server_utilisation_pct: mean(&|r| r.server.utilisation_pct),
            server_cpu_us_per_request: cpu_s.filter(|_| requests > 0).map(|s| s * 1e6 / requests as f64),
            peak_rss_bytes: rounds.iter().map(|r| r.server.peak_rss_bytes).collect::<Option<Vec<u64>>>().and_then(|v| v.into_iter().max()),
            client_busy_pct: mean(&|r| r.client_busy_pct),
            latency_ns,
            latency_from_histogram: with_histogram,
            client_bound_rounds: rounds.iter().filter(|r| r.flags.iter().any(|f| f == FLAG_CLIENT_BOUND)).count(),
            // What the load saw (echo's message size, json's own sequence numbers); else the verified size.
            response_bytes: rounds.iter().map(|r| r.load.response_bytes).find(|b| *b > 0).or(self.response_bytes),
        }
    }
}

/// Combines per-round figures where no histogram exists: the extremes for min and max, the mean of the
/// rounds for the rest (an approximation, labelled as such in the reports).
fn average_points(points: &[LatencyPoints]) -> LatencyPoints {
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
