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

use crate::run::conformance::Suite;
use crate::run::measure::{extra_rounds, Pass, Slot, COUNTING_ATTEMPTS};
use crate::run::prepare::Readiness;
use crate::run::progress::measurement_line;
use crate::run::runner::{Live, Runner};

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

impl Runner<'_, '_> {
    /// The whole A/B run after the run's record exists: builds, checks, servers, rounds, pairs.
    pub(in crate::run) fn ab(&mut self, sides: &Sides, suite: Option<&dyn Suite>) -> anyhow::Result<()> {
        let o = self.opts;
        self.run.ab = Some(AbRun { a: sides.a.record.clone(), b: sides.b.record.clone(), pairs: Vec::new(), ended: None });
        self.ui.start(2, "building");
        for side in [Side::A, Side::B] {
            let v = sides.side(side);
            let mut builder = Builder::new(v.stamps.clone(), self.run_dir.join("logs"), o.rebuild);
            match self.prepare_one(&v.contestant, &v.catalog, &mut builder)? {
                Readiness::Ready => self.ui.step(),
                Readiness::Interrupted => return Ok(()),
                Readiness::NotReady(reason, log) => return Err(failed(v, side, "could not be made ready", &reason, log.as_deref())),
            }
        }
        if let Some(suite) = suite.filter(|_| o.check && !self.stopped()) {
            self.check(suite, &[&sides.a.contestant, &sides.b.contestant])?;
            for side in [Side::A, Side::B] {
                let v = sides.side(side);
                let Some(checks) = self.run.checks.iter().find(|c| c.contestant == v.contestant.name) else { continue };
                let failing: Vec<String> = checks.results.iter().filter(|r| r.status == crate::model::checks::Status::Fail).map(|r| format!("{} {}", r.scenario, r.check)).collect();
                if !failing.is_empty() {
                    let logs = self.run_dir.join("logs").join("checks");
                    return Err(failed(v, side, "failed its conformance checks", &failing.join(", "), Some(&logs)));
                }
            }
        }
        if self.stopped() {
            return Ok(());
        }
        let _pinned = self.pin_harness();
        let scenario = o.scenarios.first().cloned().unwrap_or_default();
        let mut live: Vec<Live> = Vec::new();
        for side in [Side::A, Side::B] {
            let v = sides.side(side);
            match self.launch(&v.contestant, &scenario, o.workers) {
                Some(l) => live.push(l),
                None => {
                    let m = self.run.measurements.iter().rev().find(|m| m.contestant == v.contestant.name);
                    let reason = m.and_then(|m| m.reason.clone()).unwrap_or_else(|| "interrupted".into());
                    let log = m.and_then(|m| m.server_log.as_ref()).map(|l| self.run_dir.join(l));
                    for l in live.drain(..) {
                        self.stop_server(l.contestant, l.server);
                    }
                    (self.save)(self.run)?;
                    if self.stopped() {
                        return Ok(());
                    }
                    return Err(failed(v, side, "could not be started and verified", &reason, log.as_deref()));
                }
            }
            (self.save)(self.run)?;
        }
        self.ui.line(&format!("{scenario}: A ({}) and B ({}) started and verified", sides.a.contestant.name, sides.b.contestant.name));
        let result = self.ab_rounds(&scenario, &mut live, sides);
        for l in live {
            self.stop_server(l.contestant, l.server);
        }
        (self.save)(self.run)?;
        result
    }

    /// Warm-up rounds (A and B in turn), the pairs, and the extra rounds counting system calls.
    fn ab_rounds(&mut self, scenario: &str, live: &mut [Live], sides: &Sides) -> anyhow::Result<()> {
        let o = self.opts;
        let slot = Slot { ci: 0, li: 0, connections: o.connections.first().copied().unwrap_or(1) };
        for l in live.iter_mut() {
            l.server.freeze();
        }
        self.ui.start(2 * u64::from(o.warmup + o.max_rounds + extra_rounds(o)), "measuring");
        for r in 1..=o.warmup {
            for side in [first_of(r), first_of(r).other()] {
                if self.stopped() {
                    return Ok(());
                }
                let k = index(side);
                self.one_round(scenario, &mut live[k], slot, Pass::Warmup(r));
                if live[k].failed {
                    return Err(round_failed(self, &live[k], sides, side));
                }
            }
        }
        let ab = o.ab.as_ref();
        let bands = ab.map_or_else(Bands::default, |ab| ab.bands);
        let decide = ab.and_then(|ab| ab.fail_on.as_ref()).map_or_else(|| vec![Metric::RequestsPerS], |f| f.metrics.clone());
        let plan = PairPlan { rounds: o.rounds, max_pairs: o.max_rounds, bands, decide };
        let started = std::time::Instant::now();
        let outcome = run_pairs(&plan, &mut Rounds { runner: self, live, scenario, slot, sides })?;
        if let Some(ab) = self.run.ab.as_mut() {
            ab.ended = Some(outcome.ended.word().into());
        }
        let taken = 2 * outcome.pairs.len() as u64;
        self.ui.drop_steps((2 * u64::from(o.max_rounds)).saturating_sub(taken));
        for _ in 0..extra_rounds(o) * COUNTING_ATTEMPTS {
            if !(0..live.len()).any(|k| self.needs_counting_round(&live[k], slot)) || !self.pass(scenario, live, slot, Pass::Counting) {
                break;
            }
        }
        if self.stopped() {
            return Ok(());
        }
        for l in live.iter() {
            let mi = l.measurements[0][0];
            let m = &mut self.run.measurements[mi];
            if matches!(m.status, MeasurementStatus::Running | MeasurementStatus::Pending) {
                m.status = MeasurementStatus::Measured;
            }
            self.ui.line(&measurement_line(&self.run.measurements[mi]));
        }
        let reached = outcome.requests_per_s.and_then(|r| {
            let (lo, hi) = r.ci95?;
            let resolution = r.ci95_half_width_pct().map_or(String::new(), |w| format!(" (±{w:.1}%)"));
            Some(format!("B/A of req/s {:.4}, 95% CI {lo:.4} to {hi:.4}{resolution}", r.ratio))
        });
        let secs = started.elapsed().as_secs();
        self.ui.line(&format!(
            "{} pairs ({} count) in {} min {:02} s, ended: {}; {}",
            outcome.pairs.len(),
            outcome.counted.len(),
            secs / 60,
            secs % 60,
            outcome.ended.word(),
            reached.unwrap_or_else(|| "no interval (fewer than 6 pairs count)".into())
        ));
        Ok(())
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
fn round_failed(runner: &Runner, l: &Live, sides: &Sides, side: Side) -> anyhow::Error {
    let m = &runner.run.measurements[l.measurements[0][0]];
    let log: Option<PathBuf> = m.server_log.as_ref().map(|p| runner.run_dir.join(p));
    failed(sides.side(side), side, "failed in a round", m.reason.as_deref().unwrap_or("it failed"), log.as_deref())
}

/// The real rounds of the two live servers, for `run_pairs`.
struct Rounds<'r, 'a, 's, 'c> {
    runner: &'r mut Runner<'a, 's>,
    live: &'r mut [Live<'c>],
    scenario: &'r str,
    slot: Slot,
    sides: &'r Sides,
}

impl PairedRounds for Rounds<'_, '_, '_, '_> {
    fn round(&mut self, side: Side, pair: u32) -> anyhow::Result<Option<Measured>> {
        if self.runner.stopped() {
            return Ok(None);
        }
        let k = index(side);
        let mi = self.live[k].measurements[0][0];
        let before = self.runner.run.measurements[mi].rounds.len();
        self.runner.one_round(self.scenario, &mut self.live[k], self.slot, Pass::Measured(pair));
        if self.live[k].failed {
            return Err(round_failed(self.runner, &self.live[k], self.sides, side));
        }
        let m = &self.runner.run.measurements[mi];
        match m.rounds.last().filter(|_| m.rounds.len() > before) {
            Some(r) => Ok(Some(Measured { index: r.index, figures: Metric::ALL.map(|metric| value(metric, r)), counts: r.counts() })),
            None => Ok(None),
        }
    }

    fn paired(&mut self, pair: &AbPair, counts: bool, requests_per_s: Option<&PairedRatio>) {
        let runner = &mut *self.runner;
        if let Some(ab) = runner.run.ab.as_mut() {
            ab.pairs.push(*pair);
        }
        let so_far = match requests_per_s {
            Some(PairedRatio { ratio, ci95: Some((lo, hi)), pairs, .. }) => format!("B/A {ratio:.4} (95% CI {lo:.4} to {hi:.4}) over {pairs} pairs"),
            Some(r) => format!("B/A {:.4} over {} pairs", r.ratio, r.pairs),
            None => "no estimate yet".into(),
        };
        let line = format!("pair {}{}: req/s {so_far}", pair.index, if counts { "" } else { " (left out: a round was disturbed)" });
        runner.ui.status(line.clone());
        if pair.index.is_multiple_of(20) {
            runner.ui.line(&line);
        } else {
            runner.ui.detail(&line);
        }
        // Saved every few pairs: writing every file after each round costs a share of a round.
        if pair.index.is_multiple_of(10) && (runner.save)(runner.run).is_err() {
            runner.ui.warn("could not save the results after a pair");
        }
    }
}
