//! What the phases of a benchmark share: what they read and none changes (`Context`: the options, the run
//! folder, the person watching, the stop flag, the other hosts), the run's model with the callback that
//! keeps it on disk (`Record`), the servers being measured (`Live`), and stopping a server while keeping
//! what its stop revealed. Each phase is a type of its own file, holding the fields it reads: preparing
//! (`prepare.rs`), measuring a catalog (`measure.rs`), an A/B pair (`ab/measure.rs`).

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::catalog::Contestant;
use crate::model::{ContestantRecord, MeasurementStatus, RunResult};
use crate::remote::{ClientHosts, ServerHost};
use crate::ui::warning::Warning;
use crate::ui::Ui;

use super::options::BenchOptions;
use super::served::{LiveServer, Served};
use super::Save;

/// A server that passed verification and is being measured: the runner's own (`Served`), or a test's fake.
pub(super) struct Live<'c, S = Served> {
    pub(super) contestant: &'c Contestant,
    pub(super) server: S,
    /// Indices into `run.measurements`, per connection count and level (`levels::levels`).
    pub(super) measurements: Vec<Vec<usize>>,
    pub(super) response_bytes: u64,
    /// Set when it failed; its remaining rounds are skipped.
    pub(super) failed: bool,
    /// The `{workers}` it was started with.
    pub(super) workers: usize,
}

/// The other machines of a run: where the load comes from and where the servers run, when not here.
#[derive(Clone, Copy, Default)]
pub(super) struct Hosts<'a> {
    /// With `--client-host`: the hosts, prepared, that generate the load.
    pub(super) clients: Option<&'a ClientHosts>,
    /// With `--server-host`: the host, prepared, that builds and runs the servers.
    pub(super) server: Option<&'a ServerHost>,
}

/// What every phase of a benchmark reads and none changes.
pub(super) struct Context<'a> {
    pub(super) opts: &'a BenchOptions,
    pub(super) run_dir: &'a Path,
    pub(super) ui: &'a Ui,
    pub(super) stop: &'a Arc<AtomicBool>,
    pub(super) hosts: Hosts<'a>,
}

impl Context<'_> {
    pub(super) fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// A path of the run folder as run.json names it: relative to the folder.
    pub(super) fn relative(&self, path: &Path) -> String {
        path.strip_prefix(self.run_dir).unwrap_or(path).display().to_string()
    }
}

/// The run's model, and the callback that hands it to the exporters.
pub(super) struct Record<'a, 's> {
    pub(super) run: &'a mut RunResult,
    save: &'a mut Save<'s>,
}

impl<'a, 's> Record<'a, 's> {
    pub(super) fn new(run: &'a mut RunResult, save: &'a mut Save<'s>) -> Record<'a, 's> {
        Record { run, save }
    }

    /// Hands the model as it is now to the exporters.
    pub(super) fn save(&mut self) -> anyhow::Result<()> {
        (self.save)(self.run)
    }

    pub(super) fn contestant_mut(&mut self, name: &str) -> &mut ContestantRecord {
        self.run.contestants.iter_mut().find(|r| r.name == name).expect("every selected contestant has a record")
    }

    /// The measurements among `measurements` that had not ended, failed for `reason`.
    pub(super) fn fail(&mut self, measurements: &[usize], reason: String) {
        for &i in measurements {
            let m = &mut self.run.measurements[i];
            if matches!(m.status, MeasurementStatus::Pending | MeasurementStatus::Running) {
                m.status = MeasurementStatus::Failed;
                m.reason = Some(reason.clone());
            }
        }
    }

    /// Stops a contestant's server; what its stop revealed (a process left behind, a port still held) is
    /// said and kept among the contestant's warnings.
    pub(super) fn stop_server<S: LiveServer>(&mut self, ctx: &Context, c: &Contestant, server: S) {
        let port = server.addr().port();
        let report = match server.stop(ctx.opts.stop_grace) {
            Ok(r) => r,
            Err(e) => {
                ctx.ui.emit(Warning::NotStopped { contestant: &c.name, error: &e });
                return;
            }
        };
        let warnings = report.warnings(port);
        for w in warnings {
            ctx.ui.emit(Warning::AtStop { contestant: &c.name, warning: &w });
            let r = self.contestant_mut(&c.name);
            if !r.warnings.contains(&w) {
                r.warnings.push(w);
            }
        }
    }
}
