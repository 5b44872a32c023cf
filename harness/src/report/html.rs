//! report.html: the run as one self-contained page. A header with the environment and the measurement rules,
//! then per scenario and connection count the throughput bars (grouped by model, each with its range of
//! places), the latency percentile spectrum (in panels by model family, see `html_latency`), the cost per
//! request, echo bandwidth, and scaling over connections; every chart with a sortable table of its numbers
//! beside or below it.

use std::collections::BTreeMap;

use super::format::{int, load_average, mib, one, pct, ABSENT};
use super::html_latency::latency_figure;
use super::html_throughput::{places_text, throughput_table};
use super::html_page::opt_num;
use super::html_rows::{family_of, sections, worker_sweeps, Row, MODEL_FAMILIES};
use super::html_page::{esc, facts, Cell, Page, Table};
use super::svg::{self, Axis, Bar, BarChart, BarGroup, LineChart, Scale, Series, Unit};
use super::Exporter;
use crate::model::ranks::Places;
use crate::model::{ContestantStatus, MeasurementSummary, RoundsSummary, RunResult, SyscallsPerRequest, UNFAIR_JAIN, Flag};
use crate::os::syscalls::{KINDS, OTHER};
use crate::wire::Scenario;

pub const FILE_NAME: &str = "report.html";

pub struct Html;

impl Exporter for Html {
    fn file_name(&self) -> &'static str {
        FILE_NAME
    }

    fn serialize_ranked(&self, run: &RunResult, places: &[Places]) -> anyhow::Result<Vec<u8>> {
        Ok(render_ranked(run, places, None).into_bytes())
    }

    /// With the run folder, the profiles' flame graphs are drawn from the stacks kept there.
    fn serialize_in(&self, run: &RunResult, places: &[Places], dir: &std::path::Path) -> anyhow::Result<Vec<u8>> {
        Ok(render_ranked(run, places, Some(dir)).into_bytes())
    }
}

pub fn render(run: &RunResult) -> String {
    render_ranked(run, &crate::model::ranks::places(run), None)
}

/// The page; `dir`, the run folder, where the profiles' stacks are read from.
fn render_ranked(run: &RunResult, places: &[Places], dir: Option<&std::path::Path>) -> String {
    let mut page = Page::new(&format!("serverbench run {}", run.run_id));
    let sections = sections(run, places);
    let mut links = vec![("environment".to_string(), "Environment".to_string()), ("rules".into(), "Measurement rules".into())];
    links.extend(super::html_pairs::link(run));
    for (si, ((scenario, _, _), by_connections)) in sections.iter().enumerate() {
        links.extend(by_connections.keys().map(|c| (format!("s{si}-c{c}"), format!("{scenario} · {c}"))));
        if by_connections.len() > 1 {
            links.push((format!("s{si}-scaling"), format!("{scenario} · scaling")));
        }
    }
    let sweeps = worker_sweeps(run, places);
    links.extend(sweeps.iter().enumerate().map(|(i, (title, _))| (format!("w{i}-scaling"), format!("{title} · workers"))));
    if super::html_profiles::any(run) {
        links.push((super::html_profiles::ANCHOR.to_string(), "Where the time went".to_string()));
    }
    // An A/B run's verdicts first, as its answer.
    super::html_pairs::section(&mut page, run);
    super::html_answer::opening(&mut page, run, places);
    page.raw(&contents(&links));
    header(&mut page, run);
    for (si, ((scenario, mode, pipeline), by_connections)) in sections.into_iter().enumerate() {
        let pipelined = if pipeline > 1 { format!(", pipeline {pipeline}") } else { String::new() };
        page.heading(2, &format!("s{si}"), &format!("{scenario} · {mode}{pipelined}"));
        for (connections, rows) in &by_connections {
            let id = format!("s{si}-c{connections}");
            page.heading(3, &id, &format!("{scenario} · {connections} connections"));
            configuration(&mut page, run, &id, &scenario, rows);
        }
        if by_connections.len() > 1 {
            page.heading(3, &format!("s{si}-scaling"), &format!("{scenario} · scaling over connections"));
            scaling(&mut page, run, &format!("s{si}"), "connections", &by_connections);
        }
    }
    for (i, (title, by_workers)) in sweeps.iter().enumerate() {
        page.heading(2, &format!("w{i}-scaling"), &format!("{title} · scaling over workers"));
        scaling(&mut page, run, &format!("w{i}"), "workers", by_workers);
    }
    super::html_profiles::section(&mut page, run, dir);
    problems(&mut page, run);
    page.finish()
}

/// Links to the parts of the page: (anchor, text).
fn contents(links: &[(String, String)]) -> String {
    let items: Vec<String> =
        links.iter().map(|(id, text)| format!(r##"<a href="#{}">{}</a>"##, esc(id), esc(text))).collect();
    format!(r#"<nav class="contents">{}</nav>"#, items.join(""))
}

/// A contestant's line style: its place in the run's list, the same in every chart.
fn style(run: &RunResult, contestant: &str) -> usize {
    run.contestants.iter().position(|c| c.name == contestant).unwrap_or(run.contestants.len())
}

fn header(page: &mut Page, run: &RunResult) {
    let e = &run.environment;
    let c = &run.config;
    let state = if run.interrupted {
        "interrupted; what finished before is complete".to_string()
    } else {
        run.finished_utc.as_ref().map_or("in progress".to_string(), |f| format!("finished {f}"))
    };
    page.note(&format!("Started {}, {state}.", run.started_utc));
    page.heading(2, "environment", "Environment");
    let mut env = vec![
        ("CPU", e.cpu_model.clone()),
        ("Cores", format!("{} online; this run could use {}", e.cores, e.allowed_cpus)),
        ("Memory", format!("{} GiB", one(e.memory_bytes as f64 / f64::from(1u32 << 30)))),
        ("Kernel", e.kernel.clone()),
        ("OS", e.os.clone()),
        ("Load average", load_average(e.load_average, e.load_average_end)),
        ("serverbench", e.serverbench_version.clone()),
    ];
    env.extend(super::machine::facts(run));
    let toolchains = super::machine::toolchains(run);
    env.extend(toolchains.iter().map(|(t, names)| ("Toolchain", format!("{t}: {}", names.join(", ")))));
    env.extend(e.tools.iter().map(|(k, v)| (k.as_str(), v.clone())));
    env.push(("Command", e.command_line.join(" ")));
    env.push(("Catalog", super::machine::catalog_revision(e)));
    page.raw(&facts(&env));
    server_host(page, run);
    client_hosts(page, run);

    page.heading(2, "rules", "Measurement rules");
    let stop = match (c.duration_s, c.requests_per_connection) {
        (Some(d), _) => format!("{d} s each"),
        (None, Some(n)) => format!("{n} requests per connection each"),
        _ => ABSENT.to_string(),
    };
    let mut mode = c.mode.clone();
    if let Some(t) = c.think_time_ms {
        mode.push_str(&format!(", think time {t} ms"));
    }
    if let Some(r) = c.rate_per_s {
        mode.push_str(&format!(", {r} req/s in total"));
    }
    if !c.load_fractions.is_empty() {
        let shares: Vec<String> = c.load_fractions.iter().map(|f| format!("{:.0}%", f * 100.0)).collect();
        mode.push_str(&format!(" at {} of each server's own capacity", shares.join(" and ")));
    }
    if c.connection_per_request {
        mode.push_str(", a new connection per request");
    }
    let connections: Vec<String> = c.connections.iter().map(|n| n.to_string()).collect();
    page.raw(&facts(&[
        ("Run type", c.run_type.clone()),
        ("Server CPUs", format!("{} ({})", c.server_cpus, c.workers_label())),
        (
            "Client CPUs",
            format!("{} ({} thread{})", c.client_cpus, c.client_threads, if c.client_threads == 1 { "" } else { "s" }),
        ),
        ("Rounds", super::html_pairs::rounds_fact(run)),
        ("Round length", stop),
        ("Mode", mode),
        ("Connections", connections.join(", ")),
        ("Pipeline", c.pipeline.to_string()),
        ("Load tool", if c.client_io.is_empty() { c.tool.clone() } else { format!("{} (client I/O: {})", c.tool, c.client_io_label()) }),
        ("Timeout", format!("{} s", c.timeout_s)),
    ]));
    page.note(&format!(
        "Bars of throughput, CPU per request and bandwidth show the median of the measured rounds that count, \
         and their whisker the median's 95% confidence interval from the rounds' order statistics, interpolated \
         to 95% coverage (none below {} rounds); the ± figure is half that interval relative to the median. \
         Beside each throughput bar, the row's range of places in its table by req/s: bars whose ranges \
         overlap (places 3–11, places 5–9) are not told apart by their rounds, whatever order their medians \
         take. Each throughput bar names the server's concurrency style (thread, stackful, stackless, callback) beside it; \
         the bars are grouped by model. Latency percentiles come from the HdrHistogram of all measured rounds merged. A hatched bar marked {client_bound} had rounds in which the server was not busy \
         (below 90% of its CPUs) while the client was: those req/s measure the client, not the server; a row flagged both-busy had rounds where both were at 90% or more. Server \
         CPU and memory cover the server's whole process tree. Click a table header to sort by that column.",
        crate::stats::rounds::MIN_FOR_CI,
        client_bound = Flag::ClientBound
    ));
}

fn configuration(page: &mut Page, run: &RunResult, id: &str, scenario: &str, rows: &[Row]) {
    let mut rows: Vec<&Row> = rows.iter().collect();
    rows.sort_by(|a, b| {
        median_rps(&b.s.requests_per_s).total_cmp(&median_rps(&a.s.requests_per_s)).then(a.m.contestant.cmp(&b.m.contestant))
    });

    let bars = grouped_bars(&rows, |r| {
        let rounds = r.s.requests_per_s.as_ref();
        // The style beside the name: the groups are by model (how work is shared out), and the style says
        // how each server's code is written within it (003's "Concurrency Model").
        Some(Bar {
            label: if r.style == ABSENT { r.m.contestant.clone() } else { format!("{} ({})", r.m.contestant, r.style) },
            value: rounds.map_or(f64::NAN, |s| s.median),
            ci95: rounds.and_then(|s| s.ci95),
            flag: (r.s.client_bound_rounds > 0)
                .then(|| format!("{} ({}/{} rounds)", Flag::ClientBound, r.s.client_bound_rounds, r.s.rounds)),
            place: places_text(r.places.requests_per_s),
            parts: vec![],
        })
    });
    let chart = BarChart::new(
        format!("{scenario}: throughput"),
        "requests per second (median of rounds, 95% CI)",
        Unit::Count,
        bars,
    );
    page.figure(
        &svg::bar_chart(&format!("{id}-throughput"), &chart),
        Some(&throughput_table(&format!("{id}-throughput-table"), &rows)),
    );

    latency_figure(page, id, scenario, &rows);
    super::html_timeline::timeline_figure(page, id, scenario, &rows);

    // The median of the rounds' own figures, as the whisker is its interval and the CPU rank is from them.
    let cpu = grouped_bars(&rows, |r| {
        let per_round = crate::model::ranks::cpu_us_per_request(r.m)?;
        Some(Bar { label: r.m.contestant.clone(), value: per_round.median, ci95: per_round.ci95, flag: None, place: None, parts: vec![] })
    });
    let rss = grouped_bars(&rows, |r| {
        Some(Bar { label: r.m.contestant.clone(), value: r.s.peak_rss_bytes? as f64, ci95: None, flag: None, place: None, parts: vec![] })
    });
    if !cpu.is_empty() || !rss.is_empty() {
        let cpu_chart = BarChart::new(
            format!("{scenario}: server CPU per request"),
            "server CPU microseconds per request (median of rounds, 95% CI; user + system, whole process tree)",
            Unit::Micros,
            cpu,
        );
        let rss_chart = BarChart::new(
            format!("{scenario}: server peak memory"),
            "peak resident memory of the server's process tree",
            Unit::Bytes,
            rss,
        );
        let charts = format!(
            "{}{}",
            svg::bar_chart(&format!("{id}-cpu"), &cpu_chart),
            svg::bar_chart(&format!("{id}-rss"), &rss_chart)
        );
        page.figure(&charts, Some(&cost_table(&format!("{id}-cost-table"), run, &rows)));
    }

    let split = grouped_bars(&rows, |r| {
        let c = r.s.server_cost_per_request.as_ref()?;
        Some(Bar { label: r.m.contestant.clone(), value: c.user_us + c.system_us, ci95: None, flag: None, place: None, parts: vec![c.user_us, c.system_us] })
    });
    if !split.is_empty() {
        let chart = BarChart {
            parts: vec!["user".into(), "kernel".into()],
            ..BarChart::new(
                format!("{scenario}: where the server's CPU per request goes"),
                "server CPU microseconds per request: user, then kernel (every thread of the tree, from /proc)",
                Unit::Micros,
                split,
            )
        };
        page.figure(&svg::bar_chart(&format!("{id}-cost-split"), &chart), None);
    }

    syscalls_chart(page, &format!("{id}-syscalls"), scenario, &rows, "server", |s| s.server_syscalls_per_request.as_ref());
    syscalls_chart(page, &format!("{id}-client-syscalls"), scenario, &rows, "client", |s| s.client_syscalls_per_request.as_ref());

    fairness(page, id, scenario, &rows);

    if Scenario::parse(scenario).is_some_and(Scenario::streams_bytes) {
        let bw = grouped_bars(&rows, |r| {
            let b = r.s.bytes_per_s.as_ref()?;
            Some(Bar { label: r.m.contestant.clone(), value: b.median, ci95: b.ci95, flag: None, place: None, parts: vec![] })
        });
        let chart = BarChart::new(
            format!("{scenario}: bandwidth ({})", rows[0].m.mode),
            "bytes received per second (median of rounds, 95% CI)",
            Unit::BytesPerSec,
            bw,
        );
        page.figure(&svg::bar_chart(&format!("{id}-bandwidth"), &chart), None);
    }
}

/// `whose` (server or client) system calls per request by kind, where counted (`calls` of a row's summary).
fn syscalls_chart(page: &mut Page, id: &str, scenario: &str, rows: &[&Row], whose: &str, calls: impl Fn(&MeasurementSummary) -> Option<&SyscallsPerRequest>) {
    let bars = grouped_bars(rows, |r| {
        let c = calls(&r.s)?;
        Some(Bar { label: r.m.contestant.clone(), value: c.total?, ci95: None, flag: None, place: None, parts: c.by_kind() })
    });
    if bars.is_empty() {
        return;
    }
    let chart = BarChart {
        parts: KINDS.iter().map(|(kind, _)| kind.to_string()).chain([OTHER.to_string()]).collect(),
        ..BarChart::new(
            format!("{scenario}: the {whose}'s system calls per request"),
            format!("system calls per request by kind, counted on the {whose}'s CPUs by the kernel's tracepoints (in one extra round after the measured ones unless --syscall-counts rounds)"),
            Unit::Count,
            bars,
        )
    };
    page.figure(&svg::bar_chart(id, &chart), None);
}

/// How evenly each server served its connections, from its least even measured round (lowest Jain index):
/// the median connection's responses per second, with a whisker from the least to the most served one.
fn fairness(page: &mut Page, id: &str, scenario: &str, rows: &[&Row]) {
    let bars = grouped_bars(rows, |r| {
        let round = r
            .m
            .measured_rounds()
            .filter(|x| x.load.per_connection.is_some() && x.load.duration_s > 0.0)
            .min_by(|a, b| {
                let jain = |x: &crate::model::Round| x.load.per_connection.and_then(|p| p.jain).unwrap_or(0.0);
                jain(a).total_cmp(&jain(b))
            })?;
        let (p, secs) = (round.load.per_connection?, round.load.duration_s);
        let flag = match (p.starved, p.jain) {
            (0, Some(j)) if j >= UNFAIR_JAIN => None,
            (0, j) => Some(format!("{}: Jain {}", Flag::Unfair, j.map_or(ABSENT.to_string(), |j| format!("{j:.2}")))),
            (n, _) => Some(format!("{}: {n} starved", Flag::Unfair)),
        };
        Some(Bar {
            label: r.m.contestant.clone(),
            value: p.median as f64 / secs,
            ci95: Some((p.min as f64 / secs, p.max as f64 / secs)),
            flag,
            place: None,
            parts: vec![],
        })
    });
    if bars.is_empty() {
        return;
    }
    let chart = BarChart::new(
        format!("{scenario}: responses per connection"),
        "responses per second of the median connection; whisker: the least and the most served connection (least even round)",
        Unit::Count,
        bars,
    );
    page.figure(&svg::bar_chart(&format!("{id}-fairness"), &chart), None);
}

fn median_rps(s: &Option<RoundsSummary>) -> f64 {
    s.as_ref().map_or(f64::NEG_INFINITY, |s| s.median)
}

/// Bars grouped by model family, families in a fixed order, rows in the order given; rows without a value
/// are left out, and so are empty groups.
fn grouped_bars(rows: &[&Row], bar: impl Fn(&Row) -> Option<Bar>) -> Vec<BarGroup> {
    let families = MODEL_FAMILIES
        .iter()
        .map(|(f, models)| (*f, format!("{f} ({})", models.join(", "))))
        .chain([("other", "other".to_string())]);
    families
        .map(|(family, label)| BarGroup {
            label,
            bars: rows.iter().filter(|r| family_of(&r.model) == family).filter_map(|r| bar(r)).collect(),
        })
        .filter(|g| !g.bars.is_empty())
        .collect()
}

/// With `--server-host`: the host the servers were built, run and probed on (docs/distributed.md).
fn server_host(page: &mut Page, run: &RunResult) {
    let Some(h) = &run.environment.server_host else { return };
    page.heading(3, "server-host", "Server host");
    page.para(&format!(
        "The servers were built, run and probed on this host by its agent over ssh, from the checkout at {}.",
        run.config.server_checkout.as_deref().unwrap_or("?")
    ));
    let row = vec![
        Cell::text(h.host.clone()),
        Cell::text(h.cpu_model.clone()),
        Cell::num(h.cores.to_string(), h.cores as f64),
        Cell::text(h.kernel.clone()),
        Cell::text(super::hosts::first_clock(h)),
        Cell::text(h.server_address.clone()),
        Cell::text(h.ssh_command.clone()),
    ];
    let headers = ["host", "CPU", "cores", "kernel", "clock offset", "servers listen on", "ssh command"];
    page.raw(&Table { id: "server-host-table".into(), caption: None, headers: headers.iter().map(|h| h.to_string()).collect(), rows: vec![row] }.to_html());
}

/// With `--client-host`: a table of the hosts the load came from (docs/distributed.md).
fn client_hosts(page: &mut Page, run: &RunResult) {
    let hosts = super::hosts::totals(run);
    if hosts.is_empty() {
        return;
    }
    page.heading(3, "client-hosts", "Client hosts");
    page.para(&format!(
        "The load came from these hosts over ssh, to servers on {}; each round's counts, CPU times and latency histograms are their exact sum.",
        run.config.server_address.as_deref().unwrap_or("?")
    ));
    let rows = hosts
        .iter()
        .map(|t| {
            let h = t.record;
            vec![
                Cell::text(h.host.clone()),
                Cell::text(h.cpu_model.clone()),
                Cell::num(h.cores.to_string(), h.cores as f64),
                Cell::text(h.kernel.clone()),
                Cell::text(t.clock()),
                Cell::text(t.path()),
                Cell::num(format!("{:.2}", t.cpu_s), t.cpu_s),
                Cell::num(t.requests.to_string(), t.requests as f64),
                opt_num(t.limit_pct, |l| format!("{l:.0}%")),
                Cell::text(h.ssh_command.clone()),
            ]
        })
        .collect();
    let headers = ["host", "CPU", "cores", "kernel", "clock offset", "network path", "client CPU s (measured rounds)", "requests", "busiest thread, at most", "ssh command"];
    page.raw(&Table { id: "client-hosts-table".into(), caption: None, headers: headers.iter().map(|h| h.to_string()).collect(), rows }.to_html());
}

fn cost_table(id: &str, run: &RunResult, rows: &[&Row]) -> Table {
    let headers = ["contestant", "style", "CPU µs/req", "server CPU %", "peak RSS MiB", "processes", "Res[B]", "category"];
    let body = rows
        .iter()
        .map(|r| {
            let processes = r.m.measured_rounds().map(|x| x.server.processes).max().unwrap_or(0);
            vec![
                Cell::text(&r.m.contestant),
                Cell::text(&r.style),
                opt_num(r.s.server_cpu_us_per_request, |v| format!("{v:.2}")),
                opt_num(r.s.server_utilisation_pct, pct),
                opt_num(r.s.peak_rss_bytes.map(|b| b as f64), mib),
                Cell::num(processes.to_string(), processes as f64),
                opt_num(r.s.response_bytes.map(|b| b as f64), int),
                Cell::text(run.contestant(&r.m.contestant).map_or(ABSENT, |c| c.category.as_str())),
            ]
        })
        .collect();
    Table { id: id.into(), caption: Some("Cost".into()), headers: headers.map(String::from).to_vec(), rows: body }
}

/// req/s and p99 against `axis` (connections, or workers), one line per contestant.
fn scaling(page: &mut Page, run: &RunResult, id: &str, axis: &str, by_connections: &BTreeMap<usize, Vec<Row>>) {
    let mut names: Vec<&str> = by_connections.values().flatten().map(|r| r.m.contestant.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let series = |f: &dyn Fn(&Row) -> Option<f64>| -> Vec<Series> {
        names
            .iter()
            .map(|name| Series {
                label: name.to_string(),
                points: by_connections
                    .iter()
                    .filter_map(|(c, rows)| {
                        rows.iter().find(|r| r.m.contestant == *name).and_then(f).map(|v| (*c as f64, v))
                    })
                    .collect(),
                style: style(run, name),
            })
            .collect()
    };
    let connections: Vec<f64> = by_connections.keys().map(|c| *c as f64).collect();
    let x = Axis {
        label: axis.into(),
        unit: Unit::Count,
        scale: Scale::for_values(connections.iter().copied(), 9.0),
        ticks: by_connections.keys().map(|c| (*c as f64, c.to_string())).collect(),
    };
    let rps = LineChart {
        title: format!("throughput over {axis}"),
        x: x.clone(),
        y: Axis {
            label: "requests per second (median of rounds)".into(),
            unit: Unit::Count,
            scale: Scale::Linear,
            ticks: vec![],
        },
        series: series(&|r| r.s.requests_per_s.as_ref().map(|s| s.median)),
    };
    let p99 = series(&|r| r.s.latency_ns.p99);
    let p99_scale = Scale::for_values(p99.iter().flat_map(|s| s.points.iter().map(|p| p.1)), 20.0);
    let p99 = LineChart {
        title: format!("p99 latency over {axis}"),
        x,
        y: Axis { label: "p99 latency".into(), unit: Unit::Nanos, scale: p99_scale, ticks: vec![] },
        series: p99,
    };
    page.figure(&svg::line_chart(&format!("{id}-scaling-rps"), &rps), None);
    page.figure(&svg::line_chart(&format!("{id}-scaling-p99"), &p99), None);
}

/// Contestants and configurations that were not measured, with the reason; warnings; broken manifests.
fn problems(page: &mut Page, run: &RunResult) {
    let mut rows = Vec::new();
    for c in run.contestants.iter().filter(|c| matches!(c.status, ContestantStatus::Failed | ContestantStatus::Skipped))
    {
        let status = if c.status == ContestantStatus::Failed { "build failed" } else { "skipped" };
        rows.push([c.name.clone(), ABSENT.into(), status.into(), c.reason.clone().unwrap_or_default()]);
    }
    for m in &run.measurements {
        if let Some((status, why)) = m.not_measured() {
            rows.push([m.contestant.clone(), format!("{} c={}", m.scenario, m.connections), status.into(), why]);
        }
    }
    for c in &run.contestants {
        rows.extend(c.warnings.iter().map(|w| [c.name.clone(), ABSENT.into(), "warning".into(), w.clone()]));
    }
    rows.extend(
        run.catalog_errors.iter().map(|e| [ABSENT.into(), ABSENT.into(), "invalid manifest".into(), e.clone()]),
    );
    if rows.is_empty() {
        return;
    }
    page.heading(2, "problems", "Not measured, and warnings");
    let table = Table {
        id: "problems-table".into(),
        caption: None,
        headers: ["contestant", "configuration", "status", "why"].map(String::from).to_vec(),
        rows: rows
            .into_iter()
            .map(|[a, b, c, d]| vec![Cell::text(a), Cell::text(b), Cell::text(c), Cell::text(d).with_class("wrap")])
            .collect(),
    };
    page.raw(&table.to_html());
    page.note("Logs are in the run folder under logs/; run.json keeps the full reasons.");
}
