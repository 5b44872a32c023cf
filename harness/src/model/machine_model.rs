//! A model of the machine in every estimate: each round's req/s, p99 and CPU per request taken to a stated
//! state of the machine, from what was measured around the round, so that a row's median no longer depends
//! on when its rounds fell, and two runs compare across a change of the machine's regime.
//!
//! Three stages, fitted over a run's rounds of one kind of load (every server measured at the same
//! connections and level, interleaved in the same passes):
//! 1. **The cross-CPU rate.** On the 2-CPU VM the cost of passing a cache line between the client's and
//!    the server's CPUs switches between regimes up to 10x apart, and it alone explains most of a server's
//!    round-to-round scatter (docs/methodology.md, "The machine model"). Each figure's log is fitted on the
//!    log of the round's `cross_cpu_per_ms` against `REFERENCE_CROSS_CPU_PER_MS`: one slope pooled over the
//!    servers, each server's own deviation kept only as far as its rounds show it (`stats::slope`). A run
//!    whose rounds span too little of the rate takes the default slope, measured here, and says so.
//! 2. **The server CPUs' speed.** The VM's CPUs run slower for stretches of seconds; the probe around each
//!    round that times a cheap system call on the server's CPUs (`syscall_per_ms`) reads it. What stage 1
//!    left of req/s and CPU per request is fitted on the log of that speed against the load's median, the
//!    same way (pooled, shrunk); a run whose speed varied too little for a slope takes none (0). Where it
//!    varied, it took a further tenth to a fifth out of the round-to-round scatter (docs/methodology.md).
//! 3. **The drift of the rest.** What the two do not explain, the other servers' rounds near in time
//!    still see (`stats::drift`): the drift factor of each round is taken from the figures of stages 1–2.
//!
//! A round's factor is the product of the three; its figure divided by it is the figure at the reference state.
//! The run's own probes are its covariates, so `report` and `compare` refit the model from any stored
//! run.json, old ones included. Rounds without a cross-CPU probe (client hosts, a server host, shared
//! CPUs) get the last two stages alone (without a speed probe, the last), and the model says how many
//! there were.

use crate::stats::drift::{factors, Point, WINDOW_S};
use crate::stats::slope::{self, Observation};

use super::verdict::Metric;
pub use super::machine_fit::{MachineFit, MetricFit};
use super::{MachineFactors, Measurement, RunResult};

/// The state every adjusted figure is stated at: 10,000 cache-line round trips a ms between the client's
/// and the server's CPUs, between the two regimes seen on the 2-CPU VM (about 3,000 and 15,000) and a
/// round number a reader can hold; written in the run beside each fit.
pub const REFERENCE_CROSS_CPU_PER_MS: f64 = 10_000.0;

/// How far from the reference a cross-CPU probe may read and still describe the machine's regime: the
/// VM's regimes lie up to 10x apart (about 1,300 to 36,000 round trips a ms in the shared data). A probe
/// further out timed its own threads being descheduled (on a day of 50% steal, rates of 1 to 3 round trips
/// a ms were read), not a regime; as a covariate its log would carry the fit and multiply the round's
/// figures, so such a round is taken as one without a probe (the speed and drift stages alone).
pub const CROSS_CPU_RANGE: f64 = 10.0;

/// The slope on log cross-CPU rate a run that spans too little of it takes: the fits of the eight real
/// runs in ../shared/data ranged over +0.14 to +0.20 (req/s), −0.13 to −0.22 (p99) and −0.13 to −0.19
/// (CPU per request).
pub fn default_slope(metric: Metric) -> f64 {
    match metric {
        Metric::RequestsPerS => 0.15,
        Metric::P99 => -0.2,
        Metric::CpuPerRequest => -0.15,
    }
}

/// Whether a figure takes the server CPUs' speed into its factor (stage 2). Where the speed varied (a log
/// spread of 0.1 or more) req/s and CPU per request moved with it alike in every run of ../shared/data and
/// this VM's two default runs (slopes +0.36 to +0.61 and −0.17 to −0.61), while p99's slopes (−0.38 to
/// −1.45) left its scatter larger in two runs of five: p99 is left to the other stages. A run whose speed
/// varied less takes no slope (0): there the probe's own noise is most of what it reads, and a default
/// slope widened the intervals it was meant to narrow (regime-change B: req/s scatter 3.6% → 4.8%).
fn adjusted_for_speed(metric: Metric) -> bool {
    metric != Metric::P99
}

/// Fits the model on the run's rounds as they are and sets every counted round's factors (and its
/// `drift_factor`, the second stage of req/s); the run's `machine_model` says what it did. Loads at a fixed
/// rate are left as measured: the client paces their req/s.
pub fn refit(run: &mut RunResult) {
    let mut fits = Vec::new();
    for group in groups(&run.measurements) {
        if let Some(fit) = refit_group(&mut run.measurements, &group) {
            fits.push(fit);
        }
    }
    run.machine_model = fits;
}

/// Refits the kind of load that measurement `index` belongs to alone (after each of its rounds, while a run
/// measures), leaving the other loads' fits as they were.
pub fn refit_load_of(run: &mut RunResult, index: usize) {
    let Some(group) = groups(&run.measurements).into_iter().find(|g| g.contains(&index)) else { return };
    let label = group_label(&run.measurements[index]);
    let fit = refit_group(&mut run.measurements, &group);
    run.machine_model.retain(|f| f.load != label);
    run.machine_model.extend(fit);
}

/// The measurements measured together: same scenario, connections, pipeline and load; rate loads left out.
fn groups(measurements: &[Measurement]) -> Vec<Vec<usize>> {
    let mut keys: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, m) in measurements.iter().enumerate().filter(|(_, m)| m.rate_rps.is_none() && m.load_fraction.is_none()) {
        let key = group_label(m);
        match keys.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(i),
            None => keys.push((key, vec![i])),
        }
    }
    keys.into_iter().map(|(_, v)| v).collect()
}

fn group_label(m: &Measurement) -> String {
    let pipeline = if m.pipeline > 1 { format!(", pipeline {}", m.pipeline) } else { String::new() };
    format!("{}, {} connections{pipeline}, {}", m.scenario, m.connections, m.load_label())
}

/// One figure of one counted round: its series (the measurement within the group), its index in that
/// measurement's rounds, when it began, its value as measured and its covariate.
struct Figure {
    series: usize,
    round: usize,
    t: Option<f64>,
    value: f64,
    covariate: Option<f64>,
    /// The server CPUs' log speed against the group's median.
    speed: Option<f64>,
}

fn refit_group(measurements: &mut [Measurement], group: &[usize]) -> Option<MachineFit> {
    let counted: Vec<(usize, usize)> = group
        .iter()
        .enumerate()
        .flat_map(|(s, &mi)| measurements[mi].rounds.iter().enumerate().filter(|(_, r)| r.counts()).map(move |(ri, _)| (s, ri)))
        .collect();
    if counted.is_empty() {
        return None;
    }
    let round = |s: usize, ri: usize| &measurements[group[s]].rounds[ri];
    let covariate = |s: usize, ri: usize| {
        let plausible = |c: &f64| *c >= REFERENCE_CROSS_CPU_PER_MS / CROSS_CPU_RANGE && *c <= REFERENCE_CROSS_CPU_PER_MS * CROSS_CPU_RANGE;
        round(s, ri).machine.cross_cpu_per_ms.filter(plausible).map(|c| (c / REFERENCE_CROSS_CPU_PER_MS).ln())
    };
    let without = counted.iter().filter(|(s, ri)| covariate(*s, *ri).is_none()).count();
    let log_speed = |s: usize, ri: usize| {
        let logs: Vec<f64> = round(s, ri).machine.cpu_speed.iter().filter(|c| c.role == "server" && c.syscall_per_ms > 0.0).map(|c| c.syscall_per_ms.ln()).collect();
        (!logs.is_empty()).then(|| logs.iter().sum::<f64>() / logs.len() as f64)
    };
    let speeds: Vec<f64> = counted.iter().filter_map(|&(s, ri)| log_speed(s, ri)).collect();
    let median_speed = (!speeds.is_empty()).then(|| crate::stats::rounds::median(&speeds));
    let speed = |s: usize, ri: usize| Some(log_speed(s, ri)? - median_speed?);
    let mut metrics = Vec::new();
    // factors[k][metric]: the factor of counted round k for each metric.
    let mut found = vec![[None::<f64>; 3]; counted.len()];
    let mut rps_drift = Vec::new();
    for (mk, metric) in Metric::ALL.into_iter().enumerate() {
        let figures: Vec<(usize, Figure)> = counted
            .iter()
            .enumerate()
            .filter_map(|(k, &(s, ri))| {
                let r = round(s, ri);
                let value = metric.as_measured(r).filter(|v| *v > 0.0)?;
                Some((k, Figure { series: s, round: ri, t: r.machine.started_s, value, covariate: covariate(s, ri), speed: speed(s, ri) }))
            })
            .collect();
        if figures.is_empty() {
            continue;
        }
        let observations: Vec<Observation> = figures
            .iter()
            .filter_map(|(_, f)| f.covariate.map(|x| Observation { series: f.series, value: f.value.ln(), covariate: x }))
            .collect();
        let slopes = slope::fit(&observations, default_slope(metric));
        let mut stage1: Vec<f64> = figures
            .iter()
            .map(|(_, f)| f.covariate.map_or(1.0, |x| slopes.factor(f.series, x)))
            .collect();
        let on_speed: Vec<Observation> = figures
            .iter()
            .zip(&stage1)
            .filter_map(|((_, f), c)| f.speed.map(|x| Observation { series: f.series, value: (f.value / c).ln(), covariate: x }))
            .collect();
        let speed_slopes = (adjusted_for_speed(metric) && !on_speed.is_empty()).then(|| slope::fit(&on_speed, 0.0));
        if let Some(b) = &speed_slopes {
            for ((_, f), c) in figures.iter().zip(stage1.iter_mut()) {
                if let Some(x) = f.speed {
                    *c *= b.factor(f.series, x);
                }
            }
        }
        let timed: Vec<(usize, Point)> = figures
            .iter()
            .zip(&stage1)
            .enumerate()
            .filter_map(|(j, ((_, f), c))| f.t.map(|t| (j, Point { series: f.series, t, value: f.value / c })))
            .collect();
        let drift = factors(&timed.iter().map(|(_, p)| *p).collect::<Vec<_>>(), WINDOW_S);
        let mut drift_of = vec![None; figures.len()];
        for ((j, _), d) in timed.iter().zip(drift) {
            drift_of[*j] = d;
        }
        let mut before = Vec::new();
        let mut after = Vec::new();
        for (j, (k, f)) in figures.iter().enumerate() {
            let factor = stage1[j] * drift_of[j].unwrap_or(1.0);
            found[*k][mk] = Some(factor);
            before.push((f.series, f.value.ln()));
            after.push((f.series, (f.value / factor).ln()));
            if metric == Metric::RequestsPerS {
                rps_drift.push((f.series, f.round, drift_of[j]));
            }
        }
        let pct = |v: Option<f64>| v.map(|s| s * 100.0);
        metrics.push(MetricFit {
            metric: metric.key().to_string(),
            slope: slopes.pooled,
            slope_from: if slopes.fitted { "fitted" } else { "default" }.to_string(),
            speed_slope: speed_slopes.as_ref().map(|b| b.pooled),
            speed_slope_from: speed_slopes.as_ref().map(|b| if b.fitted { "fitted" } else { "default" }.to_string()),
            scatter_pct: pct(slope::median_scatter(&before)),
            scatter_adjusted_pct: pct(slope::median_scatter(&after)),
        });
    }
    for (s, ri, d) in rps_drift {
        measurements[group[s]].rounds[ri].machine.drift_factor = d;
    }
    let any = found.iter().flatten().flatten().any(|f| (f - 1.0).abs() > 0.0);
    for (k, &(s, ri)) in counted.iter().enumerate() {
        let [rps, p99, cpu] = found[k];
        let r = &mut measurements[group[s]].rounds[ri];
        r.machine.machine_factors = any.then(|| MachineFactors {
            requests_per_s: rps.unwrap_or(1.0),
            p99: p99.unwrap_or(1.0),
            cpu_per_request: cpu.unwrap_or(1.0),
        });
    }
    let first = &measurements[group[0]];
    any.then(|| MachineFit {
        load: group_label(first),
        reference_cross_cpu_per_ms: REFERENCE_CROSS_CPU_PER_MS,
        rounds: counted.len(),
        rounds_without_cross_cpu: without,
        metrics,
    })
}
