//! summary.csv: one row per measurement with its summary over measured rounds (RFC 4180 quoting). Absent
//! figures are empty cells; latency is in nanoseconds, sizes in bytes. `unsaturated_limits` is the limit
//! of the unsaturated rounds, or each limit with its rounds ("server-sleeping:2;unknown:1").
//! `server_syscall_1` to `_3` are the server's three leading system calls by name, most first;
//! `client_syscall_1` to `_3` the client's.
//! `client_hosts` names the hosts the load came from (`bench --client-host`), `;` between them; empty when
//! it came from this machine. `server_host` names the host the servers ran on (`bench --server-host`);
//! empty when they ran on this machine. `rps_rank_best`/`_worst` and `cpu_rank_best`/`_worst` are the
//! row's range of places in its table (model::ranks); `server_cpu_us_per_request_median` and its interval
//! are over the rounds' own figures. `rounds_cpu_from_ticks` counts the rounds whose server CPU is in clock
//! ticks rather than the threads' exact run time (a thread or process of the server ended in the window).
//! In an A/B run (`model::ab`), `ab_side` says which version a row is (`a`, `b`), `ab_pairs` how many pairs
//! count, and `ab_<rps|p99|cpu>_ratio`, `_ci95_low`, `_ci95_high` and `_verdict` give B/A of each figure,
//! the same on both rows; empty in other runs.
//! `control` is `true` on the rows of the run's control (the reference server that measures the machine,
//! ranked nowhere) and `false` on every contestant's.
//! `keepalive_lost_rounds` counts the rounds in which the server ended connections with requests
//! outstanding, `server_closes_rounds` those in which it closed some cleanly (model::closes).

use super::Exporter;
use crate::model::ab::{AbEstimate, AbRun};
use crate::model::ranks::Places;
use crate::model::{Measurement, MeasurementStatus, RunResult};

pub const FILE_NAME: &str = "summary.csv";

pub struct Csv;

const COLUMNS: &[&str] = &[
    "run_id", "contestant", "language", "framework", "category", "model", "io", "scenario", "mode", "connections",
    "pipeline", "tool", "status", "reason", "rounds", "requests", "errors", "rps_mean", "rps_median", "rps_stdev",
    "rps_ci95_low", "rps_ci95_high", "rps_min", "rps_max", "rps_outliers", "bytes_per_s", "response_bytes",
    "server_cpu_pct", "server_cpu_us_per_request", "peak_rss_bytes", "client_cpu_pct", "client_bound_rounds",
    "latency_source", "latency_min_ns", "latency_mean_ns", "latency_stdev_ns", "latency_p25_ns", "latency_p50_ns",
    "latency_p75_ns", "latency_p90_ns", "latency_p99_ns", "latency_p999_ns", "latency_p9999_ns", "latency_max_ns",
    "latency_machine_factor", "latency_p50_ns_as_measured", "latency_p99_ns_as_measured",
    "rounds_disturbed", "rounds_cpu_drift", "pss_bytes", "unsaturated_rounds", "keepalive_lost_rounds",
    "server_closes_rounds", "rate_not_held_rounds", "ramp_incomplete_rounds", "unfair_rounds", "capacity_objective", "capacity_rps",
    "capacity_failed_rps", "rate_rps", "load_fraction", "rps_median_as_measured", "unsaturated_limits",
    "worker_imbalance", "server_user_us_per_request", "server_system_us_per_request",
    "server_voluntary_switches_per_request", "server_involuntary_switches_per_request", "client_user_us_per_request",
    "client_system_us_per_request", "client_voluntary_switches_per_request", "client_involuntary_switches_per_request",
    "client_system_calls_per_request", "server_syscalls_per_request", "server_syscall_1", "server_syscall_1_per_request",
    "server_syscall_2", "server_syscall_2_per_request", "server_syscall_3", "server_syscall_3_per_request",
    "server_migrations_per_request", "client_migrations_per_request", "rps_rank_best", "rps_rank_worst",
    "server_cpu_us_per_request_median", "server_cpu_us_per_request_ci95_low", "server_cpu_us_per_request_ci95_high",
    "cpu_rank_best", "cpu_rank_worst", "rounds_cpu_from_ticks", "both_busy_rounds",
    "connections_served", "connections_served_in_window", "client_syscalls_per_request",
    "client_syscall_1", "client_syscall_1_per_request", "client_syscall_2", "client_syscall_2_per_request",
    "client_syscall_3", "client_syscall_3_per_request", "style", "client_hosts", "server_host", "control",
    "ab_side", "ab_pairs", "ab_rps_ratio", "ab_rps_ci95_low", "ab_rps_ci95_high", "ab_rps_verdict", "ab_p99_ratio",
    "ab_p99_ci95_low", "ab_p99_ci95_high", "ab_p99_verdict", "ab_cpu_ratio", "ab_cpu_ci95_low", "ab_cpu_ci95_high", "ab_cpu_verdict",
];

impl Exporter for Csv {
    fn file_name(&self) -> &'static str {
        FILE_NAME
    }

    fn serialize_ranked(&self, run: &RunResult, places: &[Places]) -> anyhow::Result<Vec<u8>> {
        let mut out = line(COLUMNS.iter().map(|c| c.to_string()));
        let ab = run.ab.as_ref().map(|ab| (ab, run.ab_estimates()));
        for (m, places) in run.measurements.iter().zip(places) {
            let mut cells = row(run, m, *places);
            cells.extend(ab_cells(m, ab.as_ref()));
            out.push_str(&line(cells.into_iter()));
        }
        Ok(out.into_bytes())
    }
}

fn row(run: &RunResult, m: &Measurement, places: Places) -> Vec<String> {
    let s = m.summary();
    let c = run.contestant(&m.contestant);
    let field = |f: fn(&crate::model::ContestantRecord) -> &String| c.map(|c| f(c).clone()).unwrap_or_default();
    let num = |v: Option<f64>| v.filter(|v| v.is_finite()).map(|v| format!("{v:.3}").trim_end_matches('0').trim_end_matches('.').to_string()).unwrap_or_default();
    let rps = s.requests_per_s.as_ref();
    let l = &s.latency_ns;
    let status = match m.status {
        MeasurementStatus::Pending => "pending",
        MeasurementStatus::Running => "running",
        MeasurementStatus::Measured => "measured",
        MeasurementStatus::Failed => "failed",
        MeasurementStatus::Interrupted => "interrupted",
    };
    let mut cells = vec![
        run.run_id.clone(),
        m.contestant.clone(),
        field(|c| &c.language),
        field(|c| &c.framework),
        field(|c| &c.category),
        field(|c| &c.model),
        field(|c| &c.io),
        m.scenario.clone(),
        m.mode.clone(),
        m.connections.to_string(),
        m.pipeline.to_string(),
        m.tool.clone(),
        status.into(),
        m.reason.as_deref().and_then(|r| r.lines().next()).unwrap_or_default().to_string(),
        s.rounds.to_string(),
        s.requests.to_string(),
        s.errors.total().to_string(),
        num(rps.map(|r| r.mean)),
        num(rps.map(|r| r.median)),
        num(rps.map(|r| r.stdev)),
        num(rps.and_then(|r| r.ci95).map(|c| c.0)),
        num(rps.and_then(|r| r.ci95).map(|c| c.1)),
        num(rps.map(|r| r.min)),
        num(rps.map(|r| r.max)),
        rps.map(|r| r.outliers.len().to_string()).unwrap_or_default(),
        num(s.bytes_per_s.as_ref().map(|b| b.mean)),
        num(s.response_bytes.map(|b| b as f64)),
        num(s.server_utilisation_pct),
        num(s.server_cpu_us_per_request),
        num(s.peak_rss_bytes.map(|b| b as f64)),
        num(s.client_busy_pct),
        s.client_bound_rounds.to_string(),
        if s.rounds == 0 { String::new() } else if s.latency_from_histogram { "histogram".into() } else { "tool".into() },
        num(l.min),
        num(l.mean),
        num(l.stdev),
        num(l.p25),
        num(l.p50),
        num(l.p75),
        num(l.p90),
        num(l.p99),
        num(l.p999),
        num(l.p9999),
        num(l.max),
        // The columns above are at the machine model's reference state; its factor, and the two quantiles
        // most read as measured.
        num(s.latency_factor),
        num(s.latency_ns_as_measured.p50),
        num(s.latency_ns_as_measured.p99),
        s.rounds_disturbed.to_string(),
        s.rounds_cpu_drift.to_string(),
        num(s.pss_bytes.map(|b| b as f64)),
        s.unsaturated_rounds.to_string(),
        s.keepalive_lost_rounds.to_string(),
        s.server_closes_rounds.to_string(),
        s.rate_not_held_rounds.to_string(),
        s.ramp_incomplete_rounds.to_string(),
        s.unfair_rounds.to_string(),
        m.capacity.as_ref().map(|c| c.slo.text.clone()).unwrap_or_default(),
        num(m.capacity.as_ref().and_then(|c| c.bracket.0)),
        num(m.capacity.as_ref().and_then(|c| c.bracket.1)),
        num(m.rate_rps),
        num(m.load_fraction),
        num(s.median_rps_as_measured),
        crate::model::limits_cell(&s.unsaturated_limits),
        num(s.worker_imbalance),
        num(s.server_cost_per_request.map(|c| c.user_us)),
        num(s.server_cost_per_request.map(|c| c.system_us)),
        num(s.server_cost_per_request.map(|c| c.voluntary_switches)),
        num(s.server_cost_per_request.map(|c| c.involuntary_switches)),
        num(s.client_cost_per_request.map(|c| c.user_us)),
        num(s.client_cost_per_request.map(|c| c.system_us)),
        num(s.client_cost_per_request.map(|c| c.voluntary_switches)),
        num(s.client_cost_per_request.map(|c| c.involuntary_switches)),
        num(s.client_system_calls_per_request),
        num(s.server_syscalls_per_request.as_ref().and_then(|c| c.total)),
    ];
    cells.extend(leading_calls(s.server_syscalls_per_request.as_ref()));
    cells.push(num(s.server_cost_per_request.and_then(|c| c.migrations)));
    cells.push(num(s.client_cost_per_request.and_then(|c| c.migrations)));
    let rank = |r: Option<crate::model::ranks::PlaceRange>| [r.map(|r| r.best.to_string()).unwrap_or_default(), r.map(|r| r.worst.to_string()).unwrap_or_default()];
    cells.extend(rank(places.requests_per_s));
    let cpu = crate::model::ranks::cpu_us_per_request(m);
    cells.push(num(cpu.as_ref().map(|c| c.median)));
    cells.push(num(cpu.as_ref().and_then(|c| c.ci95.map(|ci| ci.0))));
    cells.push(num(cpu.as_ref().and_then(|c| c.ci95.map(|ci| ci.1))));
    cells.extend(rank(places.cpu_per_request));
    cells.push(s.rounds_cpu_from_ticks.to_string());
    cells.push(s.both_busy_rounds.to_string());
    let conns = s.connections;
    cells.extend([conns.map(|c| c.served), conns.map(|c| c.served_in_window)].map(|n| n.map(|n| n.to_string()).unwrap_or_default()));
    cells.push(num(s.client_syscalls_per_request.as_ref().and_then(|c| c.total)));
    cells.extend(leading_calls(s.client_syscalls_per_request.as_ref()));
    cells.push(c.and_then(|c| c.style.clone()).unwrap_or_default());
    cells.push(client_hosts(m));
    cells.push(run.config.server_host.clone().unwrap_or_default());
    cells.push(c.is_some_and(|c| c.control).to_string());
    cells
}

/// The three leading calls by name and their count per request, most first; empty cells for those missing.
fn leading_calls(per_request: Option<&crate::model::SyscallsPerRequest>) -> Vec<String> {
    let leading = per_request.map(|c| c.leading(3)).unwrap_or_default();
    (0..3).flat_map(|i| [leading.get(i).map(|(name, _)| name.to_string()).unwrap_or_default(), num(leading.get(i).map(|(_, c)| *c))]).collect()
}

/// An A/B run's columns: the version the row is (a, b), the pairs that count, and B/A of each figure with
/// its interval and verdict, the same on both rows; empty cells in other runs.
fn ab_cells(m: &Measurement, ab: Option<&(&AbRun, Vec<AbEstimate>)>) -> Vec<String> {
    let side = ab.and_then(|(ab, _)| [("a", &ab.a.name), ("b", &ab.b.name)].into_iter().find(|(_, n)| **n == m.contestant));
    let Some((_, estimates)) = ab.filter(|_| side.is_some()) else { return vec![String::new(); 14] };
    let mut cells = vec![side.map(|s| s.0.to_string()).unwrap_or_default(), estimates.first().map_or(0, |e| e.pairs).to_string()];
    for e in estimates {
        let ci = e.ratio.and_then(|r| r.ci95);
        cells.extend([num(e.ratio.map(|r| r.ratio)), num(ci.map(|c| c.0)), num(ci.map(|c| c.1)), e.verdict.word().to_string()]);
    }
    cells
}

fn num(v: Option<f64>) -> String {
    v.filter(|v| v.is_finite()).map(|v| format!("{v:.4}").trim_end_matches('0').trim_end_matches('.').to_string()).unwrap_or_default()
}

/// The client hosts that loaded the measured rounds, in order, `;` between them (empty: this machine).
fn client_hosts(m: &Measurement) -> String {
    let mut hosts: Vec<&str> = Vec::new();
    for h in m.measured_rounds().flat_map(|r| r.hosts.iter()) {
        if !hosts.contains(&h.host.as_str()) {
            hosts.push(&h.host);
        }
    }
    hosts.join(";")
}

pub(super) fn line(cells: impl Iterator<Item = String>) -> String {
    let quoted: Vec<String> = cells
        .map(|c| if c.contains([',', '"', '\n', '\r']) { format!("\"{}\"", c.replace('"', "\"\"")) } else { c })
        .collect();
    format!("{}\n", quoted.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_what_needs_it() {
        assert_eq!(line(["a".to_string(), "b,c".into(), "say \"x\"".into()].into_iter()), "a,\"b,c\",\"say \"\"x\"\"\"\n");
    }
}
