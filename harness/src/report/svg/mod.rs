//! SVG charts drawn from plain data: horizontal bars with 95% CI whiskers, line charts (scaling over
//! connections), line charts split into small panels on shared axes (the latency percentile spectrum), and
//! flame graphs of sampled stacks.
//! Every mark carries a text label, a fill pattern, a dash pattern or a marker shape, so a chart reads
//! without colour; colours are the Okabe–Ito palette, which stays distinct for the common forms of colour
//! blindness.

use std::fmt::Write as _;

mod bar;
mod flame;
mod line;
mod panels;

pub use bar::*;
pub use flame::{differential_flame_graph, flame_graph};
pub use line::*;
pub use panels::*;

/// Okabe & Ito, "Color Universal Design" (2008), without yellow (too faint on white).
pub const PALETTE: [&str; 7] = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#56B4E9", "#E69F00", "#000000"];
/// Dash patterns for lines, in the order series take them; the first is solid.
pub const DASHES: [&str; 7] = ["", "9 4", "2 3", "12 3 3 3", "5 5", "14 4 2 4 2 4", "1 6"];
/// Marker shapes for lines, in the order series take them.
pub const MARKERS: [Marker; 7] = [
    Marker::Circle,
    Marker::Square,
    Marker::TriangleUp,
    Marker::Diamond,
    Marker::TriangleDown,
    Marker::Cross,
    Marker::Plus,
];

const WIDTH: f64 = 900.0;
const FONT_PX: f64 = 12.0;
/// A generous average advance of a 12 px sans-serif glyph; used to size label columns.
const CHAR_PX: f64 = 7.0;
const AXIS_COLOUR: &str = "#444";
const GRID_COLOUR: &str = "#ddd";

/// How a number is written on an axis or beside a mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// 3 significant digits with k, M, G: requests per second, counts.
    Count,
    /// A duration given in nanoseconds: ns, µs, ms, s.
    Nanos,
    /// Microseconds as they are (CPU time per request).
    Micros,
    /// Bytes in binary multiples: KiB, MiB, GiB.
    Bytes,
    /// Bytes per second in binary multiples.
    BytesPerSec,
    /// A plain ratio or factor, 3 significant digits, with a trailing ×.
    Ratio,
}

impl Unit {
    pub fn format(self, v: f64) -> String {
        if !v.is_finite() {
            return "–".to_string();
        }
        match self {
            Unit::Count => scaled(v, 1000.0, &["", "k", "M", "G", "T"], ""),
            Unit::Nanos => {
                let a = v.abs();
                if a < 1e3 {
                    format!("{} ns", sig3(v))
                } else if a < 1e6 {
                    format!("{} µs", sig3(v / 1e3))
                } else if a < 1e9 {
                    format!("{} ms", sig3(v / 1e6))
                } else {
                    format!("{} s", sig3(v / 1e9))
                }
            }
            Unit::Micros => format!("{} µs", sig3(v)),
            Unit::Bytes => scaled(v, 1024.0, &[" B", " KiB", " MiB", " GiB", " TiB"], ""),
            Unit::BytesPerSec => scaled(v, 1024.0, &[" B", " KiB", " MiB", " GiB", " TiB"], "/s"),
            Unit::Ratio => format!("{}×", sig3(v)),
        }
    }
}

/// As `Unit::format`, without trailing zeros after the decimal point ("10 ms" rather than "10.0 ms"), for
/// axis ticks.
pub fn tick(unit: Unit, v: f64) -> String {
    let text = unit.format(v);
    let end = text.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-')).unwrap_or(text.len());
    let (number, rest) = text.split_at(end);
    if number.contains('.') {
        format!("{}{rest}", number.trim_end_matches('0').trim_end_matches('.'))
    } else {
        text
    }
}

fn scaled(v: f64, base: f64, prefixes: &[&str], suffix: &str) -> String {
    let mut x = v;
    let mut i = 0;
    while x.abs() >= base && i + 1 < prefixes.len() {
        x /= base;
        i += 1;
    }
    format!("{}{}{}", sig3(x), prefixes[i], suffix)
}

/// Three significant digits ("0.0123", "5.00", "12.3", "999", "1000"), rounding first so that 0.99996
/// becomes "1.00", not "1.000".
pub fn sig3(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 || !a.is_finite() {
        return format!("{v}");
    }
    let step = 10f64.powi(a.log10().floor() as i32 - 2);
    let rounded = (a / step).round() * step;
    let decimals = (2 - rounded.log10().floor() as i32).clamp(0, 9) as usize;
    format!("{v:.decimals$}")
}

/// Escapes text for XML and HTML content and attribute values.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// A number as SVG writes it: two decimals at most, no "-0".
fn n(v: f64) -> String {
    let r = (v * 100.0).round() / 100.0;
    if r == 0.0 {
        "0".to_string()
    } else {
        format!("{r}")
    }
}

fn text_px(text: &str) -> f64 {
    text.chars().count() as f64 * CHAR_PX
}

/// "Nice" tick values covering [0, max]: steps of 1, 2 or 5 times a power of ten (Heckbert, "Nice numbers
/// for graph labels", Graphics Gems, 1990). Returns the ticks; the last is at or above `max`.
pub fn nice_ticks(max: f64, target_count: usize) -> Vec<f64> {
    if !(max > 0.0 && max.is_finite()) {
        return vec![0.0, 1.0];
    }
    let raw_step = max / target_count.max(1) as f64;
    let magnitude = 10f64.powf(raw_step.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * magnitude).find(|s| *s >= raw_step).unwrap_or(10.0 * magnitude);
    let count = (max / step - 1e-9).ceil() as usize;
    (0..=count.max(1)).map(|i| i as f64 * step).collect()
}

/// Nice ticks in the unit's own steps: bytes in powers of 1024 (1, 2, 4 MiB rather than 0.95, 1.9 MiB).
pub fn unit_ticks(unit: Unit, max: f64, target_count: usize) -> Vec<f64> {
    let scale = match unit {
        Unit::Bytes | Unit::BytesPerSec if max >= 1024.0 => 1024f64.powi((max.log2() / 10.0).floor() as i32),
        _ => 1.0,
    };
    nice_ticks(max / scale, target_count).into_iter().map(|t| t * scale).collect()
}

/// Ticks for a log axis over [low, high]: every power of ten, with 2 and 5 between them when the range
/// spans fewer than three decades.
pub fn log_ticks(low: f64, high: f64) -> Vec<f64> {
    let (a, b) = (low.log10().floor() as i32, high.log10().ceil() as i32);
    let mults: &[f64] = if b - a < 3 { &[1.0, 2.0, 5.0] } else { &[1.0] };
    let mut ticks = Vec::new();
    for e in a..=b {
        for m in mults {
            let t = m * 10f64.powi(e);
            if t >= low * (1.0 - 1e-9) && t <= high * (1.0 + 1e-9) {
                ticks.push(t);
            }
        }
    }
    ticks
}

/// The style of series `i`: colour, dash pattern and marker. Dash and marker move on by one more each time
/// the colours wrap around, so up to 49 series keep distinct combinations.
pub fn series_style(i: usize) -> (&'static str, &'static str, Marker) {
    let k = (i + i / PALETTE.len()) % DASHES.len();
    (PALETTE[i % PALETTE.len()], DASHES[k], MARKERS[k])
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    Circle,
    Square,
    TriangleUp,
    TriangleDown,
    Diamond,
    Cross,
    Plus,
}

impl Marker {
    fn draw(self, x: f64, y: f64, colour: &str) -> String {
        let r = 4.0;
        let p = |pts: &[(f64, f64)]| {
            let d: Vec<String> = pts.iter().map(|(dx, dy)| format!("{},{}", n(x + dx), n(y + dy))).collect();
            format!(r#"<polygon points="{}" fill="{colour}"/>"#, d.join(" "))
        };
        match self {
            Marker::Circle => format!(r#"<circle cx="{}" cy="{}" r="{}" fill="{colour}"/>"#, n(x), n(y), n(r)),
            Marker::Square => p(&[(-r, -r), (r, -r), (r, r), (-r, r)]),
            Marker::TriangleUp => p(&[(0.0, -r - 1.0), (r + 1.0, r), (-r - 1.0, r)]),
            Marker::TriangleDown => p(&[(0.0, r + 1.0), (r + 1.0, -r), (-r - 1.0, -r)]),
            Marker::Diamond => p(&[(0.0, -r - 1.0), (r + 1.0, 0.0), (0.0, r + 1.0), (-r - 1.0, 0.0)]),
            Marker::Cross => format!(
                r#"<path d="M{a} {b}L{c} {d}M{a} {d}L{c} {b}" stroke="{colour}" stroke-width="2.5"/>"#,
                a = n(x - r),
                b = n(y - r),
                c = n(x + r),
                d = n(y + r)
            ),
            Marker::Plus => format!(
                r#"<path d="M{} {}H{}M{} {}V{}" stroke="{colour}" stroke-width="2.5"/>"#,
                n(x - r - 1.0),
                n(y),
                n(x + r + 1.0),
                n(x),
                n(y - r - 1.0),
                n(y + r + 1.0)
            ),
        }
    }
}

fn svg_open(id: &str, title: &str, width: f64, height: f64) -> String {
    format!(
        r##"<svg id="{id}" class="chart" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-labelledby="{id}-title" font-family="system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif" font-size="{FONT_PX}"><title id="{id}-title">{t}</title><rect width="100%" height="100%" fill="#fff"/>"##,
        id = esc(id),
        w = n(width),
        h = n(height),
        t = esc(title)
    )
}

fn title_text(s: &mut String, title: &str) {
    let _ = write!(s, r#"<text x="4" y="18" font-size="15" font-weight="bold">{}</text>"#, esc(title));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_with_three_significant_digits() {
        assert_eq!(Unit::Count.format(1_234_567.0), "1.23M");
        assert_eq!(Unit::Count.format(999.0), "999");
        assert_eq!(Unit::Count.format(45_600.0), "45.6k");
        assert_eq!(Unit::Count.format(0.0), "0");
        assert_eq!(Unit::Nanos.format(850.0), "850 ns");
        assert_eq!(Unit::Nanos.format(17_513.0), "17.5 µs");
        assert_eq!(Unit::Nanos.format(2_500_000.0), "2.50 ms");
        assert_eq!(Unit::Nanos.format(3e9), "3.00 s");
        assert_eq!(Unit::Micros.format(0.0123), "0.0123 µs");
        assert_eq!(Unit::Bytes.format(10.0 * 1024.0 * 1024.0), "10.0 MiB");
        assert_eq!(Unit::BytesPerSec.format(1536.0), "1.50 KiB/s");
        assert_eq!(Unit::Ratio.format(0.9), "0.900×");
        assert_eq!(Unit::Ratio.format(0.99996), "1.00×");
        assert_eq!(sig3(999.6), "1000");
        assert_eq!(sig3(-12.34), "-12.3");
        assert_eq!(sig3(0.0), "0");
        assert_eq!(Unit::Count.format(f64::NAN), "–");
        assert_eq!(tick(Unit::Nanos, 1e7), "10 ms");
        assert_eq!(tick(Unit::Nanos, 2.5e6), "2.5 ms");
        assert_eq!(tick(Unit::Count, 1e6), "1M");
        assert_eq!(tick(Unit::Count, 400.0), "400");
    }

    #[test]
    fn nice_ticks_cover_the_maximum() {
        assert_eq!(nice_ticks(9.0, 5), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(nice_ticks(1_000_000.0, 5), vec![0.0, 200_000.0, 400_000.0, 600_000.0, 800_000.0, 1_000_000.0]);
        assert_eq!(nice_ticks(0.0, 5), vec![0.0, 1.0]);
        let small = nice_ticks(0.3, 3);
        assert_eq!(small.len(), 4);
        assert!((small[3] - 0.3).abs() < 1e-12);
    }

    #[test]
    fn byte_ticks_step_in_binary_units() {
        let mib = 1024.0 * 1024.0;
        assert_eq!(unit_ticks(Unit::Bytes, 21.3 * mib, 5), [0.0, 5.0, 10.0, 15.0, 20.0, 25.0].map(|t| t * mib));
        assert_eq!(unit_ticks(Unit::Count, 9.0, 5), nice_ticks(9.0, 5));
        assert_eq!(tick(Unit::Bytes, 5.0 * mib), "5 MiB");
    }

    #[test]
    fn log_ticks_add_twos_and_fives_on_short_ranges() {
        assert_eq!(log_ticks(1.0, 100.0), vec![1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]);
        assert_eq!(log_ticks(1e3, 1e7), vec![1e3, 1e4, 1e5, 1e6, 1e7]);
    }

    #[test]
    fn escapes_markup() {
        assert_eq!(esc(r#"<a href="x">&'"#), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
    }

    #[test]
    fn spread_keeps_labels_apart_and_inside() {
        let placed = spread(vec![100.0, 101.0, 50.0, 102.0], 10.0, 0.0, 200.0);
        assert_eq!(placed, vec![100.0, 110.0, 50.0, 120.0]);
        // crowded at the bottom edge: pushed back up
        let placed = spread(vec![199.0, 199.0, 199.0], 10.0, 0.0, 200.0);
        assert_eq!(placed, vec![180.0, 190.0, 200.0]);
    }

    #[test]
    fn long_lines_get_six_markers_at_even_steps() {
        assert_eq!(marker_indices(101), vec![0, 20, 40, 60, 80, 100]);
        assert_eq!(marker_indices(3), vec![0, 1, 2]);
        assert_eq!(marker_indices(0), Vec::<usize>::new());
    }

    #[test]
    fn series_styles_differ_beyond_the_palette() {
        let styles: Vec<_> = (0..14).map(series_style).collect();
        for a in 0..styles.len() {
            for b in a + 1..styles.len() {
                assert_ne!(styles[a], styles[b], "{a} and {b}");
            }
        }
        assert_ne!(series_style(0).1, series_style(7).1, "the eighth series has the first colour but another dash");
    }

    fn bars() -> BarChart {
        BarChart {
            title: "hello: throughput".into(),
            axis_label: "requests per second".into(),
            unit: Unit::Count,
            groups: vec![
                BarGroup {
                    label: "shared run queue".into(),
                    bars: vec![Bar {
                        label: "rust-tokio".into(),
                        value: 500_000.0,
                        ci95: Some((490_000.0, 510_000.0)),
                        flag: None,
                        place: None,
                        parts: vec![],
                    }],
                },
                BarGroup {
                    label: "per-core".into(),
                    bars: vec![Bar {
                        label: "c-epoll".into(),
                        value: 800_000.0,
                        ci95: None,
                        flag: Some("client-bound".into()),
                        place: None,
                        parts: vec![],
                    }],
                },
            ],
            reference: None,
            parts: vec![],
        }
    }

    #[test]
    fn a_stacked_bar_draws_each_part_from_where_the_last_ended_with_a_legend() {
        let mut chart = bars();
        chart.parts = vec!["user".into(), "kernel".into()];
        let bar = &mut chart.groups[0].bars[0];
        (bar.value, bar.ci95, bar.parts) = (10.0, None, vec![4.0, 6.0]);
        chart.groups.truncate(1);
        let svg = bar_chart("split", &chart);
        assert!(svg.contains(">user</text>") && svg.contains(">kernel</text>"), "a legend names the parts");
        let x = |class: &str| -> (f64, f64) {
            let at = svg.find(&format!("class=\"{class}\"")).unwrap_or_else(|| panic!("no {class}"));
            let attr = |name: &str| -> f64 {
                let rest = &svg[at..];
                let from = rest.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
                rest[from..].split('"').next().unwrap().parse().unwrap()
            };
            (attr("x"), attr("width"))
        };
        let ((x0, w0), (x1, w1)) = (x("part0"), x("part1"));
        assert!((x0 + w0 - x1).abs() < 0.01, "the kernel part starts where the user part ends");
        assert!((w1 / w0 - 1.5).abs() < 0.01, "6 µs is drawn 1.5 times as long as 4 µs: {w0} {w1}");
        assert!(svg.contains("<title>rust-tokio: 10.0 (4.00 + 6.00)</title>"), "the tooltip gives the parts: {svg}");
    }

    #[test]
    fn bar_chart_labels_every_bar_and_marks_the_flagged_one() {
        let svg = bar_chart("tp", &bars());
        assert!(svg.starts_with("<svg id=\"tp\""));
        assert!(svg.ends_with("</svg>"));
        for text in [
            "shared run queue",
            "per-core",
            "rust-tokio",
            "c-epoll",
            "500k ± 2.00%",
            "⚠ client-bound",
            "url(#tp-hatch)",
        ] {
            assert!(svg.contains(text), "missing {text}");
        }
        assert_eq!(svg.matches("<rect x=").count(), 2);
    }

    /// The axes of a latency spectrum: percentiles across, latency on a log scale up.
    pub(super) fn spectrum_axes() -> (Axis, Axis) {
        let x = Axis {
            label: "percentile".into(),
            unit: Unit::Count,
            scale: Scale::Linear,
            ticks: vec![(0.0, "0%".into()), (5.0, "99.999%".into())],
        };
        (x, Axis { label: "latency".into(), unit: Unit::Nanos, scale: Scale::Log10, ticks: vec![] })
    }

    #[test]
    fn line_chart_draws_and_labels_each_series() {
        let (x, y) = spectrum_axes();
        let chart = LineChart {
            title: "latency".into(),
            x,
            y,
            series: vec![
                Series { label: "a".into(), points: vec![(0.0, 1000.0), (2.5, 5000.0), (5.0, 1e6)], style: 0 },
                Series { label: "b".into(), points: vec![(0.0, 2000.0), (5.0, 0.0)], style: 1 },
            ],
        };
        let svg = line_chart("lat", &chart);
        assert_eq!(svg.matches("<polyline").count(), 1, "b has one usable point on a log axis");
        assert!(svg.contains(r#"stroke-dasharray="9 4""#), "b's legend line has the second dash pattern");
        for text in ["99.999%", "1 µs", "1 ms", ">a</text>", ">b</text>"] {
            assert!(svg.contains(text), "missing {text}");
        }
    }

    #[test]
    fn empty_line_chart_says_so() {
        let chart = LineChart {
            title: "t".into(),
            x: Axis { label: "x".into(), unit: Unit::Count, scale: Scale::Log10, ticks: vec![] },
            y: Axis { label: "y".into(), unit: Unit::Count, scale: Scale::Linear, ticks: vec![] },
            series: vec![],
        };
        assert!(line_chart("e", &chart).contains("no data"));
    }

    #[test]
    fn scale_turns_log_for_wide_ranges() {
        assert_eq!(Scale::for_values([1.0, 5.0], 20.0), Scale::Linear);
        assert_eq!(Scale::for_values([1.0, 500.0, 0.0], 20.0), Scale::Log10);
        assert_eq!(Scale::for_values([], 20.0), Scale::Linear);
    }
}
