//! `serverbench compare RUN_A RUN_B`: per contestant and configuration, the ratio B/A of req/s, p99 and
//! server CPU per request, each tested over the measured rounds with Welch's t-test, and a verdict where
//! the change is beyond noise. Markdown to stdout, an HTML page to a file.

pub mod html;
pub mod markdown;

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::model::{Measurement, Round, RunResult, FLAG_CLIENT_BOUND};
use crate::stats::significance::{welch, Welch};

pub const DEFAULT_ALPHA: f64 = 0.05;
pub const DEFAULT_OUTPUT: &str = "compare.html";

/// Compares the run in folder `run_b` against the one in `run_a` (the arguments of `cli::compare`).
pub fn run(run_a: &Path, run_b: &Path, output: Option<PathBuf>, alpha: f64) -> anyhow::Result<()> {
    anyhow::ensure!(alpha > 0.0 && alpha < 1.0, "--alpha must be between 0 and 1, e.g. 0.05");
    let a = crate::report::load(run_a)?;
    let b = crate::report::load(run_b)?;
    let cmp = compare(&a, &b, alpha);
    print!("{}", markdown::render(&cmp));
    let out = output.unwrap_or_else(|| PathBuf::from(DEFAULT_OUTPUT));
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
            Metric::RequestsPerS => Some(r.load.requests_per_s()),
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
            Verdict::Untested => "? untested",
        }
    }
}

/// One metric of one configuration, A against B.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub metric: Metric,
    pub rounds_a: usize,
    pub rounds_b: usize,
    pub mean_a: Option<f64>,
    pub mean_b: Option<f64>,
    /// mean_B / mean_A.
    pub ratio: Option<f64>,
    /// The 95% interval of mean_B − mean_A, divided by mean_A, plus one: the ratio's interval with A's
    /// mean taken as exact.
    pub ratio_ci95: Option<(f64, f64)>,
    pub test: Option<Welch>,
    pub verdict: Verdict,
}

impl Change {
    pub fn of(metric: Metric, a: &[f64], b: &[f64], alpha: f64) -> Change {
        let mean = |x: &[f64]| (!x.is_empty()).then(|| x.iter().sum::<f64>() / x.len() as f64);
        let (mean_a, mean_b) = (mean(a), mean(b));
        let ratio = match (mean_a, mean_b) {
            (Some(a), Some(b)) if a != 0.0 => Some(b / a),
            _ => None,
        };
        let test = welch(a, b);
        let ratio_ci95 = match (test, mean_a) {
            (Some(t), Some(a)) if a != 0.0 => Some((1.0 + t.diff_ci95.0 / a, 1.0 + t.diff_ci95.1 / a)),
            _ => None,
        };
        let verdict = match test {
            None => Verdict::Untested,
            Some(t) if t.p < alpha => {
                if (t.t > 0.0) == metric.higher_is_better() {
                    Verdict::Better
                } else {
                    Verdict::Worse
                }
            }
            Some(_) => Verdict::Same,
        };
        Change { metric, rounds_a: a.len(), rounds_b: b.len(), mean_a, mean_b, ratio, ratio_ci95, test, verdict }
    }
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
            mode: m.mode.clone(),
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
    pub alpha: f64,
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
pub fn compare(a: &RunResult, b: &RunResult, alpha: f64) -> Comparison {
    let (in_a, in_b) = (measured(a), measured(b));
    let mut rows = Vec::new();
    for (key, ma) in &in_a {
        let Some(mb) = find(&in_b, key) else { continue };
        let values =
            |m: &Measurement, metric: Metric| m.measured_rounds().filter_map(|r| metric.of(r)).collect::<Vec<f64>>();
        let changes = Metric::ALL
            .iter()
            .map(|&metric| Change::of(metric, &values(ma, metric), &values(mb, metric), alpha))
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
        alpha,
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

    #[test]
    fn verdict_follows_the_direction_of_the_metric() {
        let a = [100.0, 101.0, 99.0, 100.5, 99.5];
        let lower = [80.0, 81.0, 79.0, 80.5, 79.5];
        assert_eq!(Change::of(Metric::RequestsPerS, &a, &lower, 0.05).verdict, Verdict::Worse);
        assert_eq!(Change::of(Metric::P99, &a, &lower, 0.05).verdict, Verdict::Better);
        assert_eq!(Change::of(Metric::CpuPerRequest, &lower, &a, 0.05).verdict, Verdict::Worse);
        assert_eq!(Change::of(Metric::RequestsPerS, &a, &a, 0.05).verdict, Verdict::Same);
        assert_eq!(Change::of(Metric::RequestsPerS, &a, &[90.0], 0.05).verdict, Verdict::Untested);
    }

    #[test]
    fn ratio_and_its_interval() {
        let c = Change::of(Metric::RequestsPerS, &[100.0, 102.0, 98.0], &[90.0, 92.0, 88.0], 0.05);
        assert!((c.ratio.unwrap() - 0.9).abs() < 1e-12);
        let (lo, hi) = c.ratio_ci95.unwrap();
        assert!(lo < 0.9 && 0.9 < hi && hi < 1.0, "({lo}, {hi})");
        let w = c.test.unwrap();
        assert!((lo - (1.0 + w.diff_ci95.0 / 100.0)).abs() < 1e-12);
    }

    #[test]
    fn a_noisy_small_change_is_not_flagged() {
        // +1% on a spread of about ±5%
        let a = [100.0, 95.0, 105.0, 98.0, 102.0];
        let b = [101.0, 96.0, 106.0, 99.0, 103.0];
        let c = Change::of(Metric::RequestsPerS, &a, &b, 0.05);
        assert_eq!(c.verdict, Verdict::Same);
        assert!(c.test.unwrap().p > 0.5);
    }
}
