//! The checks of one contestant, each against a freshly started server: per declared scenario, one server
//! for the wire, timeout and client checks and another for the bad input; a failed check gets the next one
//! a new server, so that one fault is never counted twice; the scale check has a server of its own.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::scale::{self, ScaleOptions, ServerProcess};
use super::case::{Options, Target, Verdict, CHECK_TIMEOUT_MS};
use crate::wire::Scenario;
use super::{checks_for, CheckResult, Group, Status};
use crate::catalog::Contestant;
use crate::os::proc;
use crate::launch::server::{Server, STOP_GRACE};
use crate::launch::{start_verified, ServerSetup, Started};
use crate::ui::Ui;

pub use super::ContestantChecks;

/// Everything `check` needs besides the contestant.
pub struct SuiteSetup<'a> {
    pub server: ServerSetup<'a>,
    /// Where server logs go.
    pub logs: PathBuf,
    pub options: Options,
    /// None: no scale check.
    pub scale: Option<ScaleOptions>,
    /// Only these checks (names as in `CHECKS`, or `scale`, `start`, `stop`); empty: all.
    pub only: Vec<String>,
    pub stop_grace: Duration,
}

impl<'a> SuiteSetup<'a> {
    /// Every check with the defaults of `serverbench check`, servers started as `server` says.
    pub fn new(server: ServerSetup<'a>, logs: PathBuf) -> SuiteSetup<'a> {
        let server_cpus = server.cpus.len();
        SuiteSetup {
            server,
            logs,
            options: Options { server_cpus, ..Options::default() },
            scale: Some(ScaleOptions::default()),
            only: Vec::new(),
            stop_grace: STOP_GRACE,
        }
    }
}

/// The scenario the scale check uses: the first declared of these (no `hello-timeout`: its timer would
/// close the held connections).
const SCALE_SCENARIOS: [Scenario; 4] = [Scenario::Hello, Scenario::Plaintext, Scenario::Json, Scenario::Echo];

/// The server's process tree, read from /proc.
pub struct Tree {
    pub pid: i32,
}

impl Tree {
    fn pids(&self) -> Vec<i32> {
        proc::tree(self.pid, self.pid, &proc::all_processes()).iter().filter(|p| !p.is_zombie()).map(|p| p.pid).collect()
    }
}

impl ServerProcess for Tree {
    fn rss_bytes(&self) -> Option<u64> {
        let all = proc::tree(self.pid, self.pid, &proc::all_processes());
        (!all.is_empty()).then(|| all.iter().map(|p| p.rss_pages).sum::<u64>() * proc::page_bytes())
    }

    /// The process of the tree with the least room for more descriptors.
    fn open_files(&self) -> Option<(u64, u64)> {
        self.pids()
            .into_iter()
            .filter_map(proc::open_files)
            .min_by_key(|(open, hard)| hard.saturating_sub(*open))
    }
}

/// A contestant with `SB_TIMEOUT_MS` set for the checks.
fn with_check_timeout(c: &Contestant) -> Contestant {
    let mut c = c.clone();
    c.env.insert("SB_TIMEOUT_MS".into(), CHECK_TIMEOUT_MS.to_string());
    c
}

fn wanted(setup: &SuiteSetup, name: &str) -> bool {
    setup.only.is_empty() || setup.only.iter().any(|o| o == name)
}

struct Suite<'a, 'b> {
    c: &'a Contestant,
    setup: &'a SuiteSetup<'a>,
    ui: &'a Ui,
    stop: &'a AtomicBool,
    out: ContestantChecks,
    report: &'b mut dyn FnMut(&CheckResult),
    starts: usize,
}

impl Suite<'_, '_> {
    fn record(&mut self, scenario: &str, check: &str, v: Verdict, seconds: f64) {
        let r = CheckResult {
            contestant: self.c.name.clone(),
            scenario: scenario.to_string(),
            check: check.to_string(),
            status: v.status,
            reason: v.reason,
            seconds,
        };
        (self.report)(&r);
        self.out.results.push(r);
    }

    /// Starts a fresh server for `scenario`; a failure to start is recorded as the `start` check.
    fn start(&mut self, scenario: Scenario) -> Option<Server> {
        self.starts += 1;
        let log = self.setup.logs.join(format!("{}.{}.check-{}.log", self.c.name, scenario, self.starts));
        let begun = Instant::now();
        match start_verified(self.c, scenario.name(), &self.setup.server, log, self.ui, self.stop) {
            Started::Verified(server, _) => Some(server),
            // A wrong answer is for the checks to describe; only a server that does not accept is a start failure.
            Started::Failed(Some(server), _, _) if accepts(&server) => Some(server),
            Started::Failed(server, reason, _) => {
                if let Some(server) = server {
                    self.stop_server(scenario, server, false);
                }
                self.record(scenario.name(), "start", Verdict::fail(reason), begun.elapsed().as_secs_f64());
                None
            }
        }
    }

    /// Stops a server; with `judge`, how it stopped is recorded as the `stop` check.
    fn stop_server(&mut self, scenario: Scenario, server: Server, judge: bool) {
        let begun = Instant::now();
        let port = server.port;
        let warnings = server.stop(self.setup.stop_grace).warnings(port);
        if judge && wanted(self.setup, "stop") {
            let v = if warnings.is_empty() {
                Verdict::pass("exited on SIGTERM; no process left behind; its port is free")
            } else {
                Verdict::fail(warnings.join("; "))
            };
            self.record(scenario.name(), "stop", v, begun.elapsed().as_secs_f64());
        }
    }

    fn scenario(&mut self, scenario: Scenario) {
        let target_of = |server: &Server| Target { addr: server.addr(), scenario, micro: self.c.is_micro(), pid: Some(server.pid()) };
        let mut server: Option<Server> = None;
        let mut previous: Option<(Group, bool)> = None;
        let checks: Vec<_> = checks_for(&Target { addr: ([127, 0, 0, 1], 0).into(), scenario, micro: self.c.is_micro(), pid: None })
            .into_iter()
            .filter(|c| wanted(self.setup, c.name))
            .collect();
        for check in checks {
            if self.stop.load(Ordering::Relaxed) {
                break;
            }
            if let Some(why) = self.c.not_held_to(check.name) {
                // Not run at all: neither a server started for it nor one it could leave in a bad state.
                self.record(scenario.name(), check.name, Verdict::skip(why), 0.0);
                continue;
            }
            let fresh = match previous {
                None => true,
                Some((_, failed)) if failed => true,
                Some((group, _)) => group != check.group && check.group == Group::BadInput,
            };
            if fresh || server.as_mut().is_some_and(|s| s.exited().is_some()) {
                if let Some(s) = server.take() {
                    self.stop_server(scenario, s, false);
                }
                server = self.start(scenario);
            }
            let Some(s) = server.as_mut() else {
                self.record(scenario.name(), check.name, Verdict::skip("not run: the server did not start"), 0.0);
                previous = Some((check.group, false));
                continue;
            };
            self.ui.status(format!("{} {scenario}: {}", self.c.name, check.name));
            let t = target_of(s);
            let (mut verdict, seconds) = super::run_one(check, &t, &self.setup.options);
            if let Some(status) = s.exited() {
                let what = if verdict.passed() { String::new() } else { format!("{}; ", verdict.reason) };
                verdict = Verdict::fail(s.explain(&format!("{what}the server exited ({status}) during this check")));
            }
            let failed = verdict.status == Status::Fail;
            self.record(scenario.name(), check.name, verdict, seconds);
            previous = Some((check.group, failed));
        }
        if let Some(mut s) = server.take() {
            let running = s.exited().is_none();
            self.stop_server(scenario, s, running);
        }
    }

    fn scale(&mut self, opts: &ScaleOptions) {
        let Some(scenario) = SCALE_SCENARIOS.into_iter().find(|s| self.c.supports(s.name())) else { return };
        if self.stop.load(Ordering::Relaxed) {
            return;
        }
        if let Some(why) = self.c.not_held_to("scale") {
            self.out.scale_scenario = Some(scenario.name().to_string());
            self.record(scenario.name(), "scale", Verdict::skip(why), 0.0);
            return;
        }
        let Some(server) = self.start(scenario) else { return };
        self.ui.status(format!("{} {scenario}: scale ({} connections)", self.c.name, opts.connections));
        let t = Target { addr: server.addr(), scenario, micro: self.c.is_micro(), pid: Some(server.pid()) };
        let begun = Instant::now();
        let tree = Tree { pid: server.pid() };
        let report = scale::run(&t, &self.setup.options, opts, Some(&tree));
        let mut verdict = report.verdict;
        let mut server = server;
        if let Some(status) = server.exited() {
            verdict = Verdict::fail(format!("the server exited ({status}): {}", verdict.reason));
        }
        self.out.scale_scenario = Some(scenario.name().to_string());
        self.out.scale_asked = report.asked;
        self.out.scale_held = report.held;
        self.out.rss = report.rss;
        self.record(scenario.name(), "scale", verdict, begun.elapsed().as_secs_f64());
        self.stop_server(scenario, server, false);
    }
}

fn accepts(server: &Server) -> bool {
    std::net::TcpStream::connect_timeout(&server.addr(), Duration::from_secs(2)).is_ok()
}

/// Runs every check of one contestant, calling `report` as each result comes in. The contestant must
/// already be built (`launch::make_ready`).
pub fn check_contestant(
    c: &Contestant,
    setup: &SuiteSetup,
    ui: &Ui,
    stop: &AtomicBool,
    report: &mut dyn FnMut(&CheckResult),
) -> ContestantChecks {
    let c = with_check_timeout(c);
    let mut suite = Suite { c: &c, setup, ui, stop, out: ContestantChecks { contestant: c.name.clone(), ..Default::default() }, report, starts: 0 };
    for scenario in Scenario::ALL {
        if c.supports(scenario.name()) && !stop.load(Ordering::Relaxed) {
            suite.scenario(scenario);
        }
    }
    if let Some(opts) = &setup.scale {
        if wanted(setup, "scale") {
            suite.scale(opts);
        }
    }
    suite.out
}
