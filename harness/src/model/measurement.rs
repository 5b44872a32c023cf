//! A measurement: one configuration's rounds as the client and the /proc probe saw them, their flags,
//! and the summary over the measured rounds that every report prints.

use serde::{Deserialize, Serialize};

use super::capacity::Capacity;
use super::closes::separate_closes;
use super::flag::Flag;
use super::round_load::{ConnectionsSummary, ErrorCounts, RoundLoad};
use super::rounds_summary::RoundsSummary;
use super::server::{CostBreakdown, CpuSource, ServerUsage, SyscallCounts, SyscallsPerRequest};
use super::latency_points::LatencyPoints;
use super::machine_fit::MachineFactors;
use crate::stats::histogram::{new_latency_histogram, LatencySummary};

/// How long a bench round waits for every connection to be served before its window opens.
pub const RAMP_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);
/// A probe speed below (1 − this) or above 1 / (1 − this) times the run's median marks cpu-drift.
pub const DRIFT_THRESHOLD: f64 = 0.20;
/// A cross-CPU probe (`os::speed::cross_cpu`) below this share of the run's median, or above its inverse,
/// marks cpu-drift: the machine passed data between the server's and the client's CPUs at another speed.
/// Wider than the loops' band: the rate itself swings to 0.65x between probes of one regime, and a change
/// of regime moves it 2.5x to 5x.
pub const CROSS_DRIFT: f64 = 0.5;

/// Whether a cross-CPU rate, as a ratio to another (the run's median, or another run's), lies beyond
/// `CROSS_DRIFT` either way.
pub fn cross_cpu_moved(ratio: f64) -> bool {
    !(CROSS_DRIFT..=1.0 / CROSS_DRIFT).contains(&ratio)
}

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
    #[serde(deserialize_with = "read_rounds")]
    pub rounds: Vec<Round>,
    /// The extra rounds after the measured ones that counted the server's system calls
    /// (`--syscall-counts extra`, the default): only the system-call figures are read from them, since
    /// counting makes every call dearer. More than one when a counting round was disturbed.
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "read_rounds")]
    pub counting_rounds: Vec<Round>,
    /// Rate mode: the total rate its rounds asked for, requests per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_rps: Option<f64>,
    /// `--rate auto`: the share of the server's own measured capacity (the median req/s of its throughput
    /// measurement at the same connection count) that `rate_rps` is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_fraction: Option<f64>,
    /// With `bench --search`: the highest rate that met the latency objective, its bracket and each
    /// step's rate round (absent from run.json otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<Capacity>,
    /// With `bench --workers LIST`: the `{workers}` its server ran with (absent otherwise: the run's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<usize>,
    /// With `--rounds auto`: its rounds ended because the run's time budget (`--budget`) held no further
    /// pass, before its interval reached the target or it had `max_rounds`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ended_by_budget: bool,
    /// With `bench --profile`: its profiled round (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<super::profile::Profile>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Round {
    /// 1-based, counted separately for warm-up and measured rounds.
    pub index: u32,
    pub warmup: bool,
    /// What the client measured. With wrk or h2load the latency histogram is empty (the tool keeps none)
    /// and `tool_latency_ns` holds what it printed; hey prints every latency, which fills the histogram.
    pub load: RoundLoad,
    pub tool_latency_ns: Option<LatencyPoints>,
    /// The client's system calls in the round, counted as the server's are (the kernel's tracepoints, on the
    /// client's CPUs, over the same window), in the rounds that count the server's; absent in the others,
    /// with client hosts, where the client's and the server's CPUs are shared, and in older runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_syscalls: Option<SyscallCounts>,
    pub server: ServerUsage,
    /// Client CPU time over (window × client threads), in percent; absent when it could not be read.
    pub client_busy_pct: Option<f64>,
    /// The client's limit: its busiest thread's CPU share of the window, or its CPU time over (window ×
    /// client CPUs) when that is higher (more threads than CPUs); absent when it could not be read.
    #[serde(default)]
    pub client_limit_pct: Option<f64>,
    /// `server-bound`, `both-busy`, `client-bound` or `unsaturated`; absent when a figure it needs is.
    #[serde(default)]
    pub saturation: Option<String>,
    /// What the data suggests limited an `unsaturated` round (`LIMIT_*`, docs/methodology.md); absent for
    /// the other states.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<String>,
    pub flags: Vec<Flag>,
    /// With client hosts: each host's share of `load`, which is their exact merge.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<super::HostLoad>,
    /// What else happened on the machine during the round.
    #[serde(flatten, default)]
    pub machine: RoundMachine,
}

/// The machine around one round: interference on its CPUs and their speed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RoundMachine {
    /// When the round began, in seconds from the start of the run's measuring: the time line that pairs a
    /// round with the machine's drift and with the rounds of other servers measured around it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_s: Option<f64>,
    /// The machine's speed around this round relative to its usual speed in the run, read from the other
    /// servers' rounds that began within a few seconds of it (`stats::drift`); the req/s summaries divide
    /// the round's req/s by it. Absent where too few other rounds were near (then the round counts as
    /// measured), and in rate mode, whose req/s the client paces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift_factor: Option<f64>,
    /// The machine's effect on the round's figures (`model::machine_model`, both of its stages): each figure
    /// as measured divided by its factor is the figure at the model's reference state. Absent where the
    /// model adjusted nothing (rate loads, runs without probes or times).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_factors: Option<MachineFactors>,
    /// CPU time on the server's CPUs not spent by the server's tree (other processes, kernel threads), as a
    /// share of the window; absent when /proc/stat or the tree could not be read.
    #[serde(default)]
    pub foreign_pct: Option<f64>,
    /// Steal time (the hypervisor ran something else) on the server's and the client's CPUs, as a share of
    /// their window, the larger of the two.
    #[serde(default)]
    pub steal_pct: Option<f64>,
    /// How long the round waited for the server's CPUs to be quiet before it began.
    #[serde(default)]
    pub quiet_wait_ms: Option<f64>,
    /// How long the speed and cross-CPU probes before and after the round took together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probes_ms: Option<f64>,
    /// The round's own wall time, from starting the load to its figures (connects, ramp, window, close).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_s: Option<f64>,
    /// The speed probe of each server and client CPU, the mean of one just before and one just after.
    #[serde(default)]
    pub cpu_speed: Vec<RoundCpuSpeed>,
    /// The probe furthest from the run's median of the same CPU and loop, as a ratio to it (1 = as usual);
    /// absent until the run has enough probes to have a median.
    #[serde(default)]
    pub speed_index: Option<f64>,
    /// Round trips per ms of a cache line between the first client CPU and the first server CPU, the mean of
    /// the probes before and after the round (absent when the two are not this machine's CPUs, apart).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cross_cpu_per_ms: Option<f64>,
    /// The cross-CPU probe furthest from the run's median, as a ratio to it (once the run has 5 probes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cross_cpu_index: Option<f64>,
    /// Connections the kernel's listeners could not take during the round (TcpExt ListenOverflows: an
    /// accept queue was full; ListenDrops: dropped for any reason), machine-wide: on a quiet machine, the
    /// server's. Absent when /proc/net/netstat could not be read.
    #[serde(default)]
    pub listen_overflows: Option<u64>,
    #[serde(default)]
    pub listen_drops: Option<u64>,
}

/// One CPU's probed speed around a round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundCpuSpeed {
    pub cpu: usize,
    /// "server" or "client".
    pub role: String,
    pub user_per_ms: f64,
    pub syscall_per_ms: f64,
}


/// A round's cost per request, server and client: microseconds of user and kernel time, context switches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CostPerRequest {
    pub user_us: f64,
    pub system_us: f64,
    pub voluntary_switches: f64,
    pub involuntary_switches: f64,
    /// Absent when a round's threads could not say.
    #[serde(default)]
    pub migrations: Option<f64>,
}

impl CostPerRequest {
    /// The costs of the rounds that have one, summed and divided by those rounds' requests; absent without
    /// a request.
    pub fn over(rounds: &[&Round], cost: impl Fn(&Round) -> Option<CostBreakdown>) -> Option<CostPerRequest> {
        let (mut sum, mut requests) = (CostBreakdown { migrations: Some(0), ..CostBreakdown::default() }, 0u64);
        for r in rounds {
            if let Some(c) = cost(r) {
                sum.user_s += c.user_s;
                sum.system_s += c.system_s;
                sum.voluntary_switches += c.voluntary_switches;
                sum.involuntary_switches += c.involuntary_switches;
                sum.migrations = sum.migrations.zip(c.migrations).map(|(a, b)| a + b);
                requests += r.load.requests;
            }
        }
        let n = (requests > 0).then_some(requests as f64)?;
        Some(CostPerRequest {
            user_us: sum.user_s * 1e6 / n,
            system_us: sum.system_s * 1e6 / n,
            voluntary_switches: sum.voluntary_switches as f64 / n,
            involuntary_switches: sum.involuntary_switches as f64 / n,
            migrations: sum.migrations.map(|m| m as f64 / n),
        })
    }
}

/// Rounds as run.json stores them, those of runs written when `keepalive_lost` counted the clean closes too
/// read with today's meaning (`closes::separate_closes`), so that every reader of a stored run (`report`,
/// `compare`) sees one.
fn read_rounds<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Round>, D::Error> {
    let mut rounds = Vec::<Round>::deserialize(d)?;
    rounds.iter_mut().for_each(|r| separate_closes(&mut r.load, &mut r.flags));
    Ok(rounds)
}

impl Round {
    pub fn has_flag(&self, flag: &Flag) -> bool {
        self.flags.contains(flag)
    }

    /// req/s at the machine model's reference state (`model::machine_model`): as measured divided by the
    /// round's factor; as measured where the model adjusted nothing.
    pub fn requests_per_s_adjusted(&self) -> f64 {
        self.load.requests_per_s() / self.factors().map_or(1.0, |f| f.requests_per_s)
    }

    /// Server CPU µs per request at the model's reference state; absent where the round has no figure.
    pub fn cpu_us_per_request_adjusted(&self) -> Option<f64> {
        self.server.cpu_us_per_request.map(|v| v / self.factors().map_or(1.0, |f| f.cpu_per_request))
    }

    /// The round's own p99 (ns) at the model's reference state.
    pub fn p99_adjusted(&self) -> Option<f64> {
        self.latency().p99.map(|v| v / self.factors().map_or(1.0, |f| f.p99))
    }

    /// The machine's factor on this round's latency (the model's p99 factor, which scales the whole
    /// distribution), where the model adjusted the round.
    pub fn latency_factor(&self) -> Option<f64> {
        self.factors().map(|f| f.p99)
    }

    fn factors(&self) -> Option<MachineFactors> {
        self.machine.machine_factors.filter(|f| f.requests_per_s > 0.0 && f.p99 > 0.0 && f.cpu_per_request > 0.0)
    }

    /// A measured round that counts in the summary: not a warm-up, not disturbed.
    pub fn counts(&self) -> bool {
        !self.warmup && !self.has_flag(&Flag::Disturbed)
    }

    /// The round's latency: from its histogram, or what an external tool printed.
    pub fn latency(&self) -> LatencyPoints {
        match &self.tool_latency_ns {
            Some(points) if self.load.latency.is_empty() => *points,
            _ => self.load.latency_summary().into(),
        }
    }
}

/// A measurement summarised over its measured rounds that count (warm-ups and rounds left out excluded).
/// run.json holds it as each measurement's `summary`, for other tools.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MeasurementSummary {
    pub rounds: usize,
    /// The median req/s and its order-statistic 95% interval (absent below 6 rounds).
    pub median_rps: Option<f64>,
    /// The median of the rounds' req/s as the client measured them, without the drift factors.
    pub median_rps_as_measured: Option<f64>,
    pub ci_low_rps: Option<f64>,
    pub ci_high_rps: Option<f64>,
    /// Rounds in the median (= `rounds`).
    pub rounds_used: usize,
    /// Measured rounds left out because they were `disturbed`.
    pub rounds_disturbed: usize,
    /// Rounds in the median flagged `cpu-drift`.
    pub rounds_cpu_drift: usize,
    /// Rounds in the median whose server CPU came from the clock ticks, because a thread or process of the
    /// server ended inside the window (`CpuSource::Ticks`).
    pub rounds_cpu_from_ticks: usize,
    pub requests: u64,
    pub errors: ErrorCounts,
    /// req/s of each round.
    pub requests_per_s: Option<RoundsSummary>,
    pub bytes_per_s: Option<RoundsSummary>,
    pub server_utilisation_pct: Option<f64>,
    pub server_cpu_us_per_request: Option<f64>,
    pub peak_rss_bytes: Option<u64>,
    /// The largest PSS over the rounds.
    pub pss_bytes: Option<u64>,
    /// The median over the rounds of the busiest worker's CPU over the workers' mean (see `WorkerBalance`);
    /// absent when no round had two workers.
    #[serde(default)]
    pub worker_imbalance: Option<f64>,
    /// Where a request's cost went, over the rounds that have the figures: the server's threads (from /proc)
    /// and the built-in client's (getrusage); absent where not measured.
    #[serde(default)]
    pub server_cost_per_request: Option<CostPerRequest>,
    #[serde(default)]
    pub client_cost_per_request: Option<CostPerRequest>,
    /// Connections asked for and the fewest served in any round and inside its window; absent for external tools
    /// and in runs stored before they were counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<ConnectionsSummary>,
    /// The built-in client's own system calls per request, counted where they are made.
    #[serde(default)]
    pub client_system_calls_per_request: Option<f64>,
    /// The server's system calls per request over the rounds, when every round counted them, with the method
    /// that did; else absent with the reason of a round that did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_syscalls_per_request: Option<SyscallsPerRequest>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_syscalls_method: Option<String>,
    /// Which rounds the counts come from: `extra-round` (counted apart from the measured rounds, the
    /// default) or `measured-rounds` (`--syscall-counts rounds`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_syscalls_from: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_syscalls_unavailable: Option<String>,
    /// The client's system calls per request, counted as the server's on the client's CPUs over the same
    /// rounds; absent where they were not (an external tool's counts are its own, a client host's are not
    /// read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_syscalls_per_request: Option<SyscallsPerRequest>,
    pub client_busy_pct: Option<f64>,
    /// At the machine model's reference state: `latency_ns_as_measured` divided by `latency_factor`
    /// (as measured where the model adjusted nothing).
    pub latency_ns: LatencyPoints,
    /// From the histogram merged over the measured rounds; without histograms (external tools), the
    /// mean of the rounds' figures, and the extremes of min and max.
    pub latency_ns_as_measured: LatencyPoints,
    /// The machine's factor on the measurement's latency: the geometric mean of its rounds' factors
    /// (their p99's, `Round::latency_factor`), so that every quantile of the merged histogram moves to
    /// the reference state as the rounds' p99 do; absent where a round that counts was not adjusted.
    pub latency_factor: Option<f64>,
    pub latency_from_histogram: bool,
    pub client_bound_rounds: usize,
    /// Rounds where the server and the client were both at their limit (`both-busy`).
    pub both_busy_rounds: usize,
    pub unsaturated_rounds: usize,
    /// The limits of the rounds flagged unsaturated (rounds stored before limits were are left out).
    pub unsaturated_limits: Vec<super::limit::LimitCount>,
    pub keepalive_lost_rounds: usize,
    /// Rounds in which the server closed connections cleanly (`server-closes`), apart from those in which it
    /// lost requests with them (`keepalive_lost_rounds`).
    pub server_closes_rounds: usize,
    pub rate_not_held_rounds: usize,
    pub ramp_incomplete_rounds: usize,
    pub unfair_rounds: usize,
    pub response_bytes: Option<u64>,
}

impl MeasurementSummary {
    /// The flags of who limited the rounds as the tables print them, "client-bound 2/16", "both-busy
    /// 3/16"; empty when no round had them (`unsaturated_flag` says the rest).
    pub fn bound_flags(&self) -> Vec<String> {
        self.flags_of_rounds([(Flag::ClientBound, self.client_bound_rounds), (Flag::BothBusy, self.both_busy_rounds)])
    }

    /// Each flag with the rounds that had it, "flag k/n", in the order given; those no round had left out.
    fn flags_of_rounds<const N: usize>(&self, counts: [(Flag, usize); N]) -> Vec<String> {
        counts.into_iter().filter(|(_, n)| *n > 0).map(|(flag, n)| format!("{flag} {n}/{}", self.rounds)).collect()
    }

    /// The `unsaturated` flag as the tables print it, "unsaturated 2/3 (server sleeping)"; None when no
    /// round had it.
    pub fn unsaturated_flag(&self) -> Option<String> {
        let limits = super::limit::limits_words(&self.unsaturated_limits);
        let why = if limits.is_empty() { String::new() } else { format!(" ({limits})") };
        (self.unsaturated_rounds > 0).then(|| format!("{} {}/{}{why}", Flag::Unsaturated, self.unsaturated_rounds, self.rounds))
    }

    /// How the server ended connections as the tables print it, "keepalive-lost 2/16", "server-closes
    /// 16/16"; empty when it ended none.
    pub fn closes_flags(&self) -> Vec<String> {
        self.flags_of_rounds([(Flag::KeepaliveLost, self.keepalive_lost_rounds), (Flag::ServerCloses, self.server_closes_rounds)])
    }

    /// The rounds whose server CPU is in clock ticks as the tables print them, "cpu-from-ticks 3/16"; None
    /// when every round had the exact figure.
    pub fn cpu_from_ticks_flag(&self) -> Option<String> {
        (self.rounds_cpu_from_ticks > 0).then(|| format!("cpu-from-ticks {}/{}", self.rounds_cpu_from_ticks, self.rounds))
    }

    /// Where a round's window served fewer connections than were asked for, as the tables print it: "served
    /// 640/1000 connections" (the fewest of any round); None when every one was served in every round.
    pub fn served_flag(&self) -> Option<String> {
        self.connections.filter(|c| c.short()).map(|c| format!("served {}/{} connections", c.served_in_window, c.asked))
    }
}

impl Measurement {
    /// The load its rounds put on the server, as reports name and group it: `throughput`, `rate 20000/s`,
    /// or with `--rate auto` `rate 50% of capacity`.
    /// With a workers sweep, the workers too: `throughput, 2 workers`.
    pub fn load_label(&self) -> String {
        let load = self.load_only_label();
        match self.workers {
            Some(w) => format!("{load}, {w} worker{}", if w == 1 { "" } else { "s" }),
            None => load,
        }
    }

    /// `load_label` without the workers.
    pub fn load_only_label(&self) -> String {
        match (self.load_fraction, self.rate_rps) {
            (Some(f), _) => format!("{} {:.0}% of capacity", self.mode, f * 100.0),
            (None, Some(r)) => format!("{} {r:.0}/s", self.mode),
            (None, None) => self.mode.clone(),
        }
    }

    /// Why the measurement has no figures, as the tables of what was not measured say it (a status and
    /// the reason in full), or None when it has some: it failed, it was interrupted, or it ended with
    /// every measured round left out as disturbed (the machine never went quiet enough within
    /// `--max-rounds`), whose figures are absent rather than read from disturbed rounds.
    pub fn not_measured(&self) -> Option<(&'static str, String)> {
        match self.status {
            MeasurementStatus::Failed => Some(("failed", self.reason.clone().unwrap_or_default())),
            MeasurementStatus::Interrupted => Some(("interrupted", "stopped by a signal".into())),
            MeasurementStatus::Measured if self.measured_rounds().next().is_none() => {
                let taken: Vec<&Round> = self.rounds.iter().filter(|r| !r.warmup).collect();
                let most = |f: fn(&Round) -> Option<f64>| taken.iter().filter_map(|r| f(r)).fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
                let pct = |v: Option<f64>| v.map_or_else(|| "not read".to_string(), |v| format!("{v:.1}%"));
                Some((
                    "no round counted",
                    format!(
                        "all {} measured rounds left out as disturbed (steal at most {}, foreign time on the server CPUs at most {}): no figure is read from them",
                        taken.len(),
                        pct(most(|r| r.machine.steal_pct)),
                        pct(most(|r| r.machine.foreign_pct))
                    ),
                ))
            }
            _ => None,
        }
    }

    /// The measured rounds that count (warm-ups and rounds left out as disturbed excluded).
    pub fn measured_rounds(&self) -> impl Iterator<Item = &Round> {
        self.rounds.iter().filter(|r| r.counts())
    }


    /// req/s over the rounds that count: median, interval and the rest (cheap: no histogram is merged).
    pub fn requests_per_s(&self) -> Option<RoundsSummary> {
        RoundsSummary::of(&self.measured_rounds().map(Round::requests_per_s_adjusted).collect::<Vec<_>>())
    }

    /// req/s over the rounds that count as the client measured them, the machine's drift left in.
    pub fn requests_per_s_as_measured(&self) -> Option<RoundsSummary> {
        RoundsSummary::of(&self.measured_rounds().map(|r| r.load.requests_per_s()).collect::<Vec<_>>())
    }

    pub fn summary(&self) -> MeasurementSummary {
        let rounds: Vec<&Round> = self.measured_rounds().collect();
        let rounds_disturbed = self.rounds.iter().filter(|r| !r.warmup && r.has_flag(&Flag::Disturbed)).count();
        let rounds_cpu_drift = rounds.iter().filter(|r| r.has_flag(&Flag::CpuDrift)).count();
        let rounds_cpu_from_ticks = rounds.iter().filter(|r| r.server.cpu_source == Some(CpuSource::Ticks)).count();
        if rounds.is_empty() {
            return MeasurementSummary { response_bytes: self.response_bytes, rounds_disturbed, rounds_cpu_drift, rounds_cpu_from_ticks, ..Default::default() };
        }
        let requests_per_s = self.requests_per_s();
        let syscalls = self.server_syscalls(&rounds);
        let mut errors = ErrorCounts::default();
        rounds.iter().for_each(|r| errors.add(&r.load.errors));
        let requests: u64 = rounds.iter().map(|r| r.load.requests).sum();
        // A figure missing from any measured round is missing from the summary: a mean or a sum over the
        // other rounds would pass for one over all of them.
        let mean = |f: &dyn Fn(&Round) -> Option<f64>| rounds.iter().map(|r| f(r)).sum::<Option<f64>>().map(|s| s / rounds.len() as f64);
        let cpu_s: Option<f64> = rounds.iter().map(|r| r.server.cpu_s).sum();
        let with_histogram = rounds.iter().all(|r| !r.load.latency.is_empty());
        let latency_ns_as_measured = if with_histogram {
            let mut merged = new_latency_histogram();
            for r in &rounds {
                let _ = merged.add(&r.load.latency);
            }
            LatencySummary::of(&merged).into()
        } else {
            LatencyPoints::average(&rounds.iter().map(|r| r.latency()).collect::<Vec<_>>())
        };
        let latency_factor = rounds
            .iter()
            .map(|r| r.latency_factor().map(f64::ln))
            .sum::<Option<f64>>()
            .map(|sum| (sum / rounds.len() as f64).exp());
        MeasurementSummary {
            rounds: rounds.len(),
            median_rps: requests_per_s.as_ref().map(|s| s.median),
            median_rps_as_measured: self.requests_per_s_as_measured().map(|s| s.median),
            ci_low_rps: requests_per_s.as_ref().and_then(|s| s.ci95).map(|c| c.0),
            ci_high_rps: requests_per_s.as_ref().and_then(|s| s.ci95).map(|c| c.1),
            rounds_used: rounds.len(),
            rounds_disturbed,
            rounds_cpu_drift,
            rounds_cpu_from_ticks,
            requests,
            errors,
            requests_per_s,
            bytes_per_s: RoundsSummary::of(&rounds.iter().map(|r| r.load.bytes_read_per_s()).collect::<Vec<_>>()),
            server_utilisation_pct: mean(&|r| r.server.utilisation_pct),
            server_cpu_us_per_request: cpu_s.filter(|_| requests > 0).map(|s| s * 1e6 / requests as f64),
            peak_rss_bytes: rounds.iter().map(|r| r.server.peak_rss_bytes).collect::<Option<Vec<u64>>>().and_then(|v| v.into_iter().max()),
            pss_bytes: rounds.iter().map(|r| r.server.pss_bytes).collect::<Option<Vec<u64>>>().and_then(|v| v.into_iter().max()),
            server_cost_per_request: CostPerRequest::over(&rounds, |r| r.server.cost),
            client_cost_per_request: CostPerRequest::over(&rounds, |r| CostBreakdown::of_client(&r.load)),
            connections: ConnectionsSummary::over(rounds.iter().map(|r| &r.load)),
            client_system_calls_per_request: {
                let with: Vec<&Round> = rounds.iter().filter(|r| r.load.client_system_calls > 0).copied().collect();
                let requests: u64 = with.iter().map(|r| r.load.requests).sum();
                (requests > 0).then(|| with.iter().map(|r| r.load.client_system_calls).sum::<u64>() as f64 / requests as f64)
            },
            server_syscalls_per_request: syscalls.as_ref().ok().map(|(per, _, _)| per.clone()),
            server_syscalls_method: syscalls.as_ref().ok().and_then(|(_, method, _)| method.clone()),
            server_syscalls_from: syscalls.as_ref().ok().map(|(_, _, from)| from.to_string()),
            server_syscalls_unavailable: syscalls.err().map(|e| e.to_string()),
            client_syscalls_per_request: self.client_syscalls(&rounds),
            worker_imbalance: {
                let v: Vec<f64> = rounds.iter().filter_map(|r| r.server.workers.map(|w| w.imbalance)).collect();
                (!v.is_empty()).then(|| crate::stats::rounds::median(&v))
            },
            client_busy_pct: mean(&|r| r.client_busy_pct),
            latency_ns: latency_ns_as_measured.scaled(1.0 / latency_factor.unwrap_or(1.0)),
            latency_ns_as_measured,
            latency_factor,
            latency_from_histogram: with_histogram,
            client_bound_rounds: rounds.iter().filter(|r| r.has_flag(&Flag::ClientBound)).count(),
            both_busy_rounds: rounds.iter().filter(|r| r.has_flag(&Flag::BothBusy)).count(),
            unsaturated_rounds: rounds.iter().filter(|r| r.has_flag(&Flag::Unsaturated)).count(),
            unsaturated_limits: super::limit::count_limits(
                rounds.iter().filter(|r| r.has_flag(&Flag::Unsaturated)).filter_map(|r| r.limit.as_deref()),
            ),
            keepalive_lost_rounds: rounds.iter().filter(|r| r.has_flag(&Flag::KeepaliveLost)).count(),
            server_closes_rounds: rounds.iter().filter(|r| r.has_flag(&Flag::ServerCloses)).count(),
            rate_not_held_rounds: rounds.iter().filter(|r| r.has_flag(&Flag::RateNotHeld)).count(),
            ramp_incomplete_rounds: rounds.iter().filter(|r| r.has_flag(&Flag::RampIncomplete)).count(),
            unfair_rounds: rounds.iter().filter(|r| r.has_flag(&Flag::Unfair)).count(),
            // What the load saw (echo's message size, json's own sequence numbers); else the verified size.
            response_bytes: rounds.iter().map(|r| r.load.response_bytes).find(|b| *b > 0).or(self.response_bytes),
        }
    }
}
