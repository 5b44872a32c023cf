//! Every exporter on a hand-made, deterministic result model (snapshots), and run.json's round trip; an A/B
//! run's part of each.

use std::collections::BTreeMap;

use serverbench::report::{self, Exporter};
use serverbench::model::*;
use serverbench::stats::histogram::new_latency_histogram;

/// A round of `requests` in 2 s whose latencies are `latencies_us`, repeated to fill the histogram.
fn round(index: u32, warmup: bool, requests: u64, latencies_us: &[u64], cpu_s: f64, flags: &[Flag]) -> Round {
    // One read and one write per request, an epoll_wait per 50, and a few other calls.
    let syscalls = SyscallCounts {
        total: Some(2 * requests + requests / 50 + 7),
        by_name: [("read".to_string(), requests), ("write".to_string(), requests), ("epoll_wait".to_string(), requests / 50), ("accept4".to_string(), 0)].into(),
    };
    let mut latency = new_latency_histogram();
    for (i, us) in latencies_us.iter().cycle().take(requests as usize).enumerate() {
        latency.record(us * 1000 + i as u64 % 7).unwrap();
    }
    let status = StatusCounts { s2xx: requests, ..StatusCounts::default() };
    let unsaturated = flags.contains(&Flag::Unsaturated);
    Round {
        index,
        warmup,
        load: RoundLoad {
            requests,
            reconnects: 0,
            keepalive_lost: 0,
            server_closes: 0,
            keepalive_lost_excludes_server_closes: true,
            connections_opened: 0,
            backlog: 0,
            ramp_s: None,
            unserved_at_start: None,
            per_connection: None,
            connections_served: Some(64),
            errors: ErrorCounts { timeout: if flags.contains(&Flag::Errors) { 3 } else { 0 }, ..Default::default() },
            status,
            duration_s: 2.0,
            bytes_read: requests * 51,
            bytes_written: requests * 35,
            response_bytes: 51,
            latency,
            latency_uncorrected: None,
            timeline: Some(vec![requests / 2, requests - requests / 2]),
            intervals: None,
            client_cpu_s: 1.9,
            thread_cpu_s: vec![],
            client_poll_s: 0.0,
            thread_poll_s: vec![],
            poll: "busy".into(),
            counter: None,
            client_user_s: 0.2,
            client_system_s: 1.7,
            client_voluntary_switches: 40,
            client_involuntary_switches: 2,
            client_migrations: Some(1),
            client_system_calls: 28_000,
            threads: 1,
            connections: 64,
            interrupted: false,
            io: "io_uring".into(),
        },
        tool_latency_ns: None,
        client_syscalls: Some(SyscallCounts {
            total: Some(requests / 5),
            by_name: [("io_uring_enter".to_string(), requests / 5 - 3), ("futex".to_string(), 2)].into(),
        }),
        server: ServerUsage {
            cpu_s: Some(cpu_s),
            cpu_source: Some(CpuSource::Schedstat),
            wall_s: 2.0,
            cpus: 1,
            utilisation_pct: Some(cpu_s / 2.0 * 100.0),
            cpu_us_per_request: Some(cpu_s * 1e6 / requests as f64),
            peak_rss_bytes: Some(3 * 1024 * 1024 + index as u64 * 4096),
            pss_bytes: Some(2 * 1024 * 1024),
            processes: 1,
            threads: Some(if unsaturated {
                ThreadStates { samples: 20, running: 3, sleeping: 17, blocked_io: 0, other: 0 }
            } else {
                ThreadStates { samples: 20, running: 20, sleeping: 0, blocked_io: 0, other: 0 }
            }),
            workers: Some(WorkerBalance { workers: 2, busiest_cpu_s: cpu_s * 0.55, mean_cpu_s: cpu_s * 0.5, imbalance: 1.1 }),
            cost: Some(CostBreakdown { user_s: cpu_s * 0.1, system_s: cpu_s * 0.9, voluntary_switches: requests / 50, involuntary_switches: 3, migrations: Some(0) }),
            syscalls_per_request: SyscallsPerRequest::of(&syscalls, requests),
            syscalls: Some(syscalls),
            syscalls_method: Some("tracepoints".into()),
            syscalls_unavailable: None,
        },
        client_busy_pct: Some(95.0),
        client_limit_pct: Some(95.0),
        saturation: None,
        limit: unsaturated.then(|| LIMIT_SERVER_SLEEPING.to_string()),
        flags: flags.to_vec(),
        hosts: Vec::new(),
        machine: Default::default(),
    }
}

fn contestant(name: &str, language: &str, framework: &str, status: ContestantStatus, reason: Option<&str>) -> ContestantRecord {
    ContestantRecord {
        name: name.into(),
        display: name.into(),
        language: language.into(),
        framework: framework.into(),
        category: "micro".into(),
        model: "per-core".into(),
        io: "epoll".into(),
        style: Some(match language {
            "go" => "stackful".into(),
            "rust" => "stackless".into(),
            _ => "callback".into(),
        }),
        status,
        reason: reason.map(String::from),
        version: (status == ContestantStatus::Built).then(|| format!("{language} 1.0")),
        build_log: Some(format!("logs/{name}.build.log")),
        build_cached: name == "c-epoll",
        build_s: 1.25,
        server_logs: vec![format!("logs/{name}.hello.log")],
        warnings: if name == "go-net" { vec!["did not exit within 3.0 s of SIGTERM and was killed".into()] } else { vec![] },
        control: false,
    }
}

fn measurement(name: &str, status: MeasurementStatus, reason: Option<&str>, rounds: Vec<Round>) -> Measurement {
    let m = Measurement {
        contestant: name.into(),
        scenario: "hello".into(),
        mode: "throughput".into(),
        connections: 64,
        pipeline: 1,
        tool: "builtin".into(),
        status,
        reason: reason.map(String::from),
        response_bytes: (status == MeasurementStatus::Measured).then_some(51),
        server_log: Some(format!("logs/{name}.hello.log")),
        rounds,
        counting_rounds: Vec::new(),
        capacity: None,
        rate_rps: None,
        load_fraction: None,
        workers: None,
        ended_by_budget: false,
        profile: None,
    };
    m
}

/// The run, with a capacity search (`bench --search p99<1ms`) that found c-epoll's capacity and found
/// none for go-net; rust-tokio was not searched.
fn model() -> RunResult {
    let mut run = unsearched_model();
    let slo = Objective { text: "p99<1ms".into(), quantile: 0.99, bound_ns: 1_000_000 };
    let step = |rate: f64, achieved: f64, p99_us: u64, pass: bool| SearchStep {
        rate,
        achieved,
        latency_ns: Some(p99_us * 1000),
        errors: 0,
        pass,
        flags: if achieved < 0.98 * rate { vec![Flag::RateNotHeld] } else { vec![] },
    };
    run.measurements[0].capacity = Some(Capacity {
        slo: slo.clone(),
        capacity_rps: Some(95_000.0),
        bracket: (Some(95_000.0), Some(99_000.0)),
        steps: vec![step(50_000.0, 50_000.0, 200, true), step(100_000.0, 96_000.0, 9_000, false), step(95_000.0, 95_000.0, 600, true), step(99_000.0, 97_000.0, 4_000, false)],
    });
    run.measurements[1].capacity = Some(Capacity {
        slo,
        capacity_rps: None,
        bracket: (None, Some(37_500.0)),
        steps: vec![step(75_000.0, 75_000.0, 2_000, false), step(37_500.0, 37_500.0, 1_500, false)],
    });
    run
}

fn unsearched_model() -> RunResult {
    let mut wrk_round = round(1, false, 150_000, &[], 0.7, &[]);
    wrk_round.load.latency = new_latency_histogram();
    wrk_round.tool_latency_ns = Some(LatencyPoints {
        min: Some(20_000.0),
        mean: Some(410_000.0),
        stdev: Some(90_000.0),
        p50: Some(400_000.0),
        p75: Some(450_000.0),
        p90: Some(500_000.0),
        p99: Some(900_000.0),
        max: Some(4_000_000.0),
        ..Default::default()
    });
    let mut wrk = measurement("rust-tokio", MeasurementStatus::Measured, None, vec![wrk_round]);
    wrk.tool = "builtin".into();
    RunResult {
        schema: SCHEMA,
        run_id: "20260101-120000".into(),
        started_utc: "2026-01-01T12:00:00Z".into(),
        finished_utc: Some("2026-01-01T12:01:00Z".into()),
        interrupted: false,
        environment: Environment {
            cpu_model: "Example CPU @ 3.0GHz".into(),
            cores: 2,
            allowed_cpus: "0-1".into(),
            kernel: "Linux 6.1.0".into(),
            os: "Debian GNU/Linux 12 (bookworm)".into(),
            memory_bytes: 8 << 30,
            load_average: Some([0.5, 0.25, 0.125]),
            load_average_end: Some([1.5, 0.5, 0.25]),
            tools: BTreeMap::from([("cc".into(), "cc 12.2.0".into()), ("go".into(), "go1.22".into())]),
            command_line: vec!["serverbench".into(), "bench".into()],
            serverbench_version: "0.1.0".into(),
            client_hosts: Vec::new(),
            server_host: None,
            machine: Some(serverbench::model::MachineFacts {
                cpu_frequency: Vec::new(),
                cpu_frequency_absent: Some("the kernel reports no CPU frequency here".into()),
                smt_active: Some(false),
                smt_control: Some("notsupported".into()),
                kernel_command_line: Some("console=ttyS0 mitigations=off".into()),
                mitigations: [("meltdown", "Not affected"), ("spectre_v1", "Vulnerable: __user pointer sanitization and usercopy barriers only; no swapgs barriers")]
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .into(),
                memory_start: Some(serverbench::model::MemoryNow { total_bytes: 8 << 30, available_bytes: 6 << 30 }),
                memory_end: Some(serverbench::model::MemoryNow { total_bytes: 8 << 30, available_bytes: 5 << 30 }),
            }),
            catalog_revision: Some(serverbench::model::CatalogRevision { commit: "0123456789abcdef0123456789abcdef01234567".into(), dirty: true }),
            catalog_revision_absent: None,
        },
        config: RunConfig {
            scenarios: vec!["hello".into()],
            mode: "throughput".into(),
            think_time_ms: None,
            rate_per_s: None,
            load_fractions: Vec::new(),
            connections: vec![64],
            pipeline: 1,
            connection_per_request: false,
            echo: None,
            control: false,
            run_type: "singleCore".into(),
            server_cpus: "1".into(),
            client_cpus: "0".into(),
            workers: 1,
            client_threads: 1,
            warmup_rounds: 1,
            measured_rounds: 3,
            rounds: "3".into(),
            target_ci_pct: None,
            max_rounds: Some(6),
            budget_s: None,
            shuffle_seed: Some(1),
            workload: None,
            workers_sweep: vec![],
            notes: vec![],
            duration_s: Some(2.0),
            requests_per_connection: None,
            tool: "builtin".into(),
            client_io: "io_uring".into(),
            client_poll: "busy".into(),
            interval_ms: None,
            timeout_s: 5.0,
            server_address: None,
            client_hosts: Vec::new(),
            server_host: None,
            server_checkout: None,
            ab: None,
        },
        contestants: vec![
            contestant("c-epoll", "c", "epoll", ContestantStatus::Built, None),
            contestant("go-net", "go", "net", ContestantStatus::Built, None),
            contestant("rust-tokio", "rust", "tokio", ContestantStatus::Built, None),
            contestant("c-broken", "c", "epoll", ContestantStatus::Failed, Some("build failed (exit status: 2): cc: error\nlast lines ...")),
            contestant("java-x", "java", "x", ContestantStatus::Skipped, Some("command `java` not found on PATH; install a JDK")),
            contestant("c-wrong", "c", "epoll", ContestantStatus::Built, None),
        ],
        measurements: vec![
            measurement(
                "c-epoll",
                MeasurementStatus::Measured,
                None,
                vec![
                    round(1, true, 180_000, &[300, 350, 400], 1.9, &[]),
                    round(1, false, 200_000, &[300, 350, 400], 1.9, &[]),
                    round(2, false, 204_000, &[310, 340, 420, 5000], 1.95, &[Flag::Errors]),
                    round(3, false, 198_000, &[290, 360, 410], 1.9, &[]),
                ],
            ),
            measurement(
                "go-net",
                MeasurementStatus::Measured,
                None,
                vec![
                    round(1, false, 150_000, &[400, 450], 1.5, &[Flag::ClientBound]),
                    round(2, false, 152_000, &[400, 460], 1.5, &[Flag::ClientBound]),
                    round(3, false, 149_000, &[410, 450], 1.6, &[Flag::Unsaturated]),
                ],
            ),
            wrk,
            measurement(
                "c-wrong",
                MeasurementStatus::Failed,
                Some("answered wrongly, not measured: wrong response to `hello`"),
                vec![],
            ),
        ],
        catalog_errors: vec!["contestants/c/x/contestant.toml: field `io` is \"iouring\"; allowed values: blocking, epoll, io_uring, runtime".into()],
        checks: Vec::new(),
        ab: None,
        time_spent: None,
        machine_model: Vec::new(),
    }
}

fn text(e: &dyn Exporter) -> String {
    String::from_utf8(e.serialize(&model()).unwrap()).unwrap()
}

#[test]
fn markdown_summary() {
    insta::assert_snapshot!(text(&report::markdown::Markdown));
}

#[test]
fn csv_summary() {
    insta::assert_snapshot!(text(&report::csv::Csv));
}

#[test]
fn json_run() {
    insta::assert_snapshot!(text(&report::json::Json));
}

#[test]
fn run_json_round_trips_and_regenerates_the_same_summaries() {
    let dir = tempfile::tempdir().unwrap();
    let written = report::write_all(&model(), dir.path()).unwrap();
    assert_eq!(written.len(), report::exporters().iter().filter(|e| e.applies(&model())).count(), "pairs.csv is an A/B run's only");
    let back = report::load(dir.path()).unwrap();
    for e in report::exporters() {
        let (again, first) = (e.serialize(&back).unwrap(), e.serialize(&model()).unwrap());
        let (again, first) = (String::from_utf8(again).unwrap(), String::from_utf8(first).unwrap());
        let diff = again.lines().zip(first.lines()).find(|(a, b)| a != b);
        assert!(diff.is_none() && again.len() == first.len(), "{}: {diff:?}", e.file_name());
    }
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().filter(|e| e.file_name().to_string_lossy().ends_with(".tmp")).collect();
    assert!(leftovers.is_empty());
}

#[test]
fn a_future_schema_is_refused_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let mut run = model();
    run.schema = 99;
    report::write_all(&run, dir.path()).unwrap();
    let err = report::load(dir.path()).unwrap_err().to_string();
    assert!(err.contains("schema 99"), "{err}");
}

/// A figure the probe could not read is absent everywhere (null, an empty CSV cell, "n/a" in tables), with
/// the round's flag saying why, and never trips the client-bound rule; it is never a zero.
#[test]
fn a_figure_that_could_not_be_measured_is_absent_not_zero() {
    let mut run = model();
    let m = run.measurements.iter_mut().find(|m| m.status == MeasurementStatus::Measured && m.tool == "builtin").unwrap();
    let name = m.contestant.clone();
    let r = m.rounds.iter_mut().find(|r| !r.warmup).unwrap();
    r.server = ServerUsage { cpu_s: None, cpu_source: None, utilisation_pct: None, cpu_us_per_request: None, peak_rss_bytes: None, pss_bytes: None, ..r.server.clone() };
    r.flags.push(Flag::ServerUnprobed);
    let refused = "perf_event_open on CPU 1 refused";
    (r.server.syscalls, r.server.syscalls_per_request, r.server.syscalls_method) = (None, None, None);
    r.server.syscalls_unavailable = Some(refused.into());
    let s = m.summary();
    assert_eq!((s.server_utilisation_pct, s.server_cpu_us_per_request, s.peak_rss_bytes), (None, None, None));
    // One round without the counts: the summary has none, not those of the other rounds, and says why.
    assert_eq!((s.server_syscalls_per_request, s.server_syscalls_method, s.server_syscalls_unavailable.as_deref()), (None, None, Some(refused)));
    assert!(s.requests_per_s.is_some(), "req/s was measured and stays");

    let csv = String::from_utf8(report::csv::Csv.serialize(&run).unwrap()).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let row: Vec<&str> = csv.lines().find(|l| l.split(',').nth(1) == Some(name.as_str())).unwrap().split(',').collect();
    for column in ["server_cpu_pct", "server_cpu_us_per_request", "peak_rss_bytes", "server_syscalls_per_request", "server_syscall_1"] {
        let i = header.iter().position(|h| *h == column).unwrap();
        assert_eq!(row[i], "", "{column} of {name} in {csv}");
    }
    let markdown = String::from_utf8(report::markdown::Markdown.serialize(&run).unwrap()).unwrap();
    let line = markdown.lines().find(|l| l.contains(&format!("| {name} "))).unwrap();
    // server CPU %, CPU us/req, its interval and its place, peak RSS and PSS, and the 95% CI, which three
    // rounds cannot give.
    assert_eq!(line.matches("n/a").count(), 7, "{line}");
    assert!(markdown.contains(&format!("Server system calls not counted: {refused}.")), "{markdown}");
    let json: serde_json::Value = serde_json::from_slice(&report::json::Json.serialize(&run).unwrap()).unwrap();
    let stored = json["measurements"].as_array().unwrap().iter().find(|m| m["contestant"] == name.as_str()).unwrap();
    let round = stored["rounds"].as_array().unwrap().iter().find(|r| r["warmup"] == false).unwrap();
    assert!(round["server"]["cpu_s"].is_null() && round["server"]["peak_rss_bytes"].is_null(), "{round}");
    assert!(round["server"]["syscalls"].is_null() && round["server"]["syscalls_unavailable"] == refused, "{round}");
}

/// An unsaturated round's limit is printed wherever its flag is; a run.json stored before rounds had a
/// limit and thread states still loads, its flag printed without a limit.
#[test]
fn an_unsaturated_round_says_what_limited_it() {
    let html = report::html::render(&model());
    assert!(html.contains("unsaturated 1/3 (server sleeping)"), "the HTML report's flags lack the limit");
    let dir = tempfile::tempdir().unwrap();
    let mut json: serde_json::Value = serde_json::from_slice(&report::json::Json.serialize(&model()).unwrap()).unwrap();
    for m in json["measurements"].as_array_mut().unwrap() {
        for r in m["rounds"].as_array_mut().unwrap() {
            r.as_object_mut().unwrap().remove("limit");
            r["server"].as_object_mut().unwrap().remove("threads");
        }
    }
    std::fs::write(dir.path().join(report::json::FILE_NAME), serde_json::to_vec(&json).unwrap()).unwrap();
    let old = report::load(dir.path()).unwrap();
    let m = old.measurements.iter().find(|m| m.contestant == "go-net").unwrap();
    assert!(m.rounds.iter().all(|r| r.limit.is_none() && r.server.threads.is_none()));
    let flags = String::from_utf8(report::markdown::Markdown.serialize(&old).unwrap()).unwrap();
    assert!(flags.contains("unsaturated 1/3") && !flags.contains("unsaturated 1/3 ("), "{flags}");
}

/// Counted in an extra round (the default), the system calls come from that round alone, every other figure
/// from the measured rounds, and summary.md says where the counts come from; counted by /proc, the total is
/// absent, not the sum of the two calls it sees.
#[test]
fn system_calls_of_an_extra_round_or_of_proc_are_said_as_such() {
    let mut run = model();
    let m = run.measurements.iter_mut().find(|m| m.status == MeasurementStatus::Measured && m.tool == "builtin").unwrap();
    let before = m.summary();
    let mut counting = m.rounds.iter().find(|r| !r.warmup).unwrap().clone();
    // The counting round: four times the requests of a measured one, and a fifth of their req/s.
    counting.load.requests *= 4;
    counting.load.duration_s *= 20.0;
    let counts = SyscallCounts { total: Some(counting.load.requests * 3), by_name: [("read".to_string(), counting.load.requests)].into() };
    counting.server.syscalls_per_request = SyscallsPerRequest::of(&counts, counting.load.requests);
    counting.server.syscalls = Some(counts);
    for r in m.rounds.iter_mut() {
        (r.server.syscalls, r.server.syscalls_per_request, r.server.syscalls_method) = (None, None, None);
        r.server.syscalls_unavailable = Some("counted in an extra round after the measured ones".into());
    }
    m.counting_rounds.push(counting);
    let s = m.summary();
    assert_eq!(s.server_syscalls_from.as_deref(), Some("extra-round"));
    let per = s.server_syscalls_per_request.clone().unwrap();
    assert_eq!((per.total, per.by_name["read"]), (Some(3.0), 1.0));
    assert_eq!((s.median_rps, s.requests, s.rounds), (before.median_rps, before.requests, before.rounds), "no other figure reads the counting round");
    let markdown = String::from_utf8(report::markdown::Markdown.serialize(&run).unwrap()).unwrap();
    assert!(markdown.contains("counted in one extra round after the measured ones"), "{markdown}");

    let m = run.measurements.iter_mut().find(|m| !m.counting_rounds.is_empty()).unwrap();
    let r = &mut m.counting_rounds[0];
    let counts = SyscallCounts { total: None, by_name: [("syscr".to_string(), r.load.requests), ("syscw".to_string(), r.load.requests)].into() };
    r.server.syscalls_per_request = SyscallsPerRequest::of(&counts, r.load.requests);
    (r.server.syscalls, r.server.syscalls_method) = (Some(counts), Some("proc-io".into()));
    let s = m.summary();
    let per = s.server_syscalls_per_request.clone().unwrap();
    assert_eq!((per.total, per.by_name.get("other")), (None, None), "no total, no `other`: {per:?}");
    assert_eq!(s.server_syscalls_method.as_deref(), Some("proc-io"));
    let name = m.contestant.clone();
    let csv = String::from_utf8(report::csv::Csv.serialize(&run).unwrap()).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let row: Vec<&str> = csv.lines().find(|l| l.split(',').nth(1) == Some(name.as_str())).unwrap().split(',').collect();
    let at = |column: &str| row[header.iter().position(|h| *h == column).unwrap()];
    assert_eq!(at("server_syscalls_per_request"), "", "the total is absent, not 2");
    assert_eq!((at("server_syscall_1"), at("server_syscall_2")), ("syscr", "syscw"));
}

/// With client hosts, every export says where the load came from: summary.md a line per host with its clock
/// readings, report.html a table, summary.csv the hosts of each measurement.
#[test]
fn client_hosts_are_named_in_every_export() {
    let mut run = model();
    let record = |host: &str, offset_ms: f64| HostRecord {
        host: host.into(),
        arch: "x86_64".into(),
        cpu_model: "Test CPU".into(),
        cores: 8,
        kernel: "Linux 6.18".into(),
        clock_offset_ms: offset_ms,
        clock_rtt_ms: 0.4,
        source_address: Some("198.18.0.2".into()),
        server_address: "198.18.0.1".into(),
        interface: Some("veth1".into()),
        mtu: Some(1500),
        ssh_command: format!("ssh {host} serverbench load --worker ..."),
        binary: "/tmp/serverbench.x/serverbench".into(),
    };
    run.config.server_address = Some("198.18.0.1".into());
    run.environment.client_hosts = vec![record("root@198.18.0.2", 0.12), record("root@198.18.0.6", -0.30)];
    let m = run.measurements.iter_mut().find(|m| m.status == MeasurementStatus::Measured).unwrap();
    for (k, r) in m.rounds.iter_mut().enumerate() {
        let share = |host: &str, offset_ms: f64| HostLoad {
            host: host.into(),
            requests: r.load.requests / 2,
            latency_count: r.load.requests / 2,
            duration_s: r.load.duration_s,
            client_cpu_s: 0.5,
            client_limit_pct: Some(40.0 + k as f64),
            clock_offset_ms: Some(offset_ms + k as f64 / 10.0),
            ..HostLoad::default()
        };
        r.hosts = vec![share("root@198.18.0.2", 0.12), share("root@198.18.0.6", -0.30)];
    }
    let (measured, last) = (m.measured_rounds().count(), m.rounds.len() - 1);
    let name = m.contestant.clone();

    let markdown = String::from_utf8(report::markdown::Markdown.serialize(&run).unwrap()).unwrap();
    let want = format!("clock +0.12 ms (± 0.20); before the rounds +0.12 to {:+.2} ms", 0.12 + last as f64 / 10.0);
    assert!(markdown.contains("- Load from 2 client hosts over ssh") && markdown.contains(&want), "{want}\n{markdown}");
    assert!(markdown.contains(&format!("198.18.0.2 → 198.18.0.1 via veth1, MTU 1500; client CPU {:.2} s", 0.5 * measured as f64)), "{markdown}");

    let html = String::from_utf8(report::html::Html.serialize(&run).unwrap()).unwrap();
    let table = &html[html.find(r#"<table id="client-hosts-table""#).expect("a client hosts table")..];
    let table = &table[..table.find("</table>").unwrap()];
    assert_eq!(table.matches("<tr>").count(), 3, "a header and a row per host: {table}");
    assert!(table.contains("root@198.18.0.6") && table.contains("-0.30 ms") && table.contains("ssh root@198.18.0.2 serverbench load"), "{table}");

    let csv = String::from_utf8(report::csv::Csv.serialize(&run).unwrap()).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    // Then an A/B run's 14 columns, empty here.
    let ab = ",".repeat(14);
    assert!(rows[0].contains(",client_hosts,server_host,control,ab_side,"), "{}", rows[0]);
    let row = rows.iter().find(|l| l.split(',').nth(1) == Some(name.as_str())).unwrap();
    assert!(row.ends_with(&format!(",root@198.18.0.2;root@198.18.0.6,,false{ab}")), "{row}");
    assert!(rows.iter().filter(|l| l.split(',').nth(1) != Some(name.as_str())).skip(1).all(|l| l.ends_with(&format!(",,,false{ab}"))), "other rows name no host");
}

#[test]
fn a_server_host_is_named_in_every_export() {
    let mut run = model();
    let csv = String::from_utf8(report::csv::Csv.serialize(&run).unwrap()).unwrap();
    let ab = ",".repeat(14);
    assert!(csv.lines().skip(1).all(|l| l.ends_with(&format!(",,false{ab}"))), "servers on this machine: no server host named\n{csv}");
    let html = String::from_utf8(report::html::Html.serialize(&run).unwrap()).unwrap();
    assert!(!html.contains("server-host-table"));

    run.config.server_host = Some("root@198.18.0.2".into());
    run.config.server_checkout = Some("/srv/serverbench".into());
    run.config.server_address = Some("198.18.0.2".into());
    run.environment.server_host = Some(HostRecord {
        host: "root@198.18.0.2".into(),
        arch: "x86_64".into(),
        cpu_model: "Server CPU".into(),
        cores: 16,
        kernel: "Linux 6.18".into(),
        clock_offset_ms: -0.25,
        clock_rtt_ms: 0.5,
        source_address: Some("198.18.0.2".into()),
        server_address: "198.18.0.2".into(),
        interface: Some("lo".into()),
        mtu: Some(65536),
        ssh_command: "ssh root@198.18.0.2 -- exec /tmp/serverbench.x/serverbench agent --catalog /srv/serverbench/contestants".into(),
        binary: "/tmp/serverbench.x/serverbench".into(),
    });

    let markdown = String::from_utf8(report::markdown::Markdown.serialize(&run).unwrap()).unwrap();
    let want = "- Servers on server host root@198.18.0.2 (checkout /srv/serverbench), listening on 198.18.0.2, probed there by its agent: Server CPU, 16 CPUs, Linux 6.18; clock -0.25 ms (± 0.25)";
    assert!(markdown.contains(want), "{want}\n{markdown}");

    let html = String::from_utf8(report::html::Html.serialize(&run).unwrap()).unwrap();
    let table = &html[html.find(r#"<table id="server-host-table""#).expect("a server host table")..];
    let table = &table[..table.find("</table>").unwrap()];
    assert_eq!(table.matches("<tr>").count(), 2, "a header and the host: {table}");
    assert!(table.contains("Server CPU") && table.contains("-0.25 ms (± 0.25)") && table.contains("agent --catalog /srv/serverbench/contestants"), "{table}");
    assert!(html.contains("from the checkout at /srv/serverbench"), "the checkout is named");

    let csv = String::from_utf8(report::csv::Csv.serialize(&run).unwrap()).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert!(rows[0].contains(",client_hosts,server_host,control,ab_side,"), "{}", rows[0]);
    assert!(rows.len() > 2 && rows[1..].iter().all(|l| l.ends_with(&format!(",,root@198.18.0.2,false{ab}"))), "every row names the server host and no client host:\n{csv}");
}

/// summary.csv's `control` column is `true` on the rows of the run's control and `false` on the others'.
#[test]
fn the_control_is_marked_in_summary_csv() {
    let mut run = model();
    let control = run.measurements[0].contestant.clone();
    run.contestants.iter_mut().filter(|c| c.name == control).for_each(|c| c.control = true);
    let csv = String::from_utf8(report::csv::Csv.serialize(&run).unwrap()).unwrap();
    assert!(csv.lines().next().unwrap().contains(",control,ab_side,"), "the last column but an A/B run's 14");
    // The name is the second cell; the control's, the 15th from the end (a quoted reason may hold commas between).
    let rows: Vec<(&str, &str)> = csv.lines().skip(1).map(|l| (l.split(',').nth(1).unwrap(), l.rsplit(',').nth(14).unwrap())).collect();
    assert!(rows.iter().any(|(name, _)| *name != control), "the model has other rows: {rows:?}");
    for (name, cell) in &rows {
        assert_eq!(*cell, if *name == control { "true" } else { "false" }, "{name}");
    }
}

#[test]
fn the_cross_cpu_probe_is_summed_up_in_the_header() {
    let mut run = model();
    let markdown = String::from_utf8(report::markdown::Markdown.serialize(&run).unwrap()).unwrap();
    assert!(!markdown.contains("cache-line round trips"), "no rate, no words");
    let mut k = 0.0;
    for r in run.measurements.iter_mut().flat_map(|m| m.rounds.iter_mut()) {
        r.machine.cross_cpu_per_ms = Some(3000.0 + 1000.0 * k);
        k += 1.0;
    }
    let markdown = String::from_utf8(report::markdown::Markdown.serialize(&run).unwrap()).unwrap();
    let want = format!("between client and server CPUs 3000 to {:.0} cache-line round trips a ms", 3000.0 + 1000.0 * (k - 1.0));
    assert!(markdown.contains(&want), "{want}\n{markdown}");
}

/// A round whose server CPU came from the clock ticks (a thread or process of the server ended inside its
/// window) is counted in the row's flags of every table, and in its CSV column.
#[test]
fn rounds_with_cpu_from_ticks_are_counted_in_every_table() {
    let mut run = model();
    let m = run.measurements.iter_mut().find(|m| m.status == MeasurementStatus::Measured && m.tool == "builtin").unwrap();
    let name = m.contestant.clone();
    m.rounds.iter_mut().find(|r| r.counts()).unwrap().server.cpu_source = Some(CpuSource::Ticks);
    let s = m.summary();
    let flag = format!("cpu-from-ticks 1/{}", s.rounds);
    assert_eq!(s.rounds_cpu_from_ticks, 1);

    let csv = String::from_utf8(report::csv::Csv.serialize(&run).unwrap()).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let row: Vec<&str> = csv.lines().find(|l| l.split(',').nth(1) == Some(name.as_str())).unwrap().split(',').collect();
    assert_eq!(row[header.iter().position(|h| *h == "rounds_cpu_from_ticks").unwrap()], "1", "{csv}");
    let markdown = String::from_utf8(report::markdown::Markdown.serialize(&run).unwrap()).unwrap();
    assert!(markdown.lines().any(|l| l.contains(&format!("| {name} ")) && l.contains(&flag)), "{markdown}");
    let html = String::from_utf8(report::html::Html.serialize(&run).unwrap()).unwrap();
    assert!(html.contains(&flag), "no {flag} in the page");
    // The other rows had the exact figure throughout: no flag.
    assert_eq!(markdown.matches("cpu-from-ticks").count(), 1, "{markdown}");
}

#[path = "fixtures/runs/synthetic.rs"]
#[allow(dead_code)]
mod synthetic;

/// summary.md leads with the verdict of each figure; pairs.csv has a row a pair; summary.csv says which
/// version each row is, with B/A beside; run.json's `ab_summary` holds the estimates.
#[test]
fn an_ab_run_leads_with_its_verdicts_in_every_export() {
    let run = synthetic::ab_run("ab");
    let md = String::from_utf8(report::markdown::Markdown.serialize(&run).unwrap()).unwrap();
    let start = md.find("## A/B: ").unwrap();
    let section = &md[start..start + 1 + md[start + 1..].find("\n## ").unwrap()];
    assert!(md[..start].lines().all(|l| l.is_empty() || l.starts_with("# serverbench run")), "the A/B part leads: {md}");
    insta::assert_snapshot!("ab_summary_section", section);
    assert!(md.contains("## A/B pairs: c-epoll@HEAD~1 (A) and c-epoll (B)"), "{md}");
    assert!(md.contains("pairs of measured rounds until every figure the gate selects (req/s without one) is better, worse or same"), "{md}");
    insta::assert_snapshot!("ab_pairs_csv", String::from_utf8(report::pairs_csv::PairsCsv.serialize(&run).unwrap()).unwrap());
    let csv = String::from_utf8(report::csv::Csv.serialize(&run).unwrap()).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = |row: &str, name: &str| row.split(',').nth(header.iter().position(|h| *h == name).unwrap()).unwrap().to_string();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.iter().map(|r| col(r, "ab_side")).collect::<Vec<_>>(), ["a", "b"]);
    assert!(rows.iter().all(|r| col(r, "ab_rps_verdict") == "worse" && col(r, "ab_pairs") == "7"), "{csv}");
    let ratio: f64 = col(rows[0], "ab_rps_ratio").parse().unwrap();
    assert!((ratio - 0.97).abs() < 0.002, "{ratio}");
    let json: serde_json::Value = serde_json::from_slice(&report::json::Json.serialize(&run).unwrap()).unwrap();
    assert_eq!(json["ab_summary"]["figures"]["rps"]["verdict"], "worse");
    assert_eq!(json["ab_summary"]["figures"]["p99"]["verdict"], "worse");
    assert_eq!(json["ab_summary"]["pairs_counted"], 7);
    assert!(json["ab_summary"]["figures"]["cpu"]["sentence"].as_str().unwrap().starts_with("B uses 3.1% more CPU per request (95% CI "));
    // Not an A/B run: no pairs.csv.
    assert!(!report::pairs_csv::PairsCsv.applies(&model()) && report::pairs_csv::PairsCsv.applies(&run));
}

/// A round where both the server and the client were at their limit is counted as `both-busy` like
/// `client-bound`: in the row's flags of every table, in its CSV column and in compare's notes.
#[test]
fn both_busy_rounds_are_counted_in_every_table_and_in_compare_s_notes() {
    let before = model();
    let mut run = before.clone();
    let m = run.measurements.iter_mut().find(|m| m.contestant == "c-epoll" && m.status == MeasurementStatus::Measured).unwrap();
    m.rounds.iter_mut().filter(|r| r.counts()).take(2).for_each(|r| r.flags.push(Flag::BothBusy));
    let s = m.summary();
    assert_eq!((s.both_busy_rounds, s.client_bound_rounds), (2, 0));
    let flag = format!("both-busy 2/{}", s.rounds);

    let csv = String::from_utf8(report::csv::Csv.serialize(&run).unwrap()).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let row: Vec<&str> = csv.lines().find(|l| l.split(',').nth(1) == Some("c-epoll")).unwrap().split(',').collect();
    assert_eq!(row[header.iter().position(|h| *h == "both_busy_rounds").unwrap()], "2", "{csv}");
    let markdown = String::from_utf8(report::markdown::Markdown.serialize(&run).unwrap()).unwrap();
    assert!(markdown.lines().any(|l| l.contains("| c-epoll ") && l.contains(&flag)), "{markdown}");
    assert_eq!(markdown.matches("both-busy").count(), 1, "only c-epoll's row: {markdown}");
    let html = String::from_utf8(report::html::Html.serialize(&run).unwrap()).unwrap();
    assert!(html.contains(&flag), "no {flag} in the page's table");

    let c = serverbench::compare::compare(&before, &run, serverbench::compare::Rules::default());
    let row = c.rows.iter().find(|r| r.key.contestant == "c-epoll").unwrap();
    assert!(row.notes.contains(&format!("both-busy in B (2/{} rounds)", s.rounds)), "{:?}", row.notes);
}

/// Rounds whose server lost requests with its connections (`keepalive-lost`) and rounds whose server only
/// closed them cleanly (`server-closes`) are counted apart: in the row's flags of every table and in a CSV
/// column each.
#[test]
fn keepalive_lost_and_server_closes_are_counted_apart_in_every_table() {
    let mut run = model();
    let m = run.measurements.iter_mut().find(|m| m.contestant == "c-epoll" && m.status == MeasurementStatus::Measured).unwrap();
    let mut counted = m.rounds.iter_mut().filter(|r| r.counts());
    counted.next().unwrap().flags.extend([Flag::KeepaliveLost, Flag::ServerCloses]);
    counted.for_each(|r| r.flags.push(Flag::ServerCloses));
    let s = m.summary();
    assert_eq!((s.keepalive_lost_rounds, s.server_closes_rounds), (1, s.rounds));
    let flags = format!("keepalive-lost 1/{0}, server-closes {0}/{0}", s.rounds);

    let csv = String::from_utf8(report::csv::Csv.serialize(&run).unwrap()).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let row: Vec<&str> = csv.lines().find(|l| l.split(',').nth(1) == Some("c-epoll")).unwrap().split(',').collect();
    let cell = |name: &str| row[header.iter().position(|h| *h == name).unwrap()].to_string();
    assert_eq!([cell("keepalive_lost_rounds"), cell("server_closes_rounds")], ["1".to_string(), s.rounds.to_string()], "{csv}");
    let markdown = String::from_utf8(report::markdown::Markdown.serialize(&run).unwrap()).unwrap();
    assert!(markdown.lines().any(|l| l.contains("| c-epoll ") && l.contains(&flags)), "{markdown}");
    let html = String::from_utf8(report::html::Html.serialize(&run).unwrap()).unwrap();
    assert!(html.contains(&flags), "no {flags} in the page's table");
}

/// A measurement whose every measured round was left out as disturbed has no figures: it is not a row of
/// its table but is listed with what was not measured, with how many rounds and how disturbed, in the
/// Markdown and the HTML alike.
#[test]
fn a_measurement_with_every_round_disturbed_is_listed_as_not_measured() {
    let mut run = unsearched_model();
    let m = run.measurements.iter_mut().find(|m| m.status == MeasurementStatus::Measured).unwrap();
    let name = m.contestant.clone();
    for r in m.rounds.iter_mut().filter(|r| !r.warmup) {
        r.flags.push(Flag::Disturbed);
        r.machine.steal_pct = Some(41.5);
    }
    let taken = m.rounds.iter().filter(|r| !r.warmup).count();
    assert!(m.summary().requests_per_s.is_none(), "no figure from disturbed rounds");
    let md = text(&report::markdown::Markdown);
    assert!(!md.contains("no round counted"), "the model as made has no such row");
    let md = String::from_utf8(report::markdown::Markdown.serialize(&run).unwrap()).unwrap();
    let row = md.lines().find(|l| l.starts_with(&format!("| {name} ")) && l.contains("no round counted")).unwrap_or_else(|| panic!("{md}"));
    assert!(row.contains(&format!("all {taken} measured rounds left out as disturbed (steal at most 41.5%")), "{row}");
    let html = report::html::render(&run);
    assert!(html.contains("no round counted") && html.contains("steal at most 41.5%"), "the HTML's table of what was not measured");
}

/// Where the machine model adjusted the rounds, every latency quantile moves to its reference state by
/// the rounds' latency factor (their geometric mean), in the tables and the spectrum alike; summary.csv
/// keeps the factor and the quantiles as measured.
#[test]
fn latency_quantiles_are_at_the_machine_model_s_reference_state() {
    let mut run = unsearched_model();
    let m = run.measurements.iter_mut().find(|m| m.status == MeasurementStatus::Measured).unwrap();
    let before = m.summary();
    assert_eq!(before.latency_factor, None);
    assert_eq!(before.latency_ns, before.latency_ns_as_measured, "nothing adjusted, nothing moved");
    // Three rounds' factors of 4, 1 and 2: a geometric mean of 2.
    let factors = [4.0, 1.0, 2.0];
    assert_eq!(m.rounds.iter().filter(|r| !r.warmup).count(), factors.len());
    for (r, p99) in m.rounds.iter_mut().filter(|r| !r.warmup).zip(factors) {
        r.machine.machine_factors = Some(MachineFactors { requests_per_s: 1.0, p99, cpu_per_request: 1.0 });
    }
    let s = m.summary();
    assert!((s.latency_factor.unwrap() - 2.0).abs() < 1e-9, "{:?}", s.latency_factor);
    assert_eq!(s.latency_ns_as_measured, before.latency_ns);
    for (adjusted, measured) in [(s.latency_ns.p50, before.latency_ns.p50), (s.latency_ns.p99, before.latency_ns.p99), (s.latency_ns.max, before.latency_ns.max)] {
        assert!((adjusted.unwrap() * 2.0 - measured.unwrap()).abs() < 1e-6, "{adjusted:?} {measured:?}");
    }
    let md = String::from_utf8(report::markdown::Markdown.serialize(&run).unwrap()).unwrap();
    assert!(md.contains("at the machine model's reference state: each row's figures divided by"), "{md}");
    let csv = String::from_utf8(report::csv::Csv.serialize(&run).unwrap()).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    let col = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(col("latency_machine_factor"), "2");
    let p99: f64 = col("latency_p99_ns").parse().unwrap();
    let p99_measured: f64 = col("latency_p99_ns_as_measured").parse().unwrap();
    assert!((p99 * 2.0 - p99_measured).abs() < 1.0, "{p99} {p99_measured}");
    assert!(report::html::render(&run).contains(", at the machine model&#39;s reference state)"), "the HTML latency table's caption");
}
