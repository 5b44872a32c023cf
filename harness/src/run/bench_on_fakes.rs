//! A whole benchmark on the fakes' stand (`run/fakes.rs`), from the catalog to the files the exporters
//! write: the control and one contestant, nothing built, started or probed, their load and the machine's
//! probes given. Its run.json is pinned by a snapshot with what the clock and the machine say masked, so
//! that a change to the runner that changes what a run writes shows here, field by field.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::catalog::{Catalog, Contestant};
use crate::load::LoadReport;
use crate::model::{ContestantStatus, MeasurementStatus, RunResult};
use crate::ui::{Ui, Verbosity};

use super::fakes::{quiet_round, rounded, FakeStand};
use super::options::{BenchOptions, Rounds, SyscallCounting};
use super::{bench_on, control, Where};

/// A catalog of one contestant, "second": the control's server under another name.
fn one_contestant() -> Catalog {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let found = Catalog::discover(&repo.join(control::CONTROL_DIR)).unwrap();
    let the_control = found.contestants.into_iter().find(|c| c.name == control::CONTROL_NAME).unwrap();
    Catalog { contestants: vec![Contestant { name: "second".into(), ..the_control }], ..found }
}

/// run.json without what the clock and the machine say: when the run started and ended, where its time
/// went, the machine's facts and toolchains, and each round's times. Every other field stays.
fn masked(mut run_json: Value) -> Value {
    let top = run_json.as_object_mut().unwrap();
    for clock in ["started_utc", "finished_utc", "environment", "time_spent"] {
        assert!(top.contains_key(clock), "run.json has {clock}");
        top.insert(clock.into(), Value::String("[masked]".into()));
    }
    for m in top["measurements"].as_array_mut().unwrap() {
        for kind in ["rounds", "counting_rounds"] {
            for r in m[kind].as_array_mut().into_iter().flatten() {
                let round = r.as_object_mut().unwrap();
                for clock in ["started_s", "quiet_wait_ms", "probes_ms", "round_s"] {
                    round.remove(clock);
                }
            }
        }
    }
    rounded(run_json)
}

/// A whole benchmark of `one_contestant` and the control on `stand`, its files written to `dir`, and how
/// many times it saved.
fn bench(stand: &FakeStand, opts: &BenchOptions, dir: &Path) -> (RunResult, usize) {
    let (ui, stop) = (Ui::new(Verbosity::Quiet), Arc::new(AtomicBool::new(false)));
    let mut saves = 0;
    let mut save = |run: &RunResult| -> anyhow::Result<()> {
        saves += 1;
        crate::report::write_all(run, dir).map(|_| ())
    };
    let at = Where { run_id: "fake", run_dir: dir, ui: &ui, stop: &stop };
    let run = bench_on(stand, at, opts, &one_contestant(), None, &mut save).unwrap();
    (run, saves)
}

/// The load's reports in turn: req/s moving by a few percent round to round.
fn moving(quiet: &LoadReport) -> Vec<LoadReport> {
    [50_000, 51_900, 48_300, 50_800, 49_200, 52_000, 48_700].map(|requests| LoadReport { requests, ..quiet.clone() }).to_vec()
}

#[test]
fn a_bench_on_fakes_writes_the_run_json_of_its_snapshot() {
    let opts = BenchOptions { rounds: Rounds::Fixed(6), max_rounds: 6, budget: None, syscall_counts: SyscallCounting::Off, ..BenchOptions::for_tests() };
    let (quiet, side) = quiet_round(&opts);
    let stand = FakeStand::new(moving(&quiet), side);
    let dir = tempfile::tempdir().unwrap();
    let (run, saves) = bench(&stand, &opts, dir.path());

    let names: Vec<(&str, ContestantStatus, bool)> = run.contestants.iter().map(|c| (c.name.as_str(), c.status, c.control)).collect();
    assert_eq!(names, [("second", ContestantStatus::Built, false), (control::CONTROL_NAME, ContestantStatus::Built, true)]);
    for m in &run.measurements {
        assert_eq!((m.status, m.measured_rounds().count()), (MeasurementStatus::Measured, 6), "{}", m.contestant);
    }
    assert!(saves > 2, "saved before the rounds, after each pass and at the end: {saves}");
    for file in ["summary.md", "summary.csv", "report.html"] {
        assert!(dir.path().join(file).is_file(), "{file} written");
    }
    let written: Value = serde_json::from_slice(&std::fs::read(dir.path().join(crate::report::json::FILE_NAME)).unwrap()).unwrap();
    insta::assert_snapshot!(serde_json::to_string_pretty(&masked(written)).unwrap());
}

/// `--rounds auto` toward a target no round meets, with a minute's budget, on a stand whose builds take
/// ten minutes a contestant on the fakes' clock: the budget counts the measuring alone, so both
/// measurements run to `--max-rounds` (8) as on a warm machine, none ended by the budget. Counted from the
/// run's start, the builds spent it and each measurement stopped at the fewest rounds with an interval (6).
#[test]
fn the_time_budget_counts_the_measuring_not_the_builds() {
    let opts = BenchOptions {
        rounds: Rounds::Auto { target_ci_pct: 1e-9 },
        max_rounds: 8,
        budget: Some(Duration::from_secs(60)),
        syscall_counts: SyscallCounting::Off,
        ..BenchOptions::for_tests()
    };
    let (quiet, side) = quiet_round(&opts);
    let stand = FakeStand { build: Duration::from_secs(600), ..FakeStand::new(moving(&quiet), side) };
    let dir = tempfile::tempdir().unwrap();
    let (run, _) = bench(&stand, &opts, dir.path());
    assert_eq!(run.contestants.iter().map(|c| c.build_s).collect::<Vec<_>>(), [600.0; 2], "the builds took their time");
    for m in &run.measurements {
        assert_eq!((m.measured_rounds().count(), m.ended_by_budget), (8, false), "{}", m.contestant);
    }
}
