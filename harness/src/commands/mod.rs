//! Every subcommand: list, bench, build, responses, versions, report, compare and agent here, check,
//! load and history in files of their own. Each turns parsed arguments into work and prints the outcome; this is the
//! layer that wires the rooms together.

pub mod bisect;
pub mod check;
pub mod history;
mod history_page;
pub mod load;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::catalog::build::Builder;
use crate::catalog::requires::{self, Readiness, System};
use crate::catalog::{Catalog, Contestant};
use crate::cli::bench::BenchArgs;
use crate::cli::compare::CompareArgs;
use crate::history::Recorder;
use crate::cli::{AgentArgs, BuildArgs, ListArgs, ReportArgs, ResponsesArgs, SelectArgs};
use crate::report::table::{Align, Table};
use crate::report::{self, markdown};
use crate::launch::{self, Prepared, ServerSetup, Started};
use crate::os::cpus::CpuSet;
use crate::model::{MeasurementStatus, RunResult};
use crate::run::{self, environment};
use crate::ui::Ui;
use crate::wire::Scenario;

/// A run stopped by Ctrl-C or SIGTERM; its message says where the finished results are.
#[derive(Debug)]
pub struct Interrupted(pub PathBuf);

impl fmt::Display for Interrupted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "interrupted; the finished results are in {}", self.0.display())
    }
}

impl std::error::Error for Interrupted {}

/// The repository: the first folder from the working directory up that holds `contestants/`, else the
/// checkout this binary was built from.
pub fn repo_root() -> PathBuf {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    cwd.ancestors()
        .find(|d| d.join("contestants").is_dir() && d.join("harness").is_dir())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap_or(Path::new(".")).to_path_buf())
}

fn catalog(select: &SelectArgs) -> anyhow::Result<Catalog> {
    Catalog::discover(&select.contestants.clone().unwrap_or_else(|| repo_root().join("contestants")))
}

/// Ctrl-C and SIGTERM raise the returned flag instead of ending the process, so every server is stopped.
pub fn interrupt_flag() -> anyhow::Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, flag.clone())?;
    }
    Ok(flag)
}

pub fn list(args: ListArgs) -> anyhow::Result<()> {
    let catalog = catalog(&args.select)?;
    let sys = System::detect();
    let mut t = Table::new(&[
        ("Name", Align::Left),
        ("Language", Align::Left),
        ("Framework", Align::Left),
        ("Category", Align::Left),
        ("Model", Align::Left),
        ("IO", Align::Left),
        ("Style", Align::Left),
        ("Scenarios", Align::Left),
        ("Runs here", Align::Left),
    ]);
    let selected = catalog.select(&args.select.selection())?;
    for c in &selected {
        let here = match requires::check(c, sys) {
            Readiness::Ready => "yes".to_string(),
            Readiness::Install(p) => format!("yes (bench installs Debian packages {})", p.join(" ")),
            Readiness::Missing { reason } => format!("no: {reason}"),
        };
        t.row(vec![
            c.name.clone(),
            c.language.clone(),
            c.framework.clone(),
            c.category.clone(),
            c.model.clone(),
            c.io.clone(),
            c.style.clone().unwrap_or_else(|| "-".into()),
            c.scenarios.join(", "),
            here,
        ]);
    }
    print!("{}", t.markdown());
    print_not_held_to(&selected);
    print_catalog_errors(&catalog);
    Ok(())
}

/// The conformance checks each contestant's manifest says it is not held to, with the reasons.
fn print_not_held_to(selected: &[&Contestant]) {
    let lines: Vec<String> = selected
        .iter()
        .flat_map(|c| c.unsupported_checks.iter().map(move |(check, why)| format!("- {}: {check}: {why}", c.name)))
        .collect();
    if !lines.is_empty() {
        println!("\nChecks not held to (`unsupported_checks`; `serverbench check` skips them with the reason):");
        println!("{}", lines.join("\n"));
    }
}

fn print_catalog_errors(catalog: &Catalog) {
    if !catalog.errors.is_empty() {
        println!("\nInvalid manifests (not listed above):");
        for e in &catalog.errors {
            println!("- {e}");
        }
    }
}

pub fn bench(args: BenchArgs, ui: &Ui) -> anyhow::Result<()> {
    let root = repo_root();
    let opts = args.options(&root, std::env::args().collect())?;
    let catalog = Catalog::discover(&opts.catalog_root)?;
    // Before the run folder is made: a selection that matches nothing leaves no empty folder behind. (Two
    // folders of an A/B run hold their own manifests, read when the run starts.)
    if !matches!(opts.ab.as_ref().map(|ab| &ab.source), Some(run::options::AbSource::Folders(..))) {
        anyhow::ensure!(!catalog.select(&opts.selection)?.is_empty(), "no contestant matches the filters; see `serverbench list`");
    }
    let stop = interrupt_flag()?;
    let (id, dir) = run::create_run_dir(&opts.out_dir)?;
    let started = std::time::Instant::now();
    ui.line(&format!("run {id}: writing {}", dir.display()));
    let mut history = Recorder::new(crate::history::Location::of(&opts.out_dir));
    let mut save = |r: &RunResult| save_run(r, &dir, &mut history, ui);
    let result = run::bench(&opts, &catalog, &id, &dir, ui, &stop, Some(&check::BenchSuite), &mut save)?;
    if result.interrupted {
        return Err(Interrupted(dir).into());
    }
    print!("{}", markdown::render(&result));
    let measured = result.measurements.iter().filter(|m| m.status == MeasurementStatus::Measured).count();
    ui.warn(&format!("results: {} (summary.md, summary.csv, run.json)", dir.display()));
    let secs = started.elapsed().as_secs();
    ui.warn(&format!("total time: {} min {:02} s", secs / 60, secs % 60));
    if let Some(t) = &result.time_spent {
        ui.warn(&format!("time spent: {}", t.text()));
    }
    anyhow::ensure!(
        measured > 0,
        "nothing was measured; the reasons are in {}",
        dir.join(markdown::FILE_NAME).display()
    );
    if let Some(line) = report::pairs::one_line(&result, started.elapsed().as_secs_f64()) {
        println!("\n{line}");
    }
    ab_gate(&opts, &result)
}

/// What a benchmark does with its model after every pass: every file of the run folder written again, then
/// the run recorded in the history. A history that cannot be written is one warning, never the run's
/// failure (`history::Recorder`).
pub fn save_run(r: &RunResult, dir: &Path, history: &mut Recorder, ui: &Ui) -> anyhow::Result<()> {
    report::write_all(r, dir)?;
    if let Some(warning) = history.record(r) {
        ui.warn(&warning);
    }
    Ok(())
}

/// An A/B run's `--fail-on`: `compare`'s gate on B's verdicts (exit status 3 when one it selects is worse,
/// or with `+unclear` not shown to hold).
fn ab_gate(opts: &run::options::BenchOptions, result: &RunResult) -> anyhow::Result<()> {
    let (Some(fail_on), Some(ab)) = (opts.ab.as_ref().and_then(|o| o.fail_on.as_ref()), result.ab.as_ref()) else { return Ok(()) };
    let configuration = ab.measurement(&result.measurements, crate::model::ab::Side::B).map(|m| format!("{} · {} · {} connections", m.scenario, m.load_label(), m.connections)).unwrap_or_default();
    let list: Vec<String> = result
        .ab_estimates()
        .iter()
        .filter(|e| fail_on.trips(e.metric, e.verdict))
        .map(|e| crate::compare::Regressed::figure(&format!("{} against {}", ab.b.name, ab.a.name), &configuration, e.metric, e.ratio.map(|r| r.ratio), e.verdict))
        .collect();
    if list.is_empty() {
        return Ok(());
    }
    Err(crate::compare::Regressed { spec: fail_on.spec(), list }.into())
}

pub fn build(args: BuildArgs, ui: &Ui) -> anyhow::Result<()> {
    let catalog = catalog(&args.select)?;
    let selected = catalog.select(&args.select.selection())?;
    let out = args.out.clone().unwrap_or_else(|| repo_root().join("results"));
    let logs = out.join(".build-logs");
    let stop = interrupt_flag()?;
    let sys = System::detect();
    let mut builder = Builder::new(launch::stamp_dir(&out), logs.clone(), args.rebuild);
    let mut t = Table::new(&[("Name", Align::Left), ("Build", Align::Left), ("Seconds", Align::Right), ("Log", Align::Left)]);
    let (mut failed, mut skipped) = (Vec::new(), 0);
    // Skipped although the manifest does not say this machine cannot build it: fatal with --require-all.
    let mut absent = Vec::new();
    ui.start(selected.len() as u64, "building");
    for c in &selected {
        let (what, seconds, log) = match launch::make_ready(c, &catalog, &mut builder, sys, !args.no_install, &logs, ui, &stop)? {
            Prepared::Ready(o) => {
                let what = match o.result {
                    crate::catalog::build::BuildResult::Cached => "cached",
                    crate::catalog::build::BuildResult::NothingToBuild => "nothing to build",
                    _ => "built",
                };
                (what.to_string(), format!("{:.1}", o.seconds), o.log.display().to_string())
            }
            Prepared::Failed(reason, o) => {
                failed.push(c.name.clone());
                (format!("FAILED: {}", reason.lines().next().unwrap_or_default()), format!("{:.1}", o.seconds), o.log.display().to_string())
            }
            Prepared::Skipped(reason) => {
                skipped += 1;
                if c.unsupported_here().is_none() {
                    absent.push(c.name.clone());
                }
                (format!("skipped: {reason}"), String::new(), String::new())
            }
            Prepared::Interrupted => return Err(Interrupted(logs).into()),
        };
        t.row(vec![c.name.clone(), what, seconds, log]);
        ui.step();
    }
    ui.finish();
    print!("{}", t.markdown());
    print_catalog_errors(&catalog);
    if skipped > 0 {
        println!("\n{skipped} contestant(s) cannot run here; `serverbench list` says why.");
    }
    // Invalid manifests fail a build of everything; a build of named contestants concerns only those.
    let whole_catalog = args.select.selection() == crate::catalog::Selection::default();
    let broken = if whole_catalog { catalog.errors.len() } else { 0 };
    let mut problems = Vec::new();
    if !failed.is_empty() {
        problems.push(format!("{} build(s) failed ({}); the logs are in {}", failed.len(), failed.join(", "), logs.display()));
    }
    if broken > 0 {
        problems.push(format!("{broken} manifest(s) are invalid (listed above)"));
    }
    if args.require_all && !absent.is_empty() {
        problems.push(format!(
            "{} contestant(s) were not built although their manifests do not say they cannot be built on {} ({}; the reasons are above)",
            absent.len(),
            std::env::consts::ARCH,
            absent.join(", ")
        ));
    }
    anyhow::ensure!(problems.is_empty(), "{}", problems.join("; "));
    Ok(())
}

pub fn responses(args: ResponsesArgs, ui: &Ui) -> anyhow::Result<()> {
    let root = repo_root();
    let catalog = catalog(&args.select)?;
    let selected = catalog.select(&args.select.selection())?;
    let out = args.out.clone().unwrap_or_else(|| root.join("results").join(".responses"));
    let logs = out.join("logs");
    std::fs::create_dir_all(&logs)?;
    let stop = interrupt_flag()?;
    let sys = System::detect();
    let mut builder = Builder::new(launch::stamp_dir(out.parent().unwrap_or(&out)), logs.clone(), false);
    let (server_cpus, _) = CpuSet::split(&CpuSet::allowed());
    let setup = ServerSetup {
        address: crate::launch::LOOPBACK,
        cpus: &server_cpus.first(),
        workers: 1,
        start_timeout: std::time::Duration::from_secs(30),
        timeout: std::time::Duration::from_secs(5),
    };
    for c in selected {
        let scenarios: Vec<&String> =
            c.scenarios.iter().filter(|s| args.scenario.is_empty() || args.scenario.contains(s)).collect();
        if scenarios.is_empty() {
            continue;
        }
        match launch::make_ready(c, &catalog, &mut builder, sys, true, &logs, ui, &stop)? {
            Prepared::Ready(_) => {}
            Prepared::Skipped(reason) | Prepared::Failed(reason, _) => {
                println!("## {}: not run: {}\n", c.name, reason.trim_end());
                continue;
            }
            Prepared::Interrupted => break,
        }
        for scenario in scenarios {
            let log = logs.join(format!("{}.{scenario}.log", c.name));
            print_response(c, scenario, launch::start_verified(c, scenario, &setup, log, ui, &stop));
        }
    }
    anyhow::ensure!(!stop.load(std::sync::atomic::Ordering::Relaxed), "interrupted");
    Ok(())
}

fn print_response(c: &Contestant, scenario: &str, started: Started) {
    let grace = launch::server::STOP_GRACE;
    let (server, verdict, bytes) = match started {
        Started::Verified(server, sample) => (Some(server), "ok".to_string(), Some(sample.bytes)),
        Started::Failed(server, reason, sample) => (server, format!("FAILED: {reason}"), sample),
    };
    let size = bytes.as_ref().map(|b| format!("{} bytes · ", b.len())).unwrap_or_default();
    println!("## {} · {scenario} · {size}{}", c.name, verdict.lines().next().unwrap_or_default());
    match bytes {
        Some(b) if scenario == Scenario::Echo.name() => println!("(the {} bytes sent came back{})\n", b.len(), if verdict == "ok" { "" } else { ", altered" }),
        Some(b) => {
            let text = String::from_utf8(b.clone()).unwrap_or_else(|_| b.escape_ascii().to_string());
            println!("```\n{}\n```\n", text.replace("\r\n", "\n").trim_end());
        }
        None => println!(),
    }
    if let Some(server) = server {
        let port = server.port;
        for w in server.stop(grace).warnings(port) {
            println!("warning: {}: {w}\n", c.name);
        }
    }
}

pub fn versions(args: ListArgs) -> anyhow::Result<()> {
    let catalog = catalog(&args.select)?;
    let selected = catalog.select(&args.select.selection())?;
    let mut languages: Vec<&str> = selected.iter().map(|c| c.language.as_str()).collect();
    languages.sort();
    languages.dedup();
    let tools = environment::tool_versions(&languages, &[("wrk", "wrk -v"), ("h2load", "h2load --version")]);
    let mut t = Table::new(&[("Tool", Align::Left), ("Version", Align::Left)]);
    for (name, version) in &tools {
        t.row(vec![name.clone(), version.clone()]);
    }
    println!("{}", t.markdown());
    let mut t = Table::new(&[("Name", Align::Left), ("Language", Align::Left), ("Version", Align::Left)]);
    for c in selected {
        let v = launch::version(c, 1).unwrap_or_else(|| match c.version {
            Some(_) => format!("unavailable (the version command failed; build it first: serverbench bench {})", c.name),
            None => "- (the manifest has no version command)".to_string(),
        });
        t.row(vec![c.name.clone(), c.language.clone(), v]);
    }
    print!("{}", t.markdown());
    print_catalog_errors(&catalog);
    Ok(())
}

pub fn report(args: ReportArgs, ui: &Ui) -> anyhow::Result<()> {
    let run = report::load(&args.run_dir)?;
    let written = report::write_all(&run, &args.run_dir)?;
    print!("{}", markdown::render(&run));
    for w in written {
        ui.line(&format!("wrote {}", w.display()));
    }
    Ok(())
}

/// `serverbench compare`: B/A of two runs, and its gate.
pub fn compare(args: CompareArgs) -> anyhow::Result<()> {
    crate::compare::run(&args.run_a, &args.run_b, args.options())
}

/// `serverbench agent`: the server host's side of a run, answering the harness on standard input and output.
pub fn agent(args: AgentArgs) -> anyhow::Result<()> {
    crate::remote::agent::serve(&args.catalog, &args.work, args.rebuild)
}
