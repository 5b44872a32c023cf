//! What `serverbench load` prints: what is about to run, the human summary in the spirit of wrk's, and
//! every figure as JSON.

use serde_json::json;

use super::config::{EchoKind, LoadConfig, Mode, Stop, Workload};
use super::report::LoadReport;
use crate::stats::histogram::{self, LatencySummary};

/// The unit of the latency figures printed (`--latency-unit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LatencyUnit {
    Ns,
    Us,
    Ms,
}

fn mode_name(mode: &Mode) -> String {
    match mode {
        Mode::Throughput => "throughput".into(),
        Mode::Latency { think_time } => format!("latency, think time {think_time:?}"),
        Mode::Rate { requests_per_s } => format!("rate {requests_per_s} req/s"),
    }
}

/// What is about to run, in two lines, before the figures.
pub fn describe(target: &str, c: &LoadConfig) -> String {
    let what = match &c.workload {
        Workload::Http { request, pipeline, mix, .. } => match mix.describe() {
            Some(m) => format!("{} {}, pipeline {pipeline}, {m}, seed {}", request.method, request.path.rsplit_once('/').map_or("", |p| p.0).to_string() + "/…", c.seed),
            None => format!("{} {}, pipeline {pipeline}", request.method, request.path),
        },
        Workload::Echo { kind, size_bytes } => format!("echo {kind:?} of {size_bytes} B").to_lowercase(),
    };
    let length = match c.stop {
        Stop::RequestsPerConnection(r) => format!("{r} requests per connection"),
        Stop::Duration { warmup, measure } if warmup.is_zero() => format!("{measure:?}"),
        Stop::Duration { warmup, measure } => format!("{measure:?} after {warmup:?} of warm-up"),
    };
    let pin = c.cpus.as_ref().map(|v| format!(", pinned to CPUs {v:?}")).unwrap_or_default();
    let each = if c.connection_per_request { ", a new connection per request" } else { "" };
    format!(
        "Running {length} @ {target} ({what}; {})\n  {} threads and {} connections{each}{pin}",
        mode_name(&c.mode),
        c.threads,
        c.connections
    )
}

fn unit_value(ns: f64, unit: LatencyUnit) -> String {
    match unit {
        LatencyUnit::Ns => format!("{ns:.0}ns"),
        LatencyUnit::Us => format!("{:.2}us", ns / 1e3),
        LatencyUnit::Ms => format!("{:.3}ms", ns / 1e6),
    }
}

fn latency_block(title: &str, s: &LatencySummary, unit: LatencyUnit) -> String {
    let u = |v: f64| unit_value(v, unit);
    let mut out = format!("  {title}\n    {:>10} {:>10} {:>10} {:>10}\n", "Avg", "Stdev", "Min", "Max");
    out += &format!("    {:>10} {:>10} {:>10} {:>10}\n", u(s.mean_ns), u(s.stdev_ns), u(s.min_ns as f64), u(s.max_ns as f64));
    let rows = [("25%", s.p25_ns), ("50%", s.p50_ns), ("75%", s.p75_ns), ("90%", s.p90_ns), ("99%", s.p99_ns), ("99.9%", s.p999_ns), ("99.99%", s.p9999_ns)];
    for (name, v) in rows {
        out += &format!("    {name:>7} {:>10}\n", u(v as f64));
    }
    out
}

fn si_bytes(b: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b;
    let mut i = 0;
    while v >= 1024.0 && i < UNITS.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    format!("{v:.2}{}", UNITS[i])
}

/// Connections asked for and established (the kernel's handshake, which completes whether or not the
/// server accepts) and served (a response received), in the run and in the measured window: a server that
/// accepts fewer than it is offered shows here.
fn connections_line(r: &LoadReport) -> Option<String> {
    let served = r.connections_served?;
    let in_window = r.connections_served_in_window().map(|n| format!(", {n} of them in the window")).unwrap_or_default();
    Some(format!("  Connections: {} asked for and established, {served} served{in_window}\n", r.connections))
}

/// The human summary, in the spirit of wrk's.
pub fn human_summary(c: &LoadConfig, r: &LoadReport, unit: LatencyUnit) -> String {
    let mut out = String::new();
    let summary = r.latency_summary();
    if summary.count > 0 {
        let title = if r.latency_uncorrected.is_some() { "Latency, corrected (from each request's intended send time)" } else { "Latency" };
        out += &latency_block(title, &summary, unit);
        if let Some(u) = &r.latency_uncorrected {
            out += &latency_block("Latency, uncorrected (from the actual send; hides queueing)", &LatencySummary::of(u), unit);
        }
    }
    let what = match c.workload {
        Workload::Echo { kind: EchoKind::Stream, .. } => "messages",
        Workload::Echo { .. } => "exchanges",
        Workload::Http { .. } => "requests",
    };
    out += &format!("  {} valid {what} in {:.2}s, {} read, {} written\n", r.requests, r.duration_s, si_bytes(r.bytes_read as f64), si_bytes(r.bytes_written as f64));
    let e = &r.errors;
    if e.total() > 0 {
        out += &format!(
            "  Errors: connect {}, read {}, write {}, timeout {}, status {}, framing {}, mismatch {}\n",
            e.connect, e.read, e.write, e.timeout, e.status, e.framing, e.mismatch
        );
    }
    if let Some(k) = &r.counter {
        out += &format!(
            "  Counter: {} values over {} keys, {} returned twice, {} numbers missing ({} may be, for requests left unanswered): {}\n",
            k.values,
            k.keys,
            k.repeated,
            k.gaps,
            k.slack,
            if k.lost_updates == 0 { "no update lost".to_string() } else { format!("{} LOST UPDATES (counted as mismatch errors)", k.lost_updates) }
        );
    }
    if let Some(rate) = target_rate(c) {
        out += &format!("  Rate: {:.1} of {rate:.1} requests/s asked ({:.1}%), {} requests never sent\n", r.requests_per_s(), r.requests_per_s() / rate * 100.0, r.backlog);
    }
    if let Some(s) = r.per_connection {
        out += &format!(
            "  Per connection: min {}, p1 {}, median {}, max {}; {} starved; Jain's index {}\n",
            s.min,
            s.p1,
            s.median,
            s.max,
            s.starved,
            s.jain.map_or("n/a".to_string(), |j| format!("{j:.3}"))
        );
    }
    if let Some(line) = connections_line(r) {
        out += &line;
    }
    if let (Some(ramp), Some(unserved)) = (r.ramp_s, r.unserved_at_start) {
        out += &format!("  Ramp: {ramp:.3}s until the window opened, {unserved} connections unserved then\n");
    }
    if c.connection_per_request {
        out += &format!("  Connections opened: {} ({} reconnects after errors)\n", r.connections_opened, r.reconnects);
    } else if r.keepalive_lost > 0 || r.server_closes > 0 || r.reconnects > 0 {
        out += &closes_line(r);
    }
    if r.status.s2xx != r.requests && matches!(c.workload, Workload::Http { .. }) {
        let s = &r.status;
        out += &format!("  Status: 1xx {}, 2xx {}, 3xx {}, 4xx {}, 5xx {}, other {}\n", s.s1xx, s.s2xx, s.s3xx, s.s4xx, s.s5xx, s.other);
    }
    out += &format!("{}/sec: {:.2}\n", if what == "requests" { "Requests" } else { "Messages" }, r.requests_per_s());
    out += &format!("Transfer/sec: {}\n", si_bytes(r.bytes_read_per_s()));
    if r.client_poll_s > 0.0 {
        out += &format!(
            "Client CPU: {:.2}s, of which {:.2}s busy-polling that found nothing ({} of work per {}), I/O: {}\n",
            r.client_cpu_s,
            r.client_poll_s,
            per_request_us(r),
            what.trim_end_matches('s'),
            r.io
        );
    } else {
        out += &format!("Client CPU: {:.2}s ({} per {}), I/O: {}\n", r.client_cpu_s, per_request_us(r), what.trim_end_matches('s'), r.io);
    }
    if r.requests > 0 {
        let n = r.requests as f64;
        out += &format!(
            "Client per {}: {:.2}us user, {:.2}us kernel, {:.2} system calls, {:.3} voluntary context switches\n",
            what.trim_end_matches('s'),
            r.client_user_s * 1e6 / n,
            r.client_system_s * 1e6 / n,
            r.client_system_calls as f64 / n,
            r.client_voluntary_switches as f64 / n
        );
    }
    if r.interrupted {
        out += "Interrupted: the figures cover what was measured until the stop.\n";
    }
    out
}

/// `--timeline`: a line per interval of the window (as wrk2 prints a line per second): when it began, its
/// responses and their rate, its errors and its latency percentiles.
pub fn timeline(r: &LoadReport, unit: LatencyUnit) -> String {
    let Some(intervals) = &r.intervals else {
        return String::new();
    };
    let u = |ns: u64| unit_value(ns as f64, unit);
    let mut out = format!(
        "  Intervals of {} ms{}
  {:>9} {:>10} {:>12} {:>7} {:>10} {:>10} {:>10}
",
        intervals.length_ms,
        if r.latency_uncorrected.is_some() { " (latency corrected, from each request's intended send time)" } else { "" },
        "start",
        "responses",
        "per s",
        "errors",
        "p50",
        "p99",
        "max"
    );
    for (i, (start_s, length_s)) in intervals.each.iter().zip(intervals.spans_s(r.duration_s)) {
        let s = i.summary();
        let latency = if s.count == 0 { ["-".to_string(), "-".into(), "-".into()] } else { [u(s.p50_ns), u(s.p99_ns), u(s.max_ns)] };
        out += &format!(
            "  {:>8.3}s {:>10} {:>12.1} {:>7} {:>10} {:>10} {:>10}
",
            start_s,
            i.requests,
            i.requests as f64 / length_s,
            i.errors,
            latency[0],
            latency[1],
            latency[2]
        );
    }
    out
}

/// Every figure of a run, for `--json`.
pub fn to_json(c: &LoadConfig, r: &LoadReport) -> serde_json::Value {
    let s = r.latency_summary();
    json!({
        "target": c.target.to_string(),
        "mode": mode_name(&c.mode),
        "threads": r.threads,
        "connections": r.connections,
        "requests": r.requests,
        "valid": r.requests,
        "invalid": { "status": r.errors.status, "mismatch": r.errors.mismatch, "framing": r.errors.framing },
        "timeouts": r.errors.timeout,
        "reconnects": r.reconnects,
        "keepalive_lost": r.keepalive_lost,
        "server_closes": r.server_closes,
        "connection_per_request": c.connection_per_request,
        "connections_opened": r.connections_opened,
        "connections_served": r.connections_served,
        "connections_served_in_window": r.connections_served_in_window(),
        "ramp_s": r.ramp_s,
        "unserved_at_start": r.unserved_at_start,
        "connections_starved": r.per_connection.map(|s| s.starved),
        "fairness_jain": r.per_connection.and_then(|s| s.jain),
        "responses_per_connection": r.per_connection.map(|s| json!({ "min": s.min, "p1": s.p1, "median": s.median, "max": s.max })),
        "target_rate": target_rate(c),
        "achieved_rate": target_rate(c).map(|_| r.requests_per_s()),
        "backlog": target_rate(c).map(|_| r.backlog),
        "duration_s": r.duration_s,
        "requests_per_s": r.requests_per_s(),
        "bytes_read": r.bytes_read,
        "bytes_written": r.bytes_written,
        "bytes_read_per_s": r.bytes_read_per_s(),
        "response_bytes": r.response_bytes,
        "errors": r.errors,
        "errors_total": r.errors.total(),
        "status": r.status,
        "latency_ns": s,
        "latency_uncorrected_ns": r.latency_uncorrected.as_ref().map(LatencySummary::of),
        "latency_histogram": histogram::to_base64(&r.latency),
        "latency_uncorrected_histogram": r.latency_uncorrected.as_ref().map(histogram::to_base64),
        "intervals": r.intervals,
        "client_cpu_s": r.client_cpu_s,
        "client_poll_s": r.client_poll_s,
        "client_work_s": r.client_work_s(),
        "client_user_s": r.client_user_s,
        "client_system_s": r.client_system_s,
        "client_voluntary_switches": r.client_voluntary_switches,
        "client_involuntary_switches": r.client_involuntary_switches,
        "client_system_calls": r.client_system_calls,
        "client_cpu_us_per_request": r.client_cpu_us_per_request(),
        "interrupted": r.interrupted,
        "io": r.io,
        "poll": r.poll,
        "mix": match &c.workload { Workload::Http { mix, .. } => Some(mix), _ => None },
        "seed": c.seed,
        "counter": r.counter,
    })
}

/// The client's CPU per valid response, or `n/a` (with no valid response there is nothing to divide by).
fn per_request_us(r: &LoadReport) -> String {
    r.client_cpu_us_per_request().map_or("n/a".to_string(), |us| format!("{us:.2}us"))
}

/// How keep-alive connections ended and were opened again: a clean close by the server after a complete
/// response (a keep-alive limit, as nginx's `keepalive_requests` of 1,000; an idle timeout) is the server's
/// choice and no error; an end with requests outstanding loses them (errors).
fn closes_line(r: &LoadReport) -> String {
    let mut parts = Vec::new();
    if r.server_closes > 0 {
        parts.push(format!("{} closed by the server after a complete response (its keep-alive limit or idle timeout; no request lost)", r.server_closes));
    }
    if r.keepalive_lost > 0 {
        parts.push(format!("keep-alive lost on {} with requests outstanding (each request lost counted as a read or write error)", r.keepalive_lost));
    }
    let after = if parts.is_empty() { " after errors".to_string() } else { String::new() };
    parts.push(format!("{} reconnects{after}", r.reconnects));
    format!("  Connections: {}\n", parts.join("; "))
}

/// The rate asked for, in rate mode.
fn target_rate(c: &LoadConfig) -> Option<f64> {
    match c.mode {
        Mode::Rate { requests_per_s } => Some(requests_per_s),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::report::ConnectionSpread;

    #[test]
    fn connections_asked_and_served_are_told_apart() {
        let mut r = LoadReport::empty(1, 10);
        assert_eq!(connections_line(&r), None, "an external tool's report says nothing of them");
        r.connections_served = Some(6);
        r.per_connection = Some(ConnectionSpread { min: 0, p1: 0, median: 3, max: 9, starved: 5, jain: Some(0.4) });
        assert_eq!(connections_line(&r).unwrap(), "  Connections: 10 asked for and established, 6 served, 5 of them in the window\n");
        let j = to_json(&LoadConfig::new("127.0.0.1:1".parse().unwrap()), &r);
        let figures = ["connections_served", "connections_served_in_window"].map(|k| j[k].clone());
        assert_eq!(figures, [json!(6), json!(5)]);
        // More starved than asked for (a share of a report added from parts) is none served, not a wrap.
        r.per_connection = Some(ConnectionSpread { min: 0, p1: 0, median: 0, max: 0, starved: 12, jain: None });
        assert_eq!(r.connections_served_in_window(), Some(0));
    }

    #[test]
    fn clean_closes_and_lost_keepalives_are_told_apart() {
        let mut r = LoadReport::empty(1, 4);
        (r.server_closes, r.reconnects) = (8, 8);
        let line = closes_line(&r);
        assert!(line.starts_with("  Connections: 8 closed by the server after a complete response") && line.ends_with("; 8 reconnects\n"), "{line}");
        assert!(!line.contains("keep-alive lost"), "nothing was lost: {line}");
        r.keepalive_lost = 2;
        let line = closes_line(&r);
        assert!(line.contains("8 closed by the server") && line.contains("keep-alive lost on 2 with requests outstanding"), "{line}");
        let j = to_json(&LoadConfig::new("127.0.0.1:1".parse().unwrap()), &r);
        assert_eq!([j["keepalive_lost"].clone(), j["server_closes"].clone()], [json!(2), json!(8)]);
    }
}
