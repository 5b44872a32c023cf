//! Faults in the harness, through the real binary on fake contestants: a run interrupted by SIGINT or
//! SIGTERM, a contestant that cannot bind its port, one that floods its output, a results folder that
//! cannot be written. Each must give a clear message, keep every finished measurement and leave no
//! process behind. (A contestant that dies mid-round or ignores SIGTERM is in runner.rs, a manifest with a
//! wrong type in catalog.rs.) No test asserts a speed.

mod common;

use std::net::{Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::Duration;

use common::{only_run_dir, serverbench, text};
use serverbench::model::MeasurementStatus;

/// Adds a fake contestant to the catalog copy; its `run` uses the shared fake server.
fn add_contestant(catalog: &Path, name: &str, run: &str, env: &str) {
    let dir = catalog.join("python").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let manifest = format!(
        "name = \"fake-{name}\"\nlanguage = \"python\"\nframework = \"asyncio\"\ncategory = \"micro\"\n\
         model = \"single-loop\"\nio = \"runtime\"\nrequires = [\"python3\"]\nscenarios = [\"hello\"]\n\
         run = \"python3 {{dir}}/../fake_server.py {run}\"\n{env}"
    );
    std::fs::write(dir.join("contestant.toml"), manifest).unwrap();
}

/// `serverbench bench NAMES` on the catalog copy, writing under `out`, with `args` after.
fn bench(catalog: &Path, out: &Path, names: &[&str], args: &[&str]) -> std::process::Command {
    let mut cmd = serverbench();
    cmd.arg("bench").args(names).arg("--contestants").arg(catalog).arg("-o").arg(out).args(args);
    cmd
}

/// Waits for `child` at most `limit`; kills it and fails the test past that.
fn finish(mut child: Child, limit: Duration) -> Output {
    if !common::eventually(limit, || child.try_wait().unwrap().is_some()) {
        let _ = child.kill();
        let o = child.wait_with_output().unwrap();
        panic!("serverbench did not finish in {limit:?}:\n{}\n{}", text(&o.stdout), text(&o.stderr));
    }
    child.wait_with_output().unwrap()
}

fn assert_no_process_left(tmp: &Path) {
    assert!(
        common::eventually(Duration::from_secs(5), || common::processes_mentioning(tmp).is_empty()),
        "left behind: {:?}",
        common::processes_mentioning(tmp)
    );
}

/// Runs two servers (one ignoring SIGTERM) for many rounds, sends `signal` once every measurement has a
/// round, and checks what is left: exit status 130, a last line that says where the results are, the
/// finished rounds kept, every measurement marked interrupted, no server alive.
fn interrupted_by(signal: i32) {
    let (tmp, catalog) = common::fixture_copy("catalog");
    let out = tmp.path().join("results");
    let mut child = bench(&catalog, &out, &["fake-good", "fake-stubborn"], &["-d", "1s", "--warmup", "0", "--rounds", "30", "-c", "4"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until at least one round of each is in run.json, then interrupt.
    let rounds_done = || -> usize {
        let Ok(entries) = std::fs::read_dir(&out) else { return 0 };
        let Some(dir) = entries.flatten().map(|e| e.path()).find(|p| p.join("run.json").is_file()) else { return 0 };
        let Ok(text) = std::fs::read_to_string(dir.join("run.json")) else { return 0 };
        let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) else { return 0 };
        json["measurements"].as_array().map(|ms| ms.iter().map(|m| m["rounds"].as_array().map_or(0, Vec::len)).min().unwrap_or(0)).unwrap_or(0)
    };
    if !common::eventually(Duration::from_secs(60), || rounds_done() >= 1) {
        let _ = child.kill();
        let o = child.wait_with_output().unwrap();
        panic!("no round finished:\n{}\n{}", text(&o.stdout), text(&o.stderr));
    }
    // SAFETY: kill(2) takes integers only; the child is not yet waited for, so its pid is still its own.
    unsafe { libc::kill(child.id() as i32, signal) };
    let o = finish(child, Duration::from_secs(20));
    let stderr = text(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{stderr}");
    let last = stderr.lines().last().unwrap_or_default();
    assert!(last.starts_with("serverbench: interrupted; the finished results are in "), "{stderr}");
    assert_eq!(stderr.matches("the finished results are in").count(), 1, "one line says where: {stderr}");

    let dir = only_run_dir(&out);
    assert!(last.ends_with(dir.to_str().unwrap()), "{last}");
    let run = serverbench::report::load(&dir).unwrap();
    assert!(run.interrupted);
    for name in ["fake-good", "fake-stubborn"] {
        assert!(run.measurements.iter().any(|m| m.contestant == name), "{name}'s measurement is kept");
    }
    assert!(run.measurements.iter().all(|m| !m.rounds.is_empty()), "finished rounds are kept");
    let statuses: Vec<_> = run.measurements.iter().map(|m| (m.status, m.reason.clone())).collect();
    assert!(run.measurements.iter().all(|m| m.status == MeasurementStatus::Interrupted), "{statuses:?}");
    assert!(std::fs::read_to_string(dir.join("summary.md")).unwrap().contains("interrupted"));
    // The stubborn server ignores SIGTERM: it must have been killed all the same.
    assert_no_process_left(tmp.path());
}

#[test]
fn sigint_mid_run_keeps_finished_results_and_leaves_no_process() {
    let _alone = common::one_bench_at_a_time();
    interrupted_by(libc::SIGINT);
}

#[test]
fn sigterm_mid_run_keeps_finished_results_and_leaves_no_process() {
    let _alone = common::one_bench_at_a_time();
    interrupted_by(libc::SIGTERM);
}

#[test]
fn a_contestant_that_cannot_bind_its_port_fails_with_its_log_while_the_run_goes_on() {
    let _alone = common::one_bench_at_a_time();
    let (tmp, catalog) = common::fixture_copy("catalog");
    let out = tmp.path().join("results");
    // Another socket holds a port; the contestant ignores the port it is given and binds that one.
    let held = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = held.local_addr().unwrap().port();
    add_contestant(&catalog, "port-taken", &format!("{{scenario}} {{host}} {port} {{workers}}"), "env = { GIVEN_PORT = \"{port}\" }\n");
    let child = bench(&catalog, &out, &["fake-port-taken", "fake-good"], &["-d", "300ms", "--warmup", "0", "--rounds", "1", "-c", "2"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let o = finish(child, Duration::from_secs(30));
    let stderr = text(&o.stderr);
    assert!(o.status.success(), "the good one was measured:\n{stderr}");
    assert!(
        stderr.lines().any(|l| l.starts_with("fake-port-taken hello: failed to start: exited") && l.contains("address already in use")),
        "a line says why:\n{stderr}"
    );

    let run = serverbench::report::load(&only_run_dir(&out)).unwrap();
    let m = |name: &str| run.measurements.iter().find(|m| m.contestant == name).unwrap_or_else(|| panic!("{name} has a measurement"));
    let taken = m("fake-port-taken");
    assert_eq!(taken.status, MeasurementStatus::Failed);
    let why = taken.reason.as_deref().unwrap();
    assert!(why.contains(&format!("last lines of {}", out.display())), "the log tail is quoted: {why}");
    assert!(why.contains(&format!("{port}")) && why.contains("address already in use"), "{why}");
    assert_eq!(m("fake-good").status, MeasurementStatus::Measured, "{:?}", m("fake-good").reason);
    drop(held);
    assert_no_process_left(tmp.path());
}

#[test]
fn a_contestant_flooding_stdout_is_measured_and_its_log_stays_bounded() {
    let _alone = common::one_bench_at_a_time();
    let (tmp, catalog) = common::fixture_copy("catalog");
    let out = tmp.path().join("results");
    add_contestant(&catalog, "floods", "--flood {scenario} {host} {port} {workers}", "");
    let child = bench(&catalog, &out, &["fake-floods"], &["-d", "1s", "--warmup", "0", "--rounds", "2", "-c", "4"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // While it serves, its stdout is the log file, not a pipe that someone must drain.
    let stdout_of_server = || -> Option<PathBuf> {
        let server = common::processes_mentioning(tmp.path()).into_iter().find(|p| p.contains("--flood"))?;
        let pid = server.split(':').next()?;
        std::fs::read_link(format!("/proc/{pid}/fd/1")).ok()
    };
    let mut seen = None;
    common::eventually(Duration::from_secs(20), || {
        seen = stdout_of_server();
        seen.is_some()
    });
    let o = finish(child, Duration::from_secs(30));
    let stderr = text(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let seen = seen.expect("the flooding server was seen running");
    assert!(seen.to_string_lossy().ends_with("logs/fake-floods.hello.log"), "its stdout is {}", seen.display());

    let dir = only_run_dir(&out);
    let run = serverbench::report::load(&dir).unwrap();
    let m = &run.measurements[0];
    assert_eq!(m.status, MeasurementStatus::Measured, "{:?}", m.reason);
    // Its flood keeps the kernel's writeback busy on the server's CPU, which may disturb its rounds (they
    // are then run again): at least the two rounds asked were run.
    assert!(m.rounds.len() >= 2, "{} rounds", m.rounds.len());
    assert!(m.rounds.iter().all(|r| r.load.requests > 0), "every round has requests");
    let log = dir.join("logs/fake-floods.hello.log");
    let size = std::fs::metadata(&log).unwrap().len();
    assert!(size < 3 * serverbench::launch::server::LOG_LIMIT, "the log is bounded: {size} bytes");
    let tail = common::text(&std::fs::read(&log).unwrap());
    assert!(tail.contains("bytes of this server's output dropped here"), "the trim is said in the log ({size} bytes): {}", &tail[..tail.len().min(300)]);
    assert!(tail.starts_with("fake server: flooding stdout, line 0\n"), "the start of the log is kept");
    assert_no_process_left(tmp.path());
}

#[test]
fn an_unwritable_results_folder_is_refused_before_anything_starts() {
    let (tmp, catalog) = common::fixture_copy("catalog");
    // A path under a regular file cannot be created, not even by root.
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let out = file.join("results");
    let o = bench(&catalog, &out, &["fake-good"], &["-d", "300ms", "--rounds", "1"]).output().unwrap();
    let stderr = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&format!("cannot write the results folder {}", out.display())), "{stderr}");
    assert!(stderr.contains("choose a writable folder with -o DIR"), "{stderr}");
    assert!(!catalog.join("python/good/build").exists(), "nothing was built");
    assert!(!stderr.contains("started and verified"), "no server was started: {stderr}");
    assert_no_process_left(tmp.path());
}
