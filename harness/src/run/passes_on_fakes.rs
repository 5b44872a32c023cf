//! A scenario's whole passes of rounds, warm-up to profile, on fakes (`run/fakes.rs`): two servers with no
//! process behind them, the load given, and probes of the CPUs that read a series of cross-CPU rates in
//! turn, so that a round's figures depend on the order of every probe taken before it. With `--profile`,
//! the profiled rounds between the measurements change no other figure of the run.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::catalog::{Catalog, Contestant};
use crate::load::LoadReport;
use crate::model::{Flag, RunResult};
use crate::ui::{Ui, Verbosity};

use super::fakes::{quiet_round, rounded, FakeServer, FakeStand};
use super::measure::Measuring;
use super::options::{BenchOptions, Rounds, SyscallCounting};
use super::runner::{Context, Hosts, Live, Record};
use super::stand::Stand;
use super::{control, new_run, records};


/// A run's options on the fakes' CPUs (server 1, client 0) at `connections`, with `rounds` and at most
/// `max_rounds`, one warm-up; no system calls counted (the counting round reads real counters), no budget.
fn options(connections: &[usize], rounds: Rounds, max_rounds: u32) -> BenchOptions {
    let connections = connections.to_vec();
    BenchOptions { connections, rounds, max_rounds, budget: None, syscall_counts: SyscallCounting::Off, ..BenchOptions::for_tests() }
}

/// Two connection counts, so that measured rounds follow the first one's profiled rounds, four rounds each
/// (at most eight), profiled or not.
fn two_loads(profile: bool) -> BenchOptions {
    BenchOptions { profile, ..options(&[8, 16], Rounds::Fixed(4), 8) }
}

/// The run after the hello scenario's passes of two fake servers (the control and a namesake of it), their
/// load `reports` in turn.
fn measured(opts: &BenchOptions, reports: Vec<LoadReport>) -> RunResult {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let found = Catalog::discover(&repo.join(control::CONTROL_DIR)).unwrap();
    let first = found.contestants.into_iter().find(|c| c.name == control::CONTROL_NAME).unwrap();
    let second = Contestant { name: "second".into(), ..first.clone() };
    let servers = [&first, &second];
    let dir = tempfile::tempdir().unwrap();
    let stand = FakeStand::new(reports, quiet_round(opts).1);
    let mut run = new_run(opts, "fake", records(&servers, None), Vec::new(), Default::default());
    // The same order of servers in both runs' passes (a run seeds it from the clock).
    run.config.shuffle_seed = stand.fixed_seed();
    let ui = Ui::new(Verbosity::Quiet);
    let stop = Arc::new(AtomicBool::new(false));
    let ctx = Context { opts, run_dir: dir.path(), ui: &ui, stop: &stop, hosts: Hosts::default() };
    let mut keep = |_: &RunResult| -> anyhow::Result<()> { Ok(()) };
    let mut record = Record::new(&mut run, &mut keep);
    let mut measuring = Measuring::new(&ctx, &mut record, stand.prober(&ctx));
    let mut live: Vec<Live<FakeServer>> = servers.iter().map(|c| measuring.launch(&stand, c, "hello", 1).expect("a fake server starts")).collect();
    measuring.rounds("hello", &mut live).unwrap();
    drop(measuring);
    run
}

/// The run's measurements and fitted model as run.json holds them, without what the clock says (when each
/// round started, how long it and its probes took) and without the profiles.
fn figures(run: &RunResult) -> serde_json::Value {
    let mut measurements = serde_json::to_value(&run.measurements).unwrap();
    for m in measurements.as_array_mut().unwrap() {
        let m = m.as_object_mut().unwrap();
        m.remove("profile");
        for kind in ["rounds", "counting_rounds"] {
            for r in m.get_mut(kind).and_then(|r| r.as_array_mut()).into_iter().flatten() {
                let round = r.as_object_mut().unwrap();
                for clock in ["started_s", "quiet_wait_ms", "probes_ms", "round_s"] {
                    round.remove(clock);
                }
            }
        }
    }
    rounded(serde_json::json!({ "measurements": measurements, "machine_model": run.machine_model }))
}

#[test]
fn the_profiled_rounds_change_no_other_figure() {
    let quiet = |o: &BenchOptions| vec![quiet_round(o).0];
    let (plain, profiled) = (two_loads(false), two_loads(true));
    let without = measured(&plain, quiet(&plain));
    let with = measured(&profiled, quiet(&profiled));
    // The rounds read the moving regime: some were flagged for it, so that a probe taken out of turn would
    // show in them.
    let measured_rounds: Vec<_> = without.measurements.iter().flat_map(|m| m.rounds.iter().filter(|r| !r.warmup)).collect();
    assert!(measured_rounds.len() >= 2 * 2 * 4, "two servers, two connection counts, four rounds each at least");
    assert!(measured_rounds.iter().any(|r| r.has_flag(&Flag::CpuDrift)), "no round saw the regime move");
    assert!(measured_rounds.iter().any(|r| !r.has_flag(&Flag::CpuDrift)));
    assert!(without.measurements.iter().all(|m| m.profile.is_none()));
    assert!(with.measurements.iter().all(|m| m.profile.is_some()), "a profile, or why there is none, for every measurement");
    assert_eq!(figures(&with), figures(&without));
    let medians = |r: &RunResult| -> Vec<Option<f64>> { r.measurements.iter().map(|m| m.requests_per_s().map(|s| s.median)).collect() };
    assert_eq!(medians(&with), medians(&without));
}

/// The passes' figures on fakes, pinned: each round's flags and what the probes and the machine model made
/// of it, each measurement's medians with their intervals, and the model's fit. A change of how a round is
/// judged, probed or adjusted shows here (`cargo insta review` takes a change that was meant).
#[test]
fn the_figures_of_passes_on_fakes_are_unchanged() {
    use std::fmt::Write;
    let opts = two_loads(false);
    let run = measured(&opts, vec![quiet_round(&opts).0]);
    let g = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:.6}"));
    let summary = |s: Option<crate::model::RoundsSummary>| match s {
        Some(s) => format!("median {:.6} ci95 {:?}", s.median, s.ci95.map(|(lo, hi)| (format!("{lo:.6}"), format!("{hi:.6}")))),
        None => "-".into(),
    };
    let mut text = String::new();
    for m in &run.measurements {
        writeln!(text, "{} c{}: {:?}", m.contestant, m.connections, m.status).unwrap();
        for r in &m.rounds {
            let factors = r.machine.machine_factors.as_ref().map(|f| [f.requests_per_s, f.p99, f.cpu_per_request].map(|x| format!("{x:.6}")).join(" "));
            let flags: Vec<String> = r.flags.iter().map(ToString::to_string).collect();
            let kind = if r.warmup { "warm-up" } else { "round" };
            writeln!(
                text,
                "  {kind} {}: cross {} index {} speed {} drift {} factors [{}] flags [{}]",
                r.index,
                g(r.machine.cross_cpu_per_ms),
                g(r.machine.cross_cpu_index),
                g(r.machine.speed_index),
                g(r.machine.drift_factor),
                factors.unwrap_or_default(),
                flags.join(", ")
            )
            .unwrap();
        }
        writeln!(text, "  req/s {}", summary(m.requests_per_s())).unwrap();
        writeln!(text, "  CPU/req {}", summary(crate::model::ranks::cpu_us_per_request(m))).unwrap();
    }
    for fit in &run.machine_model {
        writeln!(text, "model {}: reference {:.1}, {} rounds ({} without cross-CPU)", fit.load, fit.reference_cross_cpu_per_ms, fit.rounds, fit.rounds_without_cross_cpu).unwrap();
        for f in &fit.metrics {
            let speed = f.speed_slope.map_or("none".to_string(), |b| format!("{b:.6} ({})", f.speed_slope_from.as_deref().unwrap_or("?")));
            writeln!(text, "  {}: slope {:.6} ({}), speed slope {speed}, scatter {} -> {}", f.metric, f.slope, f.slope_from, g(f.scatter_pct), g(f.scatter_adjusted_pct)).unwrap();
        }
    }
    insta::assert_snapshot!(text);
}

/// `--rounds auto` on a load whose req/s moves round to round (±4%): a measurement whose interval is within
/// the target after the fewest rounds with an interval (6) stops there; one that cannot reach it runs to
/// `--max-rounds`, or, once the run's time budget holds no further pass, stops at the fewest rounds that
/// count and says the budget ended it.
#[test]
fn auto_rounds_stop_at_the_target_or_the_bound_or_the_budget() {
    // A millisecond, on the fakes' clock: a probe alone takes longer, so the first pass spends it.
    let spent = Some(std::time::Duration::from_millis(1));
    for (target_pct, max_rounds, budget, expected) in [(50.0, 20, None, 6), (1e-9, 8, None, 8), (1e-9, 20, spent, 6)] {
        let opts = BenchOptions { budget, ..options(&[8], Rounds::Auto { target_ci_pct: target_pct }, max_rounds) };
        let (quiet, _) = quiet_round(&opts);
        let moving = [50_000, 51_900, 48_300, 50_800, 49_200, 52_000, 48_700].map(|requests| LoadReport { requests, ..quiet.clone() });
        let run = measured(&opts, moving.to_vec());
        for m in &run.measurements {
            let measured = m.rounds.iter().filter(|r| !r.warmup).count();
            let ci = m.requests_per_s().and_then(|s| s.ci95_relative_pct());
            assert_eq!(measured, expected, "{}: target ±{target_pct}%, budget {budget:?}: interval ±{ci:?}%", m.contestant);
            assert_eq!(m.measured_rounds().count(), expected, "every round counts on fakes");
            assert_eq!(m.ended_by_budget, budget.is_some(), "target ±{target_pct}%, budget {budget:?}");
        }
        if budget.is_some() {
            let words = run.budget_words().unwrap();
            assert!(words.contains("ended the rounds of 2 of 2 measurements"), "{words}");
            assert!(crate::report::markdown::render(&run).contains(&words), "the summary's rules say what the budget did");
        }
    }
}
