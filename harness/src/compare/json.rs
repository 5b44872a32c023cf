//! The comparison as JSON (`compare --json`), for other tools: per row and metric the ratio B/A, its
//! interval, the p-value and the verdict; at the top the machine's change per metric (and the scatter it
//! was judged against) and per CPU; with `--fail-on`, the figures that tripped the gate.

use serde_json::{json, Value};

use super::{Comparison, FailOn};

pub fn render(c: &Comparison, fail_on: Option<&FailOn>) -> Value {
    let rows: Vec<Value> = c
        .rows
        .iter()
        .map(|r| {
            let metrics: serde_json::Map<String, Value> = r
                .changes
                .iter()
                .map(|ch| {
                    (
                        ch.metric.name().to_string(),
                        json!({
                            "ratio": ch.ratio,
                            "ci_low": ch.ratio_ci95.map(|c| c.0),
                            "ci_high": ch.ratio_ci95.map(|c| c.1),
                            "corrected_ci_low": ch.corrected_ci95.map(|c| c.0),
                            "corrected_ci_high": ch.corrected_ci95.map(|c| c.1),
                            "p_value": ch.test.map(|t| t.p),
                            "corrected_p_value": ch.corrected.map(|t| t.p),
                            "spreads": ch.spreads,
                            "verdict": ch.verdict.word(),
                            "median_a": ch.median_a,
                            "median_b": ch.median_b,
                            "rounds_a": ch.rounds_a,
                            "rounds_b": ch.rounds_b,
                        }),
                    )
                })
                .collect();
            json!({
                "contestant": r.key.contestant,
                "scenario": r.key.scenario,
                "mode": r.key.mode,
                "connections": r.key.connections,
                "pipeline": r.key.pipeline,
                "metrics": metrics,
                "notes": r.notes,
            })
        })
        .collect();
    let key = |k: &super::Key| json!({"contestant": k.contestant, "configuration": k.configuration()});
    let baselines: Vec<Value> = c
        .baselines
        .iter()
        .map(|b| {
            json!({
                "metric": b.metric.name(),
                "load": if b.fixed_rate { "fixed rate" } else { "closed loop" },
                "source": b.source.word(),
                "configurations": b.configurations,
                "factor": b.factor,
                "spread_pct": b.scatter.map(|s| s.spread_pct()),
                "spread_floored": b.scatter.map(|s| s.floored),
                "band": b.band(c.rules),
            })
        })
        .collect();
    let req_s = c.baseline(super::Metric::RequestsPerS);
    let gate = fail_on.map(|f| {
        let tripped: Vec<Value> = f
            .tripped(c)
            .iter()
            .map(|(r, ch)| {
                json!({
                    "contestant": r.key.contestant,
                    "configuration": r.key.configuration(),
                    "metric": ch.metric.name(),
                    "verdict": ch.verdict.word(),
                    "ratio": ch.ratio,
                    "corrected_ci_low": ch.corrected_ci95.or(ch.ratio_ci95).map(|c| c.0),
                    "corrected_ci_high": ch.corrected_ci95.or(ch.ratio_ci95).map(|c| c.1),
                })
            })
            .collect();
        let status = if tripped.is_empty() && c.lost.is_empty() { 0 } else { super::gate::REGRESSION_EXIT };
        json!({
            "spec": f.spec(),
            "metrics": f.metrics.iter().map(|m| m.name()).collect::<Vec<_>>(),
            "unclear": f.unclear,
            "tripped": tripped,
            "lost": c.lost.len(),
            "exit_status": status,
        })
    });
    json!({
        "a": {"run_id": c.a.run_id, "started_utc": c.a.started_utc, "machine": c.a.machine},
        "b": {"run_id": c.b.run_id, "started_utc": c.b.started_utc, "machine": c.b.machine},
        "rules": {"alpha": c.rules.alpha, "noise_pct": c.rules.noise_pct, "spreads": c.rules.spreads},
        "machine": {
            "factor": req_s.map_or(1.0, |b| b.factor),
            "servers_common": req_s.filter(|b| b.source == super::Source::Servers).map(|b| b.factor),
            "probed_factor": c.probed_factor,
            "baselines": baselines,
            "cross_cpu_per_ms": c.cross_cpu.map(|(a, b)| json!({"a": a, "b": b})),
            "cross_cpu_common": c.regimes.iter().find(|(fixed, _)| !fixed).and_then(|(_, r)| r.common),
            "cpus": c.machine.iter().map(|m| json!({
                "cpu": m.cpu, "role": m.role, "user_ratio": m.user_ratio, "syscall_ratio": m.syscall_ratio,
            })).collect::<Vec<_>>(),
        },
        "rows": rows,
        "fail_on": gate,
        "only_a": c.only_a.iter().map(key).collect::<Vec<_>>(),
        "only_b": c.only_b.iter().map(key).collect::<Vec<_>>(),
        "lost": c.lost.iter().map(|l| {
            let mut v = key(&l.key);
            v["why"] = json!(l.why.word());
            v["detail"] = json!(l.why.text());
            v
        }).collect::<Vec<_>>(),
        "differences": c.differences.iter().map(|(w, a, b)| json!({"setting": w, "a": a, "b": b})).collect::<Vec<_>>(),
    })
}
