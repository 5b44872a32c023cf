//! The figures of a round and of a measurement as progress lines: a line per round (with -v) and one per
//! finished measurement.

use crate::model::{limit_words, Measurement, Round, Flag};
use crate::report::format::{mib, one, or_absent, pct, us};

/// The line printed with -v after each round.
pub fn round_line(name: &str, scenario: &str, connections: usize, r: &Round) -> String {
    format!(
        "  {name} {scenario} c={connections} {} {}: {:.0} req/s, {} errors, server CPU {}%, client CPU {}%{}",
        if r.warmup { "warm-up" } else { "round" },
        r.index,
        r.load.requests_per_s(),
        r.load.errors.total(),
        or_absent(r.server.utilisation_pct, pct),
        or_absent(r.client_busy_pct, pct),
        if r.flags.is_empty() { String::new() } else { format!(" [{}]", round_flags(r).join(", ")) }
    )
}

/// The round's flags, `unsaturated` with its limit: "unsaturated (server sleeping)".
fn round_flags(r: &Round) -> Vec<String> {
    let flag = |f: &Flag| match &r.limit {
        Some(limit) if *f == Flag::Unsaturated => format!("{f} ({})", limit_words(limit)),
        _ => f.to_string(),
    };
    r.flags.iter().map(flag).collect()
}

/// The line printed when a measurement has all its rounds.
pub fn measurement_line(m: &Measurement) -> String {
    let s = m.summary();
    let rps = s.requests_per_s.as_ref();
    let ci = rps.and_then(|r| r.ci95_relative_pct()).map(|p| format!(" ±{p:.1}%")).unwrap_or_default();
    let mut flags = Vec::new();
    flags.extend(s.bound_flags());
    flags.extend(s.unsaturated_flag());
    if s.errors.total() > 0 {
        flags.push(format!("{} errors", s.errors.total()));
    }
    format!(
        "{:<24} {:<13} c={:<5} {:>10} req/s{ci}  server CPU {}% {} us/req  RSS {} MiB  p99 {} us{}",
        m.contestant,
        m.scenario,
        m.connections,
        rps.map(|r| format!("{:.0}", r.median)).unwrap_or_else(|| "-".into()),
        or_absent(s.server_utilisation_pct, pct),
        or_absent(s.server_cpu_us_per_request, one),
        or_absent(s.peak_rss_bytes.map(|b| b as f64), mib),
        or_absent(s.latency_ns.p99, us),
        if flags.is_empty() { String::new() } else { format!("  [{}]", flags.join(", ")) }
    )
}
