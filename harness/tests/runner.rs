//! The runner end to end, in process, on fake contestants: one that fails to build, one that fails to
//! start, one that answers wrong bytes, one that dies mid-round, one that ignores SIGTERM, one that needs a
//! missing command; each is reported as such while the good one is measured. No test asserts a speed.

mod common;

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use serverbench::catalog::Catalog;
use serverbench::cli::bench::BenchArgs;
use serverbench::report;
use serverbench::run::options::{BenchOptions, Tool};
use serverbench::model::{ContestantStatus, MeasurementStatus, RunResult};
use serverbench::ui::{Ui, Verbosity};

/// Short rounds with few connections; nothing installed. A round disturbed by the machine (steal reached
/// 25-60% of a round here in stretches) is run again, up to eight rounds in all.
fn choices(catalog: &Path, out: &Path) -> BenchArgs {
    let (catalog, out) = (catalog.display().to_string(), out.display().to_string());
    BenchArgs::parse(&["--contestants", &catalog, "-o", &out, "-c", "8", "--rounds", "2", "--max-rounds", "8", "-d", "500ms", "--start-timeout", "20s", "--no-install"]).unwrap()
}

fn options(args: BenchArgs) -> BenchOptions {
    args.options(Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap(), vec!["serverbench".into(), "bench".into()]).unwrap()
}

/// One round of the good contestant alone.
fn good_only(catalog: &Path, out: &Path) -> BenchArgs {
    let mut args = choices(catalog, out);
    args.select.terms = vec!["fake-good".into()];
    args.warmup = 0;
    args.rounds = "1".into();
    args
}

fn bench(opts: &BenchOptions) -> (RunResult, std::path::PathBuf, usize) {
    let _alone = common::one_bench_at_a_time();
    // A stretch of the VM's steal can leave out more rounds than the bound holds: the run again then.
    let asked = match opts.rounds {
        serverbench::run::options::Rounds::Fixed(n) => n as usize,
        _ => 1,
    };
    let enough = |(run, _, _): &(RunResult, std::path::PathBuf, usize)| {
        run.measurements.iter().filter(|m| m.status == MeasurementStatus::Measured).all(|m| m.measured_rounds().count() >= asked)
    };
    common::steal::measured_past_steal("runner", || bench_once(opts), enough)
}

fn bench_once(opts: &BenchOptions) -> (RunResult, std::path::PathBuf, usize) {
    let catalog = Catalog::discover(&opts.catalog_root).unwrap();
    let (id, dir) = serverbench::run::create_run_dir(&opts.out_dir).unwrap();
    let ui = Ui::new(Verbosity::Quiet);
    let stop = Arc::new(AtomicBool::new(false));
    let mut saves = 0;
    let mut save = |r: &RunResult| {
        saves += 1;
        report::write_all(r, &dir).map(|_| ())
    };
    let run = serverbench::run::bench(opts, &catalog, &id, &dir, &ui, &stop, None, &mut save).unwrap();
    (run, dir, saves)
}

#[test]
fn every_failure_is_reported_while_the_good_one_is_measured() {
    let (tmp, catalog) = common::fixture_copy("catalog");
    let out = tmp.path().join("results");
    let opts = options(choices(&catalog, &out));
    let (run, dir, saves) = bench(&opts);

    let status = |name: &str| run.contestant(name).unwrap_or_else(|| panic!("{name} recorded")).status;
    let reason = |name: &str| run.contestant(name).unwrap().reason.clone().unwrap_or_default();
    let measurement = |name: &str| {
        run.measurements.iter().find(|m| m.contestant == name).unwrap_or_else(|| panic!("{name} has a measurement"))
    };

    // Measured: the good one, and the stubborn one (with a warning about SIGTERM).
    for name in ["fake-good", "fake-stubborn"] {
        let m = measurement(name);
        assert_eq!(m.status, MeasurementStatus::Measured, "{name}: {:?}", m.reason);
        assert_eq!(m.rounds.iter().filter(|r| r.warmup).count(), 1);
        let machine: Vec<_> = m.rounds.iter().map(|r| (r.flags.clone(), r.machine.foreign_pct, r.machine.steal_pct)).collect();
        assert_eq!(m.measured_rounds().count(), 2, "rounds that count: {machine:?}");
        assert_eq!(m.response_bytes, Some(51));
        for r in &m.rounds {
            assert!(r.load.requests > 0, "{name}: a round without requests");
            assert_eq!(r.load.errors.total(), 0, "{name}: {:?}", r.load.errors);
            assert!(r.server.processes >= 1);
            assert!(r.server.peak_rss_bytes.is_some_and(|b| b > 0));
            assert!(!r.load.latency.is_empty(), "the builtin engine keeps a histogram");
            // The machine around the round, as run.json names it for other tools.
            let machine = &r.machine;
            assert!(machine.started_s.is_some() && machine.quiet_wait_ms.is_some_and(|ms| ms >= 0.0), "{name}: {machine:?}");
            assert!(machine.foreign_pct.is_some() && machine.steal_pct.is_some(), "{name}: {machine:?}");
            let roles: std::collections::BTreeSet<&str> = machine.cpu_speed.iter().map(|c| c.role.as_str()).collect();
            assert_eq!(roles, ["client", "server"].into(), "{name}: every server and client CPU probed: {machine:?}");
            assert!(machine.cpu_speed.iter().all(|c| c.user_per_ms > 0.0 && c.syscall_per_ms > 0.0), "{name}: {machine:?}");
        }
        assert!(m.summary().median_rps.is_some_and(|rps| rps > 0.0) && m.summary().rounds_used == 2, "{name}: {:?}", m.summary());
    }
    let stubborn = run.contestant("fake-stubborn").unwrap();
    assert!(stubborn.warnings.iter().any(|w| w.contains("SIGTERM")), "{:?}", stubborn.warnings);
    assert!(run.contestant("fake-good").unwrap().warnings.is_empty());
    assert_eq!(run.contestant("fake-good").unwrap().version.as_deref().map(|v| v.starts_with("Python")), Some(true));

    // Failed to build: the contestant is failed with the tail of its log.
    assert_eq!(status("fake-fails-build"), ContestantStatus::Failed);
    assert!(reason("fake-fails-build").contains("error: this fake contestant never builds"), "{}", reason("fake-fails-build"));
    assert!(dir.join(run.contestant("fake-fails-build").unwrap().build_log.as_ref().unwrap()).is_file());

    // Failed to start, answered wrongly, died mid-round: failed measurements that say why.
    let m = measurement("fake-fails-start");
    assert_eq!(m.status, MeasurementStatus::Failed);
    let why = m.reason.as_deref().unwrap();
    assert!(why.starts_with("failed to start: exited"), "{why}");
    assert!(why.contains("this contestant always fails to start"), "the log tail is quoted: {why}");

    let m = measurement("fake-wrong-bytes");
    assert_eq!(m.status, MeasurementStatus::Failed);
    assert!(m.rounds.is_empty(), "a wrong contestant is not measured");
    assert!(m.reason.as_deref().unwrap().contains("Hello World?"), "{:?}", m.reason);

    let m = measurement("fake-dies-mid-round");
    assert_eq!(m.status, MeasurementStatus::Failed);
    let why = m.reason.as_deref().unwrap();
    assert!(why.contains("the server exited"), "{why}");
    assert!(why.contains("dying mid-round on purpose"), "{why}");

    // Skipped: a missing command, and a contestant without the asked scenario.
    assert_eq!(status("fake-needs-tool"), ContestantStatus::Skipped);
    assert!(reason("fake-needs-tool").contains("command `serverbench-no-such-command` not found on PATH"));
    assert_eq!(status("fake-echo-only"), ContestantStatus::Skipped);
    assert!(reason("fake-echo-only").contains("declares none of the requested scenarios"));

    // The files: rewritten along the way, complete at the end, and regenerable from run.json alone.
    assert!(saves > 5, "saved after every round ({saves})");
    let back = report::load(&dir).unwrap();
    assert_eq!(back.measurements.len(), run.measurements.len());
    assert!(!back.interrupted);
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    for needle in ["| Name", "req/s", "q0.9999", "| Language | Framework | Category | Style | Name", "## Not measured", "fake-wrong-bytes", "## Warnings"] {
        assert!(summary.contains(needle), "summary.md lacks {needle}:\n{summary}");
    }
    let csv = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + run.measurements.len());
    assert!(dir.join("logs/fake-fails-start.hello.log").is_file());

    assert!(
        common::eventually(Duration::from_secs(5), || common::processes_mentioning(tmp.path()).is_empty()),
        "processes left: {:?}",
        common::processes_mentioning(tmp.path())
    );
}

#[test]
fn builds_are_cached_and_several_connection_counts_are_measured() {
    let (tmp, catalog) = common::fixture_copy("catalog");
    let out = tmp.path().join("results");
    let mut c = good_only(&catalog, &out);
    c.duration = Some(Duration::from_millis(300));
    c.connections = Some(vec![1, 4]);
    c.scenario = vec!["hello".into(), "echo".into()];
    // The configurations below are fake-good's alone; the control has a test of its own (cli.rs).
    c.no_control = true;
    let opts = options(c);
    let (first, _, _) = bench(&opts);
    let good = first.contestant("fake-good").unwrap();
    assert_eq!(good.status, ContestantStatus::Built);
    assert!(!good.build_cached, "the first build runs");
    let configs: Vec<(String, usize)> = first.measurements.iter().map(|m| (m.scenario.clone(), m.connections)).collect();
    assert_eq!(configs, [("hello".into(), 1), ("hello".into(), 4), ("echo".into(), 1), ("echo".into(), 4)]);
    assert!(first.measurements.iter().all(|m| m.status == MeasurementStatus::Measured), "{:?}", first.measurements.iter().map(|m| &m.reason).collect::<Vec<_>>());
    let echo = first.measurements.iter().find(|m| m.scenario == "echo").unwrap();
    assert_eq!(echo.response_bytes, Some(4096));

    let (second, _, _) = bench(&opts);
    assert!(second.contestant("fake-good").unwrap().build_cached, "unchanged sources skip the build");

    // A changed source builds again.
    std::fs::write(catalog.join("python/fake_server.py"), "# changed\n".to_string() + &std::fs::read_to_string(catalog.join("python/fake_server.py")).unwrap()).unwrap();
    let (third, _, _) = bench(&opts);
    assert!(!third.contestant("fake-good").unwrap().build_cached);
    assert!(common::eventually(Duration::from_secs(5), || common::processes_mentioning(tmp.path()).is_empty()));
}

/// `--echo stream`: 4 connections unless told, each writing and reading at once; a round counts 512-byte
/// echoes and the bytes received, has no latency, and the summary's echo table says so.
#[test]
fn echo_streams_count_echoes_and_bandwidth() {
    let (tmp, catalog) = common::fixture_copy("catalog");
    let out = tmp.path().join("results");
    let mut c = good_only(&catalog, &out);
    c.duration = Some(Duration::from_millis(300));
    c.connections = None;
    c.scenario = vec!["echo".into()];
    c.echo = serverbench::cli::load::EchoArg::Stream;
    c.no_control = true;
    let opts = options(c.clone());
    assert_eq!(opts.connections, [4], "streams default to Photon's 4 connections");
    let (run, dir, _) = bench(&opts);
    assert_eq!(run.config.echo.as_deref(), Some("stream"));
    let m = run.measurements.iter().find(|m| m.scenario == "echo").expect("an echo measurement");
    assert_eq!(m.status, MeasurementStatus::Measured, "{:?}", m.reason);
    let measured: Vec<_> = m.rounds.iter().filter(|r| !r.warmup).collect();
    assert!(!measured.is_empty(), "a measured stream has its round");
    for r in measured {
        assert!(r.load.requests > 0, "a stream round without echoes: {:?}", r.load.errors);
        // Whole echoes only: what each connection read, in 512-byte units.
        assert!(r.load.requests * 512 <= r.load.bytes_read && r.load.bytes_read < (r.load.requests + 4) * 512, "{} echoes, {} bytes", r.load.requests, r.load.bytes_read);
        assert!(r.load.latency.is_empty(), "a stream has no exchanges to time");
    }
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(md.contains("## echo (stream) · throughput · 4 connections"), "{md}");
    assert!(md.contains("echoes/s") && md.contains("MB/s") && md.contains("CPU us/echo"), "{md}");

    // Streams are paced by the sockets alone, and carry no exchange per connection.
    c.mode = serverbench::run::options::ModeKind::Latency;
    assert!(c.options(Path::new("/"), vec![]).unwrap_err().to_string().contains("throughput mode only"));
    c.mode = serverbench::run::options::ModeKind::Throughput;
    c.scenario = vec!["hello".into()];
    assert!(c.options(Path::new("/"), vec![]).unwrap_err().to_string().contains("add --scenario echo"));
}

/// One 1 s round of the good contestant with `tool`; the measurement is measured, with requests, and says
/// which tool measured it.
fn measured_with(tool: Tool) -> (RunResult, std::path::PathBuf, tempfile::TempDir) {
    let (tmp, catalog) = common::fixture_copy("catalog");
    let out = tmp.path().join("results");
    let mut c = good_only(&catalog, &out);
    c.duration = Some(Duration::from_secs(1));
    c.tool = tool;
    let (run, dir, _) = bench(&options(c));
    let m = &run.measurements[0];
    assert_eq!(m.status, MeasurementStatus::Measured, "{:?}", m.reason);
    assert_eq!((m.tool.as_str(), run.config.tool.as_str()), (tool.name(), tool.name()));
    let r = &m.rounds[0];
    assert!(r.load.requests > 0);
    assert!(r.load.client_cpu_s > 0.0, "the tool's CPU is probed");
    (run, dir, tmp)
}

#[test]
fn an_external_tool_fills_the_same_model() {
    if serverbench::catalog::requires::find_command("wrk").is_none() {
        return common::skip("an_external_tool_fills_the_same_model", "wrk missing");
    }
    let (run, dir, _tmp) = measured_with(Tool::Wrk);
    let r = &run.measurements[0].rounds[0];
    assert!(r.load.latency.is_empty(), "wrk keeps no histogram");
    let points = r.tool_latency_ns.expect("what wrk printed");
    assert!(points.p50.is_some() && points.p99.is_some() && points.max.is_some());
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.contains("quantiles are the mean of the rounds"), "{summary}");
}

#[test]
fn hey_built_from_its_pinned_module_fills_the_histogram() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    if let Err(e) = serverbench::run::tools::hey::ready(root) {
        return common::skip("hey_built_from_its_pinned_module_fills_the_histogram", &format!("{e:#}"));
    }
    let (run, _dir, _tmp) = measured_with(Tool::Hey);
    let version = serverbench::run::tools::hey::pinned_version(root).unwrap();
    assert_eq!(run.environment.tools.get("hey"), Some(&version));
    let r = &run.measurements[0].rounds[0];
    assert_eq!(r.load.latency.len(), r.load.requests, "every counted request's latency");
    assert!(r.tool_latency_ns.is_none(), "the histogram holds the latency");
    assert_eq!(r.load.status.s2xx, r.load.requests);
    assert!(r.latency().p9999.is_some(), "quantiles from the histogram");
}

/// run.json as a bench run writes it, pinned: one measured round of the good contestant, without the
/// control. What a clock, the machine or the server process gave is masked (`mask`): the run's id and
/// times, the machine and its tools, the rounds and their summaries, the build's time and version, the
/// temporary folder; what is left is what the runner records and where, which a change of the runner
/// must leave as it is.
#[test]
fn run_json_of_a_small_bench_is_unchanged() {
    let (tmp, catalog) = common::fixture_copy("catalog");
    let out = tmp.path().join("results");
    let mut c = good_only(&catalog, &out);
    c.no_control = true;
    let (_, dir, _) = bench(&options(c));
    let mut json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    mask(&mut json, &tmp.path().display().to_string());
    insta::assert_snapshot!(serde_json::to_string_pretty(&json).unwrap());
}

/// The key paths whose values a clock, the machine or the server process gave (array elements share one
/// path, `measurements[].rounds`).
const MASKED: &[&str] = &[
    "run_id",
    "started_utc",
    "finished_utc",
    "environment",
    "time_spent",
    "config.run_type",
    "config.server_cpus",
    "config.client_cpus",
    "config.workers",
    "config.client_threads",
    "config.client_io",
    "config.shuffle_seed",
    "contestants[].version",
    "contestants[].build_s",
    "measurements[].rounds",
    "measurements[].counting_rounds",
    "measurements[].summary",
];

/// The values at `MASKED` paths as "[masked]", the temporary folder in strings as "[tmp]"; the machine
/// model, which a run has or not by how its rounds came out, left out.
fn mask(value: &mut serde_json::Value, tmp: &str) {
    if let Some(run) = value.as_object_mut() {
        run.remove("machine_model");
    }
    mask_at(value, "", tmp);
}

fn mask_at(value: &mut serde_json::Value, path: &str, tmp: &str) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                let path = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
                if MASKED.contains(&path.as_str()) {
                    *v = serde_json::Value::String("[masked]".into());
                } else {
                    mask_at(v, &path, tmp);
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(|v| mask_at(v, &format!("{path}[]"), tmp)),
        serde_json::Value::String(s) if s.contains(tmp) => *s = s.replace(tmp, "[tmp]"),
        _ => {}
    }
}
