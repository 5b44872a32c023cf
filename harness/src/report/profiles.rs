//! summary.md's "Where the time went" (`bench --profile`): per profiled measurement, its samples, the share
//! of frames left unknown, what the profiled round served against the measured rounds, and the functions
//! with the most samples of their own per 1,000 requests; in an A/B run, the functions whose samples of
//! their own per request changed beyond the sampling noise from A to B. report.html draws the flame graphs
//! (`html_profiles.rs`).

use super::format::{int, ABSENT};
use super::table::{Align, Table};
use crate::model::profile::{FrameChange, ProfileChange};
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
    let waits = off_cpu(run);
    let change = run.ab.as_ref().and_then(|ab| ab.profile_change.as_ref().map(|c| (ab, c)));
    let change = change.map_or_else(String::new, |(ab, c)| changed_frames(&ab.a.name, &ab.b.name, c));
    format!(
        "\n## Where the time went\n\nOne profiled round per measurement, after its other rounds and in none of their figures: Linux perf sampled \
         every task on the server's CPUs at 999 Hz (cpu-clock, call chains from DWARF). The folded stacks are in profiles/, \
         the flame graphs in report.html; kernel functions end in _[k].\n\n{}{waits}{change}",
        t.markdown()
    )
}

/// Where the blocking servers waited, as a table; empty where none was recorded.
fn off_cpu(run: &RunResult) -> String {
    let waited: Vec<_> = run.measurements.iter().filter_map(|m| m.profile.as_ref().and_then(|p| p.off_cpu.as_ref()).map(|o| (m, o))).collect();
    if waited.is_empty() {
        return String::new();
    }
    let mut t = Table::new(&[
        ("Name", Align::Left),
        ("Scenario", Align::Left),
        ("Conns", Align::Right),
        ("Blocking switches per 1,000 requests", Align::Right),
        ("Blocked in, per 1,000 requests", Align::Left),
    ]);
    for (m, o) in waited {
        let (per_1000, at) = match &o.unavailable {
            Some(why) => (ABSENT.to_string(), format!("not recorded: {}", why.lines().next().unwrap_or_default())),
            None => (
                format!("{:.2}", o.switches as f64 * 1000.0 / o.requests.max(1) as f64),
                o.blocked_in.iter().take(FRAMES).map(|f| format!("{} {:.2}", f.frame, f.samples_per_1000_requests)).collect::<Vec<_>>().join(", "),
            ),
        };
        t.row(vec![m.contestant.clone(), m.scenario.clone(), m.connections.to_string(), per_1000, at]);
    }
    format!(
        "\n### Where the blocking servers waited\n\nFor each server whose threads block, a second profiled round recorded every switch off a CPU \
         of a task that blocked (preemption left out), with its call chain: where the waiting happens, counted in switches, not in time. \
         The stacks are in profiles/*.off-cpu.folded.\n\n{}",
        t.markdown()
    )
}

/// B's profile against A's: the functions that changed, as a table.
fn changed_frames(a: &str, b: &str, c: &ProfileChange) -> String {
    let head = format!(
        "\n### {b} against {a}\n\nEach function's samples of its own per 1,000 requests, over {} samples of A and {} of B; listed where the \
         change stands at least {} standard errors of the sampling noise away from none, the largest first.\n\n",
        int(c.a_samples as f64),
        int(c.b_samples as f64),
        crate::profile::diff::BEYOND_NOISE
    );
    if c.frames.is_empty() {
        return format!("{head}No function's samples per request changed beyond the sampling noise.\n");
    }
    let mut t = Table::new(&[("Function", Align::Left), ("A", Align::Right), ("B", Align::Right), ("Change", Align::Right), ("z", Align::Right), ("Called from", Align::Left)]);
    for f in &c.frames {
        t.row(changed_row(f));
    }
    format!("{head}{}", t.markdown())
}

/// A changed function's row: its name, A's and B's samples per 1,000 requests, their difference, how many
/// standard errors that is, and its callers.
pub(super) fn changed_row(f: &FrameChange) -> Vec<String> {
    let signed = |v: f64| if v >= 0.0 { format!("+{v:.2}") } else { format!("{v:.2}") };
    vec![
        f.frame.clone(),
        format!("{:.2}", f.a_per_1000_requests),
        format!("{:.2}", f.b_per_1000_requests),
        signed(f.per_1000_requests()),
        format!("{:.1}", f.z),
        f.via.replace(';', " → "),
    ]
}
