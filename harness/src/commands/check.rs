//! `serverbench check`: builds the chosen contestants, runs every check against fresh servers, prints a
//! line per check, a summary and the memory table, writes `check.json`, and fails when any check fails.
//! Also the hidden client-process mode of the scale check (`--hold`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::repo_root;
use crate::check::scale::{self, ScaleOptions};
use crate::check::suite::{check_contestant, ContestantChecks, SuiteSetup};
use crate::check::{CheckResult, Scenario, Status, CHECKS};
use crate::catalog::build::Builder;
use crate::catalog::requires::{self, System};
use crate::catalog::{Catalog, Contestant};
use crate::cli::CheckArgs;
use crate::report::table::{Align, Table};
use crate::os::cpus::CpuSet;
use crate::launch::{self, Prepared, ServerSetup};
use crate::run::{self as bench_run, create_run_dir};
use crate::ui::Ui;

/// The file of a check folder holding every result.
pub const FILE_NAME: &str = "check.json";

/// Connections the scale check of `--quick` holds: above the 1,024 open files a process gets by default
/// (a server stuck at that limit, or built around select(), still fails), yet opened in about a second.
pub const QUICK_SCALE_CONNECTIONS: usize = 2_000;

/// The contestants that keep the full scale check under `--quick`: one of each way to hold connections
/// that the others build on (per-core event loops in C, a thread per connection, goroutines, tokio's
/// work-stealing tasks); each takes 10 to 20 s at 20,000 on two cores.
pub const FULL_SCALE_DEFAULT: &[&str] = &["c-epoll", "c-threads", "go-net", "rust-tokio"];

pub fn run(args: CheckArgs, ui: &Ui) -> anyhow::Result<()> {
    if let Some(addr) = args.hold {
        let scenario = Scenario::parse(&args.hold_scenario)
            .ok_or_else(|| anyhow::anyhow!("--hold-scenario {:?} is not a scenario", args.hold_scenario))?;
        let timeout = Duration::from_millis(args.hold_timeout_ms);
        return scale::hold_main(addr, scenario, args.hold_micro, args.hold_count, timeout, args.hold_seed);
    }
    for name in &args.only {
        let known = CHECKS.iter().any(|c| c.name == name) || ["scale", "start", "stop"].contains(&name.as_str());
        if !known {
            let mut names: Vec<&str> = CHECKS.iter().map(|c| c.name).collect();
            names.extend(["scale", "stop"]);
            anyhow::bail!("--only {name}: no such check; checks: {}", names.join(", "));
        }
    }
    let root = repo_root();
    let catalog = Catalog::discover(&args.select.contestants.clone().unwrap_or_else(|| root.join("contestants")))?;
    for e in &catalog.errors {
        ui.warn(&format!("invalid manifest: {e}"));
    }
    let selected = catalog.select(&args.select.selection())?;
    anyhow::ensure!(!selected.is_empty(), "no contestant matches; see `serverbench list`");
    // Names given by hand must exist (a typo would silently shorten that contestant's check); the
    // defaults are checked against the catalog by the tests instead, so that another catalog can use --quick.
    let full_scale: Vec<String> = match &args.full_scale {
        Some(names) => {
            for name in names {
                anyhow::ensure!(
                    catalog.contestants.iter().any(|c| &c.name == name),
                    "--full-scale {name}: no such contestant; see `serverbench list`"
                );
            }
            names.clone()
        }
        None => FULL_SCALE_DEFAULT.iter().map(|s| s.to_string()).collect(),
    };
    let server_cpus = match &args.server_cpus {
        Some(list) => CpuSet::parse(list)?,
        None => CpuSet::split(&CpuSet::allowed()).0,
    };
    let workers = args.workers.unwrap_or(server_cpus.len()).max(1);
    let out = args.out.clone().unwrap_or_else(|| root.join("results"));
    let (id, dir) = create_run_dir(&out.join("checks"))?;
    let logs = dir.join("logs");
    ui.line(&format!("check {id}: writing {}", dir.display()));
    let stop = crate::commands::interrupt_flag()?;
    let sys_info = System::detect();
    install_clients(sys_info, !args.no_install, &logs, ui);
    // The bad-input check opens thousands of sockets; the scale check spreads the rest over processes.
    crate::os::limits::raise_open_files_to_hard();

    let server = ServerSetup { address: crate::launch::LOOPBACK, cpus: &server_cpus, workers, start_timeout: args.start_timeout, timeout: Duration::from_secs(5) };
    let mut setup = SuiteSetup {
        scale: (!args.no_scale).then(|| ScaleOptions { connections: args.scale_connections, ..ScaleOptions::default() }),
        only: args.only.clone(),
        ..SuiteSetup::new(server, logs.clone())
    };
    if args.quick && !args.no_scale {
        let quick = QUICK_SCALE_CONNECTIONS.min(args.scale_connections);
        ui.line(&format!(
            "quick: the scale check holds {quick} connections ({} for {})",
            args.scale_connections,
            full_scale.join(", ")
        ));
    }
    let mut builder = Builder::new(launch::stamp_dir(&out), logs.clone(), false);
    let mut all: Vec<ContestantChecks> = Vec::new();
    println!("{:<24} {:<13} {:<20} {:<6} reason", "contestant", "scenario", "check", "result");
    for c in &selected {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        if let Some(scale) = setup.scale.as_mut() {
            let full = !args.quick || full_scale.contains(&c.name);
            scale.connections = if full { args.scale_connections } else { QUICK_SCALE_CONNECTIONS.min(args.scale_connections) };
        }
        let mut print = |r: &CheckResult| println!("{}", line(r));
        let checks = match launch::make_ready(c, &catalog, &mut builder, sys_info, !args.no_install, &logs, ui, &stop)? {
            Prepared::Ready(_) => check_contestant(c, &setup, ui, &stop, &mut print),
            Prepared::Interrupted => break,
            Prepared::Skipped(reason) => single(&c.name, Status::Skip, reason, &mut print),
            Prepared::Failed(reason, _) => single(&c.name, Status::Fail, format!("does not build: {reason}"), &mut print),
        };
        all.push(checks);
        std::fs::write(dir.join(FILE_NAME), serde_json::to_vec_pretty(&all)?)?;
    }
    ui.finish();
    println!("\n{}", summary(&all));
    ui.warn(&format!("results: {}", dir.join(FILE_NAME).display()));
    anyhow::ensure!(!stop.load(Ordering::Relaxed), "interrupted; the finished checks are in {}", dir.display());
    let failed: usize = all.iter().map(|c| c.failed()).sum();
    let total: usize = all.iter().map(|c| c.results.len()).sum();
    anyhow::ensure!(failed == 0, "{failed} of {total} checks failed (reasons above; server logs in {})", logs.display());
    Ok(())
}

/// The outcome of a contestant that was not checked (not built, or not runnable here).
fn single(name: &str, status: Status, reason: String, print: &mut dyn FnMut(&CheckResult)) -> ContestantChecks {
    let r = CheckResult { contestant: name.into(), scenario: String::new(), check: "build".into(), status, reason, seconds: 0.0 };
    print(&r);
    ContestantChecks { contestant: name.into(), results: vec![r], ..Default::default() }
}

/// One printed line per check.
pub fn line(r: &CheckResult) -> String {
    let reason = r.reason.lines().collect::<Vec<_>>().join(" / ");
    format!("{:<24} {:<13} {:<20} {:<6} {reason}", r.contestant, r.scenario, r.check, r.status.to_string())
}

/// Counts per contestant, every failure again, and the scale table.
pub fn summary(all: &[ContestantChecks]) -> String {
    let mut t = Table::new(&[
        ("Contestant", Align::Left),
        ("Passed", Align::Right),
        ("Failed", Align::Right),
        ("Skipped", Align::Right),
        ("Failed checks", Align::Left),
    ]);
    for c in all {
        let count = |s: Status| c.results.iter().filter(|r| r.status == s).count().to_string();
        let failed: Vec<String> = c
            .results
            .iter()
            .filter(|r| r.status == Status::Fail)
            .map(|r| if r.scenario.is_empty() { r.check.clone() } else { format!("{} {}", r.scenario, r.check) })
            .collect();
        t.row(vec![c.contestant.clone(), count(Status::Pass), count(Status::Fail), count(Status::Skip), failed.join(", ")]);
    }
    let mut out = format!("## Checks\n\n{}", t.markdown());
    let mib = |b: Option<u64>| b.map(|b| format!("{:.1}", b as f64 / (1024.0 * 1024.0))).unwrap_or_else(|| "-".into());
    // Memory at the fixed steps, then at the most connections held (the top, which a limit may cap).
    let steps = ScaleOptions::default().steps;
    if all.iter().any(|c| !c.rss.is_empty()) {
        let headers: Vec<String> = steps.iter().map(|n| format!("RSS MiB at {n}")).collect();
        let mut columns: Vec<(&str, Align)> = vec![("Contestant", Align::Left), ("Scenario", Align::Left)];
        columns.extend(headers.iter().map(|h| (h.as_str(), Align::Right)));
        columns.extend([("RSS MiB at the top", Align::Right), ("Top: held at once", Align::Right), ("Scale check", Align::Left)]);
        let mut t = Table::new(&columns);
        for c in all.iter().filter(|c| !c.rss.is_empty() || c.scale_scenario.is_some()) {
            let at = |n: usize| c.rss.iter().find(|p| p.connections == n).and_then(|p| p.rss_bytes);
            let top = c.rss.iter().find(|p| !steps.contains(&p.connections)).and_then(|p| p.rss_bytes);
            let mut row = vec![c.contestant.clone(), c.scale_scenario.clone().unwrap_or_default()];
            row.extend(steps.iter().map(|n| mib(at(*n))));
            row.push(mib(top));
            row.push(format!("{} of {}", c.scale_held, c.scale_asked));
            let scale = c.results.iter().find(|r| r.check == "scale").map(|r| r.status.to_string()).unwrap_or_default();
            row.push(scale);
            t.row(row);
        }
        out.push_str(&format!("\n## Server memory (whole process tree) by open connections\n\n{}", t.markdown()));
    }
    out
}

/// curl, wrk and h2load, installed from Debian's packages when missing and allowed.
fn install_clients(sys_info: System, install: bool, logs: &Path, ui: &Ui) {
    let missing: Vec<String> = crate::check::tools::TOOLS
        .iter()
        .filter(|(tool, _)| requires::find_command(tool).is_none())
        .map(|(_, pkg)| pkg.to_string())
        .collect();
    if missing.is_empty() {
        return;
    }
    if !install || !sys_info.can_install() {
        ui.warn(&format!("client checks will be skipped where a tool is missing (fix: `apt-get install -y {}`)", missing.join(" ")));
        return;
    }
    ui.line(&format!("installing {} with apt-get (running as root)", missing.join(" ")));
    if let Err(e) = std::fs::create_dir_all(logs).map_err(anyhow::Error::from).and_then(|_| requires::install(&missing, &logs.join("clients.apt.log"))) {
        ui.warn(&format!("installing {} failed: {e:#}", missing.join(" ")));
    }
}

/// The suite as `bench --check` runs it: every check but the slow scale check, with `bench`'s servers.
pub struct BenchSuite;

impl bench_run::Suite for BenchSuite {
    fn check(
        &self,
        c: &Contestant,
        server: ServerSetup,
        logs: PathBuf,
        ui: &Ui,
        stop: &AtomicBool,
        report: &mut dyn FnMut(&CheckResult),
    ) -> ContestantChecks {
        let mut setup = SuiteSetup::new(server, logs);
        setup.scale = None;
        check_contestant(c, &setup, ui, stop, report)
    }
}
