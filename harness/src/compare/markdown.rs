//! The comparison as Markdown: what was compared and how, the verdicts beyond noise first, then a table per
//! configuration.

use std::fmt::Write as _;

use super::{Change, Comparison, Metric, Row, Rules, Verdict};
use crate::report::format::{int, or_absent, us, ABSENT};
use crate::report::table::{Align, Table};

pub fn render(c: &Comparison) -> String {
    let mut out = String::from("# serverbench compare\n\n");
    let _ = writeln!(out, "- A: {} (started {}; {})", c.a.run_id, c.a.started_utc, c.a.machine);
    let _ = writeln!(out, "- B: {} (started {}; {})", c.b.run_id, c.b.started_utc, c.b.machine);
    let _ = writeln!(out, "- {}\n", method(c.rules));
    out.push_str(&machine(c));
    out.push_str(&cross_cpu(c));
    out.push_str(&differences(c));
    out.push_str(&verdicts(c));
    for (configuration, rows) in by_configuration(&c.rows) {
        let _ = writeln!(out, "\n## {configuration}\n");
        out.push_str(&table(&rows).markdown());
    }
    out.push_str(&unmatched(c));
    out
}

/// How the numbers were computed, in one sentence a reader can check.
pub fn method(rules: Rules) -> String {
    format!(
        "B/A is the Hodges–Lehmann estimate over the rounds that count (the median of every ratio b/a; p99: each \
         round's own p99), with its distribution-free 95% interval. Each figure is corrected by the machine's own \
         change of that figure (below). A change is marked ▲ better or ▼ worse when, so corrected, the Mann–Whitney \
         U test gives p < {} and the whole interval lies beyond ±{}% and beyond {} spreads of the other \
         configurations' scatter around their common change: it moved apart from the rest. ≈ machine: beyond \
         noise as measured, within it once the machine's change is out, or apart while its cross-CPU regime \
         moved otherwise than theirs; ~ same when the whole interval lies within that band (shown to be no larger); ◇ unclear \
         when it is neither beyond nor within (the rounds cannot say); ? untested with fewer than two rounds on \
         a side.",
        rules.alpha, rules.noise_pct, rules.spreads
    )
}

/// The machine's change per metric and kind of load: where it came from, the configurations it is the
/// median of, their scatter around it and the band a change had to clear. Headers, then rows.
pub fn baselines_rows(c: &Comparison) -> ([&'static str; 7], Vec<Vec<String>>) {
    let headers = ["figure", "load", "from", "configurations", "machine B/A", "spread", "a change must clear"];
    let rows = c
        .baselines
        .iter()
        .map(|b| {
            vec![
                b.metric.name().to_string(),
                if b.fixed_rate { "fixed rate" } else { "closed loop" }.to_string(),
                b.source.word().to_string(),
                b.configurations.to_string(),
                format!("{:.3}", b.factor),
                b.scatter.map_or(ABSENT.into(), |s| format!("±{:.1}%{}", s.spread_pct(), if s.floored { " (floor)" } else { "" })),
                format!("×/÷ {:.3}", b.band(c.rules)),
            ]
        })
        .collect();
    (headers, rows)
}

/// How the machine moved between the runs: per metric the change the verdicts corrected for, then the
/// probes per CPU.
fn machine(c: &Comparison) -> String {
    let mut out = format!(
        "The machine's own change, B against A, per figure: the median over configurations of their B/A \
         (`servers`; `probes` where fewer than {} configurations were measured), and the configurations' \
         scatter around it (1.48 × MAD of the log ratios):\n\n{}\n",
        super::baseline::MIN_CONFIGURATIONS,
        {
            let (headers, rows) = baselines_rows(c);
            let aligns = [Align::Left, Align::Left, Align::Left, Align::Right, Align::Right, Align::Right, Align::Right];
            let spec: Vec<(&str, Align)> = headers.into_iter().zip(aligns).collect();
            let mut t = Table::new(&spec);
            rows.into_iter().for_each(|r| t.row(r));
            t.markdown()
        }
    );
    if c.machine.is_empty() {
        out.push_str(
            "The runs hold no CPU speed probes: where too few configurations give a common change, a change of \
             the machine cannot be told from a change of a contestant.\n\n",
        );
        return out;
    }
    let mut t = Table::new(&[("CPU", Align::Right), ("role", Align::Left), ("user loop B/A", Align::Right), ("syscall loop B/A", Align::Right)]);
    for m in &c.machine {
        t.row(vec![m.cpu.to_string(), m.role.clone(), format!("{:.3}", m.user_ratio), format!("{:.3}", m.syscall_ratio)]);
    }
    let probes = if c.probed_factor == 1.0 {
        format!("within ±{}% on the server's CPUs", c.rules.noise_pct)
    } else {
        format!("{:.3}x on the server's CPUs", c.probed_factor)
    };
    let _ = write!(out, "The CPU speed probes ({probes}), per CPU (median probe):\n\n{}\n", t.markdown());
    out
}

/// The cross-CPU probe of both runs, and a warning when it moved beyond the band that flags `cpu-drift`.
pub fn cross_cpu(c: &Comparison) -> String {
    let Some((a, b)) = c.cross_cpu else { return String::new() };
    let warning = if crate::model::cross_cpu_moved(b / a) {
        " The machine passed data between the client's and the server's CPUs at another speed in B: on the \
         2-CPU VM such a change moved loopback req/s 0.70x while the CPU loops held. The servers' common \
         change accounts for it where they met it alike; a configuration whose own regime moved otherwise than \
         the rest's, or moved at all where too few configurations give a common change, is never called \
         better or worse (≈ machine at most; docs/methodology.md)."
    } else {
        ""
    };
    format!("Between the client's and the server's CPUs (median probe): {a:.0} cache-line round trips a ms in A, {b:.0} in B ({:.2}x).{warning}\n\n", b / a)
}

fn differences(c: &Comparison) -> String {
    if c.differences.is_empty() {
        return "Both runs used the same machine, tools and measurement rules.\n".into();
    }
    let mut t = Table::new(&[("setting", Align::Left), ("A", Align::Left), ("B", Align::Left)]);
    for (what, a, b) in &c.differences {
        t.row(vec![what.clone(), a.clone(), b.clone()]);
    }
    format!("Settings that differ between the runs (a difference here can explain a change below):\n\n{}", t.markdown())
}

/// The changes beyond noise, worst first, or a sentence saying there are none.
pub fn flagged(c: &Comparison) -> Vec<(&Row, &Change)> {
    let mut v: Vec<(&Row, &Change)> = c
        .rows
        .iter()
        .flat_map(|r| r.changes.iter().map(move |ch| (r, ch)))
        .filter(|(_, ch)| matches!(ch.verdict, Verdict::Better | Verdict::Worse))
        .collect();
    v.sort_by_key(|(r, ch)| (ch.verdict != Verdict::Worse, r.key.clone()));
    v
}

fn verdicts(c: &Comparison) -> String {
    let count = |v: Verdict| c.rows.iter().flat_map(|r| &r.changes).filter(|ch| ch.verdict == v).count();
    let mut out = format!(
        "\n{} configurations in both runs; of their {} figures: {} worse, {} better, {} within noise, {} unclear, {} moved with the machine, {} untested.\n",
        c.rows.len(),
        c.rows.len() * Metric::ALL.len(),
        count(Verdict::Worse),
        count(Verdict::Better),
        count(Verdict::Same),
        count(Verdict::Unclear),
        count(Verdict::Machine),
        count(Verdict::Untested)
    );
    for (row, ch) in flagged(c) {
        let _ = writeln!(
            out,
            "- {} {} · {}: {} {}{}",
            ch.verdict.marker(),
            row.key.contestant,
            row.key.configuration(),
            ch.metric.name(),
            ratio_text(ch),
            apart_text(ch)
        );
    }
    out
}

/// "0.800× (p = 0.00012)".
pub fn ratio_text(ch: &Change) -> String {
    match (ch.ratio, ch.test) {
        (Some(r), Some(t)) => format!("{r:.3}× (p = {})", p_text(t.p)),
        (Some(r), None) => format!("{r:.3}×"),
        _ => ABSENT.into(),
    }
}

/// "; 0.716× once the machine's change is taken out, 21.6 spreads from the rest", where it was.
pub fn apart_text(ch: &Change) -> String {
    let corrected = ch.corrected.map_or(String::new(), |t| format!("; {:.3}× once the machine's change is taken out", t.ratio));
    let spreads = ch.spreads.map_or(String::new(), |s| format!(", {:.1} spreads from the rest", s.abs()));
    format!("{corrected}{spreads}")
}

/// A p-value with two significant digits.
pub fn p_text(p: f64) -> String {
    if p >= 0.1 {
        format!("{p:.2}")
    } else if p >= 0.01 {
        format!("{p:.3}")
    } else if p > 0.0 {
        let e = p.log10().floor() as i32;
        format!("{:.1}e{e}", p / 10f64.powi(e))
    } else {
        "0".into()
    }
}

/// Rows grouped under their configuration, in order (the rows come sorted by configuration).
pub fn by_configuration(rows: &[Row]) -> Vec<(String, Vec<&Row>)> {
    let mut out: Vec<(String, Vec<&Row>)> = Vec::new();
    for r in rows {
        let conf = r.key.configuration();
        match out.last_mut() {
            Some((c, v)) if *c == conf => v.push(r),
            _ => out.push((conf, vec![r])),
        }
    }
    out
}

/// How a metric's median is written in the tables, with the unit for the header.
pub fn value_text(metric: Metric, v: Option<f64>) -> String {
    match metric {
        Metric::RequestsPerS => or_absent(v, int),
        Metric::P99 => or_absent(v, us),
        Metric::CpuPerRequest => or_absent(v, |x| format!("{x:.2}")),
    }
}

pub fn unit_suffix(metric: Metric) -> &'static str {
    match metric {
        Metric::RequestsPerS => "",
        Metric::P99 => " µs",
        Metric::CpuPerRequest => " µs",
    }
}

fn table(rows: &[&Row]) -> Table {
    let mut columns: Vec<(String, Align)> = vec![("contestant".into(), Align::Left)];
    for m in Metric::ALL {
        let (name, unit) = (m.name(), unit_suffix(m));
        columns.extend([
            (format!("{name} A{unit}"), Align::Right),
            (format!("{name} B{unit}"), Align::Right),
            (format!("{name} B/A"), Align::Left),
        ]);
    }
    columns.push(("notes".into(), Align::Left));
    let spec: Vec<(&str, Align)> = columns.iter().map(|(h, a)| (h.as_str(), *a)).collect();
    let mut t = Table::new(&spec);
    for r in rows {
        let mut cells = vec![r.key.contestant.clone()];
        for ch in &r.changes {
            cells.push(value_text(ch.metric, ch.median_a));
            cells.push(value_text(ch.metric, ch.median_b));
            cells.push(format!("{} {}", ratio_text(ch), ch.verdict.marker()));
        }
        cells.push(r.notes.join("; "));
        t.row(cells);
    }
    t
}

fn unmatched(c: &Comparison) -> String {
    let mut out = String::new();
    if !c.lost.is_empty() {
        let _ = writeln!(out, "\nLost in B (each trips every --fail-on gate):\n");
        for l in &c.lost {
            let _ = writeln!(out, "- {} · {}: {}", l.key.contestant, l.key.configuration(), l.why.text());
        }
    }
    for (side, keys) in [("A", &c.only_a), ("B", &c.only_b)] {
        if !keys.is_empty() {
            let _ = writeln!(out, "\nMeasured only in {side} (not compared):\n");
            for k in keys {
                let _ = writeln!(out, "- {} · {}", k.contestant, k.configuration());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p_values_keep_two_significant_digits() {
        assert_eq!(p_text(0.8123), "0.81");
        assert_eq!(p_text(0.0213), "0.021");
        assert_eq!(p_text(0.00123), "1.2e-3");
        assert_eq!(p_text(0.0), "0");
    }
}
