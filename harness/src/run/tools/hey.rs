//! hey (github.com/rakyll/hey), the Go load tool httpbench's runner offers: built from the Go module in
//! `tools/hey`, which pins its version, into `target/tools/hey/` of the checkout; its command line for one
//! round; and its output read into the result model.
//!
//! hey's `-o` takes a Go template besides its own two formats (the summary and `csv`, which are templates
//! too). The one below prints the round's exact duration, its error classes and, for every response, its
//! status and latency at full precision, so that the round's histogram holds every request (`csv` rounds
//! latencies to 0.1 ms, and the summary prints seven percentiles).

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::catalog::build::{run_build, BuildResult};
use crate::catalog::requires::find_command;
use crate::catalog::template::shell_quote;
use crate::load::{ErrorCounts, HttpRequest, StatusCounts};
use crate::model::LatencyPoints;
use crate::stats::histogram::new_latency_histogram;

use crate::run::options::StopRule;

use super::summary::{SummaryLine, ToolReport};

/// The Go module that pins hey's version (go.mod, go.sum), relative to the checkout.
pub const MODULE_DIR: &str = "tools/hey";
/// Where it is built, relative to the checkout: beside cargo's output, which git ignores.
const BUILD_DIR: &str = "target/tools/hey";
const PACKAGE: &str = "github.com/rakyll/hey";
/// hey keeps the status and latency of this many responses (its `maxRes`); it counts the rest.
const KEPT_RESPONSES: u64 = 1_000_000;

/// The binary `--tool hey` runs, built from `root`'s `tools/hey`.
pub fn binary(root: &Path) -> PathBuf {
    root.join(BUILD_DIR).join("hey")
}

/// hey's version as `tools/hey/go.mod` pins it, e.g. `v0.1.5`.
pub fn pinned_version(root: &Path) -> anyhow::Result<String> {
    let go_mod = root.join(MODULE_DIR).join("go.mod");
    let text = std::fs::read_to_string(&go_mod).map_err(|e| anyhow::anyhow!("{}: {e}", go_mod.display()))?;
    text.lines()
        .find_map(|l| {
            let mut words = l.split_whitespace().skip_while(|w| *w == "require");
            (words.next() == Some(PACKAGE)).then(|| words.next().map(String::from)).flatten()
        })
        .ok_or_else(|| anyhow::anyhow!("{} requires no {PACKAGE}", go_mod.display()))
}

/// Whether `--tool hey` can run: hey is built from the current go.mod and go.sum, or Go is there to build
/// it. The error names what is missing.
pub fn ready(root: &Path) -> anyhow::Result<()> {
    pinned_version(root)?;
    if is_built(root) || find_command("go").is_some() {
        return Ok(());
    }
    anyhow::bail!(
        "--tool hey is built from {} with Go, and `go` is not on PATH: install Go 1.24 or newer",
        root.join(MODULE_DIR).display()
    )
}

/// What the binary was built from: go.mod and go.sum, verbatim.
fn fingerprint(root: &Path) -> String {
    let read = |f: &str| std::fs::read_to_string(root.join(MODULE_DIR).join(f)).unwrap_or_default();
    format!("{}\n{}", read("go.mod"), read("go.sum"))
}

fn stamp(root: &Path) -> PathBuf {
    root.join(BUILD_DIR).join("hey.stamp")
}

/// Whether `binary(root)` was built from the current go.mod and go.sum.
pub fn is_built(root: &Path) -> bool {
    binary(root).is_file() && std::fs::read_to_string(stamp(root)).is_ok_and(|s| s == fingerprint(root))
}

/// Builds hey from `tools/hey` unless the binary there was built from the same go.mod and go.sum; returns
/// its path. Two runs at once each build into a file of their own and rename it into place, so neither
/// sees half a binary.
pub fn ensure_built(root: &Path, stop: &AtomicBool) -> anyhow::Result<PathBuf> {
    ready(root)?;
    let bin = binary(root);
    if is_built(root) {
        return Ok(bin);
    }
    let dir = root.join(BUILD_DIR);
    std::fs::create_dir_all(&dir)?;
    let tmp = dir.join(format!("hey.{}.tmp", std::process::id()));
    let log = dir.join("build.log");
    // GOWORK=off: the module is built alone, whatever go.work a folder above it holds.
    let command = format!("GOWORK=off go build -trimpath -o {} {PACKAGE}", shell_quote(&tmp.display().to_string()));
    let result = run_build(&command, &root.join(MODULE_DIR), &log, stop)?;
    if result != BuildResult::Built {
        let _ = std::fs::remove_file(&tmp);
    }
    match result {
        BuildResult::Built => {
            std::fs::rename(&tmp, &bin)?;
            let stamp_tmp = dir.join(format!("hey.stamp.{}.tmp", std::process::id()));
            std::fs::write(&stamp_tmp, fingerprint(root))?;
            std::fs::rename(&stamp_tmp, stamp(root))?;
            Ok(bin)
        }
        BuildResult::Failed(why) => anyhow::bail!("--tool hey: building {PACKAGE} in {MODULE_DIR} failed: {why}"),
        _ => anyhow::bail!("--tool hey: the build of {PACKAGE} was interrupted"),
    }
}

/// Prints the round for `parse`: a summary line, one line per error class, one per kept response.
const TEMPLATE: &str = "SERVERBENCH total_ns={{ .Total.Nanoseconds }} responses={{ .NumRes }} kept={{ len .Lats }}\n\
{{ range $err, $num := .ErrorDist }}ERROR {{ $num }} {{ $err }}\n{{ end }}\
{{ range $i, $v := .Lats }}{{ index $.StatusCodes $i }} {{ $v }}\n{{ end }}";

/// The arguments of one round: `connections` workers (keep-alive, hey's default) sending `request` for
/// the round's duration (or `per_connection` requests each), at most `threads` Go threads running at once.
pub fn args(request: &HttpRequest, url: &str, connections: usize, threads: usize, stop: StopRule, timeout: Duration) -> Vec<String> {
    let mut a = vec![
        format!("-c={connections}"),
        format!("-cpus={threads}"),
        format!("-t={}", timeout.as_secs().max(1)),
        format!("-m={}", request.method),
        format!("-host={}", request.host),
    ];
    match stop {
        StopRule::Duration(d) => a.push(format!("-z={}ms", d.as_millis().max(1))),
        StopRule::Requests(n) => a.push(format!("-n={}", n * connections as u64)),
    }
    for (k, v) in &request.headers {
        a.push("-H".into());
        a.push(format!("{k}: {v}"));
    }
    let body = request.body_for(1);
    if !body.is_empty() {
        a.push(format!("-d={}", String::from_utf8_lossy(&body)));
    }
    a.extend([format!("-o={TEMPLATE}"), url.to_string()]);
    a
}

/// Reads what `TEMPLATE` printed. Only 2xx responses count as requests and enter the histogram; other
/// statuses are status errors, and hey's errors are sorted into classes by their message.
pub fn parse(text: &str) -> anyhow::Result<ToolReport> {
    let summary = SummaryLine::find(text, "hey")?;
    let get = |key: &str| summary.get::<u64>(key);
    let (total_ns, responses, kept) = (get("total_ns")?, get("responses")?, get("kept")?);
    let mut errors = ErrorCounts::default();
    let mut status = StatusCounts::default();
    let mut histogram = new_latency_histogram();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("ERROR ") {
            let (count, message) = rest.split_once(' ').unwrap_or((rest, ""));
            *error_class(&mut errors, message) += count.parse::<u64>().map_err(|_| anyhow::anyhow!("unreadable hey line '{line}'"))?;
        } else if let Some((code, seconds)) = line.split_once(' ') {
            let (Ok(code), Ok(seconds)) = (code.parse::<u16>(), seconds.parse::<f64>()) else { continue };
            status.count(code);
            if code / 100 == 2 {
                histogram.saturating_record((seconds * 1e9).round().max(1.0) as u64);
            } else {
                errors.status += 1;
            }
        }
    }
    // hey's errors are responses too (NumRes counts them); the rest it kept, up to KEPT_RESPONSES.
    let answered = responses.saturating_sub(errors.total() - errors.status);
    let counted = status.s1xx + status.s2xx + status.s3xx + status.s4xx + status.s5xx + status.other;
    anyhow::ensure!(
        answered <= KEPT_RESPONSES,
        "hey keeps the status of its first {KEPT_RESPONSES} responses only, and this round had {answered}: use a shorter -d"
    );
    anyhow::ensure!(counted == kept && kept == answered, "hey answered {answered} requests, kept {kept} and printed {counted}");
    Ok(ToolReport {
        requests: histogram.len(),
        errors,
        status,
        duration_s: total_ns as f64 / 1e9,
        // hey counts only the bodies' Content-Length, not the bytes it reads.
        bytes_read: 0,
        latency: LatencyPoints::default(),
        histogram: Some(histogram),
    })
}

/// The class of one of hey's errors, by the message Go's HTTP client gives it.
fn error_class<'a>(e: &'a mut ErrorCounts, message: &str) -> &'a mut u64 {
    let has = |words: &[&str]| words.iter().any(|w| message.contains(w));
    if has(&["Client.Timeout", "deadline exceeded", "i/o timeout"]) {
        &mut e.timeout
    } else if has(&["dial tcp", "connect:"]) {
        &mut e.connect
    } else if has(&["write:", "broken pipe"]) {
        &mut e.write
    } else if has(&["malformed HTTP", "bad Content-Length"]) {
        &mut e.framing
    } else {
        &mut e.read
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `TEMPLATE` prints for a 2 s round: two error classes, three 200s and a 503.
    const ROUND: &str = "SERVERBENCH total_ns=2003123456 responses=9 kept=4\n\
ERROR 3 Get \"http://127.0.0.1:8080/\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)\n\
ERROR 2 Get \"http://127.0.0.1:8080/\": read tcp 127.0.0.1:41000->127.0.0.1:8080: read: connection reset by peer\n\
200 0.000512345\n\
200 9.5e-05\n\
503 0.0011\n\
200 0.002048\n\
\n";

    #[test]
    fn reads_every_response_into_the_histogram() {
        let r = parse(ROUND).unwrap();
        assert_eq!(r.requests, 3, "only the 2xx responses count");
        assert_eq!((r.status.s2xx, r.status.s5xx), (3, 1));
        assert_eq!((r.errors.status, r.errors.timeout, r.errors.read, r.errors.total()), (1, 3, 2, 6));
        assert!((r.duration_s - 2.003123456).abs() < 1e-12);
        let h = r.histogram.expect("every latency");
        assert_eq!(h.len(), 3);
        assert!(h.equivalent(h.min(), 95_000), "{}", h.min());
        assert!(h.equivalent(h.max(), 2_048_000), "{}", h.max());
        assert!(h.equivalent(h.value_at_quantile(0.5), 512_345));
        assert_eq!(r.latency, LatencyPoints::default(), "the histogram holds the latency");
    }

    #[test]
    fn a_round_beyond_what_hey_keeps_is_refused() {
        assert!(parse("nothing").is_err());
        let lost = parse("SERVERBENCH total_ns=1000 responses=5 kept=2\n200 0.001\n200 0.001\n").unwrap_err();
        assert!(lost.to_string().contains("answered 5 requests, kept 2"), "{lost}");
        let long = parse("SERVERBENCH total_ns=1000 responses=1000001 kept=0\n").unwrap_err();
        assert!(long.to_string().contains("use a shorter -d"), "{long}");
        let idle = parse("SERVERBENCH total_ns=1000000 responses=0 kept=0\n").unwrap();
        assert_eq!((idle.requests, idle.errors.total()), (0, 0));
    }

    #[test]
    fn errors_are_classed_by_go_s_messages() {
        let class = |m: &str| {
            let mut e = ErrorCounts::default();
            *error_class(&mut e, m) += 1;
            e
        };
        assert_eq!(class("Get \"http://127.0.0.1:1/\": dial tcp 127.0.0.1:1: connect: connection refused").connect, 1);
        assert_eq!(class("Post \"http://x/ping\": write tcp 1->2: write: broken pipe").write, 1);
        assert_eq!(class("Get \"http://x/\": net/http: HTTP/1.x transport connection broken: malformed HTTP response \"x\"").framing, 1);
        assert_eq!(class("Get \"http://x/\": EOF").read, 1);
        assert_eq!(class("Get \"http://x/\": dial tcp 1: i/o timeout").timeout, 1);
    }

    #[test]
    fn the_arguments_carry_the_scenario_s_request() {
        let json = HttpRequest::for_scenario("json").unwrap();
        let a = args(&json, "http://127.0.0.1:9/ping", 64, 1, StopRule::Duration(Duration::from_secs(2)), Duration::from_secs(5));
        for want in ["-c=64", "-cpus=1", "-t=5", "-m=POST", "-host=bench", "-z=2000ms", "-d={\"sequence\": 1}"] {
            assert!(a.iter().any(|x| x == want), "{want} in {a:?}");
        }
        assert!(a.windows(2).any(|w| w[0] == "-H" && w[1] == "Content-Type: application/json"), "{a:?}");
        assert!(a.iter().any(|x| x.starts_with("-o=SERVERBENCH ")));
        assert_eq!(a.last().unwrap(), "http://127.0.0.1:9/ping");
        let hello = args(&HttpRequest::for_scenario("hello").unwrap(), "u", 8, 2, StopRule::Requests(10), Duration::ZERO);
        assert!(hello.contains(&"-n=80".to_string()) && hello.contains(&"-t=1".to_string()), "{hello:?}");
        assert!(!hello.iter().any(|x| x.starts_with("-d=") || x.starts_with("-z=")), "{hello:?}");
    }

    #[test]
    fn the_version_is_the_one_tools_hey_pins() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let v = pinned_version(root).unwrap();
        assert!(v.starts_with("v0.1."), "{v}");
        assert!(std::fs::read_to_string(root.join(MODULE_DIR).join("go.sum")).unwrap().contains(&format!("{PACKAGE} {v} h1:")));
    }
}
