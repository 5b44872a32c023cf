//! The comparison as JSON (`compare --json`), for other tools: per row and metric the ratio B/A, its
//! interval, the p-value and the verdict; at the top the machine's change per CPU.

use serde_json::{json, Value};

use super::Comparison;

pub fn render(c: &Comparison) -> Value {
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
    json!({
        "a": {"run_id": c.a.run_id, "started_utc": c.a.started_utc, "machine": c.a.machine},
        "b": {"run_id": c.b.run_id, "started_utc": c.b.started_utc, "machine": c.b.machine},
        "rules": {"alpha": c.rules.alpha, "noise_pct": c.rules.noise_pct},
        "machine": {
            "factor": c.machine_factor,
            "servers_common": c.servers_common,
            "cross_cpu_per_ms": c.cross_cpu.map(|(a, b)| json!({"a": a, "b": b})),
            "cpus": c.machine.iter().map(|m| json!({
                "cpu": m.cpu, "role": m.role, "user_ratio": m.user_ratio, "syscall_ratio": m.syscall_ratio,
            })).collect::<Vec<_>>(),
        },
        "rows": rows,
        "only_a": c.only_a.iter().map(key).collect::<Vec<_>>(),
        "only_b": c.only_b.iter().map(key).collect::<Vec<_>>(),
        "differences": c.differences.iter().map(|(w, a, b)| json!({"setting": w, "a": a, "b": b})).collect::<Vec<_>>(),
    })
}
