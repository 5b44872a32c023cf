//! Rounds without processes: a load source and a server side that report what a test gives them stand in
//! for the load generator and the server, so that each flag a round raises is seen raised by `run_round`
//! from the figures that raise it, and a quiet round raises none; fake probes of the CPUs raise
//! `cpu-drift` through the same function as the probes of a real round.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::launch::probe::Usage;
use crate::launch::round_watch::ServerSide;
use crate::load::report::ConnectionSpread;
use crate::load::{Edge, LoadReport, WindowWatch};
use crate::model::{Flag, Round};
use crate::os::cpustat::{ticks_per_s, CpuStat, CpuTimes};
use crate::os::speed::CpuSpeed;

use super::client_syscalls::ClientCount;
use super::load_source::{Driven, LoadSource};
use super::machine::{MachineWatch, ServerCpus, Speeds};
use super::options::BenchOptions;
use super::probed::judged_by_probes;
use super::round_plan::RoundPlan;
use super::rounds::run_round;
use super::served::{NotCounted, RoundMarks, RoundServer};

/// The window of every fake round, in seconds.
const WALL_S: f64 = 0.5;

/// A load source that marks the window's edges, as the engine does, and reports what it was given.
struct FakeLoad(LoadReport);

impl LoadSource for FakeLoad {
    fn here(&self) -> bool {
        true
    }

    fn drive(&self, _: SocketAddr, _: &RoundPlan, watch: WindowWatch, _: Option<&ClientCount>, _: &Arc<AtomicBool>) -> anyhow::Result<Driven> {
        watch(Edge::Open);
        watch(Edge::Close);
        Ok(Driven { report: self.0.clone(), tool_latency_ns: None, hosts: Vec::new() })
    }
}

/// A server whose side of the round is what the test gives it.
struct FakeServer(ServerSide);

struct NoMarks;

impl RoundMarks for NoMarks {
    fn marks(&self) -> WindowWatch {
        Arc::new(|_| {})
    }
}

impl RoundServer for FakeServer {
    type Probe = NoMarks;

    fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], 9))
    }

    fn is_here(&self) -> bool {
        true
    }

    fn watch_round(&mut self, _: Result<Vec<usize>, NotCounted>) -> anyhow::Result<NoMarks> {
        Ok(NoMarks)
    }

    fn end_round(&mut self, _: NoMarks) -> anyhow::Result<ServerSide> {
        Ok(self.0.clone())
    }
}

/// One fake round: the client's report and the server's side as `change` leaves a quiet, server-bound
/// round (the server busy 96% of its window, the client 40%, every connection served, nothing else on the
/// CPUs), at `rate` when given.
fn round(opts: &BenchOptions, rate: Option<f64>, change: impl Fn(&mut LoadReport, &mut ServerSide)) -> Round {
    let tps = ticks_per_s();
    let mut load = LoadReport::empty(1, 64);
    load.requests = 50_000;
    load.duration_s = WALL_S;
    load.client_cpu_s = 0.4 * WALL_S;
    load.thread_cpu_s = vec![0.4 * WALL_S];
    load.thread_poll_s = vec![0.0];
    load.connections_opened = 64;
    load.unserved_at_start = Some(0);
    load.per_connection = Some(ConnectionSpread { min: 700, p1: 700, median: 780, max: 860, starved: 0, jain: Some(0.99) });
    let server_cpu_s = 0.96 * WALL_S;
    // The server's CPUs idle for what the server left of the window; the client's for what it left.
    let cpus = |idle_s: f64, cpus: &[usize]| -> HashMap<usize, CpuTimes> {
        cpus.iter().map(|&c| (c, CpuTimes { idle: (idle_s * tps).round() as u64, ..CpuTimes::default() })).collect()
    };
    let before: HashMap<usize, CpuTimes> = opts.server_cpus.cpus().iter().chain(opts.client_cpus.cpus()).map(|&c| (c, CpuTimes::default())).collect();
    let mut after = cpus(WALL_S - 0.4 * WALL_S, opts.client_cpus.cpus());
    after.extend(cpus(WALL_S - server_cpu_s, opts.server_cpus.cpus()));
    let mut side = ServerSide {
        usage: Usage { cpu_s: Some(server_cpu_s), cpu_exact_s: Some(server_cpu_s), ..Usage::default() },
        wall_s: WALL_S,
        stat_before: Some(CpuStat(before)),
        stat_after: Some(CpuStat(after)),
        listen_before: Some((0, 0)),
        listen_after: Some((0, 0)),
    };
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
    run_round(&mut FakeServer(side), &FakeLoad(load), &plan, 1, false, &Arc::new(AtomicBool::new(false))).expect("a fake round runs")
}

fn options() -> BenchOptions {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    crate::cli::bench::BenchArgs::parse(&["-d", "500ms", "--server-cpus", "1", "--client-cpus", "0"]).unwrap().options(root, Vec::new()).unwrap()
}

#[test]
fn a_quiet_server_bound_round_raises_no_flag() {
    let r = round(&options(), None, |_, _| {});
    assert_eq!(r.flags, [] as [Flag; 0]);
    assert_eq!(r.saturation.as_deref(), Some("server-bound"));
    assert_eq!(r.machine.foreign_pct, Some(0.0));
}

#[test]
fn each_flag_is_raised_by_the_figures_that_raise_it() {
    let o = options();
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
        let mut usual = round(&options(), None, |_, _| {});
        judged_by_probes(&mut usual, watch.judge(&at(10_000.0), &at(10_000.0)));
        assert!(!usual.has_flag(&Flag::CpuDrift), "{:?}", usual.flags);
    }
    let mut slow = round(&options(), None, |_, _| {});
    judged_by_probes(&mut slow, watch.judge(&at(10_000.0), &at(3_000.0)));
    assert_eq!(slow.flags, [Flag::CpuDrift]);
    assert_eq!(slow.machine.cross_cpu_per_ms, Some(6_500.0));
    assert!(slow.machine.cross_cpu_index.is_some_and(|i| (i - 0.3).abs() < 1e-9), "{:?}", slow.machine.cross_cpu_index);
}

fn speed(cpu: usize) -> CpuSpeed {
    CpuSpeed { cpu, user_per_ms: 1000.0, syscall_per_ms: 100.0 }
}
