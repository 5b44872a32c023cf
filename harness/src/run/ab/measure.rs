//! An A/B run as the runner does it: both versions built (each with its own catalog's shared files and
//! build stamps), with `--check` checked, started and verified like any contestant; then warm-up rounds
//! and the pairs of `pairs.rs`, each round between the usual probes and the wait for quiet server CPUs
//! (`run/measure.rs`), the other version frozen. Unlike a catalog run, which reports a failed contestant and
//! goes on, an A/B run without one of its versions has no answer: a version that does not build, start,
//! pass its checks or answer correctly, or that fails in a round, ends the run with an error that names it.

use std::path::{Path, PathBuf};

use crate::catalog::build::Builder;
use crate::model::ab::{value, AbPair, AbRun, Bands, Side};
use crate::model::verdict::Metric;
use crate::model::MeasurementStatus;
use crate::stats::paired::PairedRatio;
use crate::ui::event::{Bar, PairEvent, Phase, RoundEvent, RoundKind, ServerEvent};
use crate::ui::warning::{SavedAfter, Warning};

use crate::run::conformance::Suite;
use crate::run::measure::{extra_rounds, Pass, Slot, COUNTING_ATTEMPTS};
use crate::run::prepare::Readiness;
use crate::run::conformance::check;
use crate::run::measure::Measuring;
use crate::run::prepare::Preparing;
use crate::run::profiling::profiled_pairs;
use crate::run::runner::{Context, Live, Record};
use crate::run::served::LiveServer;
use crate::run::stand::{Real, Stand};

use super::pairs::{first_of, run_pairs, Measured, PairPlan, PairedRounds};
use super::sides::{Sides, Version};

/// A version that ended the run: which, what it could not do, why, and its log.
fn failed(v: &Version, side: Side, what: &str, reason: &str, log: Option<&Path>) -> anyhow::Error {
    let which = match (side, v.record.commit.is_some()) {
        (Side::A, true) => "A (the baseline)".to_string(),
        _ => side.letter().to_string(),
    };
    let log = log.map(|l| format!("\nlog: {}", l.display())).unwrap_or_default();
    anyhow::anyhow!("{which}, {} from {}, {what}: {}{log}", v.record.name, v.record.from, reason.trim_end())
}

/// The whole A/B run after the run's record exists: builds, checks, servers, rounds, pairs.
pub(in crate::run) fn ab<'a>(ctx: &Context<'a>, record: &mut Record<'a, '_>, sides: &Sides, suite: Option<&dyn Suite>) -> anyhow::Result<()> {
    let o = ctx.opts;
    record.run.ab = Some(AbRun { a: sides.a.record.clone(), b: sides.b.record.clone(), pairs: Vec::new(), ended: None, profile_change: None });
    ctx.ui.emit(Bar::Begun { phase: Phase::Building, steps: 2 });
    for side in [Side::A, Side::B] {
        let v = sides.side(side);
        let mut builder = Builder::new(v.stamps.clone(), ctx.run_dir.join("logs"), o.rebuild);
        match (Preparing { ctx, record: &mut *record, catalog: &v.catalog, stand: &Real }).prepare_one(&v.contestant, &mut builder)? {
            Readiness::Ready => ctx.ui.emit(Bar::Step),
            Readiness::Interrupted => return Ok(()),
            Readiness::NotReady(reason, log) => return Err(failed(v, side, "could not be made ready", &reason, log.as_deref())),
        }
    }
    if let Some(suite) = suite.filter(|_| o.check && !ctx.stopped()) {
        check(ctx, record, suite, &[&sides.a.contestant, &sides.b.contestant])?;
        for side in [Side::A, Side::B] {
            let v = sides.side(side);
            let Some(checks) = record.run.checks.iter().find(|c| c.contestant == v.contestant.name) else { continue };
            let failing: Vec<String> = checks.results.iter().filter(|r| r.status == crate::model::checks::Status::Fail).map(|r| format!("{} {}", r.scenario, r.check)).collect();
            if !failing.is_empty() {
                let logs = ctx.run_dir.join("logs").join("checks");
                return Err(failed(v, side, "failed its conformance checks", &failing.join(", "), Some(&logs)));
            }
        }
    }
    if ctx.stopped() {
        return Ok(());
    }
    // An A/B run has no time budget.
    let mut m = Measuring::new(ctx, record, Real.prober(ctx));
    let _pinned = m.pin_harness();
    let scenario = o.scenarios.first().cloned().unwrap_or_default();
    let mut live: Vec<Live> = Vec::new();
    for side in [Side::A, Side::B] {
        let v = sides.side(side);
        match m.launch(&Real, &v.contestant, &scenario, o.workers) {
            Some(l) => live.push(l),
            None => {
                let gone = m.record.run.measurements.iter().rev().find(|g| g.contestant == v.contestant.name);
                let reason = gone.and_then(|g| g.reason.clone()).unwrap_or_else(|| "interrupted".into());
                let log = gone.and_then(|g| g.server_log.as_ref()).map(|l| ctx.run_dir.join(l));
                for l in live.drain(..) {
                    m.record.stop_server(m.ctx, l.contestant, l.server);
                }
                m.record.save()?;
                if m.ctx.stopped() {
                    return Ok(());
                }
                return Err(failed(v, side, "could not be started and verified", &reason, log.as_deref()));
            }
        }
        m.record.save()?;
    }
    m.ctx.ui.emit(ServerEvent::AbUp { scenario: &scenario, a: &sides.a.contestant.name, b: &sides.b.contestant.name });
    let result = ab_rounds(&mut m, &scenario, &mut live, sides);
    for l in live {
        m.record.stop_server(m.ctx, l.contestant, l.server);
    }
    m.record.save()?;
    result
}

/// Warm-up rounds (A and B in turn), the pairs, and the extra rounds counting system calls.
fn ab_rounds(m: &mut Measuring, scenario: &str, live: &mut [Live], sides: &Sides) -> anyhow::Result<()> {
    let o = m.ctx.opts;
    let slot = Slot { ci: 0, li: 0, connections: o.connections.first().copied().unwrap_or(1) };
    for l in live.iter_mut() {
        l.server.freeze();
    }
    m.ctx.ui.emit(Bar::Begun { phase: Phase::Measuring, steps: 2 * u64::from(o.warmup + o.max_rounds + extra_rounds(o)) });
    for r in 1..=o.warmup {
        for side in [first_of(r), first_of(r).other()] {
            if m.ctx.stopped() {
                return Ok(());
            }
            let k = index(side);
            m.one_round(scenario, &mut live[k], slot, Pass::Warmup(r));
            if live[k].failed {
                return Err(round_failed(m, &live[k], sides, side));
            }
        }
    }
    let ab = o.ab.as_ref();
    let bands = ab.map_or_else(Bands::default, |ab| ab.bands);
    let decide = ab.and_then(|ab| ab.fail_on.as_ref()).map_or_else(|| vec![Metric::RequestsPerS], |f| f.metrics.clone());
    let plan = PairPlan { rounds: o.rounds, max_pairs: o.max_rounds, bands, decide };
    let started = std::time::Instant::now();
    let outcome = run_pairs(&plan, &mut PairRounds { m: &mut *m, live, scenario, slot, sides })?;
    if let Some(ab) = m.record.run.ab.as_mut() {
        ab.ended = Some(outcome.ended.word().into());
    }
    let taken = 2 * outcome.pairs.len() as u64;
    m.ctx.ui.emit(Bar::Dropped((2 * u64::from(o.max_rounds)).saturating_sub(taken)));
    for _ in 0..extra_rounds(o) * COUNTING_ATTEMPTS {
        if !(0..live.len()).any(|k| m.needs_counting_round(&live[k], slot)) || !m.pass(scenario, live, slot, Pass::Counting) {
            break;
        }
    }
    if o.profile && !m.ctx.stopped() {
        profile(m, scenario, live, slot);
    }
    if m.ctx.stopped() {
        return Ok(());
    }
    for l in live.iter() {
        let mi = l.measurements[0][0];
        let measurement = &mut m.record.run.measurements[mi];
        if matches!(measurement.status, MeasurementStatus::Running | MeasurementStatus::Pending) {
            measurement.status = MeasurementStatus::Measured;
        }
        m.ctx.ui.emit(RoundEvent::Measured(&m.record.run.measurements[mi]));
    }
    m.ctx.ui.emit(PairEvent::Ended {
        pairs: outcome.pairs.len(),
        counted: outcome.counted.len(),
        took: started.elapsed(),
        ended: outcome.ended.word(),
        requests_per_s: outcome.requests_per_s.as_ref(),
    });
    Ok(())
}

/// `--profile`: the two versions' profiled rounds, each side's profile in its measurement and B's against
/// A's in the run's A/B record (`run/profiling.rs`).
fn profile(m: &mut Measuring, scenario: &str, live: &mut [Live], slot: Slot) {
    for l in live.iter() {
        m.ctx.ui.emit(RoundEvent::Begun { contestant: &l.contestant.name, scenario, connections: slot.connections, kind: RoundKind::Profiled, index: 1 });
    }
    let [ia, ib] = [0, 1].map(|k| live[k].measurements[0][0]);
    let measurements = &m.record.run.measurements;
    let (profiles, change) = profiled_pairs(m.ctx, &mut m.prober, scenario, live, slot.connections, [&measurements[ia], &measurements[ib]]);
    for (l, profile) in live.iter().zip(profiles) {
        m.ctx.ui.emit(RoundEvent::Profiled { contestant: &l.contestant.name, profile: &profile });
        m.record.run.measurements[l.measurements[0][0]].profile = Some(profile);
    }
    if let Some(ab) = m.record.run.ab.as_mut() {
        ab.profile_change = change;
    }
}

/// Live servers are in the order A, B.
fn index(side: Side) -> usize {
    match side {
        Side::A => 0,
        Side::B => 1,
    }
}

/// The error of a version that failed in a round (its measurement says why).
fn round_failed(measuring: &Measuring, l: &Live, sides: &Sides, side: Side) -> anyhow::Error {
    let m = &measuring.record.run.measurements[l.measurements[0][0]];
    let log: Option<PathBuf> = m.server_log.as_ref().map(|p| measuring.ctx.run_dir.join(p));
    failed(sides.side(side), side, "failed in a round", m.reason.as_deref().unwrap_or("it failed"), log.as_deref())
}

/// The real rounds of the two live servers, for `run_pairs`.
struct PairRounds<'r, 'm, 'a, 's, 'c> {
    m: &'r mut Measuring<'m, 'a, 's>,
    live: &'r mut [Live<'c>],
    scenario: &'r str,
    slot: Slot,
    sides: &'r Sides,
}

impl PairedRounds for PairRounds<'_, '_, '_, '_, '_> {
    fn round(&mut self, side: Side, pair: u32) -> anyhow::Result<Option<Measured>> {
        if self.m.ctx.stopped() {
            return Ok(None);
        }
        let k = index(side);
        let mi = self.live[k].measurements[0][0];
        let before = self.m.record.run.measurements[mi].rounds.len();
        self.m.one_round(self.scenario, &mut self.live[k], self.slot, Pass::Measured(pair));
        if self.live[k].failed {
            return Err(round_failed(self.m, &self.live[k], self.sides, side));
        }
        let m = &self.m.record.run.measurements[mi];
        match m.rounds.last().filter(|_| m.rounds.len() > before) {
            Some(r) => Ok(Some(Measured { index: r.index, figures: Metric::ALL.map(|metric| value(metric, r)), counts: r.counts() })),
            None => Ok(None),
        }
    }

    fn paired(&mut self, pair: &AbPair, counts: bool, requests_per_s: Option<&PairedRatio>) {
        let runner = &mut *self.m;
        if let Some(ab) = runner.record.run.ab.as_mut() {
            ab.pairs.push(*pair);
        }
        runner.ctx.ui.emit(PairEvent::Paired { pair, counts, requests_per_s });
        // Saved every few pairs: writing every file after each round costs a share of a round.
        if pair.index.is_multiple_of(10) && runner.record.save().is_err() {
            runner.ctx.ui.emit(Warning::NotSaved(SavedAfter::Pair));
        }
    }
}
