//! report.html over time: each configuration's rounds drawn interval by interval on the run's time axis,
//! flagged rounds marked, the worst interval named in the table; and runs stored before intervals were
//! kept, which still read and say that nothing is drawn.

#[path = "fixtures/runs/synthetic.rs"]
#[allow(dead_code)]
mod synthetic;

use std::path::Path;

use serverbench::model::{RunResult, Flag};
use serverbench::report::html;
use serverbench::stats::histogram::{new_latency_histogram, to_base64};
use serverbench::model::Interval;

/// The base synthetic run, its rounds placed on a time axis one after another, with c-epoll's third
/// measured round at hello/16 stalled for 200 ms in its third interval and its second flagged cpu-drift.
fn stalled_run() -> RunResult {
    let mut run = synthetic::run("base", &synthetic::base_configs());
    let mut at_s = 0.0;
    for m in &mut run.measurements {
        for r in &mut m.rounds {
            r.machine.started_s = Some(at_s);
            at_s += synthetic::ROUND_S + 0.5;
        }
    }
    let m = run.measurements.iter_mut().find(|m| m.contestant == "c-epoll" && m.scenario == "hello" && m.connections == 16).unwrap();
    let mut measured = m.rounds.iter_mut().filter(|r| !r.warmup);
    measured.next();
    measured.next().unwrap().flags.push(Flag::CpuDrift);
    let third = measured.next().unwrap();
    let mut slow = new_latency_histogram();
    slow.record_n(200_000_000, 40).unwrap();
    third.load.intervals.as_mut().unwrap().each[2] = Interval { requests: 40, errors: 0, latency: to_base64(&slow) };
    run
}

fn between<'a>(page: &'a str, start: &str, end: &str) -> &'a str {
    let at = page.find(start).unwrap_or_else(|| panic!("no {start}"));
    let rest = &page[at..];
    &rest[..rest.find(end).unwrap_or(rest.len())]
}

#[test]
fn each_server_is_drawn_over_the_run_with_its_flagged_rounds_and_its_worst_interval() {
    let page = html::render(&stalled_run());
    let figure = between(&page, r#"<details class="timeline""#, "</details>");
    assert!(figure.contains("hello over time"), "{}", &figure[..200.min(figure.len())]);
    let panels: Vec<&str> = figure.split(r#"<svg id="s0-c16-timeline-p"#).skip(1).collect();
    let servers = synthetic::base_configs().iter().filter(|c| c.scenario == "hello" && c.connections == 16).count();
    assert_eq!(panels.len(), servers, "a panel per server");
    let epoll = panels.iter().find(|p| p.contains(">c-epoll</text>")).expect("c-epoll's panel");
    assert!(epoll.contains(&format!(">{}</text>", Flag::CpuDrift)), "the cpu-drift round is named");
    assert!(epoll.contains("measured round 2: cpu-drift"), "and shaded with its name");
    assert!(epoll.contains("warm-up round 1: warm-up"), "the warm-up round is shaded");
    // Every round of every server is on the same time axis: the same seconds under every panel.
    let seconds = |p: &str| -> Vec<String> { p.split(r##"text-anchor="middle" fill="#444">"##).skip(1).map(|t| t.split('<').next().unwrap().to_string()).collect() };
    assert!(seconds(epoll).len() >= 3, "{:?}", seconds(epoll));
    assert!(panels.iter().all(|p| seconds(p) == seconds(epoll)), "the panels share the time axis");
    // The table names the stall: 200 ms, in round 3, in the interval from 1.0 to 1.5 s of it.
    let table = between(&page, r#"<table id="s0-c16-timeline-table""#, "</table>");
    let row = table.split("<tr>").find(|r| r.contains("<td>c-epoll</td>")).expect("c-epoll's row");
    assert!(row.contains(">200 ms<") && row.contains("round 3, 1.25 s into it"), "{row}");
    let others = table.split("<tr>").filter(|r| r.contains("<td>") && !r.contains("c-epoll"));
    for r in others {
        assert!(!r.contains(">200 ms<"), "only c-epoll stalled: {r}");
    }
}

#[test]
fn a_run_stored_before_intervals_reads_and_draws_nothing_over_time() {
    // A real run, stored (trimmed) when rounds kept a per-second timeline.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs/unchanged-A");
    let run = serverbench::report::load(&dir).expect("the stored run reads");
    let rounds: Vec<_> = run.measurements.iter().flat_map(|m| m.rounds.iter()).collect();
    assert!(!rounds.is_empty());
    assert!(rounds.iter().all(|r| r.load.intervals.is_none()), "no intervals in a run stored before them");
    assert!(rounds.iter().all(|r| r.load.timeline.is_some()), "its per-second timeline is read as it was");
    assert!(run.config.interval_ms.is_none());
    let page = html::render(&run);
    assert!(page.contains("no round has interval histograms"), "the page says why nothing is drawn over time");
    assert!(!page.contains("-timeline-p0"));
}
