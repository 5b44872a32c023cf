//! A run as the history's rows (`model::history_schema`): the run's facts, each measurement's
//! configuration and the figures of its rounds that count, and what a query reads back.

use serde::Serialize;

use super::values::{Columns, Value};
use crate::model::verdict::Metric;
use crate::model::{Measurement, RunResult};
use crate::stats::rounds::{median, Summary};

/// The row of `runs`.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    pub run_id: String,
    pub started_utc: String,
    pub finished_utc: Option<String>,
    /// `catalog` or `ab`.
    pub kind: &'static str,
    pub command_line: String,
    pub catalog_commit: Option<String>,
    pub catalog_dirty: Option<bool>,
    pub interrupted: bool,
    pub cross_cpu_per_ms: Option<f64>,
    pub cpu_model: String,
    pub cores: usize,
    pub kernel: String,
    pub memory_bytes: u64,
    pub serverbench_version: String,
}

/// A row of `measurements` with its rows of `figures`.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasurementRow {
    pub contestant: String,
    pub control: bool,
    pub scenario: String,
    pub mode: String,
    pub load: String,
    pub connections: usize,
    pub pipeline: u32,
    pub tool: String,
    pub status: String,
    pub figures: Vec<FigureRow>,
}

/// A row of `figures`.
#[derive(Debug, Clone, PartialEq)]
pub struct FigureRow {
    pub metric: Metric,
    pub median: f64,
    pub ci95: Option<(f64, f64)>,
    pub median_adjusted: Option<f64>,
    pub rounds: usize,
}

/// One figure of one run as a query reads it back: whose and of which configuration, and the run's point.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredFigure {
    pub contestant: String,
    pub control: bool,
    pub scenario: String,
    pub load: String,
    pub connections: usize,
    pub pipeline: u32,
    pub tool: String,
    pub point: Point,
}

/// One run's figure: the median as measured over the run's rounds that count, its 95% interval, and the
/// median at the machine model's reference state where the model gave one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    pub run_id: String,
    pub started_utc: String,
    /// The catalog's commit; absent where the run did not record it.
    pub commit: Option<String>,
    pub dirty: Option<bool>,
    pub median: f64,
    pub ci95: Option<(f64, f64)>,
    pub median_adjusted: Option<f64>,
}

impl RunRow {
    pub fn of(run: &RunResult) -> RunRow {
        let env = &run.environment;
        let cross: Vec<f64> = run.measurements.iter().flat_map(|m| m.measured_rounds()).filter_map(|r| r.machine.cross_cpu_per_ms).collect();
        RunRow {
            run_id: run.run_id.clone(),
            started_utc: run.started_utc.clone(),
            finished_utc: run.finished_utc.clone(),
            kind: if run.ab.is_some() || run.config.ab.is_some() { "ab" } else { "catalog" },
            command_line: env.command_line.join(" "),
            catalog_commit: env.catalog_revision.as_ref().map(|r| r.commit.clone()),
            catalog_dirty: env.catalog_revision.as_ref().map(|r| r.dirty),
            interrupted: run.interrupted,
            cross_cpu_per_ms: (!cross.is_empty()).then(|| median(&cross)),
            cpu_model: env.cpu_model.clone(),
            cores: env.cores,
            kernel: env.kernel.clone(),
            memory_bytes: env.memory_bytes,
            serverbench_version: env.serverbench_version.clone(),
        }
    }
}

impl MeasurementRow {
    pub fn all(run: &RunResult) -> Vec<MeasurementRow> {
        run.measurements.iter().map(|m| MeasurementRow::of(m, run.contestant(&m.contestant).is_some_and(|c| c.control))).collect()
    }

    fn of(m: &Measurement, control: bool) -> MeasurementRow {
        // The status as run.json names it.
        let status = serde_json::to_value(m.status).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
        MeasurementRow {
            contestant: m.contestant.clone(),
            control,
            scenario: m.scenario.clone(),
            mode: m.mode.clone(),
            load: m.load_label(),
            connections: m.connections,
            pipeline: m.pipeline,
            tool: m.tool.clone(),
            status,
            figures: Metric::ALL.into_iter().filter_map(|metric| FigureRow::of(m, metric)).collect(),
        }
    }
}

impl FigureRow {
    /// The figure over the rounds that count; None where no round has it.
    fn of(m: &Measurement, metric: Metric) -> Option<FigureRow> {
        let measured: Vec<f64> = m.measured_rounds().filter_map(|r| metric.as_measured(r)).collect();
        let summary = Summary::of(&measured)?;
        let adjusted_by_model = m.measured_rounds().any(|r| r.machine.machine_factors.is_some());
        let adjusted: Vec<f64> = m.measured_rounds().filter_map(|r| metric.of(r)).collect();
        Some(FigureRow {
            metric,
            median: summary.median,
            ci95: summary.ci95,
            median_adjusted: (adjusted_by_model && !adjusted.is_empty()).then(|| median(&adjusted)),
            rounds: summary.n,
        })
    }
}

impl StoredFigure {
    /// A row of `statements::SELECT_FIGURES`.
    pub fn read<R: Columns>(row: &R) -> Result<StoredFigure, R::Error> {
        let (low, high) = (row.maybe_real(10)?, row.maybe_real(11)?);
        Ok(StoredFigure {
            contestant: row.text(4)?,
            control: row.boolean(5)?,
            scenario: row.text(6)?,
            load: row.text(7)?,
            connections: usize::try_from(row.int(8)?).unwrap_or_default(),
            pipeline: u32::try_from(row.int(13)?).unwrap_or_default(),
            tool: row.text(14)?,
            point: Point {
                run_id: row.text(0)?,
                started_utc: row.text(1)?,
                commit: row.maybe_text(2)?,
                dirty: row.maybe_boolean(3)?,
                median: row.real(9)?,
                ci95: low.zip(high),
                median_adjusted: row.maybe_real(12)?,
            },
        })
    }
}

/// A count as a stored integer; no count of a run comes near 2^63.
fn int(n: impl TryInto<i64>) -> Value<'static> {
    Value::Int(n.try_into().unwrap_or(i64::MAX))
}

impl RunRow {
    /// The values of `statements::INSERT_RUN`.
    pub fn values(&self) -> Vec<Value<'_>> {
        use Value::*;
        vec![
            Text(&self.run_id),
            Text(&self.started_utc),
            MaybeText(self.finished_utc.as_deref()),
            Text(self.kind),
            Text(&self.command_line),
            MaybeText(self.catalog_commit.as_deref()),
            MaybeBool(self.catalog_dirty),
            Bool(self.interrupted),
            MaybeReal(self.cross_cpu_per_ms),
            Text(&self.cpu_model),
            int(self.cores),
            Text(&self.kernel),
            int(self.memory_bytes),
            Text(&self.serverbench_version),
        ]
    }
}

impl MeasurementRow {
    /// The values of `statements::INSERT_MEASUREMENT`.
    pub fn values<'a>(&'a self, run_id: &'a str) -> Vec<Value<'a>> {
        use Value::*;
        vec![
            Text(run_id),
            Text(&self.contestant),
            Bool(self.control),
            Text(&self.scenario),
            Text(&self.mode),
            Text(&self.load),
            int(self.connections),
            int(self.pipeline),
            Text(&self.tool),
            Text(&self.status),
        ]
    }
}

impl FigureRow {
    /// The values of `statements::INSERT_FIGURE`.
    pub fn values(&self, measurement_id: i64) -> Vec<Value<'static>> {
        use Value::*;
        vec![
            Int(measurement_id),
            Text(self.metric.key()),
            Real(self.median),
            MaybeReal(self.ci95.map(|c| c.0)),
            MaybeReal(self.ci95.map(|c| c.1)),
            MaybeReal(self.median_adjusted),
            int(self.rounds),
        ]
    }
}
