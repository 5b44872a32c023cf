//! The measuring phase: per scenario, every contestant's server started and verified, then warm-up and
//! measured rounds interleaved across the live servers, each round recorded as it ends; the servers are
//! stopped when the scenario is done.

use crate::catalog::Contestant;
use crate::launch::{ServerSetup, Started};
use crate::model::{Measurement, MeasurementStatus, Round};

use crate::os::cpus::{pin_process, PinnedProcess};
use crate::ui::event::{Bar, PassKind, Phase, RoundEvent, RoundKind, ServerEvent};
use crate::ui::warning::{SavedAfter, Warning};

use super::budget::Budget;
use super::levels::{levels, set_rates, Level};
use super::options::{Rounds, SyscallCounting};
use super::probed::{Coordinates, Prober};
use super::runner::{Context, Live, Record};
use super::search::search_capacities;
use super::served::LiveServer;
use super::stand::Stand;

/// The measuring phase: what it reads, the record it keeps every round in, the probes around the rounds
/// and the order of the servers in each pass.
pub(super) struct Measuring<'m, 'a, 's> {
    pub(super) ctx: &'m Context<'a>,
    pub(super) record: &'m mut Record<'a, 's>,
    pub(super) prober: Prober<'m, 'a>,
    /// The order of the servers in each pass (seeded: `config.shuffle_seed`).
    shuffle: fastrand::Rng,
    /// The run's time budget, shared out over its loads (`--budget`).
    budget: Budget,
}

impl<'m, 'a, 's> Measuring<'m, 'a, 's> {
    /// The measuring phase of a run, its rounds read by `prober`. Its time budget counts from now, on the
    /// probes' clock: what came before (installs, builds, `--check`) is a fresh machine's alone, and a run
    /// measures as long on one as on a warm one.
    pub(super) fn new(ctx: &'m Context<'a>, record: &'m mut Record<'a, 's>, prober: Prober<'m, 'a>) -> Measuring<'m, 'a, 's> {
        let seed = record.run.config.shuffle_seed.unwrap_or_default();
        let o = ctx.opts;
        let sweep = o.workers_sweep.len().max(1);
        let loads = o.scenarios.len() * sweep * o.connections.len() * levels(o).len();
        let budget = Budget::new(prober.now(), o.budget, loads);
        Measuring { ctx, record, prober, shuffle: fastrand::Rng::with_seed(seed), budget }
    }

    /// Every scenario's servers, started by `stand`, measured.
    pub(super) fn measure<T: Stand>(&mut self, stand: &T, ready: &[&Contestant]) -> anyhow::Result<()> {
        let o = self.ctx.opts;
        // With --rounds auto the count is not known ahead: the bar counts up to max_rounds and drops what
        // a measurement did not need.
        let rounds_each = u64::from(o.warmup + (o.max_rounds + extra_rounds(o)) * levels(o).len() as u32) * o.connections.len() as u64;
        let _pinned = stand.pins_the_harness().then(|| self.pin_harness()).flatten();
        self.measure_scenarios(stand, ready, rounds_each)
    }

    /// The harness's own threads (this one, probes, log readers, the progress display) kept off the
    /// servers' CPUs while the guard lives; the speed probe alone visits them, between rounds. The
    /// process's CPUs are given back when it goes, so that what runs next in it (another benchmark, in
    /// tests) sees them all.
    pub(super) fn pin_harness(&self) -> Option<PinnedProcess> {
        let o = self.ctx.opts;
        let pinned = (!o.server_cpus.overlaps(&o.client_cpus)).then(|| pin_process(&o.client_cpus));
        if pinned.as_ref().is_some_and(|p| p.failed > 0) {
            self.ctx.ui.emit(Warning::NotPinned { client_cpus: &o.client_cpus });
        }
        pinned
    }

    fn measure_scenarios<T: Stand>(&mut self, stand: &T, ready: &[&Contestant], rounds_each: u64) -> anyhow::Result<()> {
        let o = self.ctx.opts;
        // Without a sweep, every server runs with the run's workers.
        let sweep: &[usize] = if o.workers_sweep.is_empty() { std::slice::from_ref(&o.workers) } else { &o.workers_sweep };
        let total: u64 =
            o.scenarios.iter().map(|s| ready.iter().filter(|c| c.supports(s)).count() as u64).sum::<u64>() * rounds_each * sweep.len() as u64;
        self.ctx.ui.emit(Bar::Begun { phase: Phase::Measuring, steps: total });
        for (scenario, &workers) in o.scenarios.iter().flat_map(|s| sweep.iter().map(move |w| (s, w))) {
            if self.ctx.stopped() {
                break;
            }
            let mut live = Vec::new();
            for c in ready.iter().filter(|c| c.supports(scenario)) {
                if self.ctx.stopped() {
                    self.ctx.ui.emit(Bar::Dropped(rounds_each));
                    continue;
                }
                match self.launch(stand, c, scenario, workers) {
                    Some(l) => live.push(l),
                    None => self.ctx.ui.emit(Bar::Dropped(rounds_each)),
                }
                self.record.save()?;
            }
            if !live.is_empty() {
                let workers = (!o.workers_sweep.is_empty()).then_some(workers);
                self.ctx.ui.emit(ServerEvent::AllUp { scenario, servers: live.len(), workers });
            }
            let result = self.rounds(scenario, &mut live);
            for l in live {
                self.record.stop_server(self.ctx, l.contestant, l.server);
            }
            self.record.save()?;
            result?;
        }
        Ok(())
    }

    /// Starts, waits for and verifies one server on `stand`, creating its measurements. None when it failed
    /// (the measurements say why).
    pub(super) fn launch<'c, T: Stand>(&mut self, stand: &T, c: &'c Contestant, scenario: &str, workers: usize) -> Option<Live<'c, T::Server>> {
        let o = self.ctx.opts;
        let measurements = self.new_measurements(c, scenario, workers);
        let flat: Vec<usize> = measurements.iter().flatten().copied().collect();
        self.ctx.ui.emit(ServerEvent::Starting { contestant: &c.name, scenario });
        let sweep = if o.workers_sweep.is_empty() { String::new() } else { format!(".w{workers}") };
        let log = self.ctx.run_dir.join("logs").join(format!("{}.{scenario}{sweep}.log", c.name));
        let rel = self.ctx.relative(&log);
        self.record.contestant_mut(&c.name).server_logs.push(rel.clone());
        for &i in &flat {
            self.record.run.measurements[i].server_log = Some(rel.clone());
        }
        let setup = ServerSetup {
            address: o.remote.server_address,
            cpus: &o.server_cpus,
            workers,
            start_timeout: o.start_timeout,
            timeout: o.timeout,
        };
        match stand.start(self.ctx, c, scenario, &setup, log) {
            Started::Verified(server, sample) => {
                let bytes = sample.bytes.len() as u64;
                for &i in &flat {
                    self.record.run.measurements[i].response_bytes = Some(bytes);
                }
                self.ctx.ui.emit(ServerEvent::Verified { contestant: &c.name, scenario, bytes });
                Some(Live { contestant: c, server, measurements, response_bytes: bytes, failed: false, workers })
            }
            Started::Failed(server, reason, _) => {
                self.ctx.ui.emit(ServerEvent::NotStarted { contestant: &c.name, scenario, reason: &reason });
                self.record.fail(&flat, reason);
                if let Some(server) = server {
                    self.record.stop_server(self.ctx, c, server);
                }
                None
            }
        }
    }

    /// A server's pending measurements at `workers`, one per connection count and level, added to the run:
    /// their indices in `run.measurements`, per connection count and level.
    pub(super) fn new_measurements(&mut self, c: &Contestant, scenario: &str, workers: usize) -> Vec<Vec<usize>> {
        let o = self.ctx.opts;
        let first = self.record.run.measurements.len();
        let levels = levels(o);
        for (&connections, &level) in o.connections.iter().flat_map(|c| levels.iter().map(move |l| (c, l))) {
            self.record.run.measurements.push(Measurement {
                contestant: c.name.clone(),
                scenario: scenario.to_string(),
                mode: level.mode(o).into(),
                connections,
                pipeline: o.pipeline,
                tool: o.tool.name().into(),
                status: MeasurementStatus::Pending,
                reason: None,
                response_bytes: None,
                server_log: None,
                rounds: Vec::new(),
                counting_rounds: Vec::new(),
                capacity: None,
                rate_rps: if level == Level::Asked { o.rate_per_s.filter(|_| o.mode == super::options::ModeKind::Rate) } else { None },
                load_fraction: if let Level::Share(f) = level { Some(f) } else { None },
                workers: (!o.workers_sweep.is_empty()).then_some(workers),
                ended_by_budget: false,
                profile: None,
            });
        }
        let flat: Vec<usize> = (first..self.record.run.measurements.len()).collect();
        flat.chunks(levels.len()).map(<[usize]>::to_vec).collect()
    }

    /// Warm-up and measured rounds for every connection count and level, interleaved across the live servers
    /// in a new random order each pass (so that a slow stretch of the machine does not always fall on the
    /// same neighbours). Only the server whose round it is runs: the others are frozen. Measured passes go
    /// on until every measurement has its rounds (`Rounds`), or `max_rounds`. Warm-ups run at the first
    /// level (with `--rate auto`, throughput).
    pub(super) fn rounds<S: LiveServer>(&mut self, scenario: &str, live: &mut [Live<S>]) -> anyhow::Result<()> {
        let o = self.ctx.opts;
        for l in live.iter_mut() {
            l.server.freeze();
        }
        let levels = levels(o);
        for (ci, &connections) in o.connections.iter().enumerate() {
            for r in 0..o.warmup {
                if !self.pass(scenario, live, Slot { ci, li: 0, connections }, Pass::Warmup(r + 1)) {
                    return Ok(());
                }
            }
            for (li, &level) in levels.iter().enumerate() {
                let slot = Slot { ci, li, connections };
                if let Level::Share(share) = level {
                    set_rates(self.record.run, live, ci, li, share);
                }
                self.budget.begin_load(self.prober.now());
                for pass in 1..=o.max_rounds {
                    self.look_at_the_budget(live, slot);
                    if !(0..live.len()).any(|k| self.needs_round(&live[k], slot)) {
                        break;
                    }
                    if !self.pass(scenario, live, slot, Pass::Measured(pass)) {
                        return Ok(());
                    }
                }
                for _ in 0..extra_rounds(o) * COUNTING_ATTEMPTS {
                    if !(0..live.len()).any(|k| self.needs_counting_round(&live[k], slot)) {
                        break;
                    }
                    if !self.pass(scenario, live, slot, Pass::Counting) {
                        return Ok(());
                    }
                }
                if o.profile && !self.profile(scenario, live, slot) {
                    return Ok(());
                }
                for l in live.iter().filter(|l| !l.failed) {
                    let mi = l.measurements[ci][li];
                    if self.budget.spent() && self.wants_round(l, mi) {
                        self.record.run.measurements[mi].ended_by_budget = true;
                    }
                    let m = &self.record.run.measurements[mi];
                    let taken = m.rounds.iter().filter(|r| !r.warmup).count() + m.counting_rounds.len();
                    let left = u64::from(o.max_rounds + extra_rounds(o)).saturating_sub(taken as u64);
                    self.ctx.ui.emit(Bar::Dropped(left));
                    let m = &mut self.record.run.measurements[mi];
                    if m.status == MeasurementStatus::Running || m.status == MeasurementStatus::Pending {
                        m.status = MeasurementStatus::Measured;
                        self.ctx.ui.emit(RoundEvent::Measured(m));
                    }
                }
            }
            search_capacities(self.ctx, self.record, &mut self.prober, scenario, live, ci, connections);
            self.record.save()?;
        }
        Ok(())
    }

    /// `--profile`: the profiled round of each live server that took measured rounds at `slot` (counted or
    /// left out as disturbed: the server answered), in the servers' order (`run/profiling.rs`). It draws
    /// nothing from the passes' shuffle, so that the passes after it run their servers in the order they
    /// would without `--profile`; one round a server compares with nothing of another's. False when the
    /// run was interrupted.
    fn profile<S: LiveServer>(&mut self, scenario: &str, live: &mut [Live<S>], slot: Slot) -> bool {
        let order: Vec<usize> = (0..live.len()).filter(|&k| !live[k].failed).collect();
        for k in order {
            if self.ctx.stopped() {
                return false;
            }
            let mi = live[k].measurements[slot.ci][slot.li];
            if !self.record.run.measurements[mi].rounds.iter().any(|r| !r.warmup) {
                continue;
            }
            self.ctx.ui.emit(RoundEvent::Begun { contestant: &live[k].contestant.name, scenario, connections: slot.connections, kind: RoundKind::Profiled, index: 1 });
            let profile = super::profiling::profiled_round(self.ctx, &mut self.prober, scenario, &mut live[k], slot.connections, &self.record.run.measurements[mi]);
            self.ctx.ui.emit(RoundEvent::Profiled { contestant: &live[k].contestant.name, profile: &profile });
            self.record.run.measurements[mi].profile = Some(profile);
        }
        !self.ctx.stopped()
    }

    /// Whether a live server's measurement at `slot` still needs a measured round: neither the server nor
    /// the measurement failed (a share without a capacity), it lacks its rounds, and either the budget
    /// holds another pass or it lacks the fewest rounds that end a measurement.
    fn needs_round<S>(&self, l: &Live<S>, slot: Slot) -> bool {
        let mi = l.measurements[slot.ci][slot.li];
        self.wants_round(l, mi) && (!self.budget.spent() || self.below_fewest(mi))
    }

    /// Whether a measurement lacks its rounds, the budget aside.
    fn wants_round<S>(&self, l: &Live<S>, mi: usize) -> bool {
        !l.failed && self.record.run.measurements[mi].status != MeasurementStatus::Failed && !self.has_its_rounds(mi)
    }

    fn below_fewest(&self, mi: usize) -> bool {
        (self.record.run.measurements[mi].measured_rounds().count() as u32) < self.ctx.opts.rounds.minimum()
    }

    /// Before a measured pass at `slot`: whether it, and the counting rounds after it, end within the
    /// load's share of the budget at the cost of a round so far; the first time they do not, says so, with
    /// how many measurements stop short of their target.
    fn look_at_the_budget<S>(&mut self, live: &[Live<S>], slot: Slot) {
        let wanting: Vec<usize> = live.iter().filter(|l| self.wants_round(l, l.measurements[slot.ci][slot.li])).map(|l| l.measurements[slot.ci][slot.li]).collect();
        let counting = extra_rounds(self.ctx.opts) as usize * live.iter().filter(|l| !l.failed).count();
        if let (Some(budget), true) = (self.ctx.opts.budget, self.budget.spends(self.prober.now(), wanting.len() + counting)) {
            let below_fewest = wanting.iter().filter(|&&mi| self.below_fewest(mi)).count();
            self.ctx.ui.emit(RoundEvent::BudgetSpent { budget, short: wanting.len(), below_fewest });
        }
    }

    /// Whether a measurement has the rounds it needs: with a fixed count, that many that count; with auto,
    /// at least 6 that count and a median interval within the target. Either way `max_rounds` ends it.
    fn has_its_rounds(&self, mi: usize) -> bool {
        let o = self.ctx.opts;
        let m = &self.record.run.measurements[mi];
        if m.rounds.iter().filter(|r| !r.warmup).count() as u32 >= o.max_rounds {
            return true;
        }
        let used = m.measured_rounds().count() as u32;
        match o.rounds {
            Rounds::Fixed(n) => used >= n,
            Rounds::Auto { target_ci_pct } => {
                used >= o.rounds.minimum()
                    && m.requests_per_s().and_then(|s| s.ci95_relative_pct()).is_some_and(|p| p <= target_ci_pct)
            }
        }
    }

    /// Whether a live server's measurement at `slot` needs its extra round counting system calls: it has
    /// measured rounds, neither it nor the server failed, and it has no counting round yet that was not
    /// disturbed (the counts per CPU would hold what else ran there).
    pub(super) fn needs_counting_round<S>(&self, l: &Live<S>, slot: Slot) -> bool {
        let m = &self.record.run.measurements[l.measurements[slot.ci][slot.li]];
        !l.failed
            && m.status != MeasurementStatus::Failed
            && m.rounds.iter().any(|r| !r.warmup)
            && !m.counting_rounds.iter().any(Round::counts)
            && m.counting_rounds.len() < COUNTING_ATTEMPTS as usize
    }

    /// One pass: a round of each live server that still needs one, in a new random order. False when the
    /// run was interrupted.
    pub(super) fn pass<S: LiveServer>(&mut self, scenario: &str, live: &mut [Live<S>], slot: Slot, pass: Pass) -> bool {
        let mut order: Vec<usize> = (0..live.len())
            .filter(|&k| match pass {
                Pass::Warmup(_) => !live[k].failed,
                Pass::Measured(_) => self.needs_round(&live[k], slot),
                Pass::Counting => self.needs_counting_round(&live[k], slot),
            })
            .collect();
        self.shuffle.shuffle(&mut order);
        if !order.is_empty() && !self.ctx.stopped() {
            let kind = match pass {
                Pass::Warmup(number) => PassKind::Warmup { number, of: self.ctx.opts.warmup },
                Pass::Measured(number) => PassKind::Measured { number, at_most: self.ctx.opts.max_rounds },
                Pass::Counting => PassKind::Counting,
            };
            let load = self.record.run.measurements[live[order[0]].measurements[slot.ci][slot.li]].load_label();
            self.ctx.ui.emit(RoundEvent::PassBegun { scenario, connections: slot.connections, load: &load, pass: kind, servers: order.len() });
        }
        let measured = order.first().filter(|_| matches!(pass, Pass::Measured(_))).map(|&k| live[k].measurements[slot.ci][slot.li]);
        let (began, rounds) = (self.prober.now(), order.len());
        for k in order {
            if self.ctx.stopped() {
                break;
            }
            self.one_round(scenario, &mut live[k], slot, pass);
        }
        // The model is refitted once a pass, before the stop rule looks at the adjusted rounds: every
        // server's rounds at the slot are one load, and refitting after each round cost a tenth of a
        // second a round once a run had several hundred.
        if let Some(mi) = measured {
            crate::model::machine_model::refit_load_of(self.record.run, mi);
        }
        // Saved once a pass, not after every round: writing run.json and the summaries took a tenth of a
        // round's time once a run had a few hundred rounds. An interrupt still saves what was measured.
        if self.record.save().is_err() {
            self.ctx.ui.emit(Warning::NotSaved(SavedAfter::Pass));
        }
        self.budget.passed(rounds, self.prober.now().saturating_duration_since(began));
        !self.ctx.stopped()
    }

    /// One round of one server, recorded with its flags, or the server failed.
    pub(super) fn one_round<S: LiveServer>(&mut self, scenario: &str, l: &mut Live<S>, slot: Slot, pass: Pass) {
        let Slot { ci, li, connections } = slot;
        let mi = l.measurements[ci][li];
        let (warmup, kind) = match pass {
            Pass::Warmup(_) => (true, RoundKind::Warmup),
            Pass::Measured(_) => (false, RoundKind::Measured),
            Pass::Counting => (false, RoundKind::Counting),
        };
        let m = &self.record.run.measurements[mi];
        let index = match pass {
            Pass::Counting => m.counting_rounds.len(),
            _ => m.rounds.iter().filter(|r| r.warmup == warmup).count(),
        } as u32
            + 1;
        let count_syscalls = match self.ctx.opts.syscall_counts {
            SyscallCounting::Rounds => true,
            SyscallCounting::Extra => matches!(pass, Pass::Counting),
            SyscallCounting::Off => false,
        };
        self.ctx.ui.emit(RoundEvent::Begun { contestant: &l.contestant.name, scenario, connections, kind, index });
        self.record.run.measurements[mi].status = MeasurementStatus::Running;
        // A share of the capacity has its own rate; any other round takes the run's mode as asked.
        let rate = self.record.run.measurements[mi].load_fraction.and(self.record.run.measurements[mi].rate_rps);
        let ramp_served = served_before_stall(&self.record.run.measurements[mi], connections);
        let outcome = self.prober.round(l, Coordinates { scenario, connections, rate, index, warmup, count_syscalls, ramp_served });
        self.ctx.ui.emit(Bar::Step);
        let died = l.server.exited();
        let failure = match (outcome, died) {
            (_, Some(status)) => Some(l.server.explain(&format!(
                "the server exited ({status}) during {kind} {index} with {connections} connections"
            ))),
            (Ok(round), None) if round.load.interrupted => {
                // A round cut short by Ctrl-C is not a round; what finished before stays.
                self.record.run.measurements[mi].status = MeasurementStatus::Interrupted;
                None
            }
            (Err(_), None) if self.ctx.stopped() => {
                // The engine gave up on the interrupt before it had anything to report.
                self.record.run.measurements[mi].status = MeasurementStatus::Interrupted;
                None
            }
            (Err(e), None) => Some(format!("the load could not run in {kind} {index}: {e:#}")),
            (Ok(round), None) => {
                self.ctx.ui.emit(RoundEvent::Done { contestant: &l.contestant.name, scenario, connections, round: &round });
                let m = &mut self.record.run.measurements[mi];
                match pass {
                    Pass::Counting => m.counting_rounds.push(round),
                    _ => m.rounds.push(round),
                }
                None
            }
        };
        if let Some(reason) = failure {
            self.ctx.ui.emit(RoundEvent::Failed { contestant: &l.contestant.name, scenario, reason: &reason });
            l.failed = true;
            let o = self.ctx.opts;
            let done: u64 = l.measurements[ci..].iter().flatten().map(|&m| (self.record.run.measurements[m].rounds.len() + self.record.run.measurements[m].counting_rounds.len()) as u64).sum();
            let left = (o.connections.len() - ci) as u64 * u64::from(o.warmup + (o.max_rounds + extra_rounds(o)) * l.measurements[ci].len() as u32);
            self.ctx.ui.emit(Bar::Dropped(left.saturating_sub(done)));
            let ms: Vec<usize> = l.measurements.iter().flatten().copied().collect();
            self.record.fail(&ms, reason);
        }
    }
}

/// The measurement a pass is for: connection count `ci` (whose value is `connections`), level `li`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Slot {
    pub(super) ci: usize,
    pub(super) li: usize,
    pub(super) connections: usize,
}

/// Which kind of pass a round belongs to, with its 1-based number.
#[derive(Debug, Clone, Copy)]
pub(super) enum Pass {
    Warmup(u32),
    Measured(u32),
    /// After the measured passes: the extra round that counts system calls (`SyscallCounting::Extra`).
    Counting,
}

/// Counting rounds a measurement may take when they come out disturbed.
pub(super) const COUNTING_ATTEMPTS: u32 = 3;

/// Rounds per measurement beyond the measured ones: the extra round counting system calls, if any.
pub(super) fn extra_rounds(o: &super::options::BenchOptions) -> u32 {
    u32::from(o.syscall_counts == SyscallCounting::Extra)
}

/// The most connections a round of this measurement so far (warm-ups and counting rounds included) had
/// served when its ramp ended with some unserved: what a stalled ramp will serve again.
fn served_before_stall(m: &crate::model::Measurement, connections: usize) -> Option<usize> {
    m.rounds
        .iter()
        .chain(&m.counting_rounds)
        .filter_map(|r| r.load.unserved_at_start.filter(|u| *u > 0))
        .map(|u| connections.saturating_sub(u as usize))
        .filter(|served| *served > 0)
        .max()
}
