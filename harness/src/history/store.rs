//! The SQLite file of a history: opened in WAL mode with a busy timeout (a benchmark and a reader of
//! the history may hold it at once), brought to the current schema, and a run's rows replaced as a whole
//! in one transaction.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension};

use super::error::HistoryError;
use super::rows::{MeasurementRow, Point, RunRow, StoredFigure};
use crate::model::history_schema::{current_version, MIGRATIONS, VERSION_TABLE};
use crate::model::verdict::Metric;
use crate::model::RunResult;

/// How long a write waits for another writer before it gives up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(2);

pub struct SqliteStore {
    path: PathBuf,
    connection: Connection,
}

impl SqliteStore {
    /// Opens the file at `path`, making it when absent (its folder must exist), and migrates it.
    pub fn open(path: &Path) -> Result<SqliteStore, HistoryError> {
        let opened = |source| HistoryError::Open { path: path.to_path_buf(), source };
        let connection = Connection::open(path).map_err(opened)?;
        connection.busy_timeout(BUSY_TIMEOUT).map_err(opened)?;
        connection.pragma_update(None, "journal_mode", "WAL").map_err(opened)?;
        connection.pragma_update(None, "foreign_keys", true).map_err(opened)?;
        let mut store = SqliteStore { path: path.to_path_buf(), connection };
        store.migrate()?;
        Ok(store)
    }

    /// The schema version the file is at.
    pub fn version(&self) -> Result<u32, HistoryError> {
        let read = |source| HistoryError::Read { path: self.path.clone(), source };
        self.connection.execute(VERSION_TABLE, []).map_err(read)?;
        let version: Option<u32> = self.connection.query_row("SELECT MAX(version) FROM schema_version", [], |r| r.get(0)).map_err(read)?;
        Ok(version.unwrap_or(0))
    }

    /// Applies each migration newer than the file, each in a transaction of its own with its version.
    fn migrate(&mut self) -> Result<(), HistoryError> {
        let found = self.version()?;
        if found > current_version() {
            return Err(HistoryError::Newer { path: self.path.clone(), found, known: current_version() });
        }
        for m in MIGRATIONS.iter().filter(|m| m.version > found) {
            let failed = |source| HistoryError::Migrate { path: self.path.clone(), version: m.version, source };
            let tx = self.connection.transaction().map_err(failed)?;
            tx.execute_batch(m.sql).map_err(failed)?;
            tx.execute("DELETE FROM schema_version", []).map_err(failed)?;
            tx.execute("INSERT INTO schema_version (version) VALUES (?1)", [m.version]).map_err(failed)?;
            tx.commit().map_err(failed)?;
        }
        Ok(())
    }

    /// Records `run`, replacing whatever the history held of it, in one transaction.
    pub fn record(&mut self, run: &RunResult) -> Result<(), HistoryError> {
        let path = self.path.clone();
        let failed = |source| HistoryError::Write { path: path.clone(), run_id: run.run_id.clone(), source };
        let tx = self.connection.transaction().map_err(&failed)?;
        // The measurements and their figures go with the run (ON DELETE CASCADE).
        tx.execute("DELETE FROM runs WHERE run_id = ?1", [&run.run_id]).map_err(&failed)?;
        insert_run(&tx, &RunRow::of(run)).map_err(&failed)?;
        for m in MeasurementRow::all(run) {
            insert_measurement(&tx, &run.run_id, &m).map_err(&failed)?;
        }
        tx.commit().map_err(&failed)
    }

    /// Every figure of `metric` of the catalog runs (not A/B runs), oldest run first.
    pub fn figures(&self, metric: Metric) -> Result<Vec<StoredFigure>, HistoryError> {
        let read = |source| HistoryError::Read { path: self.path.clone(), source };
        let mut query = self
            .connection
            .prepare(
                "SELECT r.run_id, r.started_utc, r.catalog_commit, r.catalog_dirty, m.contestant, m.control, m.scenario, m.load,
                        m.connections, f.median, f.ci_low, f.ci_high, f.median_adjusted, m.pipeline, m.tool
                 FROM figures f JOIN measurements m ON m.id = f.measurement_id JOIN runs r ON r.run_id = m.run_id
                 WHERE f.metric = ?1 AND r.kind = 'catalog' AND m.status = 'measured'
                 ORDER BY r.started_utc, r.run_id, m.contestant",
            )
            .map_err(read)?;
        let rows = query.query_map([metric.key()], stored_figure).map_err(read)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(read)
    }

    /// Whether the history holds a run of this id.
    pub fn has_run(&self, run_id: &str) -> Result<bool, HistoryError> {
        let read = |source| HistoryError::Read { path: self.path.clone(), source };
        let found = self.connection.query_row("SELECT 1 FROM runs WHERE run_id = ?1", [run_id], |_| Ok(())).optional().map_err(read)?;
        Ok(found.is_some())
    }
}

fn insert_run(tx: &rusqlite::Transaction, r: &RunRow) -> rusqlite::Result<usize> {
    tx.execute(
        "INSERT INTO runs (run_id, started_utc, finished_utc, kind, command_line, catalog_commit, catalog_dirty, interrupted,
                           cross_cpu_per_ms, cpu_model, cores, kernel, memory_bytes, serverbench_version)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        params![
            r.run_id, r.started_utc, r.finished_utc, r.kind, r.command_line, r.catalog_commit, r.catalog_dirty, r.interrupted,
            r.cross_cpu_per_ms, r.cpu_model, r.cores, r.kernel, r.memory_bytes, r.serverbench_version
        ],
    )
}

fn insert_measurement(tx: &rusqlite::Transaction, run_id: &str, m: &MeasurementRow) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO measurements (run_id, contestant, control, scenario, mode, load, connections, pipeline, tool, status)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![run_id, m.contestant, m.control, m.scenario, m.mode, m.load, m.connections, m.pipeline, m.tool, m.status],
    )?;
    let id = tx.last_insert_rowid();
    for f in &m.figures {
        tx.execute(
            "INSERT INTO figures (measurement_id, metric, median, ci_low, ci_high, median_adjusted, rounds) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![id, f.metric.key(), f.median, f.ci95.map(|c| c.0), f.ci95.map(|c| c.1), f.median_adjusted, f.rounds],
        )?;
    }
    Ok(())
}

fn stored_figure(row: &rusqlite::Row) -> rusqlite::Result<StoredFigure> {
    let (low, high): (Option<f64>, Option<f64>) = (row.get(10)?, row.get(11)?);
    Ok(StoredFigure {
        contestant: row.get(4)?,
        control: row.get(5)?,
        scenario: row.get(6)?,
        load: row.get(7)?,
        connections: row.get(8)?,
        pipeline: row.get(13)?,
        tool: row.get(14)?,
        point: Point {
            run_id: row.get(0)?,
            started_utc: row.get(1)?,
            commit: row.get(2)?,
            dirty: row.get(3)?,
            median: row.get(9)?,
            ci95: low.zip(high),
            median_adjusted: row.get(12)?,
        },
    })
}
