//! The history of runs (docs/history.md): every run recorded in a database, by default an SQLite file
//! `history.sqlite` in the results folder beside the run folders, elsewhere or nowhere with
//! `SERVERBENCH_HISTORY`; runs imported from their folders; a figure over runs and where it changed
//! (`series`, `change_points`). The tables are `model::history_schema`'s. SQLite is the one backend
//! today; `History` is the place where a server database such as PostgreSQL would be another variant.

pub mod change_points;
mod error;
pub mod import;
mod rows;
pub mod series;
mod store;

use std::path::{Path, PathBuf};

pub use error::HistoryError;
pub use rows::StoredFigure;

use crate::model::verdict::Metric;
use crate::model::RunResult;

/// The variable that moves the history: a path, or `off`.
pub const ENV_VAR: &str = "SERVERBENCH_HISTORY";
/// The history's file in a results folder.
pub const FILE_NAME: &str = "history.sqlite";

/// Where the history is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// `SERVERBENCH_HISTORY=off`: no run is recorded.
    Off,
    File(PathBuf),
}

impl Location {
    /// `SERVERBENCH_HISTORY` when set (a path, or `off`), else `history.sqlite` in `results_dir`.
    pub fn of(results_dir: &Path) -> Location {
        Location::from_setting(std::env::var_os(ENV_VAR).map(PathBuf::from), results_dir)
    }

    fn from_setting(setting: Option<PathBuf>, results_dir: &Path) -> Location {
        match setting {
            Some(p) if p.as_os_str() == "off" => Location::Off,
            Some(p) if !p.as_os_str().is_empty() => Location::File(p),
            _ => Location::File(results_dir.join(FILE_NAME)),
        }
    }
}

/// An open history. One backend now, SQLite; a shared database for a team would be a variant of its own.
pub enum History {
    Sqlite(store::SqliteStore),
}

impl History {
    /// Opens the history at `path`, making the file (not its folder) when absent and bringing it to the
    /// current schema.
    pub fn open(path: &Path) -> Result<History, HistoryError> {
        store::SqliteStore::open(path).map(History::Sqlite)
    }

    /// Records `run`, replacing what the history held of it.
    pub fn record(&mut self, run: &RunResult) -> Result<(), HistoryError> {
        match self {
            History::Sqlite(s) => s.record(run),
        }
    }

    /// Every figure of `metric` of the catalog runs, oldest run first.
    pub fn figures(&self, metric: Metric) -> Result<Vec<StoredFigure>, HistoryError> {
        match self {
            History::Sqlite(s) => s.figures(metric),
        }
    }

    /// The schema version of the history.
    pub fn version(&self) -> Result<u32, HistoryError> {
        match self {
            History::Sqlite(s) => s.version(),
        }
    }

    pub fn has_run(&self, run_id: &str) -> Result<bool, HistoryError> {
        match self {
            History::Sqlite(s) => s.has_run(run_id),
        }
    }
}

/// A benchmark's recording: the history opened at the first save, each save recorded, and the first
/// failure turned into one warning, after which the run is not recorded again (the benchmark neither
/// fails nor waits on a history it cannot write; `history import` records the run later).
pub struct Recorder {
    location: Location,
    history: Option<History>,
    failed: bool,
}

impl Recorder {
    pub fn new(location: Location) -> Recorder {
        Recorder { location, history: None, failed: false }
    }

    /// Records `run`; the warning to show, the first time it cannot.
    pub fn record(&mut self, run: &RunResult) -> Option<String> {
        let Location::File(path) = &self.location else { return None };
        if self.failed {
            return None;
        }
        let outcome = match &mut self.history {
            Some(h) => h.record(run),
            None => History::open(path).and_then(|mut h| h.record(run).map(|()| self.history = Some(h))),
        };
        let error = outcome.err()?;
        self.failed = true;
        self.history = None;
        Some(format!(
            "warning: {error}; this run is not recorded in the history (record it later with `serverbench history import`, or set {ENV_VAR}=off)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_setting_moves_or_turns_off_the_history() {
        let results = Path::new("/r");
        assert_eq!(Location::from_setting(None, results), Location::File(PathBuf::from("/r/history.sqlite")));
        assert_eq!(Location::from_setting(Some("off".into()), results), Location::Off);
        assert_eq!(Location::from_setting(Some("/h.db".into()), results), Location::File(PathBuf::from("/h.db")));
        assert_eq!(Location::from_setting(Some("".into()), results), Location::File(PathBuf::from("/r/history.sqlite")));
    }
}
