//! summary.md's "Where the time went" (`bench --profile`): per profiled measurement, its samples, the share
//! of frames left unknown, what the profiled round served against the measured rounds, and the functions
//! with the most samples of their own per 1,000 requests. report.html draws the flame graphs
//! (`html_profiles.rs`).

use super::format::{int, ABSENT};
use super::table::{Align, Table};
use crate::model::RunResult;

/// Functions named per row.
const FRAMES: usize = 3;

/// The section, empty when no measurement was profiled.
pub(super) fn markdown(run: &RunResult) -> String {
    let profiled: Vec<_> = run.measurements.iter().filter_map(|m| m.profile.as_ref().map(|p| (m, p))).collect();
    if profiled.is_empty() {
        return String::new();
    }
    let mut t = Table::new(&[
        ("Name", Align::Left),
        ("Scenario", Align::Left),
        ("Conns", Align::Right),
        ("Samples", Align::Right),
        ("Unknown frames", Align::Right),
        ("Profiled req/s", Align::Right),
        ("Measured req/s", Align::Right),
        ("Most samples of their own, per 1,000 requests", Align::Left),
    ]);
    for (m, p) in profiled {
        let own = match &p.unavailable {
            Some(why) => format!("no profile: {}", why.lines().next().unwrap_or_default()),
            None => p.top_frames.iter().take(FRAMES).map(|f| format!("{} {:.2}", f.frame, f.samples_per_1000_requests)).collect::<Vec<_>>().join(", "),
        };
        t.row(vec![
            m.contestant.clone(),
            m.scenario.clone(),
            m.connections.to_string(),
            if p.unavailable.is_some() { ABSENT.into() } else { int(p.samples as f64) },
            p.unknown_frames.map_or(ABSENT.into(), |u| format!("{:.1}%", u * 100.0)),
            p.requests_per_s.map_or(ABSENT.into(), int),
            m.summary().requests_per_s.map_or(ABSENT.into(), |s| int(s.median)),
            own,
        ]);
    }
    format!(
        "\n## Where the time went\n\nOne profiled round per measurement, after its other rounds and in none of their figures: Linux perf sampled \
         every task on the server's CPUs at 999 Hz (cpu-clock, call chains from DWARF). The folded stacks are in profiles/, \
         the flame graphs in report.html; kernel functions end in _[k].\n\n{}",
        t.markdown()
    )
}
