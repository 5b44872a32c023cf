//! An A/B run in words and tables (`model::ab`): the verdict per figure that summary.md leads with, the
//! rule its pairs ran under, the table of every pair, and the one line a series of runs collects.

use super::format::{int, or_absent, us, ABSENT};
use super::table::{Align, Table};
use crate::model::ab::{AbEstimate, AbRun, Bands, PairFigures, Side};
use crate::model::verdict::Metric;
use crate::model::{RunConfig, RunResult};

/// How B/A is estimated and judged, in one paragraph a reader can check.
pub fn method(bands: Bands) -> String {
    let (change, same) = (bands.change_pct, bands.same_pct);
    format!(
        "A and B ran in pairs of rounds back to back, A first in odd pairs and B first in even ones (ABBA), each \
         between the usual wait for quiet server CPUs and speed probes, the other version frozen. A pair counts \
         when neither round was disturbed. B/A is the Hodges–Lehmann estimate of the pairs' log-ratios (req/s as \
         measured, each round's own p99, server CPU per request) with the exact Wilcoxon signed-rank 95% \
         interval; what the machine did to both rounds of a pair cancels in their ratio, so no drift factor \
         corrects them and the run has no control. ▲ better or ▼ worse: the whole interval lies beyond ±{change}%; \
         ~ same: it lies wholly within ±{same}%; ◇ unclear: neither, the pairs cannot say; ? untested below 6 pairs."
    )
}

/// The `--rounds` rule of an A/B run's setting line.
pub fn rounds_rule(c: &RunConfig) -> String {
    let most = c.max_rounds.unwrap_or(c.measured_rounds);
    let decided = c.ab.as_ref().is_some_and(|ab| ab.same_pct.is_some());
    match c.target_ci_pct {
        _ if c.rounds == "auto" && decided => format!(
            "pairs of measured rounds until every figure the gate selects (req/s without one) is better, worse or same (at least {}, at most {most} pairs)",
            crate::model::ab::MIN_PAIRS
        ),
        Some(t) if c.rounds == "auto" => format!(
            "pairs of measured rounds until B/A of req/s has its 95% CI within ±{t}% or wholly beyond the noise band (at least {}, at most {most} pairs)",
            crate::model::ab::MIN_PAIRS
        ),
        _ => format!("{} pairs of measured rounds that count (at most {most})", c.measured_rounds),
    }
}

/// summary.md's A/B section, first after the setting: which version is which, a sentence per figure, the
/// estimates in a table and how they were made. Empty for a run that is not an A/B run.
pub fn markdown(run: &RunResult) -> String {
    let Some(ab) = &run.ab else { return String::new() };
    let estimates = run.ab_estimates();
    let (all, counted) = ab.counted(&run.measurements);
    let configuration = ab.measurement(&run.measurements, Side::B).or(ab.measurement(&run.measurements, Side::A)).map(|m| {
        format!(" · {} · {} · {} connections", m.scenario, m.load_label(), m.connections)
    });
    let mut out = format!("\n## A/B: {} (A) against {} (B){}\n\n", ab.a.name, ab.b.name, configuration.unwrap_or_default());
    out.push_str(&format!("- A: {}, {}\n- B: {}, {}\n", ab.a.name, ab.a.from, ab.b.name, ab.b.from));
    for e in &estimates {
        out.push_str(&format!("- {}: {} — {}\n", e.metric.name(), e.sentence(), e.verdict.marker()));
    }
    let ended = match ab.ended.as_deref() {
        Some("decided") => "ended when every figure the gate selects was decided",
        Some("settled") => "ended when the req/s interval was clear",
        Some("count") => "ended at the pairs asked for",
        Some("most") => "ended at the most pairs allowed (--max-rounds)",
        Some("interrupted") => "interrupted",
        _ => "in progress",
    };
    out.push_str(&format!("\n{all} pairs, {counted} of them counting; {ended}."));
    if let Some(w) = estimates.iter().find(|e| e.metric == Metric::RequestsPerS).and_then(AbEstimate::resolution_pct) {
        out.push_str(&format!(" The smallest change of req/s these pairs could tell apart: ±{w:.1}% (its interval's half-width)."));
    }
    out.push_str("\n\n");
    let mut t = Table::new(&[
        ("figure", Align::Left),
        ("verdict", Align::Left),
        ("B/A", Align::Right),
        ("95% CI", Align::Right),
        ("±", Align::Right),
        ("p", Align::Right),
        ("A median", Align::Right),
        ("B median", Align::Right),
        ("pairs", Align::Right),
    ]);
    for e in &estimates {
        let values = ab.values(&run.measurements, e.metric);
        let median = |side: Side| {
            let v: Vec<f64> = values.iter().map(|(a, b)| if side == Side::A { *a } else { *b }).collect();
            (!v.is_empty()).then(|| crate::stats::rounds::median(&v))
        };
        t.row(vec![
            unit_name(e.metric).into(),
            e.verdict.marker().into(),
            or_absent(e.ratio.map(|r| r.ratio), |r| format!("{r:.4}")),
            e.ratio.and_then(|r| r.ci95).map_or(ABSENT.into(), |(lo, hi)| format!("{lo:.4} to {hi:.4}")),
            or_absent(e.resolution_pct(), |w| format!("{w:.1}%")),
            or_absent(e.ratio.map(|r| r.p), |p| format!("{p:.3}")),
            or_absent(median(Side::A), |v| figure(e.metric, v)),
            or_absent(median(Side::B), |v| figure(e.metric, v)),
            e.pairs.to_string(),
        ]);
    }
    out.push_str(&t.markdown());
    out.push_str(&format!("\n{}\n", method(estimates.first().map_or_else(Bands::default, |e| e.bands))));
    out
}

/// A figure's name with its unit, as the tables head it.
fn unit_name(m: Metric) -> &'static str {
    match m {
        Metric::RequestsPerS => "req/s",
        Metric::P99 => "p99 (µs)",
        Metric::CpuPerRequest => "CPU/req (µs)",
    }
}

/// A value as the tables print it: req/s whole, p99 in µs, CPU per request in µs with two decimals.
fn figure(m: Metric, v: f64) -> String {
    match m {
        Metric::RequestsPerS => int(v),
        Metric::P99 => us(v),
        Metric::CpuPerRequest => format!("{v:.2}"),
    }
}

/// summary.md's table of every pair, at its end.
pub fn pairs_table(run: &RunResult) -> String {
    let Some(ab) = &run.ab else { return String::new() };
    let figures = ab.figures(&run.measurements);
    if figures.is_empty() {
        return String::new();
    }
    let mut t = Table::new(&[
        ("pair", Align::Right),
        ("order", Align::Left),
        ("A req/s", Align::Right),
        ("B req/s", Align::Right),
        ("B/A req/s", Align::Right),
        ("B/A p99", Align::Right),
        ("B/A CPU/req", Align::Right),
        ("counts", Align::Left),
    ]);
    for f in &figures {
        t.row(pair_row(f));
    }
    format!(
        "\n## A/B pairs: {} (A) and {} (B)\n\nEach pair's rounds, back to back in the order given; a pair whose round was disturbed does not count.\n\n{}",
        ab.a.name,
        ab.b.name,
        t.markdown()
    )
}

fn pair_row(f: &PairFigures) -> Vec<String> {
    let ratio = |m: Metric| or_absent(f.ratio(m), |r| format!("{r:.4}"));
    vec![
        f.pair.index.to_string(),
        if f.pair.first == Side::A { "A B" } else { "B A" }.into(),
        int(f.a.load.requests_per_s()),
        int(f.b.load.requests_per_s()),
        ratio(Metric::RequestsPerS),
        ratio(Metric::P99),
        ratio(Metric::CpuPerRequest),
        if f.counts() { "yes" } else { "no (disturbed)" }.into(),
    ]
}

/// One line per A/B run, easy to collect from a series of runs: the names, B/A of each figure with its
/// interval and verdict word, the pairs and the run's time.
pub fn one_line(run: &RunResult, run_s: f64) -> Option<String> {
    let ab = run.ab.as_ref()?;
    let (all, counted) = ab.counted(&run.measurements);
    let figures: Vec<String> = run.ab_estimates().iter().map(estimate_words).collect();
    Some(format!(
        "A/B {} (A) vs {} (B): {}; {all} pairs ({counted} count); {:.0} s",
        ab.a.name,
        ab.b.name,
        figures.join("; "),
        run_s
    ))
}

/// "req/s B/A 0.9680 [0.9561, 0.9792] ±1.1% worse".
fn estimate_words(e: &AbEstimate) -> String {
    let ratio = e.ratio.map_or(ABSENT.to_string(), |r| format!("{:.4}", r.ratio));
    let ci = e.ratio.and_then(|r| r.ci95).map_or(format!("[{ABSENT}]"), |(lo, hi)| format!("[{lo:.4}, {hi:.4}]"));
    let resolution = e.resolution_pct().map_or(String::new(), |w| format!(" ±{w:.1}%"));
    format!("{} B/A {ratio} {ci}{resolution} {}", e.metric.name(), e.verdict.word())
}

/// The estimates of an A/B run as run.json's derived `ab_summary` holds them, for other tools.
pub fn json_summary(ab: &AbRun, run: &RunResult) -> serde_json::Value {
    let (all, counted) = ab.counted(&run.measurements);
    let figures: serde_json::Map<String, serde_json::Value> = run
        .ab_estimates()
        .iter()
        .map(|e| {
            let r = e.ratio;
            let value = serde_json::json!({
                "pairs": e.pairs,
                "ratio": r.map(|r| r.ratio),
                "ci95_low": r.and_then(|r| r.ci95).map(|c| c.0),
                "ci95_high": r.and_then(|r| r.ci95).map(|c| c.1),
                "p": r.map(|r| r.p),
                "resolution_pct": e.resolution_pct(),
                "verdict": e.verdict.word(),
                "sentence": e.sentence(),
            });
            (e.metric.flag().to_string(), value)
        })
        .collect();
    serde_json::json!({ "a": ab.a.name, "b": ab.b.name, "pairs": all, "pairs_counted": counted, "figures": figures })
}
