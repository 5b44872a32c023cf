//! What the runner says while a benchmark goes on, as typed events: the runner (`run/`, and `launch/` for
//! the builds and starts it does for it) sends them through `Ui::emit`, and `text.rs` alone turns them
//! into words. One enum per group of events, each the runner's phase that sends it.

use std::path::Path;
use std::time::Duration;

use crate::load::search::SearchResult;
use crate::model::checks::CheckResult;
use crate::model::profile::Profile;
use crate::model::{ab::AbPair, Flag, Measurement, Round};
use crate::os::cpus::CpuSet;
use crate::stats::paired::PairedRatio;

use super::warning::Warning;

/// Anything the runner says: a group's event, or a change of the progress bar.
pub enum Event<'a> {
    Bar(Bar),
    Run(RunEvent<'a>),
    Build(BuildEvent<'a>),
    Check(CheckEvent<'a>),
    Server(ServerEvent<'a>),
    Round(RoundEvent<'a>),
    Search(SearchEvent<'a>),
    Pair(PairEvent<'a>),
    Warning(Warning<'a>),
}

/// The progress bar: a phase begun with its steps, a step done, steps that will not run, the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bar {
    Begun { phase: Phase, steps: u64 },
    Step,
    /// Steps that will not run (a contestant that failed, rounds a measurement did not need).
    Dropped(u64),
    Ended,
}

/// The long phases of a run, each with a bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Building,
    Measuring,
}

/// Before the first build: what the run is and what it installs or builds for itself.
pub enum RunEvent<'a> {
    /// An A/B run's two versions: names and where each comes from.
    AbVersions { a: &'a str, a_from: &'a str, b: &'a str, b_from: &'a str },
    /// hey, the `--tool hey` client, built from the pinned module into `binary`.
    BuildingHey { version: &'a str, module_dir: &'a str, binary: &'a Path },
    /// The Debian package of `--tool` installed.
    InstallingTool { package: &'a str, tool: &'a str },
    /// What preparing another host says, in that room's words.
    Host(&'a str),
}

/// A contestant's dependencies and build.
pub enum BuildEvent<'a> {
    Preparing { contestant: &'a str },
    Building { contestant: &'a str },
    BuildingThere { contestant: &'a str, host: &'a str },
    InstallingPackages { contestant: &'a str, packages: &'a [String] },
    /// Installing its packages failed: the whole reason.
    InstallFailed { contestant: &'a str, reason: &'a str },
    /// It cannot run on this machine.
    Skipped { contestant: &'a str, reason: &'a str },
    Failed { contestant: &'a str, log: &'a Path },
    Built { contestant: &'a str, how: Built },
    /// Skipped or failed on the server host: the first line of why.
    NotReadyThere { contestant: &'a str, reason: &'a str },
}

/// How a build that succeeded went.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Built {
    /// Its sources are unchanged since the stamp.
    Cached,
    NothingToBuild,
    In { seconds: f64 },
}

/// `bench --check`'s conformance suite on one contestant.
pub enum CheckEvent<'a> {
    Checking { contestant: &'a str },
    Failed(&'a CheckResult),
    Passed { contestant: &'a str, passed: usize, total: usize },
}

/// A server's start and verification.
pub enum ServerEvent<'a> {
    Starting { contestant: &'a str, scenario: &'a str },
    StartingThere { contestant: &'a str, host: &'a str, cpus: &'a CpuSet },
    /// The command that starts it, as expanded.
    Command { contestant: &'a str, command: &'a str, port: u16, cpus: &'a CpuSet },
    Verified { contestant: &'a str, scenario: &'a str, bytes: u64 },
    /// It did not start or answered wrongly: the first line of why.
    NotStarted { contestant: &'a str, scenario: &'a str, reason: &'a str },
    /// Every server of a scenario is up; `workers` when the run sweeps them.
    AllUp { scenario: &'a str, servers: usize, workers: Option<usize> },
    AbUp { scenario: &'a str, a: &'a str, b: &'a str },
}

/// Passes, rounds and measurements.
pub enum RoundEvent<'a> {
    PassBegun { scenario: &'a str, connections: usize, load: &'a str, pass: PassKind, servers: usize },
    Begun { contestant: &'a str, scenario: &'a str, connections: usize, kind: RoundKind, index: u32 },
    Done { contestant: &'a str, scenario: &'a str, connections: usize, round: &'a Round },
    /// The server failed in a round: the first line of why.
    Failed { contestant: &'a str, scenario: &'a str, reason: &'a str },
    Measured(&'a Measurement),
    /// `--profile`: a server's profiled round ended, with its profile or why there is none.
    Profiled { contestant: &'a str, profile: &'a Profile },
    /// The run's time budget holds no further pass of a load: `short` measurements end short of their
    /// target, `below_fewest` of them before the fewest rounds with an interval.
    BudgetSpent { budget: Duration, short: usize, below_fewest: usize },
}

/// Which pass of a load begins, with its number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PassKind {
    Warmup { number: u32, of: u32 },
    Measured { number: u32, at_most: u32 },
    /// The extra round counting system calls.
    Counting,
}

/// Which kind of round one is: its word is in the progress and in a failed measurement's reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoundKind {
    Warmup,
    Measured,
    Counting,
    /// `--profile`'s round, sampled by perf.
    Profiled,
}

impl std::fmt::Display for RoundKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RoundKind::Warmup => "warm-up",
            RoundKind::Measured => "round",
            RoundKind::Counting => "system-call counting round",
            RoundKind::Profiled => "profiled round",
        })
    }
}

/// `bench --search`: a server's capacity under a latency objective (`slo`, as written).
pub enum SearchEvent<'a> {
    Begun { contestant: &'a str, scenario: &'a str, connections: usize, slo: &'a str },
    Step { contestant: &'a str, scenario: &'a str, connections: usize, index: u32, rate: f64 },
    Found { contestant: &'a str, scenario: &'a str, connections: usize, slo: &'a str, found: &'a SearchResult<Flag> },
    Interrupted { contestant: &'a str, error: &'a anyhow::Error },
    /// The search failed: the whole reason, which the contestant's warnings keep too.
    Failed { contestant: &'a str, scenario: &'a str, reason: &'a str },
}

/// An A/B run's pairs.
pub enum PairEvent<'a> {
    /// A pair done (`counts` unless a round of it was disturbed), with B/A of req/s so far.
    Paired { pair: &'a AbPair, counts: bool, requests_per_s: Option<&'a PairedRatio> },
    Ended { pairs: usize, counted: usize, took: Duration, ended: &'a str, requests_per_s: Option<&'a PairedRatio> },
}

/// Each group's events are events: `ui.emit(RoundEvent::Measured(m))`.
macro_rules! group {
    ($($variant:ident($group:ty)),*) => {
        $(impl<'a> From<$group> for Event<'a> {
            fn from(e: $group) -> Event<'a> {
                Event::$variant(e)
            }
        })*
    };
}

group!(Bar(Bar), Run(RunEvent<'a>), Build(BuildEvent<'a>), Check(CheckEvent<'a>), Server(ServerEvent<'a>), Round(RoundEvent<'a>), Search(SearchEvent<'a>), Pair(PairEvent<'a>), Warning(Warning<'a>));
