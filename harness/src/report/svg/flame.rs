//! A flame graph drawn from folded stacks (`profile::folded`): the outermost frame at the bottom, each
//! frame as wide as the samples under it, children in name order (an icicle of sorted frames, as Brendan
//! Gregg's flamegraph.pl draws it). Each frame carries its name and its share in a `<title>` (shown on
//! hover) and a `data-name` that the page's search box matches; frames too narrow for text carry none.
//! Kernel frames (`_[k]`) are orange, unnamed ones grey, the rest blue, so the picture reads by hue and by
//! its labels alike. A differential graph (an A/B run's) is B's, coloured by each frame's change per
//! request against A's, as Brendan Gregg's difffolded.pl and flamegraph.pl colour theirs.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{esc, sig3, CHAR_PX, FONT_PX, WIDTH};

const ROW_PX: f64 = 16.0;
/// Frames narrower than this are drawn without text.
const TEXT_MIN_PX: f64 = 3.0 * CHAR_PX;
/// Frames narrower than this are not drawn (their samples are in their parent's width).
const MIN_PX: f64 = 0.3;

/// One frame of the merged call tree: its samples (itself and below) in the graph's side, B's in a
/// differential one, and in A's, and its children by name.
#[derive(Debug, Default)]
struct Node {
    samples: f64,
    base: f64,
    children: BTreeMap<String, Node>,
}

impl Node {
    fn add(&mut self, frames: &[&str], n: f64, base: f64) {
        self.samples += n;
        self.base += base;
        if let Some((first, rest)) = frames.split_first() {
            self.children.entry((*first).to_string()).or_default().add(rest, n, base);
        }
    }

    fn of(stacks: &BTreeMap<String, u64>, base: Option<&BTreeMap<String, u64>>) -> Node {
        let mut root = Node::default();
        for (stack, &n) in stacks {
            root.add(&stack.split(';').collect::<Vec<_>>(), n as f64, 0.0);
        }
        for (stack, &n) in base.into_iter().flatten() {
            root.add(&stack.split(';').collect::<Vec<_>>(), 0.0, n as f64);
        }
        root
    }

    fn depth(&self) -> usize {
        self.children.values().filter(|c| c.samples > 0.0).map(|c| 1 + c.depth()).max().unwrap_or(0)
    }
}

/// How frames are coloured and titled.
enum Kind<'u> {
    /// By kind of frame: kernel, unnamed, the rest; titled with `unit`.
    Plain { unit: &'u str },
    /// By the change of B's samples per request against A's: `a` and `b` turn a count into samples per
    /// 1,000 requests.
    Differential { a: f64, b: f64 },
}

/// The flame graph of `stacks` (folded stack → samples) under `title`; `unit` names what a sample is in
/// the titles ("samples", "samples per 1,000 requests").
pub fn flame_graph(title: &str, stacks: &BTreeMap<String, u64>, unit: &str) -> String {
    let root = Node::of(stacks, None);
    let legend = format!("{} {unit}; the outermost frame at the bottom, each frame as wide as the samples in it", root.samples);
    graph(title, &legend, &root, &Kind::Plain { unit })
}

/// The differential flame graph of B's stacks against A's, per request: drawn as B's graph, each frame
/// red where its samples per 1,000 requests (itself and below) grew beyond the sampling noise, blue
/// where they shrank, the deeper the hue the larger the change against B's own; white within the
/// noise. Frames A had and B has not are not drawn (the list of changed functions names them).
pub fn differential_flame_graph(title: &str, a: (&BTreeMap<String, u64>, u64), b: (&BTreeMap<String, u64>, u64)) -> String {
    let root = Node::of(b.0, Some(a.0));
    let per_1000 = |requests: u64| 1000.0 / requests.max(1) as f64;
    let legend = format!("B's {} samples over A's {}, per 1,000 requests; red grew, blue shrank beyond the sampling noise", root.samples, root.base);
    graph(title, &legend, &root, &Kind::Differential { a: per_1000(a.1), b: per_1000(b.1) })
}

fn graph(title: &str, legend: &str, root: &Node, kind: &Kind) -> String {
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
    let _ = write!(svg, r##"<text x="0" y="{}" fill="#444">{}</text>"##, 2.0 * FONT_PX + 2.0, esc(legend));
    if root.samples > 0.0 {
        let scale = WIDTH / root.samples;
        let bottom = height - 4.0 - ROW_PX;
        let mut x = 0.0;
        for (name, child) in &root.children {
            draw(&mut svg, name, child, Place { x, y: bottom, scale, total: root.samples }, kind);
            x += child.samples * scale;
        }
    }
    svg.push_str("</svg>");
    svg
}

/// Where a frame is drawn: its left edge and row, pixels per sample, and the graph's samples.
#[derive(Clone, Copy)]
struct Place {
    x: f64,
    y: f64,
    scale: f64,
    total: f64,
}

fn draw(svg: &mut String, name: &str, node: &Node, at: Place, kind: &Kind) {
    let w = node.samples * at.scale;
    if w < MIN_PX {
        return;
    }
    let share = node.samples / at.total * 100.0;
    let (colour, title) = match kind {
        Kind::Plain { unit } => (plain_colour(name).to_string(), format!("{name} ({} {unit}, {share:.2}%)", count(node.samples))),
        Kind::Differential { a, b } => {
            let (pa, pb) = (node.base * a, node.samples * b);
            let se = (node.base * a * a + node.samples * b * b).sqrt();
            let z = if se > 0.0 { (pb - pa) / se } else { 0.0 };
            let sign = if pb >= pa { "+" } else { "" };
            (change_colour(pb - pa, pb, z), format!("{name} (A {}, B {} per 1,000 requests: {sign}{}; {share:.2}% of B)", sig3(pa), sig3(pb), sig3(pb - pa)))
        }
    };
    let _ = write!(
        svg,
        r#"<g data-name="{}"><title>{}</title><rect x="{:.2}" y="{:.2}" width="{:.2}" height="{}" fill="{colour}" stroke="white" stroke-width="0.5"/>"#,
        esc(name),
        esc(&title),
        at.x,
        at.y,
        w,
        ROW_PX - 1.0
    );
    if w >= TEXT_MIN_PX {
        let fits = ((w - 4.0) / CHAR_PX).floor() as usize;
        let text: String = if name.chars().count() <= fits { name.to_string() } else { name.chars().take(fits.saturating_sub(2)).collect::<String>() + ".." };
        let _ = write!(svg, r#"<text x="{:.2}" y="{:.2}">{}</text>"#, at.x + 2.0, at.y + ROW_PX - 4.0, esc(&text));
    }
    svg.push_str("</g>");
    let mut cx = at.x;
    for (child_name, child) in &node.children {
        draw(svg, child_name, child, Place { x: cx, y: at.y - ROW_PX, ..at }, kind);
        cx += child.samples * at.scale;
    }
}

/// Kernel frames (`_[k]`) orange, unnamed ones grey, the rest blue.
fn plain_colour(name: &str) -> &'static str {
    if name.ends_with(crate::profile::folded::KERNEL) {
        "#E69F00"
    } else if name.starts_with("[unknown") {
        "#BBBBBB"
    } else {
        "#56B4E9"
    }
}

/// White within the noise; red for growth and blue for shrinkage beyond it, from pale to full as the
/// change reaches B's own samples of the frame.
fn change_colour(change: f64, b: f64, z: f64) -> String {
    if z.abs() < crate::profile::diff::BEYOND_NOISE {
        return "#F4F4F4".into();
    }
    let depth = (change.abs() / b.max(change.abs())).clamp(0.0, 1.0);
    let fade = |full: f64| (255.0 - (255.0 - full) * (0.3 + 0.7 * depth)).round() as u8;
    if change > 0.0 {
        format!("#{:02X}{:02X}{:02X}", fade(213.0), fade(60.0), fade(50.0))
    } else {
        format!("#{:02X}{:02X}{:02X}", fade(40.0), fade(100.0), fade(200.0))
    }
}

/// A count of samples as it is ("4"); a share of one (per 1,000 requests) to three significant digits.
fn count(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        sig3(v)
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

    /// The frame named `name`, from its `<g>` to its end.
    fn frame_of<'s>(svg: &'s str, name: &str) -> &'s str {
        let at = svg.find(&format!(r#"<g data-name="{name}">"#)).unwrap_or_else(|| panic!("{name} drawn: {svg}"));
        &svg[at..at + svg[at..].find("</g>").unwrap()]
    }

    #[test]
    fn a_differential_graph_is_bs_shape_red_where_it_grew_and_white_within_the_noise() {
        let a = stacks(&[("srv;main;write", 400), ("srv;main;epoll_wait", 400)]);
        let b = stacks(&[("srv;main;write", 400), ("srv;main;epoll_wait", 390), ("srv;main;sched_yield", 300)]);
        let svg = differential_flame_graph("c-epoll: B against A", (&a, 1000), (&b, 1000));
        // B's shape: sched_yield takes 300 of its 1,090 samples of the width, new and so full red.
        let frame = frame_of(&svg, "sched_yield");
        assert!(frame.contains(&format!(r#"width="{:.2}""#, WIDTH * 300.0 / 1090.0)) && frame.contains("fill=\"#D53C32\""), "{frame}");
        assert!(frame.contains("A 0, B 300 per 1,000 requests: +300"), "{frame}");
        // write and epoll_wait did not move beyond the noise; main grew by sched_yield, red but paler.
        for unchanged in ["write", "epoll_wait"] {
            assert!(frame_of(&svg, unchanged).contains("fill=\"#F4F4F4\""), "{}", frame_of(&svg, unchanged));
        }
        let main = frame_of(&svg, "main");
        assert!(!main.contains("#F4F4F4") && !main.contains("#D53C32") && main.contains("A 800, B 1090"), "{main}");
        // Per request: the same stacks over three times the requests shrink everything.
        let b3 = differential_flame_graph("x", (&a, 1000), (&a, 3000));
        assert!(b3.contains("A 400, B 133 per 1,000 requests: -267"), "{b3}");
    }

    #[test]
    fn no_samples_draw_an_empty_graph_with_its_title() {
        let svg = flame_graph("idle", &BTreeMap::new(), "samples");
        assert!(svg.contains("idle") && !svg.contains("<rect"));
    }
}
