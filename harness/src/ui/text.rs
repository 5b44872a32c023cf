//! The one place where the runner's events become words: each event's status (the text beside the bar)
//! and line, with the least verbosity that prints it (`Quiet`: every mode, as warnings are).

use super::event::{
    BuildEvent, Built, CheckEvent, Event, PairEvent, PassKind, Phase, RoundEvent, RunEvent, SearchEvent, ServerEvent,
};
use super::figures::{measurement_line, round_line};
use super::Verbosity;

/// What an event shows: a new status beside the bar, a line, both or neither.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Text {
    pub status: Option<String>,
    /// The line and the least verbosity that prints it.
    pub line: Option<(Verbosity, String)>,
}

impl Text {
    fn status(s: String) -> Text {
        Text { status: Some(s), line: None }
    }

    /// A line in normal and verbose mode.
    fn line(s: String) -> Text {
        Text { status: None, line: Some((Verbosity::Normal, s)) }
    }

    /// A line in verbose mode only.
    fn detail(s: String) -> Text {
        Text { status: None, line: Some((Verbosity::Verbose, s)) }
    }

    /// A line in every mode.
    fn warn(s: String) -> Text {
        Text { status: None, line: Some((Verbosity::Quiet, s)) }
    }
}

/// The words of an event.
pub fn text(event: &Event) -> Text {
    match event {
        Event::Bar(_) => Text::default(),
        Event::Run(e) => run(e),
        Event::Build(e) => build(e),
        Event::Check(e) => check(e),
        Event::Server(e) => server(e),
        Event::Round(e) => round(e),
        Event::Search(e) => search(e),
        Event::Pair(e) => pair(e),
        Event::Warning(w) => Text::warn(w.to_string()),
    }
}

/// The bar's message for a phase.
pub fn phase(p: Phase) -> &'static str {
    match p {
        Phase::Building => "building",
        Phase::Measuring => "measuring",
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

fn run(e: &RunEvent) -> Text {
    match e {
        RunEvent::AbVersions { a, a_from, b, b_from } => Text::line(format!("A/B run: A is {a} ({a_from}), B is {b} ({b_from})")),
        RunEvent::BuildingHey { version, module_dir, binary } => Text::line(format!("building hey {version} from {module_dir} into {}", binary.display())),
        RunEvent::InstallingTool { package, tool } => Text::line(format!("installing {package} with apt-get (running as root) for --tool {tool}")),
        RunEvent::Host(said) => Text::line(said.to_string()),
    }
}

fn build(e: &BuildEvent) -> Text {
    match e {
        BuildEvent::Preparing { contestant } => Text::status(format!("preparing {contestant}")),
        BuildEvent::Building { contestant } => Text::status(format!("building {contestant}")),
        BuildEvent::BuildingThere { contestant, host } => Text::status(format!("building {contestant} on {host}")),
        BuildEvent::InstallingPackages { contestant, packages } => {
            Text::line(format!("{contestant}: installing Debian packages {} with apt-get (running as root)", packages.join(" ")))
        }
        BuildEvent::InstallFailed { contestant, reason } => Text::line(format!("{contestant}: {reason}")),
        BuildEvent::Skipped { contestant, reason } => Text::line(format!("{contestant}: skipped: {reason}")),
        BuildEvent::Failed { contestant, log } => Text::line(format!("{contestant}: build failed (log: {})", log.display())),
        BuildEvent::Built { contestant, how } => Text::detail(match how {
            Built::Cached => format!("{contestant}: build cached (sources unchanged)"),
            Built::NothingToBuild => format!("{contestant}: nothing to build"),
            Built::In { seconds } => format!("{contestant}: built in {seconds:.1} s"),
        }),
        BuildEvent::NotReadyThere { contestant, reason } => Text::line(format!("{contestant}: {}", first_line(reason))),
    }
}

fn check(e: &CheckEvent) -> Text {
    match e {
        CheckEvent::Checking { contestant } => Text::status(format!("checking {contestant}")),
        CheckEvent::Failed(r) => Text::line(format!("{} {} {}: FAIL: {}", r.contestant, r.scenario, r.check, first_line(&r.reason))),
        CheckEvent::Passed { contestant, passed, total } => Text::line(format!("{contestant}: {passed} of {total} checks passed")),
    }
}

fn server(e: &ServerEvent) -> Text {
    match e {
        ServerEvent::Starting { contestant, scenario } => Text::status(format!("starting {contestant} ({scenario})")),
        ServerEvent::StartingThere { contestant, host, cpus } => Text::detail(format!("{contestant}: starting on {host} (CPUs {cpus})")),
        ServerEvent::Command { contestant, command, port, cpus } => Text::detail(format!("{contestant}: $ {command} (port {port}, CPUs {cpus})")),
        ServerEvent::Verified { contestant, scenario, bytes } => Text::detail(format!("{contestant} {scenario}: verified ({bytes} bytes)")),
        ServerEvent::NotStarted { contestant, scenario, reason } => Text::line(format!("{contestant} {scenario}: {}", first_line(reason))),
        ServerEvent::AllUp { scenario, servers, workers } => {
            let with = workers.map(|w| format!(" with {w} worker(s)")).unwrap_or_default();
            Text::line(format!("{scenario}: {servers} server(s) started{with} and verified"))
        }
        ServerEvent::AbUp { scenario, a, b } => Text::line(format!("{scenario}: A ({a}) and B ({b}) started and verified")),
    }
}

fn round(e: &RoundEvent) -> Text {
    match e {
        RoundEvent::PassBegun { scenario, connections, load, pass, servers } => {
            let what = match pass {
                PassKind::Warmup { number, of } => format!("warm-up {number} of {of}"),
                PassKind::Measured { number, at_most } => format!("measured pass {number} (at most {at_most})"),
                PassKind::Counting => "an extra round counting system calls, left out of every other figure,".into(),
            };
            Text::line(format!("{scenario} c={connections} {load}: {what} across {servers} server(s)"))
        }
        RoundEvent::Begun { contestant, scenario, connections, kind, index } => Text::status(format!("{contestant} {scenario} c={connections} {kind} {index}")),
        RoundEvent::Done { contestant, scenario, connections, round } => Text::detail(round_line(contestant, scenario, *connections, round)),
        RoundEvent::Failed { contestant, scenario, reason } => Text::line(format!("{contestant} {scenario}: failed: {}", first_line(reason))),
        RoundEvent::Measured(m) => Text::line(measurement_line(m)),
        RoundEvent::Profiled { contestant, profile } => Text::line(profile_line(contestant, profile)),
        RoundEvent::BudgetSpent { budget, short, below_fewest } => {
            let budget = crate::model::time_spent::min_s(budget.as_secs_f64());
            let below = match below_fewest {
                0 => String::new(),
                n => format!(", {n} of them after the rounds they still lack to have an interval"),
            };
            Text::line(format!("the time budget for measuring ({budget}) holds no further pass: {short} measurement(s) end short of their target{below}"))
        }
    }
}

fn search(e: &SearchEvent) -> Text {
    match e {
        SearchEvent::Begun { contestant, scenario, connections, slo } => Text::line(format!("{contestant} {scenario} c={connections}: capacity search at {slo}")),
        SearchEvent::Step { contestant, scenario, connections, index, rate } => {
            Text::status(format!("{contestant} {scenario} c={connections} search step {index} at {rate:.0}/s"))
        }
        SearchEvent::Found { contestant, scenario, connections, slo, found } => {
            Text::line(format!("{contestant} {scenario} c={connections}: capacity @ {slo}: {}", found.describe()))
        }
        SearchEvent::Interrupted { contestant, error } => Text::detail(format!("{contestant}: capacity search interrupted: {error:#}")),
        SearchEvent::Failed { contestant, scenario, reason } => Text::line(format!("{contestant} {scenario}: failed: {reason}")),
    }
}

/// A pair's line is printed every 20 pairs, and with -v after each; the status shows it always.
fn pair(e: &PairEvent) -> Text {
    match e {
        PairEvent::Paired { pair, counts, requests_per_s } => {
            let so_far = match requests_per_s {
                Some(r) => match r.ci95 {
                    Some((lo, hi)) => format!("B/A {:.4} (95% CI {lo:.4} to {hi:.4}) over {} pairs", r.ratio, r.pairs),
                    None => format!("B/A {:.4} over {} pairs", r.ratio, r.pairs),
                },
                None => "no estimate yet".into(),
            };
            let line = format!("pair {}{}: req/s {so_far}", pair.index, if *counts { "" } else { " (left out: a round was disturbed)" });
            let least = if pair.index.is_multiple_of(20) { Verbosity::Normal } else { Verbosity::Verbose };
            Text { status: Some(line.clone()), line: Some((least, line)) }
        }
        PairEvent::Ended { pairs, counted, took, ended, requests_per_s } => {
            let reached = requests_per_s.and_then(|r| {
                let (lo, hi) = r.ci95?;
                let resolution = r.ci95_half_width_pct().map_or(String::new(), |w| format!(" (±{w:.1}%)"));
                Some(format!("B/A of req/s {:.4}, 95% CI {lo:.4} to {hi:.4}{resolution}", r.ratio))
            });
            let secs = took.as_secs();
            Text::line(format!(
                "{pairs} pairs ({counted} count) in {} min {:02} s, ended: {ended}; {}",
                secs / 60,
                secs % 60,
                reached.unwrap_or_else(|| "no interval (fewer than 6 pairs count)".into())
            ))
        }
    }
}

/// "c-epoll: profiled, 2,011 samples over 310,442 requests, 0.4% of frames unknown; most of its own: tcp_sendmsg_locked_[k] 1.21 a 1,000 requests".
fn profile_line(contestant: &str, p: &crate::model::profile::Profile) -> String {
    if let Some(why) = &p.unavailable {
        return format!("{contestant}: no profile: {}", first_line(why));
    }
    let unknown = p.unknown_frames.map_or(String::new(), |u| format!(", {:.1}% of frames unknown", u * 100.0));
    let top = p.top_frames.first().map_or(String::new(), |f| format!("; most of its own: {} {:.2} a 1,000 requests", f.frame, f.samples_per_1000_requests));
    let waited = match &p.off_cpu {
        Some(o) if o.unavailable.is_none() => o.blocked_in.first().map_or(String::new(), |f| format!("; blocked most in {} {:.2} a 1,000 requests", f.frame, f.samples_per_1000_requests)),
        Some(o) => format!("; where it waited not recorded: {}", first_line(o.unavailable.as_deref().unwrap_or_default())),
        None => String::new(),
    };
    format!("{contestant}: profiled, {} samples over {} requests{unknown}{top}{waited}", p.samples, p.requests)
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::Duration;

    use super::*;
    use crate::model::ab::{AbPair, Side};
    use crate::model::checks::{CheckResult, Status};
    use crate::os::cpus::CpuSet;
    use crate::stats::paired::PairedRatio;
    use crate::ui::event::RoundKind;

    /// The event's line, with the least verbosity that prints it; it sets no status.
    fn line<'a>(event: impl Into<Event<'a>>) -> (Verbosity, String) {
        let Text { status, line } = text(&event.into());
        assert_eq!(status, None, "a line alone");
        line.expect("a line")
    }

    fn said<'a>(event: impl Into<Event<'a>>) -> String {
        let (least, line) = line(event);
        assert_eq!(least, Verbosity::Normal, "{line}: printed in normal mode");
        line
    }

    fn detail<'a>(event: impl Into<Event<'a>>) -> String {
        let (least, line) = line(event);
        assert_eq!(least, Verbosity::Verbose, "{line}: printed with -v only");
        line
    }

    fn status<'a>(event: impl Into<Event<'a>>) -> String {
        let Text { status, line } = text(&event.into());
        assert_eq!(line, None, "a status alone");
        status.expect("a status")
    }

    #[test]
    fn what_a_run_says_before_its_builds() {
        assert_eq!(
            said(RunEvent::AbVersions { a: "reference@1a2b", a_from: "git revision 1a2b", b: "reference", b_from: "the working tree" }),
            "A/B run: A is reference@1a2b (git revision 1a2b), B is reference (the working tree)"
        );
        assert_eq!(
            said(RunEvent::BuildingHey { version: "v0.1.4", module_dir: "tools/hey", binary: Path::new("/r/tools/hey/bin/hey") }),
            "building hey v0.1.4 from tools/hey into /r/tools/hey/bin/hey"
        );
        assert_eq!(said(RunEvent::InstallingTool { package: "nghttp2-client", tool: "h2load" }), "installing nghttp2-client with apt-get (running as root) for --tool h2load");
        assert_eq!(said(RunEvent::Host("client-1: copied the harness")), "client-1: copied the harness");
    }

    #[test]
    fn what_the_builds_say() {
        assert_eq!(status(BuildEvent::Preparing { contestant: "c-epoll" }), "preparing c-epoll");
        assert_eq!(status(BuildEvent::Building { contestant: "c-epoll" }), "building c-epoll");
        assert_eq!(status(BuildEvent::BuildingThere { contestant: "c-epoll", host: "sut" }), "building c-epoll on sut");
        let packages = ["libssl-dev".to_string(), "zlib1g-dev".to_string()];
        assert_eq!(
            said(BuildEvent::InstallingPackages { contestant: "c-epoll", packages: &packages }),
            "c-epoll: installing Debian packages libssl-dev zlib1g-dev with apt-get (running as root)"
        );
        assert_eq!(said(BuildEvent::InstallFailed { contestant: "c-epoll", reason: "installing x failed: 100\nmore" }), "c-epoll: installing x failed: 100\nmore");
        assert_eq!(said(BuildEvent::Skipped { contestant: "c-epoll", reason: "needs gcc" }), "c-epoll: skipped: needs gcc");
        assert_eq!(said(BuildEvent::Failed { contestant: "c-epoll", log: Path::new("logs/c-epoll.build.log") }), "c-epoll: build failed (log: logs/c-epoll.build.log)");
        assert_eq!(detail(BuildEvent::Built { contestant: "c-epoll", how: Built::Cached }), "c-epoll: build cached (sources unchanged)");
        assert_eq!(detail(BuildEvent::Built { contestant: "c-epoll", how: Built::NothingToBuild }), "c-epoll: nothing to build");
        assert_eq!(detail(BuildEvent::Built { contestant: "c-epoll", how: Built::In { seconds: 12.34 } }), "c-epoll: built in 12.3 s");
        assert_eq!(said(BuildEvent::NotReadyThere { contestant: "c-epoll", reason: "build failed (on sut)\nthe log's tail" }), "c-epoll: build failed (on sut)");
    }

    #[test]
    fn what_the_checks_say() {
        assert_eq!(status(CheckEvent::Checking { contestant: "c-epoll" }), "checking c-epoll");
        let failed = CheckResult {
            contestant: "c-epoll".into(),
            scenario: "hello".into(),
            check: "pipelining".into(),
            status: Status::Fail,
            reason: "answered 1 of 2\nrest".into(),
            seconds: 0.1,
        };
        assert_eq!(said(CheckEvent::Failed(&failed)), "c-epoll hello pipelining: FAIL: answered 1 of 2");
        assert_eq!(said(CheckEvent::Passed { contestant: "c-epoll", passed: 9, total: 10 }), "c-epoll: 9 of 10 checks passed");
    }

    #[test]
    fn what_the_servers_say() {
        let cpus = CpuSet::parse("1,3").unwrap();
        assert_eq!(status(ServerEvent::Starting { contestant: "c-epoll", scenario: "hello" }), "starting c-epoll (hello)");
        assert_eq!(detail(ServerEvent::StartingThere { contestant: "c-epoll", host: "sut", cpus: &cpus }), "c-epoll: starting on sut (CPUs 1,3)");
        assert_eq!(
            detail(ServerEvent::Command { contestant: "c-epoll", command: "./server 8080", port: 8080, cpus: &cpus }),
            "c-epoll: $ ./server 8080 (port 8080, CPUs 1,3)"
        );
        assert_eq!(detail(ServerEvent::Verified { contestant: "c-epoll", scenario: "hello", bytes: 51 }), "c-epoll hello: verified (51 bytes)");
        assert_eq!(
            said(ServerEvent::NotStarted { contestant: "c-epoll", scenario: "hello", reason: "failed to start: exited\nlog" }),
            "c-epoll hello: failed to start: exited"
        );
        assert_eq!(said(ServerEvent::AllUp { scenario: "hello", servers: 3, workers: None }), "hello: 3 server(s) started and verified");
        assert_eq!(said(ServerEvent::AllUp { scenario: "hello", servers: 3, workers: Some(2) }), "hello: 3 server(s) started with 2 worker(s) and verified");
        assert_eq!(said(ServerEvent::AbUp { scenario: "hello", a: "ref@1a2b", b: "ref" }), "hello: A (ref@1a2b) and B (ref) started and verified");
    }

    #[test]
    fn what_the_passes_and_rounds_say() {
        let pass = |pass| said(RoundEvent::PassBegun { scenario: "hello", connections: 64, load: "throughput", pass, servers: 2 });
        assert_eq!(pass(PassKind::Warmup { number: 1, of: 2 }), "hello c=64 throughput: warm-up 1 of 2 across 2 server(s)");
        assert_eq!(pass(PassKind::Measured { number: 3, at_most: 16 }), "hello c=64 throughput: measured pass 3 (at most 16) across 2 server(s)");
        assert_eq!(pass(PassKind::Counting), "hello c=64 throughput: an extra round counting system calls, left out of every other figure, across 2 server(s)");
        let begun = |kind| status(RoundEvent::Begun { contestant: "c-epoll", scenario: "hello", connections: 64, kind, index: 2 });
        assert_eq!(begun(RoundKind::Warmup), "c-epoll hello c=64 warm-up 2");
        assert_eq!(begun(RoundKind::Measured), "c-epoll hello c=64 round 2");
        assert_eq!(begun(RoundKind::Counting), "c-epoll hello c=64 system-call counting round 2");
        assert_eq!(
            said(RoundEvent::Failed { contestant: "c-epoll", scenario: "hello", reason: "the server exited (signal 9) during round 2\nlog" }),
            "c-epoll hello: failed: the server exited (signal 9) during round 2"
        );
        assert_eq!(
            said(RoundEvent::BudgetSpent { budget: Duration::from_secs(330), short: 3, below_fewest: 0 }),
            "the time budget for measuring (5 min 30 s) holds no further pass: 3 measurement(s) end short of their target"
        );
        assert_eq!(
            said(RoundEvent::BudgetSpent { budget: Duration::from_secs(30), short: 3, below_fewest: 1 }),
            "the time budget for measuring (30.0 s) holds no further pass: 3 measurement(s) end short of their target, 1 of them after the rounds they still lack to have an interval"
        );
    }

    /// A round's and a measurement's figures, from a stored run: c-epoll at 64 connections, its second
    /// round client-bound; the same round unsaturated for want of work, with its limit in words.
    #[test]
    fn what_a_round_and_a_measurement_say() {
        let stored = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs/base/run.json")).unwrap();
        let run: crate::model::RunResult = serde_json::from_str(&stored).unwrap();
        let m = &run.measurements[1];
        let done = |round| detail(RoundEvent::Done { contestant: &m.contestant, scenario: &m.scenario, connections: m.connections, round });
        assert_eq!(done(&m.rounds[1]), "  c-epoll hello c=256 round 1: 900000 req/s, 0 errors, server CPU 55%, client CPU 99% [client-bound]");
        let mut unsaturated = m.rounds[1].clone();
        unsaturated.flags = vec![crate::model::Flag::Unsaturated, crate::model::Flag::CpuDrift];
        unsaturated.limit = Some(crate::model::LIMIT_SERVER_SLEEPING.into());
        assert_eq!(done(&unsaturated), "  c-epoll hello c=256 round 1: 900000 req/s, 0 errors, server CPU 55%, client CPU 99% [unsaturated (server sleeping), cpu-drift]");
        assert_eq!(
            said(RoundEvent::Measured(m)),
            "c-epoll                  hello         c=256       900000 req/s  server CPU 55% 2.2 us/req  RSS 13.0 MiB  p99 1123.3 us  [client-bound 5/5]"
        );
    }

    #[test]
    fn what_the_capacity_search_says() {
        assert_eq!(
            said(SearchEvent::Begun { contestant: "c-epoll", scenario: "hello", connections: 64, slo: "p99<1ms" }),
            "c-epoll hello c=64: capacity search at p99<1ms"
        );
        assert_eq!(
            status(SearchEvent::Step { contestant: "c-epoll", scenario: "hello", connections: 64, index: 3, rate: 41_200.4 }),
            "c-epoll hello c=64 search step 3 at 41200/s"
        );
        let slo = crate::load::search::Slo::parse("p99<1ms").unwrap();
        let found = crate::load::search::SearchResult { slo, capacity_rps: Some(41_200.0), bracket: (Some(41_200.0), Some(43_100.0)), steps: Vec::new() };
        assert_eq!(
            said(SearchEvent::Found { contestant: "c-epoll", scenario: "hello", connections: 64, slo: "p99<1ms", found: &found }),
            "c-epoll hello c=64: capacity @ p99<1ms: 41200 req/s (passed at 41200, failed at 43100)"
        );
        let error = anyhow::anyhow!("interrupted").context("step 3");
        assert_eq!(detail(SearchEvent::Interrupted { contestant: "c-epoll", error: &error }), "c-epoll: capacity search interrupted: step 3: interrupted");
        assert_eq!(
            said(SearchEvent::Failed { contestant: "c-epoll", scenario: "hello", reason: "capacity search at p99<1ms: the server exited" }),
            "c-epoll hello: failed: capacity search at p99<1ms: the server exited"
        );
    }

    #[test]
    fn what_the_pairs_say() {
        let ratio = PairedRatio { pairs: 20, ratio: 1.0123, ci95: Some((0.99, 1.03)), p: 0.2 };
        let no_interval = PairedRatio { ci95: None, pairs: 4, ..ratio };
        let pair = |index| AbPair { index, first: Side::A, a_round: index, b_round: index };
        let twentieth = text(&PairEvent::Paired { pair: &pair(20), counts: true, requests_per_s: Some(&ratio) }.into());
        let line = "pair 20: req/s B/A 1.0123 (95% CI 0.9900 to 1.0300) over 20 pairs".to_string();
        assert_eq!(twentieth, Text { status: Some(line.clone()), line: Some((Verbosity::Normal, line)) });
        let fourth = text(&PairEvent::Paired { pair: &pair(4), counts: false, requests_per_s: Some(&no_interval) }.into());
        let line = "pair 4 (left out: a round was disturbed): req/s B/A 1.0123 over 4 pairs".to_string();
        assert_eq!(fourth, Text { status: Some(line.clone()), line: Some((Verbosity::Verbose, line)) });
        let first = text(&PairEvent::Paired { pair: &pair(1), counts: true, requests_per_s: None }.into());
        assert_eq!(first.status.as_deref(), Some("pair 1: req/s no estimate yet"));
        let ended = |requests_per_s| said(PairEvent::Ended { pairs: 24, counted: 22, took: Duration::from_secs(125), ended: "interval", requests_per_s });
        assert_eq!(ended(Some(&ratio)), "24 pairs (22 count) in 2 min 05 s, ended: interval; B/A of req/s 1.0123, 95% CI 0.9900 to 1.0300 (±2.0%)");
        assert_eq!(ended(Some(&no_interval)), "24 pairs (22 count) in 2 min 05 s, ended: interval; no interval (fewer than 6 pairs count)");
    }

    #[test]
    fn a_warning_is_printed_in_every_mode() {
        let (least, line) = line(crate::ui::warning::Warning::Note("--rate is ignored"));
        assert_eq!((least, line.as_str()), (Verbosity::Quiet, "note: --rate is ignored"));
    }

    #[test]
    fn the_bar_has_its_phase_word_and_no_line() {
        assert_eq!((phase(Phase::Building), phase(Phase::Measuring)), ("building", "measuring"));
        assert_eq!(text(&crate::ui::event::Bar::Step.into()), Text::default());
    }
}
