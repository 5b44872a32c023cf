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
    let ticks = unit_ticks(chart.unit, max, 6);
    let top_value = *ticks.last().unwrap();
    let sx = |v: f64| x0 + (v.max(0.0) / top_value) * (x1 - x0);

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
        esc(&chart.axis_label)
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
                // Stacked: each part from where the one before ended, the later ones paler.
                let mut from = 0.0;
                for (pi, part) in bar.parts.iter().enumerate().filter(|(_, p)| p.is_finite()) {
                    let _ = write!(
                        s,
                        r#"<rect class="part{pi}" x="{}" y="{}" width="{}" height="{BAR_PX}" fill="{fill}" fill-opacity="{}" stroke="{colour}" stroke-width="1.5"/>"#,
                        n(sx(from)),
                        n(mid - BAR_PX / 2.0),
                        n(sx(from + part) - sx(from)),
                        part_opacity(pi)
                    );
                    from += part;
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
