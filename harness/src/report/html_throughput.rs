//! report.html's throughput table, and each row's range of places as the page writes it: by req/s and by
//! server CPU per request, from the rounds that count (model::ranks). Rows whose ranges overlap are not
//! told apart by their rounds, whatever order the medians put them in.

use super::format::{capacity, capacity_header, int, pct, ABSENT};
use super::html_page::{opt_num, Cell, Table};
use super::html_rows::Row;
use crate::model::{MeasurementStatus, Flag};
use crate::model::ranks::PlaceRange;

/// After "95% CI ±", when some row was found by a capacity search.
const CAPACITY_AT: usize = 6;

/// A range of places as written beside a bar: "places 3–11", or "place 2" when the rounds set it apart.
pub(super) fn places_text(range: Option<PlaceRange>) -> Option<String> {
    range.map(|r| r.phrase())
}

/// A range of places in a table, sorted by its best place, then its worst (a row has fewer than 1,000);
/// n/a, sorted as the other absent numbers, for a row without one (too few rounds, the control).
fn place_cell(range: Option<PlaceRange>) -> Cell {
    match range {
        Some(r) => Cell::num(r.label(), r.best as f64 + r.worst as f64 / 1000.0),
        None => Cell::num(ABSENT, f64::NAN),
    }
}

pub(super) fn throughput_table(id: &str, rows: &[&Row]) -> Table {
    let searched = capacity_header(rows.iter().map(|r| r.m));
    let mut headers = vec![
        "places",
        "contestant",
        "model",
        "style",
        "req/s",
        "95% CI ±",
        "min",
        "max",
        "rounds",
        "outliers",
        "server CPU %",
        "CPU places",
        "client CPU %",
        "errors",
        "flags",
    ]
    .into_iter()
    .map(String::from)
    .collect::<Vec<_>>();
    // After "server CPU %", when some row had two workers or more.
    const BALANCE_AT: usize = 11;
    let balance = rows.iter().any(|r| r.s.worker_imbalance.is_some());
    if balance {
        headers.insert(BALANCE_AT, "worker imbalance".into());
    }
    if let Some(header) = &searched {
        headers.insert(CAPACITY_AT, header.clone());
    }
    let body = rows
        .iter()
        .map(|r| {
            let s = r.s.requests_per_s.as_ref();
            let mut flags = Vec::new();
            flags.extend(r.s.bound_flags());
            flags.extend(r.s.unsaturated_flag());
            if r.s.ramp_incomplete_rounds > 0 {
                flags.push(format!("{} {}/{}", Flag::RampIncomplete, r.s.ramp_incomplete_rounds, r.s.rounds));
            }
            if r.s.unfair_rounds > 0 {
                flags.push(format!("{} {}/{}", Flag::Unfair, r.s.unfair_rounds, r.s.rounds));
            }
            flags.extend(r.s.served_flag());
            if r.s.rate_not_held_rounds > 0 {
                flags.push(format!("{} {}/{}", Flag::RateNotHeld, r.s.rate_not_held_rounds, r.s.rounds));
            }
            flags.extend(r.s.closes_flags());
            flags.extend(r.s.cpu_from_ticks_flag());
            if r.m.status == MeasurementStatus::Interrupted {
                flags.push("interrupted".to_string());
            }
            let flag_cell = Cell::text(flags.join(", "));
            let mut cells = vec![
                place_cell(r.places.requests_per_s),
                Cell::text(&r.m.contestant),
                Cell::text(&r.model),
                Cell::text(&r.style),
                opt_num(s.map(|s| s.median), int),
                opt_num(s.and_then(|s| s.ci95_relative_pct()), |p| format!("{p:.1}%")),
                opt_num(s.map(|s| s.min), int),
                opt_num(s.map(|s| s.max), int),
                Cell::num(r.s.rounds.to_string(), r.s.rounds as f64),
                Cell::num(s.map_or(0, |s| s.outliers.len()).to_string(), s.map_or(0, |s| s.outliers.len()) as f64),
                opt_num(r.s.server_utilisation_pct, pct),
                place_cell(r.places.cpu_per_request),
                opt_num(r.s.client_busy_pct, pct),
                Cell::num(r.s.errors.total().to_string(), r.s.errors.total() as f64),
                if flags.is_empty() { flag_cell } else { flag_cell.with_class("flag") },
            ];
            if balance {
                cells.insert(BALANCE_AT, opt_num(r.s.worker_imbalance, |x| format!("{x:.2}x")));
            }
            if searched.is_some() {
                let rps = r.m.capacity.as_ref().and_then(|c| c.capacity_rps).unwrap_or(f64::NAN);
                cells.insert(CAPACITY_AT, Cell::num(capacity(r.m), rps));
            }
            cells
        })
        .collect();
    Table { id: id.into(), caption: Some("Throughput".into()), headers, rows: body }
}
