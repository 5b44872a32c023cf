//! report.html's part of an A/B run (`model::ab`): which version is which, the verdict per figure, and a
//! chart of the paired req/s ratios over the run with the estimate and its 95% interval as the pairs came
//! in, then a table of every pair.

use super::html_page::{facts, opt_num, Cell, Page, Table};
use super::pairs::method;
use super::svg::{self, Axis, LineChart, Scale, Series, Unit};
use crate::model::ab::{AbRun, PairFigures, Side};
use crate::model::verdict::Metric;
use crate::model::RunResult;
use crate::stats::paired::paired_ratio;

/// The anchor of the part.
pub(super) const ID: &str = "ab";

/// The contents link of the part, when the run is an A/B run.
pub(super) fn link(run: &RunResult) -> Option<(String, String)> {
    run.ab.as_ref().map(|_| (ID.to_string(), "A/B".to_string()))
}

/// The header's "Rounds" fact.
pub(super) fn rounds_fact(run: &RunResult) -> String {
    let c = &run.config;
    match c.ab {
        Some(_) if c.rounds == "auto" => format!(
            "{} warm-up (discarded) of each version + pairs of measured rounds, A and B back to back and first in turn, until B/A of req/s is clear (at most {})",
            c.warmup_rounds,
            c.max_rounds.unwrap_or(c.measured_rounds)
        ),
        Some(_) => format!("{} warm-up (discarded) of each version + {} pairs of measured rounds that count, A and B back to back and first in turn", c.warmup_rounds, c.measured_rounds),
        None => format!("{} warm-up (discarded) + {}, interleaved across contestants", c.warmup_rounds, super::markdown::rounds_rule(run)),
    }
}

/// The part itself; nothing for a run that is not an A/B run.
pub(super) fn section(page: &mut Page, run: &RunResult) {
    let Some(ab) = &run.ab else { return };
    page.heading(2, ID, &format!("A/B: {} (A) against {} (B)", ab.a.name, ab.b.name));
    let estimates = run.ab_estimates();
    let mut rows = vec![("A", format!("{}, {}", ab.a.name, ab.a.from)), ("B", format!("{}, {}", ab.b.name, ab.b.from))];
    rows.extend(estimates.iter().map(|e| (e.metric.name(), format!("{} — {}", e.sentence(), e.verdict.marker()))));
    let (all, counted) = ab.counted(&run.measurements);
    let pairs = format!("{all} run, {counted} counting{}", ab.ended.as_deref().map(|e| format!("; ended: {e}")).unwrap_or_default());
    rows.push(("Pairs", pairs));
    page.raw(&facts(&rows));
    page.note(&method(estimates.first().map_or_else(crate::model::ab::Bands::default, |e| e.bands)));
    let figures = ab.figures(&run.measurements);
    if figures.is_empty() {
        return;
    }
    page.wide_figure(&svg::line_chart("ab-pairs", &chart(ab, &figures)), Some(&table(&figures)));
}

/// B/A of req/s per pair over the run, the estimate over the pairs so far and its interval, and the band.
fn chart(ab: &AbRun, figures: &[PairFigures]) -> LineChart {
    let mut each = Vec::new();
    let (mut estimate, mut low, mut high) = (Vec::new(), Vec::new(), Vec::new());
    let mut so_far = Vec::new();
    for f in figures.iter().filter(|f| f.counts()) {
        let (Some(r), x) = (f.ratio(Metric::RequestsPerS), f64::from(f.pair.index)) else { continue };
        each.push((x, r));
        so_far.push((f.a.load.requests_per_s(), f.b.load.requests_per_s()));
        if let Some(p) = paired_ratio(&so_far) {
            estimate.push((x, p.ratio));
            if let Some((lo, hi)) = p.ci95 {
                low.push((x, lo));
                high.push((x, hi));
            }
        }
    }
    let ys: Vec<f64> = each.iter().chain(&low).chain(&high).map(|p| p.1).collect();
    let series = vec![
        Series { label: "each pair".into(), points: each, style: 0 },
        Series { label: "estimate so far".into(), points: estimate, style: 1 },
        Series { label: "95% CI low".into(), points: low, style: 2 },
        Series { label: "95% CI high".into(), points: high, style: 2 },
    ];
    LineChart {
        title: format!("B/A of req/s per pair: {} against {}", ab.name(Side::B), ab.name(Side::A)),
        x: Axis { label: "pair".into(), unit: Unit::Count, scale: Scale::Linear, ticks: vec![] },
        y: Axis { label: "B/A of req/s (log scale)".into(), unit: Unit::Ratio, scale: Scale::Log10, ticks: ratio_ticks(&ys) },
        series,
    }
}

/// Ticks of a ratio axis around 1 that cover `values`, at a round step.
fn ratio_ticks(values: &[f64]) -> Vec<(f64, String)> {
    let lo = values.iter().copied().filter(|v| v.is_finite() && *v > 0.0).fold(0.99f64, f64::min);
    let hi = values.iter().copied().filter(|v| v.is_finite()).fold(1.01f64, f64::max);
    let step = [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0].into_iter().find(|s| (hi - lo) / s <= 8.0).unwrap_or(1.0);
    let (first, last) = ((lo / step).floor() as i64, (hi / step).ceil() as i64);
    (first..=last).map(|i| i as f64 * step).filter(|v| *v > 0.0).map(|v| (v, svg::tick(Unit::Ratio, v))).collect()
}

/// Every pair: its order, both rounds' req/s and the three ratios.
fn table(figures: &[PairFigures]) -> Table {
    let headers = ["pair", "order", "A req/s", "B req/s", "B/A req/s", "B/A p99", "B/A CPU/req", "counts"];
    let ratio = |f: &PairFigures, m: Metric| opt_num(f.ratio(m), |r| format!("{r:.4}"));
    let rows = figures
        .iter()
        .map(|f| {
            let (a, b) = (f.a.load.requests_per_s(), f.b.load.requests_per_s());
            vec![
                Cell::num(f.pair.index.to_string(), f64::from(f.pair.index)),
                Cell::text(if f.pair.first == Side::A { "A B" } else { "B A" }),
                Cell::num(format!("{a:.0}"), a),
                Cell::num(format!("{b:.0}"), b),
                ratio(f, Metric::RequestsPerS),
                ratio(f, Metric::P99),
                ratio(f, Metric::CpuPerRequest),
                Cell::text(if f.counts() { "yes" } else { "no (disturbed)" }),
            ]
        })
        .collect();
    Table { id: "ab-pairs-table".into(), caption: Some("Each pair's rounds, back to back in the order given".into()), headers: headers.iter().map(|h| h.to_string()).collect(), rows }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_ticks_cover_the_values_and_the_band() {
        let t = ratio_ticks(&[0.97, 1.02]);
        assert!(t.first().unwrap().0 <= 0.97 && t.last().unwrap().0 >= 1.02, "{t:?}");
        assert!(t.len() >= 3 && t.len() <= 10, "{t:?}");
        let wide = ratio_ticks(&[0.5, 1.9]);
        assert!(wide.first().unwrap().0 <= 0.5 && wide.last().unwrap().0 >= 1.9 && wide.len() <= 10, "{wide:?}");
    }
}
