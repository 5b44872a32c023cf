//! What a history does, whatever database holds it: the trait each backend implements (SQLite's file,
//! PostgreSQL's server), chosen once from the setting (`History::open`), so that recording, import and
//! series do not know which.

use super::error::HistoryError;
use super::rows::StoredFigure;
use super::steps::StoredStep;
use crate::model::history_schema::{current_version, Migration, MIGRATIONS};
use crate::model::verdict::Metric;
use crate::model::RunResult;

pub trait HistoryStore: Send {
    /// The schema version the history is at.
    fn version(&mut self) -> Result<u32, HistoryError>;
    /// Records `run`, replacing whatever the history held of it, in one transaction.
    fn record_run(&mut self, run: &RunResult) -> Result<(), HistoryError>;
    /// Every figure of `metric` of the catalog runs (not A/B runs), oldest run first.
    fn figures(&mut self, metric: Metric) -> Result<Vec<StoredFigure>, HistoryError>;
    /// Whether the history holds a run of this id.
    fn has_run(&mut self, run_id: &str) -> Result<bool, HistoryError>;
    /// Records a bisection's step, replacing one under the same key.
    fn record_step(&mut self, step: &StoredStep) -> Result<(), HistoryError>;
    /// The steps recorded for `contestant`, `metric` and the bench `options`, oldest first.
    fn steps(&mut self, contestant: &str, metric: Metric, options: &str) -> Result<Vec<StoredStep>, HistoryError>;
}

/// The migrations a history at version `found` needs, oldest first; a history newer than this serverbench
/// is refused.
pub fn pending(place: &str, found: u32) -> Result<impl Iterator<Item = &'static Migration>, HistoryError> {
    if found > current_version() {
        return Err(HistoryError::Newer { place: place.to_string(), found, known: current_version() });
    }
    Ok(MIGRATIONS.iter().filter(move |m| m.version > found))
}
