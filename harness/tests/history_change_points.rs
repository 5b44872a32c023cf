//! Change points over synthetic histories built from a real run's figures: each synthetic run of a server
//! is its real median req/s in `unchanged-runs-2-A` (seven servers, hello at 64 connections) times the
//! noise of a median of its real number of rounds, each round with a multiplicative noise of this VM's size
//! (log standard deviation 4%, about 1.2% for the median of 16 rounds). Each case runs over
//! twenty seeds: a step shared by every server and the control is the machine's, a server's own 5% step is
//! its own, a flat history has none.
//!
//! The server's step comes nine runs after the machine's: with three runs between them a 5% step in such
//! noise does not pass the t-test at p < 0.001 (the segment between the two is the step's "before").
//! Where a 5% step lies is found within two runs, not always at it (286 of 300 seeds exactly).

use std::path::Path;

use serverbench::history::change_points::Settings;
use serverbench::history::series::{analyse, Cause, Configuration, Point, Series};

const SEEDS: u64 = 20;
const RUNS: usize = 30;
const FLAT_RUNS: usize = 20;
const PLACE_TOLERANCE: usize = 2;
const ROUND_NOISE_LOG_SD: f64 = 0.04;
const MACHINE_AT: usize = 3;
const MACHINE_STEP: f64 = 0.8;
const SERVER_AT: usize = 12;
const SERVER_STEP: f64 = 0.95;

/// Seven servers' req/s in each round of a real run; the last is the synthetic history's control.
fn real_rounds() -> Vec<(String, Vec<f64>)> {
    let run = serverbench::report::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs/unchanged-runs-2-A")).unwrap();
    let figures: Vec<(String, Vec<f64>)> = run.measurements.iter().map(|m| (m.contestant.clone(), m.measured_rounds().map(|r| r.load.requests_per_s()).collect())).take(7).collect();
    assert!(figures.len() == 7 && figures.iter().all(|(_, rounds)| rounds.len() >= 10));
    figures
}

/// A synthetic run's figure: the median of the real rounds, `level` times as fast, with the noise of a
/// median of that many rounds of this VM: sqrt(π/2) times the rounds' own, over the root of their number.
fn run_figure(rounds: &[f64], level: f64, rng: &mut fastrand::Rng) -> f64 {
    let log_sd = ROUND_NOISE_LOG_SD * (std::f64::consts::PI / 2.0).sqrt() / (rounds.len() as f64).sqrt();
    serverbench::stats::rounds::median(rounds) * level * (log_sd * normal(rng)).exp()
}

fn normal(rng: &mut fastrand::Rng) -> f64 {
    // Box–Muller.
    let (u, v) = (1.0 - rng.f64(), rng.f64());
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

/// A history of `RUNS` runs of each server, `level(server, run)` times its real figure, with noise.
fn history(seed: u64, level: impl Fn(usize, usize) -> f64) -> Vec<Series> {
    history_of(seed, RUNS, level)
}

fn history_of(seed: u64, runs: usize, level: impl Fn(usize, usize) -> f64) -> Vec<Series> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let figures = real_rounds();
    let last = figures.len() - 1;
    let configuration = Configuration { scenario: "hello".into(), load: "throughput".into(), connections: 64, pipeline: 1, tool: "builtin".into() };
    figures
        .iter()
        .enumerate()
        .map(|(s, (name, rounds))| Series {
            contestant: if s == last { "control".into() } else { name.clone() },
            control: s == last,
            configuration: configuration.clone(),
            points: (0..runs)
                .map(|r| Point {
                    run_id: format!("run-{r:02}"),
                    started_utc: format!("2026-01-01T00:{r:02}:00Z"),
                    commit: None,
                    dirty: None,
                    median: run_figure(rounds, level(s, r), &mut rng),
                    ci95: None,
                    median_adjusted: None,
                })
                .collect(),
            change_points: Vec::new(),
        })
        .collect()
}

fn changes(s: &Series) -> Vec<(usize, Cause)> {
    s.change_points.iter().map(|c| (c.index, c.cause)).collect()
}

#[test]
fn the_machines_step_and_a_servers_own_are_told_apart() {
    for seed in 0..SEEDS {
        let mut series = history(seed, |s, r| (if r >= MACHINE_AT { MACHINE_STEP } else { 1.0 }) * (if s == 0 && r >= SERVER_AT { SERVER_STEP } else { 1.0 }));
        analyse(&mut series, Settings::default());
        let found = changes(&series[0]);
        assert_eq!(found.len(), 2, "seed {seed}: {:?}", series[0].change_points);
        assert_eq!(found[0], (MACHINE_AT, Cause::Machine), "seed {seed}");
        assert_eq!(found[1].1, Cause::Server, "seed {seed}");
        assert!(found[1].0.abs_diff(SERVER_AT) <= PLACE_TOLERANCE, "seed {seed}: found at {}", found[1].0);
        let own = &series[0].change_points[1];
        assert!((own.ratio - SERVER_STEP).abs() < 0.02, "seed {seed}: the size of the step: {own:?}");
        assert!(own.ratio_ci95.0 < own.ratio && own.ratio < own.ratio_ci95.1 && own.ratio_ci95.1 < 1.0, "seed {seed}: {own:?}");
        assert!(own.p < 0.001);
        for s in &series[1..] {
            assert_eq!(changes(s), [(MACHINE_AT, Cause::Machine)], "seed {seed}: {}", s.contestant);
        }
        assert_eq!(series[0].recent_own_changes(3).count(), 0, "the server's change is not in the last runs");
    }
}

#[test]
fn a_flat_noisy_history_has_no_change_point() {
    for seed in 0..SEEDS {
        let mut series = history_of(1000 + seed, FLAT_RUNS, |_, _| 1.0);
        analyse(&mut series, Settings::default());
        for s in &series {
            assert!(s.change_points.is_empty(), "seed {seed}: {}: {:?}", s.contestant, s.change_points);
        }
    }
}

#[test]
fn a_servers_change_alone_is_its_own_even_in_the_last_runs() {
    for seed in 0..SEEDS {
        // A 30% step three runs from the end: the latest a change point can be found.
        let mut series = history(2000 + seed, |s, r| if s == 1 && r >= RUNS - 3 { 0.7 } else { 1.0 });
        analyse(&mut series, Settings::default());
        assert_eq!(changes(&series[1]), [(RUNS - 3, Cause::Server)], "seed {seed}");
        assert_eq!(series[1].recent_own_changes(3).count(), 1, "seed {seed}: the gate's case");
        assert!(series.iter().filter(|s| s.contestant != series[1].contestant).all(|s| s.change_points.is_empty()), "seed {seed}");
    }
}

#[test]
fn a_step_the_control_does_not_share_is_not_the_machines() {
    for seed in 0..SEEDS {
        let mut series = history(3000 + seed, |s, r| if s != 6 && r >= MACHINE_AT { MACHINE_STEP } else { 1.0 });
        analyse(&mut series, Settings::default());
        assert!(series[6].change_points.is_empty(), "seed {seed}");
        for s in &series[..6] {
            assert_eq!(changes(s), [(MACHINE_AT, Cause::Server)], "seed {seed}: without the control's change it is each server's: {}", s.contestant);
        }
    }
}
