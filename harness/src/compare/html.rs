//! The comparison as one self-contained HTML page: per configuration a chart of the B/A ratios with their
//! 95% intervals around the "no change" line, and a sortable table with every figure.

use super::markdown::{baselines_rows, by_configuration, cross_cpu, flagged, method, p_text, ratio_text, unit_suffix, value_text};
use super::{Comparison, Metric, Row, Verdict};
use crate::report::html_page::{facts, Cell, Page, Table};
use crate::report::svg::{self, Bar, BarChart, BarGroup, Unit};

pub fn render(c: &Comparison) -> String {
    let mut page = Page::new(&format!("serverbench compare: {} → {}", c.a.run_id, c.b.run_id));
    page.raw(&facts(&[
        ("A (baseline)", format!("{}, started {}; {}", c.a.run_id, c.a.started_utc, c.a.machine)),
        ("B", format!("{}, started {}; {}", c.b.run_id, c.b.started_utc, c.b.machine)),
    ]));
    page.note(&method(c.rules));
    page.heading(2, "machine", "The machine's own change");
    let (headers, rows) = baselines_rows(c);
    let t = Table {
        id: "machine-table".into(),
        caption: Some("per figure: the configurations' common change B/A and their scatter around it".into()),
        headers: headers.map(String::from).to_vec(),
        rows: rows.into_iter().map(|r| r.into_iter().map(Cell::text).collect()).collect(),
    };
    page.raw(&t.to_html());
    let cross = cross_cpu(c);
    if !cross.is_empty() {
        page.para(cross.trim());
    }
    if c.differences.is_empty() {
        page.para("Both runs used the same machine, tools and measurement rules.");
    } else {
        page.heading(2, "differences", "Settings that differ");
        let rows = c.differences.iter().map(|(w, a, b)| vec![Cell::text(w), Cell::text(a), Cell::text(b)]).collect();
        let t = Table {
            id: "differences-table".into(),
            caption: None,
            headers: vec!["setting".into(), "A".into(), "B".into()],
            rows,
        };
        page.raw(&t.to_html());
        page.note("A difference in setting can explain a change below.");
    }

    page.heading(2, "verdicts", "Changes beyond noise");
    let flagged = flagged(c);
    if flagged.is_empty() {
        page.para("None: every compared figure is within noise (or has too few rounds to test).");
    } else {
        let rows = flagged
            .iter()
            .map(|(r, ch)| {
                vec![
                    verdict_cell(ch.verdict),
                    Cell::text(&r.key.contestant),
                    Cell::text(r.key.configuration()),
                    Cell::text(ch.metric.name()),
                    Cell::num(format!("{:.3}×", ch.ratio.unwrap_or(f64::NAN)), ch.ratio.unwrap_or(f64::NAN)),
                    Cell::num(ch.test.map_or("-".into(), |t| p_text(t.p)), ch.test.map_or(f64::NAN, |t| t.p)),
                    Cell::num(ch.corrected.map_or("-".into(), |t| format!("{:.3}×", t.ratio)), ch.corrected.map_or(f64::NAN, |t| t.ratio)),
                    Cell::num(ch.spreads.map_or("-".into(), |s| format!("{:.1}", s.abs())), ch.spreads.map_or(f64::NAN, f64::abs)),
                ]
            })
            .collect();
        let t = Table {
            id: "verdicts-table".into(),
            caption: None,
            headers: ["verdict", "contestant", "configuration", "figure", "B/A", "p", "B/A, the machine's change out", "spreads from the rest"]
                .map(String::from)
                .to_vec(),
            rows,
        };
        page.raw(&t.to_html());
    }

    for (i, (configuration, rows)) in by_configuration(&c.rows).into_iter().enumerate() {
        let id = format!("c{i}");
        page.heading(2, &id, &configuration);
        page.figure(
            &svg::bar_chart(&format!("{id}-ratios"), &ratio_chart(&configuration, &rows)),
            Some(&table(&format!("{id}-table"), &rows)),
        );
    }
    if !c.lost.is_empty() {
        let list: Vec<String> = c.lost.iter().map(|l| format!("{} · {}: {}", l.key.contestant, l.key.configuration(), l.why.text())).collect();
        page.note(&format!("Lost in B (each trips every --fail-on gate): {}.", list.join("; ")));
    }
    for (side, keys) in [("A", &c.only_a), ("B", &c.only_b)] {
        if !keys.is_empty() {
            let list: Vec<String> = keys.iter().map(|k| format!("{} · {}", k.contestant, k.configuration())).collect();
            page.note(&format!("Measured only in {side} (not compared): {}.", list.join("; ")));
        }
    }
    page.finish()
}

fn verdict_cell(v: Verdict) -> Cell {
    let cell = Cell::text(v.marker());
    match v {
        Verdict::Better => cell.with_class("better"),
        Verdict::Worse => cell.with_class("worse"),
        Verdict::Unclear => cell.with_class("unclear"),
        _ => cell,
    }
}

/// B/A per contestant, one group per figure, with the interval and the verdict written beside each bar.
fn ratio_chart(configuration: &str, rows: &[&Row]) -> BarChart {
    let groups = Metric::ALL
        .iter()
        .enumerate()
        .map(|(k, metric)| BarGroup {
            label: format!(
                "{} B/A ({} is better)",
                metric.name(),
                if metric.higher_is_better() { "higher" } else { "lower" }
            ),
            bars: rows
                .iter()
                .filter_map(|r| {
                    let ch = &r.changes[k];
                    Some(Bar {
                        label: r.key.contestant.clone(),
                        value: ch.ratio?,
                        ci95: ch.ratio_ci95,
                        flag: matches!(ch.verdict, Verdict::Better | Verdict::Worse)
                            .then(|| ch.verdict.marker().to_string()),
                        place: None,
                        parts: vec![],
                    })
                })
                .collect(),
        })
        .filter(|g| !g.bars.is_empty())
        .collect();
    BarChart {
        title: format!("{configuration}: B / A"),
        axis_label: "B / A (Hodges–Lehmann), with its 95% interval".into(),
        unit: Unit::Ratio,
        groups,
        reference: Some((1.0, "no change".into())),
        parts: vec![],
    }
}

fn table(id: &str, rows: &[&Row]) -> Table {
    let mut headers = vec!["contestant".to_string()];
    for m in Metric::ALL {
        let (name, unit) = (m.name(), unit_suffix(m));
        headers.extend([
            format!("{name} A{unit}"),
            format!("{name} B{unit}"),
            format!("{name} B/A"),
            format!("{name} 95% CI"),
            format!("{name} p"),
            format!("{name} verdict"),
        ]);
    }
    headers.push("notes".into());
    let body = rows
        .iter()
        .map(|r| {
            let mut cells = vec![Cell::text(&r.key.contestant)];
            for ch in &r.changes {
                cells.push(Cell::num(value_text(ch.metric, ch.median_a), ch.median_a.unwrap_or(f64::NAN)));
                cells.push(Cell::num(value_text(ch.metric, ch.median_b), ch.median_b.unwrap_or(f64::NAN)));
                cells.push(Cell::num(ratio_text(ch).split(' ').next().unwrap_or("-"), ch.ratio.unwrap_or(f64::NAN)));
                let ci = ch.ratio_ci95.map_or("-".into(), |(lo, hi)| format!("{lo:.3} to {hi:.3}"));
                cells.push(Cell::num(ci, ch.ratio_ci95.map_or(f64::NAN, |x| x.0)));
                cells.push(Cell::num(ch.test.map_or("-".into(), |t| p_text(t.p)), ch.test.map_or(f64::NAN, |t| t.p)));
                cells.push(verdict_cell(ch.verdict));
            }
            cells.push(Cell::text(r.notes.join("; ")));
            cells
        })
        .collect();
    Table { id: id.into(), caption: Some("B against A".into()), headers, rows: body }
}
