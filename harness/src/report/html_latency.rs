//! The latency part of report.html: the percentile spectrum of every server as small multiples, one panel
//! of a few servers per model family on shared axes, and the table of its percentiles.

use hdrhistogram::Histogram;

use super::format::us;
use super::html_page::{opt_num, Cell, Page, Table};
use super::html_rows::{family_of, Row, MODEL_FAMILIES};
use super::svg::{self, Axis, Panel, PanelChart, Scale, Series, Unit, PANEL_SERIES};
use crate::model::{LatencyPoints, Measurement};
use crate::stats::histogram::new_latency_histogram;

/// Percentiles the spectrum's x axis names; x = log10(1 / (1 − q)), as HdrHistogram's plots draw it.
const SPECTRUM_TICKS: [&str; 6] = ["0%", "90%", "99%", "99.9%", "99.99%", "99.999%"];
const SPECTRUM_DECADES: f64 = 5.0;
const SPECTRUM_STEPS: usize = 100;

/// The spectrum chart, its panels by model family, and the latency table beside it.
pub(super) fn latency_figure(page: &mut Page, id: &str, scenario: &str, rows: &[&Row]) {
    let lines: Vec<(Series, String)> = rows
        .iter()
        .filter_map(|r| {
            // The merged histogram is as measured: its curve moves to the reference state as the table's
            // figures do.
            let by = 1.0 / r.s.latency_factor.unwrap_or(1.0);
            let points = spectrum(merged_histogram(r.m).as_ref(), &r.s.latency_ns_as_measured)?.into_iter().map(|(x, y)| (x, y * by)).collect();
            Some((Series { label: r.m.contestant.clone(), points, style: 0 }, r.model.clone()))
        })
        .collect();
    if lines.is_empty() {
        return;
    }
    let scale = Scale::for_values(lines.iter().flat_map(|(s, _)| s.points.iter().map(|p| p.1)), 20.0);
    let panels = family_panels(lines, PANEL_SERIES)
        .into_iter()
        .map(|(title, series)| Panel {
            title,
            // Styles by place in the panel: no two lines of a panel share a colour, dash or marker.
            series: series.into_iter().enumerate().map(|(i, s)| Series { style: i, ..s }).collect(),
        })
        .collect();
    let chart = PanelChart {
        // A rate section's curves are at its load level, which the title names.
        title: match rows.first().map(|r| r.m.load_label()).filter(|l| l != "throughput") {
            Some(load) => format!("{scenario}, {load}: latency by percentile"),
            None => format!("{scenario}: latency by percentile"),
        },
        x: Axis {
            label: "percentile (log scale of 1 / (1 − q)); grey: the servers of the other panels".into(),
            unit: Unit::Count,
            scale: Scale::Linear,
            ticks: SPECTRUM_TICKS.iter().enumerate().map(|(i, t)| (i as f64, t.to_string())).collect(),
        },
        y: Axis {
            label: if scale == Scale::Log10 { "latency (log scale)".into() } else { "latency".into() },
            unit: Unit::Nanos,
            scale,
            ticks: vec![],
        },
        panels,
    };
    page.wide_figure(
        &svg::panel_chart(&format!("{id}-latency"), &chart),
        Some(&latency_table(&format!("{id}-latency-table"), rows)),
    );
}

/// Splits (item, model) pairs into panels by model family, families in their fixed order and "other"
/// last; within a family by model in the family's order, then in the order given. A family with more than
/// `max` items takes as few panels as hold them, of sizes that differ by one at most. Returns each
/// panel's title (the family, its models in the panel, and "k of n" where the family has several) and
/// items.
pub fn family_panels<T>(items: Vec<(T, String)>, max: usize) -> Vec<(String, Vec<T>)> {
    let max = max.max(1);
    let families = MODEL_FAMILIES.iter().map(|(f, models)| (*f, *models)).chain([("other", &[][..])]);
    let mut items: Vec<Option<(T, String)>> = items.into_iter().map(Some).collect();
    let mut out = Vec::new();
    for (family, models) in families {
        let mut members: Vec<(T, String)> = items
            .iter_mut()
            .filter(|i| i.as_ref().is_some_and(|(_, m)| family_of(m) == family))
            .filter_map(Option::take)
            .collect();
        members.sort_by_key(|(_, m)| models.iter().position(|x| x == m).unwrap_or(models.len()));
        let count = members.len().div_ceil(max);
        let mut rest = members.into_iter();
        for k in 0..count {
            let size = rest.len() / (count - k) + usize::from(!rest.len().is_multiple_of(count - k));
            let chunk: Vec<(T, String)> = rest.by_ref().take(size).collect();
            let mut names: Vec<&str> = Vec::new();
            for (_, m) in &chunk {
                if !names.contains(&m.as_str()) {
                    names.push(m);
                }
            }
            let part = if count > 1 { format!(" ({} of {count})", k + 1) } else { String::new() };
            let title = format!("{family}: {}{part}", names.join(", "));
            out.push((title, chunk.into_iter().map(|(t, _)| t).collect()));
        }
    }
    out
}

/// The latency spectrum: (log10(1 / (1 − q)), latency ns) from the merged histogram of the measured rounds,
/// stopping where the histogram runs out of samples (1 − q < 1 / count), the last point at the maximum. An
/// external tool's figures give a few points instead.
fn spectrum(histogram: Option<&Histogram<u64>>, points: &LatencyPoints) -> Option<Vec<(f64, f64)>> {
    if let Some(h) = histogram {
        let count = h.len() as f64;
        let mut out = Vec::new();
        for k in 0..=SPECTRUM_STEPS {
            let x = SPECTRUM_DECADES * k as f64 / SPECTRUM_STEPS as f64;
            let tail = 10f64.powf(-x);
            if tail * count < 1.0 {
                out.push((count.log10().min(SPECTRUM_DECADES), h.max() as f64));
                break;
            }
            out.push((x, h.value_at_quantile(1.0 - tail) as f64));
        }
        return Some(out);
    }
    let known = [
        (0.0, points.min),
        (0.5, points.p50),
        (0.9, points.p90),
        (0.99, points.p99),
        (0.999, points.p999),
        (0.9999, points.p9999),
    ];
    let out: Vec<(f64, f64)> = known.iter().filter_map(|(q, v)| Some(((1.0f64 / (1.0 - q)).log10(), (*v)?))).collect();
    (!out.is_empty()).then_some(out)
}

/// The histogram of all measured rounds; None when a round has none (an external load tool).
fn merged_histogram(m: &Measurement) -> Option<Histogram<u64>> {
    let mut merged = new_latency_histogram();
    for r in m.measured_rounds() {
        if r.load.latency.is_empty() {
            return None;
        }
        merged.add(&r.load.latency).ok()?;
    }
    (!merged.is_empty()).then_some(merged)
}

fn latency_table(id: &str, rows: &[&Row]) -> Table {
    let headers = ["contestant", "style", "mean µs", "p50 µs", "p90 µs", "p99 µs", "p99.9 µs", "p99.99 µs", "max µs"];
    let body = rows
        .iter()
        .map(|r| {
            let l = &r.s.latency_ns;
            let mut cells = vec![Cell::text(&r.m.contestant), Cell::text(&r.style)];
            cells.extend([l.mean, l.p50, l.p90, l.p99, l.p999, l.p9999, l.max].map(|v| opt_num(v, us)));
            cells
        })
        .collect();
    let source = if rows.iter().all(|r| r.s.latency_from_histogram) {
        "merged histogram of the measured rounds"
    } else {
        "without a histogram from the load tool: the mean of the rounds' own figures"
    };
    let reference = if rows.iter().any(|r| r.s.latency_factor.is_some()) { ", at the machine model's reference state" } else { "" };
    let caption = format!("Latency ({source}{reference})");
    Table { id: id.into(), caption: Some(caption), headers: headers.map(String::from).to_vec(), rows: body }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spectrum_stops_where_the_samples_run_out() {
        let mut h = new_latency_histogram();
        for v in 1..=1000u64 {
            h.record(v * 1000).unwrap();
        }
        let line = spectrum(Some(&h), &LatencyPoints::default()).unwrap();
        // 1000 samples reach the 99.9th percentile (x = 3), where the line ends at the maximum.
        assert_eq!(line.len(), 62);
        assert_eq!(line[0], (0.0, 1000.0));
        assert_eq!(line[20].0, 1.0);
        assert!((line[20].1 - 900_000.0).abs() / 900_000.0 < 0.001, "{:?}", line[20]);
        assert_eq!(*line.last().unwrap(), (3.0, h.max() as f64));
    }

    #[test]
    fn spectrum_of_a_tool_without_histogram_joins_its_percentiles() {
        let points = LatencyPoints { p50: Some(10.0), p99: Some(40.0), p9999: Some(90.0), ..LatencyPoints::default() };
        let line = spectrum(None, &points).unwrap();
        let xs: Vec<f64> = line.iter().map(|p| (p.0 * 1e9).round() / 1e9).collect();
        assert_eq!(xs, [2f64.log10(), 2.0, 4.0].map(|x| (x * 1e9).round() / 1e9));
        assert_eq!(line.iter().map(|p| p.1).collect::<Vec<_>>(), [10.0, 40.0, 90.0]);
        assert!(spectrum(None, &LatencyPoints::default()).is_none());
    }

    fn models(pairs: &[(&str, usize)]) -> Vec<(String, String)> {
        pairs.iter().flat_map(|(m, n)| (0..*n).map(move |i| (format!("{m}-{i}"), m.to_string()))).collect()
    }

    #[test]
    fn a_large_family_is_cut_into_even_panels() {
        let items = models(&[("work-stealing", 10), ("per-core", 12), ("thread-per-connection", 1), ("actor", 2)]);
        let panels = family_panels(items.clone(), 7);
        let summary: Vec<(&str, usize)> = panels.iter().map(|(t, v)| (t.as_str(), v.len())).collect();
        assert_eq!(
            summary,
            [
                ("shared run queue: thread-per-connection, work-stealing (1 of 2)", 6),
                ("shared run queue: work-stealing (2 of 2)", 5),
                ("per-core: per-core (1 of 2)", 6),
                ("per-core: per-core (2 of 2)", 6),
                ("other: actor", 2),
            ]
        );
        // Every item in exactly one panel, in the order given within its model.
        let mut placed: Vec<String> = panels.into_iter().flat_map(|(_, v)| v).collect();
        assert_eq!(placed[1..11], items[..10].iter().map(|i| i.0.clone()).collect::<Vec<_>>()[..]);
        placed.sort();
        let mut all: Vec<String> = items.into_iter().map(|i| i.0).collect();
        all.sort();
        assert_eq!(placed, all);
    }

    #[test]
    fn a_small_family_takes_one_panel() {
        let panels = family_panels(models(&[("prefork", 1), ("work-sharing", 2)]), 7);
        let titles: Vec<&str> = panels.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(titles, ["shared run queue: work-sharing", "per-core: prefork"]);
        assert!(family_panels(Vec::<(u8, String)>::new(), 7).is_empty());
    }
}
