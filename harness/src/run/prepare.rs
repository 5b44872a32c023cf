//! The first phase of a benchmark: each selected contestant's dependencies and build, recorded as they
//! finish; only contestants that are ready go on.

use crate::catalog::build::{BuildResult, Builder};
use crate::catalog::requires::System;
use crate::catalog::Contestant;
use crate::launch::{make_ready, stamp_dir, version, Prepared};
use crate::model::ContestantStatus;

use super::runner::Runner;

impl Runner<'_, '_> {
    /// Dependencies and builds; returns the contestants that are ready to run.
    pub(super) fn prepare<'c>(&mut self, selected: &[&'c Contestant]) -> anyhow::Result<Vec<&'c Contestant>> {
        let sys = System::detect();
        let logs = self.run_dir.join("logs");
        let mut builder = Builder::new(stamp_dir(&self.opts.out_dir), logs.clone(), self.opts.rebuild);
        let mut ready = Vec::new();
        self.ui.start(selected.len() as u64, "building");
        for c in selected {
            if self.stopped() {
                break;
            }
            self.ui.status(format!("preparing {}", c.name));
            let wanted = self.opts.scenarios.iter().any(|s| c.supports(s));
            let prepared = if wanted {
                make_ready(c, self.catalog, &mut builder, sys, self.opts.install, &logs, self.ui, self.stop)?
            } else {
                Prepared::Skipped(not_answered(c, &self.opts.scenarios))
            };
            let version = match &prepared {
                Prepared::Ready(_) => version(c, self.opts.workers),
                _ => None,
            };
            let build_log = match &prepared {
                Prepared::Ready(o) | Prepared::Failed(_, o) => Some(self.relative(&o.log)),
                _ => None,
            };
            let r = self.record_mut(&c.name);
            r.build_log = build_log;
            match prepared {
                Prepared::Interrupted => break,
                Prepared::Skipped(reason) => {
                    r.status = ContestantStatus::Skipped;
                    r.reason = Some(reason);
                }
                Prepared::Failed(reason, _) => {
                    r.status = ContestantStatus::Failed;
                    r.reason = Some(reason);
                }
                Prepared::Ready(outcome) => {
                    r.status = ContestantStatus::Built;
                    r.build_cached = outcome.result == BuildResult::Cached;
                    r.build_s = outcome.seconds;
                    r.version = version;
                    ready.push(*c);
                }
            }
            (self.save)(self.run)?;
            self.ui.step();
        }
        Ok(ready)
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
