//! `bench --check`: the conformance suite as a phase of a benchmark, between the builds and the
//! measurements.

use crate::catalog::Contestant;
use crate::launch::ServerSetup;

use super::runner::Runner;

impl Runner<'_, '_> {
    /// `bench --check`: runs the conformance suite (all but the slow scale check) on each contestant
    /// before any measurement and records the outcome; a failed check is reported, not fatal.
    pub(super) fn check(&mut self, ready: &[&Contestant]) -> anyhow::Result<()> {
        let o = self.opts;
        let server = ServerSetup { cpus: &o.server_cpus, workers: o.workers, start_timeout: o.start_timeout, timeout: o.timeout };
        let logs = self.run_dir.join("logs").join("checks");
        std::fs::create_dir_all(&logs).map_err(|e| anyhow::anyhow!("cannot create {}: {e}", logs.display()))?;
        let mut setup = crate::check::suite::SuiteSetup::new(server, logs);
        setup.scale = None;
        for c in ready {
            if self.stopped() {
                break;
            }
            self.ui.status(format!("checking {}", c.name));
            let ui = self.ui;
            let outcome = crate::check::suite::check_contestant(c, &setup, ui, self.stop, &mut |r| {
                if r.status == crate::check::Status::Fail {
                    ui.line(&format!("{} {} {}: FAIL: {}", r.contestant, r.scenario, r.check, r.reason.lines().next().unwrap_or_default()));
                }
            });
            let total = outcome.results.len();
            self.ui.line(&format!("{}: {} of {total} checks passed", c.name, total - outcome.failed()));
            self.run.checks.push(outcome);
            (self.save)(self.run)?;
        }
        Ok(())
    }
}
