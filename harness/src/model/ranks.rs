//! The tables of a run (configurations measured side by side) and each row's range of places in its
//! table, by req/s and by server CPU per request, from the rounds that count (`stats::rank_range`).

use std::collections::BTreeMap;

use super::{Measurement, MeasurementStatus, Round, RoundsSummary, RunResult};
use crate::stats::rank_range::{rank_ranges, Better, RankRange};

/// What makes measurements one table: scenario, load (mode, rate or share), connections, pipeline.
pub type TableKey = (String, String, usize, u32);

/// The measurements of each table, tables in the order they were first run, rows in run order; each with
/// its index in `run.measurements`.
pub fn tables(run: &RunResult) -> Vec<(TableKey, Vec<(usize, &Measurement)>)> {
    let mut order = Vec::new();
    let mut by: BTreeMap<TableKey, Vec<(usize, &Measurement)>> = BTreeMap::new();
    for (i, m) in run.measurements.iter().enumerate() {
        let key = (m.scenario.clone(), m.load_label(), m.connections, m.pipeline);
        if !by.contains_key(&key) {
            order.push(key.clone());
        }
        by.entry(key).or_default().push((i, m));
    }
    order.into_iter().map(|k| (k.clone(), by.remove(&k).unwrap_or_default())).collect()
}

/// A row's places among the rows of its table that can be ranked; run.json writes them in each
/// measurement's summary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Places {
    pub requests_per_s: Option<PlaceRange>,
    pub cpu_per_request: Option<PlaceRange>,
}

/// The places a row may hold, 1 being the best (`stats::rank_range`'s range, as run.json writes it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PlaceRange {
    pub best: usize,
    pub worst: usize,
}

impl PlaceRange {
    /// "3" or "3–11".
    pub fn label(&self) -> String {
        RankRange { best: self.best, worst: self.worst }.label()
    }

    /// "place 3" or "places 3–11", as written beside a bar or a group of rows.
    pub fn phrase(&self) -> String {
        format!("{} {}", if self.best == self.worst { "place" } else { "places" }, self.label())
    }

    /// Whether the two ranges share a place: their rows are not told apart by their rounds.
    pub fn overlaps(&self, other: &PlaceRange) -> bool {
        self.best <= other.worst && other.best <= self.worst
    }
}

impl From<RankRange> for PlaceRange {
    fn from(r: RankRange) -> PlaceRange {
        let RankRange { best, worst } = r;
        PlaceRange { best, worst }
    }
}

/// The places of every measurement of the run, by index in `run.measurements`. A measurement takes a place
/// when it was measured, with two rounds or more that count, and is not the run's control (which is there
/// to measure the machine, not to compete); the others have none and are not counted.
///
/// Every round that counts enters, as in the median: a `client-bound` round measures the client as much as
/// the server, and the row's flag says so, but leaving it out would rank the rows on different rounds.
pub fn places(run: &RunResult) -> Vec<Places> {
    let mut out = vec![Places::default(); run.measurements.len()];
    for (_, rows) in tables(run) {
        let ranked: Vec<&(usize, &Measurement)> = rows.iter().filter(|(_, m)| competes(run, m)).collect();
        let rps: Vec<Vec<f64>> = ranked.iter().map(|(_, m)| values(m, |r| Some(r.requests_per_s_adjusted()))).collect();
        let cpu: Vec<Vec<f64>> = ranked.iter().map(|(_, m)| values(m, Round::cpu_us_per_request_adjusted)).collect();
        let (by_rps, by_cpu) = (rank_ranges(&rps, Better::Higher), rank_ranges(&cpu, Better::Lower));
        for (k, (i, _)) in ranked.iter().enumerate() {
            out[*i] = Places { requests_per_s: by_rps[k].map(PlaceRange::from), cpu_per_request: by_cpu[k].map(PlaceRange::from) };
        }
    }
    out
}

/// Server CPU microseconds per request over the rounds that count: the median of the rounds' own figures
/// and its interval, beside the run's total over its requests that the tables show.
pub fn cpu_us_per_request(m: &Measurement) -> Option<RoundsSummary> {
    RoundsSummary::of(&values(m, Round::cpu_us_per_request_adjusted))
}

fn competes(run: &RunResult, m: &Measurement) -> bool {
    m.status == MeasurementStatus::Measured && !run.contestant(&m.contestant).is_some_and(|c| c.control)
}

/// A figure of every round that counts; none when a round lacks it, as the summary then has none either
/// (the other rounds' figures alone would stand for a measurement they do not cover).
fn values(m: &Measurement, figure: impl Fn(&Round) -> Option<f64>) -> Vec<f64> {
    m.measured_rounds().map(figure).collect::<Option<Vec<f64>>>().unwrap_or_default()
}
