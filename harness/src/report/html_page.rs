//! A self-contained HTML page: inline CSS, inline SVG, sortable tables through a few lines of inline
//! script; no fonts, scripts or images from the network. Shared by the run report and the comparison page.

use std::fmt::Write as _;

use super::format::or_absent;

pub use super::svg::esc;

/// One table cell: its text, and the number it sorts by (text cells sort by their text).
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub text: String,
    pub sort: Option<f64>,
    /// A CSS class: `num` (right-aligned), `flag` (a warning), `better`, `worse`.
    pub class: Option<&'static str>,
}

impl Cell {
    pub fn text(text: impl Into<String>) -> Cell {
        Cell { text: text.into(), sort: None, class: None }
    }
    /// A number written as `text`, right-aligned and sorted by `value`.
    pub fn num(text: impl Into<String>, value: f64) -> Cell {
        Cell { text: text.into(), sort: Some(value), class: Some("num") }
    }
    pub fn with_class(mut self, class: &'static str) -> Cell {
        self.class = Some(class);
        self
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub id: String,
    pub caption: Option<String>,
    pub headers: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    pub fn to_html(&self) -> String {
        let mut s = format!(r#"<table id="{}" class="sortable">"#, esc(&self.id));
        if let Some(c) = &self.caption {
            let _ = write!(s, "<caption>{}</caption>", esc(c));
        }
        s.push_str("<thead><tr>");
        for h in &self.headers {
            let _ = write!(s, r#"<th scope="col" tabindex="0" title="sort by {0}">{0}</th>"#, esc(h));
        }
        s.push_str("</tr></thead><tbody>\n");
        for row in &self.rows {
            s.push_str("<tr>");
            for cell in row {
                s.push_str("<td");
                if let Some(class) = cell.class {
                    let _ = write!(s, r#" class="{class}""#);
                }
                if let Some(v) = cell.sort.filter(|v| v.is_finite()) {
                    let _ = write!(s, r#" data-v="{v}""#);
                }
                let _ = write!(s, ">{}</td>", esc(&cell.text));
            }
            s.push_str("</tr>\n");
        }
        s.push_str("</tbody></table>\n");
        s
    }
}

/// The widest table laid out beside a chart: at 1,400 px the chart takes about 850 and the table about 490
/// of the 1,360 inside the margins; the rest is slack for the estimate.
const BESIDE_A_CHART_PX: f64 = 440.0;
/// An average advance of a 13 px sans-serif character, and a cell's padding and border.
const TABLE_CHAR_PX: f64 = 7.0;
const CELL_EXTRA_PX: f64 = 15.0;

impl Table {
    /// About how wide the table lays out: per column its longest header word (headers wrap) or its longest
    /// cell (cells of the classes that wrap count their longest word).
    pub fn estimated_width_px(&self) -> f64 {
        let longest_word = |text: &str| text.split_whitespace().map(|w| w.chars().count()).max().unwrap_or(0);
        (0..self.headers.len())
            .map(|col| {
                let cells = self.rows.iter().filter_map(|r| r.get(col)).map(|c| match c.class {
                    Some("flag" | "members" | "wrap") => longest_word(&c.text),
                    _ => c.text.chars().count(),
                });
                let chars = cells.chain([longest_word(&self.headers[col])]).max().unwrap_or(0);
                chars as f64 * TABLE_CHAR_PX + CELL_EXTRA_PX
            })
            .sum()
    }
}

/// Key–value rows, e.g. the environment of a run.
pub fn facts(rows: &[(&str, String)]) -> String {
    let mut s = String::from(r#"<dl class="facts">"#);
    for (k, v) in rows {
        let _ = write!(s, "<dt>{}</dt><dd>{}</dd>", esc(k), esc(v));
    }
    s.push_str("</dl>\n");
    s
}

/// A page being written: sections of headings, prose, tables and charts.
#[derive(Debug, Default)]
pub struct Page {
    title: String,
    body: String,
}

impl Page {
    pub fn new(title: &str) -> Page {
        Page { title: title.to_string(), body: format!("<h1>{}</h1>\n", esc(title)) }
    }
    pub fn heading(&mut self, level: u8, id: &str, text: &str) {
        let _ = writeln!(self.body, r#"<h{level} id="{}">{}</h{level}>"#, esc(id), esc(text));
    }
    /// A paragraph of plain text.
    pub fn para(&mut self, text: &str) {
        let _ = writeln!(self.body, "<p>{}</p>", esc(text));
    }
    /// A paragraph in the muted note style.
    pub fn note(&mut self, text: &str) {
        let _ = writeln!(self.body, r#"<p class="note">{}</p>"#, esc(text));
    }
    /// Markup the caller built and escaped itself (an SVG chart, a table, facts).
    pub fn raw(&mut self, html: &str) {
        self.body.push_str(html);
        self.body.push('\n');
    }
    /// A chart and the table that carries its numbers, side by side where the window is wide.
    pub fn figure(&mut self, svg: &str, table: Option<&Table>) {
        self.figure_of_class("figure", svg, table);
    }
    /// A wide chart at its full width, with the table below it.
    pub fn wide_figure(&mut self, svg: &str, table: Option<&Table>) {
        self.figure_of_class("figure wide", svg, table);
    }
    fn figure_of_class(&mut self, class: &str, svg: &str, table: Option<&Table>) {
        let _ = write!(self.body, r#"<div class="{class}"><div class="chart-box">"#);
        self.body.push_str(svg);
        self.body.push_str("</div>");
        if let Some(t) = table {
            // Beside the chart a table has what the chart leaves of a 1,400 px window; a wider one goes
            // below it, across the page, rather than scroll.
            self.body.push_str(if t.estimated_width_px() > BESIDE_A_CHART_PX { r#"<div class="table-box wide">"# } else { r#"<div class="table-box">"# });
            self.body.push_str(&t.to_html());
            self.body.push_str("</div>");
        }
        self.body.push_str("</div>\n");
    }
    pub fn finish(self) -> String {
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>{CSS}</style>\n<script>{ERROR_SCRIPT}</script>\n</head>\n<body>\n{}<script>{SORT_SCRIPT}</script>\n</body>\n</html>\n",
            esc(&self.title),
            self.body
        )
    }
}

const CSS: &str = r#"
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;font-size:14px;line-height:1.45;color:#111;background:#fff;margin:0 auto;padding:0 20px 40px;max-width:1500px}
h1{font-size:24px;margin:20px 0 8px}h2{font-size:19px;margin:28px 0 8px;border-bottom:1px solid #ccc}h3{font-size:16px;margin:20px 0 6px}
.note{color:#444;font-size:13px;max-width:900px}
dl.facts{display:grid;grid-template-columns:max-content auto;gap:2px 16px;margin:8px 0}
dl.facts dt{font-weight:bold}dl.facts dd{margin:0;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13px;overflow-wrap:anywhere}
.figure{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start;margin:8px 0 20px}
.chart-box{flex:1 1 720px;max-width:900px}.chart-box svg{width:100%;height:auto}
.figure.wide .chart-box{flex-basis:100%;max-width:1200px}
.table-box{flex:1 1 360px;min-width:0;overflow-x:auto}.table-box.wide{flex-basis:100%}
.pair{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}.pair>.table-box{flex:1 1 420px}
nav.contents a{margin-right:14px;white-space:nowrap}
table{border-collapse:collapse;font-size:13px;margin:6px 0}
caption{text-align:left;font-weight:bold;padding:4px 0}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:left;white-space:nowrap}th{white-space:normal;vertical-align:bottom}
th{background:#f2f2f2;cursor:pointer;user-select:none}
th[aria-sort=ascending]::after{content:" ▲"}th[aria-sort=descending]::after{content:" ▼"}
td.num{text-align:right;font-variant-numeric:tabular-nums}
td.flag{font-weight:bold;white-space:normal;min-width:9em}td.members{white-space:normal}td.wrap{white-space:pre-wrap;min-width:300px;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}td.better{font-weight:bold;background:#e3f1e8}td.worse{font-weight:bold;background:#fbe6e0}
tbody tr:nth-child(even){background:#fafafa}
#sb-js-error{background:#fbe6e0;border:2px solid #a00;padding:8px;font-weight:bold}
"#;

/// Catches script errors and shows them on the page, where a reader (and the browser test) sees them.
const ERROR_SCRIPT: &str = r#"window.addEventListener("error",function(e){var p=document.getElementById("sb-js-error")||document.createElement("p");p.id="sb-js-error";p.textContent="script error: "+e.message;(document.body||document.documentElement).prepend(p);});"#;

/// Sorts a table by the clicked column: by `data-v` where cells have it, else by text; a second click on
/// the same column reverses the order. A link ending in `#sort=TABLE_ID:COLUMN` (`:desc` for descending)
/// opens the page sorted. Marks the body `data-sb-ready` once wired, for the browser test.
const SORT_SCRIPT: &str = r#"
document.querySelectorAll("table.sortable").forEach(function(table){
  table.querySelectorAll("th").forEach(function(th,col){
    function sort(){
      var asc=th.getAttribute("aria-sort")!=="ascending";
      table.querySelectorAll("th").forEach(function(h){h.removeAttribute("aria-sort");});
      th.setAttribute("aria-sort",asc?"ascending":"descending");
      var body=table.tBodies[0],rows=Array.prototype.slice.call(body.rows);
      function key(r){var c=r.cells[col];if(!c)return "";var v=c.getAttribute("data-v");return v===null?c.textContent:parseFloat(v);}
      rows.sort(function(a,b){var x=key(a),y=key(b),o=(typeof x==="number"&&typeof y==="number")?x-y:String(x).localeCompare(String(y),undefined,{numeric:true});return asc?o:-o;});
      rows.forEach(function(r){body.appendChild(r);});
    }
    th.addEventListener("click",sort);
    th.addEventListener("keydown",function(e){if(e.key==="Enter"||e.key===" "){e.preventDefault();sort();}});
  });
});
var m=location.hash.match(/^#sort=([\w-]+):(\d+)(:desc)?$/),t=m&&document.getElementById(m[1]),h=t&&t.querySelectorAll("th")[+m[2]];
if(h){h.click();if(m[3])h.click();}
document.body.setAttribute("data-sb-ready","1");
"#;

/// A number cell, or the absent mark for a figure that is missing or not finite.
pub(super) fn opt_num(v: Option<f64>, f: impl Fn(f64) -> String) -> Cell {
    let v = v.filter(|v| v.is_finite());
    Cell::num(or_absent(v, f), v.unwrap_or(f64::NAN))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_cells_carry_sort_keys_and_escape_text() {
        let t = Table {
            id: "t1".into(),
            caption: Some("a < b".into()),
            headers: vec!["name".into(), "req/s".into()],
            rows: vec![
                vec![Cell::text("x&y"), Cell::num("1.2k", 1234.5)],
                vec![Cell::text("z"), Cell::num("–", f64::NAN)],
            ],
        };
        let html = t.to_html();
        assert!(html.contains("<caption>a &lt; b</caption>"));
        assert!(html.contains(r#"<td class="num" data-v="1234.5">1.2k</td>"#));
        assert!(html.contains(r#"<td class="num">–</td>"#), "a non-finite number has no sort key");
        assert!(html.contains("<td>x&amp;y</td>"));
    }

    #[test]
    fn page_is_self_contained() {
        let mut p = Page::new("run <1>");
        p.para("hello");
        let html = p.finish();
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("<title>run &lt;1&gt;</title>"));
        for external in ["http://", "https://", "src=", "@import", "url(http"] {
            assert!(!html.contains(external), "page refers to {external}");
        }
    }
}
