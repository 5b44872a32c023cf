//! `bench --check`: the conformance suite as a phase of a benchmark, between the builds and the
//! measurements. The suite itself is passed in by the command layer, so that the runner does not depend on
//! the checks.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use crate::catalog::Contestant;
use crate::launch::ServerSetup;
use crate::model::checks::{CheckResult, ContestantChecks, Status};
use crate::ui::event::CheckEvent;
use crate::ui::Ui;

use super::runner::{Context, Record};

/// The conformance suite `bench --check` runs on each contestant before measuring (all but the slow scale
/// check); `report` is called as each result comes in.
pub trait Suite {
    fn check(
        &self,
        c: &Contestant,
        server: ServerSetup,
        logs: PathBuf,
        ui: &Ui,
        stop: &AtomicBool,
        report: &mut dyn FnMut(&CheckResult),
    ) -> ContestantChecks;
}

/// Runs the suite on each contestant and records the outcome; a failed check is reported, not fatal.
pub(super) fn check(ctx: &Context, record: &mut Record, suite: &dyn Suite, ready: &[&Contestant]) -> anyhow::Result<()> {
    let o = ctx.opts;
    let logs = ctx.run_dir.join("logs").join("checks");
    std::fs::create_dir_all(&logs).map_err(|e| anyhow::anyhow!("cannot create {}: {e}", logs.display()))?;
    for c in ready {
        if ctx.stopped() {
            break;
        }
        ctx.ui.emit(CheckEvent::Checking { contestant: &c.name });
        let ui = ctx.ui;
        let server = ServerSetup { address: crate::launch::LOOPBACK, cpus: &o.server_cpus, workers: o.workers, start_timeout: o.start_timeout, timeout: o.timeout };
        let outcome = suite.check(c, server, logs.clone(), ui, ctx.stop, &mut |r| {
            if r.status == Status::Fail {
                ui.emit(CheckEvent::Failed(r));
            }
        });
        let total = outcome.results.len();
        ctx.ui.emit(CheckEvent::Passed { contestant: &c.name, passed: total - outcome.failed(), total });
        record.run.checks.push(outcome);
        record.save()?;
    }
    Ok(())
}
