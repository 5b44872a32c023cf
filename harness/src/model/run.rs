//! A run as stored in `run.json` (schema 1): when and where it ran, what it was asked, each contestant's
//! record, its measurements and, with `bench --check`, the conformance outcome.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::measurement::Measurement;
use super::checks::ContestantChecks;

pub const SCHEMA: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    pub schema: u32,
    pub run_id: String,
    pub started_utc: String,
    pub finished_utc: Option<String>,
    /// Stopped by Ctrl-C or SIGTERM; what finished before is complete.
    pub interrupted: bool,
    pub environment: Environment,
    pub config: RunConfig,
    pub contestants: Vec<ContestantRecord>,
    pub measurements: Vec<Measurement>,
    /// Manifests that could not be read, one message each (file: field: what is allowed).
    #[serde(default)]
    pub catalog_errors: Vec<String>,
    /// With `bench --check`: the conformance suite's outcome per contestant, before measuring.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<ContestantChecks>,
    /// An A/B run (`bench --baseline REV`, `bench --ab DIR_A DIR_B`): the two versions and their pairs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ab: Option<super::ab::AbRun>,
    /// Where the run's wall time went; absent while it runs and in runs stored before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_spent: Option<super::TimeSpent>,
    /// What the machine model took out of each kind of load (`model::machine_model`), refitted from the
    /// rounds whenever a run is read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub machine_model: Vec<super::machine_fit::MachineFit>,
}

/// A version line by tool name (a load tool, a toolchain).
pub type ToolVersions = BTreeMap<String, String>;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    pub cpu_model: String,
    /// Online CPUs of the machine.
    pub cores: usize,
    /// The CPUs this run could use (its affinity), as a list like `0-3`.
    pub allowed_cpus: String,
    pub kernel: String,
    pub os: String,
    pub memory_bytes: u64,
    /// 1, 5 and 15 minute load averages when the run started; absent when /proc/loadavg could not be read.
    pub load_average: Option<[f64; 3]>,
    /// The same when it finished: load from outside the run shows here.
    #[serde(default)]
    pub load_average_end: Option<[f64; 3]>,
    /// Tool versions by tool name: the load tool, and the toolchains on PATH of the languages whose
    /// contestants print no version of their own (the others name theirs in `contestants[].version`).
    pub tools: ToolVersions,
    pub command_line: Vec<String>,
    pub serverbench_version: String,
    /// The hosts that generated the load (`--client-host`); empty when this machine did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub client_hosts: Vec<super::HostRecord>,
    /// The host the servers ran on (`--server-host`), as found when the run prepared it; absent when they
    /// ran on this machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_host: Option<super::HostRecord>,
    /// This machine's frequency, governor, SMT, kernel command line, mitigations and memory; absent in runs
    /// stored before they were recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<super::MachineFacts>,
    /// The revision of the catalog's repository when the run started; absent in runs stored before it was
    /// recorded, and where it could not be read (`catalog_revision_absent` says why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catalog_revision: Option<CatalogRevision>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catalog_revision_absent: Option<String>,
}

/// The commit a run's catalog was checked out at, and whether its work tree differed from it (a changed
/// or added file): then the figures are of the tree as it was, not of that commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatalogRevision {
    pub commit: String,
    pub dirty: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    pub scenarios: Vec<String>,
    /// throughput | latency | rate
    pub mode: String,
    pub think_time_ms: Option<f64>,
    pub rate_per_s: Option<f64>,
    /// `--rate auto`: each server's rate rounds run at these shares of its own measured capacity.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub load_fractions: Vec<f64>,
    pub connections: Vec<usize>,
    pub pipeline: u32,
    /// Every request on a new connection (`--connection-per-request`) instead of keep-alive.
    #[serde(default)]
    pub connection_per_request: bool,
    /// With the echo scenario: how its client talked, `pingpong` or `stream` (`--echo`); absent otherwise
    /// and in runs stored before streaming.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub echo: Option<String>,
    /// Whether the run measured its control (harness/control); false in runs stored before it existed.
    #[serde(default)]
    pub control: bool,
    /// singleCore | multiCore
    pub run_type: String,
    pub server_cpus: String,
    pub client_cpus: String,
    /// The `{workers}` given to every server.
    pub workers: usize,
    pub client_threads: usize,
    pub warmup_rounds: u32,
    /// With `rounds` a count: that count; with `auto`: the most measured rounds a measurement may run.
    pub measured_rounds: u32,
    /// "auto" (until the median's interval is within `target_ci_pct`) or the fixed count.
    #[serde(default)]
    pub rounds: String,
    #[serde(default)]
    pub target_ci_pct: Option<f64>,
    /// The most measured rounds per measurement, left-out ones included.
    #[serde(default)]
    pub max_rounds: Option<u32>,
    /// With `rounds` auto: the run's time budget (`--budget`), within which the measured passes stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_s: Option<f64>,
    pub duration_s: Option<f64>,
    pub requests_per_connection: Option<u64>,
    /// builtin | wrk | h2load | hey | ab
    pub tool: String,
    /// The built-in load generator's I/O backend: "io_uring", or "epoll" with the reason io_uring was
    /// not used; empty for external tools.
    #[serde(default)]
    pub client_io: String,
    /// How the built-in load generator waited for the kernel: "busy" (polling without sleeping) or
    /// "sleep"; empty for external tools and runs from before the choice existed.
    #[serde(default)]
    pub client_poll: String,
    /// The length of the intervals each round's window was cut into (`--interval`); absent for external
    /// tools and in runs stored before intervals were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_ms: Option<f64>,
    pub timeout_s: f64,
    /// What shaped `work` and `counter` requests (`--work`, `--heavy-connections`, `--heavy-requests`,
    /// `--keys`, `--seed`), when the run has one of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<Workload>,
    /// With `--workers LIST`: the `{workers}` each server was measured with, in turn.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workers_sweep: Vec<usize>,
    /// The seed of the order of the servers in each pass of rounds.
    #[serde(default)]
    pub shuffle_seed: Option<u64>,
    /// What the run said before it started, such as that server and client CPUs overlap.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The address the servers listened on, when not loopback (`--server-address`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_address: Option<String>,
    /// `--client-host` as given: the load came from these hosts, merged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub client_hosts: Vec<String>,
    /// `--server-host` as given, and the checkout the servers were built from there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_host: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_checkout: Option<String>,
    /// An A/B run's options (`--baseline`, `--ab`, `--fail-on`); `rounds`, `target_ci_pct` and
    /// `max_rounds` then count pairs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ab: Option<super::ab::AbConfig>,
}

/// The options behind a run's `work` and `counter` requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    pub work_us: u64,
    pub heavy_connections: Option<Skew>,
    pub heavy_requests: Option<Skew>,
    pub keys: u32,
    pub seed: u64,
}

/// A share of connections or requests made `factor` times heavier than the base.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Skew {
    pub fraction: f64,
    pub factor: u64,
}

impl RunConfig {
    /// "2 workers", or with a sweep "workers 1, 2 in turn".
    pub fn workers_label(&self) -> String {
        match self.workers_sweep.as_slice() {
            [] => format!("{} worker{}", self.workers, if self.workers == 1 { "" } else { "s" }),
            list => format!("workers {} in turn", list.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")),
        }
    }

    /// How the built-in load generator ran, for a report's header: "io_uring", or "io_uring, busy-polling";
    /// empty for external tools.
    pub fn client_io_label(&self) -> String {
        match self.client_poll.as_str() {
            "busy" if !self.client_io.is_empty() => format!("{}, busy-polling", self.client_io),
            _ => self.client_io.clone(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ContestantStatus {
    Pending,
    Built,
    Failed,
    Skipped,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContestantRecord {
    pub name: String,
    pub display: String,
    pub language: String,
    pub framework: String,
    pub category: String,
    pub model: String,
    pub io: String,
    /// thread, stackful, stackless or callback (the manifest's `style`); absent in runs stored before it
    /// existed and for a manifest without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub style: Option<String>,
    pub status: ContestantStatus,
    /// Why it failed or was skipped.
    pub reason: Option<String>,
    /// What its manifest's `version` command printed.
    pub version: Option<String>,
    /// Paths relative to the run folder.
    pub build_log: Option<String>,
    /// True when the build was skipped because nothing changed since the last successful one.
    #[serde(default)]
    pub build_cached: bool,
    #[serde(default)]
    pub build_s: f64,
    #[serde(default)]
    pub server_logs: Vec<String>,
    /// Problems that did not stop the measurement: a server that ignored SIGTERM, left processes
    /// behind or kept its port.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// The run's control (harness/control): measured like the contestants to tell the machine's change
    /// from theirs, shown apart and never ranked.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub control: bool,
}

impl RunResult {
    /// "within a time budget of 5 min 00 s for measuring, which ended the rounds of 38 of 43 measurements before
    /// their interval reached the target", or None for a run without a budget.
    pub fn budget_words(&self) -> Option<String> {
        let budget = super::time_spent::min_s(self.config.budget_s?);
        let measured = self.measurements.iter().filter(|m| m.status == super::MeasurementStatus::Measured).count();
        Some(match self.measurements.iter().filter(|m| m.ended_by_budget).count() {
            0 => format!("within a time budget of {budget} for measuring"),
            n => format!("within a time budget of {budget} for measuring, which ended the rounds of {n} of {measured} measurements before their interval reached the target"),
        })
    }

    pub fn contestant(&self, name: &str) -> Option<&ContestantRecord> {
        self.contestants.iter().find(|c| c.name == name)
    }

    /// An A/B run's B/A of each figure, judged against its noise band; empty for other runs.
    pub fn ab_estimates(&self) -> Vec<super::ab::AbEstimate> {
        let bands = self.config.ab.as_ref().map_or_else(super::ab::Bands::default, super::ab::AbConfig::bands);
        self.ab.as_ref().map(|ab| ab.estimates(&self.measurements, bands)).unwrap_or_default()
    }
}
