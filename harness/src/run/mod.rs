//! The runner: prepares contestants (dependencies, builds), starts and verifies their servers, runs warm-up
//! and measured rounds interleaved across contestants while probing each server's process tree, stops the
//! servers, and keeps the result model current. It knows nothing of output formats: after every round it
//! hands the model to a `save` callback.
//!
//! A server keeps running across all rounds and connection counts of a scenario: warm-up exists to warm
//! the process that is then measured (JIT compilers, allocator pools, page faults), which a restart per
//! round would throw away. The servers of the other contestants wait idle meanwhile.

pub mod environment;
pub mod options;
pub mod rounds;
pub mod tools;

/// Old paths of what moved to `launch`, `model` and `ui`, still used by the command layer.
pub use crate::launch::{cpus, make_ready, probe, process, server, stamp_dir, start_verified, verify, version, Prepared, ServerSetup, Started, HOST};
pub use crate::model as result;
pub use crate::ui;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::SystemTime;

use crate::catalog::build::{BuildResult, Builder};
use crate::catalog::requires::System;
use crate::catalog::{Catalog, Contestant};
use crate::launch::server::Server;
use crate::model::*;
use crate::report::format::{mib, one, or_absent, pct, us};
use crate::ui::Ui;

use options::{BenchOptions, StopRule};
use rounds::RoundPlan;

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

/// Runs a whole benchmark. Returns the final model (also handed to `save`); `interrupted` is set when
/// `stop` was raised.
pub fn bench(
    opts: &BenchOptions,
    catalog: &Catalog,
    run_id: &str,
    run_dir: &Path,
    ui: &Ui,
    stop: &Arc<AtomicBool>,
    save: &mut Save,
) -> anyhow::Result<RunResult> {
    let selected = catalog.select(&opts.selection)?;
    anyhow::ensure!(!selected.is_empty(), "no contestant matches the filters; see `serverbench list`");
    let mut languages: Vec<&str> = selected.iter().map(|c| c.language.as_str()).collect();
    languages.sort();
    languages.dedup();
    let tool_version: Vec<(&str, &str)> = match opts.tool {
        options::Tool::Builtin => vec![],
        options::Tool::Wrk => vec![("wrk", "wrk -v")],
        options::Tool::H2load => vec![("h2load", "h2load --version")],
    };
    let mut run = RunResult {
        schema: SCHEMA,
        run_id: run_id.to_string(),
        started_utc: environment::utc_timestamp(SystemTime::now()),
        finished_utc: None,
        interrupted: false,
        environment: environment::capture(environment::tool_versions(&languages, &tool_version), opts.command_line.clone()),
        config: run_config(opts),
        contestants: selected.iter().map(|c| record(c)).collect(),
        measurements: Vec::new(),
        catalog_errors: catalog.errors.iter().map(ToString::to_string).collect(),
        checks: Vec::new(),
    };
    for e in &catalog.errors {
        ui.warn(&format!("invalid manifest: {e}"));
    }
    for note in &opts.notes {
        ui.warn(&format!("note: {note}"));
    }
    save(&run)?;

    let mut runner = Runner { opts, catalog, run_dir, ui, stop, run: &mut run, save };
    let ready = runner.prepare(&selected)?;
    if opts.check && !runner.stopped() {
        runner.check(&ready)?;
    }
    if !runner.stopped() {
        runner.measure(&ready)?;
    }
    let interrupted = runner.stopped();
    for m in run.measurements.iter_mut() {
        if matches!(m.status, MeasurementStatus::Pending | MeasurementStatus::Running) {
            m.status = MeasurementStatus::Interrupted;
        }
    }
    run.interrupted = interrupted;
    run.finished_utc = Some(environment::utc_timestamp(SystemTime::now()));
    run.environment.load_average_end = environment::load_average();
    save(&run)?;
    ui.finish();
    Ok(run)
}

fn run_config(o: &BenchOptions) -> RunConfig {
    RunConfig {
        scenarios: o.scenarios.clone(),
        mode: o.mode.name().into(),
        think_time_ms: (o.mode == options::ModeKind::Latency).then(|| o.think_time.as_secs_f64() * 1000.0),
        rate_per_s: o.rate_per_s,
        connections: o.connections.clone(),
        pipeline: o.pipeline,
        run_type: o.run_type.name().into(),
        server_cpus: o.server_cpus.to_string(),
        client_cpus: o.client_cpus.to_string(),
        workers: o.workers,
        client_threads: o.client_threads,
        warmup_rounds: o.warmup,
        measured_rounds: o.rounds,
        duration_s: match o.stop {
            StopRule::Duration(d) => Some(d.as_secs_f64()),
            StopRule::Requests(_) => None,
        },
        requests_per_connection: match o.stop {
            StopRule::Requests(n) => Some(n),
            StopRule::Duration(_) => None,
        },
        tool: o.tool.name().into(),
        client_io: if o.tool == options::Tool::Builtin { o.client_io_name.clone() } else { String::new() },
        timeout_s: o.timeout.as_secs_f64(),
    }
}

fn record(c: &Contestant) -> ContestantRecord {
    ContestantRecord {
        name: c.name.clone(),
        display: c.display.clone(),
        language: c.language.clone(),
        framework: c.framework.clone(),
        category: c.category.clone(),
        model: c.model.clone(),
        io: c.io.clone(),
        status: ContestantStatus::Pending,
        reason: None,
        version: None,
        build_log: None,
        build_cached: false,
        build_s: 0.0,
        server_logs: Vec::new(),
        warnings: Vec::new(),
    }
}

/// A server that passed verification and is being measured.
struct Live<'c> {
    contestant: &'c Contestant,
    server: Server,
    /// Indices into `run.measurements`, one per connection count.
    measurements: Vec<usize>,
    response_bytes: u64,
    /// Set when it failed; its remaining rounds are skipped.
    failed: bool,
}

struct Runner<'a, 's> {
    opts: &'a BenchOptions,
    catalog: &'a Catalog,
    run_dir: &'a Path,
    ui: &'a Ui,
    stop: &'a Arc<AtomicBool>,
    run: &'a mut RunResult,
    save: &'a mut Save<'s>,
}

impl<'a, 's> Runner<'a, 's> {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    fn record_mut(&mut self, name: &str) -> &mut ContestantRecord {
        self.run.contestants.iter_mut().find(|r| r.name == name).expect("every selected contestant has a record")
    }

    fn relative(&self, path: &Path) -> String {
        path.strip_prefix(self.run_dir).unwrap_or(path).display().to_string()
    }

    /// Dependencies and builds; returns the contestants that are ready to run.
    fn prepare<'c>(&mut self, selected: &[&'c Contestant]) -> anyhow::Result<Vec<&'c Contestant>> {
        let sys = System::detect();
        let logs = self.run_dir.join("logs");
        let mut builder = Builder::new(stamp_dir(&self.opts.out_dir), logs.clone(), self.opts.rebuild);
        let mut ready = Vec::new();
        self.ui.start(selected.len() as u64, "building");
        for c in selected {
            if self.stopped() {
                break;
            }
            self.ui.status(format!("preparing {}", c.name));
            let wanted = self.opts.scenarios.iter().any(|s| c.supports(s));
            let prepared = if wanted {
                make_ready(c, self.catalog, &mut builder, sys, self.opts.install, &logs, self.ui, self.stop)?
            } else {
                Prepared::Skipped(format!(
                    "declares none of the requested scenarios ({}); it answers {}",
                    self.opts.scenarios.join(", "),
                    c.scenarios.join(", ")
                ))
            };
            let version = match &prepared {
                Prepared::Ready(_) => version(c, self.opts.workers),
                _ => None,
            };
            let build_log = match &prepared {
                Prepared::Ready(o) | Prepared::Failed(_, o) => Some(self.relative(&o.log)),
                _ => None,
            };
            let r = self.record_mut(&c.name);
            r.build_log = build_log;
            match prepared {
                Prepared::Interrupted => break,
                Prepared::Skipped(reason) => {
                    r.status = ContestantStatus::Skipped;
                    r.reason = Some(reason);
                }
                Prepared::Failed(reason, _) => {
                    r.status = ContestantStatus::Failed;
                    r.reason = Some(reason);
                }
                Prepared::Ready(outcome) => {
                    r.status = ContestantStatus::Built;
                    r.build_cached = outcome.result == BuildResult::Cached;
                    r.build_s = outcome.seconds;
                    r.version = version;
                    ready.push(*c);
                }
            }
            (self.save)(self.run)?;
            self.ui.step();
        }
        Ok(ready)
    }

    /// `bench --check`: runs the conformance suite (all but the slow scale check) on each contestant
    /// before any measurement and records the outcome; a failed check is reported, not fatal.
    fn check(&mut self, ready: &[&Contestant]) -> anyhow::Result<()> {
        let o = self.opts;
        let server = ServerSetup { cpus: &o.server_cpus, workers: o.workers, start_timeout: o.start_timeout, timeout: o.timeout };
        let logs = self.run_dir.join("logs").join("checks");
        std::fs::create_dir_all(&logs).map_err(|e| anyhow::anyhow!("cannot create {}: {e}", logs.display()))?;
        let mut setup = crate::check::suite::SuiteSetup::new(server, logs);
        setup.scale = None;
        for c in ready {
            if self.stopped() {
                break;
            }
            self.ui.status(format!("checking {}", c.name));
            let ui = self.ui;
            let outcome = crate::check::suite::check_contestant(c, &setup, ui, self.stop, &mut |r| {
                if r.status == crate::check::Status::Fail {
                    ui.line(&format!("{} {} {}: FAIL: {}", r.contestant, r.scenario, r.check, r.reason.lines().next().unwrap_or_default()));
                }
            });
            let total = outcome.results.len();
            self.ui.line(&format!("{}: {} of {total} checks passed", c.name, total - outcome.failed()));
            self.run.checks.push(outcome);
            (self.save)(self.run)?;
        }
        Ok(())
    }

    fn measure(&mut self, ready: &[&Contestant]) -> anyhow::Result<()> {
        let o = self.opts;
        let rounds_each = u64::from(o.warmup + o.rounds) * o.connections.len() as u64;
        let total: u64 = o.scenarios.iter().map(|s| ready.iter().filter(|c| c.supports(s)).count() as u64).sum::<u64>() * rounds_each;
        self.ui.start(total, "measuring");
        for scenario in &o.scenarios {
            if self.stopped() {
                break;
            }
            let mut live = Vec::new();
            for c in ready.iter().filter(|c| c.supports(scenario)) {
                if self.stopped() {
                    self.ui.drop_steps(rounds_each);
                    continue;
                }
                match self.launch(c, scenario) {
                    Some(l) => live.push(l),
                    None => self.ui.drop_steps(rounds_each),
                }
                (self.save)(self.run)?;
            }
            if !live.is_empty() {
                self.ui.line(&format!("{scenario}: {} server(s) started and verified", live.len()));
            }
            let result = self.rounds(scenario, &mut live);
            for l in live {
                self.stop_server(l.contestant, l.server);
            }
            (self.save)(self.run)?;
            result?;
        }
        Ok(())
    }

    /// Starts, waits for and verifies one server, creating its measurements. None when it failed (the
    /// measurements say why).
    fn launch<'c>(&mut self, c: &'c Contestant, scenario: &str) -> Option<Live<'c>> {
        let o = self.opts;
        let first = self.run.measurements.len();
        for &connections in &o.connections {
            self.run.measurements.push(Measurement {
                contestant: c.name.clone(),
                scenario: scenario.to_string(),
                mode: o.mode.name().into(),
                connections,
                pipeline: o.pipeline,
                tool: o.tool.name().into(),
                status: MeasurementStatus::Pending,
                reason: None,
                response_bytes: None,
                server_log: None,
                rounds: Vec::new(),
            });
        }
        let measurements: Vec<usize> = (first..self.run.measurements.len()).collect();
        self.ui.status(format!("starting {} ({scenario})", c.name));
        let log = self.run_dir.join("logs").join(format!("{}.{scenario}.log", c.name));
        let rel = self.relative(&log);
        self.record_mut(&c.name).server_logs.push(rel.clone());
        for &i in &measurements {
            self.run.measurements[i].server_log = Some(rel.clone());
        }
        let setup = ServerSetup {
            cpus: &o.server_cpus,
            workers: o.workers,
            start_timeout: o.start_timeout,
            timeout: o.timeout,
        };
        match start_verified(c, scenario, &setup, log, self.ui, self.stop) {
            Started::Verified(server, sample) => {
                let bytes = sample.bytes.len() as u64;
                for &i in &measurements {
                    self.run.measurements[i].response_bytes = Some(bytes);
                }
                self.ui.detail(&format!("{} {scenario}: verified ({bytes} bytes)", c.name));
                Some(Live { contestant: c, server, measurements, response_bytes: bytes, failed: false })
            }
            Started::Failed(server, reason, _) => {
                self.ui.line(&format!("{} {scenario}: {}", c.name, reason.lines().next().unwrap_or_default()));
                self.fail(&measurements, reason);
                if let Some(server) = server {
                    self.stop_server(c, server);
                }
                None
            }
        }
    }

    fn fail(&mut self, measurements: &[usize], reason: String) {
        for &i in measurements {
            let m = &mut self.run.measurements[i];
            if matches!(m.status, MeasurementStatus::Pending | MeasurementStatus::Running) {
                m.status = MeasurementStatus::Failed;
                m.reason = Some(reason.clone());
            }
        }
    }

    /// Warm-up and measured rounds for every connection count, interleaved across the live servers; the
    /// starting server rotates each round so no one is always first.
    fn rounds(&mut self, scenario: &str, live: &mut [Live]) -> anyhow::Result<()> {
        let o = self.opts;
        let total = o.warmup + o.rounds;
        let workdir = self.run_dir.join("logs");
        for (ci, &connections) in o.connections.iter().enumerate() {
            for r in 0..total {
                let n = live.len();
                let (kind, index, of) = if r < o.warmup { ("warm-up", r + 1, o.warmup) } else { ("round", r - o.warmup + 1, o.rounds) };
                let running = live.iter().filter(|l| !l.failed).count();
                if running > 0 && !self.stopped() {
                    self.ui.line(&format!("{scenario} c={connections}: {kind} {index} of {of} across {running} server(s)"));
                }
                for k in 0..n {
                    if self.stopped() {
                        return Ok(());
                    }
                    let l = &mut live[(k + r as usize) % n];
                    if l.failed {
                        continue;
                    }
                    let mi = l.measurements[ci];
                    let warmup = r < o.warmup;
                    self.ui.status(format!("{} {scenario} c={connections} {kind} {index}", l.contestant.name));
                    self.run.measurements[mi].status = MeasurementStatus::Running;
                    let plan = RoundPlan {
                        opts: o,
                        contestant: &l.contestant.name,
                        scenario,
                        micro: l.contestant.is_micro(),
                        connections,
                        response_bytes: l.response_bytes,
                        workdir: &workdir,
                    };
                    let outcome = rounds::run_round(&mut l.server, &plan, index, warmup, self.stop);
                    self.ui.step();
                    let died = l.server.exited();
                    let failure = match (outcome, died) {
                        (_, Some(status)) => Some(l.server.explain(&format!(
                            "the server exited ({status}) during {kind} {index} with {connections} connections"
                        ))),
                        (Ok(round), None) if round.load.interrupted => {
                            // A round cut short by Ctrl-C is not a round; what finished before stays.
                            self.run.measurements[mi].status = MeasurementStatus::Interrupted;
                            None
                        }
                        (Err(_), None) if self.stopped() => {
                            // The engine gave up on the interrupt before it had anything to report.
                            self.run.measurements[mi].status = MeasurementStatus::Interrupted;
                            None
                        }
                        (Err(e), None) => Some(format!("the load could not run in {kind} {index}: {e:#}")),
                        (Ok(round), None) => {
                            self.ui.detail(&round_line(&l.contestant.name, scenario, connections, &round));
                            let m = &mut self.run.measurements[mi];
                            m.rounds.push(round);
                            if !warmup && index == o.rounds {
                                m.status = MeasurementStatus::Measured;
                                self.ui.line(&measurement_line(m));
                            }
                            None
                        }
                    };
                    if let Some(reason) = failure {
                        let first = reason.lines().next().unwrap_or_default().to_string();
                        self.ui.line(&format!("{} {scenario}: failed: {first}", l.contestant.name));
                        l.failed = true;
                        let left = (o.connections.len() - ci) as u64 * u64::from(total) - u64::from(r) - 1;
                        self.ui.drop_steps(left);
                        let ms = l.measurements.clone();
                        self.fail(&ms, reason);
                    }
                    (self.save)(self.run)?;
                }
            }
        }
        Ok(())
    }

    fn stop_server(&mut self, c: &Contestant, server: Server) {
        let port = server.port;
        let report = server.stop(self.opts.stop_grace);
        let warnings = report.warnings(port);
        for w in warnings {
            self.ui.warn(&format!("{}: {w}", c.name));
            let r = self.record_mut(&c.name);
            if !r.warnings.contains(&w) {
                r.warnings.push(w);
            }
        }
    }
}

fn round_line(name: &str, scenario: &str, connections: usize, r: &Round) -> String {
    format!(
        "  {name} {scenario} c={connections} {} {}: {:.0} req/s, {} errors, server CPU {}%, client CPU {}%{}",
        if r.warmup { "warm-up" } else { "round" },
        r.index,
        r.load.requests_per_s(),
        r.load.errors.total(),
        or_absent(r.server.utilisation_pct, pct),
        or_absent(r.client_busy_pct, pct),
        if r.flags.is_empty() { String::new() } else { format!(" [{}]", r.flags.join(", ")) }
    )
}

/// The line printed when a measurement has all its rounds.
pub fn measurement_line(m: &Measurement) -> String {
    let s = m.summary();
    let rps = s.requests_per_s.as_ref();
    let ci = rps.and_then(|r| r.ci95_relative_pct()).map(|p| format!(" ±{p:.1}%")).unwrap_or_default();
    let mut flags = Vec::new();
    if s.client_bound_rounds > 0 {
        flags.push(format!("{FLAG_CLIENT_BOUND} {}/{}", s.client_bound_rounds, s.rounds));
    }
    if s.errors.total() > 0 {
        flags.push(format!("{} errors", s.errors.total()));
    }
    format!(
        "{:<24} {:<13} c={:<5} {:>10} req/s{ci}  server CPU {}% {} us/req  RSS {} MiB  p99 {} us{}",
        m.contestant,
        m.scenario,
        m.connections,
        rps.map(|r| format!("{:.0}", r.mean)).unwrap_or_else(|| "-".into()),
        or_absent(s.server_utilisation_pct, pct),
        or_absent(s.server_cpu_us_per_request, one),
        or_absent(s.peak_rss_bytes.map(|b| b as f64), mib),
        or_absent(s.latency_ns.p99, us),
        if flags.is_empty() { String::new() } else { format!("  [{}]", flags.join(", ")) }
    )
}
