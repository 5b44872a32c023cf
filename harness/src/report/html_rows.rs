//! The rows the HTML report draws from: each measured configuration with its summary and its server's
//! model, grouped into the page's sections, and the two model families its latency panels split them by.

use std::collections::BTreeMap;

use crate::model::ranks::{tables, Places};
use crate::model::{Measurement, MeasurementSummary, RunResult};

/// The two families of the first source document, and the models in each. The pools and the process per
/// connection share like a thread per connection: the kernel's run queue schedules every blocked thread or
/// process, and the next free one takes the next connection from the one accept queue.
pub const MODEL_FAMILIES: [(&str, &[&str]); 2] = [
    (
        "shared run queue",
        &["thread-per-connection", "thread-pool", "process-per-connection", "process-pool", "work-sharing", "work-stealing"],
    ),
    ("per-core", &["per-core", "prefork", "single-loop"]),
];

/// The family a model belongs to: "shared run queue", "per-core", or "other".
pub fn family_of(model: &str) -> &'static str {
    MODEL_FAMILIES.iter().find(|(_, models)| models.contains(&model)).map_or("other", |(family, _)| family)
}

/// A measured configuration with its summary and its places in its table.
pub(super) struct Row<'a> {
    pub m: &'a Measurement,
    pub s: MeasurementSummary,
    pub model: String,
    /// The manifest's `style`, or the absent mark.
    pub style: String,
    pub places: Places,
}

/// The tables of the run (`model::ranks::tables`) with a measured round, by (scenario, load, pipeline) in
/// the order they were run, then by connection count; `places` are the run's, by index in
/// `run.measurements`.
#[allow(clippy::type_complexity)]
pub(super) fn sections<'a>(run: &'a RunResult, places: &[Places]) -> Vec<((String, String, u32), BTreeMap<usize, Vec<Row<'a>>>)> {
    let mut out: Vec<((String, String, u32), BTreeMap<usize, Vec<Row>>)> = Vec::new();
    for ((scenario, load, connections, pipeline), members) in tables(run) {
        let rows: Vec<Row> = members.into_iter().filter(|(_, m)| m.measured_rounds().next().is_some()).map(|(i, m)| row(run, m, places[i])).collect();
        if rows.is_empty() {
            continue;
        }
        let key = (scenario, load, pipeline);
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some((_, map)) => map.entry(connections).or_default().extend(rows),
            None => out.push((key, BTreeMap::from([(connections, rows)]))),
        }
    }
    out
}

/// A measured configuration as the page draws it: with its server's model and style (`style` as the
/// manifest gives it, or the absent mark).
fn row<'a>(run: &RunResult, m: &'a Measurement, places: Places) -> Row<'a> {
    let c = run.contestant(&m.contestant);
    let model = c.map(|c| c.model.clone()).unwrap_or_default();
    let style = c.and_then(|c| c.style.clone()).unwrap_or_else(|| super::format::ABSENT.into());
    Row { m, s: m.summary(), model, style, places }
}

/// With `--workers LIST`: the measurements of each configuration (scenario, load, pipeline, connections)
/// by their workers, where there are at least two; with the configuration's title.
pub(super) fn worker_sweeps<'a>(run: &'a RunResult, places: &[Places]) -> Vec<(String, BTreeMap<usize, Vec<Row<'a>>>)> {
    let mut out: Vec<(String, BTreeMap<usize, Vec<Row>>)> = Vec::new();
    for (m, places) in run.measurements.iter().zip(places).filter(|(m, _)| m.measured_rounds().next().is_some()) {
        let Some(workers) = m.workers else { continue };
        let pipelined = if m.pipeline > 1 { format!(", pipeline {}", m.pipeline) } else { String::new() };
        let title = format!("{} · {}{pipelined} · {} connections", m.scenario, m.load_only_label(), m.connections);
        let row = row(run, m, *places);
        match out.iter_mut().find(|(t, _)| *t == title) {
            Some((_, map)) => map.entry(workers).or_default().push(row),
            None => out.push((title, BTreeMap::from([(workers, vec![row])]))),
        }
    }
    out.retain(|(_, map)| map.len() > 1);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_fall_into_the_two_families() {
        assert_eq!(family_of("work-stealing"), "shared run queue");
        assert_eq!(family_of("thread-per-connection"), "shared run queue");
        assert_eq!(family_of("thread-pool"), "shared run queue");
        assert_eq!(family_of("process-pool"), "shared run queue");
        assert_eq!(family_of("process-per-connection"), "shared run queue");
        assert_eq!(family_of("prefork"), "per-core");
        assert_eq!(family_of("single-loop"), "per-core");
        assert_eq!(family_of("actor"), "other");
    }
}
