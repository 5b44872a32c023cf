//! `serverbench history --html FILE`: the history as a page, drawn with `report/`'s helpers: per
//! configuration a chart of every contestant's figure over the runs, and the change points below it.

use crate::history::series::{Cause, Configuration, Series};
use crate::model::verdict::Metric;
use crate::report::html_page::Page;
use crate::report::svg::{self, Axis, LineChart, Scale, Unit};

pub fn render(shown: &[&Series], metric: Metric) -> String {
    let mut page = Page::new(&format!("serverbench history · {}", metric.name()));
    page.note("Each line is a contestant's median as measured per run, oldest run first (docs/history.md).");
    let mut configurations: Vec<&Configuration> = shown.iter().map(|s| &s.configuration).collect();
    configurations.sort();
    configurations.dedup();
    for (i, c) in configurations.into_iter().enumerate() {
        let group: Vec<&Series> = shown.iter().copied().filter(|s| &s.configuration == c).collect();
        // One x for a run in every line: its place among the configuration's runs in time order.
        let mut runs: Vec<(&str, &str)> = group.iter().flat_map(|s| s.points.iter().map(|p| (p.started_utc.as_str(), p.run_id.as_str()))).collect();
        runs.sort();
        runs.dedup();
        let x = |run: &str| runs.iter().position(|r| r.1 == run).unwrap_or(0) as f64;
        let lines = group
            .iter()
            .enumerate()
            .map(|(k, s)| svg::Series { label: s.contestant.clone(), points: s.points.iter().map(|p| (x(&p.run_id), p.median)).collect(), style: k })
            .collect();
        // Whole runs on the axis, at most about ten of them labelled.
        let ticks = (0..runs.len()).step_by(runs.len().div_ceil(10).max(1)).map(|i| (i as f64, i.to_string())).collect();
        let chart = LineChart {
            title: metric.name().into(),
            x: Axis { label: "run, oldest first".into(), unit: Unit::Count, scale: Scale::Linear, ticks },
            y: Axis { label: metric.name().into(), unit: unit(metric), scale: Scale::Linear, ticks: Vec::new() },
            series: lines,
        };
        page.heading(2, &format!("c{i}"), &c.label());
        page.wide_figure(&svg::line_chart(&format!("c{i}"), &chart), None);
        for s in &group {
            for ch in &s.change_points {
                let whose = if ch.cause == Cause::Machine { "machine" } else { "the server's own" };
                page.para(&format!("{}: change at run {} (x = {}): ×{:.3} (95% interval {:.3}–{:.3}), p {:.2e}, {whose}", s.contestant, ch.run_id, x(&ch.run_id), ch.ratio, ch.ratio_ci95.0, ch.ratio_ci95.1, ch.p));
            }
        }
    }
    page.finish()
}

fn unit(metric: Metric) -> Unit {
    match metric {
        Metric::RequestsPerS => Unit::Count,
        Metric::P99 => Unit::Nanos,
        Metric::CpuPerRequest => Unit::Micros,
    }
}
