//! `--tool ab` end to end against Debian's nginx, started here on 127.0.0.1 (not a contestant): ab runs
//! as a round runs it, pinned to this process's CPUs, with and without keep-alive, and what it printed
//! becomes the round's figures in the result model, the figures it cannot give absent. No test asserts a
//! speed.

mod common;

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use serverbench::model::RoundLoad;
use serverbench::os::cpus::CpuSet;
use serverbench::run::options::{StopRule, Tool};
use serverbench::run::tools::{self, ToolRun};

use common::nginx::nginx_or_skip;

const CONNECTIONS: usize = 4;

/// One round of ab against nginx's `/plaintext`; the report as the model stores it, what ab printed of
/// latency, and its output file.
fn round(port: u16, connection_per_request: bool, workdir: &Path) -> (RoundLoad, serverbench::model::LatencyPoints, String) {
    let label = if connection_per_request { "nginx.per-request" } else { "nginx.keepalive" };
    let run = ToolRun {
        tool: Tool::Ab,
        target: format!("127.0.0.1:{port}").parse().unwrap(),
        scenario: "plaintext",
        connections: CONNECTIONS,
        threads: 4,
        pipeline: 1,
        stop: StopRule::Duration(Duration::from_millis(500)),
        timeout: Duration::from_secs(5),
        cpus: &CpuSet::allowed(),
        workdir,
        label,
        repo_root: Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap(),
        connection_per_request,
    };
    let (report, points) = tools::run(&run, &AtomicBool::new(false)).unwrap_or_else(|e| panic!("ab against nginx: {e:#}"));
    let out = std::fs::read_to_string(workdir.join(format!("{label}.ab.out"))).unwrap();
    (RoundLoad::from(report), points.expect("ab keeps no histogram: its printed figures come beside it"), out)
}

#[test]
fn ab_measures_nginx_and_its_figures_are_in_the_model() {
    const TEST: &str = "tool_ab::ab_measures_nginx_and_its_figures_are_in_the_model";
    if serverbench::catalog::requires::find_command("ab").is_none() {
        return common::skip(TEST, "ab is not installed (apt-get install apache2-utils)");
    }
    let Some(nginx) = nginx_or_skip(TEST) else { return };
    let workdir = tempfile::tempdir().unwrap();
    for per_request in [false, true] {
        let (load, latency, out) = round(nginx.port, per_request, workdir.path());
        let how = if per_request { "a connection per request" } else { "keep-alive" };
        assert!(load.requests > 0, "{how}: no request counted\n{out}");
        assert_eq!(load.errors.total(), 0, "{how}: {:?}\n{out}", load.errors);
        assert!(load.duration_s >= 1.0, "{how}: ab runs whole seconds: {}", load.duration_s);
        assert!(load.bytes_read > load.requests * 13, "{how}: at least each body was read: {}", load.bytes_read);
        assert_eq!(load.threads, 1, "{how}: ab is one thread");
        assert!(load.client_cpu_s > 0.0, "{how}: ab's CPU time is read from /proc");
        assert!(load.latency.is_empty(), "{how}: no histogram from ab");
        // Every percentile the -e file gives, in order; what ab does not give is absent, not 0.
        let given = [latency.min, latency.p25, latency.p50, latency.p75, latency.p90, latency.p99, latency.max];
        let given: Vec<f64> = given.iter().map(|v| v.unwrap_or_else(|| panic!("{how}: a percentile is missing: {latency:?}"))).collect();
        assert!(given.iter().all(|&ns| ns >= 0.0) && given.windows(2).all(|w| w[0] <= w[1]), "{how}: {latency:?}");
        assert!(latency.max.unwrap() > 0.0, "{how}: {latency:?}");
        assert_eq!((latency.mean, latency.stdev, latency.p999, latency.p9999), (None, None, None, None), "{how}");
        // -k only for keep-alive: nginx says `keep-alive` and ab keeps the connections.
        assert_eq!(out.contains("Keep-Alive requests:"), !per_request, "{how}:\n{out}");
    }
}
