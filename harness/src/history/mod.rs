//! The history of runs (docs/history.md): every run recorded in a database, by default an SQLite file
//! `history.sqlite` in the results folder beside the run folders, elsewhere or nowhere with
//! `SERVERBENCH_HISTORY`; runs imported from their folders; a figure over runs and where it changed
//! (`series`, `change_points`). The tables are `model::history_schema`'s. The store is SQLite's file or a
//! PostgreSQL database that a team shares (`SERVERBENCH_HISTORY=postgres://...`), chosen once when the
//! history is opened; nothing past `History` knows which.

pub mod change_points;
mod error;
pub mod import;
mod postgres_store;
mod rows;
pub mod series;
mod sqlite_store;
mod statements;
pub mod steps;
mod store;
mod values;

use std::path::{Path, PathBuf};

pub use error::{DatabaseError, HistoryError};
pub use postgres_store::{CONNECT_TIMEOUT, PASSWORD_VAR};
pub use rows::StoredFigure;
pub use steps::{StepRead, StoredStep};
pub use store::HistoryStore;

use crate::model::verdict::Metric;
use crate::model::RunResult;

/// The variable that moves the history: a path, a PostgreSQL URL, or `off`.
pub const ENV_VAR: &str = "SERVERBENCH_HISTORY";
/// The history's file in a results folder.
pub const FILE_NAME: &str = "history.sqlite";
/// The beginnings of a setting that names a PostgreSQL database rather than a file.
const POSTGRES_SCHEMES: [&str; 2] = ["postgres://", "postgresql://"];

/// Where the history is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// `SERVERBENCH_HISTORY=off`: no run is recorded.
    Off,
    File(PathBuf),
    /// A PostgreSQL database, by its URL (`postgres://user@host/db`); its password, if any, is in it or
    /// in `PGPASSWORD`, and never shown.
    Postgres(String),
}

impl Location {
    /// `SERVERBENCH_HISTORY` when set (a path, a PostgreSQL URL, or `off`), else `history.sqlite` in
    /// `results_dir`.
    pub fn of(results_dir: &Path) -> Location {
        Location::from_setting(std::env::var_os(ENV_VAR).map(PathBuf::from), results_dir)
    }

    /// A setting (`SERVERBENCH_HISTORY` or `--db`) as a location; `results_dir`'s file when there is none.
    pub fn from_setting(setting: Option<PathBuf>, results_dir: &Path) -> Location {
        match setting {
            Some(p) if p.as_os_str() == "off" => Location::Off,
            Some(p) if POSTGRES_SCHEMES.iter().any(|s| p.to_str().is_some_and(|t| t.starts_with(s))) => Location::Postgres(p.to_string_lossy().into_owned()),
            Some(p) if !p.as_os_str().is_empty() => Location::File(p),
            _ => Location::File(results_dir.join(FILE_NAME)),
        }
    }

    /// The history as messages name it: the file, or the database without its password.
    pub fn place(&self) -> String {
        match self {
            Location::Off => "off".to_string(),
            Location::File(path) => path.display().to_string(),
            Location::Postgres(url) => postgres_store::place(url),
        }
    }
}

/// An open history: the store its location chose, SQLite's file or a PostgreSQL database.
pub struct History {
    store: Box<dyn HistoryStore>,
}

impl History {
    /// Opens the history at `location` and brings it to the current schema: a file is made when absent
    /// (not its folder); a database must exist, and its tables are made when absent.
    pub fn open(location: &Location) -> Result<History, HistoryError> {
        let store: Box<dyn HistoryStore> = match location {
            Location::Off => return Err(HistoryError::Off),
            Location::File(path) => Box::new(sqlite_store::SqliteStore::open(path)?),
            Location::Postgres(url) => Box::new(postgres_store::PostgresStore::open(url)?),
        };
        Ok(History { store })
    }

    /// Records `run`, replacing what the history held of it.
    pub fn record(&mut self, run: &RunResult) -> Result<(), HistoryError> {
        self.store.record_run(run)
    }

    /// Every figure of `metric` of the catalog runs, oldest run first.
    pub fn figures(&mut self, metric: Metric) -> Result<Vec<StoredFigure>, HistoryError> {
        self.store.figures(metric)
    }

    /// The schema version of the history.
    pub fn version(&mut self) -> Result<u32, HistoryError> {
        self.store.version()
    }

    pub fn has_run(&mut self, run_id: &str) -> Result<bool, HistoryError> {
        self.store.has_run(run_id)
    }

    /// Records a bisection's step, replacing one under the same key.
    pub fn record_step(&mut self, step: &StoredStep) -> Result<(), HistoryError> {
        self.store.record_step(step)
    }

    /// The steps recorded for `contestant`, `metric` and the bench `options`, oldest first.
    pub fn steps(&mut self, contestant: &str, metric: Metric, options: &str) -> Result<Vec<StoredStep>, HistoryError> {
        self.store.steps(contestant, metric, options)
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
        let error = self.write(|h| h.record(run))?;
        Some(format!(
            "warning: {error}; this run is not recorded in the history (record it later with `serverbench history import`, or set {ENV_VAR}=off)"
        ))
    }

    /// Records a bisection's step; the warning to show, the first time it cannot.
    pub fn record_step(&mut self, step: &StoredStep) -> Option<String> {
        let error = self.write(|h| h.record_step(step))?;
        Some(format!("warning: {error}; the bisection's steps are not recorded in the history, and an interrupted bisection starts again"))
    }

    /// The bisection steps the history holds for `contestant`, `metric` and the bench `options`; none when
    /// the history is off.
    pub fn steps(&mut self, contestant: &str, metric: Metric, options: &str) -> Result<Vec<StoredStep>, HistoryError> {
        if self.location == Location::Off {
            return Ok(Vec::new());
        }
        self.opened()?.steps(contestant, metric, options)
    }

    fn opened(&mut self) -> Result<&mut History, HistoryError> {
        let history = match self.history.take() {
            Some(h) => h,
            None => History::open(&self.location)?,
        };
        Ok(self.history.insert(history))
    }

    /// Does `write` on the history, opened at the first write; the error the first time it fails, after
    /// which nothing more is written.
    fn write(&mut self, write: impl FnOnce(&mut History) -> Result<(), HistoryError>) -> Option<HistoryError> {
        if self.failed || self.location == Location::Off {
            return None;
        }
        let error = self.opened().and_then(write).err()?;
        self.failed = true;
        self.history = None;
        Some(error)
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
        let team = "postgresql://bench:s3cret@db.example/history";
        assert_eq!(Location::from_setting(Some(team.into()), results), Location::Postgres(team.into()));
        assert_eq!(Location::from_setting(Some("postgres://db.example/h".into()), results), Location::Postgres("postgres://db.example/h".into()));
        assert_eq!(Location::Postgres(team.into()).place(), "postgres://bench@db.example:5432/history");
    }
}
