//! A new run's entries in the model: its configuration as the options resolved it, and a pending record
//! per selected contestant.

use crate::catalog::Contestant;
use crate::model::{ContestantRecord, ContestantStatus, RunConfig};

use super::options::{self, BenchOptions, StopRule};

pub(super) fn run_config(o: &BenchOptions) -> RunConfig {
    RunConfig {
        scenarios: o.scenarios.clone(),
        mode: o.mode.name().into(),
        think_time_ms: (o.mode == options::ModeKind::Latency).then(|| o.think_time.as_secs_f64() * 1000.0),
        rate_per_s: o.rate_per_s,
        load_fractions: o.load_fractions.clone(),
        connections: o.connections.clone(),
        pipeline: o.pipeline,
        connection_per_request: o.connection_per_request,
        run_type: o.run_type.name().into(),
        server_cpus: o.server_cpus.to_string(),
        client_cpus: o.client_cpus.to_string(),
        workers: o.workers,
        client_threads: o.client_threads,
        warmup_rounds: o.warmup,
        measured_rounds: match o.rounds {
            options::Rounds::Fixed(n) => n,
            options::Rounds::Auto { .. } => o.max_rounds,
        },
        rounds: o.rounds.name(),
        target_ci_pct: match o.rounds {
            options::Rounds::Auto { target_ci_pct } => Some(target_ci_pct),
            options::Rounds::Fixed(_) => None,
        },
        max_rounds: Some(o.max_rounds),
        duration_s: match o.stop {
            StopRule::Duration(d) => Some(d.as_secs_f64()),
            StopRule::Requests(_) => None,
        },
        requests_per_connection: match o.stop {
            StopRule::Requests(n) => Some(n),
            StopRule::Duration(_) => None,
        },
        tool: o.tool.name().into(),
        client_io: if o.tool == options::Tool::Builtin { o.client_io_name.clone() } else { String::new() },
        client_poll: if o.tool == options::Tool::Builtin { o.client_poll.name().into() } else { String::new() },
        timeout_s: o.timeout.as_secs_f64(),
        notes: o.notes.clone(),
        server_address: (!o.remote.server_address.is_loopback()).then(|| o.remote.server_address.to_string()),
        client_hosts: o.remote.client_hosts.iter().map(ToString::to_string).collect(),
        server_host: o.remote.server_host.as_ref().map(ToString::to_string),
        server_checkout: o.remote.server_checkout.as_ref().map(|p| p.display().to_string()),
        workers_sweep: o.workers_sweep.clone(),
        workload: o.scenarios.iter().any(|s| s == "work" || s == "counter").then(|| (&o.mix).into()),
        shuffle_seed: Some(
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64),
        ),
    }
}

pub(super) fn record(c: &Contestant) -> ContestantRecord {
    ContestantRecord {
        name: c.name.clone(),
        display: c.display.clone(),
        language: c.language.clone(),
        framework: c.framework.clone(),
        category: c.category.clone(),
        model: c.model.clone(),
        io: c.io.clone(),
        status: ContestantStatus::Pending,
        reason: None,
        version: None,
        build_log: None,
        build_cached: false,
        build_s: 0.0,
        server_logs: Vec::new(),
        warnings: Vec::new(),
    }
}
