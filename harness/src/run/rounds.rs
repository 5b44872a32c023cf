//! One round: load from the run's `LoadSource` against one running server, while a probe
//! samples the server's process tree; the round's metrics and flags.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::launch::probe::Usage;
use crate::launch::round_watch::ServerSide;
use crate::load::search::RATE_HELD_SHARE;
use crate::load::LoadReport;
use crate::model::{
    judge, saturation, unsaturated_limit, CpuSource, HostLoad, LimitInputs, Round, RoundFacts, RoundMachine, Saturation, ServerUsage, SyscallsPerRequest,
};
use crate::os::cpustat::{ticks_per_s, CpuStat, CpuTimes};

use super::options::{BenchOptions, ModeKind, SyscallCounting, Tool};
use super::client_syscalls::ClientCount;
use super::served::{NotCounted, RoundMarks, RoundServer};
use super::to_model::cost_of_threads;
use super::load_source::{Driven, LoadSource};
use super::round_plan::RoundPlan;

/// Why a round's system calls were not counted.
fn not_counted(when: SyscallCounting) -> &'static str {
    match when {
        SyscallCounting::Off => "not counted (--syscall-counts off)",
        _ => "counted in an extra round after the measured ones (counting makes every system call about 200 ns dearer)",
    }
}

/// Runs one round, its load from `source`. An error means the load could not run at all (not that requests
/// failed: those are counted in the round).
pub fn run_round<S: RoundServer>(server: &mut S, source: &dyn LoadSource, plan: &RoundPlan, index: u32, warmup: bool, stop: &Arc<AtomicBool>) -> anyhow::Result<Round> {
    let o = plan.opts;
    // Whether the client's threads run on the server's machine: only then are the client CPUs and the
    // server's CPUs of one machine (with a server host or client hosts, they are not).
    let client_beside_server = server.is_here() && source.here();
    let shared_cpus = client_beside_server && o.server_cpus.overlaps(&o.client_cpus);
    // Counted on the server's own CPUs, where nothing else may run (a round that shares them is
    // `disturbed`); with the client on them too the counts would be of both.
    let syscalls = if !plan.count_syscalls {
        Err(NotCounted(not_counted(o.syscall_counts).into()))
    } else if shared_cpus {
        Err(NotCounted(format!("server CPUs {} and client CPUs {} overlap: the counts per CPU would hold the client's calls too", o.server_cpus, o.client_cpus)))
    } else {
        Ok(o.server_cpus.cpus().to_vec())
    };
    // The client's calls, counted the same way on its own CPUs where the server's are counted (a client
    // host's are not read).
    let client_count = if plan.count_syscalls && source.here() && !shared_cpus { ClientCount::open(o.client_cpus.cpus()) } else { None };
    let probe = server.watch_round(syscalls)?;
    // The engine tells the probe the edges of its measured window, so that the server's CPU time and the
    // CPUs' counters cover what the client's figures cover; an external tool's round is read around the call.
    let watch = match &client_count {
        Some(count) => count.around(probe.marks()),
        None => probe.marks(),
    };
    let outcome = source.drive(server.addr(), plan, watch, client_count.as_ref(), stop);
    let side = server.end_round(probe);
    let driven = outcome?;
    let side = side?;
    Ok(figures(plan, index, warmup, driven, side, client_count, client_beside_server, shared_cpus))
}

/// The round's figures and flags from what the client and the server's side read of it: CPU and its
/// share of the window, who limited it, the machine's interference, the server's costs and calls.
// The round's coordinates and both sides' readings, as `run_round` holds them.
#[allow(clippy::too_many_arguments)]
fn figures(plan: &RoundPlan, index: u32, warmup: bool, driven: Driven, side: ServerSide, client_count: Option<ClientCount>, client_beside_server: bool, shared_cpus: bool) -> Round {
    let o = plan.opts;
    let Driven { report: mut load, tool_latency_ns, hosts } = driven;
    let ServerSide { usage, wall_s, stat_before, stat_after, listen_before, listen_after } = side;
    if load.response_bytes == 0 {
        load.response_bytes = plan.response_bytes;
    }

    let cpus = o.server_cpus.len().max(1);
    let (cpu_s, cpu_source) = server_cpu_s(&usage);
    let utilisation_pct = cpu_s.filter(|_| wall_s > 0.0).map(|cpu_s| cpu_s / (wall_s * cpus as f64) * 100.0);
    let (client_busy_pct, client_limit_pct) = client_shares(o, &load, &hosts, wall_s);
    // Never on a missing figure: the rule needs both sides measured.
    let saturation = saturation(utilisation_pct, client_limit_pct);
    // Rate and think-time rounds are paced by the client by design: neither side busy is their normal
    // state, so it is recorded (`saturation`) but not raised as a flag.
    let paced = plan.rate().is_some() || matches!(o.mode, ModeKind::Latency);
    let limit = (saturation == Some(Saturation::Unsaturated)).then(|| {
        unsaturated_limit(&LimitInputs {
            threads: usage.threads.as_ref(),
            in_flight: plan.connections * o.pipeline.max(1) as usize,
            server_cpus: cpus,
            cpus_used: cpu_s.filter(|_| wall_s > 0.0).map(|cpu_s| cpu_s / wall_s),
            paced,
        })
    });
    // With CPUs shared (`--cpus shared`) the client's own threads run on the server's CPUs too: they are
    // part of the measurement, not foreign to it.
    let own_cpu_s = cpu_s.map(|s| s + if shared_cpus { load.client_cpu_s } else { 0.0 });
    // The counters are of the server's machine: the client CPUs' steal is read there only when the client
    // runs there too.
    let client_cpus: &[usize] = if client_beside_server { o.client_cpus.cpus() } else { &[] };
    let mut machine = interference(o, own_cpu_s, wall_s, stat_before.as_ref(), stat_after.as_ref(), client_cpus);
    // Over the whole round, ramp included: a listener overflows while connections are being set up.
    (machine.listen_overflows, machine.listen_drops) = listen_since(listen_before, listen_after);
    let load = crate::model::RoundLoad::from(load);
    let flags = judge(&RoundFacts {
        load: &load,
        server_probed: cpu_s.is_some(),
        saturation,
        paced,
        rate: plan.rate().map(|rate| (rate, RATE_HELD_SHARE)),
        foreign_pct: machine.foreign_pct,
        steal_pct: machine.steal_pct,
        wall_s,
        server_cpus: o.server_cpus.len(),
        ticks_per_s: ticks_per_s(),
    });
    // The server's CPUs' own counters over the window, where nothing but the server is meant to run there.
    let own_cpus = match (&stat_before, &stat_after) {
        (Some(before), Some(after)) if !shared_cpus => after.since(before, o.server_cpus.cpus()),
        _ => None,
    };
    Round {
        index,
        warmup,
        server: server_usage(plan, usage, (cpu_s, cpu_source), wall_s, utilisation_pct, load.requests, own_cpus),
        load,
        client_syscalls: client_count.and_then(|c| c.counted()).map(Into::into),
        tool_latency_ns,
        client_busy_pct,
        client_limit_pct,
        saturation: saturation.map(|s| s.name().to_string()),
        limit: limit.map(String::from),
        flags,
        hosts,
        machine,
    }
}

/// The server's CPU time over the window and where it was read: the threads' exact run time where it
/// holds the whole window; the ticks, which keep the time of threads and processes that ended inside it,
/// where it does not.
fn server_cpu_s(usage: &Usage) -> (Option<f64>, Option<CpuSource>) {
    match (usage.cpu_exact_s, usage.cpu_s) {
        (Some(exact), _) => (Some(exact), Some(CpuSource::Schedstat)),
        (None, Some(ticks)) => (Some(ticks), Some(CpuSource::Ticks)),
        (None, None) => (None, None),
    }
}

/// The server's figures of a round from its side's reading: CPU (`server_cpu_s`) and its share of the
/// window, memory, processes and threads, the balance of its workers, the cost of its threads against its
/// CPUs' own counters (`own_cpus`) and its system calls, per request of the `requests` served.
fn server_usage(
    plan: &RoundPlan,
    usage: Usage,
    (cpu_s, cpu_source): (Option<f64>, Option<CpuSource>),
    wall_s: f64,
    utilisation_pct: Option<f64>,
    requests: u64,
    own_cpus: Option<CpuTimes>,
) -> ServerUsage {
    let syscalls: Option<crate::model::SyscallCounts> = usage.syscalls.map(Into::into);
    ServerUsage {
        cpu_s,
        cpu_source,
        wall_s,
        cpus: plan.opts.server_cpus.len().max(1),
        utilisation_pct,
        cpu_us_per_request: cpu_s.filter(|_| requests > 0).map(|cpu_s| cpu_s * 1e6 / requests as f64),
        peak_rss_bytes: usage.peak_rss_bytes,
        pss_bytes: usage.pss_bytes,
        processes: usage.members.len(),
        threads: usage.threads,
        workers: crate::model::worker_balance(&usage.thread_cpu_s, plan.workers),
        cost: usage.thread_cost.and_then(|c| cost_of_threads(c, own_cpus)),
        syscalls_per_request: syscalls.as_ref().and_then(|c| SyscallsPerRequest::of(c, requests)),
        syscalls_method: usage.syscalls_method,
        syscalls_unavailable: usage.syscalls_unavailable,
        syscalls,
    }
}

/// The client's busy share of its window and its limit (`client_limit_pct`), in percent; with client
/// hosts, the most limited host's, each host judged over its own window and threads.
fn client_shares(o: &BenchOptions, load: &LoadReport, hosts: &[HostLoad], wall_s: f64) -> (Option<f64>, Option<f64>) {
    // The engine reports client CPU over its measured window; a tool's is probed over the whole run.
    let window_s = if o.tool == Tool::Builtin && load.duration_s > 0.0 { load.duration_s } else { wall_s };
    // A busy-polling client is busy by design: its share is its work, without the polls that found nothing.
    let busy_pct = (window_s > 0.0).then(|| load.client_work_s() / (window_s * load.threads.max(1) as f64) * 100.0);
    let limit_pct = if hosts.is_empty() {
        load.client_limit_pct(window_s, o.client_cpus.len())
    } else {
        hosts.iter().filter_map(|h| h.client_limit_pct).reduce(f64::max)
    };
    (busy_pct, limit_pct)
}

/// The listener's overflows and drops between two readings of the kernel's counters, where both were read.
fn listen_since(before: Option<(u64, u64)>, after: Option<(u64, u64)>) -> (Option<u64>, Option<u64>) {
    match (before, after) {
        (Some(b), Some(a)) => (Some(a.0.saturating_sub(b.0)), Some(a.1.saturating_sub(b.1))),
        _ => (None, None),
    }
}

/// Foreign time on the server's CPUs (what ran there besides the server's tree) and steal on the server's
/// and the client's CPUs, as shares of the window. Interrupt time is left out of foreign: the kernel
/// charges the server's own network interrupts to no task.
/// The share of `window_s` (CPU seconds of the server's CPUs) that something other than the server used.
/// The CPUs' busy time is the window less their idle, steal and interrupt time: a tickless kernel keeps
/// idle time exactly (to the tick), while the user and system counters are sampled at each tick, and a
/// server woken in step with the tick (by a timer-paced client) showed there up to five times the CPU
/// time it used, so that rounds at low load were flagged disturbed by nothing.
fn foreign_pct(d: &CpuTimes, own_s: f64, window_s: f64, ticks_per_s: f64) -> f64 {
    let busy_s = window_s - (d.idle + d.steal + d.interrupts) as f64 / ticks_per_s;
    ((busy_s - own_s) / window_s * 100.0).max(0.0)
}

fn interference(o: &BenchOptions, server_cpu_s: Option<f64>, wall_s: f64, before: Option<&CpuStat>, after: Option<&CpuStat>, client_cpus: &[usize]) -> RoundMachine {
    let (Some(before), Some(after)) = (before, after) else { return RoundMachine::default() };
    let tps = ticks_per_s();
    let share = |ticks: u64, cpus: usize| ticks as f64 / tps / (wall_s * cpus.max(1) as f64) * 100.0;
    let server = after.since(before, o.server_cpus.cpus());
    let client = after.since(before, client_cpus);
    let foreign_pct = match (server, server_cpu_s) {
        (Some(d), Some(own)) if wall_s > 0.0 => Some(foreign_pct(&d, own, wall_s * o.server_cpus.len().max(1) as f64, tps)),
        _ => None,
    };
    let steal_pct = match (server, client) {
        (Some(s), Some(c)) if wall_s > 0.0 => Some(share(s.steal, o.server_cpus.len()).max(share(c.steal, client_cpus.len()))),
        _ => None,
    };
    RoundMachine { foreign_pct, steal_pct, ..RoundMachine::default() }
}


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn foreign_time_is_what_idle_leaves_beyond_the_server() {
        // A 0.5 s window at 100 ticks/s: the server used 0.02 s; the sampled task counters said 0.10 s
        // (more than the window holds with the idle time), the exact idle time 0.48 s.
        let sampled = CpuTimes { user: 0, system: 10, interrupts: 0, idle: 48, steal: 0 };
        assert!(foreign_pct(&sampled, 0.02, 0.5, 100.0) < 0.5, "{}", foreign_pct(&sampled, 0.02, 0.5, 100.0));
        // A hog beside it: idle fell to 0.20 s.
        let hogged = CpuTimes { user: 20, system: 10, interrupts: 1, idle: 20, steal: 0 };
        assert!((foreign_pct(&hogged, 0.02, 0.5, 100.0) - 54.0).abs() < 1e-9);
        // Steal and interrupts are not the server's, but not another process's either.
        let stolen = CpuTimes { user: 1, system: 1, interrupts: 3, idle: 25, steal: 20 };
        assert!(foreign_pct(&stolen, 0.02, 0.5, 100.0) < 1e-9);
    }

    // Rounds without processes (`run/fakes.rs`): a load source and a server side that report what a test
    // gives them stand in for the load generator and the server, so that each flag a round raises is seen raised by
    // `run_round` from the figures that raise it, and a quiet round raises none; fake probes of the CPUs
    // raise `cpu-drift` through the same function as the probes of a real round.
    use std::path::Path;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    use crate::load::LoadReport;
    use crate::model::{Flag, Round};
    use crate::os::speed::CpuSpeed;
    use crate::run::fakes::{quiet_round, FakeLoad, FakeServer, WALL_S};
    use crate::run::machine::{MachineWatch, ServerCpus, Speeds};
    use crate::run::probed::judged_by_probes;

    /// One fake round: the client's report and the server's side as `change` leaves a quiet, server-bound
    /// round (the server busy 96% of its window, the client 40%, every connection served, nothing else on the
    /// CPUs), at `rate` when given.
    fn round(opts: &BenchOptions, rate: Option<f64>, change: impl Fn(&mut LoadReport, &mut ServerSide)) -> Round {
        let (mut load, mut side) = quiet_round(opts);
        change(&mut load, &mut side);
        let plan = RoundPlan {
            opts,
            contestant: "fake",
            scenario: "hello",
            micro: false,
            connections: 64,
            response_bytes: 100,
            workdir: Path::new("."),
            rate,
            workers: 1,
            count_syscalls: false,
            ramp_served: None,
        };
        run_round(&mut FakeServer(side), &FakeLoad::of(load), &plan, 1, false, &Arc::new(AtomicBool::new(false))).expect("a fake round runs")
    }

    #[test]
    fn a_quiet_server_bound_round_raises_no_flag() {
        let r = round(&BenchOptions::for_tests(), None, |_, _| {});
        assert_eq!(r.flags, [] as [Flag; 0]);
        assert_eq!(r.saturation.as_deref(), Some("server-bound"));
        assert_eq!(r.machine.foreign_pct, Some(0.0));
    }

    #[test]
    fn each_flag_is_raised_by_the_figures_that_raise_it() {
        let o = BenchOptions::for_tests();
        let tps = ticks_per_s();
        // The server busy for `share` of the window, its CPU idle for the rest.
        let server = |share: f64| {
            move |_: &mut LoadReport, s: &mut ServerSide| {
                s.usage = Usage { cpu_s: Some(share * WALL_S), cpu_exact_s: Some(share * WALL_S), ..Usage::default() };
                s.stat_after.as_mut().unwrap().0.get_mut(&1).unwrap().idle = ((1.0 - share) * WALL_S * tps).round() as u64;
            }
        };
        let client = |share: f64| move |l: &mut LoadReport| {
            l.client_cpu_s = share * WALL_S;
            l.thread_cpu_s = vec![share * WALL_S];
        };
        let cases: Vec<(Flag, Round)> = vec![
            (Flag::ServerUnprobed, round(&o, None, |_, s| s.usage = Usage::default())),
            (Flag::ClientBound, round(&o, None, |l, s| {
                server(0.4)(l, s);
                client(0.98)(l);
            })),
            (Flag::BothBusy, round(&o, None, |l, _| client(0.98)(l))),
            (Flag::Unsaturated, round(&o, None, |l, s| server(0.4)(l, s))),
            (Flag::Errors, round(&o, None, |l, _| l.errors.read = 3)),
            (Flag::KeepaliveLost, round(&o, None, |l, _| l.keepalive_lost = 2)),
            (Flag::ServerCloses, round(&o, None, |l, _| l.server_closes = 5)),
            (Flag::RampIncomplete, round(&o, None, |l, _| l.unserved_at_start = Some(3))),
            (Flag::Unfair, round(&o, None, |l, _| l.per_connection.as_mut().unwrap().starved = 5)),
            (Flag::RateNotHeld, round(&o, Some(200_000.0), |_, _| {})),
            // A tenth of the window stolen from the server's CPU.
            (Flag::Disturbed, round(&o, None, |_, s| s.stat_after.as_mut().unwrap().0.get_mut(&1).unwrap().steal = (0.1 * WALL_S * tps).round() as u64)),
            (Flag::Interrupted, round(&o, None, |l, _| l.interrupted = true)),
        ];
        for (flag, r) in &cases {
            assert!(r.has_flag(flag), "{flag} not raised: {:?}", r.flags);
        }
        // Each case raised its flag alone, but where one figure raises two by rule: unprobed has no saturation,
        // the paced round at a rate it did not hold is not called unsaturated.
        for (flag, r) in &cases {
            assert_eq!(r.flags, std::slice::from_ref(flag), "{flag}");
        }
        let raised: std::collections::BTreeSet<String> = cases.iter().map(|(f, _)| f.to_string()).collect();
        let judged_after: Vec<&str> = Flag::KNOWN.iter().map(Flag::name).filter(|n| !raised.contains(*n)).collect();
        assert_eq!(judged_after, ["cpu-drift"], "every flag of a round but the probes' own is covered here");
    }

    #[test]
    fn a_round_whose_probes_saw_the_cpus_pass_data_at_another_speed_has_drifted() {
        // Fake probes of the CPUs, as the run's watch judges them: five rounds at the usual cross-CPU rate,
        // then one whose probe after it found the rate at a third.
        let mut watch = MachineWatch::new(ServerCpus::Here(vec![1]), &[0]);
        let at = |cross: f64| Speeds { server: vec![speed(1)], client: vec![speed(0)], cross_per_ms: Some(cross), reused: false };
        for _ in 0..5 {
            let mut usual = round(&BenchOptions::for_tests(), None, |_, _| {});
            judged_by_probes(&mut usual, watch.judge(&at(10_000.0), &at(10_000.0)));
            assert!(!usual.has_flag(&Flag::CpuDrift), "{:?}", usual.flags);
        }
        let mut slow = round(&BenchOptions::for_tests(), None, |_, _| {});
        judged_by_probes(&mut slow, watch.judge(&at(10_000.0), &at(3_000.0)));
        assert_eq!(slow.flags, [Flag::CpuDrift]);
        assert_eq!(slow.machine.cross_cpu_per_ms, Some(6_500.0));
        assert!(slow.machine.cross_cpu_index.is_some_and(|i| (i - 0.3).abs() < 1e-9), "{:?}", slow.machine.cross_cpu_index);
    }

    fn speed(cpu: usize) -> CpuSpeed {
        CpuSpeed { cpu, user_per_ms: 1000.0, syscall_per_ms: 100.0 }
    }
}
