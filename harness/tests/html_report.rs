//! report.html: a snapshot of the exporter on a small synthetic run, the full synthetic run checked for
//! every chart, table and caveat, `serverbench report` regenerating it from run.json alone, and the page
//! (with a comparison page) opened in headless Chromium: no script error, every chart in the DOM, sorting
//! works, a screenshot written.

mod common;
#[path = "fixtures/runs/synthetic.rs"]
mod synthetic;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serverbench::report::html;

fn small_run() -> serverbench::model::RunResult {
    let configs: Vec<synthetic::Config> = synthetic::base_configs()
        .into_iter()
        .filter(|c| matches!(c.contestant, "c-epoll" | "rust-tokio") && c.scenario == "hello")
        .collect();
    synthetic::run("small", &configs)
}

fn full_run() -> serverbench::model::RunResult {
    synthetic::run("base", &synthetic::base_configs())
}

/// Models as a run of the whole catalogue has them: 32 servers, 14 of the shared-run-queue family and 18
/// per-core, every one at hello/64 with nearly the same latency, so that their lines end close together.
const MANY_MODELS: [(&str, usize); 6] = [
    ("per-core", 12),
    ("work-stealing", 10),
    ("prefork", 3),
    ("work-sharing", 3),
    ("single-loop", 3),
    ("thread-per-connection", 1),
];

fn many_servers_run() -> serverbench::model::RunResult {
    // A configuration names its contestant with a &'static str.
    let name = |model: &str, i: usize| -> &'static str { Box::leak(format!("{model}-server-{i}").into_boxed_str()) };
    let names: Vec<(&'static str, &str)> =
        MANY_MODELS.iter().flat_map(|(model, n)| (0..*n).map(move |i| (name(model, i), *model))).collect();
    let configs: Vec<synthetic::Config> = names
        .iter()
        .enumerate()
        .map(|(i, (name, _))| synthetic::Config::new(name, "hello", 64, 100_000.0 + i as f64 * 500.0))
        .collect();
    let mut run = synthetic::run("many", &configs);
    let template = run.contestants[0].clone();
    run.contestants = names
        .iter()
        .map(|(name, model)| serverbench::model::ContestantRecord {
            name: name.to_string(),
            model: model.to_string(),
            ..template.clone()
        })
        .collect();
    run
}

/// The id of every chart in a page.
/// Sets figures on every round of every measurement.
fn each_round(run: &mut serverbench::model::RunResult, set: impl FnMut(&mut serverbench::model::Round)) {
    run.measurements.iter_mut().flat_map(|m| m.rounds.iter_mut()).for_each(set);
}

fn chart_ids(page: &str) -> Vec<String> {
    page.match_indices("<svg id=\"").map(|(i, m)| page[i + m.len()..].split('"').next().unwrap().to_string()).collect()
}

#[test]
fn snapshot_of_a_small_run() {
    insta::assert_snapshot!(html::render(&small_run()));
}

#[test]
fn every_chart_table_and_caveat_is_there() {
    let page = html::render(&full_run());
    let ids = chart_ids(&page);
    let expected = [
        "s0-c16-throughput",
        "s0-c16-latency",
        "s0-c16-cpu",
        "s0-c16-rss",
        "s0-c256-throughput",
        "s0-c256-latency",
        "s0-scaling-rps",
        "s0-scaling-p99",
        "s1-c16-throughput",
        "s1-c16-bandwidth",
        "s0-c256-fairness",
    ];
    for id in expected {
        assert!(ids.iter().any(|i| i == id), "no chart {id} in {ids:?}");
    }
    assert!(!ids.iter().any(|i| i.starts_with("s1-scaling")), "echo ran at one connection count: no scaling chart");
    for text in [
        // the header: environment and rules
        "Synthetic CPU @ 3.00GHz",
        "6.1.0-synthetic",
        "serverbench bench --scenario hello,echo -c 16,256 --rounds 5",
        "go version go1.24.0 linux/amd64",
        "1 warm-up (discarded) + 5 measured",
        "0.12 0.34 0.56 at the start, 0.90 0.50 0.60 at the end (1, 5, 15 min)",
        "<dd>4 (1 worker)</dd>",
        "<dd>0-3 (4 threads)</dd>",
        // the two families, with the models in each
        "shared run queue (thread-per-connection, thread-pool, process-per-connection, process-pool, work-sharing, work-stealing)",
        "per-core (per-core, prefork, single-loop)",
        // client-bound: hatched, labelled in the chart and the table
        "⚠ client-bound (5/5 rounds)",
        "url(#s0-c256-throughput-hatch)",
        r#"<td class="flag">client-bound 5/5</td>"#,
        // connections starved: in the fairness chart and the flags
        "⚠ unfair: 32 starved",
        r#"<td class="flag">unfair 5/5, served 224/256 connections</td>"#,
        // the percentile axis
        ">99.999%<",
        // what was not measured
        "build failed: &#39;mvn&#39; exited with status 1",
        "the server answered &#39;hello&#39; with 52 bytes, expected 51",
        "invalid manifest",
    ] {
        assert!(page.contains(text), "missing {text}");
    }
    // Only c-epoll at 256 connections is client-bound.
    assert_eq!(page.matches("⚠ client-bound").count(), 1);
    // Self-contained: nothing is fetched.
    for external in ["http://", "https://", " src=", "<link", "@import", "url(http"] {
        assert!(!page.contains(external), "the page refers to {external}");
    }
}

/// The page says what its bars are: medians of the rounds with the order-statistic interval of
/// docs/methodology.md ("Over rounds"), not means with a t interval; and the CPU bar is the median of the
/// rounds' own figures that its whisker surrounds.
#[test]
fn the_method_text_says_the_bars_are_medians() {
    let page = html::render(&full_run());
    for wrong in ["Student", "mean over measured rounds", "mean with its"] {
        assert!(!page.contains(wrong), "the page says {wrong:?} of bars that are medians");
    }
    assert!(page.contains("show the median of the measured rounds that count"), "the method text is gone");
    assert!(page.contains("order statistics"), "the interval is not named");
    let cpu = chart(&page, "s0-c16-cpu");
    assert!(cpu.contains("median of rounds"), "{cpu}");
}

/// Each row's range of places is in the throughput table (by req/s and by CPU per request) and beside its
/// throughput bar: two rows whose rounds do not tell them apart share places 1–2, a row far below both
/// has place 3 alone.
#[test]
fn places_are_in_the_throughput_table_and_beside_the_bars() {
    let factors = vec![0.98, 1.02, 0.99, 1.01, 1.0, 0.97, 1.03, 1.0];
    let configs: Vec<synthetic::Config> = [("c-epoll", 100_000.0), ("go-net", 100_500.0), ("python-asyncio", 50_000.0)]
        .into_iter()
        .map(|(name, rps)| synthetic::Config { factors: factors.clone(), ..synthetic::Config::new(name, "hello", 64, rps) })
        .collect();
    let page = html::render(&synthetic::run("places", &configs));
    let bars = chart(&page, "s0-c64-throughput");
    assert_eq!(bars.matches(">places 1–2</tspan>").count(), 2, "{bars}");
    assert_eq!(bars.matches(">place 3</tspan>").count(), 1, "{bars}");
    let table = &page[page.find(r#"id="s0-c64-throughput-table""#).expect("the throughput table")..];
    let table = &table[..table.find("</table>").unwrap()];
    assert!(table.contains("<th") && table.contains(">places<") && table.contains(">CPU places<"), "{table}");
    let row = |name: &str| table.split("<tr").find(|r| r.contains(&format!(">{name}<"))).unwrap_or_else(|| panic!("no row {name} in {table}"));
    // req/s places first, CPU places after the server's CPU share: the slow row costs the most per request.
    assert!(row("c-epoll").contains(">1–2<") && row("go-net").contains(">1–2<"), "{table}");
    let slow: Vec<&str> = row("python-asyncio").split("<td").filter(|c| c.contains(">3<")).collect();
    assert_eq!(slow.len(), 2, "place 3 by req/s and by CPU: {table}");
}

/// The markup of one chart of a page.
fn chart<'a>(page: &'a str, id: &str) -> &'a str {
    let start = page.find(&format!("<svg id=\"{id}\"")).unwrap_or_else(|| panic!("no chart {id}"));
    &page[start..start + page[start..].find("</svg>").unwrap()]
}

/// Every `<text>` element in some markup: its attributes and its text.
fn texts(markup: &str) -> Vec<(&str, &str)> {
    markup
        .split("<text")
        .skip(1)
        .map(|e| {
            let end = e.find('>').unwrap();
            (&e[..end], e[end + 1..].split('<').next().unwrap())
        })
        .collect()
}

/// The number an attribute of an element holds.
fn number(attributes: &str, name: &str) -> f64 {
    attributes.split(&format!(" {name}=\"")).nth(1).unwrap().split('"').next().unwrap().parse().unwrap()
}

#[test]
fn latency_of_many_servers_is_drawn_in_readable_panels() {
    let page = html::render(&many_servers_run());
    let svg = chart(&page, "s0-c64-latency");
    let panels: Vec<&str> = svg.split("<g class=\"panel\"").skip(1).collect();
    assert_eq!(panels.len(), 5, "shared run queue in 2 panels of 7, per-core in 3 of 6");
    let mut drawn: Vec<String> = Vec::new();
    for (k, panel) in panels.iter().enumerate() {
        assert!(panel.starts_with(&format!(" id=\"s0-c64-latency-p{k}\"")));
        let names: Vec<String> = panel
            .split("<g class=\"series\"><title>")
            .skip(1)
            .map(|s| s.split('<').next().unwrap().to_string())
            .collect();
        assert!((1..=7).contains(&names.len()), "panel {k} holds {} lines", names.len());
        // End labels a font height (12 px) apart at least, and inside the chart.
        let labels: Vec<(&str, &str)> =
            texts(panel).into_iter().filter(|(a, _)| a.contains("class=\"end-label\"")).collect();
        let mut labelled: Vec<&str> = labels.iter().map(|l| l.1).collect();
        labelled.sort_unstable();
        let mut lines: Vec<&str> = names.iter().map(String::as_str).collect();
        lines.sort_unstable();
        assert_eq!(labelled, lines, "panel {k}: a label a line");
        let mut ys: Vec<f64> = labels.iter().map(|(a, _)| number(a, "y")).collect();
        ys.sort_by(f64::total_cmp);
        assert!(ys.windows(2).all(|w| w[1] - w[0] >= 12.0), "panel {k}: labels overlap at {ys:?}");
        for (a, text) in &labels {
            assert!(number(a, "x") + 7.0 * text.chars().count() as f64 <= 1200.0, "{text} runs off the chart");
        }
        drawn.extend(names);
    }
    // Every server in exactly one panel.
    let mut expected: Vec<String> =
        MANY_MODELS.iter().flat_map(|(m, n)| (0..*n).map(move |i| format!("{m}-server-{i}"))).collect();
    expected.sort();
    drawn.sort();
    assert_eq!(drawn, expected);
    // One y scale: the same ticks in every panel, the same distance apart.
    let ticks = |panel: &str| -> (Vec<String>, f64) {
        let ticks: Vec<(&str, &str)> =
            texts(panel).into_iter().filter(|(a, _)| a.contains("text-anchor=\"end\"")).collect();
        let span = number(ticks[0].0, "y") - number(ticks[ticks.len() - 1].0, "y");
        (ticks.iter().map(|t| t.1.to_string()).collect(), span)
    };
    let first = ticks(panels[0]);
    assert!(first.0.len() >= 2, "{first:?}");
    for panel in &panels[1..] {
        assert_eq!(ticks(panel), first);
    }
}

#[test]
fn report_command_regenerates_the_page_from_run_json() {
    let dir = std::env::temp_dir().join(format!("sb-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs/base/run.json");
    std::fs::copy(&fixture, dir.join("run.json")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_serverbench")).arg("report").arg(&dir).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let written = std::fs::read_to_string(dir.join(html::FILE_NAME)).unwrap();
    assert!(written == html::render(&serverbench::report::load(&dir).unwrap()), "report.html is the page of run.json");
    // Once more: the same bytes, since nothing but run.json goes in.
    Command::new(env!("CARGO_BIN_EXE_serverbench")).arg("report").arg(&dir).output().unwrap();
    assert!(written == std::fs::read_to_string(dir.join(html::FILE_NAME)).unwrap(), "a second report differs");
    assert!(written == html::render(&full_run()), "the page of the model the fixture was written from");
    std::fs::remove_dir_all(&dir).ok();
}

// ---------------------------------------------------------------------------------------------------------
// Headless Chromium

const BROWSER_TIMEOUT: Duration = Duration::from_secs(90);

/// Debian's chromium, installed with apt when missing and running as root. None with the reason when it
/// cannot be had; under CI (CI=true) that is a failure, not a skip.
fn chromium() -> Result<PathBuf, String> {
    let find = || ["chromium", "chromium-browser", "google-chrome"].iter().find_map(|name| which(name));
    if let Some(p) = find() {
        return Ok(p);
    }
    // SAFETY: geteuid takes nothing and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    if root && which("apt-get").is_some() {
        eprintln!("chromium is missing; installing Debian's chromium with apt-get (this takes a minute)");
        let quiet = |args: &[&str]| {
            Command::new("apt-get").args(args).env("DEBIAN_FRONTEND", "noninteractive").stdout(Stdio::null()).status()
        };
        let _ = quiet(&["update"]);
        let _ = quiet(&["install", "-y", "--no-install-recommends", "chromium"]);
        if let Some(p) = find() {
            return Ok(p);
        }
        return Err("apt-get install chromium did not provide a chromium binary".into());
    }
    Err(if root {
        "chromium is not installed and apt-get is not available".into()
    } else {
        "chromium is not installed and installing it needs root (apt-get install chromium)".into()
    })
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| std::env::split_paths(&paths).map(|d| d.join(name)).find(|p| p.is_file()))
}

/// Runs chromium headless on a URL with the given extra arguments; returns its stdout.
fn browse(chromium: &Path, profile: &Path, url: &str, extra: &[&str]) -> String {
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-quic",
            "--disable-dev-shm-usage",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || std::io::read_to_string(stdout).unwrap_or_default());
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "chromium exited with {status} on {url}");
            break;
        }
        if start.elapsed() > BROWSER_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish {url} within {BROWSER_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    reader.join().unwrap()
}

/// The `data-v` sort keys of one column of a table in a dumped DOM, in row order.
fn column(dom: &str, table_id: &str, col: usize) -> Vec<f64> {
    let start = dom.find(&format!("<table id=\"{table_id}\"")).unwrap_or_else(|| panic!("no table {table_id}"));
    let table = &dom[start..start + dom[start..].find("</table>").unwrap()];
    let body = &table[table.find("<tbody>").unwrap()..];
    body.split("<tr>")
        .skip(1)
        .map(|row| {
            let cell = row.split("<td").nth(col + 1).unwrap();
            let v = cell.split("data-v=\"").nth(1).unwrap().split('"').next().unwrap();
            v.parse().unwrap()
        })
        .collect()
}

/// Chromium and an emptied folder `name` under the tests' temporary folder; None, with the test skipped
/// (a failure under CI=true), when Chromium cannot be had.
fn browser_and_folder(test: &str, name: &str) -> Option<(PathBuf, PathBuf)> {
    let chromium = chromium().map_err(|reason| common::skip(test, &format!("chromium missing: {reason}"))).ok()?;
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Some((chromium, dir))
}

#[test]
fn pages_open_in_headless_chromium() {
    let Some((chromium, dir)) = browser_and_folder("pages_open_in_headless_chromium", "html_report") else { return };
    let report_page = html::render(&full_run());
    let base = synthetic::run("base", &synthetic::base_configs());
    let regressed = synthetic::run("regressed", &synthetic::regressed_configs());
    let compare_page = serverbench::compare::html::render(&serverbench::compare::compare(&base, &regressed, serverbench::compare::Rules::default()));
    let many_page = html::render(&many_servers_run());
    for (name, page) in [("report.html", &report_page), ("compare.html", &compare_page), ("many.html", &many_page)] {
        let path = dir.join(name);
        std::fs::write(&path, page).unwrap();
        let url = format!("file://{}", path.display());
        let dom = browse(&chromium, &dir.join(format!("profile-{name}")), &url, &["--dump-dom"]);
        assert!(dom.contains("data-sb-ready=\"1\""), "{name}: the page script did not finish");
        if let Some(at) = dom.find("<p id=\"sb-js-error\"") {
            panic!("{name}: a script error: {}", dom[at..].chars().take(300).collect::<String>());
        }
        let ids = chart_ids(page);
        assert!(!ids.is_empty());
        for id in ids {
            assert!(dom.contains(&format!("<svg id=\"{id}\"")), "{name}: chart {id} is not in the DOM");
        }
        // The first screen at 1,400 px, and a phone's (390 px wide).
        for (size, window) in [("1400", "1400,900"), ("phone", "390,844")] {
            let shot = dir.join(name.replace(".html", &format!("-{size}.png")));
            browse(
                &chromium,
                &dir.join(format!("profile-shot-{size}-{name}")),
                &url,
                &[&format!("--screenshot={}", shot.display()), &format!("--window-size={window}")],
            );
            let png = std::fs::read(&shot).expect("a screenshot was written");
            assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "{name}: the screenshot at {window} looks empty");
            eprintln!("screenshot: {}", shot.display());
        }
    }

    // Sorting: open the latency table sorted by p99 (column 4), ascending and then descending.
    let url = format!("file://{}", dir.join("report.html").display());
    let up =
        browse(&chromium, &dir.join("profile-sort-up"), &format!("{url}#sort=s0-c16-latency-table:4"), &["--dump-dom"]);
    let p99 = column(&up, "s0-c16-latency-table", 4);
    assert_eq!(p99.len(), 6);
    assert!(p99.windows(2).all(|w| w[0] <= w[1]), "ascending: {p99:?}");
    let down = browse(
        &chromium,
        &dir.join("profile-sort-down"),
        &format!("{url}#sort=s0-c16-latency-table:4:desc"),
        &["--dump-dom"],
    );
    let p99 = column(&down, "s0-c16-latency-table", 4);
    assert!(p99.windows(2).all(|w| w[0] >= w[1]), "descending: {p99:?}");
    // As rendered the rows follow req/s, not p99, so the sort did move them.
    let unsorted = column(&report_page, "s0-c16-latency-table", 4);
    assert_ne!(unsorted, p99);
}

/// Measures the laid-out page: every table wider than its column (the box it sits in, padding left out)
/// is named in the body's `data-overflow`; the bottom of the first table's answer (its flags line) is
/// `data-answer-bottom`, in px from the top.
const LAYOUT_PROBE: &str = r#"<script>(function(){
var wide=[];document.querySelectorAll("table").forEach(function(t){var p=t.parentElement,cs=getComputedStyle(p);
var inner=p.clientWidth-parseFloat(cs.paddingLeft)-parseFloat(cs.paddingRight);
if(t.getBoundingClientRect().width>inner+1)wide.push(t.id||"?");});
document.body.setAttribute("data-overflow",wide.join(" "));
var f=document.querySelector("section.answer p.flags");
document.body.setAttribute("data-answer-bottom",f?String(Math.ceil(f.getBoundingClientRect().bottom)):"none");
})();</script></body>"#;

/// The value of an attribute of the dumped body.
fn body_attribute<'a>(dom: &'a str, name: &str) -> &'a str {
    let at = dom.find(&format!("{name}=\"")).unwrap_or_else(|| panic!("the probe did not run: no {name}"));
    dom[at + name.len() + 2..].split('"').next().unwrap()
}

/// Lays `page` out in Chromium at `width` × 900 px and returns (tables wider than their column, bottom of
/// the first table's answer).
fn layout(chromium: &Path, dir: &Path, name: &str, page: &str, width: u32) -> (Vec<String>, String) {
    let path = dir.join(format!("probe-{width}-{name}"));
    std::fs::write(&path, page.replacen("</body>", LAYOUT_PROBE, 1)).unwrap();
    let dom = browse(chromium, &dir.join(format!("profile-probe-{width}-{name}")), &format!("file://{}", path.display()), &["--dump-dom", &format!("--window-size={width},900")]);
    let wide = body_attribute(&dom, "data-overflow").split_whitespace().map(String::from).collect();
    (wide, body_attribute(&dom, "data-answer-bottom").to_string())
}

/// At 1,400 px every table of the report fits the column it sits in (no sideways scrolling), and the first
/// screen (900 px) holds the answer of the first table, down to its flags. The probe itself is shown to
/// catch a table too wide for its column.
#[test]
fn tables_fit_their_column_at_1400_px_and_the_answer_is_on_the_first_screen() {
    let test = "tables_fit_their_column_at_1400_px_and_the_answer_is_on_the_first_screen";
    let Some((chromium, dir)) = browser_and_folder(test, "html_layout") else { return };
    for (name, page) in [("report.html", html::render(&full_run())), ("many.html", html::render(&many_servers_run()))] {
        let (wide, answer_bottom) = layout(&chromium, &dir, name, &page, 1400);
        assert!(wide.is_empty(), "{name}: tables wider than their column at 1,400 px: {wide:?}");
        let bottom: f64 = answer_bottom.parse().unwrap_or_else(|_| panic!("{name}: no answer on the page"));
        assert!(bottom <= 900.0, "{name}: the first table's answer ends at {bottom} px, below the first screen");
    }
    // A table of one cell 3,000 px wide, beside a chart as the report places its tables.
    let mut too_wide = serverbench::report::html_page::Page::new("too wide");
    let cell = serverbench::report::html_page::Cell::text("x".repeat(400));
    let table = serverbench::report::html_page::Table { id: "too-wide".into(), caption: None, headers: vec!["a".into()], rows: vec![vec![cell]] };
    too_wide.raw(&format!(r#"<div class="figure"><div class="chart-box"></div><div class="table-box">{}</div></div>"#, table.to_html()));
    let (wide, _) = layout(&chromium, &dir, "too-wide.html", &too_wide.finish(), 1400);
    assert_eq!(wide, ["too-wide"], "the probe names a table wider than its column");
}

#[test]
fn the_report_opens_with_the_answer() {
    let page = html::render(&full_run());
    let answer = page.find(r#"<h2 id="answer">What the run shows</h2>"#).expect("the answer's heading");
    assert!(answer < page.find(r#"id="environment""#).unwrap() && answer < page.find(r#"id="rules""#).unwrap(), "the answer comes before the environment and the rules");
    assert!(answer < page.find(r#"<nav class="contents">"#).unwrap() && answer < page.find("<svg").unwrap(), "and before the contents and the charts");
    for text in [
        r#"<h3 id="answer-0">hello · throughput · 16 connections</h3>"#,
        r#"id="answer-0-rps""#,
        r#"id="answer-0-cpu""#,
        "req/s: groups that cannot be told apart",
        "server CPU per request: groups that cannot be told apart",
        // c-epoll is client-bound at 256 connections (the second table) in every round.
        "client-bound 1 of 6 rows (5 of 30 rounds); unsaturated none; cpu-drift none",
    ] {
        assert!(page.contains(text), "missing {text}");
    }
    assert!(!page.contains("Where a request&#39;s CPU goes:"), "no reading without the cost figures");
    let mut run = full_run();
    each_round(&mut run, |r| {
        let requests = r.load.requests as f64;
        r.server.cost = Some(serverbench::model::CostBreakdown { user_s: 3e-6 * requests, system_s: 9e-6 * requests, voluntary_switches: 0, involuntary_switches: 0, migrations: None });
    });
    assert!(html::render(&run).contains("Where a request&#39;s CPU goes:</strong> the kernel takes 75% of the server&#39;s CPU per request"));
    let md = serverbench::report::markdown::render(&full_run());
    let (answer, setting) = (md.find("## What the run shows").expect("summary.md's answer"), md.find("## Environment and rules").unwrap());
    assert!(answer < setting && setting < md.find("- Started").unwrap(), "{md}");
    assert!(md.contains("- Flags that qualify the numbers: client-bound 1 of 6 rows (5 of 30 rounds)"), "{md}");
}

#[test]
fn a_workers_sweep_is_drawn_against_workers_and_kept_apart_in_the_tables() {
    let configs: Vec<synthetic::Config> = ["c-epoll", "go-net"]
        .iter()
        .flat_map(|name| [1usize, 2].map(|w| synthetic::Config::new(name, "work", 64, 5_000.0 * w as f64)))
        .collect();
    let mut run = synthetic::run("sweep", &configs);
    for (m, w) in run.measurements.iter_mut().zip([1, 2, 1, 2]) {
        m.workers = Some(w);
    }
    run.config.workers_sweep = vec![1, 2];
    let page = html::render(&run);
    assert!(page.contains("work · throughput · 64 connections · scaling over workers"), "no workers chart");
    let ids = chart_ids(&page);
    assert!(ids.iter().any(|i| i == "w0-scaling-rps") && ids.iter().any(|i| i == "w0-scaling-p99"), "{ids:?}");
    assert!(page.contains("throughput over workers"));
    // Each workers count is its own configuration in the tables.
    assert!(page.contains("work · throughput, 1 worker") && page.contains("work · throughput, 2 workers"));
    let md = serverbench::report::markdown::render(&run);
    assert!(md.contains("## work · throughput, 2 workers · 64 connections"), "{md}");
    assert!(md.contains("(workers 1, 2 in turn)") && page.contains("workers 1, 2 in turn"), "the rules say the workers were swept");
}

#[test]
fn the_server_cost_per_request_is_drawn_as_user_then_kernel() {
    let mut run = small_run();
    assert!(!chart_ids(&html::render(&run)).iter().any(|i| i.ends_with("-cost-split")), "no chart without the figures");
    each_round(&mut run, |r| {
        let requests = r.load.requests as f64;
        r.server.cost = Some(serverbench::model::CostBreakdown {
            user_s: 3e-6 * requests,
            system_s: 9e-6 * requests,
            voluntary_switches: 0,
            involuntary_switches: 0,
            migrations: None,
        });
    });
    let page = html::render(&run);
    let id = chart_ids(&page).into_iter().find(|i| i.ends_with("-cost-split")).expect("a cost split chart");
    let svg = chart(&page, &id);
    assert!(svg.contains(">user</text>") && svg.contains(">kernel</text>"), "{svg}");
    assert!(svg.contains("class=\"part0\"") && svg.contains("class=\"part1\""), "{svg}");
    assert!(svg.contains("3.00 µs + 9.00 µs"), "each bar's parts are 3 µs user and 9 µs kernel: {svg}");
}

#[test]
fn the_servers_system_calls_are_drawn_by_kind() {
    let mut run = small_run();
    assert!(!chart_ids(&html::render(&run)).iter().any(|i| i.ends_with("-syscalls")), "no chart without the counts");
    each_round(&mut run, |r| {
        let requests = r.load.requests;
        // A read and a write per request, an epoll_wait per 50 and an accept4 ("other") per 100.
        let by_name = [("read", requests), ("write", requests), ("epoll_wait", requests / 50), ("accept4", requests / 100)];
        r.server.syscalls = Some(serverbench::model::SyscallCounts {
            total: Some(by_name.iter().map(|(_, n)| n).sum()),
            by_name: by_name.iter().map(|(name, n)| (name.to_string(), *n)).collect(),
        });
    });
    let page = html::render(&run);
    let id = chart_ids(&page).into_iter().find(|i| i.ends_with("-syscalls")).expect("a system calls chart");
    let svg = chart(&page, &id);
    for kind in ["receive", "send", "wait", "futex", "other"] {
        assert!(svg.contains(&format!(">{kind}</text>")), "the legend names {kind}: {svg}");
    }
    assert!(svg.contains("class=\"part0\"") && svg.contains("class=\"part2\"") && svg.contains("class=\"part4\""), "{svg}");
    // Each bar's parts in the legend's order: a receive and a send per request first, no futex.
    assert!(svg.contains("(1.00 + 1.00 + 0.0"), "{svg}");
    assert!(svg.contains(" + 0 + 0.0"), "{svg}");
}

/// An A/B run's part: which version is which, the verdicts, and the chart of the paired ratios with the
/// table of every pair.
#[test]
fn an_ab_run_has_its_part_with_the_paired_ratios_over_the_run() {
    let page = serverbench::report::html::render(&synthetic::ab_run("ab"));
    assert!(page.contains(r##"<a href="#ab">A/B</a>"##), "linked from the contents");
    assert!(page.contains(r#"<h2 id="ab">A/B: c-epoll@HEAD~1 (A) against c-epoll (B)</h2>"#));
    assert!(page.contains("B is 3.0% slower (95% CI "), "the verdict of req/s");
    assert!(chart_ids(&page).contains(&"ab-pairs".to_string()), "{:?}", chart_ids(&page));
    assert!(page.contains("B/A of req/s per pair: c-epoll against c-epoll@HEAD~1"));
    assert!(page.contains(r#"<table id="ab-pairs-table""#) && page.contains("no (disturbed)"));
    assert!(page.contains("pairs of measured rounds, A and B back to back and first in turn, until B/A of req/s is clear (at most 200)"), "the rules say how rounds ran");
    assert!(!serverbench::report::html::render(&small_run()).contains(r#"id="ab""#));
}
