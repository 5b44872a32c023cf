//! What a run shows, as the first screen of report.html and of summary.md says it before the environment
//! and the rules: per table of the run, the groups of rows that cannot be told apart by req/s and by server
//! CPU per request (rows whose ranges of places overlap, `model::ranks`), a one-line reading of where a
//! request's CPU goes, and the flags that qualify the numbers. Both pages write it from here, so that they
//! say the same.

use super::svg::{sig3, Unit};
use crate::model::ranks::{self, PlaceRange, Places};
use crate::model::{Measurement, MeasurementSummary, RunResult, Flag};

/// How the groups are made, said once above them.
pub const GROUPS_NOTE: &str = "Groups of rows that cannot be told apart: within a group every row's range of places in its \
     table overlaps every other's (pairwise Mann–Whitney tests of their rounds, docs/methodology.md), whatever order their \
     medians take; a row may overlap a row of the next group too. The run's control takes no place.";
/// The label of the cost reading.
pub const COST_LABEL: &str = "Where a request's CPU goes:";
/// The label of the rows without a place.
pub const UNPLACED_LABEL: &str = "Without a place (failed, interrupted, or fewer than two rounds that count):";
/// The label of the flags' counts.
pub const FLAGS_LABEL: &str = "Flags that qualify the numbers:";

/// Context switches per request from which a server is named as one that pays for them (one in ten
/// requests).
const SWITCHES_NAMED: f64 = 0.1;
/// System calls per request above this many times the table's median name a server as making extra ones.
const EXTRA_CALLS: f64 = 1.5;
/// The most servers named for switches or extra system calls.
const NAMED: usize = 3;

/// How many of a row's rounds carry a flag.
type RoundsWith = fn(&MeasurementSummary) -> usize;

/// The flags that qualify a table's numbers, each with the rounds of a row's summary that carry it; the
/// first screen counts the rows and the rounds of each. A flag the rounds gain (`both-busy`: both the server
/// and the client at their limit) takes its place here with its count.
const QUALIFIERS: &[(Flag, RoundsWith)] = &[
    (Flag::ClientBound, |s| s.client_bound_rounds),
    (Flag::Unsaturated, |s| s.unsaturated_rounds),
    (Flag::CpuDrift, |s| s.rounds_cpu_drift),
];

/// What one table of the run shows.
#[derive(Debug, Clone, PartialEq)]
pub struct TableAnswer<'a> {
    /// As the table's heading: "hello · throughput · 64 connections".
    pub title: String,
    pub by_rps: Vec<Group<'a>>,
    pub by_cpu: Vec<Group<'a>>,
    /// Rows with measured rounds but without a place by req/s (failed, interrupted, or fewer than two
    /// rounds that count), named so that none goes missing.
    pub unplaced: Vec<&'a str>,
    /// The reading of the cost figures; absent when no row has them.
    pub cost: Option<String>,
    /// The flags' counts: "client-bound 3 of 12 rows (8 of 192 rounds); unsaturated none; ...".
    pub flags: String,
}

/// Rows not told apart from one another, with the places they span and the range of their medians.
#[derive(Debug, Clone, PartialEq)]
pub struct Group<'a> {
    pub places: PlaceRange,
    pub members: Vec<&'a str>,
    pub low: f64,
    pub high: f64,
}

impl Group<'_> {
    /// "place 1" or "places 1–3".
    pub fn places_text(&self) -> String {
        self.places.phrase()
    }

    /// The members' medians: "175k–206k req/s", or one figure.
    pub fn range_text(&self, format: fn(f64) -> String, unit: &str) -> String {
        let (low, high) = (format(self.low), format(self.high));
        if low == high { format!("{low} {unit}") } else { format!("{low}–{high} {unit}") }
    }
}

impl TableAnswer<'_> {
    /// Each figure's name with its groups as written: places, members, medians.
    pub fn by_figure(&self) -> [(&'static str, Vec<[String; 3]>); 2] {
        let rows = |groups: &[Group], format: fn(f64) -> String, unit: &str| -> Vec<[String; 3]> {
            groups.iter().map(|g| [g.places_text(), g.members.join(", "), g.range_text(format, unit)]).collect()
        };
        [("req/s", rows(&self.by_rps, |v| Unit::Count.format(v), "req/s")), ("server CPU per request", rows(&self.by_cpu, sig3, "µs"))]
    }
}

/// What each table of the run shows, tables in the order they were run; `places` are the run's
/// (`model::ranks::places`). Tables without a measured row are left out.
pub fn answers<'a>(run: &'a RunResult, places: &[Places]) -> Vec<TableAnswer<'a>> {
    let mut out = Vec::new();
    for ((scenario, load, connections, pipeline), members) in ranks::tables(run) {
        let rows: Vec<(&Measurement, MeasurementSummary, Places)> = members
            .into_iter()
            .filter(|(_, m)| m.measured_rounds().next().is_some() && !run.contestant(&m.contestant).is_some_and(|c| c.control))
            .map(|(i, m)| (m, m.summary(), places[i]))
            .collect();
        if rows.is_empty() {
            continue;
        }
        let pipelined = if pipeline > 1 { format!(", pipeline {pipeline}") } else { String::new() };
        let by_rps: Vec<_> = rows.iter().map(|(m, s, p)| (m.contestant.as_str(), p.requests_per_s, s.requests_per_s.as_ref().map(|r| r.median))).collect();
        let by_cpu: Vec<_> =
            rows.iter().map(|(m, _, p)| (m.contestant.as_str(), p.cpu_per_request, ranks::cpu_us_per_request(m).map(|c| c.median))).collect();
        let summaries: Vec<(&str, &MeasurementSummary)> = rows.iter().map(|(m, s, _)| (m.contestant.as_str(), s)).collect();
        out.push(TableAnswer {
            title: format!("{scenario} · {load} · {connections} connections{pipelined}"),
            by_rps: groups(&by_rps, true),
            by_cpu: groups(&by_cpu, false),
            unplaced: by_rps.iter().filter(|(_, p, _)| p.is_none()).map(|(name, _, _)| *name).collect(),
            cost: cost_reading(&summaries),
            flags: flags(&summaries),
        });
    }
    out
}

/// Partitions the rows with a place into groups whose ranges all overlap: in order of places, a row joins
/// the group while its best place is no worse than every member's worst (a set of intervals overlaps
/// pairwise exactly when the latest start is before the earliest end).
fn groups<'a>(rows: &[(&'a str, Option<PlaceRange>, Option<f64>)], higher_is_better: bool) -> Vec<Group<'a>> {
    let mut placed: Vec<(&str, PlaceRange, f64)> = rows.iter().filter_map(|(name, p, v)| Some((*name, (*p)?, v.unwrap_or(f64::NAN)))).collect();
    placed.sort_by(|a, b| {
        let by_value = if higher_is_better { b.2.total_cmp(&a.2) } else { a.2.total_cmp(&b.2) };
        (a.1.best, a.1.worst).cmp(&(b.1.best, b.1.worst)).then(by_value).then(a.0.cmp(b.0))
    });
    let mut out: Vec<Group> = Vec::new();
    let mut earliest_end = 0;
    for (name, range, value) in placed {
        match out.last_mut() {
            Some(g) if range.best <= earliest_end => {
                g.members.push(name);
                g.places.worst = g.places.worst.max(range.worst);
                (g.low, g.high) = (g.low.min(value), g.high.max(value));
                earliest_end = earliest_end.min(range.worst);
            }
            _ => {
                out.push(Group { places: range, members: vec![name], low: value, high: value });
                earliest_end = range.worst;
            }
        }
    }
    out
}

/// The one-line reading of the cost figures: the kernel's share of the server's CPU per request, who pays
/// for context switches, who makes more system calls than the others.
fn cost_reading(rows: &[(&str, &MeasurementSummary)]) -> Option<String> {
    let mut shares: Vec<(&str, f64)> = rows
        .iter()
        .filter_map(|(name, s)| s.server_cost_per_request.filter(|c| c.user_us + c.system_us > 0.0).map(|c| (*name, c.system_us / (c.user_us + c.system_us) * 100.0)))
        .collect();
    if shares.is_empty() {
        return None;
    }
    shares.sort_by(|a, b| a.1.total_cmp(&b.1));
    let median = median_of(&shares);
    let (least, most) = (shares[0], shares[shares.len() - 1]);
    let mut parts = vec![if shares.len() == 1 || format!("{:.0}", least.1) == format!("{:.0}", most.1) {
        let every = if shares.len() == 1 { String::new() } else { format!(" in each of {} servers", shares.len()) };
        format!("the kernel takes {median:.0}% of the server's CPU per request{every}")
    } else {
        format!(
            "the kernel takes {median:.0}% of the server's CPU per request at the median of {} servers ({} {:.0}% to {} {:.0}%)",
            shares.len(),
            least.0,
            least.1,
            most.0,
            most.1
        )
    }];

    let mut switches: Vec<(&str, f64)> =
        rows.iter().filter_map(|(name, s)| s.server_cost_per_request.map(|c| (*name, c.voluntary_switches + c.involuntary_switches))).collect();
    switches.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    let payers: Vec<&(&str, f64)> = switches.iter().filter(|(_, n)| *n >= SWITCHES_NAMED).collect();
    parts.push(if payers.is_empty() {
        format!("no server switches context more than once in {:.0} requests", 1.0 / SWITCHES_NAMED)
    } else {
        format!("context switches per request: {}{}", named(&payers), if payers.len() < switches.len() { format!(", the others below {SWITCHES_NAMED}") } else { String::new() })
    });

    let mut calls: Vec<(&str, f64)> =
        rows.iter().filter_map(|(name, s)| Some((*name, s.server_syscalls_per_request.as_ref()?.total?))).collect();
    if !calls.is_empty() {
        calls.sort_by(|a, b| a.1.total_cmp(&b.1));
        let median = median_of(&calls);
        calls.reverse();
        let extra: Vec<&(&str, f64)> = calls.iter().filter(|(_, n)| *n > EXTRA_CALLS * median).collect();
        parts.push(if extra.is_empty() {
            format!("system calls per request: {median:.2} at the median, none above {EXTRA_CALLS} times it")
        } else {
            format!("system calls per request: {median:.2} at the median; more than {EXTRA_CALLS} times it: {}", named(&extra))
        });
    }
    Some(format!("{}.", parts.join("; ")))
}

/// The median of values sorted in ascending order.
fn median_of(sorted: &[(&str, f64)]) -> f64 {
    let values: Vec<f64> = sorted.iter().map(|(_, v)| *v).collect();
    crate::stats::rounds::median(&values)
}

/// "c-threads 1.00, go-net 0.51 and 2 more": the first `NAMED`, most first.
fn named(rows: &[&(&str, f64)]) -> String {
    let mut text: Vec<String> = rows.iter().take(NAMED).map(|(name, n)| format!("{name} {n:.2}")).collect();
    if rows.len() > NAMED {
        text.push(format!("{} more", rows.len() - NAMED));
    }
    text.join(", ")
}

/// Each qualifying flag with the rows and rounds that carry it, or "none".
fn flags(rows: &[(&str, &MeasurementSummary)]) -> String {
    let all_rounds: usize = rows.iter().map(|(_, s)| s.rounds).sum();
    QUALIFIERS
        .iter()
        .map(|(flag, count)| {
            let flagged: Vec<usize> = rows.iter().map(|(_, s)| count(s)).filter(|n| *n > 0).collect();
            if flagged.is_empty() {
                format!("{flag} none")
            } else {
                format!("{flag} {} of {} rows ({} of {all_rounds} rounds)", flagged.len(), rows.len(), flagged.iter().sum::<usize>())
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The answers as summary.md opens with them.
pub fn markdown(answers: &[TableAnswer]) -> String {
    let mut out = String::from("## What the run shows\n\n");
    if answers.is_empty() {
        out.push_str("No configuration was measured: see \"Not measured\" below.\n");
        return out;
    }
    out.push_str(&format!("{GROUPS_NOTE}\n"));
    for a in answers {
        out.push_str(&format!("\n### {}\n\n", a.title));
        for (what, groups) in a.by_figure() {
            if groups.is_empty() {
                continue;
            }
            out.push_str(&format!("- {what}:\n"));
            for [places, members, medians] in groups {
                out.push_str(&format!("  - {places}: {members} ({medians})\n"));
            }
        }
        if !a.unplaced.is_empty() {
            out.push_str(&format!("- {UNPLACED_LABEL} {}\n", a.unplaced.join(", ")));
        }
        if let Some(cost) = &a.cost {
            out.push_str(&format!("- {COST_LABEL} {cost}\n"));
        }
        out.push_str(&format!("- {FLAGS_LABEL} {}\n", a.flags));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(best: usize, worst: usize) -> Option<PlaceRange> {
        Some(PlaceRange { best, worst })
    }

    #[test]
    fn rows_whose_ranges_all_overlap_make_one_group() {
        let rows = [
            ("d", range(3, 5), Some(70.0)),
            ("a", range(1, 2), Some(100.0)),
            ("b", range(1, 3), Some(95.0)),
            ("c", range(2, 4), Some(90.0)),
            ("e", range(6, 6), Some(10.0)),
            ("f", None, Some(5.0)),
        ];
        let g = groups(&rows, true);
        let members: Vec<Vec<&str>> = g.iter().map(|g| g.members.clone()).collect();
        // c (2–4) overlaps a (1–2) and b (1–3); d (3–5) overlaps b and c but not a: the next group.
        assert_eq!(members, [vec!["a", "b", "c"], vec!["d"], vec!["e"]]);
        let range_of = |name: &str| rows.iter().find(|r| r.0 == name).and_then(|r| r.1).unwrap();
        for members in &members {
            for a in members {
                assert!(members.iter().all(|b| range_of(a).overlaps(&range_of(b))), "{a} overlaps every row of its group");
            }
        }
        assert_eq!(g[0].places_text(), "places 1–4");
        assert_eq!(g[2].places_text(), "place 6");
        assert_eq!((g[0].low, g[0].high), (90.0, 100.0));
        assert_eq!(g[0].range_text(|v| Unit::Count.format(v), "req/s"), "90.0–100 req/s");
        assert_eq!(g[1].range_text(sig3, "µs"), "70.0 µs");
        assert!(groups(&[("x", None, Some(1.0))], true).is_empty(), "a row without a place is in no group");
    }

    #[test]
    fn ties_of_places_go_by_the_better_figure() {
        let rows = [("slow", range(1, 2), Some(9.0)), ("fast", range(1, 2), Some(4.0))];
        assert_eq!(groups(&rows, false)[0].members, ["fast", "slow"], "lower CPU per request first");
        assert_eq!(groups(&rows, true)[0].members, ["slow", "fast"], "higher req/s first");
    }

    fn summary(rounds: usize, client_bound: usize, drift: usize) -> MeasurementSummary {
        MeasurementSummary { rounds, client_bound_rounds: client_bound, rounds_cpu_drift: drift, ..Default::default() }
    }

    #[test]
    fn flags_count_rows_and_rounds_and_say_none() {
        let (a, b, c) = (summary(10, 2, 0), summary(10, 1, 0), summary(12, 0, 3));
        let rows = [("a", &a), ("b", &b), ("c", &c)];
        assert_eq!(flags(&rows), "client-bound 2 of 3 rows (3 of 32 rounds); unsaturated none; cpu-drift 1 of 3 rows (3 of 32 rounds)");
    }

    fn costed(user_us: f64, system_us: f64, switches: f64, calls: Option<f64>) -> MeasurementSummary {
        MeasurementSummary {
            server_cost_per_request: Some(crate::model::CostPerRequest { user_us, system_us, voluntary_switches: switches, involuntary_switches: 0.0, migrations: None }),
            server_syscalls_per_request: calls.map(|total| crate::model::SyscallsPerRequest { total: Some(total), ..Default::default() }),
            ..Default::default()
        }
    }

    #[test]
    fn the_cost_reading_names_the_kernel_share_switches_and_extra_calls() {
        let (epoll, threads, node) = (costed(1.0, 4.0, 0.0, Some(2.0)), costed(2.0, 6.0, 1.0, Some(2.1)), costed(80.0, 20.0, 0.02, Some(4.4)));
        let rows = [("c-epoll", &epoll), ("c-threads", &threads), ("node", &node)];
        assert_eq!(
            cost_reading(&rows).unwrap(),
            "the kernel takes 75% of the server's CPU per request at the median of 3 servers (node 20% to c-epoll 80%); \
             context switches per request: c-threads 1.00, the others below 0.1; \
             system calls per request: 2.10 at the median; more than 1.5 times it: node 4.40."
        );
        let quiet = [("c-epoll", &epoll)];
        assert!(cost_reading(&quiet).unwrap().contains("no server switches context more than once in 10 requests"));
        let bare = MeasurementSummary::default();
        assert_eq!(cost_reading(&[("x", &bare)]), None, "no cost figures, no reading");
    }
}
