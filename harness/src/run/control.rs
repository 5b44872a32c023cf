//! The run's control: the minimal hello server of harness/control, measured like a contestant so that a
//! later `compare` can tell the machine's change from a server's. It is no part of the catalog, takes no
//! place in the tables, and answers `hello` only.

use std::path::Path;

use crate::catalog::{Catalog, Contestant};
use crate::model::ContestantRecord;

use super::options::BenchOptions;
use super::record::record as contestant_record;

/// Its folder under the checkout: a manifest like a contestant's, and its source.
pub const CONTROL_DIR: &str = "harness/control";

/// Its name in every table and in run.json.
pub const CONTROL_NAME: &str = "control";

/// Why a run has no control, when it has none.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoControl {
    #[error("--no-control")]
    NotAsked,
    #[error("the run has no hello scenario, the only one the control answers")]
    NoHello,
    #[error("the servers run on a server host, whose checkout the control is not built in")]
    ServerHost,
}

/// Whether this run measures the control.
pub fn wanted(opts: &BenchOptions) -> Result<(), NoControl> {
    if !opts.control {
        Err(NoControl::NotAsked)
    } else if !opts.scenarios.iter().any(|s| s == "hello") {
        Err(NoControl::NoHello)
    } else if opts.remote.server_host.is_some() {
        Err(NoControl::ServerHost)
    } else {
        Ok(())
    }
}

/// The control's manifest, read from the checkout at `repo_root`; an error when it is missing or broken,
/// or when the catalog has a contestant of the same name (tables and run.json name rows by name).
pub fn load(repo_root: &Path, catalog: &Catalog) -> anyhow::Result<Contestant> {
    let dir = repo_root.join(CONTROL_DIR);
    let found = Catalog::discover(&dir)?;
    if let Some(e) = found.errors.first() {
        anyhow::bail!("the control's manifest in {} is broken: {e}", dir.display());
    }
    let control = found.contestants.into_iter().find(|c| c.name == CONTROL_NAME);
    let control = control.ok_or_else(|| anyhow::anyhow!("no manifest named {CONTROL_NAME} in {}; pass --no-control", dir.display()))?;
    anyhow::ensure!(
        !catalog.contestants.iter().any(|c| c.name == CONTROL_NAME),
        "a contestant of the catalog is named {CONTROL_NAME}, the name of the run's control: rename it, or pass --no-control"
    );
    Ok(control)
}

/// The control's pending record in run.json: a contestant's, marked as the run's control.
pub fn record(control: &Contestant) -> ContestantRecord {
    ContestantRecord { control: true, ..contestant_record(control) }
}
