//! How steady the machine was during a run, in one sentence for the report header: rounds left out as
//! disturbed, rounds flagged cpu-drift, the spread of the CPU speed probes and of the cross-CPU probe,
//! interference and the waits for quiet CPUs.

use crate::model::verdict::Metric;
use crate::model::{RunResult, Flag};
use crate::stats::rounds::median;

pub fn describe(run: &RunResult) -> String {
    let rounds: Vec<_> = run.measurements.iter().flat_map(|m| &m.rounds).collect();
    let probed: Vec<f64> = rounds.iter().filter_map(|r| r.machine.speed_index).collect();
    if rounds.is_empty() {
        return "no rounds yet".into();
    }
    let measured = rounds.iter().filter(|r| !r.warmup).count();
    let count = |flag: Flag| rounds.iter().filter(|r| !r.warmup && r.has_flag(&flag)).count();
    let mut parts = vec![format!(
        "{measured} measured rounds, {} left out as {disturbed} (and run again), {} flagged {cpu_drift} (kept)",
        count(Flag::Disturbed),
        count(Flag::CpuDrift),
        disturbed = Flag::Disturbed,
        cpu_drift = Flag::CpuDrift
    )];
    if probed.is_empty() {
        parts.push("no CPU speed probes".into());
    } else {
        let lo = probed.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = probed.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        parts.push(format!("CPU speed around each round {lo:.2}x to {hi:.2}x of the run's median"));
    }
    let cross: Vec<f64> = rounds.iter().filter_map(|r| r.machine.cross_cpu_per_ms).collect();
    if !cross.is_empty() {
        let lo = cross.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = cross.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        parts.push(format!("between client and server CPUs {lo:.0} to {hi:.0} cache-line round trips a ms (median {:.0})", median(&cross)));
    }
    let foreign: Vec<f64> = rounds.iter().filter_map(|r| r.machine.foreign_pct).collect();
    let steal: Vec<f64> = rounds.iter().filter_map(|r| r.machine.steal_pct).collect();
    if !foreign.is_empty() {
        parts.push(format!(
            "foreign time on the server CPUs median {:.1}%, at most {:.1}%; steal at most {:.1}%",
            median(&foreign),
            foreign.iter().copied().fold(0.0, f64::max),
            steal.iter().copied().fold(0.0, f64::max)
        ));
    }
    let waits: Vec<f64> = rounds.iter().filter_map(|r| r.machine.quiet_wait_ms).collect();
    if !waits.is_empty() {
        parts.push(format!("waits for quiet server CPUs at most {:.0} ms", waits.iter().copied().fold(0.0, f64::max)));
    }
    parts.extend(run.machine_model.iter().map(model_taken_out));
    parts.join("; ")
}

/// What the machine model took out of one kind of load: "machine model (hello, 64 connections, throughput;
/// at 10000 round trips a ms): req/s slope +0.15 (fitted), on the server CPUs' speed +0.50 (fitted),
/// round-to-round scatter 12.1% → 6.8% (68% explained), …".
fn model_taken_out(fit: &crate::model::machine_model::MachineFit) -> String {
    let metrics: Vec<String> = fit
        .metrics
        .iter()
        .map(|m| {
            let name: &str = match Metric::from_key(&m.metric) {
                Some(metric) => metric.name(),
                None => &m.metric,
            };
            let scatter = match (m.scatter_pct, m.scatter_adjusted_pct, m.explained_pct()) {
                (Some(b), Some(a), Some(e)) => format!(", round-to-round scatter {b:.1}% → {a:.1}% ({e:.0}% explained)"),
                _ => String::new(),
            };
            let speed = match (m.speed_slope, m.speed_slope_from.as_deref()) {
                (Some(_), Some("default")) => ", none on the server CPUs' speed (it varied too little)".to_string(),
                (Some(b), Some(from)) => format!(", on the server CPUs' speed {b:+.2} ({from})"),
                _ => String::new(),
            };
            format!("{name} slope {:+.2} ({}){speed}{scatter}", m.slope, m.slope_from)
        })
        .collect();
    let without = if fit.rounds_without_cross_cpu > 0 {
        format!(
            ", {} of {} rounds without a cross-CPU probe within {}x of it (speed and drift stages only)",
            fit.rounds_without_cross_cpu,
            fit.rounds,
            crate::model::machine_model::CROSS_CPU_RANGE
        )
    } else {
        String::new()
    };
    format!(
        "machine model ({}; figures at {:.0} cache-line round trips a ms{without}): {}",
        fit.load,
        fit.reference_cross_cpu_per_ms,
        metrics.join(", ")
    )
}
