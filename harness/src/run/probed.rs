//! A round of one server between probes of the machine: its CPUs waited on until quiet and probed, the
//! server thawed, the load, the server frozen, the CPUs probed again; the round's figures then carry what
//! the probes said of it. Every round of a benchmark goes through here: measured, warm-up, counting, a
//! capacity search's and an A/B pair's; a profiled round too, but with no probe (`unprobed_round`).

use crate::model::{Flag, Round};

use super::load_source::{self, LoadSource};
use super::machine::{Judged, MachineWatch, ServerCpus};
use super::round_plan::RoundPlan;
use super::rounds;
use super::runner::{Context, Live};
use super::served::LiveServer;

/// What a probed round reads: the context, the run's probes so far, which each round is judged against,
/// and where the load comes from.
pub(super) struct Prober<'p, 'a> {
    ctx: &'p Context<'a>,
    machine: MachineWatch<'a>,
    source: Box<dyn LoadSource + 'a>,
}

impl<'p, 'a> Prober<'p, 'a> {
    /// The speed probes and the wait for quiet CPUs read the server's CPUs where it runs, and this
    /// machine's client CPUs only when the load runs here.
    pub(super) fn new(ctx: &'p Context<'a>) -> Prober<'p, 'a> {
        let o = ctx.opts;
        let server = match ctx.hosts.server {
            Some(host) => ServerCpus::There(host, o.server_cpus.cpus().to_vec()),
            None => ServerCpus::Here(o.server_cpus.cpus().to_vec()),
        };
        let client_cpus = if ctx.hosts.clients.is_some() { &[] } else { o.client_cpus.cpus() };
        Prober { ctx, machine: MachineWatch::new(server, client_cpus), source: load_source::chosen(o.tool, ctx.hosts.clients) }
    }

    /// A prober with a watch and a source of a test's own.
    #[cfg(test)]
    pub(super) fn with(ctx: &'p Context<'a>, machine: MachineWatch<'a>, source: Box<dyn LoadSource + 'a>) -> Prober<'p, 'a> {
        Prober { ctx, machine, source }
    }

    /// The instant on the clock the rounds are timed by: the machine's, or a test's fakes' own.
    pub(super) fn now(&self) -> std::time::Instant {
        self.machine.now()
    }

    /// A round of one server between probes: its CPUs waited on until quiet and probed, the server
    /// thawed, the load (open-loop at `at.rate` when given), the server frozen, the CPUs probed again.
    pub(super) fn round<S: LiveServer>(&mut self, l: &mut Live<S>, at: Coordinates) -> anyhow::Result<Round> {
        // The probes and the wait for quiet CPUs see the machine without the server: frozen, it cannot
        // slow a probe down with the tail of its own work.
        let quiet_wait_ms = self.machine.wait_quiet();
        let probing = std::time::Instant::now();
        let before = self.machine.probe_before();
        let mut probes_s = probing.elapsed().as_secs_f64();
        let started_s = self.machine.elapsed_s();
        let loading = std::time::Instant::now();
        let outcome = self.loaded(l, at);
        let round_s = loading.elapsed().as_secs_f64();
        let probing = std::time::Instant::now();
        let after = self.machine.probe_after();
        probes_s += probing.elapsed().as_secs_f64();
        let judged = self.machine.judge(&before, &after);
        let mut round = outcome?;
        round.machine.started_s = Some(started_s);
        round.machine.quiet_wait_ms = quiet_wait_ms;
        round.machine.probes_ms = Some(probes_s * 1e3);
        round.machine.round_s = Some(round_s);
        judged_by_probes(&mut round, judged);
        Ok(round)
    }

    /// A profiled round (`run/profiling.rs`): after a wait for quiet CPUs, the server thawed, the load, the
    /// server frozen, and no probe of the machine. perf samples the server's CPUs meanwhile: a probe would
    /// read them slowed by it, enter the run's history that judges the rounds that count, and stand as the
    /// next round's probe before it. The round carries no machine figures; it counts nowhere.
    pub(super) fn unprobed_round<S: LiveServer>(&mut self, scenario: &str, l: &mut Live<S>, connections: usize, rate: Option<f64>) -> anyhow::Result<Round> {
        self.machine.wait_quiet();
        let plan = Coordinates { scenario, connections, rate, index: 1, warmup: false, count_syscalls: false, ramp_served: None };
        self.loaded(l, plan)
    }

    /// The server thawed, the round's load, the server frozen again.
    fn loaded<S: LiveServer>(&self, l: &mut Live<S>, at: Coordinates) -> anyhow::Result<Round> {
        let workdir = self.ctx.run_dir.join("logs");
        l.server.thaw();
        let plan = RoundPlan {
            opts: self.ctx.opts,
            contestant: &l.contestant.name,
            scenario: at.scenario,
            micro: l.contestant.is_micro(),
            connections: at.connections,
            response_bytes: l.response_bytes,
            workdir: &workdir,
            rate: at.rate,
            workers: l.workers,
            count_syscalls: at.count_syscalls,
            ramp_served: at.ramp_served,
        };
        let outcome = rounds::run_round(&mut l.server, &*self.source, &plan, at.index, at.warmup, self.ctx.stop);
        l.server.freeze();
        outcome
    }
}

/// Where a round stands among the run's: its load (open-loop at `rate` when given) and number, whether it
/// warms up or counts system calls, and what a stalled ramp served before (`ramp_served`).
pub(super) struct Coordinates<'s> {
    pub(super) scenario: &'s str,
    pub(super) connections: usize,
    pub(super) rate: Option<f64>,
    pub(super) index: u32,
    pub(super) warmup: bool,
    pub(super) count_syscalls: bool,
    pub(super) ramp_served: Option<usize>,
}

/// What the probes around a round said of it, written into its figures; `cpu-drift` raised where they saw
/// the machine at another speed.
pub(super) fn judged_by_probes(round: &mut Round, judged: Judged) {
    if judged.drifted() {
        round.flags.push(Flag::CpuDrift);
    }
    round.machine.cpu_speed = judged.speeds;
    round.machine.speed_index = judged.speed_index;
    round.machine.cross_cpu_per_ms = judged.cross_per_ms;
    round.machine.cross_cpu_index = judged.cross_index;
}
