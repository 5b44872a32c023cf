//! The first phase of a benchmark: each selected contestant's dependencies and build (as the run's stand
//! makes them: here, or by the agent on the server host, whose build log is copied here), recorded as they
//! finish; only contestants that are ready go on.

use std::path::PathBuf;

use crate::catalog::build::{BuildResult, Builder};
use crate::catalog::{Catalog, Contestant};
use crate::launch::{stamp_dir, Prepared};
use crate::model::ContestantStatus;

use crate::ui::event::{Bar, BuildEvent, Phase};

use super::runner::{Context, Record};
use super::stand::Stand;

/// How one contestant came out of `prepare_one`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Readiness {
    Ready,
    /// Skipped or failed: why, and the build (or apt) log where there is one.
    NotReady(String, Option<PathBuf>),
    Interrupted,
}

/// The preparing phase: what it reads (the context, the catalog whose shared files the builds use, the stand
/// that makes a contestant ready) and the record it keeps each contestant's outcome in.
pub(super) struct Preparing<'p, 'a, 's, T> {
    pub(super) ctx: &'p Context<'a>,
    pub(super) record: &'p mut Record<'a, 's>,
    pub(super) catalog: &'p Catalog,
    pub(super) stand: &'p T,
}

impl<T: Stand> Preparing<'_, '_, '_, T> {
    /// Dependencies and builds; returns the contestants that are ready to run.
    pub(super) fn prepare<'c>(&mut self, selected: &[&'c Contestant]) -> anyhow::Result<Vec<&'c Contestant>> {
        let mut builder = Builder::new(stamp_dir(&self.ctx.opts.out_dir), self.ctx.run_dir.join("logs"), self.ctx.opts.rebuild);
        let mut ready = Vec::new();
        self.ctx.ui.emit(Bar::Begun { phase: Phase::Building, steps: selected.len() as u64 });
        for c in selected {
            if self.ctx.stopped() {
                break;
            }
            match self.prepare_one(c, &mut builder)? {
                Readiness::Interrupted => break,
                Readiness::Ready => ready.push(*c),
                Readiness::NotReady(..) => {}
            }
            self.ctx.ui.emit(Bar::Step);
        }
        Ok(ready)
    }

    /// One contestant's dependencies and build (with the shared files of the catalog), recorded in its
    /// record and saved.
    pub(super) fn prepare_one(&mut self, c: &Contestant, builder: &mut Builder) -> anyhow::Result<Readiness> {
        self.ctx.ui.emit(BuildEvent::Preparing { contestant: &c.name });
        let wanted = self.ctx.opts.scenarios.iter().any(|s| c.supports(s));
        let (prepared, version) = if wanted {
            self.stand.make_ready(self.ctx, self.catalog, builder, c)?
        } else {
            (Prepared::Skipped(not_answered(c, &self.ctx.opts.scenarios)), None)
        };
        let build_log = match &prepared {
            Prepared::Ready(o) | Prepared::Failed(_, o) => Some(self.ctx.relative(&o.log)),
            _ => None,
        };
        let log = match &prepared {
            Prepared::Ready(o) | Prepared::Failed(_, o) => Some(o.log.clone()),
            _ => None,
        };
        let r = self.record.contestant_mut(&c.name);
        r.build_log = build_log;
        let readiness = match prepared {
            Prepared::Interrupted => Readiness::Interrupted,
            Prepared::Skipped(reason) => {
                r.status = ContestantStatus::Skipped;
                r.reason = Some(reason.clone());
                Readiness::NotReady(reason, log)
            }
            Prepared::Failed(reason, _) => {
                r.status = ContestantStatus::Failed;
                r.reason = Some(reason.clone());
                Readiness::NotReady(reason, log)
            }
            Prepared::Ready(outcome) => {
                r.status = ContestantStatus::Built;
                r.build_cached = outcome.result == BuildResult::Cached;
                r.build_s = outcome.seconds;
                r.version = version;
                Readiness::Ready
            }
        };
        if readiness != Readiness::Interrupted {
            self.record.save()?;
        }
        Ok(readiness)
    }
}

/// Why a contestant answers none of the requested scenarios: its manifest's reasons when it gives them.
fn not_answered(c: &Contestant, requested: &[String]) -> String {
    let reasons: Vec<String> =
        requested.iter().filter_map(|s| c.unsupported_scenarios.get(s).map(|why| format!("`{s}`: {why}"))).collect();
    if reasons.is_empty() {
        format!("declares none of the requested scenarios ({}); it answers {}", requested.join(", "), c.scenarios.join(", "))
    } else {
        format!("does not answer {}", reasons.join("; "))
    }
}
