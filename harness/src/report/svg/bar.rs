//! Horizontal bar charts: one bar per contestant with its 95% CI whisker, in labelled groups.

use std::fmt::Write as _;

use super::*;

/// One bar: a value (a median of rounds, or what the chart's axis says) with its whisker, and an optional flag
/// written beside it.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub label: String,
    pub value: f64,
    pub ci95: Option<(f64, f64)>,
    /// A word such as `client-bound` that changes how the number must be read: the bar is hatched and the
    /// word is written after the value.
    pub flag: Option<String>,
    /// The row's range of places in its table as written after the value (`places 3–11`): bars whose
    /// ranges overlap are not told apart by the rounds, whatever their order.
    pub place: Option<String>,
    /// A stacked bar: the parts `value` is made of, in the order of the chart's `parts` (empty: one piece).
    pub parts: Vec<f64>,
}

/// Bars under one heading (for example all contestants of the shared-run-queue family).
#[derive(Debug, Clone, PartialEq)]
pub struct BarGroup {
    pub label: String,
    pub bars: Vec<Bar>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BarChart {
    pub title: String,
    /// Names the quantity on the axis, e.g. "requests per second (median of rounds, 95% CI)".
    pub axis_label: String,
    pub unit: Unit,
    pub groups: Vec<BarGroup>,
    /// A vertical reference line with its label, e.g. 1.0 "no change" on a ratio chart.
    pub reference: Option<(f64, String)>,
    /// Stacked bars: the name of each part (a legend is drawn); empty for plain bars.
    pub parts: Vec<String>,
}

impl BarChart {
    /// A chart without a reference line.
    pub fn new(title: impl Into<String>, axis_label: impl Into<String>, unit: Unit, groups: Vec<BarGroup>) -> BarChart {
        BarChart { title: title.into(), axis_label: axis_label.into(), unit, groups, reference: None, parts: Vec::new() }
    }
}

const BAR_ROW_PX: f64 = 22.0;
const BAR_PX: f64 = 14.0;
const GROUP_ROW_PX: f64 = 24.0;

/// Draws a horizontal bar chart. `id` must be unique in the page: it prefixes pattern ids.
pub fn bar_chart(id: &str, chart: &BarChart) -> String {
    let bars = chart.groups.iter().flat_map(|g| &g.bars);
    let label_w = bars.clone().map(|b| text_px(&b.label)).fold(100.0, f64::max).min(340.0) + 16.0;
    // Room right of the longest bar for its value, interval and flag.
    let right_w = bars.clone().map(|b| text_px(&bar_text(b, chart.unit)) + 30.0).fold(140.0, f64::max).min(420.0);
    let (x0, x1) = (label_w, WIDTH - right_w);
    let top = 40.0;
    let rows: f64 = chart.groups.iter().map(|g| GROUP_ROW_PX + g.bars.len() as f64 * BAR_ROW_PX).sum();
    let axis_y = top + rows + 6.0;
    let height = axis_y + 44.0;

    let mut max = bars
        .clone()
        .map(|b| b.ci95.map_or(b.value, |(_, hi)| hi.max(b.value)))
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    if let Some((r, _)) = chart.reference {
        max = max.max(r);
    }
    let scale = bar_scale(chart);
    let (lo, hi, ticks) = match scale {
        Scale::Linear => {
            let ticks = unit_ticks(chart.unit, max, 6);
            (0.0, *ticks.last().unwrap(), ticks)
        }
        Scale::Log10 => {
            // Every drawn value, whiskers' ends included, inside the axis.
            let values: Vec<f64> = bars.clone().flat_map(|b| [Some(b.value), b.ci95.map(|c| c.0), b.ci95.map(|c| c.1)]).flatten().collect();
            let (lo, hi, ticks) = axis_range(&Axis { label: String::new(), unit: chart.unit, scale, ticks: vec![] }, &values);
            (lo, hi, ticks.into_iter().map(|(t, _)| t).collect())
        }
    };
    let mapper = Mapper { scale, lo, hi, px_lo: x0, px_hi: x1 };
    // A bar starts at the axis' low end: 0, or on a log axis the power of ten below the least value.
    let sx = |v: f64| mapper.map(v.max(mapper.lo));
    let axis_label = match scale {
        Scale::Linear => chart.axis_label.clone(),
        Scale::Log10 => format!("{} — log scale", chart.axis_label),
    };

    let mut s = svg_open(id, &chart.title, WIDTH, height);
    let _ = write!(
        s,
        r##"<defs><pattern id="{id}-hatch" patternUnits="userSpaceOnUse" width="6" height="6" patternTransform="rotate(45)"><rect width="6" height="6" fill="#fff"/><rect width="3" height="6" fill="#777"/></pattern></defs>"##
    );
    title_text(&mut s, &chart.title);
    // grid and axis
    for t in &ticks {
        let x = sx(*t);
        let _ = write!(
            s,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{GRID_COLOUR}"/>"#,
            n(x),
            n(top),
            n(x),
            n(axis_y)
        );
        let _ = write!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            n(x),
            n(axis_y + 16.0),
            esc(&tick(chart.unit, *t))
        );
    }
    let _ = write!(
        s,
        r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{AXIS_COLOUR}"/>"#,
        n(x0),
        n(axis_y),
        n(x1),
        n(axis_y)
    );
    let _ =
        write!(s, r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{AXIS_COLOUR}"/>"#, n(x0), n(top), n(x0), n(axis_y));
    let _ = write!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        n((x0 + x1) / 2.0),
        n(axis_y + 34.0),
        esc(&axis_label)
    );

    let mut y = top;
    for (gi, group) in chart.groups.iter().enumerate() {
        let colour = PALETTE[gi % PALETTE.len()];
        let _ = write!(s, r#"<text x="4" y="{}" font-weight="bold">{}</text>"#, n(y + 16.0), esc(&group.label));
        y += GROUP_ROW_PX;
        for bar in &group.bars {
            let mid = y + BAR_ROW_PX / 2.0;
            let _ = write!(s, r#"<g class="bar"><title>{}</title>"#, esc(&bar_tooltip(bar, chart.unit)));
            let _ = write!(
                s,
                r#"<text x="{}" y="{}" text-anchor="end">{}</text>"#,
                n(x0 - 6.0),
                n(mid + 4.0),
                esc(&bar.label)
            );
            let fill = if bar.flag.is_some() { format!("url(#{id}-hatch)") } else { colour.to_string() };
            if bar.value.is_finite() && !bar.parts.is_empty() {
                // Stacked: each part from where the one before ended, the later ones paler, each taking its
                // share of the bar's length (on a log axis too, where only the whole bar's end is read off
                // the axis).
                let whole: f64 = bar.parts.iter().filter(|p| p.is_finite()).sum();
                let length = sx(bar.value) - x0;
                let mut from = x0;
                for (pi, part) in bar.parts.iter().enumerate().filter(|(_, p)| p.is_finite()) {
                    let width = if whole > 0.0 { length * part / whole } else { 0.0 };
                    let _ = write!(
                        s,
                        r#"<rect class="part{pi}" x="{}" y="{}" width="{}" height="{BAR_PX}" fill="{fill}" fill-opacity="{}" stroke="{colour}" stroke-width="1.5"/>"#,
                        n(from),
                        n(mid - BAR_PX / 2.0),
                        n(width),
                        part_opacity(pi)
                    );
                    from += width;
                }
            } else if bar.value.is_finite() {
                let _ = write!(
                    s,
                    r#"<rect x="{}" y="{}" width="{}" height="{BAR_PX}" fill="{fill}" stroke="{colour}" stroke-width="1.5"/>"#,
                    n(x0),
                    n(mid - BAR_PX / 2.0),
                    n(sx(bar.value) - x0)
                );
            }
            let mut end = sx(bar.value);
            if let Some((lo, hi)) = bar.ci95.filter(|(lo, hi)| lo.is_finite() && hi.is_finite()) {
                let (a, b) = (sx(lo), sx(hi));
                let _ = write!(
                    s,
                    r##"<path d="M{a} {t}V{u}M{a} {mid}H{b}M{b} {t}V{u}" stroke="#111" stroke-width="1.5" fill="none"/>"##,
                    a = n(a),
                    b = n(b),
                    t = n(mid - 5.0),
                    u = n(mid + 5.0),
                    mid = n(mid)
                );
                end = end.max(b);
            }
            let _ =
                write!(s, r#"<text x="{}" y="{}">{}"#, n(end + 6.0), n(mid + 4.0), esc(&value_text(bar, chart.unit)));
            if let Some(place) = &bar.place {
                let _ = write!(s, r##" <tspan class="place" fill="#555">{}</tspan>"##, esc(place));
            }
            if let Some(flag) = &bar.flag {
                let _ = write!(s, r#" <tspan font-weight="bold">⚠ {}</tspan>"#, esc(flag));
            }
            s.push_str("</text></g>");
            y += BAR_ROW_PX;
        }
    }
    // The legend of a stacked chart, right of the title: a swatch per part.
    let mut lx = x1 - chart.parts.iter().map(|p| text_px(p) + 26.0).sum::<f64>();
    for (pi, part) in chart.parts.iter().enumerate() {
        let _ = write!(
            s,
            r#"<rect x="{}" y="{}" width="12" height="12" fill="{}" fill-opacity="{}" stroke="{}"/><text x="{}" y="{}">{}</text>"#,
            n(lx),
            n(top - 22.0),
            PALETTE[0],
            part_opacity(pi),
            PALETTE[0],
            n(lx + 16.0),
            n(top - 12.0),
            esc(part)
        );
        lx += text_px(part) + 26.0;
    }
    if let Some((r, label)) = &chart.reference {
        let x = sx(*r);
        let _ = write!(
            s,
            r##"<line x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="#111" stroke-dasharray="4 3"/><text x="{x}" y="{}" text-anchor="middle" font-style="italic">{}</text>"##,
            n(top - 4.0),
            n(axis_y),
            n(top - 8.0),
            esc(label),
            x = n(x)
        );
    }
    s.push_str("</svg>");
    s
}

/// A log axis once the longest bar is over this many times the median bar: on a linear one, half the bars
/// would take less than an eighth of the axis, slivers beside the one row that sets its scale.
pub const FLATTENED_RATIO: f64 = 8.0;

/// The axis a chart takes: log where one bar would otherwise flatten the rest (`FLATTENED_RATIO`), linear
/// otherwise and always on a chart with a reference line (ratios around 1).
pub fn bar_scale(chart: &BarChart) -> Scale {
    let mut values: Vec<f64> = chart.groups.iter().flat_map(|g| &g.bars).map(|b| b.value).filter(|v| v.is_finite() && *v > 0.0).collect();
    if chart.reference.is_some() || values.len() < 2 {
        return Scale::Linear;
    }
    values.sort_by(f64::total_cmp);
    let median = values[(values.len() - 1) / 2];
    if values[values.len() - 1] > FLATTENED_RATIO * median { Scale::Log10 } else { Scale::Linear }
}

/// How solid part `i` of a stacked bar is: the first in full, each later one paler, so that up to five
/// parts stay told apart.
fn part_opacity(i: usize) -> f64 {
    [1.0, 0.55, 0.3, 0.15, 0.05][i.min(4)]
}

/// "512k ± 2.19%": the value and half its interval relative to it.
fn value_text(bar: &Bar, unit: Unit) -> String {
    let mut text = unit.format(bar.value);
    if let Some(pct) = ci_pct(bar) {
        let _ = write!(text, " ± {}%", sig3(pct));
    }
    text
}

/// Everything written right of a bar, to size the margin.
fn bar_text(bar: &Bar, unit: Unit) -> String {
    let place = bar.place.as_ref().map_or(String::new(), |p| format!(" {p}"));
    format!("{}{place} ⚠ {}", value_text(bar, unit), bar.flag.as_deref().unwrap_or(""))
}

fn ci_pct(bar: &Bar) -> Option<f64> {
    let (lo, hi) = bar.ci95?;
    (bar.value != 0.0 && lo.is_finite() && hi.is_finite()).then(|| (hi - lo) / 2.0 / bar.value.abs() * 100.0)
}

fn bar_tooltip(bar: &Bar, unit: Unit) -> String {
    let mut t = format!("{}: {}", bar.label, unit.format(bar.value));
    if !bar.parts.is_empty() {
        let parts: Vec<String> = bar.parts.iter().map(|p| unit.format(*p)).collect();
        let _ = write!(t, " ({})", parts.join(" + "));
    }
    if let Some((lo, hi)) = bar.ci95 {
        let _ = write!(t, " (95% CI {} to {})", unit.format(lo), unit.format(hi));
    }
    if let Some(place) = &bar.place {
        let _ = write!(t, " — {place} of its table");
    }
    if let Some(flag) = &bar.flag {
        let _ = write!(t, " — {flag}");
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(values: &[f64]) -> BarChart {
        let bars = values
            .iter()
            .enumerate()
            .map(|(i, v)| Bar { label: format!("s{i}"), value: *v, ci95: None, flag: None, place: None, parts: vec![] })
            .collect();
        BarChart::new("cpu", "µs per request", Unit::Micros, vec![BarGroup { label: "all".into(), bars }])
    }

    /// The drawn width of each bar, in order.
    fn widths(svg: &str) -> Vec<f64> {
        svg.split("<rect x=").skip(1).map(|r| r.split("width=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap()).collect()
    }

    #[test]
    fn one_row_that_would_flatten_the_rest_turns_the_axis_to_log() {
        // node-express's 112 µs against the others' 4.3 to 16 µs.
        let flattened = chart(&[4.3, 5.0, 5.7, 6.0, 6.2, 9.0, 16.0, 112.0]);
        assert_eq!(bar_scale(&flattened), Scale::Log10);
        let svg = bar_chart("cpu", &flattened);
        assert!(svg.contains("µs per request — log scale"), "the axis says it is logarithmic");
        for t in [">1 µs<", ">10 µs<", ">100 µs<", ">1000 µs<"] {
            assert!(svg.contains(t), "a tick at each power of ten: {t}");
        }
        let w = widths(&svg);
        assert!(w[0] > w[7] / 4.0, "4.3 µs is no sliver beside 112 µs: {w:?}");
        assert!(w.windows(2).all(|p| p[0] < p[1]), "longer bars still draw longer: {w:?}");

        let even = chart(&[4.3, 5.0, 6.0, 16.0]);
        assert_eq!(bar_scale(&even), Scale::Linear, "within 8 times the median a linear axis reads well");
        assert!(!bar_chart("cpu", &even).contains("log scale"));
        let mut ratios = chart(&[0.1, 1.0, 1.1, 9.0]);
        ratios.reference = Some((1.0, "no change".into()));
        assert_eq!(bar_scale(&ratios), Scale::Linear, "a ratio chart keeps its linear axis around 1");
    }

    #[test]
    fn a_stacked_bar_on_a_log_axis_splits_its_length_in_proportion() {
        let mut c = chart(&[1.0, 1.2, 50.0]);
        c.parts = vec!["user".into(), "kernel".into()];
        c.groups[0].bars[2].parts = vec![10.0, 40.0];
        let svg = bar_chart("split", &c);
        assert!(svg.contains("log scale"));
        let attr = |class: &str, name: &str| -> f64 {
            let at = svg.find(&format!("class=\"{class}\"")).unwrap();
            let rest = &svg[at..];
            let from = rest.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
            rest[from..].split('"').next().unwrap().parse().unwrap()
        };
        let (x0, w0, x1, w1) = (attr("part0", "x"), attr("part0", "width"), attr("part1", "x"), attr("part1", "width"));
        assert!((x0 + w0 - x1).abs() < 0.02, "kernel starts where user ends");
        assert!((w1 / w0 - 4.0).abs() < 0.01, "40 µs of kernel is four times the length of 10 µs of user: {w0} {w1}");
    }
}
