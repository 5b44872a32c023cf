//! What the runner reads, as run.json stores it: each report type of `load/` (with its intervals, kept by
//! `stats::intervals`), and the system-call counter's reading of `os/`, turned into its counterpart of
//! `model/`. Every conversion takes its source apart field
//! by field, so a field added to the engine's report or to the counter's reading does not compile until it
//! is given a place in the file format (or left out here).

use crate::load::{self, search, LoadReport};
use crate::model;
use crate::os::cpustat::{ticks_per_s, CpuTimes};
use crate::os::proc::ThreadCost;
use crate::os::syscalls;
use crate::stats::intervals::{Interval, Intervals};

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
            connections_served,
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
            keepalive_lost_excludes_server_closes: true,
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
            connections_served,
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
            intervals: intervals.map(Into::into),
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

impl From<Intervals> for model::Intervals {
    fn from(s: Intervals) -> model::Intervals {
        let Intervals { length_ms, each } = s;
        let each = each
            .into_iter()
            .map(|i| {
                let Interval { requests, errors, latency } = i;
                model::Interval { requests, errors, latency }
            })
            .collect();
        model::Intervals { length_ms, each }
    }
}

impl From<syscalls::SyscallCounts> for model::SyscallCounts {
    fn from(c: syscalls::SyscallCounts) -> model::SyscallCounts {
        let syscalls::SyscallCounts { total, by_name } = c;
        model::SyscallCounts { total, by_name }
    }
}

/// The server's threads' user and kernel time and switches, from what they spent: their exact CPU time
/// (schedstat) split in the proportion of their user and system clock ticks (stat). Per thread the ticks
/// are too coarse for a 1 s window (a thread of 64 runs a few ms, less than a tick) and the kernel keeps
/// them monotonic by holding one back while the other catches up, so only their sum over the threads is
/// used, and only for the split. Where that sum holds less than half the CPU time (64 processes that each
/// run a few ms, a process per connection, were seen with no tick at all over 0.47 s), the split is that of
/// the server's CPUs' own user and system counters over the window (`own_cpus`, given only where nothing
/// but the server is meant to run there; their interrupt time is charged to no task, as for the tree).
/// Absent when neither counted a tick.
pub(super) fn cost_of_threads(c: ThreadCost, own_cpus: Option<CpuTimes>) -> Option<model::CostBreakdown> {
    let ThreadCost { cpu_ns, user_ticks, system_ticks, voluntary_switches, involuntary_switches, migrations } = c;
    let cpu_s = cpu_ns as f64 / 1e9;
    let tree_holds_half = (user_ticks + system_ticks) as f64 / ticks_per_s() >= cpu_s / 2.0;
    let (user, system) = match own_cpus {
        Some(cpus) if !tree_holds_half && cpus.tasks() > 0 => (cpus.user, cpus.system),
        _ => (user_ticks, system_ticks),
    };
    let ticks = user + system;
    (ticks > 0).then(|| {
        let user_share = user as f64 / ticks as f64;
        model::CostBreakdown { user_s: cpu_s * user_share, system_s: cpu_s * (1.0 - user_share), voluntary_switches, involuntary_switches, migrations }
    })
}

impl From<search::SearchResult<model::Flag>> for model::Capacity {
    fn from(s: search::SearchResult<model::Flag>) -> model::Capacity {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn spent(cpu_s: f64, user_ticks: u64, system_ticks: u64) -> ThreadCost {
        ThreadCost { cpu_ns: (cpu_s * 1e9) as u64, user_ticks, system_ticks, ..ThreadCost::zero() }
    }

    fn cpus(user: u64, system: u64) -> CpuTimes {
        CpuTimes { user, system, ..CpuTimes::default() }
    }

    #[test]
    fn the_tree_splits_its_own_time_where_its_ticks_hold_it() {
        let ticks = (0.5 * ticks_per_s()) as u64;
        let c = cost_of_threads(spent(0.5, ticks / 5, ticks - ticks / 5), Some(cpus(1, 99))).unwrap();
        assert!((c.user_s - 0.1).abs() < 0.01 && (c.user_s + c.system_s - 0.5).abs() < 1e-9, "{c:?}");
    }

    #[test]
    fn processes_without_ticks_take_their_cpus_split() {
        // 64 processes that each ran a few ms: no tick over 0.47 s; the server's CPUs counted 10% user.
        let c = cost_of_threads(spent(0.47, 0, 0), Some(cpus(5, 45))).unwrap();
        assert!((c.user_s - 0.047).abs() < 1e-9 && (c.system_s - 0.423).abs() < 1e-9, "{c:?}");
        // Too few ticks to hold half the time are outweighed too.
        let c = cost_of_threads(spent(0.47, 1, 0), Some(cpus(5, 45))).unwrap();
        assert!((c.user_s - 0.047).abs() < 1e-9, "{c:?}");
    }

    #[test]
    fn no_split_without_a_tick_on_either_side() {
        assert_eq!(cost_of_threads(spent(0.47, 0, 0), None), None);
        assert_eq!(cost_of_threads(spent(0.47, 0, 0), Some(cpus(0, 0))), None);
        // A tree's few ticks are still a split where its CPUs' counters are not the server's alone.
        assert!(cost_of_threads(spent(0.47, 0, 1), None).is_some_and(|c| c.user_s == 0.0));
    }
}
