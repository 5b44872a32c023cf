//! The over-time part of report.html: for one configuration, each server's rounds on the run's time axis,
//! interval by interval (`RoundLoad::intervals`): req/s above, p50, p99 and max latency below, one small
//! panel per server on shared scales, so that a stall, a slow stretch of the machine or a warm-up effect
//! shows where it happened. Warm-up rounds and rounds flagged cpu-drift, disturbed or ramp-incomplete are
//! shaded and named. A table beside it gives each server's steadiest and worst interval.

use std::fmt::Write as _;

use super::format::ABSENT;
use super::html_page::{Cell, Page, Table};
use super::html_rows::Row;
use super::svg::{esc, log_ticks, nice_ticks, tick, Unit, PALETTE};
use crate::model::{Round, Flag};
use crate::model::Intervals;

/// The round flags that say the machine or the ramp moved the figures: shaded where the round ran.
static MARKED_FLAGS: [Flag; 3] = [Flag::CpuDrift, Flag::Disturbed, Flag::RampIncomplete];
/// Panels open at once up to this many servers; with more, the figure is folded until asked for.
const OPEN_UP_TO: usize = 8;
/// Between two rounds laid end to end when the run did not record when each began.
const GAP_S: f64 = 0.1;

const WIDTH: f64 = 440.0;
const LEFT: f64 = 58.0;
const RIGHT: f64 = 10.0;
const HEAD: f64 = 18.0;
const RATE_H: f64 = 56.0;
const GAP_H: f64 = 12.0;
const LATENCY_H: f64 = 96.0;
const FOOT: f64 = 22.0;
const HEIGHT: f64 = HEAD + RATE_H + GAP_H + LATENCY_H + FOOT;
const FLAG_FILL: &str = "#fbe0d4";
const WARMUP_FILL: &str = "#ececec";
/// The latency lines: name, colour, dash.
const LINES: [(&str, &str, &str); 3] = [("p50", PALETTE[2], ""), ("p99", PALETTE[1], "6 3"), ("max", PALETTE[6], "1.5 2.5")];

/// One interval as drawn: its middle on the run's time axis, its req/s and latencies (ns; NaN without a
/// response).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Point {
    t_s: f64,
    rps: f64,
    latency_ns: [f64; 3],
}

/// One round of a server on the run's time axis.
#[derive(Debug, Clone, PartialEq)]
struct Span {
    index: u32,
    warmup: bool,
    start_s: f64,
    end_s: f64,
    marks: Vec<&'static str>,
    points: Vec<Point>,
}

/// A server's rounds with intervals.
struct Track {
    label: String,
    spans: Vec<Span>,
}

/// The over-time figure of one configuration (`id` its anchor), or a note when no round of it has
/// intervals (external tools; runs stored before intervals were kept).
pub(super) fn timeline_figure(page: &mut Page, id: &str, scenario: &str, rows: &[&Row]) {
    let tracks: Vec<Track> = rows.iter().map(|r| Track { label: r.m.contestant.clone(), spans: spans(r.m.rounds.iter().filter_map(RoundView::of)) }).filter(|t| !t.spans.is_empty()).collect();
    if tracks.is_empty() {
        page.note(&format!("{scenario}: no round has interval histograms (an external load tool, or a run stored before they were kept), so nothing is drawn over time."));
        return;
    }
    let points = || tracks.iter().flat_map(|t| t.spans.iter().flat_map(|s| s.points.iter()));
    let x_hi = tracks.iter().flat_map(|t| t.spans.iter().map(|s| s.end_s)).fold(0.0, f64::max);
    let rate_ticks = nice_ticks(points().map(|p| p.rps).filter(|v| v.is_finite()).fold(0.0, f64::max), 2);
    let latencies: Vec<f64> = points().flat_map(|p| p.latency_ns).filter(|v| *v > 0.0 && v.is_finite()).collect();
    let low = latencies.iter().copied().fold(f64::INFINITY, f64::min);
    let high = latencies.iter().copied().fold(0.0, f64::max);
    let scales = Scales {
        x_hi: x_hi.max(1e-3),
        rate_hi: *rate_ticks.last().unwrap_or(&1.0),
        rate_ticks,
        latency: if high > 0.0 { (10f64.powf(low.log10().floor()), 10f64.powf(high.log10().ceil())) } else { (1e3, 1e6) },
    };
    let panels: String = tracks.iter().enumerate().map(|(k, t)| panel(&format!("{id}-timeline-p{k}"), t, &scales)).collect();
    let mut html = format!(
        r#"<details class="timeline"{}><summary>{} over time: req/s and latency per interval of each round, {} server{} on shared scales</summary>"#,
        if tracks.len() <= OPEN_UP_TO { " open" } else { "" },
        esc(scenario),
        tracks.len(),
        if tracks.len() == 1 { "" } else { "s" }
    );
    html += &legend();
    let _ = write!(html, r#"<div id="{}-timeline" style="display:grid;grid-template-columns:repeat(auto-fill,minmax(300px,1fr));gap:6px 14px">{panels}</div>"#, esc(id));
    let _ = write!(html, r#"<div class="table-box">{}</div></details>"#, worst_table(&format!("{id}-timeline-table"), &tracks).to_html());
    page.raw(&html);
}

/// What of a round the figure reads.
struct RoundView<'a> {
    index: u32,
    warmup: bool,
    started_s: Option<f64>,
    duration_s: f64,
    intervals: &'a Intervals,
    flags: &'a [Flag],
}

impl<'a> RoundView<'a> {
    fn of(r: &'a Round) -> Option<RoundView<'a>> {
        Some(RoundView {
            index: r.index,
            warmup: r.warmup,
            started_s: r.machine.started_s,
            duration_s: r.load.duration_s,
            intervals: r.load.intervals.as_ref()?,
            flags: &r.flags,
        })
    }
}

/// A server's rounds that have intervals, on the run's time axis: where the run recorded when a round
/// began, there; otherwise end to end in the order run.
fn spans<'a>(rounds: impl IntoIterator<Item = RoundView<'a>>) -> Vec<Span> {
    let mut next_s = 0.0;
    let mut out = Vec::new();
    for r in rounds {
        let intervals = r.intervals;
        let start_s = r.started_s.unwrap_or(next_s);
        let window_s = r.duration_s.max(intervals.length_ms / 1e3 * (intervals.each.len() as f64 - 1.0));
        let points = intervals
            .each
            .iter()
            .zip(intervals.spans_s(window_s))
            .map(|(i, (at, len))| {
                // Three figures of each histogram, not its whole summary: a run has thousands of intervals.
                let latency_ns = match i.histogram() {
                    Ok(h) if !h.is_empty() => [h.value_at_quantile(0.5) as f64, h.value_at_quantile(0.99) as f64, h.max() as f64],
                    _ => [f64::NAN; 3],
                };
                Point { t_s: start_s + at + len / 2.0, rps: i.requests as f64 / len, latency_ns }
            })
            .collect();
        let end_s = start_s + window_s.max(intervals.length_ms / 1e3);
        next_s = end_s + GAP_S;
        let marks = MARKED_FLAGS.iter().filter(|f| r.flags.contains(f)).map(Flag::name).collect();
        out.push(Span { index: r.index, warmup: r.warmup, start_s, end_s, marks, points });
    }
    out
}

struct Scales {
    x_hi: f64,
    rate_hi: f64,
    rate_ticks: Vec<f64>,
    /// The latency axis's range in ns, whole decades (log scale).
    latency: (f64, f64),
}

impl Scales {
    fn x(&self, t_s: f64) -> f64 {
        LEFT + t_s / self.x_hi * (WIDTH - LEFT - RIGHT)
    }
    fn rate(&self, v: f64) -> f64 {
        HEAD + RATE_H * (1.0 - v / self.rate_hi)
    }
    fn latency(&self, ns: f64) -> f64 {
        let (lo, hi) = (self.latency.0.log10(), self.latency.1.log10());
        let top = HEAD + RATE_H + GAP_H;
        top + LATENCY_H * (1.0 - (ns.max(self.latency.0).log10() - lo) / (hi - lo).max(1e-9))
    }
}

fn px(v: f64) -> String {
    format!("{:.1}", v)
}

/// One server's panel: shading of flagged and warm-up rounds, the req/s plot and the latency plot.
fn panel(id: &str, t: &Track, sc: &Scales) -> String {
    let mut s = format!(
        r##"<svg id="{id}" viewBox="0 0 {w} {h}" width="100%" role="img" aria-labelledby="{id}-title" font-family="system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif" font-size="10"><title id="{id}-title">{label}: req/s and latency per interval over the run</title><rect width="100%" height="100%" fill="#fff"/><text x="{LEFT}" y="12" font-size="12" font-weight="bold">{label}</text>"##,
        id = esc(id),
        w = WIDTH,
        h = HEIGHT,
        label = esc(&t.label)
    );
    let (rate_top, rate_bottom) = (HEAD, HEAD + RATE_H);
    let (lat_top, lat_bottom) = (HEAD + RATE_H + GAP_H, HEAD + RATE_H + GAP_H + LATENCY_H);
    for span in &t.spans {
        let what: Vec<&str> = span.warmup.then_some("warm-up").into_iter().chain(span.marks.iter().copied()).collect();
        if what.is_empty() {
            continue;
        }
        let fill = if span.marks.is_empty() { WARMUP_FILL } else { FLAG_FILL };
        let (x0, x1) = (sc.x(span.start_s), sc.x(span.end_s).max(sc.x(span.start_s) + 2.0));
        let _ = write!(
            s,
            r#"<rect class="mark" x="{}" y="{}" width="{}" height="{}" fill="{fill}"><title>{} round {}: {}</title></rect>"#,
            px(x0),
            px(rate_top),
            px(x1 - x0),
            px(lat_bottom - rate_top),
            if span.warmup { "warm-up" } else { "measured" },
            span.index,
            esc(&what.join(", "))
        );
        if !span.marks.is_empty() {
            let _ = write!(s, r##"<text x="{}" y="{}" font-size="8" fill="#8a3b12">{}</text>"##, px(x0 + 1.0), px(rate_top + 16.0), esc(&span.marks.join(" ")));
        }
    }
    // Axes: req/s ticks, latency decades, the time axis in seconds of the run.
    for v in &sc.rate_ticks {
        let y = sc.rate(*v);
        grid_line(&mut s, y, &tick(Unit::Count, *v));
    }
    for v in log_ticks(sc.latency.0, sc.latency.1).into_iter().filter(|v| (v.log10() - v.log10().round()).abs() < 1e-9) {
        let y = sc.latency(v);
        grid_line(&mut s, y, &tick(Unit::Nanos, v));
    }
    // The plots' names inside their top left corners, clear of the tick labels.
    let _ = write!(
        s,
        r##"<text x="{}" y="{}" font-size="8" fill="#666">req/s</text><text x="{}" y="{}" font-size="8" fill="#666">latency (log)</text>"##,
        px(LEFT + 3.0),
        px(rate_top + 8.0),
        px(LEFT + 3.0),
        px(lat_top + 8.0)
    );
    for v in nice_ticks(sc.x_hi, 5).into_iter().filter(|v| *v <= sc.x_hi * 1.0001) {
        let _ = write!(s, r##"<text x="{}" y="{}" text-anchor="middle" fill="#444">{} s</text>"##, px(sc.x(v)), px(lat_bottom + 13.0), tick(Unit::Count, v));
    }
    let _ = write!(s, r##"<line x1="{LEFT}" x2="{}" y1="{}" y2="{}" stroke="#444"/>"##, px(WIDTH - RIGHT), px(rate_bottom), px(rate_bottom));
    let _ = write!(s, r##"<line x1="{LEFT}" x2="{}" y1="{}" y2="{}" stroke="#444"/>"##, px(WIDTH - RIGHT), px(lat_bottom), px(lat_bottom));
    for span in &t.spans {
        let rate: Vec<(f64, f64)> = span.points.iter().map(|p| (sc.x(p.t_s), sc.rate(p.rps))).collect();
        trace(&mut s, &rate, PALETTE[0], "", &format!("round {} req/s", span.index));
        for (k, (name, colour, dash)) in LINES.iter().enumerate() {
            let line: Vec<(f64, f64)> =
                span.points.iter().map(|p| (sc.x(p.t_s), if p.latency_ns[k].is_finite() { sc.latency(p.latency_ns[k]) } else { f64::NAN })).collect();
            trace(&mut s, &line, colour, dash, &format!("round {} {name}", span.index));
        }
    }
    s.push_str("</svg>");
    s
}

fn grid_line(s: &mut String, y: f64, label: &str) {
    let _ = write!(
        s,
        r##"<line x1="{LEFT}" x2="{}" y1="{y}" y2="{y}" stroke="#ddd"/><text x="{}" y="{}" text-anchor="end" fill="#444">{}</text>"##,
        px(WIDTH - RIGHT),
        px(LEFT - 4.0),
        px(y + 3.0),
        esc(label),
        y = px(y)
    );
}

/// A line through the points, broken where a point is missing (an interval without responses has no
/// latency); a point alone is a dot.
fn trace(s: &mut String, points: &[(f64, f64)], colour: &str, dash: &str, title: &str) {
    for run in points.split(|p| !p.1.is_finite()).filter(|r| !r.is_empty()) {
        if run.len() == 1 {
            let _ = write!(s, r#"<circle cx="{}" cy="{}" r="1.8" fill="{colour}"><title>{}</title></circle>"#, px(run[0].0), px(run[0].1), esc(title));
            continue;
        }
        let pts: Vec<String> = run.iter().map(|(x, y)| format!("{},{}", px(*x), px(*y))).collect();
        let dash = if dash.is_empty() { String::new() } else { format!(r#" stroke-dasharray="{dash}""#) };
        let _ = write!(s, r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="1.3"{dash}><title>{}</title></polyline>"#, pts.join(" "), esc(title));
    }
}

/// What the lines and the shading mean.
fn legend() -> String {
    let mut s = String::from(r#"<p class="note">Each point is one interval of a round (its length is the run's --interval): req/s is the interval's valid responses over its length; the latencies are the percentiles of the responses completed in it (in rate mode from each request's intended send). Lines break between rounds and where an interval completed nothing. "#);
    for (name, colour, dash) in LINES {
        let dash = if dash.is_empty() { String::new() } else { format!(r#" stroke-dasharray="{dash}""#) };
        let _ = write!(s, r#"<svg width="26" height="8" aria-hidden="true"><line x1="0" x2="26" y1="4" y2="4" stroke="{colour}" stroke-width="1.5"{dash}/></svg> {name} "#);
    }
    let _ = write!(
        s,
        r#"<span style="background:{WARMUP_FILL};padding:0 4px">warm-up round</span> <span style="background:{FLAG_FILL};padding:0 4px">round flagged {}</span></p>"#,
        MARKED_FLAGS.iter().map(Flag::name).collect::<Vec<_>>().join(", ")
    );
    s
}

/// Per server: its intervals' median and lowest req/s, median and highest p99, and the highest latency with
/// where it was.
fn worst_table(id: &str, tracks: &[Track]) -> Table {
    let rows = tracks
        .iter()
        .map(|t| {
            let measured: Vec<(&Span, &Point)> = t.spans.iter().filter(|s| !s.warmup).flat_map(|s| s.points.iter().map(move |p| (s, p))).collect();
            let rps: Vec<f64> = measured.iter().map(|(_, p)| p.rps).collect();
            let p99: Vec<f64> = measured.iter().map(|(_, p)| p.latency_ns[1]).filter(|v| v.is_finite()).collect();
            let worst = measured.iter().filter(|(_, p)| p.latency_ns[2].is_finite()).max_by(|a, b| a.1.latency_ns[2].total_cmp(&b.1.latency_ns[2]));
            let lat = |v: Option<f64>| v.map_or(Cell::text(ABSENT), |v| Cell::num(Unit::Nanos.format(v), v));
            let count = |v: Option<f64>| v.map_or(Cell::text(ABSENT), |v| Cell::num(Unit::Count.format(v), v));
            vec![
                Cell::text(t.label.clone()),
                Cell::num(measured.len().to_string(), measured.len() as f64),
                count(median(&rps)),
                count(rps.iter().copied().reduce(f64::min)),
                lat(median(&p99)),
                lat(p99.iter().copied().reduce(f64::max)),
                lat(worst.map(|w| w.1.latency_ns[2])),
                worst.map_or(Cell::text(ABSENT), |(s, p)| Cell::text(format!("round {}, {:.2} s into it", s.index, p.t_s - s.start_s))),
            ]
        })
        .collect();
    Table {
        id: id.into(),
        caption: Some("Over time: the measured rounds' intervals".into()),
        headers: ["server", "intervals", "req/s median", "req/s lowest", "p99 median", "p99 highest", "max", "max at (interval middle)"]
            .map(String::from)
            .to_vec(),
        rows,
    }
}

/// The median of the finite values; none without one.
fn median(v: &[f64]) -> Option<f64> {
    let finite: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    (!finite.is_empty()).then(|| crate::stats::rounds::median(&finite))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::histogram::{new_latency_histogram, to_base64};
    use crate::model::Interval;

    const MS: u64 = 1_000_000;

    fn interval(requests: u64, latency_ns: u64) -> Interval {
        let mut h = new_latency_histogram();
        if requests > 0 {
            h.record_n(latency_ns, requests).unwrap();
        }
        Interval { requests, errors: 0, latency: to_base64(&h) }
    }

    fn series(each: Vec<Interval>) -> Intervals {
        Intervals { length_ms: 100.0, each }
    }

    fn view<'a>(index: u32, warmup: bool, started_s: Option<f64>, intervals: &'a Intervals, flags: &'a [Flag]) -> RoundView<'a> {
        RoundView { index, warmup, started_s, duration_s: intervals.each.len() as f64 * 0.1, intervals, flags }
    }

    #[test]
    fn rounds_sit_where_they_began_and_a_stall_is_an_interval_of_its_own() {
        let (warm, stalled) = (series(vec![interval(100, MS); 3]), series(vec![interval(100, MS), interval(0, 0), interval(3, 200 * MS)]));
        let flags = [Flag::Disturbed, Flag::ClientBound];
        let s = spans([view(1, true, Some(0.0), &warm, &[]), view(1, false, Some(2.0), &stalled, &flags)]);
        assert_eq!(s.len(), 2);
        assert!(s[0].warmup && s[0].marks.is_empty());
        assert_eq!(s[1].marks, [Flag::Disturbed.name()], "only the flags of the machine and the ramp are shaded");
        let p = &s[1].points;
        assert!((p[0].t_s - 2.05).abs() < 1e-9 && (p[2].t_s - 2.25).abs() < 1e-9, "{p:?}");
        assert!((p[0].rps - 1000.0).abs() < 1e-6);
        assert_eq!(p[1].rps, 0.0);
        assert!(p[1].latency_ns[0].is_nan(), "no response, no latency");
        assert!(p[2].latency_ns[2] >= 200e6);
    }

    #[test]
    fn without_start_times_rounds_are_laid_end_to_end() {
        let one = series(vec![interval(1, MS); 3]);
        let s = spans([view(1, false, None, &one, &[]), view(2, false, None, &one, &[])]);
        assert!((s[1].start_s - (s[0].end_s + GAP_S)).abs() < 1e-9, "{:?}", (s[0].end_s, s[1].start_s));
    }

    #[test]
    fn a_panel_shades_flagged_rounds_and_breaks_lines_at_empty_intervals() {
        let stalled = series(vec![interval(100, MS), interval(0, 0), interval(100, MS), interval(3, 200 * MS)]);
        let flags = [Flag::CpuDrift];
        let t = Track { label: "c-epoll".into(), spans: spans([view(1, false, Some(0.0), &stalled, &flags)]) };
        let sc = Scales { x_hi: 1.0, rate_hi: 1000.0, rate_ticks: vec![0.0, 500.0, 1000.0], latency: (1e5, 1e9) };
        let svg = panel("x-p0", &t, &sc);
        assert!(svg.contains(Flag::CpuDrift.name()) && svg.contains(FLAG_FILL), "the flagged round is shaded and named");
        assert!(svg.contains(">c-epoll</text>"));
        // p50 breaks at the empty interval: a dot before it, a line after.
        assert_eq!(svg.matches("<title>round 1 p50</title>").count(), 2);
        assert!(svg.contains(">100 ms<") || svg.contains(">1 s<"), "latency decades on the axis");
        let table = worst_table("t", &[t]);
        assert_eq!(table.rows[0][6].text, Unit::Nanos.format(table.rows[0][6].sort.unwrap()));
        assert!(table.rows[0][6].sort.unwrap() >= 200e6);
        assert!(table.rows[0][7].text.starts_with("round 1, 0.35 s"), "{}", table.rows[0][7].text);
    }
}
