//! The history of runs, each test on SQLite's file and on a PostgreSQL server the test starts
//! (`common::postgres`): the store (one copy of a run however often it is recorded, migrations, a history
//! that cannot be opened or reached), `history import` of every run.json of the suite, and `history --json`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::history_backends::{Backend, TestHistory};
use serverbench::commands::save_run;
use serverbench::history::{History, Location, Recorder, CONNECT_TIMEOUT};
use serverbench::model::history_schema::current_version;
use serverbench::ui::{Ui, Verbosity};

/// Each test is a function of the backend, run once on each: `name::sqlite` and `name::postgres`.
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[test]
            fn sqlite() {
                super::$name(super::Backend::Sqlite, concat!(stringify!($name), "_sqlite"));
            }
            #[test]
            fn postgres() {
                super::$name(super::Backend::Postgres, concat!(stringify!($name), "_postgres"));
            }
        }
    )*};
}

on_both_backends!(
    recording_a_run_twice_leaves_one_copy,
    a_new_history_is_migrated_to_the_current_schema_and_a_newer_one_refused,
    a_recorder_records_each_save_and_off_records_nothing,
    import_records_every_run_json_of_the_suite,
    an_interrupted_run_keeps_its_mark_and_its_revision,
    an_import_names_what_it_could_not_read_and_fails_when_nothing_was,
    history_json_lists_each_series_over_its_runs_in_time_order,
    fail_on_change_exits_3_for_a_servers_own_change_in_the_last_runs,
    a_bisections_steps_are_kept_once_and_read_back_by_their_options,
);

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

fn serverbench(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_serverbench")).args(args).env_remove("SERVERBENCH_HISTORY").output().unwrap()
}

/// A PostgreSQL setting whose socket folder exists but holds no server.
fn postgres_without_server(folder: &Path) -> Location {
    let host = folder.to_string_lossy().replace('/', "%2F");
    Location::Postgres(format!("postgresql://nobody:s3cret@{host}/history"))
}

fn recording_a_run_twice_leaves_one_copy(backend: Backend, test: &str) {
    let Some(db) = TestHistory::new(backend, test) else { return };
    let run = serverbench::report::load(&runs_folder().join("base")).unwrap();
    let mut history = History::open(&db.location).unwrap();
    history.record(&run).unwrap();
    let figures = db.count("SELECT COUNT(*) FROM figures");
    assert!(figures >= run.measurements.len() as i64, "every measured configuration has req/s at least: {figures}");
    history.record(&run).unwrap();
    assert_eq!(db.count("SELECT COUNT(*) FROM runs"), 1);
    assert_eq!(db.count("SELECT COUNT(*) FROM measurements"), run.measurements.len() as i64);
    assert_eq!(db.count("SELECT COUNT(*) FROM figures"), figures);
    assert!(history.has_run("base").unwrap() && !history.has_run("other").unwrap());
    let stored = history.figures(serverbench::model::verdict::Metric::RequestsPerS).unwrap();
    assert!(!stored.is_empty() && stored.iter().all(|f| f.point.run_id == "base" && f.point.median > 0.0 && f.connections > 0 && f.pipeline >= 1));
}

fn a_new_history_is_migrated_to_the_current_schema_and_a_newer_one_refused(backend: Backend, test: &str) {
    let Some(db) = TestHistory::new(backend, test) else { return };
    let mut history = History::open(&db.location).unwrap();
    assert_eq!(history.version().unwrap(), current_version());
    drop(history);
    for table in ["runs", "measurements", "figures", "schema_version"] {
        assert!(db.has_table(table), "{table}");
    }
    assert_eq!(db.count(&format!("SELECT COUNT(*) FROM schema_version WHERE version = {}", current_version())), 1);
    assert_eq!(History::open(&db.location).unwrap().version().unwrap(), current_version(), "opening again migrates nothing");
    assert_eq!(db.count("SELECT COUNT(*) FROM schema_version"), 1);
    db.execute("UPDATE schema_version SET version = 999");
    let error = History::open(&db.location).err().expect("a newer schema is refused").to_string();
    assert!(error.contains("999") && error.contains("newer"), "{error}");
}

#[test]
fn an_empty_file_is_migrated_in_wal_mode() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("h.sqlite");
    std::fs::write(&db, b"").unwrap();
    let mut history = History::open(&Location::File(db.clone())).unwrap();
    assert_eq!(history.version().unwrap(), current_version());
    let journal: String = rusqlite::Connection::open(&db).unwrap().query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!(journal, "wal");
}

#[test]
fn an_unreachable_postgres_history_warns_once_within_the_connect_timeout_without_its_password() {
    let empty = tempfile::tempdir().unwrap();
    let run = serverbench::report::load(&runs_folder().join("base")).unwrap();
    let mut recorder = Recorder::new(postgres_without_server(empty.path()));
    let started = Instant::now();
    let warning = recorder.record(&run).expect("a warning the first time");
    assert!(started.elapsed() < CONNECT_TIMEOUT + Duration::from_secs(1), "{:?}", started.elapsed());
    assert!(warning.contains(&empty.path().display().to_string()) && warning.contains("not recorded"), "{warning}");
    assert!(!warning.contains("s3cret"), "{warning}");
    let started = Instant::now();
    assert_eq!(recorder.record(&run), None, "once");
    assert!(started.elapsed() < Duration::from_millis(100), "not tried again: {:?}", started.elapsed());
}

#[test]
fn a_benchmark_whose_postgres_history_is_unreachable_finishes_and_says_so() {
    let _alone = common::one_bench_at_a_time();
    let (tmp, catalog) = common::fixture_copy("catalog");
    let out = tmp.path().join("results");
    let Location::Postgres(setting) = postgres_without_server(tmp.path()) else { unreachable!() };
    let o = common::serverbench()
        .args(["bench", "fake-good", "--contestants", catalog.to_str().unwrap(), "-o", out.to_str().unwrap()])
        .args(["-d", "300ms", "--warmup", "0", "--rounds", "2", "--max-rounds", "4", "-c", "2", "--no-control"])
        .env("SERVERBENCH_HISTORY", &setting)
        .output()
        .unwrap();
    let stderr = common::text(&o.stderr);
    assert!(o.status.success(), "stdout:\n{}\nstderr:\n{stderr}", common::text(&o.stdout));
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("is not recorded in the history")).collect();
    assert_eq!(warnings.len(), 1, "one warning, however many passes: {stderr}");
    assert!(warnings[0].contains(&tmp.path().display().to_string()) && !stderr.contains("s3cret"), "{stderr}");
    let dir = common::only_run_dir(&out);
    assert!(dir.join("run.json").is_file());
    assert!(!common::text(&std::fs::read(dir.join("run.json")).unwrap()).contains("s3cret"), "the setting is not in run.json");
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

fn a_recorder_records_each_save_and_off_records_nothing(backend: Backend, test: &str) {
    let Some(db) = TestHistory::new(backend, test) else { return };
    let mut run = serverbench::report::load(&runs_folder().join("base")).unwrap();
    assert_eq!(Recorder::new(Location::Off).record(&run), None);
    let mut recorder = Recorder::new(db.location.clone());
    assert_eq!(recorder.record(&run), None);
    run.measurements.truncate(2);
    assert_eq!(recorder.record(&run), None, "the next pass's save");
    assert_eq!(db.count("SELECT COUNT(*) FROM runs"), 1);
    assert_eq!(db.count("SELECT COUNT(*) FROM measurements"), 2, "the last save's model replaces the first's");
}

fn import_records_every_run_json_of_the_suite(backend: Backend, test: &str) {
    let Some(db) = TestHistory::new(backend, test) else { return };
    let folders = fixture_runs();
    let mut args = vec!["history".to_string(), "import".into(), "--db".into(), db.setting()];
    args.extend(folders.iter().map(|f| f.display().to_string()));
    let out = serverbench(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&format!("imported {} run(s)", folders.len())), "{stdout}");
    for folder in &folders {
        let run = serverbench::report::load(folder).unwrap();
        let sql = format!("SELECT COUNT(*) FROM measurements WHERE run_id = '{}'", run.run_id);
        assert_eq!(db.count(&sql), run.measurements.len() as i64, "{}", folder.display());
    }
    assert_eq!(db.count("SELECT COUNT(*) FROM runs WHERE catalog_dirty IS NOT NULL"), 0, "no fixture recorded its revision");
}

fn an_interrupted_run_keeps_its_mark_and_its_revision(backend: Backend, test: &str) {
    let Some(db) = TestHistory::new(backend, test) else { return };
    let tmp = tempfile::tempdir().unwrap();
    let mut run: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(runs_folder().join("base/run.json")).unwrap()).unwrap();
    run["run_id"] = "stopped".into();
    run["interrupted"] = true.into();
    run["measurements"][0]["status"] = "interrupted".into();
    run["environment"]["catalog_revision"] = serde_json::json!({"commit": "0123456789abcdef0123456789abcdef01234567", "dirty": true});
    let folder = tmp.path().join("results/stopped");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("run.json"), serde_json::to_string(&run).unwrap()).unwrap();
    let out = serverbench(&["history", "import", "--db", &db.setting(), tmp.path().join("results").to_str().unwrap()]);
    assert!(out.status.success(), "a results folder's run folders are read: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(db.count("SELECT COUNT(*) FROM runs WHERE run_id = 'stopped' AND interrupted"), 1);
    assert_eq!(db.count("SELECT COUNT(*) FROM runs WHERE run_id = 'stopped' AND catalog_dirty"), 1);
    assert_eq!(db.count("SELECT COUNT(*) FROM runs WHERE catalog_commit = '0123456789abcdef0123456789abcdef01234567'"), 1);
    assert_eq!(db.count("SELECT COUNT(*) FROM measurements WHERE run_id = 'stopped' AND status = 'interrupted'"), 1);
}

fn an_import_names_what_it_could_not_read_and_fails_when_nothing_was(backend: Backend, test: &str) {
    let Some(db) = TestHistory::new(backend, test) else { return };
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("nothing-here");
    std::fs::create_dir(&empty).unwrap();
    let db = db.setting();
    let db = db.as_str();
    let out = serverbench(&["history", "import", "--db", db, empty.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("nothing-here"), "{stderr}");
    let out = serverbench(&["history", "import", "--db", db, empty.to_str().unwrap(), runs_folder().join("base").to_str().unwrap()]);
    assert!(out.status.success(), "one readable run is enough");
    assert!(String::from_utf8_lossy(&out.stdout).contains("imported 1 run(s)"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing-here"));
}

fn history_json_lists_each_series_over_its_runs_in_time_order(backend: Backend, test: &str) {
    let Some(db) = TestHistory::new(backend, test) else { return };
    let db = db.setting();
    let out = serverbench(&["history", "import", "--db", &db, runs_folder().to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = serverbench(&["history", "--db", &db, "--json"]);
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
    assert!(!json["history"].as_str().unwrap().is_empty());
    let out = serverbench(&["history", "--db", &db, "--contestant", "c-epoll", "--metric", "p99"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("## c-epoll · hello") && text.contains("not recorded") && !text.contains("rust-tokio"), "{text}");
}

fn fail_on_change_exits_3_for_a_servers_own_change_in_the_last_runs(backend: Backend, test: &str) {
    let Some(db) = TestHistory::new(backend, test) else { return };
    let tmp = tempfile::tempdir().unwrap();
    let base = serverbench::report::load(&runs_folder().join("base")).unwrap();
    let mut history = History::open(&db.location).unwrap();
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
    let db = db.setting();
    let db = db.as_str();
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

/// A bisection's steps: one row per step however often it is recorded, read back as written (a judged
/// step with and without an interval, a broken one), and only under the contestant, figure and options
/// they were taken with.
fn a_bisections_steps_are_kept_once_and_read_back_by_their_options(backend: Backend, test: &str) {
    use serverbench::history::{StepRead, StoredStep};
    use serverbench::model::verdict::{Metric, Verdict};
    let Some(history) = TestHistory::new(backend, test) else { return };
    let step = |b: &str, attempt: u32, second: u32, read: StepRead| StoredStep {
        contestant: "reference".into(),
        metric: Metric::RequestsPerS,
        options: "-d 200ms".into(),
        a_commit: "a".repeat(40),
        b_commit: b.repeat(40),
        attempt,
        run_id: matches!(read, StepRead::Judged { .. }).then(|| format!("run-{b}{attempt}")),
        read,
        recorded_utc: format!("2026-11-28T10:00:0{second}Z"),
    };
    let ends = step("f", 1, 1, StepRead::Judged { verdict: Verdict::Worse, ratio: Some(0.95), ci95: Some((0.93, 0.97)), pairs: 24, seconds: 61.5 });
    let unclear = step("c", 1, 2, StepRead::Judged { verdict: Verdict::Unclear, ratio: Some(0.99), ci95: None, pairs: 60, seconds: 90.0 });
    let broken = step("d", 2, 3, StepRead::Broken("the build failed: make: *** [all] Error 2".into()));
    let mut h = History::open(&history.location).unwrap();
    for s in [&ends, &unclear, &broken, &ends] {
        h.record_step(s).unwrap();
    }
    assert_eq!(history.count("SELECT COUNT(*) FROM bisect_steps"), 3);
    assert_eq!(h.steps("reference", Metric::RequestsPerS, "-d 200ms").unwrap(), vec![ends.clone(), unclear, broken]);
    assert!(h.steps("reference", Metric::RequestsPerS, "-d 200ms -c 8").unwrap().is_empty());
    assert!(h.steps("reference", Metric::P99, "-d 200ms").unwrap().is_empty());
    assert!(h.steps("other", Metric::RequestsPerS, "-d 200ms").unwrap().is_empty());
}
