//! `serverbench bench --check`: the conformance suite runs before measuring and its outcome lands in
//! run.json and summary.md, while measuring goes on.

mod common;

use std::path::PathBuf;
use std::process::Command;

#[test]
fn bench_check_records_the_suite_in_the_run() {
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/check/contestants");
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-check");
    let _ = std::fs::remove_dir_all(&out);
    let r = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(["-q", "bench", "--check", "check-good", "check-wrong", "--contestants"])
        .arg(&fixtures)
        .arg("-o")
        .arg(&out)
        .args(["--no-install", "--warmup", "0", "--rounds", "1", "--max-rounds", "8", "-d", "300ms", "-c", "4"])
        .output()
        .expect("serverbench runs");
    let (stdout, stderr) = (String::from_utf8_lossy(&r.stdout), String::from_utf8_lossy(&r.stderr));
    let run_dir = std::fs::read_dir(&out).unwrap().flatten().map(|d| d.path()).find(|p| p.join("run.json").exists());
    let run_dir = run_dir.unwrap_or_else(|| panic!("no run folder\nstdout:\n{stdout}\nstderr:\n{stderr}"));
    let run: serde_json::Value = serde_json::from_slice(&std::fs::read(run_dir.join("run.json")).unwrap()).unwrap();
    let checks = run["checks"].as_array().expect("run.json has checks");
    let by_name = |n: &str| checks.iter().find(|c| c["contestant"] == n).unwrap_or_else(|| panic!("no checks for {n}: {checks:?}"));
    let good = by_name("check-good")["results"].as_array().unwrap().clone();
    let wrong = by_name("check-wrong")["results"].as_array().unwrap().clone();
    // On failure, say which check failed and show the run's own output: these servers are real processes.
    let failed: Vec<_> = good.iter().filter(|r| r["status"] == "fail").collect();
    assert!(good.len() >= 8 && failed.is_empty(), "failed checks of check-good: {failed:#?}\nstdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(wrong.iter().any(|r| r["check"] == "hello-response" && r["status"] == "fail"), "{wrong:?}");
    assert!(good.iter().all(|r| r["check"] != "scale"), "bench --check leaves the scale check to serverbench check");
    let summary = std::fs::read_to_string(run_dir.join("summary.md")).unwrap();
    assert!(summary.contains("## Conformance (bench --check)"), "{summary}");
    assert!(summary.contains("- check-wrong:") && summary.contains("hello-response"), "{summary}");
    // The good contestant is still measured.
    let measured = run["measurements"].as_array().unwrap().iter().any(|m| m["contestant"] == "check-good" && m["status"] == "measured");
    assert!(measured, "stdout:\n{stdout}\nstderr:\n{stderr}");
    // A client check skipped for a missing tool (wrk, h2load, curl) leaves part of the subject unreached.
    let skipped: std::collections::BTreeSet<&str> =
        good.iter().filter(|r| r["status"] == "skip").filter_map(|r| r["check"].as_str()?.strip_prefix("client-")).collect();
    if !skipped.is_empty() {
        let tools: Vec<&str> = skipped.into_iter().collect();
        common::skip("bench_check_records_the_suite_in_the_run", &format!("{} missing", tools.join(", ")));
    }
}
