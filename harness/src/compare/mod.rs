//! `serverbench compare RUN_A RUN_B`: per contestant and configuration, the ratio B/A of req/s, p99 and
//! server CPU per request over the rounds that count (Hodges–Lehmann, with its distribution-free 95%
//! interval), tested with the Mann–Whitney U test, and a verdict where the change is beyond noise: beyond
//! the noise band (`--noise`) as a whole interval, and not explained by the machine itself, whose speed both
//! runs probed around every round. Markdown (or JSON) to stdout, an HTML page next to run B.

pub mod html;
pub mod json;
pub mod markdown;

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::model::{Measurement, Round, RunResult, FLAG_CLIENT_BOUND};
use crate::stats::rank::{mann_whitney, RankTest};
use crate::stats::rounds::median;

pub const DEFAULT_ALPHA: f64 = 0.05;
/// Changes smaller than this are noise, however significant (criterion's noise threshold does the same).
pub const DEFAULT_NOISE_PCT: f64 = 3.0;

/// The rules of a comparison.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rules {
    pub alpha: f64,
    /// The band [1/(1+n), 1+n] of B/A that counts as noise, n = noise_pct / 100.
    pub noise_pct: f64,
}

impl Default for Rules {
    fn default() -> Self {
        Rules { alpha: DEFAULT_ALPHA, noise_pct: DEFAULT_NOISE_PCT }
    }
}

/// Compares the run in folder `run_b` against the one in `run_a` (the arguments of `cli::compare`): Markdown,
/// or JSON with `json`, on stdout; the HTML page to `output`, by default next to run B.
pub fn run(run_a: &Path, run_b: &Path, output: Option<PathBuf>, rules: Rules, json: bool) -> anyhow::Result<()> {
    anyhow::ensure!(rules.alpha > 0.0 && rules.alpha < 1.0, "--alpha must be between 0 and 1, e.g. 0.05");
    anyhow::ensure!(rules.noise_pct >= 0.0, "--noise is a percentage of at least 0, e.g. 3");
    let a = crate::report::load(run_a)?;
    let b = crate::report::load(run_b)?;
    let cmp = compare(&a, &b, rules);
    if json {
        println!("{}", serde_json::to_string_pretty(&json::render(&cmp))?);
    } else {
        print!("{}", markdown::render(&cmp));
    }
    let out = output.unwrap_or_else(|| run_b.join(format!("compare-{}.html", a.run_id)));
    std::fs::write(&out, html::render(&cmp))
        .with_context(|| format!("cannot write '{}'; choose another path with -o", out.display()))?;
    eprintln!("serverbench: wrote {}", out.display());
    Ok(())
}

/// The three figures compared, each from every measured round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    RequestsPerS,
    P99,
    CpuPerRequest,
}

impl Metric {
    pub const ALL: [Metric; 3] = [Metric::RequestsPerS, Metric::P99, Metric::CpuPerRequest];

    pub fn name(self) -> &'static str {
        match self {
            Metric::RequestsPerS => "req/s",
            Metric::P99 => "p99",
            Metric::CpuPerRequest => "CPU/req",
        }
    }
    pub fn higher_is_better(self) -> bool {
        self == Metric::RequestsPerS
    }
    /// The round's value: req/s, the round's own p99 (ns), server CPU µs per request.
    pub fn of(self, r: &Round) -> Option<f64> {
        let v = match self {
            Metric::RequestsPerS => Some(r.requests_per_s_at_usual_speed()),
            Metric::P99 => r.latency().p99,
            Metric::CpuPerRequest => r.server.cpu_us_per_request,
        };
        v.filter(|v| v.is_finite())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Beyond noise, in the good direction.
    Better,
    /// Beyond noise, in the bad direction: a regression.
    Worse,
    /// Within noise.
    Same,
    /// Beyond noise as measured, but within it once the machine's own change of speed between the runs
    /// is taken out: the machine moved, not the contestant.
    Machine,
    /// Fewer than two rounds on a side: nothing can be said.
    Untested,
}

impl Verdict {
    /// A marker that reads without colour.
    pub fn marker(self) -> &'static str {
        match self {
            Verdict::Better => "▲ better",
            Verdict::Worse => "▼ worse",
            Verdict::Same => "~ same",
            Verdict::Machine => "≈ machine",
            Verdict::Untested => "? untested",
        }
    }

    /// The word other tools read (compare --json).
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Same => "same",
            Verdict::Machine => "machine",
            Verdict::Untested => "untested",
        }
    }
}

/// One metric of one configuration, A against B.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub metric: Metric,
    pub rounds_a: usize,
    pub rounds_b: usize,
    pub median_a: Option<f64>,
    pub median_b: Option<f64>,
    /// B/A: the Hodges–Lehmann estimate (the median of every ratio b/a).
    pub ratio: Option<f64>,
    /// Its distribution-free 95% interval.
    pub ratio_ci95: Option<(f64, f64)>,
    pub test: Option<RankTest>,
    /// The interval with the machine's change taken out (absent when the machine did not move).
    pub corrected_ci95: Option<(f64, f64)>,
    pub verdict: Verdict,
}

impl Change {
    /// `machine` is B/A of the machine's speed (1 when it did not move beyond the noise band).
    pub fn of(metric: Metric, a: &[f64], b: &[f64], rules: Rules, machine: f64) -> Change {
        let med = |x: &[f64]| (!x.is_empty()).then(|| median(x));
        let test = mann_whitney(a, b);
        let ratio_ci95 = test.and_then(|t| t.ratio_ci95);
        let band = 1.0 + rules.noise_pct / 100.0;
        // The whole interval beyond the band: up or down.
        let beyond = |(lo, hi): (f64, f64)| (lo > band).then_some(true).or((hi < 1.0 / band).then_some(false));
        // A faster machine raises req/s and lowers latency and CPU per request by the same factor.
        let expected = if metric.higher_is_better() { machine } else { 1.0 / machine };
        let corrected_ci95 = ratio_ci95.filter(|_| machine != 1.0).map(|(lo, hi)| (lo / expected, hi / expected));
        let verdict = match (test, ratio_ci95) {
            (None, _) => Verdict::Untested,
            (Some(t), Some(ci)) if t.p < rules.alpha && beyond(ci).is_some() => match beyond(corrected_ci95.unwrap_or(ci)) {
                None => Verdict::Machine,
                Some(up) if up == metric.higher_is_better() => Verdict::Better,
                Some(_) => Verdict::Worse,
            },
            _ => Verdict::Same,
        };
        Change {
            metric,
            rounds_a: a.len(),
            rounds_b: b.len(),
            median_a: med(a),
            median_b: med(b),
            ratio: test.map(|t| t.ratio),
            ratio_ci95,
            test,
            corrected_ci95,
            verdict,
        }
    }
}

/// How the machine itself changed between the runs: B/A of the median probe speed of each CPU.
#[derive(Debug, Clone, PartialEq)]
pub struct MachineChange {
    pub cpu: usize,
    pub role: String,
    pub user_ratio: f64,
    pub syscall_ratio: f64,
}

/// The machine's change per CPU, and the factor the verdicts correct for: the geometric mean of the
/// server CPUs' user-loop ratios (the loop whose slow stretches follow slow rounds most closely), or 1 when
/// it stays within the noise band or either run has no probes.
pub fn machine_change(a: &RunResult, b: &RunResult, rules: Rules) -> (Vec<MachineChange>, f64) {
    let speeds = |run: &RunResult| {
        let mut per: std::collections::BTreeMap<(usize, String), (Vec<f64>, Vec<f64>)> = Default::default();
        for r in run.measurements.iter().flat_map(|m| &m.rounds) {
            for s in &r.machine.cpu_speed {
                let e = per.entry((s.cpu, s.role.clone())).or_default();
                e.0.push(s.user_per_ms);
                e.1.push(s.syscall_per_ms);
            }
        }
        per
    };
    let (sa, sb) = (speeds(a), speeds(b));
    let mut out = Vec::new();
    for (key, (ua, ca)) in &sa {
        let Some((ub, cb)) = sb.get(key) else { continue };
        out.push(MachineChange { cpu: key.0, role: key.1.clone(), user_ratio: median(ub) / median(ua), syscall_ratio: median(cb) / median(ca) });
    }
    let server: Vec<f64> = out.iter().filter(|c| c.role == "server" && c.user_ratio > 0.0).map(|c| c.user_ratio.ln()).collect();
    let band = 1.0 + rules.noise_pct / 100.0;
    let factor = if server.is_empty() { 1.0 } else { (server.iter().sum::<f64>() / server.len() as f64).exp() };
    let factor = if factor > band || factor < 1.0 / band { factor } else { 1.0 };
    (out, factor)
}

/// The median of a run's cross-CPU probes over its measured rounds.
fn cross_cpu(run: &RunResult) -> Option<f64> {
    let rates: Vec<f64> = run.measurements.iter().flat_map(|m| m.measured_rounds()).filter_map(|r| r.machine.cross_cpu_per_ms).collect();
    (!rates.is_empty()).then(|| median(&rates))
}

/// With at least this many closed-loop configurations in both runs, their common change of req/s tells
/// the machine's change (most servers do not change between two runs of one benchmark).
pub const MIN_ROWS_FOR_COMMON: usize = 8;

/// The servers' common change: the median over the closed-loop configurations of both runs of B/A of req/s
/// (each the Hodges–Lehmann ratio of its rounds); absent with fewer than `MIN_ROWS_FOR_COMMON`. A median,
/// so that a minority of servers that truly changed cannot move it.
fn common_change(pairs: &[(&Measurement, &Measurement)]) -> Option<f64> {
    let values = |m: &Measurement| m.measured_rounds().filter_map(|r| Metric::RequestsPerS.of(r)).collect::<Vec<f64>>();
    let ratios: Vec<f64> = pairs
        .iter()
        .filter(|(a, b)| a.rate_rps.is_none() && b.rate_rps.is_none())
        .filter_map(|(a, b)| mann_whitney(&values(a), &values(b)).map(|t| t.ratio))
        .collect();
    (ratios.len() >= MIN_ROWS_FOR_COMMON).then(|| median(&ratios))
}

/// What identifies a configuration across runs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Key {
    pub scenario: String,
    pub mode: String,
    pub connections: usize,
    pub pipeline: u32,
    pub contestant: String,
}

impl Key {
    fn of(m: &Measurement) -> Key {
        Key {
            scenario: m.scenario.clone(),
            mode: m.load_label(),
            connections: m.connections,
            pipeline: m.pipeline,
            contestant: m.contestant.clone(),
        }
    }
    /// "hello · throughput · 64 connections", with the pipeline depth when above 1.
    pub fn configuration(&self) -> String {
        let pipelined = if self.pipeline > 1 { format!(", pipeline {}", self.pipeline) } else { String::new() };
        format!("{} · {} · {} connections{pipelined}", self.scenario, self.mode, self.connections)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub key: Key,
    /// One per `Metric::ALL`, in that order.
    pub changes: Vec<Change>,
    /// Caveats: client-bound rounds on either side.
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub a: RunLabel,
    pub b: RunLabel,
    pub rules: Rules,
    /// Per CPU, B/A of its probed speed.
    pub machine: Vec<MachineChange>,
    /// The machine's change the verdicts corrected for (1: none beyond the noise band): the servers' common
    /// change where there are enough configurations, else the probes' change on the server CPUs.
    pub machine_factor: f64,
    /// B/A of req/s common to the servers (`common_change`), when there were enough configurations.
    pub servers_common: Option<f64>,
    /// The median cross-CPU rate of each run's measured rounds (cache-line round trips a ms between the
    /// client and server CPUs), when both runs have it.
    pub cross_cpu: Option<(f64, f64)>,
    /// Configurations in the order A measured them, contestants by name within each.
    pub rows: Vec<Row>,
    pub only_a: Vec<Key>,
    pub only_b: Vec<Key>,
    /// Settings that differ between the runs: (what, A, B).
    pub differences: Vec<(String, String, String)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RunLabel {
    pub run_id: String,
    pub started_utc: String,
    pub machine: String,
}

impl RunLabel {
    fn of(run: &RunResult) -> RunLabel {
        let e = &run.environment;
        RunLabel {
            run_id: run.run_id.clone(),
            started_utc: run.started_utc.clone(),
            machine: format!("{}, {} CPUs, {}", e.cpu_model, e.cores, e.kernel),
        }
    }
}

/// Compares every configuration measured in both runs.
pub fn compare(a: &RunResult, b: &RunResult, rules: Rules) -> Comparison {
    let (in_a, in_b) = (measured(a), measured(b));
    let (machine, probed_factor) = machine_change(a, b, rules);
    let pairs: Vec<(&Measurement, &Measurement)> = in_a.iter().filter_map(|(k, ma)| find(&in_b, k).map(|mb| (*ma, mb))).collect();
    let servers_common = common_change(&pairs);
    // The servers themselves say how the machine moved for them; the 15 ms probes are the fallback (they
    // missed a common change of 8% between two default runs that they read as 1.5%).
    let band = 1.0 + rules.noise_pct / 100.0;
    let machine_factor = match servers_common {
        Some(f) if f > band || f < 1.0 / band => f,
        Some(_) => 1.0,
        None => probed_factor,
    };
    let mut rows = Vec::new();
    for (key, ma) in &in_a {
        let Some(mb) = find(&in_b, key) else { continue };
        let values =
            |m: &Measurement, metric: Metric| m.measured_rounds().filter_map(|r| metric.of(r)).collect::<Vec<f64>>();
        let changes = Metric::ALL
            .iter()
            .map(|&metric| Change::of(metric, &values(ma, metric), &values(mb, metric), rules, machine_factor))
            .collect();
        let mut notes = Vec::new();
        for (side, m) in [("A", *ma), ("B", mb)] {
            let bound = m.measured_rounds().filter(|r| r.flags.iter().any(|f| f == FLAG_CLIENT_BOUND)).count();
            if bound > 0 {
                notes.push(format!("{FLAG_CLIENT_BOUND} in {side} ({bound}/{} rounds)", m.measured_rounds().count()));
            }
        }
        rows.push(Row { key: key.clone(), changes, notes });
    }
    let only = |x: &[(Key, &Measurement)], y: &[(Key, &Measurement)]| -> Vec<Key> {
        x.iter().filter(|(k, _)| find(y, k).is_none()).map(|(k, _)| k.clone()).collect()
    };
    Comparison {
        a: RunLabel::of(a),
        b: RunLabel::of(b),
        rules,
        machine,
        machine_factor,
        servers_common,
        cross_cpu: cross_cpu(a).zip(cross_cpu(b)),
        rows,
        only_a: only(&in_a, &in_b),
        only_b: only(&in_b, &in_a),
        differences: differences(a, b),
    }
}

/// The measurements with at least one measured round: configurations in the order the run measured them,
/// contestants by name within each.
fn measured(run: &RunResult) -> Vec<(Key, &Measurement)> {
    let mut v: Vec<(Key, &Measurement)> =
        run.measurements.iter().filter(|m| m.measured_rounds().next().is_some()).map(|m| (Key::of(m), m)).collect();
    let mut order: Vec<String> = Vec::new();
    for (k, _) in &v {
        if !order.contains(&k.configuration()) {
            order.push(k.configuration());
        }
    }
    v.sort_by_key(|(k, _)| (order.iter().position(|c| *c == k.configuration()), k.contestant.clone()));
    v
}

fn find<'a>(list: &[(Key, &'a Measurement)], key: &Key) -> Option<&'a Measurement> {
    list.iter().find(|(k, _)| k == key).map(|(_, m)| *m)
}

/// The settings that make two runs comparable: machine, tools and measurement rules.
fn differences(a: &RunResult, b: &RunResult) -> Vec<(String, String, String)> {
    let facts = |r: &RunResult| -> Vec<(String, String)> {
        let (e, c) = (&r.environment, &r.config);
        let mut v = vec![
            ("CPU".to_string(), e.cpu_model.clone()),
            ("cores".into(), e.cores.to_string()),
            ("kernel".into(), e.kernel.clone()),
            ("memory bytes".into(), e.memory_bytes.to_string()),
            ("serverbench".into(), e.serverbench_version.clone()),
            ("run type".into(), c.run_type.clone()),
            ("server CPUs".into(), c.server_cpus.clone()),
            ("client CPUs".into(), c.client_cpus.clone()),
            ("workers".into(), c.workers.to_string()),
            ("client threads".into(), c.client_threads.to_string()),
            ("warm-up rounds".into(), c.warmup_rounds.to_string()),
            ("measured rounds".into(), c.measured_rounds.to_string()),
            ("round duration s".into(), c.duration_s.map_or("-".into(), |d| d.to_string())),
            ("requests per connection".into(), c.requests_per_connection.map_or("-".into(), |n| n.to_string())),
            ("load tool".into(), c.tool.clone()),
        ];
        v.extend(e.tools.iter().map(|(k, val)| (k.clone(), val.clone())));
        v
    };
    let (fa, fb) = (facts(a), facts(b));
    let get =
        |f: &[(String, String)], k: &str| f.iter().find(|(n, _)| n == k).map_or("-".to_string(), |(_, v)| v.clone());
    let mut out: Vec<(String, String, String)> = Vec::new();
    for (name, _) in fa.iter().chain(&fb) {
        let (va, vb) = (get(&fa, name), get(&fb, name));
        if va != vb && !out.iter().any(|(n, _, _)| n == name) {
            out.push((name.clone(), va, vb));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULES: Rules = Rules { alpha: 0.05, noise_pct: 3.0 };

    fn spread(centre: f64) -> Vec<f64> {
        [1.0, 1.004, 0.996, 1.002, 0.998, 1.001, 0.999, 1.003].iter().map(|f| f * centre).collect()
    }

    #[test]
    fn verdict_follows_the_direction_of_the_metric() {
        let (a, lower) = (spread(100.0), spread(80.0));
        assert_eq!(Change::of(Metric::RequestsPerS, &a, &lower, RULES, 1.0).verdict, Verdict::Worse);
        assert_eq!(Change::of(Metric::P99, &a, &lower, RULES, 1.0).verdict, Verdict::Better);
        assert_eq!(Change::of(Metric::CpuPerRequest, &lower, &a, RULES, 1.0).verdict, Verdict::Worse);
        assert_eq!(Change::of(Metric::RequestsPerS, &a, &a, RULES, 1.0).verdict, Verdict::Same);
        assert_eq!(Change::of(Metric::RequestsPerS, &a, &[90.0], RULES, 1.0).verdict, Verdict::Untested);
    }

    #[test]
    fn a_significant_change_inside_the_noise_band_is_the_same() {
        // +1.5%, clearly significant over 8 rounds each, but below the 3% band.
        let c = Change::of(Metric::RequestsPerS, &spread(100.0), &spread(101.5), RULES, 1.0);
        assert!(c.test.unwrap().p < 0.01);
        assert_eq!(c.verdict, Verdict::Same);
    }

    #[test]
    fn a_machine_change_is_not_a_contestant_change() {
        // Everything 20% faster on a machine whose probes ran 20% faster: the machine moved.
        let (a, b) = (spread(100.0), spread(120.0));
        assert_eq!(Change::of(Metric::RequestsPerS, &a, &b, RULES, 1.2).verdict, Verdict::Machine);
        assert_eq!(Change::of(Metric::CpuPerRequest, &b, &a, RULES, 1.2).verdict, Verdict::Machine);
        // 0.64x on a machine 20% faster is still worse, judged on the corrected interval.
        let c = Change::of(Metric::RequestsPerS, &a, &spread(64.0 * 1.2), RULES, 1.2);
        assert_eq!(c.verdict, Verdict::Worse);
        let (lo, hi) = c.corrected_ci95.unwrap();
        assert!(lo < 0.64 && 0.64 < hi, "({lo}, {hi})");
    }

    #[test]
    fn ratio_and_its_interval() {
        let c = Change::of(Metric::RequestsPerS, &spread(100.0), &spread(90.0), RULES, 1.0);
        assert!((c.ratio.unwrap() - 0.9).abs() < 1e-9);
        let (lo, hi) = c.ratio_ci95.unwrap();
        assert!(lo < 0.9 && 0.9 < hi && hi < 1.0, "({lo}, {hi})");
        assert!((c.median_a.unwrap() - 100.05).abs() < 1e-9 && (c.median_b.unwrap() - 90.045).abs() < 1e-9);
    }

    #[test]
    fn a_noisy_small_change_is_not_flagged() {
        // +1% on a spread of about ±5%
        let a = [100.0, 95.0, 105.0, 98.0, 102.0];
        let b = [101.0, 96.0, 106.0, 99.0, 103.0];
        let c = Change::of(Metric::RequestsPerS, &a, &b, RULES, 1.0);
        assert_eq!(c.verdict, Verdict::Same);
        assert!(c.test.unwrap().p > 0.5);
    }
}
