//! report.html's "Where the time went" (`bench --profile`, docs/profile.md): for each profiled
//! measurement, a flame graph drawn from the folded stacks kept in the run folder's profiles/, a search
//! box that marks every frame whose name holds the text, and a table of the functions with the most
//! samples of their own per 1,000 requests, and for a server whose threads block, the graph of where they
//! waited; a measurement without a profile says why. An A/B run's
//! section opens with B's differential graph against A's and the functions that changed.

use std::path::Path;

use super::format::{int, ABSENT};
use super::html_page::{Cell, Page, Table};
use crate::model::profile::OffCpu;
use crate::model::RunResult;
use crate::profile::folded::Folded;

/// The anchor of the section, for the page's contents.
pub(super) const ANCHOR: &str = "profiles";

/// Marks the frames whose name holds the search text, and says how many.
const SEARCH: &str = r#"<p><label>Search the frames: <input type="search" id="flame-search"></label> <span id="flame-found"></span></p>
<style>svg.flame g.found rect { fill: #CC79A7; }</style>
<script>
document.getElementById('flame-search').addEventListener('input', function (e) {
  var q = e.target.value.toLowerCase(), n = 0;
  document.querySelectorAll('svg.flame g[data-name]').forEach(function (g) {
    var hit = q.length > 0 && g.getAttribute('data-name').toLowerCase().indexOf(q) >= 0;
    g.classList.toggle('found', hit);
    if (hit) { n++; }
  });
  document.getElementById('flame-found').textContent = q ? n + ' frame(s)' : '';
});
</script>"#;

/// Whether the run has a profiled measurement, for the page's contents.
pub(super) fn any(run: &RunResult) -> bool {
    run.measurements.iter().any(|m| m.profile.is_some())
}

/// The section; the flame graphs where the run folder `dir` is known and holds the stacks.
pub(super) fn section(page: &mut Page, run: &RunResult, dir: Option<&Path>) {
    if !any(run) {
        return;
    }
    page.heading(2, ANCHOR, "Where the time went");
    page.note(
        "One more round of each measurement, after its other rounds and left out of every figure, while Linux perf sampled every task \
         on the server's CPUs (cpu-clock, call chains from DWARF). The outermost frame, the task's name, is at the bottom; each frame \
         is as wide as the samples in it; kernel frames end in _[k] and are orange, frames perf could not name are grey.",
    );
    page.raw(SEARCH);
    differential(page, run, dir);
    for m in &run.measurements {
        let Some(p) = &m.profile else { continue };
        let title = format!("{} · {} · {} connections", m.contestant, m.scenario, m.connections);
        page.heading(3, &format!("profile-{}-{}-c{}", m.contestant, m.scenario, m.connections), &title);
        if let Some(why) = &p.unavailable {
            page.note(&format!("No profile: {why}"));
            continue;
        }
        let rps = p.requests_per_s.map_or(ABSENT.to_string(), int);
        let measured = m.summary().requests_per_s.map_or(ABSENT.to_string(), |s| int(s.median));
        let unknown = p.unknown_frames.map_or(ABSENT.to_string(), |u| format!("{:.1}%", u * 100.0));
        page.note(&format!(
            "{} samples at {} Hz over {} requests; {unknown} of the frames unknown; the profiled round's {rps} req/s against the measured rounds' median of {measured}.",
            int(p.samples as f64),
            p.frequency_hz,
            int(p.requests as f64)
        ));
        let stacks = dir.zip(p.folded.as_ref()).and_then(|(dir, file)| std::fs::read_to_string(dir.join(file)).ok()).map(|t| Folded::parse(&t));
        let svg = match &stacks {
            Some(folded) => crate::report::svg::flame_graph(&format!("{title}: {} samples", folded.samples), &folded.stacks, "samples"),
            None => String::new(),
        };
        if stacks.is_none() {
            page.note(&format!("The stacks are in the run folder's {}; this page was written without them.", p.folded.as_deref().unwrap_or("profiles/")));
        }
        let table = Table {
            id: format!("profile-{}-{}-c{}-table", m.contestant, m.scenario, m.connections),
            caption: Some("the functions with the most samples of their own".into()),
            headers: ["function", "samples per 1,000 requests"].map(String::from).to_vec(),
            rows: p
                .top_frames
                .iter()
                .map(|f| vec![Cell::text(f.frame.clone()), Cell::num(format!("{:.2}", f.samples_per_1000_requests), f.samples_per_1000_requests)])
                .collect(),
        };
        page.wide_figure(&svg, Some(&table));
        if let Some(off) = &p.off_cpu {
            off_cpu(page, &format!("profile-{}-{}-c{}-off", m.contestant, m.scenario, m.connections), &title, off, dir);
        }
    }
}

/// Where a blocking server's tasks waited: the graph of its switches off a CPU and where they blocked.
fn off_cpu(page: &mut Page, id: &str, title: &str, off: &OffCpu, dir: Option<&Path>) {
    if let Some(why) = &off.unavailable {
        page.note(&format!("Where it waited: no record, {why}"));
        return;
    }
    page.note(&format!(
        "Where it waited: a second round recorded every switch off a CPU of a task that blocked ({} over {} requests, {:.2} per 1,000), \
         each with its call chain, the kernel's whole and the user frames that frame pointers reach; the graph counts switches, not the time waited.",
        int(off.switches as f64),
        int(off.requests as f64),
        off.switches as f64 * 1000.0 / off.requests.max(1) as f64
    ));
    let stacks = dir.zip(off.folded.as_ref()).and_then(|(dir, file)| std::fs::read_to_string(dir.join(file)).ok()).map(|t| Folded::parse(&t));
    let svg = stacks.map_or_else(String::new, |f| crate::report::svg::flame_graph(&format!("{title}: where it waited, {} switches", f.samples), &f.stacks, "switches"));
    let table = Table {
        id: format!("{id}-table"),
        caption: Some("where its tasks blocked: the system call, or the innermost frame outside the scheduler".into()),
        headers: ["blocked in", "switches per 1,000 requests"].map(String::from).to_vec(),
        rows: off
            .blocked_in
            .iter()
            .map(|f| vec![Cell::text(f.frame.clone()), Cell::num(format!("{:.2}", f.samples_per_1000_requests), f.samples_per_1000_requests)])
            .collect(),
    };
    page.wide_figure(&svg, Some(&table));
}

/// An A/B run's differential flame graph of B against A and the functions that changed beside it.
fn differential(page: &mut Page, run: &RunResult, dir: Option<&Path>) {
    let Some(ab) = run.ab.as_ref() else { return };
    let Some(change) = &ab.profile_change else { return };
    let profile = |name: &str| run.measurements.iter().find(|m| m.contestant == name).and_then(|m| m.profile.as_ref());
    let (Some(pa), Some(pb)) = (profile(&ab.a.name), profile(&ab.b.name)) else { return };
    let title = format!("{} against {}", ab.b.name, ab.a.name);
    page.heading(3, "profile-change", &title);
    page.note(&format!(
        "B's graph, each frame coloured by the change of its samples per 1,000 requests (itself and below) from A: red grew, blue shrank, \
         white within the sampling noise ({} samples of A, {} of B). Frames only A had are not drawn; the table lists every function whose \
         samples of its own changed beyond the noise.",
        int(change.a_samples as f64),
        int(change.b_samples as f64)
    ));
    let read = |p: &crate::model::profile::Profile| dir.zip(p.folded.as_ref()).and_then(|(dir, file)| std::fs::read_to_string(dir.join(file)).ok()).map(|t| Folded::parse(&t));
    let svg = match (read(pa), read(pb)) {
        (Some(a), Some(b)) => crate::report::svg::differential_flame_graph(&title, (&a.stacks, pa.requests), (&b.stacks, pb.requests)),
        _ => String::new(),
    };
    let table = Table {
        id: "profile-change-table".into(),
        caption: Some("the functions whose samples of their own per 1,000 requests changed beyond the noise".into()),
        headers: ["function", "A", "B", "change", "z", "called from"].map(String::from).to_vec(),
        rows: change
            .frames
            .iter()
            .map(|f| {
                let row = super::profiles::changed_row(f);
                vec![
                    Cell::text(row[0].clone()),
                    Cell::num(row[1].clone(), f.a_per_1000_requests),
                    Cell::num(row[2].clone(), f.b_per_1000_requests),
                    Cell::num(row[3].clone(), f.per_1000_requests()),
                    Cell::num(row[4].clone(), f.z),
                    Cell::text(row[5].clone()),
                ]
            })
            .collect(),
    };
    page.wide_figure(&svg, Some(&table));
}
