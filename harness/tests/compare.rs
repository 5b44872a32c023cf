//! `serverbench compare` on synthetic runs whose differences are known: the committed fixtures match their
//! builder, a planted regression and improvement are flagged and a change inside the noise is not, two
//! runs of the same values (in another order, or the same file twice) show no change, and the command
//! writes Markdown and an HTML page. On real pairs of runs: a slowed server is the only one called worse
//! while the machine moved the rest (in another cross-CPU regime, or unevenly), two unchanged runs show no
//! change on any figure, and `--fail-on` exits 3 on a regression.

#[path = "fixtures/runs/synthetic.rs"]
mod synthetic;

use std::path::{Path, PathBuf};
use std::process::Command;

use serverbench::compare::{compare, markdown, Comparison, Metric, Rules, Source, Verdict};
use serverbench::report::{self, Exporter};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs")
}

/// The committed fixture runs: a baseline, and the baseline with planted changes.
fn fixture_runs() -> Vec<(&'static str, serverbench::model::RunResult)> {
    vec![
        ("base", synthetic::run("base", &synthetic::base_configs())),
        ("regressed", synthetic::run("regressed", &synthetic::regressed_configs())),
    ]
}

/// The baseline measured again: the same round values in another order.
fn rerun() -> serverbench::model::RunResult {
    let configs: Vec<synthetic::Config> = synthetic::base_configs()
        .into_iter()
        .map(|c| synthetic::Config { factors: synthetic::NOISE_REORDERED.to_vec(), ..c })
        .collect();
    synthetic::run("rerun", &configs)
}

/// The committed run.json files hold what the builder makes. They are compared as the current model reads
/// and writes them, so a field added to the model with a default does not make them stale; a real change
/// does: `SB_UPDATE_FIXTURES=1` rewrites them.
#[test]
fn fixtures_match_their_builder() {
    for (name, run) in fixture_runs() {
        let dir = fixtures().join(name);
        let bytes = report::json::Json.serialize(&run).unwrap();
        if std::env::var_os("SB_UPDATE_FIXTURES").is_some() {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("run.json"), &bytes).unwrap();
        }
        let committed = report::load(&dir).map(|r| report::json::Json.serialize(&r).unwrap()).unwrap_or_default();
        assert!(
            committed == bytes,
            "{} differs from what the builder makes; rerun with SB_UPDATE_FIXTURES=1",
            dir.display()
        );
    }
}

fn load(name: &str) -> serverbench::model::RunResult {
    report::load(&fixtures().join(name)).unwrap()
}

fn verdicts(c: &Comparison, contestant: &str, scenario: &str, connections: usize) -> Vec<Verdict> {
    let row = c
        .rows
        .iter()
        .find(|r| r.key.contestant == contestant && r.key.scenario == scenario && r.key.connections == connections)
        .unwrap_or_else(|| panic!("no row for {contestant} {scenario} {connections}"));
    row.changes.iter().map(|ch| ch.verdict).collect()
}

#[test]
fn a_planted_regression_is_flagged_and_noise_is_not() {
    let c = compare(&load("base"), &load("regressed"), Rules::default());
    use Verdict::*;
    assert_eq!(Metric::ALL, [Metric::RequestsPerS, Metric::P99, Metric::CpuPerRequest]);
    assert_eq!(verdicts(&c, "rust-tokio", "hello", 16), [Worse, Worse, Worse]);
    // Unchanged figures are never better or worse; whether they are shown the same depends on how wide
    // their intervals are against the ±3% band.
    let held = |v: &[Verdict]| v.iter().all(|v| matches!(v, Same | Unclear));
    let go_net = verdicts(&c, "go-net", "hello", 16);
    assert!(go_net[0] == Better && held(&go_net[1..]), "{go_net:?}");
    assert!(held(&verdicts(&c, "c-epoll-shared", "hello", 16)), "+1% inside ±2% noise");
    let row = c
        .rows
        .iter()
        .find(|r| r.key.contestant == "rust-tokio" && r.key.connections == 16 && r.key.scenario == "hello")
        .unwrap();
    let ratio = |k: usize| row.changes[k].ratio.unwrap();
    assert!((ratio(0) - 0.8).abs() < 0.002, "req/s B/A {}", ratio(0));
    assert!((ratio(1) - 1.3).abs() < 0.01, "p99 B/A {}", ratio(1));
    assert!((ratio(2) - 1.25).abs() < 0.002, "CPU/req B/A {}", ratio(2));
    let (lo, hi) = row.changes[0].ratio_ci95.unwrap();
    assert!(lo < 0.8 && 0.8 < hi && hi < 1.0, "req/s interval ({lo}, {hi}) excludes 1");
    // Every other figure is unchanged.
    let flagged = c.rows.iter().flat_map(|r| &r.changes).filter(|ch| matches!(ch.verdict, Better | Worse)).count();
    assert_eq!(flagged, 4);
    assert_eq!(c.rows.len(), 18);
    assert!(c.only_a.is_empty() && c.only_b.is_empty());
    assert!(c.differences.is_empty(), "{:?}", c.differences);
    // The client-bound rounds are named, since their req/s measure the client.
    let bound = c.rows.iter().find(|r| r.key.contestant == "c-epoll" && r.key.connections == 256).unwrap();
    assert_eq!(bound.notes, ["client-bound in A (5/5 rounds)", "client-bound in B (5/5 rounds)"]);
}

#[test]
fn identical_runs_show_no_change() {
    let c = compare(&load("base"), &rerun(), Rules::default());
    assert_eq!(c.rows.len(), 18);
    let band = Rules::default().noise_ln();
    let (mut same, mut unclear) = (0, 0);
    for row in &c.rows {
        assert_eq!(row.changes.len(), Metric::ALL.len(), "{} {}", row.key.contestant, row.key.configuration());
        for ch in &row.changes {
            let what = format!("{} {} {}", row.key.contestant, row.key.configuration(), ch.metric.name());
            assert!((ch.ratio.unwrap() - 1.0).abs() < 1e-9, "{what}");
            assert!(ch.test.unwrap().p > 0.999, "{what}");
            // Same exactly where the rounds' interval lies within the band; unclear where it reaches past
            // it: the same rounds twice show no change, but only narrow ones show its absence.
            let (lo, hi) = ch.ratio_ci95.unwrap();
            let within = lo.ln() >= -band && hi.ln() <= band;
            assert_eq!(ch.verdict, if within { Verdict::Same } else { Verdict::Unclear }, "{what} ({lo}, {hi})");
            same += usize::from(within);
            unclear += usize::from(!within);
        }
    }
    assert_eq!(same + unclear, 54);
    assert!(markdown::render(&c).contains(&format!("0 worse, 0 better, {same} within noise, {unclear} unclear, 0 moved with the machine, 0 untested")));
}

#[test]
fn markdown_snapshot() {
    let c = compare(&load("base"), &load("regressed"), Rules::default());
    insta::assert_snapshot!(markdown::render(&c));
}

#[test]
fn settings_that_differ_are_listed() {
    let a = load("base");
    let mut b = rerun();
    b.environment.kernel = "6.12.0-other".into();
    b.config.measured_rounds = 30;
    let c = compare(&a, &b, Rules::default());
    let names: Vec<&str> = c.differences.iter().map(|d| d.0.as_str()).collect();
    assert_eq!(names, ["kernel", "measured rounds"]);
    assert!(markdown::render(&c).contains("| kernel          | 6.1.0-synthetic | 6.12.0-other |"));
}

#[test]
fn the_command_prints_markdown_and_writes_the_page() {
    let dir = std::env::temp_dir().join(format!("sb-compare-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .arg("compare")
        .arg(fixtures().join("base"))
        .arg(fixtures().join("regressed"))
        .arg("-o")
        .arg(dir.join("page.html"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("- ▼ worse rust-tokio · hello · throughput · 16 connections: req/s 0.800× (p = "),
        "{stdout}"
    );
    assert!(stdout.contains("- ▲ better go-net · hello · throughput · 16 connections: req/s 1.150×"), "{stdout}");
    let html = std::fs::read_to_string(dir.join("page.html")).unwrap();
    assert!(html.contains(r#"<svg id="c0-ratios""#) && html.contains(r#"id="verdicts-table""#));
    assert!(html.contains(r#"id="machine-table""#), "the page gives the machine's change per figure");
    assert!(String::from_utf8_lossy(&out.stderr).contains("wrote"));

    // Without -o the page goes next to run B, never into the current directory; a run against itself
    // changes nothing.
    let b = dir.join("b");
    std::fs::create_dir_all(&b).unwrap();
    std::fs::copy(fixtures().join("base/run.json"), b.join("run.json")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .current_dir(&dir)
        .args(["compare"])
        .arg(fixtures().join("base"))
        .arg(&b)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(b.join("compare-base.html").is_file());
    assert!(!dir.join("compare.html").exists());
    assert!(String::from_utf8_lossy(&out.stdout).contains(" 0 worse, 0 better, "));

    // --json: per row and metric the ratio, p-value and verdict; the machine's change at the top.
    let out = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(["compare", "--json", "-o"])
        .arg(dir.join("page2.html"))
        .arg(fixtures().join("base"))
        .arg(fixtures().join("regressed"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = v["rows"].as_array().unwrap().iter().find(|r| r["contestant"] == "rust-tokio" && r["connections"] == 16 && r["scenario"] == "hello").unwrap();
    assert_eq!(row["metrics"]["req/s"]["verdict"], "worse");
    assert!((row["metrics"]["req/s"]["ratio"].as_f64().unwrap() - 0.8).abs() < 0.002);
    assert!(row["metrics"]["req/s"]["p_value"].as_f64().unwrap() < 0.05);
    assert_eq!(v["machine"]["factor"], 1.0);
    // Per figure: where the machine's change came from, and the scatter it was judged against.
    let baselines = v["machine"]["baselines"].as_array().unwrap();
    assert_eq!(baselines.iter().map(|b| b["metric"].as_str().unwrap()).collect::<Vec<_>>(), ["req/s", "p99", "CPU/req"]);
    assert!(baselines.iter().all(|b| b["source"] == "servers" && b["configurations"] == 18 && b["spread_floored"] == true));

    // A folder without run.json says what to give instead.
    let out = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .arg("compare")
        .arg(&dir)
        .arg(fixtures().join("base"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("give the folder of a run"));
    std::fs::remove_dir_all(&dir).ok();
}

/// Two default runs of this project, back to back on an unchanged 2-CPU VM (10 rounds of 1 s each for 32
/// contestants; histograms emptied to keep the files small): compare calls none of the 32 changed, and
/// sees a change planted into one contestant's rounds of B.
#[test]
fn two_unchanged_runs_are_the_same_and_a_planted_change_is_seen() {
    let (a, b) = (load("unchanged-A"), load("unchanged-B"));
    let req_s = |c: &Comparison, name: &str| {
        c.rows.iter().find(|r| r.key.contestant == name).unwrap_or_else(|| panic!("{name}")).changes[0].clone()
    };
    let c = compare(&a, &b, Rules::default());
    assert_eq!(c.rows.len(), 32);
    let flagged: Vec<&str> = c
        .rows
        .iter()
        .filter(|r| matches!(r.changes[0].verdict, Verdict::Better | Verdict::Worse))
        .map(|r| r.key.contestant.as_str())
        .collect();
    assert!(flagged.len() <= 2, "unchanged runs called changed: {flagged:?}");
    // The servers' common change of req/s is now always taken out; here it lies within the noise band.
    let rps = c.baseline(Metric::RequestsPerS).unwrap();
    assert_eq!(rps.source, Source::Servers);
    assert!((rps.factor - 1.0).abs() < 0.03, "{rps:?}");

    let mut planted = b.clone();
    for m in planted.measurements.iter_mut() {
        let factor = match m.contestant.as_str() {
            "rust-smol" => 0.64,
            "c-epoll" => 1.5,
            _ => continue,
        };
        for r in m.rounds.iter_mut() {
            r.load.requests = (r.load.requests as f64 * factor).round() as u64;
        }
    }
    let c = compare(&a, &planted, Rules::default());
    let smol = req_s(&c, "rust-smol");
    assert_eq!(smol.verdict, Verdict::Worse, "{smol:?}");
    assert!((smol.ratio.unwrap() - 0.64).abs() < 0.1, "{smol:?}");
    assert_eq!(req_s(&c, "c-epoll").verdict, Verdict::Better);
    assert!(matches!(req_s(&c, "go-net").verdict, Verdict::Same | Verdict::Unclear));

    // The whole machine 25% faster in B, and c-epoll 1.5x on top of it: the servers' common change is the
    // machine's (no server is called better for it), and c-epoll's own change is still seen.
    let mut faster = b.clone();
    for m in faster.measurements.iter_mut() {
        let factor = if m.contestant == "c-epoll" { 1.25 * 1.5 } else { 1.25 };
        for r in m.rounds.iter_mut() {
            r.load.requests = (r.load.requests as f64 * factor).round() as u64;
        }
    }
    let c = compare(&a, &faster, Rules::default());
    let rps = c.baseline(Metric::RequestsPerS).unwrap();
    assert_eq!(rps.source, Source::Servers, "32 configurations tell the common change");
    let common = rps.factor;
    assert!((common / 1.25 - 0.98).abs() < 0.06, "common change {common} for a machine 1.25x faster");
    let called: Vec<&str> = c.rows.iter().filter(|r| matches!(r.changes[0].verdict, Verdict::Better | Verdict::Worse)).map(|r| r.key.contestant.as_str()).collect();
    assert!(called.len() <= 3 && called.contains(&"c-epoll"), "a faster machine called servers changed: {called:?}");
    assert!(markdown::render(&c).contains("moved with the machine"));
}

#[test]
fn a_change_of_the_cross_cpu_regime_is_said() {
    let set = |run: &mut serverbench::model::RunResult, rate: f64| {
        for r in run.measurements.iter_mut().flat_map(|m| m.rounds.iter_mut()) {
            r.machine.cross_cpu_per_ms = Some(rate);
        }
    };
    let a = load("base");
    let said = markdown::render(&compare(&a, &rerun(), Rules::default()));
    assert!(!said.contains("cache-line round trips"), "the fixtures have no cross-CPU probe");

    let (mut a, mut b) = (load("base"), rerun());
    set(&mut a, 15000.0);
    set(&mut b, 12000.0);
    let c = compare(&a, &b, Rules::default());
    assert_eq!(c.cross_cpu, Some((15000.0, 12000.0)));
    let said = markdown::render(&c);
    assert!(said.contains("15000 cache-line round trips a ms in A, 12000 in B (0.80x).") && !said.contains("at another speed"), "{said}");

    set(&mut b, 3000.0);
    let c = compare(&a, &b, Rules::default());
    let said = markdown::render(&c);
    assert!(said.contains("(0.20x). The machine passed data between the client's and the server's CPUs at another speed in B"), "{said}");
    let page = serverbench::compare::html::render(&c);
    assert!(page.contains("at another speed in B"), "the page says it too");
}

/// Real pairs of runs on the 2-CPU VM, trimmed to what compare reads (rounds that count, each round's p99
/// kept as `tool_latency_ns.p99` with its histogram emptied, and the fields compare does not read
/// dropped or zeroed; the verdicts and ratios are those of the full files):
/// - `regime-change-*`: seven configurations; ref-epoll busy-waits about 2 µs more per request in B, and
///   the cross-CPU regime went from slow to fast between the runs (and within A);
/// - `uneven-move-*`: the same, in one regime, the servers moved apart by the machine (0.82x to 0.98x);
/// - `unchanged-runs-2-*`: 38 configurations, nothing changed, the machine 1.09x faster in B.
fn real_pair(name: &str) -> Comparison {
    compare(&load(&format!("{name}-A")), &load(&format!("{name}-B")), Rules::default())
}

/// Every row's verdicts, by contestant: one a metric, so that a check over them cannot pass on none.
fn all_verdicts(c: &Comparison) -> Vec<(&str, Vec<Verdict>)> {
    let rows: Vec<(&str, Vec<Verdict>)> = c.rows.iter().map(|r| (r.key.contestant.as_str(), r.changes.iter().map(|ch| ch.verdict).collect())).collect();
    assert!(!rows.is_empty() && rows.iter().all(|(_, v)| v.len() == Metric::ALL.len()), "a verdict a metric in every row: {rows:?}");
    rows
}

#[test]
fn of_seven_real_configurations_only_the_slowed_server_is_worse() {
    use Verdict::*;
    for pair in ["regime-change", "uneven-move"] {
        let c = real_pair(pair);
        assert_eq!(c.rows.len(), 7, "{pair}");
        assert!(c.rows.iter().any(|r| r.key.contestant == "ref-epoll"), "{pair}: the slowed server has its row");
        for (contestant, verdicts) in all_verdicts(&c) {
            if contestant == "ref-epoll" {
                assert_eq!((verdicts[0], verdicts[2]), (Worse, Worse), "{pair}: ref-epoll req/s and CPU/req {verdicts:?}");
                assert!(verdicts[1] != Better, "{pair}: ref-epoll p99 {verdicts:?}");
            } else {
                assert!(verdicts.iter().all(|v| matches!(v, Same | Unclear | Machine)), "{pair}: {contestant} {verdicts:?}");
            }
        }
        // Each metric was judged by its own common change, from all seven configurations.
        for metric in Metric::ALL {
            let b = c.baseline(metric).unwrap();
            assert_eq!((b.source, b.configurations), (Source::Servers, 7), "{pair} {}", metric.name());
            assert!(b.scatter.is_some());
        }
    }
}

#[test]
fn across_a_regime_change_unchanged_servers_read_same_at_the_reference_rate() {
    // The cross-CPU rate went from 3,056 to 14,942 round trips a ms; as measured, each unchanged server's
    // req/s moved 1.09x to 1.30x. At the model's reference rate most read `same`, none anything but
    // `same` or `unclear`.
    let c = real_pair("regime-change");
    let unchanged: Vec<(&str, Vec<Verdict>)> = all_verdicts(&c).into_iter().filter(|(name, _)| *name != "ref-epoll").collect();
    assert_eq!(unchanged.len(), 6);
    let same = unchanged.iter().filter(|(_, v)| v[0] == Verdict::Same).count();
    assert!(same >= 5, "req/s same in {same} of 6: {unchanged:?}");
    assert!(unchanged.iter().all(|(_, v)| v.iter().all(|v| matches!(v, Verdict::Same | Verdict::Unclear))), "{unchanged:?}");
    let rps = c.baseline(Metric::RequestsPerS).unwrap();
    assert!((rps.factor - 1.0).abs() < 0.03, "the machine's change is out of the figures: {rps:?}");
}

#[test]
fn a_server_slowed_across_a_regime_change_is_worse_not_machine() {
    // Each unchanged server in turn 15% and 10% slower in B (req/s down, CPU per request and p99 up), in the
    // run whose regime moved 4.9x from A: its req/s and CPU per request are never `machine` (the machine's
    // change, taken out, does not explain them), `better` or `same`, its p99 never `better`. A change must
    // lie 2.5 spreads of the servers' scatter out (±2.4% req/s, ±4.2% CPU per request here) by the near end
    // of its interval: at 15% req/s is worse; at 10% it is worse or unclear. At 10% c-epoll-prefork's p99
    // reads `machine`: 1.097x [1.032, 1.176] as measured, [1.019, 1.161] with the machine's 1.3% out (p
    // 0.012), which that verdict takes as not beyond ±3%, where `unclear` would be the truth.
    for name in ["c-epoll", "c-epoll-edge", "c-epoll-prefork", "cpp-asio", "go-net", "rust-tokio"] {
        for speed in [0.85, 0.9] {
            let v = verdicts_with_slowed("regime-change", name, speed);
            assert!(speed > 0.85 || v[0] == Verdict::Worse, "{name} {speed}: {v:?}");
            assert!(v.iter().all(|v| *v != Verdict::Better), "{name} {speed}: {v:?}");
            assert!(v[0] != Verdict::Machine && v[2] != Verdict::Machine, "{name} {speed}: {v:?}");
            assert!(!matches!(v[0], Verdict::Same) && !matches!(v[2], Verdict::Same), "{name} {speed}: {v:?}");
        }
    }
}

/// The verdicts of one server in a real pair, slowed to `speed` in B (`synthetic::slow`).
fn verdicts_with_slowed(pair: &str, slowed: &str, speed: f64) -> Vec<Verdict> {
    let mut b = load(&format!("{pair}-B"));
    synthetic::slow(&mut b, slowed, speed);
    serverbench::model::machine_model::refit(&mut b);
    let c = compare(&load(&format!("{pair}-A")), &b, Rules::default());
    let row = c.rows.iter().find(|r| r.key.contestant == slowed).unwrap();
    row.changes.iter().map(|ch| ch.verdict).collect()
}

#[test]
fn two_real_unchanged_runs_call_no_figure_changed() {
    let c = real_pair("unchanged-runs-2");
    assert_eq!(c.rows.len(), 38);
    for (contestant, verdicts) in all_verdicts(&c) {
        assert!(!verdicts.iter().any(|v| matches!(v, Verdict::Better | Verdict::Worse)), "{contestant} {verdicts:?}");
    }
    // p99 moved further than req/s when the machine sped up; each was corrected by its own change.
    let (rps, p99) = (c.baseline(Metric::RequestsPerS).unwrap(), c.baseline(Metric::P99).unwrap());
    assert!(rps.factor > 1.03 && p99.factor < 1.0 / rps.factor, "req/s {rps:?} p99 {p99:?}");
    let said = markdown::render(&c);
    assert!(said.contains("| p99     | closed loop | servers |             38 |"), "{said}");
}

#[test]
fn a_change_planted_into_real_unchanged_runs_is_seen() {
    // rust-tokio 0.8x req/s and c-epoll 1.25x CPU per request in B, on a machine 1.09x faster: each
    // stands apart from the other 37, and nothing else is called changed.
    let mut b = load("unchanged-runs-2-B");
    for m in b.measurements.iter_mut() {
        for r in m.rounds.iter_mut() {
            match m.contestant.as_str() {
                "rust-tokio" => r.load.requests = (r.load.requests as f64 * 0.8).round() as u64,
                "c-epoll" => r.server.cpu_us_per_request = r.server.cpu_us_per_request.map(|v| v * 1.25),
                _ => {}
            }
        }
    }
    let c = compare(&load("unchanged-runs-2-A"), &b, Rules::default());
    use Verdict::*;
    for planted in ["rust-tokio", "c-epoll"] {
        assert!(c.rows.iter().any(|r| r.key.contestant == planted), "{planted} has its row");
    }
    for (contestant, verdicts) in all_verdicts(&c) {
        let expected = match contestant {
            "rust-tokio" => [Some(Worse), None, None],
            "c-epoll" => [None, None, Some(Worse)],
            _ => [None; 3],
        };
        for (v, e) in verdicts.iter().zip(expected) {
            match e {
                Some(e) => assert_eq!(*v, e, "{contestant} {verdicts:?}"),
                None => assert!(matches!(v, Same | Unclear | Machine), "{contestant} {verdicts:?}"),
            }
        }
    }
}

#[test]
fn a_configuration_in_another_cross_cpu_regime_is_judged_at_the_reference_rate() {
    // c-epoll was measured in the fast regime in both runs, where the others went from slow to fast. The
    // machine model states every figure at 10,000 round trips a ms, so the regime is out of its figures:
    // no note, and no verdict of it is `machine`.
    let c = real_pair("regime-change");
    let row = c.rows.iter().find(|r| r.key.contestant == "c-epoll").unwrap();
    assert!(!row.notes.iter().any(|n| n.starts_with("cross-CPU regime")), "{:?}", row.notes);
    assert!(row.changes.iter().all(|ch| matches!(ch.verdict, Verdict::Same | Verdict::Unclear)), "{:?}", row.changes);
}

/// The runs with the machine model's factors taken off their rounds: figures as measured.
fn as_measured(mut run: serverbench::model::RunResult) -> serverbench::model::RunResult {
    for r in run.measurements.iter_mut().flat_map(|m| m.rounds.iter_mut()) {
        r.machine.machine_factors = None;
    }
    run
}

#[test]
fn without_the_model_a_configuration_in_another_cross_cpu_regime_is_not_judged() {
    let (a, b) = (as_measured(load("regime-change-A")), as_measured(load("regime-change-B")));
    let c = compare(&a, &b, Rules::default());
    let row = c.rows.iter().find(|r| r.key.contestant == "c-epoll").unwrap();
    assert!(row.notes.iter().any(|n| n.starts_with("cross-CPU regime 0.98x, the others' 4.91x")), "{:?}", row.notes);

    // With two configurations there is no common change; the probes read no change while ref-epoll's
    // regime moved 4.9x: no verdict of it can be told from the machine's.
    let keep = |run: &mut serverbench::model::RunResult| run.measurements.retain(|m| ["ref-epoll", "cpp-asio"].contains(&m.contestant.as_str()));
    let (mut a, mut b) = (a, b);
    keep(&mut a);
    keep(&mut b);
    let c = compare(&a, &b, Rules::default());
    assert_eq!(c.baseline(Metric::RequestsPerS).unwrap().source, Source::Probes);
    assert_eq!(all_verdicts(&c)[0].0, "cpp-asio");
    assert_eq!(all_verdicts(&c)[1].1[0], Verdict::Machine, "ref-epoll's 0.87x req/s, in another regime");
    for (contestant, verdicts) in all_verdicts(&c) {
        assert!(!verdicts.iter().any(|v| matches!(v, Verdict::Better | Verdict::Worse)), "{contestant} {verdicts:?}");
    }
}

/// `serverbench compare` with the arguments given, on two fixture runs; the page goes to a temporary file.
fn compare_cli(a: &str, b: &str, args: &[&str]) -> std::process::Output {
    let page = std::env::temp_dir().join(format!("sb-compare-gate-{}-{a}-{}.html", std::process::id(), args.join("_").replace([':', ',', '/'], "-")));
    let out = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .arg("compare")
        .arg(fixtures().join(a))
        .arg(fixtures().join(b))
        .arg("-o")
        .arg(&page)
        .args(args)
        .output()
        .unwrap();
    std::fs::remove_file(&page).ok();
    out
}

#[test]
fn fail_on_worse_exits_with_its_own_status() {
    // ref-epoll is worse on all three figures: the gate trips on each, with status 3.
    let out = compare_cli("uneven-move-A", "uneven-move-B", &["--fail-on", "worse"]);
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("3 tripped the gate (--fail-on worse:rps,p99,cpu): ref-epoll · hello · throughput · 64 connections: req/s 0.681× worse"), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("▼ worse ref-epoll"), "the comparison is printed first");

    // Where no p99 is worse, a gate on p99 alone passes.
    let out = compare_cli("unchanged-runs-2-A", "unchanged-runs-2-B", &["--fail-on", "worse:p99"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));

    // --json names what tripped it.
    let out = compare_cli("uneven-move-A", "uneven-move-B", &["--json", "--fail-on", "worse:rps"]);
    assert_eq!(out.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let gate = &v["fail_on"];
    assert_eq!((gate["spec"].as_str(), gate["exit_status"].as_i64()), (Some("worse:rps"), Some(3)));
    let tripped = gate["tripped"].as_array().unwrap();
    assert_eq!(tripped.len(), 1, "{tripped:?}");
    assert_eq!((tripped[0]["contestant"].as_str(), tripped[0]["metric"].as_str()), (Some("ref-epoll"), Some("req/s")));

    // Two unchanged runs pass every gate; without --fail-on the status is 0 whatever the verdicts.
    let out = compare_cli("unchanged-runs-2-A", "unchanged-runs-2-B", &["--json", "--fail-on", "worse"]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["fail_on"]["tripped"].as_array().map(Vec::len), Some(0));
    assert_eq!(compare_cli("uneven-move-A", "uneven-move-B", &[]).status.code(), Some(0));

    // An error is 1 and a gate that cannot be read is clap's usage error, 2: neither is a regression.
    assert_eq!(compare_cli("uneven-move-A", "no-such-run", &["--fail-on", "worse"]).status.code(), Some(1));
    let out = compare_cli("uneven-move-A", "uneven-move-B", &["--fail-on", "worse:p95"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("'p95' is not a metric compare judges"));
}

/// `serverbench compare --fail-on GATE --json` of fixture run `a` against fixture run `b` changed by `change`,
/// written to a folder of its own: the exit status and the JSON.
fn gate_on_changed(a: &str, b: &str, gate: &str, change: impl FnOnce(&mut serverbench::model::RunResult)) -> (Option<i32>, serde_json::Value, String) {
    let tmp = tempfile::tempdir().unwrap();
    let mut run = load(b);
    change(&mut run);
    std::fs::write(tmp.path().join("run.json"), report::json::Json.serialize(&run).unwrap()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .arg("compare")
        .arg(fixtures().join(a))
        .arg(tmp.path())
        .args(["--json", "--fail-on", gate])
        .output()
        .unwrap();
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code(), json, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_configuration_that_b_lost_trips_every_gate_and_is_named() {
    use serverbench::model::MeasurementStatus;
    let (a, b) = ("unchanged-runs-2-A", "unchanged-runs-2-B");
    // Unchanged, with every configuration: no gate of worse trips.
    let (status, json, _) = gate_on_changed(a, b, "worse", |_| {});
    assert_eq!((status, json["lost"].as_array().map(Vec::len)), (Some(0), Some(0)));

    // rust-tokio absent from B.
    let (status, json, stderr) = gate_on_changed(a, b, "worse:rps", |run| run.measurements.retain(|m| m.contestant != "rust-tokio"));
    assert_eq!(status, Some(3), "{stderr}");
    assert_eq!((json["lost"][0]["contestant"].as_str(), json["lost"][0]["why"].as_str()), (Some("rust-tokio"), Some("missing")), "{}", json["lost"]);
    assert!(stderr.contains("rust-tokio · hello · throughput · 64 connections: absent from B"), "{stderr}");

    // go-net failed in B: its measurement has no rounds and a reason.
    let (status, json, stderr) = gate_on_changed(a, b, "worse:p99", |run| {
        let m = run.measurements.iter_mut().find(|m| m.contestant == "go-net").unwrap();
        m.status = MeasurementStatus::Failed;
        m.rounds.clear();
        m.reason = Some("exited during the round (exit status: 2)".into());
    });
    assert_eq!(status, Some(3), "{stderr}");
    assert_eq!(json["lost"][0]["why"].as_str(), Some("failed"));
    assert!(stderr.contains("go-net · hello · throughput · 64 connections: failed in B: exited during the round (exit status: 2)"), "{stderr}");

    // c-epoll answered with errors in B, none in A.
    let (status, json, stderr) = gate_on_changed(a, b, "worse", |run| {
        let m = run.measurements.iter_mut().find(|m| m.contestant == "c-epoll").unwrap();
        m.rounds.iter_mut().for_each(|r| r.load.errors.read = 5);
    });
    assert_eq!(status, Some(3), "{stderr}");
    assert_eq!((json["lost"][0]["contestant"].as_str(), json["lost"][0]["why"].as_str()), (Some("c-epoll"), Some("errors")));
}

#[test]
fn the_strict_gate_trips_on_what_was_not_shown_to_hold() {
    // Two unchanged runs: nothing is worse, but some figures' intervals reach past their bands.
    let c = real_pair("unchanged-runs-2");
    let unclear = c.rows.iter().flat_map(|r| &r.changes).filter(|ch| ch.verdict == Verdict::Unclear).count();
    assert!(unclear > 0, "the fixture has unclear figures");
    let out = compare_cli("unchanged-runs-2-A", "unchanged-runs-2-B", &["--json", "--fail-on", "worse+unclear"]);
    assert_eq!(out.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let tripped = v["fail_on"]["tripped"].as_array().unwrap();
    assert_eq!(tripped.len(), unclear, "{tripped:?}");
    assert!(tripped.iter().all(|t| t["verdict"] == "unclear"), "{tripped:?}");
    assert_eq!(compare_cli("unchanged-runs-2-A", "unchanged-runs-2-B", &["--fail-on", "worse"]).status.code(), Some(0));
}

/// Run B as if measured on a machine `speed` times as fast, each configuration moved unevenly on top of it
/// (its own factor, spread evenly over ±`uneven` in the order of the rows), and `slowed`'s CPU per request
/// 1.25x: req/s scaled by the speed, p99 and CPU per request by its inverse.
fn machine_moved(mut b: serverbench::model::RunResult, speed: f64, uneven: f64, slowed: &str) -> serverbench::model::RunResult {
    let n = b.measurements.len().max(2) as f64;
    // Interleaved so that neighbours in the file get factors far apart (no order effect to lean on).
    for (i, m) in b.measurements.iter_mut().enumerate() {
        let step = if i % 2 == 0 { i as f64 / (n - 1.0) } else { 1.0 - i as f64 / (n - 1.0) };
        let s = speed * (1.0 - uneven + 2.0 * uneven * step);
        let cpu = if m.contestant == slowed { 1.25 } else { 1.0 };
        for r in m.rounds.iter_mut() {
            r.load.requests = (r.load.requests as f64 * s).round() as u64;
            r.server.cpu_us_per_request = r.server.cpu_us_per_request.map(|v| v / s * cpu);
            if let Some(p) = r.tool_latency_ns.as_mut() {
                p.p99 = p.p99.map(|v| v / s);
            }
        }
    }
    b
}

/// Twelve fake servers (six contestants at 16 and 256 connections, ten rounds each of about ±2%, as
/// exact CPU times give), measured again on a machine 0.7x as fast that moves each server by its own
/// factor spread evenly over ±7% (alternately above and below, so that the order of the rows says
/// nothing), one server's CPU per request 1.25x on top. Whichever server changed, also at the edge of the
/// scatter where the machine hid 7% of its change, it alone is called `worse`, and only on CPU per request.
#[test]
fn a_cpu_change_is_caught_when_the_machine_slows_unevenly() {
    let noise_a = [1.0, 1.02, 0.98, 1.015, 0.985, 1.01, 0.99, 1.005, 0.995, 1.0];
    let noise_b = [0.99, 1.005, 1.0, 0.985, 1.02, 1.0, 0.995, 1.015, 0.98, 1.01];
    let names = ["c-epoll", "c-threads", "go-net", "rust-tokio", "node-http", "java-netty"];
    let configs: Vec<synthetic::Config> = names
        .iter()
        .enumerate()
        .flat_map(|(i, name)| {
            [16, 256].map(|conns| synthetic::Config {
                factors: noise_a.to_vec(),
                ..synthetic::Config::new(name, "hello", conns, 60_000.0 + 20_000.0 * i as f64)
            })
        })
        .collect();
    let a = synthetic::run("a", &configs);
    let n = configs.len();
    for slowed in 0..n {
        let moved: Vec<synthetic::Config> = configs
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let own = -0.07 + 0.14 * (i as f64 + 0.5) / n as f64;
                let speed = 0.7 * (1.0 + if i % 2 == 0 { own } else { -own });
                let cpu = if i == slowed { 1.25 } else { 1.0 };
                synthetic::Config { factors: noise_b.to_vec(), ..c.clone().scaled(speed, 1.0 / speed, cpu / speed) }
            })
            .collect();
        let c = compare(&a, &synthetic::run("b", &moved), Rules::default());
        let (name, conns) = (configs[slowed].contestant, configs[slowed].connections);
        assert_eq!(c.rows.len(), n, "a row a configuration");
        for r in &c.rows {
            for ch in &r.changes {
                let called = matches!(ch.verdict, Verdict::Better | Verdict::Worse);
                if r.key.contestant == name && r.key.connections == conns && ch.metric == Metric::CpuPerRequest {
                    assert_eq!(ch.verdict, Verdict::Worse, "{name} {conns}: {ch:?}");
                } else {
                    assert!(!called, "{name} {conns} slowed; {} {} {} called {:?}", r.key.contestant, r.key.connections, ch.metric.name(), ch.verdict);
                }
            }
        }
        let cpu = c.baseline(Metric::CpuPerRequest).unwrap();
        assert!((cpu.factor * 0.7 - 1.0).abs() < 0.03, "CPU/req common change {cpu:?} for a machine 0.7x as fast");
    }
}

/// The same on real rounds: two unchanged runs of 38 servers (CPU per request from clock ticks, each
/// row's interval ±8% to ±12%), B moved to 0.7x with ±7% across the servers and each server in turn
/// slowed 1.25x on CPU per request. No unchanged server is ever called changed; where the rounds' own
/// noise leaves room the change is seen (15 of the 38; docs/methodology.md).
#[test]
fn on_real_rounds_a_slowing_machine_calls_no_unchanged_server_changed() {
    let (a, b) = (load("unchanged-runs-2-A"), load("unchanged-runs-2-B"));
    let mut caught = 0;
    for m in &a.measurements {
        let slowed = m.contestant.as_str();
        let c = compare(&a, &machine_moved(b.clone(), 0.7, 0.07, slowed), Rules::default());
        for (contestant, verdicts) in all_verdicts(&c) {
            if contestant == slowed {
                caught += usize::from(verdicts[2] == Verdict::Worse);
                assert!(verdicts[0] != Verdict::Better && verdicts[1] != Verdict::Better, "{slowed}: {verdicts:?}");
            } else {
                assert!(!verdicts.iter().any(|v| matches!(v, Verdict::Better | Verdict::Worse)), "{slowed} slowed: {contestant} {verdicts:?}");
            }
        }
    }
    assert!(caught >= 12, "the change seen for {caught} of 38 servers");
}
