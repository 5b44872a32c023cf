//! Line charts: series over a linear or logarithmic axis (the latency percentile spectrum, scaling over
//! connections), each line with its dash, marker and end label.

use std::fmt::Write as _;

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Linear,
    Log10,
}

impl Scale {
    /// Log when the positive values span more than `ratio` (max / min), linear otherwise.
    pub fn for_values(values: impl IntoIterator<Item = f64>, ratio: f64) -> Scale {
        let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
        for v in values.into_iter().filter(|v| *v > 0.0 && v.is_finite()) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if hi > 0.0 && hi / lo > ratio {
            Scale::Log10
        } else {
            Scale::Linear
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub label: String,
    pub unit: Unit,
    pub scale: Scale,
    /// Fixed ticks (value, text); empty means computed from the data.
    pub ticks: Vec<(f64, String)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    /// Which colour, dash and marker (see `series_style`): give a contestant the same number in every chart
    /// of a page so that it looks the same everywhere.
    pub style: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
}

/// Maps data to pixels along one axis.
pub(super) struct Mapper {
    pub scale: Scale,
    pub lo: f64,
    pub hi: f64,
    pub px_lo: f64,
    pub px_hi: f64,
}

impl Mapper {
    pub fn map(&self, v: f64) -> f64 {
        let f = match self.scale {
            Scale::Linear => (v - self.lo) / (self.hi - self.lo),
            Scale::Log10 => (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10()),
        };
        self.px_lo + f * (self.px_hi - self.px_lo)
    }
}

/// The range and the ticks of an axis over these values. Linear axes start at 0.
pub(super) fn axis_range(axis: &Axis, values: &[f64]) -> (f64, f64, Vec<(f64, String)>) {
    let usable: Vec<f64> =
        values.iter().copied().filter(|v| v.is_finite() && (axis.scale == Scale::Linear || *v > 0.0)).collect();
    if !axis.ticks.is_empty() {
        let lo = axis.ticks.iter().map(|t| t.0).chain(usable.iter().copied()).fold(f64::INFINITY, f64::min);
        let hi = axis.ticks.iter().map(|t| t.0).chain(usable.iter().copied()).fold(f64::NEG_INFINITY, f64::max);
        return (lo, if hi > lo { hi } else { lo + 1.0 }, axis.ticks.clone());
    }
    let label = |t: f64| (t, tick(axis.unit, t));
    match axis.scale {
        Scale::Linear => {
            let ticks = unit_ticks(axis.unit, usable.iter().copied().fold(0.0, f64::max), 5);
            (0.0, *ticks.last().unwrap(), ticks.into_iter().map(label).collect())
        }
        Scale::Log10 => {
            let lo = usable.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = usable.iter().copied().fold(0.0, f64::max);
            if !(lo.is_finite() && hi > 0.0) {
                return (1.0, 10.0, vec![label(1.0), label(10.0)]);
            }
            let (lo, hi) = (10f64.powf(lo.log10().floor()), 10f64.powf(hi.log10().ceil()).max(lo * 10.0));
            (lo, hi, log_ticks(lo, hi).into_iter().map(label).collect())
        }
    }
}

/// Draws a line chart: one line a series, each with its own colour, dash pattern and marker, labelled by
/// name at its right end and in a legend below.
pub fn line_chart(id: &str, chart: &LineChart) -> String {
    let max_label = label_column(&chart.series);
    let (x0, x1) = (78.0, WIDTH - max_label - 28.0);
    let (top, plot_h) = (36.0, 300.0);
    let bottom = top + plot_h;
    let legend_cols = ((WIDTH - 20.0) / (max_label + 70.0)).floor().max(1.0) as usize;
    let legend_rows = chart.series.len().div_ceil(legend_cols);
    let legend_top = bottom + 56.0;
    let height = legend_top + legend_rows as f64 * 20.0 + 8.0;

    let series = drawable(&chart.series, chart.x.scale, chart.y.scale);
    let xs: Vec<f64> = series.iter().flatten().map(|p| p.0).collect();
    let ys: Vec<f64> = series.iter().flatten().map(|p| p.1).collect();
    let (xlo, xhi, xticks) = axis_range(&chart.x, &xs);
    let (ylo, yhi, yticks) = axis_range(&chart.y, &ys);
    let mx = Mapper { scale: chart.x.scale, lo: xlo, hi: xhi, px_lo: x0, px_hi: x1 };
    let my = Mapper { scale: chart.y.scale, lo: ylo, hi: yhi, px_lo: bottom, px_hi: top };

    let mut s = svg_open(id, &chart.title, WIDTH, height);
    title_text(&mut s, &chart.title);
    frame(&mut s, &mx, &my, &xticks, &yticks);
    let _ = write!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        n((x0 + x1) / 2.0),
        n(bottom + 36.0),
        esc(&chart.x.label)
    );
    let _ = write!(
        s,
        r#"<text transform="translate(16 {}) rotate(-90)" text-anchor="middle">{}</text>"#,
        n((top + bottom) / 2.0),
        esc(&chart.y.label)
    );
    if series.iter().all(|p| p.is_empty()) {
        let _ = write!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">no data</text>"#,
            n((x0 + x1) / 2.0),
            n((top + bottom) / 2.0)
        );
    }
    let ends = lines(&mut s, &series, &chart.series, &mx, &my);
    end_labels(&mut s, &ends, &chart.series, x1, top, bottom + 20.0);
    // Legend: line sample, marker, name.
    for (i, spec) in chart.series.iter().enumerate() {
        let (colour, dash, marker) = series_style(spec.style);
        let col_w = (WIDTH - 20.0) / legend_cols as f64;
        let (lx, ly) = (20.0 + (i % legend_cols) as f64 * col_w, legend_top + (i / legend_cols) as f64 * 20.0);
        let _ = write!(
            s,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{colour}" stroke-width="2""#,
            n(lx),
            n(ly),
            n(lx + 40.0),
            n(ly)
        );
        if !dash.is_empty() {
            let _ = write!(s, r#" stroke-dasharray="{dash}""#);
        }
        s.push_str("/>");
        s.push_str(&marker.draw(lx + 20.0, ly, colour));
        let _ = write!(s, r#"<text x="{}" y="{}">{}</text>"#, n(lx + 48.0), n(ly + 4.0), esc(&spec.label));
    }
    s.push_str("</svg>");
    s
}

/// The width of the column that holds the names at the line ends.
pub(super) fn label_column(series: &[Series]) -> f64 {
    series.iter().map(|s| text_px(&s.label)).fold(60.0, f64::max).min(240.0)
}

/// Each series' points that the scales can draw: finite, and positive on a log axis.
pub(super) fn drawable(series: &[Series], x: Scale, y: Scale) -> Vec<Vec<(f64, f64)>> {
    let valid = |p: &&(f64, f64)| {
        p.0.is_finite() && p.1.is_finite() && (x == Scale::Linear || p.0 > 0.0) && (y == Scale::Linear || p.1 > 0.0)
    };
    series.iter().map(|s| s.points.iter().filter(valid).copied().collect()).collect()
}

/// Grid lines and tick labels of a plot area, and its axes.
pub(super) fn frame(s: &mut String, mx: &Mapper, my: &Mapper, xticks: &[(f64, String)], yticks: &[(f64, String)]) {
    let (x0, x1, top, bottom) = (mx.px_lo, mx.px_hi, my.px_hi, my.px_lo);
    for (v, label) in yticks {
        let y = my.map(*v);
        let _ =
            write!(s, r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{GRID_COLOUR}"/>"#, n(x0), n(y), n(x1), n(y));
        let _ = write!(s, r#"<text x="{}" y="{}" text-anchor="end">{}</text>"#, n(x0 - 6.0), n(y + 4.0), esc(label));
    }
    for (v, label) in xticks {
        let x = mx.map(*v);
        let _ = write!(
            s,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{GRID_COLOUR}"/>"#,
            n(x),
            n(top),
            n(x),
            n(bottom)
        );
        let _ = write!(s, r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#, n(x), n(bottom + 16.0), esc(label));
    }
    let _ =
        write!(s, r#"<path d="M{} {}V{}H{}" stroke="{AXIS_COLOUR}" fill="none"/>"#, n(x0), n(top), n(bottom), n(x1));
}

/// Draws each series as a line with its markers, in a group titled with its name; returns the last point of
/// each drawn series in pixels, with the series' index.
pub(super) fn lines(
    s: &mut String,
    points: &[Vec<(f64, f64)>],
    specs: &[Series],
    mx: &Mapper,
    my: &Mapper,
) -> Vec<(usize, f64, f64)> {
    let mut ends = Vec::new();
    for (i, (points, spec)) in points.iter().zip(specs).enumerate() {
        let (colour, dash, marker) = series_style(spec.style);
        let px: Vec<(f64, f64)> = points.iter().map(|(x, y)| (mx.map(*x), my.map(*y))).collect();
        let _ = write!(s, r#"<g class="series"><title>{}</title>"#, esc(&spec.label));
        if px.len() > 1 {
            let _ = write!(s, r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2""#, polyline(&px));
            if !dash.is_empty() {
                let _ = write!(s, r#" stroke-dasharray="{dash}""#);
            }
            s.push_str("/>");
        }
        for &k in &marker_indices(px.len()) {
            s.push_str(&marker.draw(px[k].0, px[k].1, colour));
        }
        s.push_str("</g>");
        if let Some(&(x, y)) = px.last() {
            ends.push((i, x, y));
        }
    }
    ends
}

/// Pixel points as a polyline's `points` attribute.
pub(super) fn polyline(px: &[(f64, f64)]) -> String {
    px.iter().map(|(x, y)| format!("{},{}", n(*x), n(*y))).collect::<Vec<_>>().join(" ")
}

/// Direct labels for the line ends (index, x, y), in one column to the right of `edge` (the plot's right
/// edge), pushed apart within [lo, hi] so that none overlaps the next; a thin dotted leader joins each
/// line's end to its label where the label is not right beside it.
pub(super) fn end_labels(s: &mut String, ends: &[(usize, f64, f64)], specs: &[Series], edge: f64, lo: f64, hi: f64) {
    let placed = spread(ends.iter().map(|l| l.2).collect(), FONT_PX + 2.0, lo, hi);
    for ((i, x, y), ly) in ends.iter().zip(placed) {
        let colour = series_style(specs[*i].style).0;
        if (ly - y).abs() > 2.0 || *x < edge - 1.0 {
            let _ = write!(
                s,
                r#"<path d="M{} {}L{} {}" stroke="{colour}" stroke-width="0.8" stroke-dasharray="2 2"/>"#,
                n(x + 5.0),
                n(*y),
                n(edge + 10.0),
                n(ly)
            );
        }
        let _ = write!(
            s,
            r#"<text class="end-label" x="{}" y="{}" fill="{colour}">{}</text>"#,
            n(edge + 12.0),
            n(ly + 4.0),
            esc(&specs[*i].label)
        );
    }
}

/// Which points of a line get a marker: all of a short line, about six evenly spaced ones of a long one.
pub(super) fn marker_indices(len: usize) -> Vec<usize> {
    if len <= 12 {
        return (0..len).collect();
    }
    let step = ((len - 1) as f64 / 5.0).ceil() as usize;
    let mut idx: Vec<usize> = (0..len).step_by(step).collect();
    if *idx.last().unwrap() != len - 1 {
        idx.push(len - 1);
    }
    idx
}

/// Moves label positions apart so that neighbours are at least `gap` apart, staying within [lo, hi] where
/// there is room; returns the positions in the input's order.
pub fn spread(ys: Vec<f64>, gap: f64, lo: f64, hi: f64) -> Vec<f64> {
    let mut order: Vec<usize> = (0..ys.len()).collect();
    order.sort_by(|a, b| ys[*a].total_cmp(&ys[*b]));
    let mut placed = ys.clone();
    let mut prev = f64::NEG_INFINITY;
    for &i in &order {
        placed[i] = ys[i].max(prev + gap).max(lo);
        prev = placed[i];
    }
    // If the last one ran past the bottom, push everything back up from there.
    let mut next = f64::INFINITY;
    for &i in order.iter().rev() {
        placed[i] = placed[i].min(next - gap).min(hi);
        next = placed[i];
    }
    placed
}
