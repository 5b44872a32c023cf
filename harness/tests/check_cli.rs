//! `serverbench check` end to end, through the real binary, on fixture contestants: a correct
//! thread-per-connection hello server and one with a wrong body; platform plaintext and json servers
//! that refuse oversized headers or swallow them.

use std::path::PathBuf;
use std::process::{Command, Output};

fn check(name: &str, out: &str, extra: &[&str]) -> Output {
    check_in("check/contestants", name, out, extra)
}

/// `serverbench check NAME` on the fixture catalog `tests/fixtures/<catalog>`, results under `out`.
fn check_in(catalog: &str, name: &str, out: &str, extra: &[&str]) -> Output {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(out);
    let _ = std::fs::remove_dir_all(&out);
    Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .arg("check")
        .arg(name)
        .arg("--contestants")
        .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(catalog))
        .arg("--out")
        .arg(&out)
        .args(["--no-install", "--server-cpus", "0"])
        .args(extra)
        .output()
        .expect("serverbench runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn line_of<'a>(stdout: &'a str, scenario: &str, check: &str) -> &'a str {
    stdout
        .lines()
        .find(|l| l.split_whitespace().nth(1) == Some(scenario) && l.split_whitespace().nth(2) == Some(check))
        .unwrap_or_else(|| panic!("no line for {scenario} {check} in:\n{stdout}"))
}

#[test]
fn a_correct_server_passes_and_the_results_are_written() {
    let only = "hello-response,idle-open,timeout-idle,timeout-silent,bad-half-close,stop";
    let r = check("check-good", "check-cli-good", &["--no-scale", "--only", only]);
    let (stdout, stderr) = (text(&r.stdout), text(&r.stderr));
    assert!(r.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    for (scenario, name) in [("hello", "hello-response"), ("hello", "idle-open"), ("hello-timeout", "timeout-idle"), ("hello-timeout", "stop")] {
        let l = line_of(&stdout, scenario, name);
        assert_eq!(l.split_whitespace().nth(3), Some("pass"), "{l}");
    }
    assert!(stdout.contains("| check-good "), "{stdout}");
    let json = std::fs::read_dir(PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check-cli-good/checks"))
        .unwrap()
        .flatten()
        .map(|d| d.path().join("check.json"))
        .find(|p| p.exists())
        .expect("a check.json");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    let results = v[0]["results"].as_array().unwrap();
    assert_eq!(v[0]["contestant"], "check-good");
    assert!(results.len() >= 8, "{results:?}");
    assert!(results.iter().all(|r| r["status"] == "pass"), "{results:?}");
}

#[test]
fn a_wrong_body_fails_with_a_reason_and_a_non_zero_exit() {
    let r = check("check-wrong", "check-cli-wrong", &["--no-scale", "--only", "hello-response,idle-open"]);
    let (stdout, stderr) = (text(&r.stdout), text(&r.stderr));
    assert_eq!(r.status.code(), Some(1), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let l = line_of(&stdout, "hello", "hello-response");
    assert!(l.contains("FAIL") && l.contains("Hello World!"), "{l}");
    assert!(stderr.contains("checks failed"), "{stderr}");
}

#[test]
fn scale_prints_the_memory_table() {
    let r = check("check-good", "check-cli-scale", &["--only", "scale", "--scale-connections", "500"]);
    let (stdout, stderr) = (text(&r.stdout), text(&r.stderr));
    assert!(r.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let l = line_of(&stdout, "hello", "scale");
    assert!(l.contains("500 connections open at once"), "{l}");
    assert!(stdout.contains("RSS MiB at 400"), "{stdout}");
    assert!(stdout.contains("500 of 500"), "{stdout}");
}

#[test]
fn an_unknown_check_name_is_refused_with_the_list() {
    let r = check("check-good", "check-cli-unknown", &["--only", "hello-bytes"]);
    let stderr = text(&r.stderr);
    assert!(!r.status.success());
    assert!(stderr.contains("no such check") && stderr.contains("hello-response"), "{stderr}");
}

#[test]
fn huge_headers_refused_with_431_pass_a_platform_server() {
    let r = check_in("http", "http-good", "check-cli-huge-good", &["--no-scale", "--only", "bad-huge-headers"]);
    let (stdout, stderr) = (text(&r.stdout), text(&r.stderr));
    assert!(r.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    for scenario in ["plaintext", "json"] {
        let l = line_of(&stdout, scenario, "bad-huge-headers");
        assert!(l.contains(" pass ") && l.contains("status 431"), "{l}");
    }
}

#[test]
fn huge_headers_swallowed_without_an_answer_fail_a_platform_server() {
    let r = check_in("http", "http-hangs-on-huge-headers", "check-cli-huge-hangs", &["--no-scale", "--only", "bad-huge-headers"]);
    let (stdout, stderr) = (text(&r.stdout), text(&r.stderr));
    assert_eq!(r.status.code(), Some(1), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let l = line_of(&stdout, "plaintext", "bad-huge-headers");
    assert!(l.contains(" FAIL ") && l.contains("neither refused nor closed within 5 s"), "{l}");
    assert!(stderr.contains("checks failed"), "{stderr}");
}
