//! The load generator's figures as run.json stores them: each report type of `load/` turned into its
//! counterpart of `model/`. Every conversion takes its source apart field by field, so a field added to
//! the engine's report does not compile until it is given a place in the file format (or left out here).

use crate::load::{self, search, LoadReport};
use crate::model;

impl From<LoadReport> for model::RoundLoad {
    fn from(r: LoadReport) -> model::RoundLoad {
        let LoadReport {
            requests,
            reconnects,
            keepalive_lost,
            server_closes,
            connections_opened,
            backlog,
            ramp_s,
            unserved_at_start,
            per_connection,
            errors,
            status,
            duration_s,
            bytes_read,
            bytes_written,
            response_bytes,
            latency,
            latency_uncorrected,
            intervals,
            client_cpu_s,
            thread_cpu_s,
            client_poll_s,
            thread_poll_s,
            client_user_s,
            client_system_s,
            client_voluntary_switches,
            client_involuntary_switches,
            client_migrations,
            client_system_calls,
            poll,
            counter,
            threads,
            connections,
            interrupted,
            io,
        } = r;
        model::RoundLoad {
            requests,
            reconnects,
            keepalive_lost,
            server_closes,
            connections_opened,
            backlog,
            ramp_s,
            unserved_at_start,
            per_connection: per_connection.map(|s| model::ConnectionSpread {
                min: s.min,
                p1: s.p1,
                median: s.median,
                max: s.max,
                starved: s.starved,
                jain: s.jain,
            }),
            errors: errors.into(),
            status: model::StatusCounts {
                s1xx: status.s1xx,
                s2xx: status.s2xx,
                s3xx: status.s3xx,
                s4xx: status.s4xx,
                s5xx: status.s5xx,
                other: status.other,
            },
            duration_s,
            bytes_read,
            bytes_written,
            response_bytes,
            latency,
            latency_uncorrected,
            intervals,
            timeline: None,
            client_cpu_s,
            thread_cpu_s,
            client_poll_s,
            thread_poll_s,
            client_user_s,
            client_system_s,
            client_voluntary_switches,
            client_involuntary_switches,
            client_migrations,
            client_system_calls,
            poll,
            counter: counter.map(|c| model::CounterCheck {
                keys: c.keys,
                values: c.values,
                repeated: c.repeated,
                gaps: c.gaps,
                slack: c.slack,
                lost_updates: c.lost_updates,
            }),
            threads,
            connections,
            interrupted,
            io,
        }
    }
}

impl From<load::ErrorCounts> for model::ErrorCounts {
    fn from(e: load::ErrorCounts) -> model::ErrorCounts {
        let load::ErrorCounts { connect, read, write, timeout, status, framing, mismatch } = e;
        model::ErrorCounts { connect, read, write, timeout, status, framing, mismatch }
    }
}

impl From<search::SearchResult> for model::Capacity {
    fn from(s: search::SearchResult) -> model::Capacity {
        let search::SearchResult { slo, capacity_rps, bracket, steps } = s;
        model::Capacity {
            slo: model::Objective { text: slo.text, quantile: slo.quantile, bound_ns: slo.bound_ns },
            capacity_rps,
            bracket,
            steps: steps
                .into_iter()
                .map(|search::Step { rate, achieved, latency_ns, errors, pass, flags }| model::SearchStep { rate, achieved, latency_ns, errors, pass, flags })
                .collect(),
        }
    }
}

impl From<&load::mix::MixOptions> for model::Workload {
    fn from(m: &load::mix::MixOptions) -> model::Workload {
        let skew = |s: Option<load::Skew>| s.map(|s| model::Skew { fraction: s.fraction, factor: s.factor });
        model::Workload { work_us: m.work_us, heavy_connections: skew(m.heavy_connections), heavy_requests: skew(m.heavy_requests), keys: m.keys, seed: m.seed }
    }
}
