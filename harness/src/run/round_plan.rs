//! What one round of one server is to do (`RoundPlan`), and the built-in engine's configuration for it:
//! the scenario's workload, the run's mode and stop rule, the client's CPUs and threads, and the extra
//! counting round's shorter window.

use std::path::Path;

use crate::load::{LoadConfig, Mode, Stop, Workload};
use crate::model::RAMP_LIMIT;

use super::options::{BenchOptions, ModeKind, StopRule, SyscallCounting};

/// What one round of one server does.
pub struct RoundPlan<'a> {
    pub opts: &'a BenchOptions,
    pub contestant: &'a str,
    pub scenario: &'a str,
    /// Micro contestants get the byte-for-byte check of every `hello` response.
    pub micro: bool,
    pub connections: usize,
    /// Size of one response as verified: stored where the tool does not report it.
    pub response_bytes: u64,
    /// Where external tools keep their scripts and output.
    pub workdir: &'a Path,
    /// A capacity search's step: the round runs open-loop at this rate whatever `--mode` says.
    pub rate: Option<f64>,
    /// The `{workers}` the server runs with.
    pub workers: usize,
    /// Whether the server's system calls are counted in this round (`--syscall-counts`).
    pub count_syscalls: bool,
    /// The most connections an earlier round of this configuration served before its ramp stalled
    /// (`LoadConfig::ramp_served`); None where no ramp of it has stalled.
    pub ramp_served: Option<usize>,
}

impl RoundPlan<'_> {
    /// The open-loop rate of this round, if it has one.
    pub fn rate(&self) -> Option<f64> {
        self.rate.or(self.opts.rate_per_s.filter(|_| matches!(self.opts.mode, ModeKind::Rate)))
    }
}

/// The window of the extra round that counts system calls, at most: its figures are calls and CPU time
/// per request, and a quarter of a second holds some thousands of requests of the slowest contestant.
pub const COUNTING_WINDOW: std::time::Duration = std::time::Duration::from_millis(250);

/// A round's measured window: the run's, or at most `COUNTING_WINDOW` for the extra counting round,
/// whose time would otherwise be that of a measured round (43 of them in a default run). The built-in
/// engine's only (here or on client hosts): an external tool's rounds all last the run's `-d`.
fn window(plan: &RoundPlan, asked: std::time::Duration) -> std::time::Duration {
    if plan.count_syscalls && plan.opts.syscall_counts == SyscallCounting::Extra {
        asked.min(COUNTING_WINDOW)
    } else {
        asked
    }
}

/// The engine's configuration for a round.
pub fn load_config(plan: &RoundPlan, target: std::net::SocketAddr) -> anyhow::Result<LoadConfig> {
    let o = plan.opts;
    let mut workload = Workload::for_scenario(plan.scenario, o.pipeline, plan.micro)
        .ok_or_else(|| anyhow::anyhow!("the load generator has no workload for scenario {}", plan.scenario))?;
    match (&mut workload, crate::wire::Scenario::parse(plan.scenario)) {
        (Workload::Http { mix, .. }, Some(s)) => *mix = o.mix.for_scenario(s),
        (Workload::Echo { kind, .. }, _) => *kind = o.echo,
        _ => {}
    }
    Ok(LoadConfig {
        target,
        threads: o.client_threads.min(plan.connections).max(1),
        connections: plan.connections,
        cpus: Some(o.client_cpus.cpus().to_vec()),
        mode: match (plan.rate(), o.mode) {
            (Some(requests_per_s), _) => Mode::Rate { requests_per_s },
            (None, ModeKind::Latency) => Mode::Latency { think_time: o.think_time },
            (None, _) => Mode::Throughput,
        },
        stop: match o.stop {
            StopRule::Duration(d) => Stop::Duration { warmup: std::time::Duration::ZERO, measure: window(plan, d) },
            StopRule::Requests(n) => Stop::RequestsPerConnection(n),
        },
        workload,
        timeout: o.timeout,
        io: o.client_io,
        poll: o.client_poll,
        // The window opens once every connection has been served: a server still accepting is not ranked
        // as if it were in steady state.
        ramp: Some(RAMP_LIMIT),
        ramp_served: plan.ramp_served,
        connection_per_request: o.connection_per_request,
        seed: o.mix.seed,
        interval: o.interval,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(opts: &BenchOptions, count_syscalls: bool) -> RoundPlan<'_> {
        RoundPlan {
            opts,
            contestant: "c-epoll",
            scenario: "hello",
            micro: true,
            connections: 64,
            response_bytes: 0,
            workdir: Path::new("."),
            rate: None,
            workers: 1,
            count_syscalls,
            ramp_served: None,
        }
    }

    #[test]
    fn only_the_extra_counting_round_is_cut_to_a_quarter_second() {
        let two = std::time::Duration::from_secs(2);
        let extra = BenchOptions { stop: StopRule::Duration(two), syscall_counts: SyscallCounting::Extra, ..BenchOptions::for_tests() };
        let every = BenchOptions { syscall_counts: SyscallCounting::Rounds, ..extra.clone() };
        assert_eq!(window(&plan(&extra, true), two), COUNTING_WINDOW, "the extra round counts calls per request");
        assert_eq!(window(&plan(&extra, false), two), two, "a measured round keeps the run's window");
        assert_eq!(window(&plan(&every, true), two), two, "with --syscall-counts rounds every measured round counts, at full length");
        let short = std::time::Duration::from_millis(100);
        assert_eq!(window(&plan(&extra, true), short), short, "never longer than asked");
    }
}
