//! Getting a contestant ready to run: what it needs from the system (installed with apt-get as root), its
//! build (cached by stamps shared across runs), and the version it reports.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::catalog::build::{BuildOutcome, BuildResult, Builder};
use crate::catalog::requires::{self, Readiness, System};
use crate::catalog::template::{expand, Vars};
use crate::catalog::{Catalog, Contestant};
use crate::ui::event::{BuildEvent, Built};
use crate::ui::Ui;

use super::HOST;
use crate::os::process;

const VERSION_TIMEOUT: Duration = Duration::from_secs(10);

/// Where build stamps live: next to the runs, so that every run folder shares them.
pub fn stamp_dir(out: &Path) -> PathBuf {
    out.join(".build-stamps")
}

/// How a contestant came out of its dependency check and build.
pub enum Prepared {
    Ready(BuildOutcome),
    /// It cannot run here; the reason says how to fix that.
    Skipped(String),
    /// Its build failed (the reason holds the tail of the build log), or installing its Debian packages
    /// did (the outcome's log is then the apt log).
    Failed(String, BuildOutcome),
    Interrupted,
}

/// Checks (and, as root with apt, installs) what a contestant needs, then builds it.
#[allow(clippy::too_many_arguments)]
pub fn make_ready(
    c: &Contestant,
    catalog: &Catalog,
    builder: &mut Builder,
    sys: System,
    install: bool,
    logs: &Path,
    ui: &Ui,
    stop: &AtomicBool,
) -> anyhow::Result<Prepared> {
    let missing = match requires::check(c, sys) {
        Readiness::Ready => None,
        Readiness::Missing { reason } => Some(reason),
        Readiness::Install(pkgs) if !install => Some(format!(
            "needs Debian packages {} (fix: `apt-get install -y {}`; installing was turned off)",
            pkgs.join(", "),
            pkgs.join(" ")
        )),
        Readiness::Install(pkgs) => {
            ui.emit(BuildEvent::InstallingPackages { contestant: &c.name, packages: &pkgs });
            std::fs::create_dir_all(logs)?;
            let log = logs.join(format!("{}.apt.log", c.name));
            let begun = std::time::Instant::now();
            // Installing was possible and was tried: its failure is a failure of this contestant, not a
            // machine that lacks something, so it is not reported as skipped (CI must not pass over it).
            let failed = match requires::install(&pkgs, &log) {
                Err(e) => Some(format!("installing {} failed: {e:#}", pkgs.join(" "))),
                Ok(()) => match requires::check(c, sys) {
                    Readiness::Ready => None,
                    Readiness::Missing { reason } => Some(format!("after installing {}: {reason}", pkgs.join(" "))),
                    Readiness::Install(still) => {
                        Some(format!("packages {} are still missing after apt-get install", still.join(", ")))
                    }
                },
            };
            if let Some(reason) = failed {
                ui.emit(BuildEvent::InstallFailed { contestant: &c.name, reason: &reason });
                let outcome = BuildOutcome { result: BuildResult::Failed(reason.clone()), log, seconds: begun.elapsed().as_secs_f64() };
                return Ok(Prepared::Failed(reason, outcome));
            }
            None
        }
    };
    if let Some(reason) = missing {
        ui.emit(BuildEvent::Skipped { contestant: &c.name, reason: &reason });
        return Ok(Prepared::Skipped(reason));
    }
    ui.emit(BuildEvent::Building { contestant: &c.name });
    let outcome = builder.build(c, catalog, stop)?;
    Ok(match &outcome.result {
        BuildResult::Failed(reason) => {
            ui.emit(BuildEvent::Failed { contestant: &c.name, log: &outcome.log });
            Prepared::Failed(reason.clone(), outcome)
        }
        BuildResult::Interrupted => Prepared::Interrupted,
        result => {
            let how = match result {
                BuildResult::Cached => Built::Cached,
                BuildResult::NothingToBuild => Built::NothingToBuild,
                _ => Built::In { seconds: outcome.seconds },
            };
            ui.emit(BuildEvent::Built { contestant: &c.name, how });
            Prepared::Ready(outcome)
        }
    })
}

/// What its manifest's `version` command prints, if it runs.
pub fn version(c: &Contestant, workers: usize) -> Option<String> {
    let v = c.version.as_ref()?;
    let vars = Vars { dir: &c.dir, scenario: "", host: HOST, port: 0, workers };
    process::first_line(&expand(v, &vars, true), &c.dir, VERSION_TIMEOUT)
}
