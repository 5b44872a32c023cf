//! The machine model (`model::machine_model`) on a fake machine whose cross-CPU regime switches between two
//! levels in stretches of seconds, as the 2-CPU VM's does: servers with planted differences, rounds
//! interleaved in passes in a shuffled order, each round's req/s and CPU per request moved by the regime it
//! fell in. The adjusted figures recover the planted differences with narrower intervals than the raw ones,
//! never separate two equal servers, and leave a run in one regime where it was; across two runs in
//! different regimes, a server slowed by 10% is `worse`, never `machine`.

#[path = "fixtures/runs/synthetic.rs"]
#[allow(dead_code)] // the builder's planted configurations are for the compare tests
mod synthetic;

use serverbench::model::machine_model::{refit, REFERENCE_CROSS_CPU_PER_MS};
use serverbench::model::{ranks, LatencyPoints, RoundCpuSpeed, RunResult};

/// Planted req/s of each server: two pairs of equals, and others 10%, 20% and 50% apart.
const LEVELS: [(&str, f64); 6] =
    [("c-epoll", 100e3), ("c-epoll-edge", 100e3), ("go-net", 110e3), ("rust-tokio", 120e3), ("cpp-asio", 120e3), ("c-io_uring", 150e3)];
const ROUNDS: usize = 12;
/// How req/s moves with the cross-CPU rate on the VM (its fitted slope, docs/methodology.md).
const SLOPE: f64 = 0.15;

/// A small deterministic noise, ±2%.
fn noise(i: usize) -> f64 {
    1.0 + ((i * 7919 + 13) % 101) as f64 / 100.0 * 0.04 - 0.02
}

/// How req/s moves with the server CPUs' speed (their system calls a ms against the run's median).
const SPEED_SLOPE: f64 = 0.5;

/// The fake machine's run: `regime(t)` is the cross-CPU rate at second t, the server CPUs at full speed.
fn fake_run(regime: impl Fn(f64) -> f64) -> RunResult {
    fake_run_at(regime, |_| 1.0, 0)
}

/// The fake machine's run: `regime(t)` is the cross-CPU rate at second t, `speed(t)` the server CPUs'
/// speed (1 = full); `draw` chooses the noise each round takes (another run's, with another draw).
fn fake_run_at(regime: impl Fn(f64) -> f64, speed: impl Fn(f64) -> f64, draw: usize) -> RunResult {
    let configs: Vec<synthetic::Config> = LEVELS
        .iter()
        .map(|(name, rps)| synthetic::Config { factors: vec![1.0; ROUNDS], ..synthetic::Config::new(name, "hello", 64, *rps) })
        .collect();
    let mut run = synthetic::run("fake-machine", &configs);
    run.measurements.retain(|m| LEVELS.iter().any(|(n, _)| *n == m.contestant));
    assert_eq!(run.measurements.len(), LEVELS.len());
    for (s, m) in run.measurements.iter_mut().enumerate() {
        let level = LEVELS.iter().find(|(n, _)| *n == m.contestant).unwrap().1;
        for (p, r) in m.rounds.iter_mut().filter(|r| !r.warmup).enumerate() {
            // Pass p, this server's place in the pass shuffled: ((s + 3p) mod 6); 0.7 s a round.
            let t = (p * LEVELS.len() + (s + 3 * p) % LEVELS.len()) as f64 * 0.7;
            let cross = regime(t);
            let machine = (cross / REFERENCE_CROSS_CPU_PER_MS).powf(SLOPE) * speed(t).powf(SPEED_SLOPE);
            let n = noise(s * 31 + p + draw * 577);
            r.load.requests = (level * machine * n * r.load.duration_s).round() as u64;
            r.server.cpu_us_per_request = Some(2e6 / level / machine / n);
            // p99 as a closed loop has it: twice the 64 connections' mean wait, 64 / req/s.
            r.load.latency = serverbench::stats::histogram::new_latency_histogram();
            r.tool_latency_ns = Some(LatencyPoints { p99: Some(2.0 * 64.0 * 1e9 / (level * machine * n)), ..LatencyPoints::default() });
            r.machine.cross_cpu_per_ms = Some(cross);
            r.machine.cpu_speed = vec![RoundCpuSpeed { cpu: 1, role: "server".into(), user_per_ms: 500_000.0 * speed(t), syscall_per_ms: 5_000.0 * speed(t) }];
            r.machine.started_s = Some(t);
            r.machine.drift_factor = None;
            r.machine.machine_factors = None;
        }
    }
    run
}

/// Stretches of about 10 s, slow (3,000) and fast (15,000) in turn, with an uneven start.
fn switching(t: f64) -> f64 {
    if (((t + 3.0) / 10.0) as usize).is_multiple_of(2) { 3_000.0 } else { 15_000.0 }
}

/// Each server's median req/s and its interval's half-width in percent.
fn medians(run: &RunResult) -> Vec<(String, f64, f64)> {
    run.measurements
        .iter()
        .map(|m| {
            let s = m.requests_per_s().unwrap();
            (m.contestant.clone(), s.median, s.ci95_relative_pct().unwrap())
        })
        .collect()
}

fn median_of(v: &[(String, f64, f64)], name: &str) -> f64 {
    v.iter().find(|(n, _, _)| n == name).unwrap().1
}

/// The run refitted: the planted differences between servers recovered within 3%, with a median interval
/// less than half the raw one; the refitted run and its medians.
fn recovered_with_narrower_intervals(raw: &RunResult) -> (RunResult, Vec<(String, f64, f64)>) {
    let mut adjusted = raw.clone();
    refit(&mut adjusted);
    let (before, after) = (medians(raw), medians(&adjusted));
    for (name, level) in LEVELS {
        let planted = level / LEVELS[0].1;
        let found = median_of(&after, name) / median_of(&after, LEVELS[0].0);
        assert!((found / planted - 1.0).abs() < 0.03, "{name}: planted {planted:.3}, adjusted {found:.3}");
    }
    let width = |v: &[(String, f64, f64)]| serverbench::stats::rounds::median(&v.iter().map(|(_, _, w)| *w).collect::<Vec<_>>());
    assert!(width(&after) < width(&before) / 2.0, "intervals: raw ±{:.1}%, adjusted ±{:.1}%", width(&before), width(&after));
    (adjusted, after)
}

#[test]
fn the_adjusted_figures_recover_the_planted_differences_with_narrower_intervals() {
    let (adjusted, after) = recovered_with_narrower_intervals(&fake_run(switching));
    // At the reference rate each server serves its planted level.
    for (name, level) in LEVELS {
        assert!((median_of(&after, name) / level - 1.0).abs() < 0.03, "{name}: {after:?}");
    }
    // The model says what it took out: a fitted slope near the planted one, most of the scatter.
    let fit = &adjusted.machine_model[0];
    let rps = fit.metrics.iter().find(|m| m.metric == "requests_per_s").unwrap();
    assert!(rps.slope_from == "fitted" && (rps.slope - SLOPE).abs() < 0.02, "{rps:?}");
    assert!(rps.explained_pct().is_some_and(|e| e > 80.0), "{rps:?}");
    let cpu = fit.metrics.iter().find(|m| m.metric == "cpu_per_request").unwrap();
    assert!((cpu.slope + SLOPE).abs() < 0.02, "{cpu:?}");
}

/// The server CPUs slow to 0.55x for stretches of about 5 s while the regime stays at the reference: what
/// their speed probe reads is taken out (stage 2), the planted differences recovered with intervals less
/// than half the raw ones, and the slope found near the planted one.
#[test]
fn slow_stretches_of_the_server_cpus_are_taken_out() {
    let slow = |t: f64| if ((t / 5.0) as usize).is_multiple_of(3) { 0.55 } else { 1.0 };
    let (adjusted, _) = recovered_with_narrower_intervals(&fake_run_at(|_| REFERENCE_CROSS_CPU_PER_MS, slow, 0));
    let rps = adjusted.machine_model[0].metrics.iter().find(|m| m.metric == "requests_per_s").unwrap();
    assert_eq!(rps.speed_slope_from.as_deref(), Some("fitted"), "{rps:?}");
    assert!((rps.speed_slope.unwrap() - SPEED_SLOPE).abs() < 0.05, "{rps:?}");
    let cpu = adjusted.machine_model[0].metrics.iter().find(|m| m.metric == "cpu_per_request").unwrap();
    assert!((cpu.speed_slope.unwrap() + SPEED_SLOPE).abs() < 0.05, "{cpu:?}");
}

#[test]
fn two_equal_servers_are_never_told_apart_and_unequal_ones_are() {
    let mut run = fake_run(switching);
    refit(&mut run);
    let places = ranks::places(&run);
    let place = |name: &str| {
        let i = run.measurements.iter().position(|m| m.contestant == name).unwrap();
        places[i].requests_per_s.unwrap()
    };
    let overlap = |a: &str, b: &str| {
        let (x, y) = (place(a), place(b));
        x.best <= y.worst && y.best <= x.worst
    };
    assert!(overlap("c-epoll", "c-epoll-edge") && overlap("rust-tokio", "cpp-asio"), "{places:?}");
    assert!(!overlap("c-epoll", "c-io_uring") && !overlap("go-net", "c-io_uring"), "{places:?}");
    let cpu = |name: &str| {
        let m = run.measurements.iter().find(|m| m.contestant == name).unwrap();
        ranks::cpu_us_per_request(m).unwrap().median
    };
    assert!((cpu("c-epoll") / cpu("c-epoll-edge") - 1.0).abs() < 0.03);
}

#[test]
fn a_run_in_one_regime_is_left_where_it_was_apart_from_the_reference() {
    // Always at 10,000 round trips a ms: nothing for the slope to take out; the medians stay as measured.
    let raw = fake_run(|_| REFERENCE_CROSS_CPU_PER_MS);
    let mut adjusted = raw.clone();
    refit(&mut adjusted);
    for ((name, b, _), (_, a, _)) in medians(&raw).iter().zip(medians(&adjusted)) {
        assert!((a / b - 1.0).abs() < 0.02, "{name}: {b} → {a}");
    }
    let rps = adjusted.machine_model[0].metrics.iter().find(|m| m.metric == "requests_per_s").unwrap();
    assert_eq!(rps.slope_from, "default", "one regime spans nothing to fit a slope on: {rps:?}");
}

#[test]
fn a_probe_that_timed_its_own_descheduling_does_not_move_its_round() {
    // A cross-CPU probe of 3 round trips a ms (its threads descheduled, on a day of heavy steal) is no
    // regime: taken as a covariate, its log (−8) would multiply the round's req/s.
    let mut run = fake_run(switching);
    let (m, r) = (0, 3);
    let rounds: Vec<usize> = (0..run.measurements[m].rounds.len()).filter(|&i| !run.measurements[m].rounds[i].warmup).collect();
    run.measurements[m].rounds[rounds[r]].machine.cross_cpu_per_ms = Some(3.0);
    refit(&mut run);
    let round = &run.measurements[m].rounds[rounds[r]];
    let factor = round.machine.machine_factors.unwrap().requests_per_s;
    assert!(factor > 0.7 && factor < 1.4, "the round's req/s divided by {factor}");
    let fit = &run.machine_model[0];
    assert_eq!(fit.rounds_without_cross_cpu, 1, "{fit:?}");
    let rps = fit.metrics.iter().find(|m| m.metric == "requests_per_s").unwrap();
    assert!((rps.slope - SLOPE).abs() < 0.02, "the slope is the other rounds': {rps:?}");
}

/// Two runs of the fake machine across a change of regime: A in the slow one (3,000 round trips a ms), B in
/// the fast one (15,000), each round's noise drawn afresh, and in B one server at a time 10% or 20% slower
/// (req/s times 0.9 or 0.8, CPU per request and p99 over it). Both runs refitted, `compare` states every figure
/// at the reference rate: the slowed server is `worse` on req/s and CPU per request, its p99 neither
/// `machine` nor `same`, and no unchanged server is `better` or `worse`, nor `machine` on req/s or CPU per
/// request. (Their p99 may read `machine`: it moves with the regime as 1/req/s does here, by a slope of
/// −0.15, and the model takes out the default −0.2, which a run in one regime cannot fit: 5^0.05 ≈ 1.08
/// is left, the same for every server.) Without the model (figures as measured, B 1.27x
/// faster by the regime alone) the slowed server's req/s would read faster, not slower.
#[test]
fn a_server_slowed_across_a_regime_change_is_worse_on_the_fake_machine() {
    use serverbench::compare::{compare, Rules, Verdict};
    let mut a = fake_run_at(|_| 3_000.0, |_| 1.0, 1);
    let a_as_measured = medians(&a);
    refit(&mut a);
    for (slowed, _) in LEVELS {
        for speed in [0.9, 0.8] {
            let mut b = fake_run_at(|_| 15_000.0, |_| 1.0, 2);
            synthetic::slow(&mut b, slowed, speed);
            let as_measured = median_of(&medians(&b), slowed) / median_of(&a_as_measured, slowed);
            assert!(as_measured > 1.0, "{slowed} {speed}: as measured B/A {as_measured:.3}, the regime's gain hides the loss");
            refit(&mut b);
            let c = compare(&a, &b, Rules::default());
            for row in &c.rows {
                let v: Vec<Verdict> = row.changes.iter().map(|ch| ch.verdict).collect();
                assert!(!v.contains(&Verdict::Better), "{} ({slowed} {speed}): {v:?}", row.key.contestant);
                if row.key.contestant == slowed {
                    assert_eq!((v[0], v[2]), (Verdict::Worse, Verdict::Worse), "{slowed} {speed}: {v:?}");
                    assert!(!matches!(v[1], Verdict::Machine | Verdict::Same), "{slowed} {speed}: p99 {v:?}");
                } else {
                    assert!(!v.contains(&Verdict::Worse), "{} unchanged ({slowed} {speed}): {v:?}", row.key.contestant);
                    assert!(v[0] != Verdict::Machine && v[2] != Verdict::Machine, "{} unchanged ({slowed} {speed}): {v:?}", row.key.contestant);
                }
            }
        }
    }
}
