//! The SQLite file of a history: opened in WAL mode with a busy timeout (a benchmark and a reader of
//! the history may hold it at once), brought to the current schema, and a run's rows replaced as a whole
//! in one transaction.

use std::path::Path;
use std::time::Duration;

use rusqlite::types::ToSqlOutput;
use rusqlite::{params_from_iter, Connection};

use super::error::{DatabaseError, HistoryError};
use super::rows::{MeasurementRow, RunRow, StoredFigure};
use super::steps::StoredStep;
use super::statements::{CLEAR_VERSION, DELETE_RUN, HAS_RUN, INSERT_FIGURE, INSERT_MEASUREMENT, INSERT_RUN, RECORD_STEP, SELECT_FIGURES, SELECT_STEPS, SELECT_VERSION, SET_VERSION};
use super::store::{pending, HistoryStore};
use super::values::{Columns, Value};
use crate::model::history_schema::{Dialect, VERSION_TABLE};
use crate::model::verdict::Metric;
use crate::model::RunResult;

/// How long a write waits for another writer before it gives up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(2);

pub struct SqliteStore {
    /// The file, as messages name it.
    place: String,
    connection: Connection,
}

impl SqliteStore {
    /// Opens the file at `path`, making it when absent (its folder must exist), and migrates it.
    pub fn open(path: &Path) -> Result<SqliteStore, HistoryError> {
        let place = path.display().to_string();
        let opened = |source: rusqlite::Error| HistoryError::Open { place: place.clone(), source: source.into() };
        let connection = Connection::open(path).map_err(opened)?;
        connection.busy_timeout(BUSY_TIMEOUT).map_err(opened)?;
        connection.pragma_update(None, "journal_mode", "WAL").map_err(opened)?;
        connection.pragma_update(None, "foreign_keys", true).map_err(opened)?;
        let mut store = SqliteStore { place, connection };
        store.migrate()?;
        Ok(store)
    }

    fn read_error(&self) -> impl Fn(rusqlite::Error) -> HistoryError + '_ {
        |source| HistoryError::Read { place: self.place.clone(), source: source.into() }
    }

    /// Applies each migration newer than the file, each in a transaction of its own with its version.
    fn migrate(&mut self) -> Result<(), HistoryError> {
        let found = self.version()?;
        for m in pending(&self.place, found)? {
            let failed = |source: rusqlite::Error| HistoryError::Migrate { place: self.place.clone(), version: m.version, source: source.into() };
            let tx = self.connection.transaction().map_err(failed)?;
            tx.execute_batch(m.sql(Dialect::Sqlite)).map_err(failed)?;
            tx.execute(CLEAR_VERSION, []).map_err(failed)?;
            tx.execute(SET_VERSION, [m.version]).map_err(failed)?;
            tx.commit().map_err(failed)?;
        }
        Ok(())
    }
}

impl HistoryStore for SqliteStore {
    fn version(&mut self) -> Result<u32, HistoryError> {
        self.connection.execute(VERSION_TABLE, []).map_err(self.read_error())?;
        let version: Option<u32> = self.connection.query_row(SELECT_VERSION, [], |r| r.get(0)).map_err(self.read_error())?;
        Ok(version.unwrap_or(0))
    }

    fn record_run(&mut self, run: &RunResult) -> Result<(), HistoryError> {
        let failed = |source: rusqlite::Error| HistoryError::Write { place: self.place.clone(), run_id: run.run_id.clone(), source: DatabaseError::from(source) };
        let tx = self.connection.transaction().map_err(failed)?;
        let written = (|| -> rusqlite::Result<()> {
            tx.execute(DELETE_RUN, [&run.run_id])?;
            tx.execute(INSERT_RUN, params_from_iter(RunRow::of(run).values()))?;
            let mut insert_figure = tx.prepare(INSERT_FIGURE)?;
            for m in MeasurementRow::all(run) {
                let id: i64 = tx.query_row(INSERT_MEASUREMENT, params_from_iter(m.values(&run.run_id)), |r| r.get(0))?;
                for f in &m.figures {
                    insert_figure.execute(params_from_iter(f.values(id)))?;
                }
            }
            Ok(())
        })();
        written.and_then(|()| tx.commit()).map_err(failed)
    }

    fn figures(&mut self, metric: Metric) -> Result<Vec<StoredFigure>, HistoryError> {
        let mut query = self.connection.prepare(SELECT_FIGURES).map_err(self.read_error())?;
        let rows = query.query_map([metric.key()], |row| StoredFigure::read(row)).map_err(self.read_error())?;
        rows.collect::<Result<Vec<_>, _>>().map_err(self.read_error())
    }

    fn has_run(&mut self, run_id: &str) -> Result<bool, HistoryError> {
        let found: i64 = self.connection.query_row(HAS_RUN, [run_id], |r| r.get(0)).map_err(self.read_error())?;
        Ok(found > 0)
    }

    fn record_step(&mut self, step: &StoredStep) -> Result<(), HistoryError> {
        self.connection
            .execute(RECORD_STEP, params_from_iter(step.values()))
            .map(|_| ())
            .map_err(|source| HistoryError::WriteStep { place: self.place.clone(), source: source.into() })
    }

    fn steps(&mut self, contestant: &str, metric: Metric, options: &str) -> Result<Vec<StoredStep>, HistoryError> {
        let mut query = self.connection.prepare(SELECT_STEPS).map_err(self.read_error())?;
        let rows = query.query_map([contestant, metric.key(), options], |row| StoredStep::read(row)).map_err(self.read_error())?;
        let steps = rows.collect::<Result<Vec<_>, _>>().map_err(self.read_error())?;
        Ok(steps.into_iter().flatten().collect())
    }
}

impl rusqlite::ToSql for Value<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        match *self {
            Value::Text(t) => Ok(t.into()),
            Value::MaybeText(t) => Ok(t.map_or(ToSqlOutput::from(rusqlite::types::Null), ToSqlOutput::from)),
            Value::Int(i) => Ok(i.into()),
            Value::MaybeInt(i) => Ok(i.map_or(ToSqlOutput::from(rusqlite::types::Null), ToSqlOutput::from)),
            Value::Bool(b) => Ok(b.into()),
            Value::MaybeBool(b) => Ok(b.map_or(ToSqlOutput::from(rusqlite::types::Null), ToSqlOutput::from)),
            Value::Real(r) => Ok(r.into()),
            Value::MaybeReal(r) => Ok(r.map_or(ToSqlOutput::from(rusqlite::types::Null), ToSqlOutput::from)),
        }
    }
}

impl Columns for rusqlite::Row<'_> {
    type Error = rusqlite::Error;
    fn text(&self, i: usize) -> rusqlite::Result<String> {
        self.get(i)
    }
    fn maybe_text(&self, i: usize) -> rusqlite::Result<Option<String>> {
        self.get(i)
    }
    fn int(&self, i: usize) -> rusqlite::Result<i64> {
        self.get(i)
    }
    fn maybe_int(&self, i: usize) -> rusqlite::Result<Option<i64>> {
        self.get(i)
    }
    fn boolean(&self, i: usize) -> rusqlite::Result<bool> {
        self.get(i)
    }
    fn maybe_boolean(&self, i: usize) -> rusqlite::Result<Option<bool>> {
        self.get(i)
    }
    fn real(&self, i: usize) -> rusqlite::Result<f64> {
        self.get(i)
    }
    fn maybe_real(&self, i: usize) -> rusqlite::Result<Option<f64>> {
        self.get(i)
    }
}
