//! A run as the history's rows (`model::history_schema`): the run's facts, each measurement's
//! configuration and the figures of its rounds that count, and what a query reads back.

use serde::Serialize;

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
