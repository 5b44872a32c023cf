//! summary.md: the run's setting, then per configuration the throughput table, the latency table and the
//! table in httpbench's columns; then what was not measured and why.

use super::format::{capacity, capacity_header, int, load_average, mib, ms, one, or_absent, pct, us, ABSENT};
use super::table::{Align, Table};
use super::Exporter;
use crate::model::ranks;
use crate::model::{ContestantStatus, Measurement, MeasurementStatus, MeasurementSummary, RunResult, Flag};

pub const FILE_NAME: &str = "summary.md";

pub struct Markdown;

impl Exporter for Markdown {
    fn file_name(&self) -> &'static str {
        FILE_NAME
    }

    fn serialize_ranked(&self, run: &RunResult, places: &[ranks::Places]) -> anyhow::Result<Vec<u8>> {
        Ok(render_ranked(run, places).into_bytes())
    }
}

use Align::{Left as L, Right as R};

/// summary.md of a run.
pub fn render(run: &RunResult) -> String {
    render_ranked(run, &ranks::places(run))
}

/// summary.md of a run whose places are known (`model::ranks::places`).
fn render_ranked(run: &RunResult, places: &[ranks::Places]) -> String {
    let mut out = format!("# serverbench run {}\n", run.run_id);
    // An A/B run leads with its verdicts.
    out.push_str(&super::pairs::markdown(run));
    out.push('\n');
    out.push_str(&super::answer::markdown(&super::answer::answers(run, places)));
    out.push_str("\n## Environment and rules\n\n");
    out.push_str(&setting(run));
    for ((scenario, mode, connections, pipeline), group) in ranks::tables(run) {
        let (controls, group): (Vec<_>, Vec<_>) = group.into_iter().partition(|(_, m)| is_control(run, m));
        let mut measured: Vec<(&Measurement, MeasurementSummary, ranks::Places)> = group
            .into_iter()
            .filter(|(_, m)| !m.measured_rounds().collect::<Vec<_>>().is_empty())
            .map(|(i, m)| (m, m.summary(), places[i]))
            .collect();
        if measured.is_empty() {
            continue;
        }
        let pipelined = if pipeline > 1 { format!(", pipeline {pipeline}") } else { String::new() };
        let echo = match run.config.echo.as_deref() {
            Some(kind) if scenario == crate::wire::Scenario::Echo.name() => format!(" ({kind})"),
            _ => String::new(),
        };
        out.push_str(&format!("\n## {scenario}{echo} · {mode} · {connections} connections{pipelined}\n\n"));
        measured.sort_by(|a, b| rps(&b.1).total_cmp(&rps(&a.1)).then_with(|| a.0.contestant.cmp(&b.0.contestant)));
        let (sorted, row_places): (Vec<(&Measurement, MeasurementSummary)>, Vec<ranks::Places>) =
            measured.into_iter().map(|(m, s, p)| ((m, s), p)).unzip();
        out.push_str(&throughput(run, &sorted, &row_places, &scenario).markdown());
        for (_, m) in controls {
            out.push_str(&control_line(m));
        }
        let from_tool = sorted.iter().any(|(_, s)| !s.latency_from_histogram);
        let corrected = if mode == "rate" {
            "; in rate mode from each request's intended send time (corrected for coordinated omission; run.json also holds the uncorrected histogram)"
        } else {
            ""
        };
        let adjusted = if sorted.iter().any(|(_, s)| s.latency_factor.is_some()) { ADJUSTED_LATENCY } else { "" };
        out.push_str(&format!(
            "\nLatency in microseconds{}{corrected}{adjusted}.\n\n",
            if from_tool {
                " (without a histogram from the load tool, quantiles are the mean of the rounds' own figures)"
            } else {
                ", from the histogram of all measured rounds"
            }
        ));
        out.push_str(&latency(run, &sorted).markdown());
        // As the source documents do, raw runtimes and frameworks with their own HTTP stack apart: their
        // responses differ in size (Res[B]) and their work per request in kind.
        for (category, what) in [("micro", "raw runtimes"), ("platform", "frameworks with their own HTTP stack")] {
            let rows: Vec<_> = sorted.iter().filter(|(m, _)| run.contestant(&m.contestant).is_some_and(|c| c.category == category)).cloned().collect();
            if !rows.is_empty() {
                out.push_str(&format!("\n{category} ({what}), in httpbench's columns (latency in milliseconds):\n\n"));
                out.push_str(&classic(run, &rows).markdown());
            }
        }
        let other: Vec<_> = sorted.iter().filter(|(m, _)| !run.contestant(&m.contestant).is_some_and(|c| c.category == "micro" || c.category == "platform")).cloned().collect();
        if !other.is_empty() {
            out.push_str("\nIn httpbench's columns (latency in milliseconds):\n\n");
            out.push_str(&classic(run, &other).markdown());
        }
        if sorted.iter().any(|(_, s)| s.server_cost_per_request.is_some() || s.client_cost_per_request.is_some() || s.server_syscalls_per_request.is_some()) {
            out.push_str(
                "\nWhere a request's cost goes, per request over the measured rounds: user and kernel CPU microseconds \
                 and context switches (voluntary / involuntary), of the server's threads (from /proc) and of the \
                 client's (getrusage), their moves to another CPU (migrations, server / client), and the client's own system calls (counted where it makes them); \
                 the server's system calls per request, counted on its CPUs by the kernel's tracepoints, and the three it made most; \
                 and the client's, counted the same way on the client's CPUs.\n\n",
            );
            out.push_str(&cost(run, &sorted).markdown());
            // A missing count says why once, not as a bare dash on every row.
            let mut why: Vec<&str> = sorted.iter().filter_map(|(_, s)| s.server_syscalls_unavailable.as_deref()).collect();
            why.sort_unstable();
            why.dedup();
            for reason in why {
                out.push_str(&format!("\nServer system calls not counted: {reason}.\n"));
            }
            if sorted.iter().any(|(_, s)| s.server_syscalls_from.as_deref() == Some("extra-round")) {
                out.push_str(
                    "\nThe server's system calls were counted in one extra round after the measured ones: counting makes \
                     every system call about 200 ns dearer, so no other figure is read from that round.\n",
                );
            }
        }
    }
    out.push_str(&super::profiles::markdown(run));
    out.push_str(&problems(run));
    out.push_str(&contestants(run));
    out.push_str(&super::pairs::pairs_table(run));
    out
}

/// What the latency figures are where the machine model adjusted them.
const ADJUSTED_LATENCY: &str = "; at the machine model's reference state: each row's figures divided by the geometric mean of its rounds' latency factor (the model's p99 factor, which moves every quantile alike); summary.csv and run.json keep them as measured too";

fn rps(s: &MeasurementSummary) -> f64 {
    s.requests_per_s.as_ref().map(|r| r.median).unwrap_or(0.0)
}

fn setting(run: &RunResult) -> String {
    let e = &run.environment;
    let c = &run.config;
    let stop = match (c.duration_s, c.requests_per_connection) {
        (Some(d), _) => format!("of {d} s"),
        (None, Some(n)) => format!("of {n} requests per connection"),
        _ => String::new(),
    };
    let state = if run.interrupted {
        "interrupted; what finished before is complete".to_string()
    } else {
        match &run.finished_utc {
            Some(f) => format!("finished {f}"),
            None => "in progress".to_string(),
        }
    };
    let mut mode = c.mode.clone();
    if let Some(t) = c.think_time_ms {
        mode.push_str(&format!(" (think time {t} ms)"));
    }
    if let Some(r) = c.rate_per_s {
        mode.push_str(&format!(" at {r} req/s"));
    }
    if !c.load_fractions.is_empty() {
        let shares: Vec<String> = c.load_fractions.iter().map(|f| format!("{:.0}%", f * 100.0)).collect();
        mode.push_str(&format!(" at {} of each server's own capacity", shares.join(" and ")));
    }
    if c.connection_per_request {
        mode.push_str(", a new connection per request");
    }
    let tools: Vec<String> = e.tools.iter().map(|(k, v)| format!("{k}: {v}")).collect();
    let mut s = format!(
        "- Started {}, {state}\n- Machine: {}, {} CPUs, {} GiB, {}, {}; load average {}\n- Command: `{}`\n\
         - Rules: {}, server CPUs {} ({}), client CPUs {} ({} thread{}); {} warm-up + {} {stop}, {}; mode {mode}; \
         load from {}{}\n",
        run.started_utc,
        e.cpu_model,
        e.cores,
        one(e.memory_bytes as f64 / f64::from(1u32 << 30)),
        e.kernel,
        e.os,
        load_average(e.load_average, e.load_average_end),
        e.command_line.join(" "),
        c.run_type,
        c.server_cpus,
        c.workers_label(),
        c.client_cpus,
        c.client_threads,
        if c.client_threads == 1 { "" } else { "s" },
        c.warmup_rounds,
        rounds_rule(run),
        if c.ab.is_some() { "A and B back to back, each going first in turn" } else { "interleaved in a new random order each pass" },
        c.tool,
        if c.client_io.is_empty() { String::new() } else { format!(" (client I/O: {})", c.client_io_label()) },
    );
    for (label, words) in super::machine::facts(run) {
        let words = if label == "Kernel command line" { format!("`{words}`") } else { words };
        s.push_str(&format!("- {label}: {words}\n"));
    }
    let toolchains: Vec<String> = super::machine::toolchains(run).into_iter().map(|(t, names)| format!("{t} ({})", names.join(", "))).collect();
    if !toolchains.is_empty() {
        s.push_str(&format!("- Toolchains (each contestant's version line): {}\n", toolchains.join("; ")));
    }
    if !tools.is_empty() {
        s.push_str(&format!("- Tools: {}\n", tools.join("; ")));
    }
    s.push_str(&format!("- Catalog: {}\n", super::machine::catalog_revision(e)));
    for note in &c.notes {
        s.push_str(&format!("- Note: {note}\n"));
    }
    s.push_str(&server_host(run));
    s.push_str(&client_hosts(run));
    s.push_str(&format!("- Steadiness: {}\n", super::steadiness::describe(run)));
    s
}

/// With `--server-host`: where the servers were built, run and probed, and what that host is.
fn server_host(run: &RunResult) -> String {
    let Some(h) = &run.environment.server_host else { return String::new() };
    format!(
        "- Servers on server host {} (checkout {}), listening on {}, probed there by its agent: {}, {} CPUs, {}; clock {}\n",
        h.host,
        run.config.server_checkout.as_deref().unwrap_or("?"),
        h.server_address,
        h.cpu_model,
        h.cores,
        h.kernel,
        super::hosts::first_clock(h)
    )
}

/// With `--client-host`: which hosts loaded the servers, what they are, and the client CPU each spent over
/// the measured rounds (the merged figures are exact sums: docs/distributed.md).
fn client_hosts(run: &RunResult) -> String {
    let hosts = super::hosts::totals(run);
    if hosts.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "- Load from {} client hosts over ssh, merged (connections shared out; counts, CPU and latency histograms added); servers on {}:\n",
        hosts.len(),
        run.config.server_address.as_deref().unwrap_or("?")
    );
    for t in &hosts {
        let h = t.record;
        s.push_str(&format!(
            "  - {}: {}, {} CPUs, {}; clock {}; {}; client CPU {:.2} s for {} requests over the measured rounds, busiest thread at most {}\n",
            h.host,
            h.cpu_model,
            h.cores,
            h.kernel,
            t.clock(),
            t.path(),
            t.cpu_s,
            t.requests,
            t.limit()
        ));
    }
    s
}

/// "measured rounds until ..." or "3 measured rounds": the rules line here, the "Rounds" fact of report.html.
pub(super) fn rounds_rule(run: &RunResult) -> String {
    let c = &run.config;
    if c.ab.is_some() {
        return super::pairs::rounds_rule(c);
    }
    match c.target_ci_pct {
        Some(t) if c.rounds == "auto" => format!(
            "measured rounds until the median's 95% CI is within ±{t}% (at least {}, at most {}{})",
            crate::stats::rounds::MIN_FOR_CI,
            c.max_rounds.unwrap_or(c.measured_rounds),
            run.budget_words().map(|w| format!(", {w}")).unwrap_or_default()
        ),
        _ => format!("{} measured rounds", c.measured_rounds),
    }
}

fn flags(m: &Measurement, s: &MeasurementSummary) -> String {
    let mut f = Vec::new();
    f.extend(s.bound_flags());
    f.extend(s.unsaturated_flag());
    if s.ramp_incomplete_rounds > 0 {
        f.push(format!("{} {}/{}", Flag::RampIncomplete, s.ramp_incomplete_rounds, s.rounds));
    }
    if s.unfair_rounds > 0 {
        f.push(format!("{} {}/{}", Flag::Unfair, s.unfair_rounds, s.rounds));
    }
    f.extend(s.served_flag());
    if s.rate_not_held_rounds > 0 {
        f.push(format!("{} {}/{}", Flag::RateNotHeld, s.rate_not_held_rounds, s.rounds));
    }
    f.extend(s.closes_flags());
    if s.errors.total() > 0 {
        f.push(format!("errors {}", s.errors.total()));
    }
    if let Some(r) = &s.requests_per_s {
        if !r.outliers.is_empty() {
            f.push(format!("outliers {}", r.outliers.len()));
        }
    }
    if s.rounds_disturbed > 0 {
        f.push(format!("disturbed {} (run again)", s.rounds_disturbed));
    }
    if s.rounds_cpu_drift > 0 {
        f.push(format!("cpu-drift {}/{}", s.rounds_cpu_drift, s.rounds));
    }
    f.extend(s.cpu_from_ticks_flag());
    match m.status {
        MeasurementStatus::Interrupted => f.push(format!("interrupted after {} rounds", s.rounds)),
        MeasurementStatus::Failed => f.push(format!("failed after {} rounds", s.rounds)),
        _ => {}
    }
    f.join(", ")
}

/// The throughput table of `scenario`; `places[i]` are the places of `rows[i]`. An echo's exchanges are
/// its requests (`echoes/s`, `CPU us/echo`), and a raw TCP scenario adds the bytes it received a second.
fn throughput(run: &RunResult, rows: &[(&Measurement, MeasurementSummary)], places: &[ranks::Places], scenario: &str) -> Table {
    let searched = capacity_header(rows.iter().map(|(m, _)| *m));
    let raw = crate::wire::Scenario::parse(scenario).is_some_and(crate::wire::Scenario::streams_bytes);
    let (per_s, cpu_per) = if raw { ("echoes/s", "CPU us/echo") } else { ("req/s", "CPU us/req") };
    let mut columns = vec![("rank", R), ("Name", L), ("style", L), (per_s, R), ("95% CI", R)];
    if raw {
        columns.push(("MB/s", R));
    }
    if let Some(header) = &searched {
        columns.push((header.as_str(), R));
    }
    columns.extend([("server CPU %", R), (cpu_per, R), ("CPU 95% CI", R), ("CPU rank", R), ("peak RSS MiB", R), ("PSS MiB", R)]);
    // With two workers or more (multiCore, or a thread per connection): how evenly they shared the work.
    let balance = rows.iter().any(|(_, s)| s.worker_imbalance.is_some());
    if balance {
        columns.push(("worker imbalance", R));
    }
    columns.extend([("client CPU %", R), ("flags", L)]);
    let mut t = Table::new(&columns);
    for ((m, s), places) in rows.iter().zip(places) {
        let r = s.requests_per_s.as_ref();
        let mut cells = vec![
            place(places.requests_per_s),
            m.contestant.clone(),
            style(run, m),
            or_absent(r.map(|r| r.median), int),
            r.and_then(|r| r.ci95_relative_pct()).map(|p| format!("±{p:.1}%")).unwrap_or_else(|| ABSENT.into()),
        ];
        if raw {
            cells.push(or_absent(s.bytes_per_s.as_ref().map(|b| b.median / 1e6), one));
        }
        if searched.is_some() {
            cells.push(capacity(m));
        }
        cells.extend([
            or_absent(s.server_utilisation_pct, pct),
            or_absent(s.server_cpu_us_per_request, one),
            ranks::cpu_us_per_request(m).and_then(|c| c.ci95_relative_pct()).map(|p| format!("±{p:.1}%")).unwrap_or_else(|| ABSENT.into()),
            place(places.cpu_per_request),
            or_absent(s.peak_rss_bytes.map(|b| b as f64), mib),
            or_absent(s.pss_bytes.map(|b| b as f64), mib),
        ]);
        if balance {
            cells.push(s.worker_imbalance.map(|x| format!("{x:.2}x")).unwrap_or_else(|| ABSENT.into()));
        }
        cells.extend([or_absent(s.client_busy_pct, pct), flags(m, s)]);
        t.row(cells);
    }
    t
}

fn is_control(run: &RunResult, m: &Measurement) -> bool {
    run.contestant(&m.contestant).is_some_and(|c| c.control)
}

/// The run's control, apart from the table: it measures the machine, not an approach.
fn control_line(m: &Measurement) -> String {
    let s = m.summary();
    let r = s.requests_per_s.as_ref();
    format!(
        "\nThe run's control ({}, harness/control: a minimal epoll hello server, measured like the rows above and \
         not ranked, so that `compare` can tell the machine's change from a server's): {} req/s ({}), CPU {} us/req, \
         p99 {} us.\n",
        m.contestant,
        or_absent(r.map(|r| r.median), int),
        r.and_then(|r| r.ci95_relative_pct()).map_or_else(|| format!("95% CI {ABSENT}"), |p| format!("95% CI ±{p:.1}%")),
        or_absent(s.server_cpu_us_per_request, one),
        or_absent(s.latency_ns.p99, us),
    )
}

/// A row's range of places ("3–11"), or the absent mark for a row that takes none.
fn place(range: Option<ranks::PlaceRange>) -> String {
    range.map_or_else(|| ABSENT.into(), |r| r.label())
}

/// A row's concurrency style (the manifest's `style`), or the absent mark.
fn style(run: &RunResult, m: &Measurement) -> String {
    run.contestant(&m.contestant).and_then(|c| c.style.clone()).unwrap_or_else(|| ABSENT.into())
}

fn latency(run: &RunResult, rows: &[(&Measurement, MeasurementSummary)]) -> Table {
    let mut t = Table::new(&[
        ("Name", L),
        ("style", L),
        ("mean", R),
        ("median", R),
        ("q0.9", R),
        ("q0.99", R),
        ("q0.999", R),
        ("q0.9999", R),
    ]);
    for (m, s) in rows {
        let l = &s.latency_ns;
        t.row(vec![
            m.contestant.clone(),
            style(run, m),
            or_absent(l.mean, us),
            or_absent(l.p50, us),
            or_absent(l.p90, us),
            or_absent(l.p99, us),
            or_absent(l.p999, us),
            or_absent(l.p9999, us),
        ]);
    }
    t
}

fn cost(run: &RunResult, rows: &[(&Measurement, MeasurementSummary)]) -> Table {
    let mut t = Table::new(&[
        ("Name", L),
        ("style", L),
        ("server user us", R),
        ("server kernel us", R),
        ("server switches", R),
        ("client user us", R),
        ("client kernel us", R),
        ("client switches", R),
        ("migrations", R),
        ("client calls", R),
        ("syscalls/req", R),
        ("leading calls", L),
        ("client syscalls/req", R),
        ("client leading calls", L),
    ]);
    let switches = |c: &crate::model::CostPerRequest| format!("{:.2} / {:.2}", c.voluntary_switches, c.involuntary_switches);
    for (m, s) in rows {
        let (server, client) = (s.server_cost_per_request.as_ref(), s.client_cost_per_request.as_ref());
        t.row(vec![
            m.contestant.clone(),
            style(run, m),
            or_absent(server.map(|c| c.user_us), one),
            or_absent(server.map(|c| c.system_us), one),
            server.map(switches).unwrap_or_else(|| ABSENT.into()),
            or_absent(client.map(|c| c.user_us), one),
            or_absent(client.map(|c| c.system_us), one),
            client.map(switches).unwrap_or_else(|| ABSENT.into()),
            {
                let migrations = |c: Option<&crate::model::CostPerRequest>| c.and_then(|c| c.migrations).map_or_else(|| ABSENT.into(), |m| format!("{m:.2}"));
                format!("{} / {}", migrations(server), migrations(client))
            },
            s.client_system_calls_per_request.map(|c| format!("{c:.2}")).unwrap_or_else(|| ABSENT.into()),
            or_absent(s.server_syscalls_per_request.as_ref().and_then(|c| c.total), |c| format!("{c:.2}")),
            s.server_syscalls_per_request.as_ref().map(|c| c.leading_words(3)).filter(|w| !w.is_empty()).unwrap_or_else(|| ABSENT.into()),
            or_absent(s.client_syscalls_per_request.as_ref().and_then(|c| c.total), |c| format!("{c:.2}")),
            s.client_syscalls_per_request.as_ref().map(|c| c.leading_words(3)).filter(|w| !w.is_empty()).unwrap_or_else(|| ABSENT.into()),
        ]);
    }
    t
}

fn classic(run: &RunResult, rows: &[(&Measurement, MeasurementSummary)]) -> Table {
    let mut t = Table::new(&[
        ("Language", L),
        ("Framework", L),
        ("Category", L),
        ("Style", L),
        ("Name", L),
        ("Res[B]", R),
        ("Req", R),
        ("Err", R),
        ("RPS", R),
        ("BPS", R),
        ("min", R),
        ("25%", R),
        ("50%", R),
        ("75%", R),
        ("99%", R),
        ("max", R),
    ]);
    for (m, s) in rows {
        let c = run.contestant(&m.contestant);
        let field = |f: fn(&crate::model::ContestantRecord) -> &String| c.map(|c| f(c).clone()).unwrap_or_default();
        let l = &s.latency_ns;
        t.row(vec![
            field(|c| &c.language),
            field(|c| &c.framework),
            field(|c| &c.category),
            style(run, m),
            m.contestant.clone(),
            or_absent(s.response_bytes.map(|b| b as f64), int),
            s.requests.to_string(),
            s.errors.total().to_string(),
            or_absent(s.requests_per_s.as_ref().map(|r| r.median), int),
            or_absent(s.bytes_per_s.as_ref().map(|r| r.median), int),
            or_absent(l.min, ms),
            or_absent(l.p25, ms),
            or_absent(l.p50, ms),
            or_absent(l.p75, ms),
            or_absent(l.p99, ms),
            or_absent(l.max, ms),
        ]);
    }
    t
}

/// Everything that was not measured, with the reason; warnings; broken manifests.
fn problems(run: &RunResult) -> String {
    let mut t = Table::new(&[("Name", L), ("Scenario", L), ("Status", L), ("Why", L)]);
    for c in &run.contestants {
        if matches!(c.status, ContestantStatus::Failed | ContestantStatus::Skipped) {
            let status = if c.status == ContestantStatus::Failed { "build failed" } else { "skipped" };
            t.row(vec![c.name.clone(), ABSENT.into(), status.into(), first_line(c.reason.as_deref())]);
        }
    }
    for m in &run.measurements {
        if let Some((status, why)) = m.not_measured() {
            t.row(vec![m.contestant.clone(), format!("{} c={}", m.scenario, m.connections), status.into(), first_line(Some(&why))]);
        }
    }
    let mut out = String::new();
    if !t.is_empty() {
        out.push_str("\n## Not measured\n\nFull reasons and log tails are in run.json; logs are under logs/.\n\n");
        out.push_str(&t.markdown());
    }
    let warnings: Vec<String> =
        run.contestants.iter().flat_map(|c| c.warnings.iter().map(move |w| format!("- {}: {w}\n", c.name))).collect();
    if !warnings.is_empty() {
        out.push_str("\n## Warnings\n\n");
        out.extend(warnings);
    }
    if !run.checks.is_empty() {
        out.push_str("\n## Conformance (bench --check)\n\n");
        for c in &run.checks {
            let failed: Vec<String> = c
                .results
                .iter()
                .filter(|r| r.status == crate::model::checks::Status::Fail)
                .map(|r| format!("{} {}: {}", r.scenario, r.check, first_line(Some(&r.reason))))
                .collect();
            let passed = c.results.len() - failed.len();
            out.push_str(&format!("- {}: {passed} of {} checks passed", c.contestant, c.results.len()));
            out.push_str(&if failed.is_empty() { "\n".to_string() } else { format!("; failed: {}\n", failed.join("; ")) });
        }
    }
    if !run.catalog_errors.is_empty() {
        out.push_str("\n## Invalid manifests\n\n");
        out.extend(run.catalog_errors.iter().map(|e| format!("- {}\n", first_line(Some(e)))));
    }
    out
}

fn first_line(text: Option<&str>) -> String {
    text.and_then(|t| t.lines().next()).unwrap_or(ABSENT).to_string()
}

fn contestants(run: &RunResult) -> String {
    let mut t = Table::new(&[("Name", L), ("Language", L), ("Model", L), ("IO", L), ("Style", L), ("Version", L), ("Build", L)]);
    for c in run.contestants.iter().filter(|c| c.status == ContestantStatus::Built) {
        let build = if c.build_cached { "cached".to_string() } else { format!("{:.1} s", c.build_s) };
        t.row(vec![
            c.name.clone(),
            c.language.clone(),
            c.model.clone(),
            c.io.clone(),
            c.style.clone().unwrap_or_else(|| ABSENT.into()),
            c.version.clone().unwrap_or_else(|| ABSENT.into()),
            build,
        ]);
    }
    if t.is_empty() {
        return String::new();
    }
    format!("\n## Contestants\n\n{}", t.markdown())
}
