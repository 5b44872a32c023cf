//! The history of runs: the store (one copy of a run however often it is recorded, migrations, a history
//! that cannot be opened), `history import` of every run.json of the suite, and `history --json`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serverbench::commands::save_run;
use serverbench::history::{History, Location, Recorder};
use serverbench::model::history_schema::current_version;
use serverbench::ui::{Ui, Verbosity};

fn runs_folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs")
}

/// Every run.json of the suite's fixtures, by folder.
fn fixture_runs() -> Vec<PathBuf> {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, found);
            } else if path.file_name().is_some_and(|n| n == "run.json") {
                found.push(path.parent().unwrap().to_path_buf());
            }
        }
    }
    let mut found = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests"), &mut found);
    found.sort();
    assert!(found.len() >= 10, "{found:?}");
    found
}

fn count(db: &Path, sql: &str) -> i64 {
    rusqlite::Connection::open(db).unwrap().query_row(sql, [], |r| r.get(0)).unwrap()
}

fn serverbench(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_serverbench")).args(args).env_remove("SERVERBENCH_HISTORY").output().unwrap()
}

#[test]
fn recording_a_run_twice_leaves_one_copy() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("history.sqlite");
    let run = serverbench::report::load(&runs_folder().join("base")).unwrap();
    let mut history = History::open(&db).unwrap();
    history.record(&run).unwrap();
    let figures = count(&db, "SELECT COUNT(*) FROM figures");
    assert!(figures >= run.measurements.len() as i64, "every measured configuration has req/s at least: {figures}");
    history.record(&run).unwrap();
    assert_eq!(count(&db, "SELECT COUNT(*) FROM runs"), 1);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM measurements"), run.measurements.len() as i64);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM figures"), figures);
    assert!(history.has_run("base").unwrap());
}

#[test]
fn an_empty_file_is_migrated_to_the_current_schema_and_a_newer_one_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("h.sqlite");
    std::fs::write(&db, b"").unwrap();
    let history = History::open(&db).unwrap();
    assert_eq!(history.version().unwrap(), current_version());
    drop(history);
    for table in ["runs", "measurements", "figures", "schema_version"] {
        assert_eq!(count(&db, &format!("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = '{table}'")), 1, "{table}");
    }
    assert_eq!(count(&db, "SELECT version FROM schema_version"), current_version() as i64);
    assert_eq!(History::open(&db).unwrap().version().unwrap(), current_version(), "opening again migrates nothing");
    let journal: String = rusqlite::Connection::open(&db).unwrap().query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!(journal, "wal");
    rusqlite::Connection::open(&db).unwrap().execute("UPDATE schema_version SET version = 999", []).unwrap();
    let error = History::open(&db).err().expect("a newer schema is refused").to_string();
    assert!(error.contains("999") && error.contains("newer"), "{error}");
}

#[test]
fn an_unreachable_history_warns_once_and_the_benchmark_saves() {
    let unreachable = Location::File(PathBuf::from("/proc/x/history.sqlite"));
    let run = serverbench::report::load(&runs_folder().join("base")).unwrap();
    let mut recorder = Recorder::new(unreachable.clone());
    let warning = recorder.record(&run).expect("a warning the first time");
    assert!(warning.contains("/proc/x/history.sqlite") && warning.contains("not recorded"), "{warning}");
    assert_eq!(recorder.record(&run), None, "once");
    let tmp = tempfile::tempdir().unwrap();
    let mut recorder = Recorder::new(unreachable);
    let ui = Ui::new(Verbosity::Quiet);
    for _pass in 0..2 {
        save_run(&run, tmp.path(), &mut recorder, &ui).expect("the history never fails a save");
    }
    assert!(tmp.path().join("run.json").is_file(), "the run's own files are written");
}

#[test]
fn a_recorder_records_each_save_and_off_records_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let mut run = serverbench::report::load(&runs_folder().join("base")).unwrap();
    assert_eq!(Recorder::new(Location::Off).record(&run), None);
    let db = tmp.path().join("history.sqlite");
    let mut recorder = Recorder::new(Location::File(db.clone()));
    assert_eq!(recorder.record(&run), None);
    run.measurements.truncate(2);
    assert_eq!(recorder.record(&run), None, "the next pass's save");
    assert_eq!(count(&db, "SELECT COUNT(*) FROM runs"), 1);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM measurements"), 2, "the last save's model replaces the first's");
}

#[test]
fn import_records_every_run_json_of_the_suite() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("h.sqlite");
    let folders = fixture_runs();
    let mut args = vec!["history".to_string(), "import".into(), "--db".into(), db.display().to_string()];
    args.extend(folders.iter().map(|f| f.display().to_string()));
    let out = serverbench(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&format!("imported {} run(s)", folders.len())), "{stdout}");
    for folder in &folders {
        let run = serverbench::report::load(folder).unwrap();
        let sql = format!("SELECT COUNT(*) FROM measurements WHERE run_id = '{}'", run.run_id);
        assert_eq!(count(&db, &sql), run.measurements.len() as i64, "{}", folder.display());
    }
    assert_eq!(count(&db, "SELECT COUNT(*) FROM runs WHERE catalog_dirty IS NOT NULL"), 0, "no fixture recorded its revision");
}

#[test]
fn an_interrupted_run_keeps_its_mark_and_its_revision() {
    let tmp = tempfile::tempdir().unwrap();
    let mut run: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(runs_folder().join("base/run.json")).unwrap()).unwrap();
    run["run_id"] = "stopped".into();
    run["interrupted"] = true.into();
    run["measurements"][0]["status"] = "interrupted".into();
    run["environment"]["catalog_revision"] = serde_json::json!({"commit": "0123456789abcdef0123456789abcdef01234567", "dirty": true});
    let folder = tmp.path().join("results/stopped");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("run.json"), serde_json::to_string(&run).unwrap()).unwrap();
    let db = tmp.path().join("h.sqlite");
    let out = serverbench(&["history", "import", "--db", db.to_str().unwrap(), tmp.path().join("results").to_str().unwrap()]);
    assert!(out.status.success(), "a results folder's run folders are read: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(count(&db, "SELECT interrupted FROM runs WHERE run_id = 'stopped'"), 1);
    assert_eq!(count(&db, "SELECT catalog_dirty FROM runs WHERE run_id = 'stopped'"), 1);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM measurements WHERE run_id = 'stopped' AND status = 'interrupted'"), 1);
}

#[test]
fn an_import_names_what_it_could_not_read_and_fails_when_nothing_was() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("nothing-here");
    std::fs::create_dir(&empty).unwrap();
    let db = tmp.path().join("h.sqlite");
    let out = serverbench(&["history", "import", "--db", db.to_str().unwrap(), empty.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("nothing-here"), "{stderr}");
    let out = serverbench(&["history", "import", "--db", db.to_str().unwrap(), empty.to_str().unwrap(), runs_folder().join("base").to_str().unwrap()]);
    assert!(out.status.success(), "one readable run is enough");
    assert!(String::from_utf8_lossy(&out.stdout).contains("imported 1 run(s)"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing-here"));
}

#[test]
fn history_json_lists_each_series_over_its_runs_in_time_order() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("h.sqlite");
    let out = serverbench(&["history", "import", "--db", db.to_str().unwrap(), runs_folder().to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = serverbench(&["history", "--db", db.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["metric"], "rps");
    let series = json["series"].as_array().unwrap();
    assert!(series.len() > 10, "{}", series.len());
    for s in series {
        let c = &s["configuration"];
        assert!(s["contestant"].is_string() && c["scenario"].is_string() && c["load"].is_string() && c["connections"].is_u64(), "{s}");
        assert!(c["pipeline"].is_u64() && c["tool"] == "builtin", "{s}");
        let times: Vec<&str> = s["points"].as_array().unwrap().iter().map(|p| p["started_utc"].as_str().unwrap()).collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "time order: {times:?}");
        assert!(s["points"].as_array().unwrap().iter().all(|p| p["median"].as_f64().is_some_and(|m| m > 0.0) && p["commit"].is_null()));
        assert!(s["change_points"].is_array());
    }
    let epoll: Vec<&serde_json::Value> = series.iter().filter(|s| s["contestant"] == "c-epoll" && s["configuration"]["connections"] == 64).collect();
    assert_eq!(epoll.len(), 1);
    assert_eq!(epoll[0]["points"].as_array().unwrap().len(), 8, "the eight real runs of hello at 64 connections");
    let out = serverbench(&["history", "--db", db.to_str().unwrap(), "--contestant", "c-epoll", "--metric", "p99"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("## c-epoll · hello") && text.contains("not recorded") && !text.contains("rust-tokio"), "{text}");
}

#[test]
fn fail_on_change_exits_3_for_a_servers_own_change_in_the_last_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("h.sqlite");
    let base = serverbench::report::load(&runs_folder().join("base")).unwrap();
    let mut history = History::open(&db).unwrap();
    for i in 0..12u64 {
        let mut run = base.clone();
        run.run_id = format!("gate-{i:02}");
        run.started_utc = format!("2026-02-01T00:{i:02}:00Z");
        for (k, m) in run.measurements.iter_mut().enumerate() {
            // A spread of ±1% from run to run, and c-epoll 40% slower in the last three runs.
            let jitter = 1.0 + 0.005 * (((i as usize * 7 + k) % 5) as f64 - 2.0);
            let factor = if m.contestant == "c-epoll" && i >= 9 { 0.6 * jitter } else { jitter };
            m.rounds.iter_mut().for_each(|r| r.load.requests = (r.load.requests as f64 * factor) as u64);
        }
        history.record(&run).unwrap();
    }
    drop(history);
    let db = db.to_str().unwrap();
    let out = serverbench(&["history", "--db", db, "--contestant", "c-epoll"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "without --fail-on the history only shows: {text}");
    assert!(text.contains("change at run gate-09") && text.contains("the server's own"), "{text}");
    let out = serverbench(&["history", "--db", db, "--fail-on", "change"]);
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("c-epoll · hello") && stderr.contains("gate-09") && !stderr.contains("rust-tokio"), "{stderr}");
    let out = serverbench(&["history", "--db", db, "--fail-on", "change", "--contestant", "rust-tokio"]);
    assert!(out.status.success(), "a series without a change passes the gate");
    let page = tmp.path().join("history.html");
    let out = serverbench(&["history", "--db", db, "--contestant", "c-epoll", "--html", page.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<svg") && html.contains("c-epoll") && html.contains("change at run gate-09"), "a chart per configuration and the change points");
    assert!(!html.contains("rust-tokio"));
}
