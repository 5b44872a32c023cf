//! `serverbench compare RUN_A RUN_B`: per contestant and configuration, the ratio B/A of req/s, p99 and
//! server CPU per request over the rounds that count (Hodges–Lehmann, with its distribution-free 95%
//! interval), tested with the Mann–Whitney U test, and a verdict where the configuration moved apart from
//! the rest: each figure corrected by the machine's own change of that figure (the servers' common change,
//! or the CPU speed probes with too few configurations), its whole interval beyond the noise band
//! (`--noise`) and beyond the servers' scatter around their common change (`--spreads`), and its
//! cross-CPU regime one the common change accounts for. Markdown (or JSON) to stdout, an HTML page next
//! to run B; with `--fail-on`, a distinct exit status when a selected figure is worse.

pub mod baseline;
pub mod gate;
pub mod html;
pub mod json;
pub mod lost;
pub mod markdown;
pub mod verdict;

use std::path::{Path, PathBuf};

use anyhow::Context as _;

pub use baseline::{Baseline, Regime, Source};
pub use gate::{FailOn, Regressed};
pub use verdict::{Change, Expected, Metric, Rules, Verdict, DEFAULT_ALPHA, DEFAULT_NOISE_PCT, DEFAULT_SPREADS};

use crate::model::{Measurement, RunResult, Flag};
use crate::stats::rank::mann_whitney;
use crate::stats::rounds::median;

/// What `serverbench compare` prints and writes besides the verdicts.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub rules: Rules,
    /// The HTML page; by default next to run B.
    pub output: Option<PathBuf>,
    /// JSON instead of Markdown on stdout.
    pub json: bool,
    /// Fail (`gate::REGRESSION_EXIT`) when a selected figure is worse (or, with `+unclear`, not shown to
    /// hold), or a configuration of A was lost in B.
    pub fail_on: Option<FailOn>,
}

/// Compares the run in folder `run_b` against the one in `run_a` (the arguments of `cli::compare`): Markdown,
/// or JSON with `json`, on stdout; the HTML page to `output`, by default next to run B. A regression that
/// `fail_on` selects is returned as the error `Regressed` once everything is written.
pub fn run(run_a: &Path, run_b: &Path, options: Options) -> anyhow::Result<()> {
    let rules = options.rules;
    anyhow::ensure!(rules.alpha > 0.0 && rules.alpha < 1.0, "--alpha must be between 0 and 1, e.g. 0.05");
    anyhow::ensure!(rules.noise_pct >= 0.0, "--noise is a percentage of at least 0, e.g. 3");
    anyhow::ensure!(rules.spreads >= 0.0, "--spreads is a number of spreads of at least 0, e.g. 3");
    let a = crate::report::load(run_a)?;
    let b = crate::report::load(run_b)?;
    let cmp = compare(&a, &b, rules);
    let tripped = options.fail_on.as_ref().map(|f| f.tripped(&cmp)).unwrap_or_default();
    if options.json {
        println!("{}", serde_json::to_string_pretty(&json::render(&cmp, options.fail_on.as_ref()))?);
    } else {
        print!("{}", markdown::render(&cmp));
    }
    let out = options.output.unwrap_or_else(|| run_b.join(format!("compare-{}.html", a.run_id)));
    std::fs::write(&out, html::render(&cmp))
        .with_context(|| format!("cannot write '{}'; choose another path with -o", out.display()))?;
    eprintln!("serverbench: wrote {}", out.display());
    match options.fail_on.and_then(|f| Regressed::new(&f, &tripped, &cmp.lost)) {
        Some(regressed) => Err(regressed.into()),
        None => Ok(()),
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

/// The machine's change per CPU, and the factor of req/s where too few configurations give a common
/// change: the geometric mean of the server CPUs' user-loop ratios (the loop whose slow stretches follow
/// slow rounds most closely), or 1 when it stays within the noise band or either run has no probes.
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

/// The median cross-CPU probe of a measurement's rounds that count.
fn cross_cpu_of(m: &Measurement) -> Option<f64> {
    let rates: Vec<f64> = m.measured_rounds().filter_map(|r| r.machine.cross_cpu_per_ms).collect();
    (!rates.is_empty()).then(|| median(&rates))
}

/// Whether every round of a measurement that counts was taken to the machine model's reference cross-CPU
/// rate (`model::machine_model`): then a move of the regime is already out of its figures.
fn at_reference(m: &Measurement) -> bool {
    m.measured_rounds().all(|r| r.machine.cross_cpu_per_ms.is_some() && r.machine.machine_factors.is_some())
}

/// A configuration measured in both runs, before it is judged.
struct Pair<'a> {
    key: &'a Key,
    a: &'a Measurement,
    b: &'a Measurement,
    /// Per `Metric::ALL`: the values of A's and B's rounds that count.
    values: Vec<(Vec<f64>, Vec<f64>)>,
    /// B/A of its median cross-CPU probe.
    regime: Option<f64>,
}

impl Pair<'_> {
    /// Measured at a fixed rate in either run: its req/s follow the rate, not the machine, so it is judged
    /// against the other configurations at a fixed rate.
    fn fixed_rate(&self) -> bool {
        self.a.rate_rps.is_some() || self.b.rate_rps.is_some()
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
    /// Caveats: client-bound and both-busy rounds on either side.
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub a: RunLabel,
    pub b: RunLabel,
    pub rules: Rules,
    /// Per CPU, B/A of its probed speed.
    pub machine: Vec<MachineChange>,
    /// The probes' change of req/s on the server CPUs (1: within the noise band), the fallback where too
    /// few configurations were measured for a common change.
    pub probed_factor: f64,
    /// Per kind of load measured (closed loop first) and metric, in `Metric::ALL` order: the machine's
    /// change of the figure and the servers' scatter around it.
    pub baselines: Vec<Baseline>,
    /// The configurations' common change of the cross-CPU regime, per kind of load as `baselines`.
    pub regimes: Vec<(bool, Regime)>,
    /// The median cross-CPU rate of each run's measured rounds (cache-line round trips a ms between the
    /// client and server CPUs), when both runs have it.
    pub cross_cpu: Option<(f64, f64)>,
    /// Configurations in the order A measured them, contestants by name within each.
    pub rows: Vec<Row>,
    pub only_a: Vec<Key>,
    pub only_b: Vec<Key>,
    /// A's configurations that B lost (absent, failed, newly erroring): each trips every gate.
    pub lost: Vec<lost::Lost>,
    /// Settings that differ between the runs: (what, A, B).
    pub differences: Vec<(String, String, String)>,
}

impl Comparison {
    /// The machine's change of a metric for closed-loop configurations (the usual benchmark), if any
    /// were measured.
    pub fn baseline(&self, metric: Metric) -> Option<&Baseline> {
        self.baselines.iter().find(|b| b.metric == metric && !b.fixed_rate)
    }
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

/// Compares every configuration measured in both runs, the machine's change taken from the servers'
/// common change and the runs' control (`Baseline::of` says how they combine).
pub fn compare(a: &RunResult, b: &RunResult, rules: Rules) -> Comparison {
    compare_with_control(a, b, rules, control_change(a, b))
}

/// The control's B/A per metric (`Metric::ALL` order, Hodges–Lehmann over its rounds), from the first
/// configuration both runs measured it in; None when either run has no control.
fn control_change(a: &RunResult, b: &RunResult) -> Option<[f64; 3]> {
    let in_b = controls(b);
    controls(a).into_iter().find_map(|(key, ma)| {
        let mb = find(&in_b, &key)?;
        let ratio = |metric: Metric| {
            let values = |m: &Measurement| m.measured_rounds().filter_map(|r| metric.of(r)).collect::<Vec<f64>>();
            mann_whitney(&values(ma), &values(mb)).map(|t| t.ratio)
        };
        Some([ratio(Metric::ALL[0])?, ratio(Metric::ALL[1])?, ratio(Metric::ALL[2])?])
    })
}

/// The measurements of the run's control.
fn controls(run: &RunResult) -> Vec<(Key, &Measurement)> {
    measured(run).into_iter().filter(|(_, m)| run.contestant(&m.contestant).is_some_and(|c| c.control)).collect()
}

/// The same, with a control server's B/A per metric (`Metric::ALL` order) for the machine's change where
/// fewer configurations than `MIN_CONFIGURATIONS` give a common change of their own.
pub fn compare_with_control(a: &RunResult, b: &RunResult, rules: Rules, control: Option<[f64; 3]>) -> Comparison {
    let (in_a, in_b) = (measured(a), measured(b));
    let (machine, probed_factor) = machine_change(a, b, rules);
    let pairs: Vec<Pair> = in_a
        .iter()
        .filter_map(|(key, ma)| {
            let mb = find(&in_b, key)?;
            let values = |m: &Measurement, metric: Metric| m.measured_rounds().filter_map(|r| metric.of(r)).collect::<Vec<f64>>();
            Some(Pair {
                key,
                a: ma,
                b: mb,
                values: Metric::ALL.iter().map(|&metric| (values(ma, metric), values(mb, metric))).collect(),
                regime: cross_cpu_of(ma).zip(cross_cpu_of(mb)).map(|(x, y)| y / x).filter(|_| !(at_reference(ma) && at_reference(mb))),
            })
        })
        .collect();
    // Each kind of load and each metric gets its own machine change: p99 moved 0.82x between two unchanged
    // runs in which req/s moved 1.09x, and corrected by req/s's factor it called 7 of 38 servers better.
    let mut baselines = Vec::new();
    let mut regimes = Vec::new();
    for fixed_rate in [false, true] {
        let group: Vec<&Pair> = pairs.iter().filter(|p| p.fixed_rate() == fixed_rate).collect();
        if group.is_empty() {
            continue;
        }
        regimes.push((fixed_rate, Regime::of(&group.iter().filter_map(|p| p.regime).collect::<Vec<f64>>())));
        for (k, &metric) in Metric::ALL.iter().enumerate() {
            let ratios: Vec<f64> =
                group.iter().filter_map(|p| mann_whitney(&p.values[k].0, &p.values[k].1).map(|t| t.ratio)).collect();
            baselines.push(Baseline::of(metric, fixed_rate, &ratios, probed_factor, control.map(|c| c[k])));
        }
    }
    let rows = pairs
        .iter()
        .map(|p| {
            let regime = regimes.iter().find(|(f, _)| *f == p.fixed_rate()).map(|(_, r)| *r);
            let expected: Vec<Expected> = Metric::ALL
                .iter()
                .map(|&metric| {
                    baselines
                        .iter()
                        .find(|b| b.metric == metric && b.fixed_rate == p.fixed_rate())
                        .map_or(Expected::NONE, |b| b.expected(regime.is_none_or(|r| r.accounts(b.source, p.regime))))
                })
                .collect();
            let changes = Metric::ALL
                .iter()
                .enumerate()
                .map(|(k, &metric)| Change::of(metric, &p.values[k].0, &p.values[k].1, rules, expected[k]))
                .collect();
            let mut notes = Vec::new();
            for (side, m) in [("A", p.a), ("B", p.b)] {
                for flag in [Flag::ClientBound, Flag::BothBusy] {
                    let bound = m.measured_rounds().filter(|r| r.has_flag(&flag)).count();
                    if bound > 0 {
                        notes.push(format!("{flag} in {side} ({bound}/{} rounds)", m.measured_rounds().count()));
                    }
                }
            }
            if let (Some(own), true) = (p.regime, expected.iter().any(|e| !e.regime_accounted)) {
                let others = regime.and_then(|r| r.common).map_or(String::new(), |c| format!(", the others' {c:.2}x"));
                notes.push(format!("cross-CPU regime {own:.2}x{others}: the machine's change cannot be taken out"));
            }
            Row { key: p.key.clone(), changes, notes }
        })
        .collect();
    let only = |x: &[(Key, &Measurement)], y: &[(Key, &Measurement)]| -> Vec<Key> {
        x.iter().filter(|(k, _)| find(y, k).is_none()).map(|(k, _)| k.clone()).collect()
    };
    Comparison {
        a: RunLabel::of(a),
        b: RunLabel::of(b),
        rules,
        machine,
        probed_factor,
        baselines,
        regimes,
        cross_cpu: cross_cpu(a).zip(cross_cpu(b)),
        rows,
        only_a: only(&in_a, &in_b),
        only_b: only(&in_b, &in_a),
        lost: lost::lost(&in_a, b),
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
