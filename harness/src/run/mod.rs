//! The runner: a benchmark from its folder to its final model, on a stand chosen once (`stand`: the real
//! machine, or a test's fakes, which start no process). It prepares contestants (`prepare`), with
//! `--check` runs the conformance suite on them (`conformance`), starts and verifies their servers through
//! `launch`, runs warm-up and measured rounds interleaved across contestants while probing each server's
//! process tree (`measure`, `rounds`), stops the servers, and keeps the result model current. It knows
//! nothing of output formats: after every pass of rounds (and when it stops) it hands the model to a `save`
//! callback. An A/B run (`--baseline REV`, `--ab DIR_A DIR_B`) measures two versions of one contestant in
//! pairs of rounds instead (`ab/`).
//!
//! A server keeps running across all rounds and connection counts of a scenario: warm-up exists to warm
//! the process that is then measured (JIT compilers, allocator pools, page faults), which a restart per
//! round would throw away. The servers of the other contestants are frozen (SIGSTOP) meanwhile, so that
//! nothing of theirs runs on the server's CPUs during another's round (`machine` says what else did).

pub mod ab;
#[cfg(test)]
mod bench_on_fakes;
mod budget;
mod client_syscalls;
mod conformance;
pub mod control;
#[cfg(test)]
mod fakes;
pub mod environment;
pub mod machine;
mod levels;
pub mod load_source;
mod measure;
pub mod options;
#[cfg(test)]
mod passes_on_fakes;
mod prepare;
mod probed;
mod profiling;
mod record;
pub mod round_plan;
pub mod rounds;
mod runner;
pub mod search;
pub mod served;
mod stand;
pub mod tools;
mod to_model;


pub use conformance::Suite;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::SystemTime;

use crate::catalog::{Catalog, Contestant};
use crate::model::{ContestantRecord, MeasurementStatus, RunResult, TimeSpent, ToolVersions, SCHEMA};
use crate::remote::{ClientHosts, ServerHost};
use crate::ui::event::{Bar, RunEvent};
use crate::ui::warning::Warning;
use crate::ui::Ui;

use options::BenchOptions;
use tools::hey;
use record::record;
use measure::Measuring;
use prepare::Preparing;
use runner::{Context, Hosts, Record};
use stand::{Real, Stand};

/// Receives the model after every change worth keeping (the exporters write it to disk).
pub type Save<'a> = dyn FnMut(&RunResult) -> anyhow::Result<()> + 'a;

/// A new, unique folder for a run under `out`: `<out>/<run-id>`, checked to be writable. It is made before
/// anything is built or started, so a folder that cannot be written stops the run before any server runs.
pub fn create_run_dir(out: &Path) -> anyhow::Result<(String, PathBuf)> {
    let base = environment::run_id(SystemTime::now());
    let unwritable = |e: std::io::Error| {
        anyhow::anyhow!(
            "cannot write the results folder {}: {e}; choose a writable folder with -o DIR (nothing was started)",
            out.display()
        )
    };
    for n in 1.. {
        let id = if n == 1 { base.clone() } else { format!("{base}-{n}") };
        let dir = out.join(&id);
        if !dir.exists() {
            std::fs::create_dir_all(dir.join("logs")).map_err(unwritable)?;
            let probe = dir.join(".write-test");
            std::fs::write(&probe, b"").and_then(|()| std::fs::remove_file(&probe)).map_err(unwritable)?;
            return Ok((id, dir));
        }
    }
    unreachable!()
}

/// The pending records of the selected contestants, then of the control, marked as the control where it
/// joins the run: a contestant of the catalog never is, whatever its name.
fn records(selected: &[&Contestant], the_control: Option<&Contestant>) -> Vec<ContestantRecord> {
    selected.iter().map(|c| record(c)).chain(the_control.map(control::record)).collect()
}

/// Runs a whole benchmark. Returns the final model (also handed to `save`); `interrupted` is set when
/// `stop` was raised. `suite` is the conformance suite that `--check` runs before measuring.
#[allow(clippy::too_many_arguments)]
pub fn bench(
    opts: &BenchOptions,
    catalog: &Catalog,
    run_id: &str,
    run_dir: &Path,
    ui: &Ui,
    stop: &Arc<AtomicBool>,
    suite: Option<&dyn Suite>,
    save: &mut Save,
) -> anyhow::Result<RunResult> {
    bench_on(&Real, Where { run_id, run_dir, ui, stop }, opts, catalog, suite, save)
}

/// Where a run goes: its name and folder, the person watching, the flag that stops it.
#[derive(Clone, Copy)]
struct Where<'w> {
    run_id: &'w str,
    run_dir: &'w Path,
    ui: &'w Ui,
    stop: &'w Arc<AtomicBool>,
}

/// A whole benchmark on `stand`: the runner's own (`Real`), or a test's fakes. An A/B run, whose versions are
/// checked out and built in worktrees, is the real stand's alone.
fn bench_on<T: Stand>(stand: &T, at: Where, opts: &BenchOptions, catalog: &Catalog, suite: Option<&dyn Suite>, save: &mut Save) -> anyhow::Result<RunResult> {
    let Where { run_id, run_dir, ui, stop } = at;
    anyhow::ensure!(!opts.check || suite.is_some(), "--check needs the conformance suite, and none was given");
    let began = std::time::Instant::now();
    // Each save is timed: writing every file after every pass is part of where a run's time goes.
    let saves_s = std::cell::Cell::new(0.0);
    let mut save = |r: &RunResult| -> anyhow::Result<()> {
        let t = std::time::Instant::now();
        let out = save(r);
        saves_s.set(saves_s.get() + t.elapsed().as_secs_f64());
        out
    };
    // An A/B run's two versions (a baseline checked out under the results folder until the run ends).
    let sides = match opts.ab {
        Some(_) => Some(ab::sides::Sides::resolve(opts, catalog, &opts.out_dir.join(".ab-worktrees").join(run_id))?),
        None => None,
    };
    let mut selected = match &sides {
        Some(s) => vec![&s.a.contestant, &s.b.contestant],
        None => catalog.select(&opts.selection)?,
    };
    anyhow::ensure!(!selected.is_empty(), "no contestant matches the filters; see `serverbench list`");
    let control = the_control(opts, catalog, ui)?;
    let contestants = records(&selected, control.as_ref());
    selected.extend(control.as_ref());
    let tools = tool_versions(opts, run_dir, ui, stop, &selected)?;
    // An A/B run reads two manifests only, which either parse or end it.
    let catalog_errors = if sides.is_some() { Vec::new() } else { catalog.errors.iter().map(ToString::to_string).collect() };
    let mut run = new_run(opts, run_id, contestants, catalog_errors, tools);
    if let Some(seed) = stand.fixed_seed() {
        run.config.shuffle_seed = Some(seed);
    }
    let (server_host, hosts) = prepare_hosts(opts, ui, &mut run)?;
    announce(ui, &run, sides.as_ref(), &opts.notes);
    save(&run)?;

    let ctx = Context { opts, run_dir, ui, stop, hosts: Hosts { clients: hosts.as_ref(), server: server_host.as_ref() } };
    let mut record = Record::new(&mut run, &mut save);
    // An A/B run that failed still ends its record (and removes its baseline's worktree) before it says why.
    let outcome = match &sides {
        Some(sides) => ab::measure::ab(&ctx, &mut record, sides, suite),
        None => catalog_run(stand, &ctx, &mut record, catalog, &selected, suite),
    };
    let interrupted = ctx.stopped();
    finish(&mut run, interrupted, began.elapsed().as_secs_f64(), saves_s.get());
    save(&run)?;
    ui.emit(Bar::Ended);
    outcome?;
    Ok(run)
}

/// The control, where the run has one; a run that asked for it but cannot have it says why and goes on.
fn the_control(opts: &BenchOptions, catalog: &Catalog, ui: &Ui) -> anyhow::Result<Option<Contestant>> {
    Ok(match control::wanted(opts) {
        Ok(()) => Some(control::load(&opts.repo_root, catalog)?),
        Err(control::NoControl::NotAsked) => None,
        Err(why) => {
            ui.emit(Warning::NoControl(&why));
            None
        }
    })
}

/// What a person should know before the first build: broken manifests, an A/B run's two versions, the
/// options' notes.
fn announce(ui: &Ui, run: &RunResult, sides: Option<&ab::sides::Sides>, notes: &[String]) {
    for e in run.catalog_errors.iter() {
        ui.emit(Warning::InvalidManifest(e));
    }
    if let Some(s) = sides {
        ui.emit(RunEvent::AbVersions { a: &s.a.record.name, a_from: &s.a.record.from, b: &s.b.record.name, b_from: &s.b.record.from });
    }
    for note in notes {
        ui.emit(Warning::Note(note));
    }
}

/// A catalog run's phases on `stand`: the contestants prepared, checked with `--check`, then measured
/// within the time budget, which counts from there.
fn catalog_run<'a, T: Stand>(
    stand: &T,
    ctx: &Context<'a>,
    record: &mut Record<'a, '_>,
    catalog: &Catalog,
    selected: &[&Contestant],
    suite: Option<&dyn Suite>,
) -> anyhow::Result<()> {
    let ready = Preparing { ctx, record: &mut *record, catalog, stand }.prepare(selected)?;
    if let Some(suite) = suite.filter(|_| ctx.opts.check && !ctx.stopped()) {
        conformance::check(ctx, record, suite, &ready)?;
    }
    if !ctx.stopped() {
        Measuring::new(ctx, record, stand.prober(ctx)).measure(stand, &ready)?;
    }
    Ok(())
}

/// The versions of the toolchains and of the load tool the run uses, the tool installed or built first
/// where it is missing. A contestant with a version command names the toolchain its build used (a JDK that
/// contestants/java/find-jdk.sh chose, not the first `java` on PATH); PATH's is recorded only for the
/// languages of those without one.
fn tool_versions(opts: &BenchOptions, run_dir: &Path, ui: &Ui, stop: &Arc<AtomicBool>, selected: &[&Contestant]) -> anyhow::Result<ToolVersions> {
    let mut languages: Vec<&str> = selected.iter().filter(|c| c.version.is_none()).map(|c| c.language.as_str()).collect();
    languages.sort();
    languages.dedup();
    tools::install_if_missing(opts.tool, opts.install, &run_dir.join("logs"), ui)?;
    let tool_version: Vec<(&str, &str)> = match opts.tool {
        options::Tool::Builtin | options::Tool::Hey => vec![],
        options::Tool::Wrk => vec![("wrk", "wrk -v")],
        options::Tool::H2load => vec![("h2load", "h2load --version")],
        options::Tool::Ab => vec![("ab", "ab -V")],
    };
    // hey has no version flag: the version is the one tools/hey pins, built before the run starts.
    let hey_version = if opts.tool == options::Tool::Hey {
        let version = hey::pinned_version(&opts.repo_root)?;
        if !hey::is_built(&opts.repo_root) {
            ui.emit(RunEvent::BuildingHey { version: &version, module_dir: hey::MODULE_DIR, binary: &hey::binary(&opts.repo_root) });
        }
        hey::ensure_built(&opts.repo_root, stop)?;
        Some(version)
    } else {
        None
    };
    Ok(environment::tool_versions(&languages, &tool_version).into_iter().chain(hey_version.map(|v| ("hey".to_string(), v))).collect())
}

/// The run's model before its first round: every record pending, the machine's facts and the options.
fn new_run(opts: &BenchOptions, run_id: &str, contestants: Vec<ContestantRecord>, catalog_errors: Vec<String>, tools: ToolVersions) -> RunResult {
    RunResult {
        schema: SCHEMA,
        run_id: run_id.to_string(),
        started_utc: environment::utc_timestamp(SystemTime::now()),
        finished_utc: None,
        interrupted: false,
        environment: environment::capture(tools, opts.command_line.clone(), &opts.catalog_root),
        config: opts.record(),
        contestants,
        measurements: Vec::new(),
        catalog_errors,
        checks: Vec::new(),
        ab: None,
        time_spent: None,
        machine_model: Vec::new(),
    }
}

/// The server host and the client hosts, prepared before anything is built: a host that cannot be used
/// stops the run at once, naming it. Their facts go into the run's environment.
fn prepare_hosts(opts: &BenchOptions, ui: &Ui, run: &mut RunResult) -> anyhow::Result<(Option<ServerHost>, Option<ClientHosts>)> {
    let remote = &opts.remote;
    let server_host = match (&remote.server_host, &remote.server_catalog) {
        (Some(spec), Some(catalog)) => {
            let host = ServerHost::prepare(spec, &remote.ssh_options, remote.server_address, remote.clock_tolerance, catalog, opts.rebuild, &|m| ui.emit(RunEvent::Host(m)))?;
            run.environment.server_host = Some(host.record());
            Some(host)
        }
        _ => None,
    };
    let hosts = if remote.client_hosts.is_empty() {
        None
    } else {
        let hosts = ClientHosts::prepare(&remote.client_hosts, &remote.ssh_options, remote.server_address, remote.clock_tolerance, &|m| ui.emit(RunEvent::Host(m)))?;
        run.environment.client_hosts = hosts.records();
        Some(hosts)
    };
    Ok((server_host, hosts))
}

/// The run's end: what had not finished is marked interrupted, the time it ended and where its time went.
fn finish(run: &mut RunResult, interrupted: bool, took_s: f64, saves_s: f64) {
    for m in run.measurements.iter_mut() {
        if matches!(m.status, MeasurementStatus::Pending | MeasurementStatus::Running) {
            m.status = MeasurementStatus::Interrupted;
        }
    }
    run.interrupted = interrupted;
    run.finished_utc = Some(environment::utc_timestamp(SystemTime::now()));
    environment::finish(&mut run.environment);
    run.time_spent = Some(TimeSpent::of(&run.measurements, took_s, saves_s));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_control_is_marked_where_it_joins_the_run_and_a_namesake_of_the_catalog_is_not() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let found = Catalog::discover(&repo.join(control::CONTROL_DIR)).unwrap();
        let the_control = found.contestants.into_iter().find(|c| c.name == control::CONTROL_NAME).unwrap();
        // A catalog's contestant that bears the control's name, and a control by another name.
        let namesake = the_control.clone();
        let renamed = Contestant { name: "reference".into(), ..the_control };
        let with_control = records(&[&namesake], Some(&renamed));
        let marked: Vec<(&str, bool)> = with_control.iter().map(|r| (r.name.as_str(), r.control)).collect();
        assert_eq!(marked, [(control::CONTROL_NAME, false), ("reference", true)]);
        assert_eq!(records(&[&namesake], None).iter().filter(|r| r.control).count(), 0);
    }
}
