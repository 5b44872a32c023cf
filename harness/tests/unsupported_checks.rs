//! Checks a contestant is not held to (`unsupported_checks`): `serverbench list` shows them, `serverbench
//! check` skips them with the manifest's reason instead of running them, and the conformance step of
//! scripts/test.sh (scripts/conformance.py) accepts such a skip only where a manifest declares it.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{serverbench, text};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/check/contestants")
}

fn line_of<'a>(stdout: &'a str, scenario: &str, check: &str) -> &'a str {
    stdout
        .lines()
        .find(|l| l.split_whitespace().nth(1) == Some(scenario) && l.split_whitespace().nth(2) == Some(check))
        .unwrap_or_else(|| panic!("no line for {scenario} {check} in:\n{stdout}"))
}

/// scripts/conformance.py on `check_dir` with the fixture catalog; SB_TEST_SKIPS into the folder.
fn conformance(check_dir: &Path) -> Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/conformance.py");
    std::process::Command::new("python3")
        .arg(script)
        .arg(check_dir)
        .arg("0")
        .arg(fixtures())
        .env("SB_TEST_SKIPS", check_dir.join("skipped.tsv"))
        .env_remove("CI")
        .output()
        .expect("python3 runs")
}

/// A check.json of one result, in a fresh folder.
fn one_result(name: &str, contestant: &str, check: &str, reason: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let json = serde_json::json!([{
        "contestant": contestant,
        "results": [{ "contestant": contestant, "scenario": "hello", "check": check, "status": "skip", "reason": reason, "seconds": 0.0 }],
        "scale_scenario": null, "scale_asked": 0, "scale_held": 0, "rss": []
    }]);
    std::fs::write(dir.join("check.json"), serde_json::to_vec(&json).unwrap()).unwrap();
    dir
}

#[test]
fn list_shows_the_checks_a_contestant_is_not_held_to() {
    let o = serverbench().args(["list", "--contestants"]).arg(fixtures()).output().unwrap();
    let stdout = text(&o.stdout);
    assert!(o.status.success(), "{stdout}\n{}", text(&o.stderr));
    assert!(stdout.contains("Checks not held to"), "{stdout}");
    assert!(stdout.contains("- check-pool: idle-open: its pool forgets idle connections"), "{stdout}");
    assert!(stdout.contains("- check-pool: scale: a pool of 4 serves 4 connections at a time"), "{stdout}");
    assert!(!stdout.contains("- check-good:"), "{stdout}");
}

#[test]
fn check_skips_a_declared_check_with_its_reason_and_the_conformance_step_accepts_it() {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("unsupported-checks");
    let _ = std::fs::remove_dir_all(&out);
    let o = serverbench()
        .args(["check", "check-pool", "--contestants"])
        .arg(fixtures())
        .arg("--out")
        .arg(&out)
        .args(["--no-install", "--server-cpus", "0", "--only", "hello-response,idle-open,scale", "--scale-connections", "50"])
        .output()
        .unwrap();
    let (stdout, stderr) = (text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "a declared skip is no failure\nstdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(line_of(&stdout, "hello", "hello-response").contains(" pass "), "{stdout}");
    let idle = line_of(&stdout, "hello", "idle-open");
    assert!(idle.contains(" skip ") && idle.ends_with("its manifest says it is not held to this check: its pool forgets idle connections"), "{idle}");
    let scale = line_of(&stdout, "hello", "scale");
    assert!(scale.contains(" skip ") && scale.contains("a pool of 4 serves 4 connections at a time"), "{scale}");

    let check_dir = std::fs::read_dir(out.join("checks")).unwrap().flatten().map(|d| d.path()).find(|p| p.join("check.json").exists()).unwrap();
    let r = conformance(&check_dir);
    assert!(r.status.success(), "stdout:\n{}\nstderr:\n{}", text(&r.stdout), text(&r.stderr));
}

#[test]
fn the_conformance_step_fails_a_skip_no_manifest_declares() {
    // The reason the harness gives a declared skip, on a contestant whose manifest does not declare it.
    let dir = one_result("conformance-undeclared", "check-good", "idle-open", "its manifest says it is not held to this check: says who");
    let r = conformance(&dir);
    let stdout = text(&r.stdout);
    assert_eq!(r.status.code(), Some(1), "stdout:\n{stdout}\nstderr:\n{}", text(&r.stderr));
    assert!(stdout.contains("check-good hello idle-open was skipped as not held to, but no manifest"), "{stdout}");
    // A declared contestant, but another check than the ones it names.
    let dir = one_result("conformance-other-check", "check-pool", "hello-response", "its manifest says it is not held to this check: x");
    assert_eq!(conformance(&dir).status.code(), Some(1));
    // Any other skip fails as before.
    let dir = one_result("conformance-plain-skip", "check-pool", "idle-open", "not run: the server did not start");
    let r = conformance(&dir);
    assert_eq!(r.status.code(), Some(1));
    assert!(text(&r.stdout).contains("check-pool hello idle-open was skipped: not run"), "{}", text(&r.stdout));
    // The declared one passes.
    let dir = one_result("conformance-declared", "check-pool", "idle-open", "its manifest says it is not held to this check: its pool forgets idle connections");
    let r = conformance(&dir);
    assert!(r.status.success(), "stdout:\n{}\nstderr:\n{}", text(&r.stdout), text(&r.stderr));
}

#[test]
fn an_unknown_check_name_is_refused_with_the_allowed_names() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("unsupported-checks-bad/c/x");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("contestant.toml"),
        "name = \"x\"\nlanguage = \"c\"\nframework = \"none\"\ncategory = \"micro\"\nmodel = \"thread-pool\"\nio = \"blocking\"\n\
         scenarios = [\"hello\"]\nrun = \"true {port}\"\nunsupported_checks = { idle-opn = \"why\", scale = \"\" }\n",
    )
    .unwrap();
    let catalog = serverbench::catalog::Catalog::discover(dir.parent().unwrap().parent().unwrap()).unwrap();
    let errors: Vec<String> = catalog.errors.iter().map(|e| e.to_string()).collect();
    assert!(
        errors.iter().any(|e| e.contains("field `unsupported_checks` names the check \"idle-opn\" (did you mean `idle-open`?); allowed values: hello-response, ")
            && e.contains(", bad-drop-5000, ")
            && e.ends_with(", scale")),
        "{errors:?}"
    );
    assert!(errors.iter().any(|e| e.contains("field `unsupported_checks.scale` is empty; say why the check cannot pass")), "{errors:?}");
    assert!(catalog.contestants.is_empty());
}
