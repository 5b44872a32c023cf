//! A flame graph drawn from folded stacks (`profile::folded`): the outermost frame at the bottom, each
//! frame as wide as the samples under it, children in name order (an icicle of sorted frames, as Brendan
//! Gregg's flamegraph.pl draws it). Each frame carries its name and its share in a `<title>` (shown on
//! hover) and a `data-name` that the page's search box matches; frames too narrow for text carry none.
//! Kernel frames (`_[k]`) are orange, unnamed ones grey, the rest blue, so the picture reads by hue and by
//! its labels alike.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{esc, CHAR_PX, FONT_PX, WIDTH};

const ROW_PX: f64 = 16.0;
/// Frames narrower than this are drawn without text.
const TEXT_MIN_PX: f64 = 3.0 * CHAR_PX;
/// Frames narrower than this are not drawn (their samples are in their parent's width).
const MIN_PX: f64 = 0.3;

/// One frame of the merged call tree: its samples (itself and below) and its children by name.
#[derive(Debug, Default)]
struct Node {
    samples: f64,
    children: BTreeMap<String, Node>,
}

impl Node {
    fn add(&mut self, frames: &[&str], n: f64) {
        self.samples += n;
        if let Some((first, rest)) = frames.split_first() {
            self.children.entry((*first).to_string()).or_default().add(rest, n);
        }
    }

    fn depth(&self) -> usize {
        self.children.values().map(|c| 1 + c.depth()).max().unwrap_or(0)
    }
}

/// The flame graph of `stacks` (folded stack → samples) under `title`; `unit` names what a sample is in
/// the titles ("samples", "samples per 1,000 requests").
pub fn flame_graph(title: &str, stacks: &BTreeMap<String, u64>, unit: &str) -> String {
    let mut root = Node::default();
    for (stack, &n) in stacks {
        let frames: Vec<&str> = stack.split(';').collect();
        root.add(&frames, n as f64);
    }
    let depth = root.depth().max(1);
    let top = 2.0 * FONT_PX + 8.0;
    let height = top + depth as f64 * ROW_PX + 4.0;
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg class="flame" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" font-family="sans-serif" font-size="{FONT_PX}" role="img" aria-label="{}">"#,
        esc(title)
    );
    let _ = write!(svg, r#"<text x="0" y="{FONT_PX}" font-weight="bold">{}</text>"#, esc(title));
    let _ = write!(svg, r##"<text x="0" y="{}" fill="#444">{} {unit}; the outermost frame at the bottom, each frame as wide as the samples in it</text>"##, 2.0 * FONT_PX + 2.0, root.samples);
    if root.samples > 0.0 {
        let scale = WIDTH / root.samples;
        let bottom = height - 4.0 - ROW_PX;
        let mut x = 0.0;
        for (name, child) in &root.children {
            draw(&mut svg, name, child, x, bottom, scale, root.samples, unit);
            x += child.samples * scale;
        }
    }
    svg.push_str("</svg>");
    svg
}

#[allow(clippy::too_many_arguments)]
fn draw(svg: &mut String, name: &str, node: &Node, x: f64, y: f64, scale: f64, total: f64, unit: &str) {
    let w = node.samples * scale;
    if w < MIN_PX {
        return;
    }
    let colour = if name.ends_with(crate::profile::folded::KERNEL) {
        "#E69F00"
    } else if name.starts_with("[unknown") {
        "#BBBBBB"
    } else {
        "#56B4E9"
    };
    let share = node.samples / total * 100.0;
    let _ = write!(
        svg,
        r#"<g data-name="{}"><title>{} ({} {unit}, {share:.2}%)</title><rect x="{x:.2}" y="{y:.2}" width="{:.2}" height="{}" fill="{colour}" stroke="white" stroke-width="0.5"/>"#,
        esc(name),
        esc(name),
        count(node.samples),
        w,
        ROW_PX - 1.0
    );
    if w >= TEXT_MIN_PX {
        let fits = ((w - 4.0) / CHAR_PX).floor() as usize;
        let text: String = if name.chars().count() <= fits { name.to_string() } else { name.chars().take(fits.saturating_sub(2)).collect::<String>() + ".." };
        let _ = write!(svg, r#"<text x="{:.2}" y="{:.2}">{}</text>"#, x + 2.0, y + ROW_PX - 4.0, esc(&text));
    }
    svg.push_str("</g>");
    let mut cx = x;
    for (child_name, child) in &node.children {
        draw(svg, child_name, child, cx, y - ROW_PX, scale, total, unit);
        cx += child.samples * scale;
    }
}

/// A count of samples as it is ("4"); a share of one (per 1,000 requests) to three significant digits.
fn count(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        super::sig3(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stacks(lines: &[(&str, u64)]) -> BTreeMap<String, u64> {
        lines.iter().map(|(s, n)| (s.to_string(), *n)).collect()
    }

    #[test]
    fn each_frame_is_as_wide_as_its_samples_and_named() {
        let svg = flame_graph("c-epoll", &stacks(&[("srv;main;answer;write;tcp_sendmsg_[k]", 3), ("srv;main;epoll_wait", 1)]), "samples");
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        // The task spans the width; main too; answer three quarters, epoll_wait a quarter.
        assert!(svg.contains(&format!(r#"<g data-name="srv"><title>srv (4 samples, 100.00%)</title><rect x="0.00" y="{:.2}" width="{WIDTH:.2}""#, 2.0 * FONT_PX + 8.0 + 4.0 * ROW_PX)), "{svg}");
        assert!(svg.contains(&format!(r#"<title>answer (3 samples, 75.00%)</title><rect x="0.00" y="{:.2}" width="{:.2}""#, 2.0 * FONT_PX + 8.0 + 2.0 * ROW_PX, WIDTH * 0.75)), "{svg}");
        assert!(svg.contains(&format!(r#"<title>epoll_wait (1 samples, 25.00%)</title><rect x="{:.2}""#, WIDTH * 0.75)), "{svg}");
        // The kernel frame in its own colour; names are escaped.
        assert!(svg.contains(r##"data-name="tcp_sendmsg_[k]"><title>tcp_sendmsg_[k] (3 samples, 75.00%)</title><rect x="0.00" y="32.00" width="675.00" height="15" fill="#E69F00""##), "{svg}");
        let escaped = flame_graph("a<b", &stacks(&[("t;operator<", 1)]), "samples");
        assert!(escaped.contains("operator&lt;") && !escaped.contains("operator<\""));
    }

    #[test]
    fn no_samples_draw_an_empty_graph_with_its_title() {
        let svg = flame_graph("idle", &BTreeMap::new(), "samples");
        assert!(svg.contains("idle") && !svg.contains("<rect"));
    }
}
