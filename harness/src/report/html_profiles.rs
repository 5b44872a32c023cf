//! report.html's "Where the time went" (`bench --profile`, docs/profile.md): for each profiled
//! measurement, a flame graph drawn from the folded stacks kept in the run folder's profiles/, a search
//! box that marks every frame whose name holds the text, and a table of the functions with the most
//! samples of their own per 1,000 requests; a measurement without a profile says why.

use std::path::Path;

use super::format::{int, ABSENT};
use super::html_page::{Cell, Page, Table};
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
    }
}
