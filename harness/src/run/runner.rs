//! A benchmark in progress: what its phases share (options, catalog, folder, the model and its save
//! callback), the servers being measured, and the bookkeeping every phase does (a contestant's record,
//! failing measurements, stopping a server and keeping what its stop revealed).

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::catalog::{Catalog, Contestant};
use crate::model::{ContestantRecord, MeasurementStatus, RunResult};
use crate::ui::Ui;

use super::machine::MachineWatch;
use super::options::BenchOptions;
use super::served::Served;
use super::Save;

/// A server that passed verification and is being measured.
pub(super) struct Live<'c> {
    pub(super) contestant: &'c Contestant,
    pub(super) server: Served,
    /// Indices into `run.measurements`, per connection count and level (`levels::levels`).
    pub(super) measurements: Vec<Vec<usize>>,
    pub(super) response_bytes: u64,
    /// Set when it failed; its remaining rounds are skipped.
    pub(super) failed: bool,
    /// The `{workers}` it was started with.
    pub(super) workers: usize,
}

/// One benchmark between its start and its end, handed from phase to phase.
pub(super) struct Runner<'a, 's> {
    pub(super) opts: &'a BenchOptions,
    pub(super) catalog: &'a Catalog,
    pub(super) run_dir: &'a Path,
    pub(super) ui: &'a Ui,
    pub(super) stop: &'a Arc<AtomicBool>,
    pub(super) run: &'a mut RunResult,
    pub(super) save: &'a mut Save<'s>,
    /// The run's speed probes, to judge each round's against.
    pub(super) machine: MachineWatch<'a>,
    /// The order of the servers in each pass (seeded: `config.shuffle_seed`).
    pub(super) shuffle: fastrand::Rng,
    /// With `--client-host`: the hosts, prepared, that generate the load.
    pub(super) hosts: Option<&'a crate::remote::ClientHosts>,
    /// With `--server-host`: the host, prepared, that builds and runs the servers.
    pub(super) server_host: Option<&'a crate::remote::ServerHost>,
}

impl<'a, 's> Runner<'a, 's> {
    pub(super) fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    pub(super) fn record_mut(&mut self, name: &str) -> &mut ContestantRecord {
        self.run.contestants.iter_mut().find(|r| r.name == name).expect("every selected contestant has a record")
    }

    pub(super) fn relative(&self, path: &Path) -> String {
        path.strip_prefix(self.run_dir).unwrap_or(path).display().to_string()
    }

    pub(super) fn fail(&mut self, measurements: &[usize], reason: String) {
        for &i in measurements {
            let m = &mut self.run.measurements[i];
            if matches!(m.status, MeasurementStatus::Pending | MeasurementStatus::Running) {
                m.status = MeasurementStatus::Failed;
                m.reason = Some(reason.clone());
            }
        }
    }

    pub(super) fn stop_server(&mut self, c: &Contestant, server: Served) {
        let port = server.port();
        let report = match server.stop(self.opts.stop_grace) {
            Ok(r) => r,
            Err(e) => {
                self.ui.warn(&format!("{}: could not be stopped: {e:#}", c.name));
                return;
            }
        };
        let warnings = report.warnings(port);
        for w in warnings {
            self.ui.warn(&format!("{}: {w}", c.name));
            let r = self.record_mut(&c.name);
            if !r.warnings.contains(&w) {
                r.warnings.push(w);
            }
        }
    }
}
