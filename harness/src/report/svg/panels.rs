//! Small multiples: one line chart split into panels of a few series each, side by side on a grid. Every
//! panel has the same axes, ranges and ticks, so that lines in different panels compare by eye; behind its
//! own lines each panel draws the other panels' lines in faint grey, for context.

use std::fmt::Write as _;

use super::*;

/// The most series a panel holds: one for each colour, dash and marker, so none repeats within a panel.
pub const PANEL_SERIES: usize = 7;
/// Panels side by side.
const COLUMNS: usize = 2;
const PANEL_WIDTH: f64 = 600.0;
const PLOT_HEIGHT: f64 = 200.0;
/// Above a panel's plot: its title.
const PANEL_HEAD: f64 = 30.0;
/// Below a panel's plot: the tick labels and a gap.
const PANEL_FOOT: f64 = 34.0;
const CONTEXT_COLOUR: &str = "#d4d4d4";

#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    pub title: String,
    /// At most `PANEL_SERIES`, each with a style of its own (the caller numbers them 0, 1, 2, …).
    pub series: Vec<Series>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PanelChart {
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub panels: Vec<Panel>,
}

/// The width of a panel chart's SVG.
pub const PANEL_CHART_WIDTH: f64 = PANEL_WIDTH * COLUMNS as f64;

/// Draws the panels on a grid of `COLUMNS`, sharing the x and y ranges of all series together. Each panel
/// is a `<g class="panel">` with the id `{id}-p{k}`, its lines labelled by name at their right ends.
pub fn panel_chart(id: &str, chart: &PanelChart) -> String {
    let all: Vec<Series> = chart.panels.iter().flat_map(|p| p.series.iter().cloned()).collect();
    let points = drawable(&all, chart.x.scale, chart.y.scale);
    let xs: Vec<f64> = points.iter().flatten().map(|p| p.0).collect();
    let ys: Vec<f64> = points.iter().flatten().map(|p| p.1).collect();
    let (xlo, xhi, xticks) = axis_range(&chart.x, &xs);
    let (ylo, yhi, yticks) = axis_range(&chart.y, &ys);

    let label_w = label_column(&all);
    let rows = chart.panels.len().div_ceil(COLUMNS).max(1);
    let grid_top = 36.0;
    let panel_h = PANEL_HEAD + PLOT_HEIGHT + PANEL_FOOT;
    let height = grid_top + rows as f64 * panel_h + 24.0;
    let mut s = svg_open(id, &chart.title, PANEL_CHART_WIDTH, height);
    title_text(&mut s, &chart.title);
    let _ = write!(
        s,
        r#"<text transform="translate(16 {}) rotate(-90)" text-anchor="middle">{}</text>"#,
        n(grid_top + rows as f64 * panel_h / 2.0),
        esc(&chart.y.label)
    );
    let _ = write!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        n(PANEL_CHART_WIDTH / 2.0),
        n(height - 8.0),
        esc(&chart.x.label)
    );
    if chart.panels.is_empty() {
        let _ = write!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">no data</text>"#,
            n(PANEL_CHART_WIDTH / 2.0),
            n(height / 2.0)
        );
    }

    // Each panel's share of `points`: the series are laid end to end in panel order.
    let mut first = 0;
    for (k, panel) in chart.panels.iter().enumerate() {
        let own = first..first + panel.series.len();
        first = own.end;
        let left = (k % COLUMNS) as f64 * PANEL_WIDTH;
        let top = grid_top + (k / COLUMNS) as f64 * panel_h + PANEL_HEAD;
        let bottom = top + PLOT_HEIGHT;
        let (x0, x1) = (left + 88.0, left + PANEL_WIDTH - label_w - 20.0);
        let mx = Mapper { scale: chart.x.scale, lo: xlo, hi: xhi, px_lo: x0, px_hi: x1 };
        let my = Mapper { scale: chart.y.scale, lo: ylo, hi: yhi, px_lo: bottom, px_hi: top };

        let _ = write!(s, r#"<g class="panel" id="{}-p{k}">"#, esc(id));
        let _ = write!(
            s,
            r#"<text x="{}" y="{}" font-weight="bold">{}</text>"#,
            n(x0 - 40.0),
            n(top - 12.0),
            esc(&panel.title)
        );
        frame(&mut s, &mx, &my, &xticks, &yticks);
        s.push_str(r#"<g class="context">"#);
        for (i, line) in points.iter().enumerate().filter(|(i, _)| !own.contains(i)) {
            let px: Vec<(f64, f64)> = line.iter().map(|(x, y)| (mx.map(*x), my.map(*y))).collect();
            if px.len() > 1 {
                let points = polyline(&px);
                let _ =
                    write!(s, r#"<polyline points="{points}" fill="none" stroke="{CONTEXT_COLOUR}" stroke-width="1">"#);
                let _ = write!(s, "<title>{}</title></polyline>", esc(&all[i].label));
            }
        }
        s.push_str("</g>");
        let ends = lines(&mut s, &points[own.clone()], &panel.series, &mx, &my);
        end_labels(&mut s, &ends, &panel.series, x1, top, bottom + 14.0);
        s.push_str("</g>");
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(label: &str, style: usize, scale: f64) -> Series {
        Series {
            label: label.into(),
            points: (0..=10).map(|i| (i as f64 / 2.0, scale * (1.0 + i as f64))).collect(),
            style,
        }
    }

    fn chart() -> PanelChart {
        let (x, y) = crate::report::svg::tests::spectrum_axes();
        PanelChart {
            title: "latency".into(),
            x,
            y,
            panels: vec![
                Panel { title: "fast".into(), series: (0..7).map(|i| series(&format!("a{i}"), i, 1000.0)).collect() },
                Panel { title: "slow".into(), series: vec![series("b", 0, 1e6)] },
            ],
        }
    }

    #[test]
    fn each_panel_draws_its_own_series_over_the_others_in_grey() {
        let svg = panel_chart("lat", &chart());
        assert!(svg.starts_with(r#"<svg id="lat""#) && svg.ends_with("</svg>"));
        let panels: Vec<&str> = svg.split(r#"<g class="panel""#).skip(1).collect();
        assert_eq!(panels.len(), 2);
        assert_eq!(panels[0].matches(r#"<g class="series">"#).count(), 7);
        assert_eq!(panels[1].matches(r#"<g class="series">"#).count(), 1);
        assert_eq!(panels[0].matches(CONTEXT_COLOUR).count(), 1, "the other panel's one line");
        assert_eq!(panels[1].matches(CONTEXT_COLOUR).count(), 7);
        for text in [">fast</text>", ">slow</text>", r#"id="lat-p1""#, ">1 µs<", ">1 ms<", ">99.999%<"] {
            assert!(svg.contains(text), "missing {text}");
        }
    }

    #[test]
    fn panels_share_the_y_ticks() {
        let svg = panel_chart("lat", &chart());
        let ticks = |panel: &str| -> Vec<String> {
            panel.split(r#"text-anchor="end">"#).skip(1).map(|t| t.split('<').next().unwrap().to_string()).collect()
        };
        let panels: Vec<&str> = svg.split(r#"<g class="panel""#).skip(1).collect();
        assert!(!ticks(panels[0]).is_empty());
        assert_eq!(ticks(panels[0]), ticks(panels[1]), "one panel holds only the fast lines, the other the slow");
    }

    #[test]
    fn no_panels_say_so() {
        let chart = PanelChart { panels: vec![], ..chart() };
        assert!(panel_chart("e", &chart).contains("no data"));
    }
}
