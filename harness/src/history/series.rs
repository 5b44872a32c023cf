//! A figure over runs per contestant and configuration, its change points, and whose each is: a change
//! at the same run in most contestants' series of a configuration and in its control's is the machine's
//! (`machine`); any other is the server's own.

use std::collections::BTreeMap;

use serde::Serialize;

use super::change_points::{self, Settings};
pub use super::rows::Point;
use super::StoredFigure;

/// What a series is of: the scenario, the load as the reports name it, the connections, the pipeline
/// depth and the load's tool (runs of another depth or tool are another series).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Configuration {
    pub scenario: String,
    pub load: String,
    pub connections: usize,
    pub pipeline: u32,
    pub tool: String,
}

impl Configuration {
    /// "hello · throughput · 64 connections", with ", pipeline 16" and ", wrk" where they are not the usual.
    pub fn label(&self) -> String {
        let pipeline = if self.pipeline > 1 { format!(", pipeline {}", self.pipeline) } else { String::new() };
        let tool = if self.tool == "builtin" { String::new() } else { format!(", {}", self.tool) };
        format!("{} · {} · {} connections{pipeline}{tool}", self.scenario, self.load, self.connections)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Cause {
    /// Most contestants' series and the control's changed at the same run.
    Machine,
    /// The server's own.
    Server,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// The first run of the new level.
    pub run_id: String,
    /// Its place in the series.
    pub index: usize,
    /// The mean after over the mean before.
    pub ratio: f64,
    pub ratio_ci95: (f64, f64),
    pub p: f64,
    pub cause: Cause,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Series {
    pub contestant: String,
    pub control: bool,
    pub configuration: Configuration,
    /// Oldest first.
    pub points: Vec<Point>,
    pub change_points: Vec<Change>,
}

impl Series {
    /// The server's own change points that the last runs brought to light: at one of the last
    /// `min_segment` runs, the latest place a change point can be found.
    pub fn recent_own_changes(&self, min_segment: usize) -> impl Iterator<Item = &Change> {
        let from = self.points.len().saturating_sub(min_segment);
        self.change_points.iter().filter(move |c| c.cause == Cause::Server && c.index >= from)
    }
}

/// The stored figures as one series per contestant and configuration, ordered by configuration and
/// contestant, each already in time order; no change point found yet.
pub fn group(figures: Vec<StoredFigure>) -> Vec<Series> {
    let mut by: BTreeMap<(Configuration, String), Series> = BTreeMap::new();
    for f in figures {
        let configuration = Configuration { scenario: f.scenario, load: f.load, connections: f.connections, pipeline: f.pipeline, tool: f.tool };
        let series = by.entry((configuration.clone(), f.contestant.clone())).or_insert_with(|| Series {
            contestant: f.contestant,
            control: f.control,
            configuration,
            points: Vec::new(),
            change_points: Vec::new(),
        });
        series.points.push(f.point);
    }
    by.into_values().collect()
}

/// Finds every series' change points and says whose each is.
pub fn analyse(series: &mut [Series], settings: Settings) {
    for s in series.iter_mut() {
        let values: Vec<f64> = s.points.iter().map(|p| p.median).collect();
        s.change_points = change_points::find(&values, settings)
            .into_iter()
            .map(|c| Change { run_id: s.points[c.index].run_id.clone(), index: c.index, ratio: c.ratio, ratio_ci95: c.ratio_ci95, p: c.p, cause: Cause::Server })
            .collect();
    }
    let mut configurations: Vec<Configuration> = series.iter().map(|s| s.configuration.clone()).collect();
    configurations.sort();
    configurations.dedup();
    for configuration in configurations {
        let machine_runs = machine_runs(series.iter().filter(|s| s.configuration == configuration));
        for s in series.iter_mut().filter(|s| s.configuration == configuration) {
            for c in s.change_points.iter_mut().filter(|c| machine_runs.contains(&c.run_id)) {
                c.cause = Cause::Machine;
            }
        }
    }
}

/// The runs at which the control's series and more than half of the contestants' series of one
/// configuration that hold that run changed.
fn machine_runs<'a>(group: impl Iterator<Item = &'a Series> + Clone) -> Vec<String> {
    let contestants = group.clone().filter(|s| !s.control);
    let holding = |run: &str| contestants.clone().filter(|s| s.points.iter().any(|p| p.run_id == run)).count();
    let changed_at = |run: &str| contestants.clone().filter(|s| s.change_points.iter().any(|c| c.run_id == run)).count();
    let mut runs: Vec<String> = group.clone().filter(|s| s.control).flat_map(|s| s.change_points.iter().map(|c| c.run_id.clone())).collect();
    runs.retain(|run| 2 * changed_at(run) > holding(run));
    runs.sort();
    runs.dedup();
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(contestant: &str, runs: std::ops::Range<usize>, changes_at: &[usize]) -> Series {
        let point = |r: usize| Point { run_id: format!("r{r:02}"), started_utc: String::new(), commit: None, dirty: None, median: 1.0, ci95: None, median_adjusted: None };
        let change = |r: &usize| Change { run_id: format!("r{r:02}"), index: 0, ratio: 1.0, ratio_ci95: (1.0, 1.0), p: 0.0, cause: Cause::Server };
        Series {
            contestant: contestant.into(),
            control: contestant == "control",
            configuration: Configuration { scenario: "hello".into(), load: "throughput".into(), connections: 64, pipeline: 1, tool: "builtin".into() },
            points: runs.map(point).collect(),
            change_points: changes_at.iter().map(change).collect(),
        }
    }

    #[test]
    fn the_machines_runs_count_the_series_that_hold_them() {
        // b and c changed at r05 with the control; d joined later and cannot have: 2 of the 3 that hold it.
        let group = [series("control", 0..10, &[5]), series("a", 0..10, &[]), series("b", 0..10, &[5]), series("c", 0..10, &[5]), series("d", 7..10, &[])];
        assert_eq!(machine_runs(group.iter()), ["r05"]);
        // Half is not more than half.
        let group = [series("control", 0..10, &[5]), series("a", 0..10, &[]), series("b", 0..10, &[5])];
        assert!(machine_runs(group.iter()).is_empty());
        // Without the control's change, no run is the machine's.
        let group = [series("control", 0..10, &[]), series("a", 0..10, &[5]), series("b", 0..10, &[5])];
        assert!(machine_runs(group.iter()).is_empty());
    }
}
