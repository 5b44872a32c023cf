//! Stand-ins for what a round touches, so that rounds, whole passes of them and whole benchmarks run in
//! tests with no process and no probe: a load source that reports what it is given, a server whose side of
//! the round is given, probes of the CPUs that read a given series, and a stand of them all
//! (`FakeStand`) on which nothing is built. A round of them goes through the same code as a real round
//! (`rounds::run_round`, `Prober`, `MachineWatch`).

use std::cell::Cell;
use std::collections::HashMap;
use std::rc::Rc;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::catalog::build::{BuildOutcome, BuildResult, Builder};
use crate::catalog::{Catalog, Contestant};
use crate::launch::probe::Usage;
use crate::launch::server::StopReport;
use crate::launch::verify::Sample;
use crate::launch::{Prepared, ServerSetup, Started};
use crate::launch::round_watch::ServerSide;
use crate::load::report::ConnectionSpread;
use crate::load::{Edge, LoadReport, WindowWatch};
use crate::os::cpustat::{ticks_per_s, CpuStat, CpuTimes};
use crate::os::speed::CpuSpeed;

use super::client_syscalls::ClientCount;
use super::load_source::{Driven, LoadSource};
use super::machine::{CpuProbes, MachineWatch, Speeds, PROBE_REUSE};
use super::options::BenchOptions;
use super::probed::Prober;
use super::round_plan::RoundPlan;
use super::runner::Context;
use super::served::{LiveServer, NotCounted, RoundMarks, RoundServer};
use super::stand::Stand;

/// The window of every fake round, in seconds.
pub(super) const WALL_S: f64 = 0.5;

/// A quiet, server-bound round as the client and the server report it: 50,000 requests in `WALL_S`, the
/// server busy 96% of its window, the client 40%, every connection served, nothing else on the CPUs of
/// `opts`.
pub(super) fn quiet_round(opts: &BenchOptions) -> (LoadReport, ServerSide) {
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
    let side = ServerSide {
        usage: Usage { cpu_s: Some(server_cpu_s), cpu_exact_s: Some(server_cpu_s), ..Usage::default() },
        wall_s: WALL_S,
        stat_before: Some(CpuStat(before)),
        stat_after: Some(CpuStat(after)),
        listen_before: Some((0, 0)),
        listen_after: Some((0, 0)),
    };
    (load, side)
}

/// A load source that marks the window's edges, as the engine does, and reports what it was given: the
/// reports in turn, one a round.
pub(super) struct FakeLoad {
    reports: Vec<LoadReport>,
    driven: Cell<usize>,
}

impl FakeLoad {
    /// The same report every round.
    pub(super) fn of(report: LoadReport) -> FakeLoad {
        FakeLoad::cycling(vec![report])
    }

    /// `reports` in turn, from the first again after the last.
    pub(super) fn cycling(reports: Vec<LoadReport>) -> FakeLoad {
        FakeLoad { reports, driven: Cell::new(0) }
    }
}

impl LoadSource for FakeLoad {
    fn here(&self) -> bool {
        true
    }

    fn drive(&self, _: SocketAddr, _: &RoundPlan, watch: WindowWatch, _: Option<&ClientCount>, _: &Arc<AtomicBool>) -> anyhow::Result<Driven> {
        watch(Edge::Open);
        watch(Edge::Close);
        let n = self.driven.get();
        self.driven.set(n + 1);
        Ok(Driven { report: self.reports[n % self.reports.len()].clone(), tool_latency_ns: None, hosts: Vec::new() })
    }
}

/// A server whose side of every round is the one given; it never exits.
pub(super) struct FakeServer(pub(super) ServerSide);

pub(super) struct NoMarks;

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

impl LiveServer for FakeServer {
    fn freeze(&mut self) {}

    fn thaw(&self) {}

    fn exited(&mut self) -> Option<String> {
        None
    }

    fn explain(&self, what: &str) -> String {
        what.to_string()
    }

    fn stop(self, _: Duration) -> anyhow::Result<StopReport> {
        Ok(StopReport::default())
    }
}

/// The fakes' clock: it moves only as they do (a probe, a wait for quiet CPUs, a build), so that what a run
/// on them does at a given moment depends on what it did before, not on how long the harness took. Its
/// copies (the stand's, the probes') move together.
#[derive(Clone)]
pub(super) struct FakeClock {
    began: Instant,
    passed: Rc<Cell<Duration>>,
}

impl FakeClock {
    fn new() -> FakeClock {
        FakeClock { began: Instant::now(), passed: Rc::new(Cell::new(Duration::ZERO)) }
    }

    fn pass(&self, d: Duration) {
        self.passed.set(self.passed.get() + d);
    }

    fn now(&self) -> Instant {
        self.began + self.passed.get()
    }
}

/// Probes of a server CPU and a client CPU that read the cross-CPU rates of `cross_per_ms` in turn, one a
/// probe, and the CPUs' loops at one speed, on the fakes' clock: a probe takes `PROBE_S`, a wait for quiet
/// CPUs `QUIET_WAIT` (longer than `PROBE_REUSE`, so that no round takes the probe after the round before
/// it). Which probe a round reads, and when the rounds began, then depend on the order of the rounds alone.
pub(super) struct FakeProbes {
    pub(super) server_cpu: usize,
    pub(super) client_cpu: usize,
    pub(super) cross_per_ms: Vec<f64>,
    taken: Cell<usize>,
    clock: FakeClock,
}

/// How long a fake probe takes on the fakes' clock.
const PROBE_S: Duration = Duration::from_millis(20);
/// How long a fake wait for quiet CPUs takes on the fakes' clock: a round's window and a little more.
const QUIET_WAIT: Duration = Duration::from_millis(600);
const _: () = assert!(QUIET_WAIT.as_millis() > PROBE_REUSE.as_millis(), "a round never takes the probe after the round before it");

impl FakeProbes {
    pub(super) fn new(server_cpu: usize, client_cpu: usize, cross_per_ms: Vec<f64>, clock: FakeClock) -> FakeProbes {
        FakeProbes { server_cpu, client_cpu, cross_per_ms, taken: Cell::new(0), clock }
    }
}

impl CpuProbes for FakeProbes {
    fn probe(&self) -> Speeds {
        let n = self.taken.get();
        self.taken.set(n + 1);
        self.clock.pass(PROBE_S);
        let speed = |cpu| CpuSpeed { cpu, user_per_ms: 1000.0, syscall_per_ms: 100.0 };
        Speeds {
            server: vec![speed(self.server_cpu)],
            client: vec![speed(self.client_cpu)],
            cross_per_ms: Some(self.cross_per_ms[n % self.cross_per_ms.len()]),
            reused: false,
        }
    }

    fn wait_quiet(&self) -> Option<f64> {
        self.clock.pass(QUIET_WAIT);
        Some(0.0)
    }

    fn now(&self) -> Instant {
        self.clock.now()
    }
}

/// A stand of fakes: every contestant ready after `build` on the fakes' clock (its build cached, no version
/// reported), every server a `FakeServer` of `side` that answers `RESPONSE_BYTES`, the load `reports` in
/// turn, the probes' cross-CPU rates `CROSS_PER_MS` in turn, the harness left where it runs, and the
/// servers' order seeded.
pub(super) struct FakeStand {
    pub(super) reports: Vec<LoadReport>,
    pub(super) side: ServerSide,
    pub(super) build: Duration,
    pub(super) clock: FakeClock,
}

impl FakeStand {
    /// The stand of `reports` and `side`, builds taking no time.
    pub(super) fn new(reports: Vec<LoadReport>, side: ServerSide) -> FakeStand {
        FakeStand { reports, side, build: Duration::ZERO, clock: FakeClock::new() }
    }
}

/// Cross-CPU rates of a machine whose regime moves, one a probe in turn.
const CROSS_PER_MS: [f64; 7] = [10_000.0, 3_000.0, 11_000.0, 9_500.0, 2_800.0, 12_500.0, 10_500.0];

/// The bytes of a fake server's answer as its verification read them.
const RESPONSE_BYTES: usize = 100;

/// The seed of the servers' order on the fakes.
const SEED: u64 = 7;

impl Stand for FakeStand {
    type Server = FakeServer;

    fn make_ready(&self, ctx: &Context, _: &Catalog, _: &mut Builder, c: &Contestant) -> anyhow::Result<(Prepared, Option<String>)> {
        let log: PathBuf = ctx.run_dir.join("logs").join(format!("{}.build.log", c.name));
        self.clock.pass(self.build);
        Ok((Prepared::Ready(BuildOutcome { result: BuildResult::Cached, log, seconds: self.build.as_secs_f64() }), None))
    }

    fn start(&self, _: &Context, _: &Contestant, _: &str, _: &ServerSetup, _: PathBuf) -> Started<FakeServer> {
        Started::Verified(FakeServer(self.side.clone()), Sample { bytes: vec![b'x'; RESPONSE_BYTES] })
    }

    fn prober<'p, 'a>(&self, ctx: &'p Context<'a>) -> Prober<'p, 'a> {
        let o = ctx.opts;
        let probes = FakeProbes::new(o.server_cpus.cpus()[0], o.client_cpus.cpus()[0], CROSS_PER_MS.to_vec(), self.clock.clone());
        Prober::with(ctx, MachineWatch::with_probes(Box::new(probes)), Box::new(FakeLoad::cycling(self.reports.clone())))
    }

    fn pins_the_harness(&self) -> bool {
        false
    }

    fn fixed_seed(&self) -> Option<u64> {
        Some(SEED)
    }
}

/// Every number to nine significant digits: the drift factor reads the rounds near in time, and the last
/// bit of a sum moves with which ones those are.
pub(super) fn rounded(v: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Number(n) if n.is_f64() => {
            let x = n.as_f64().unwrap();
            serde_json::json!(format!("{x:.8e}"))
        }
        Value::Array(a) => Value::Array(a.into_iter().map(rounded).collect()),
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, rounded(v))).collect()),
        v => v,
    }
}
