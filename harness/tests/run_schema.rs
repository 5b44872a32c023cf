//! run.json's keys and structure, pinned: every stored run read through the model and written back keeps
//! each key at its place with its type of value, and the key paths of a small run are a snapshot, so a
//! change of the model that changes the file shows here.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;
use serverbench::model::RunResult;
use serverbench::report::{json::Json, Exporter};

#[path = "fixtures/runs/synthetic.rs"]
#[allow(dead_code)]
mod synthetic;

/// Every key path with the kind of its value: `measurements[].rounds[].load.requests: number`. Array
/// elements share one path, so the set says what the file holds, not how much of it.
fn key_paths(value: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    walk(value, String::new(), &mut out);
    out
}

fn walk(value: &Value, path: String, out: &mut BTreeSet<String>) {
    let kind = match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    out.insert(format!("{path}: {kind}"));
    match value {
        Value::Array(items) => items.iter().for_each(|v| walk(v, format!("{path}[]"), out)),
        Value::Object(map) => map.iter().for_each(|(k, v)| walk(v, if path.is_empty() { k.clone() } else { format!("{path}.{k}") }, out)),
        _ => {}
    }
}

fn fixture_runs() -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs");
    let mut runs: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path().join("run.json")).filter(|p| p.is_file()).collect();
    runs.sort();
    runs
}

/// A stored run read through the model and written back loses no key and changes no value's type. Runs
/// stored before a field existed gain it (with its default); those keys are a snapshot too, so a key that
/// appears or goes shows in the diff.
#[test]
fn every_stored_run_reads_and_writes_back_with_the_same_keys() {
    let runs = fixture_runs();
    assert!(runs.len() >= 4, "the fixture runs are gone: {runs:?}");
    let mut gained_by_old_runs = BTreeSet::new();
    for path in runs {
        let text = std::fs::read_to_string(&path).unwrap();
        let original: Value = serde_json::from_str(&text).unwrap();
        let run: RunResult = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let written = Json.serialize(&run).unwrap();
        let (before, after) = (key_paths(&original), key_paths(&serde_json::from_slice(&written).unwrap()));
        let lost: Vec<_> = before.difference(&after).collect();
        assert!(lost.is_empty(), "{}: the model drops or retypes {lost:#?}", path.display());
        gained_by_old_runs.extend(after.difference(&before).cloned());
        let again: RunResult = serde_json::from_slice(&written).unwrap();
        assert_eq!(Json.serialize(&again).unwrap(), written, "{}: a second trip changes the file", path.display());
    }
    insta::assert_snapshot!(gained_by_old_runs.into_iter().collect::<Vec<_>>().join("\n"));
}

#[test]
fn the_key_paths_of_a_small_run() {
    let run = synthetic::run("schema", &[synthetic::Config::new("c-epoll", "hello", 64, 100_000.0)]);
    let written: Value = serde_json::from_slice(&Json.serialize(&run).unwrap()).unwrap();
    let paths: Vec<String> = key_paths(&written).into_iter().collect();
    insta::assert_snapshot!(paths.join("\n"));
}

/// What an A/B run adds to the file: its options under `config.ab`, the two versions and their pairs under
/// `ab`, and the derived `ab_summary`.
#[test]
fn the_key_paths_an_ab_run_adds() {
    let small = synthetic::run("schema", &[synthetic::Config::new("c-epoll", "hello", 64, 100_000.0)]);
    let ab = synthetic::ab_run("schema-ab");
    let paths = |run| key_paths(&serde_json::from_slice(&Json.serialize(run).unwrap()).unwrap());
    let added: Vec<String> = paths(&ab).difference(&paths(&small)).filter(|p| p.starts_with("ab") || p.starts_with("config.ab")).cloned().collect();
    insta::assert_snapshot!(added.join("\n"));
}

/// A run stored when `keepalive_lost` counted the clean closes too (its loads have `server_closes` and no
/// `keepalive_lost_excludes_server_closes`) reads with them taken out, and its `keepalive-lost` flags judged
/// again: the rounds that only had clean closes are `server-closes`; the one that lost requests on two
/// closes keeps `keepalive-lost` with 2. Written back, it reads the same.
#[test]
fn an_old_run_reads_its_clean_closes_apart_from_keepalive_lost() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs/closes-in-keepalive-lost");
    let run = serverbench::report::load(&dir).unwrap();
    let seen = |run: &RunResult| -> Vec<(bool, u32, u64, u64, Vec<String>)> {
        run.measurements[0].rounds.iter().map(|r| (r.warmup, r.index, r.load.keepalive_lost, r.load.server_closes, r.flags.iter().map(ToString::to_string).collect())).collect()
    };
    let flags = |f: &[&str]| f.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let expected = vec![
        (true, 1, 0, 4, flags(&["server-closes"])),
        (false, 1, 0, 8, flags(&["server-closes"])),
        (false, 2, 0, 8, flags(&["server-closes"])),
        (false, 3, 2, 3, flags(&["errors", "keepalive-lost", "server-closes"])),
        (false, 4, 0, 0, flags(&[])),
        (false, 5, 0, 8, flags(&["server-closes"])),
    ];
    assert_eq!(seen(&run), expected);
    let summary = run.measurements[0].summary();
    assert_eq!((summary.keepalive_lost_rounds, summary.server_closes_rounds), (1, 4));
    let again: RunResult = serde_json::from_slice(&Json.serialize(&run).unwrap()).unwrap();
    assert_eq!(seen(&again), expected, "a run read and written back is not corrected twice");
}
