//! External load tools (wrk, h2load, hey), run pinned to the client CPUs and parsed into the same result
//! model. wrk and h2load keep no histogram the harness can read: what they print is stored, the rest marked
//! absent; hey prints every response's latency (`hey.rs`), which fills the round's histogram.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::os::cpus::CpuSet;
use crate::launch::probe::Sampler;
use crate::os::process;
use crate::load::{ErrorCounts, HttpRequest, LoadReport, StatusCounts};
use crate::model::LatencyPoints;

use super::hey;
use super::options::{StopRule, Tool};

/// One run of an external tool.
pub struct ToolRun<'a> {
    pub tool: Tool,
    pub target: SocketAddr,
    pub scenario: &'a str,
    pub connections: usize,
    pub threads: usize,
    pub pipeline: u32,
    pub stop: StopRule,
    pub timeout: Duration,
    pub cpus: &'a CpuSet,
    /// Where the request script or body and the tool's output are written.
    pub workdir: &'a Path,
    /// Names the output file, e.g. `c-epoll.hello.c64`; it holds the last round's output.
    pub label: &'a str,
    /// The checkout that builds hey (`hey::binary`).
    pub repo_root: &'a Path,
}

/// What a tool reported.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolReport {
    pub requests: u64,
    pub errors: ErrorCounts,
    pub status: StatusCounts,
    pub duration_s: f64,
    pub bytes_read: u64,
    pub latency: LatencyPoints,
    /// Every counted request's latency in ns, from a tool that prints them (hey).
    pub histogram: Option<Histogram<u64>>,
}

/// Runs the tool and returns the report in the engine's shape with the latency the tool printed: in the
/// report's histogram when it printed every request's (hey), else as points beside an empty histogram.
pub fn run(t: &ToolRun, stop: &AtomicBool) -> anyhow::Result<(LoadReport, Option<LatencyPoints>)> {
    let request = HttpRequest::for_scenario(t.scenario)
        .ok_or_else(|| anyhow::anyhow!("{} speaks HTTP only; scenario {} needs --tool builtin", t.tool.name(), t.scenario))?;
    let threads = t.threads.min(t.connections).max(1);
    let url = format!("http://{}{}", t.target, request.path);
    let (program, args) = match t.tool {
        Tool::Wrk => {
            let script = t.workdir.join(format!("wrk-{}.lua", t.scenario));
            std::fs::write(&script, wrk_script(&request))?;
            let secs = match t.stop {
                StopRule::Duration(d) => d.as_secs_f64().ceil().max(1.0) as u64,
                StopRule::Requests(_) => anyhow::bail!("wrk runs for a duration only"),
            };
            let mut a = vec![
                format!("-t{threads}"),
                format!("-c{}", t.connections),
                format!("-d{secs}s"),
                format!("--timeout={}s", t.timeout.as_secs().max(1)),
                "-s".into(),
                script.display().to_string(),
                url,
            ];
            a.extend(["--".into(), t.pipeline.to_string()]);
            ("wrk".to_string(), a)
        }
        Tool::H2load => {
            let mut a = vec![
                "--h1".into(),
                format!("-t{threads}"),
                format!("-c{}", t.connections),
                format!("-m{}", t.pipeline),
            ];
            match t.stop {
                StopRule::Duration(d) => a.push(format!("-D{}ms", d.as_millis().max(1))),
                StopRule::Requests(n) => a.push(format!("-n{}", n * t.connections as u64)),
            }
            for (k, v) in &request.headers {
                a.push(format!("-H{k}: {v}"));
            }
            if request.method == "POST" {
                let body = t.workdir.join(format!("h2load-{}.body", t.scenario));
                std::fs::write(&body, br#"{"sequence": 1}"#)?;
                a.push(format!("-d{}", body.display()));
            }
            a.push(url);
            ("h2load".to_string(), a)
        }
        Tool::Hey => {
            let a = hey::args(&request, &url, t.connections, threads, t.stop, t.timeout);
            (hey::binary(t.repo_root).display().to_string(), a)
        }
        Tool::Builtin => anyhow::bail!("the built-in generator is not an external tool"),
    };

    let name = t.tool.name();
    let out_path = t.workdir.join(format!("{}.{name}.out", t.label));
    let out = std::fs::File::create(&out_path)?;
    let mut cmd = std::process::Command::new(&program);
    cmd.args(&args).stdin(Stdio::null()).stdout(out.try_clone()?).stderr(out);
    let started = Instant::now();
    let mut child = process::spawn_group(&mut cmd, Some(t.cpus))
        .map_err(|e| anyhow::anyhow!("could not start {name} ({program}): {e}"))?;
    let pid = child.id() as i32;
    let sampler = Sampler::spawn(pid, pid);
    let mut interrupted = false;
    let limit = match t.stop {
        StopRule::Duration(d) => d + t.timeout + Duration::from_secs(10),
        StopRule::Requests(_) => Duration::from_secs(24 * 3600),
    };
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if stop.load(Ordering::Relaxed) && !interrupted {
            // Every tool prints what it measured when interrupted.
            interrupted = true;
            process::signal_group(pid, libc::SIGINT);
        }
        if started.elapsed() > limit {
            process::signal_group(pid, libc::SIGKILL);
            let _ = child.wait();
            anyhow::bail!("{name} did not finish within {:.0} s", limit.as_secs_f64());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let usage = sampler.finish();
    let wall_s = started.elapsed().as_secs_f64();
    let text = std::fs::read_to_string(&out_path).unwrap_or_default();
    let parsed = match t.tool {
        Tool::Wrk => parse_wrk(&text),
        Tool::Hey => hey::parse(&text),
        _ => parse_h2load(&text),
    };
    let parsed = parsed.map_err(|e| {
        anyhow::anyhow!("{name} ({status}): {e}; its output ({}):\n{}", out_path.display(), process::log_tail(&out_path, 10))
    })?;
    let (latency, points) = match parsed.histogram {
        Some(h) => (h, None),
        None => (crate::stats::histogram::new_latency_histogram(), Some(parsed.latency)),
    };
    let report = LoadReport {
        requests: parsed.requests,
        errors: parsed.errors,
        status: parsed.status,
        duration_s: if parsed.duration_s > 0.0 { parsed.duration_s } else { wall_s },
        bytes_read: parsed.bytes_read,
        // No tool reports bytes written or the response size (the runner fills in the size the
        // verification saw); wrk and h2load no full histogram either (what they print is kept beside it).
        latency,
        client_cpu_s: usage.cpu_s.ok_or_else(|| anyhow::anyhow!("{name}'s CPU time could not be read from /proc"))?,
        interrupted,
        ..LoadReport::empty(threads, t.connections)
    };
    Ok((report, points))
}

/// A wrk script: the scenario's request (repeated for pipelining) and a machine-readable summary line.
fn wrk_script(r: &HttpRequest) -> String {
    let lua_str = |s: &str| format!("{s:?}");
    let mut s = String::from("-- Written by serverbench for one round; see docs/runner.md.\n");
    s.push_str(&format!("wrk.method = {}\n", lua_str(&r.method)));
    for (k, v) in &r.headers {
        s.push_str(&format!("wrk.headers[{}] = {}\n", lua_str(k), lua_str(v)));
    }
    s.push_str(&format!("wrk.headers[\"Host\"] = {}\n", lua_str(&r.host)));
    if r.method == "POST" {
        s.push_str("wrk.body = '{\"sequence\": 1}'\n");
    }
    s.push_str(WRK_SCRIPT_BODY);
    s
}

const WRK_SCRIPT_BODY: &str = r#"
init = function(args)
  local depth = tonumber(args[1]) or 1
  local r = {}
  for i = 1, depth do r[i] = wrk.format() end
  req = table.concat(r)
end

request = function()
  return req
end

done = function(summary, latency, requests)
  local e = summary.errors
  local p = function(q) return latency:percentile(q) end
  io.write(string.format(
    "SERVERBENCH duration_us=%.0f requests=%.0f bytes=%.0f connect=%.0f read=%.0f write=%.0f status=%.0f timeout=%.0f " ..
    "min=%.3f mean=%.3f stdev=%.3f p25=%.3f p50=%.3f p75=%.3f p90=%.3f p99=%.3f p999=%.3f p9999=%.3f max=%.3f\n",
    summary.duration, summary.requests, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency.min, latency.mean, latency.stdev, p(25), p(50), p(75), p(90), p(99), p(99.9), p(99.99), latency.max))
end
"#;

/// The `SERVERBENCH key=value ...` line a tool is made to print (wrk's script, hey's template).
pub(super) struct SummaryLine<'a> {
    line: &'a str,
    tool: &'static str,
}

impl<'a> SummaryLine<'a> {
    pub(super) fn find(text: &'a str, tool: &'static str) -> anyhow::Result<Self> {
        let line = text
            .lines()
            .find_map(|l| l.strip_prefix("SERVERBENCH "))
            .ok_or_else(|| anyhow::anyhow!("no summary line from {tool}"))?;
        Ok(SummaryLine { line, tool })
    }

    pub(super) fn get<T: std::str::FromStr>(&self, key: &str) -> anyhow::Result<T> {
        self.line
            .split_whitespace()
            .find_map(|kv| kv.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| anyhow::anyhow!("{}'s summary lacks {key}", self.tool))
    }
}

/// Reads the `SERVERBENCH key=value ...` line of the script's done(); latency is in microseconds there.
pub fn parse_wrk(text: &str) -> anyhow::Result<ToolReport> {
    let line = SummaryLine::find(text, "the wrk script")?;
    let get = |key: &str| line.get::<f64>(key);
    let requests = get("requests")? as u64;
    let us = |key: &str| get(key).ok().filter(|_| requests > 0).map(|v| v * 1000.0);
    Ok(ToolReport {
        requests,
        errors: ErrorCounts {
            connect: get("connect")? as u64,
            read: get("read")? as u64,
            write: get("write")? as u64,
            timeout: get("timeout")? as u64,
            status: get("status")? as u64,
            ..ErrorCounts::default()
        },
        // wrk counts only the responses with status >= 400 (as errors.status); the classes are absent.
        status: StatusCounts::default(),
        duration_s: get("duration_us")? / 1e6,
        bytes_read: get("bytes")? as u64,
        latency: LatencyPoints {
            min: us("min"),
            mean: us("mean"),
            stdev: us("stdev"),
            p25: us("p25"),
            p50: us("p50"),
            p75: us("p75"),
            p90: us("p90"),
            p99: us("p99"),
            p999: us("p999"),
            p9999: us("p9999"),
            max: us("max"),
        },
        histogram: None,
    })
}

/// Parses h2load's text report: `finished in`, `requests:`, `status codes:`, `traffic:` and the
/// `time for request:` line (min, max, mean, sd; no quantiles).
pub fn parse_h2load(text: &str) -> anyhow::Result<ToolReport> {
    let line = |prefix: &str| text.lines().map(str::trim).find(|l| l.starts_with(prefix));
    let counted = |l: &str, label: &str| -> Option<u64> {
        let words: Vec<&str> = l.split_whitespace().collect();
        words.windows(2).find(|w| w[1].trim_end_matches(',') == label).and_then(|w| w[0].parse().ok())
    };
    let finished = line("finished in").ok_or_else(|| anyhow::anyhow!("no 'finished in' line from h2load"))?;
    let duration_s = finished
        .strip_prefix("finished in")
        .and_then(|r| r.split(',').next())
        .and_then(|d| parse_time_ns(d.trim()))
        .map(|ns| ns / 1e9)
        .ok_or_else(|| anyhow::anyhow!("unreadable h2load line '{finished}'"))?;
    let req = line("requests:").ok_or_else(|| anyhow::anyhow!("no 'requests:' line from h2load"))?;
    let codes = line("status codes:").unwrap_or_default();
    let traffic = line("traffic:").unwrap_or_default();
    let bytes_read = traffic
        .split_whitespace()
        .find_map(|w| w.strip_prefix('(').and_then(|w| w.strip_suffix(')')).and_then(|n| n.parse().ok()))
        .unwrap_or(0);
    let succeeded = counted(req, "succeeded").unwrap_or(0);
    let times = line("time for request:")
        .map(|l| l.trim_start_matches("time for request:").split_whitespace().filter_map(parse_time_ns).collect::<Vec<_>>())
        .unwrap_or_default();
    let at = |i: usize| times.get(i).copied().filter(|_| succeeded > 0);
    Ok(ToolReport {
        requests: succeeded,
        errors: ErrorCounts {
            read: counted(req, "errored").unwrap_or(0),
            timeout: counted(req, "timeout").unwrap_or(0),
            status: counted(req, "failed").unwrap_or(0).saturating_sub(counted(req, "errored").unwrap_or(0)),
            ..ErrorCounts::default()
        },
        status: StatusCounts {
            s2xx: counted(codes, "2xx").unwrap_or(0),
            s3xx: counted(codes, "3xx").unwrap_or(0),
            s4xx: counted(codes, "4xx").unwrap_or(0),
            s5xx: counted(codes, "5xx").unwrap_or(0),
            ..StatusCounts::default()
        },
        duration_s,
        bytes_read,
        latency: LatencyPoints { min: at(0), max: at(1), mean: at(2), stdev: at(3), ..LatencyPoints::default() },
        histogram: None,
    })
}

/// `125us`, `5.25ms`, `2.00s` (h2load's units) in nanoseconds.
fn parse_time_ns(text: &str) -> Option<f64> {
    let (num, scale) = if let Some(n) = text.strip_suffix("us") {
        (n, 1e3)
    } else if let Some(n) = text.strip_suffix("ms") {
        (n, 1e6)
    } else if let Some(n) = text.strip_suffix("ns") {
        (n, 1.0)
    } else if let Some(n) = text.strip_suffix('s') {
        (n, 1e9)
    } else {
        return None;
    };
    num.parse::<f64>().ok().map(|v| v * scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_wrk_summary_line() {
        let out = "Running 2s test @ http://127.0.0.1:1/\n  1 threads and 64 connections\n\
                   SERVERBENCH duration_us=2001234 requests=100000 bytes=5100000 connect=0 read=1 write=0 status=2 timeout=3 \
                   min=10.000 mean=600.500 stdev=50.000 p25=500.000 p50=590.000 p75=650.000 p90=700.000 p99=900.000 p999=1500.000 p9999=2000.000 max=3000.000\n";
        let r = parse_wrk(out).unwrap();
        assert_eq!(r.requests, 100_000);
        assert_eq!((r.errors.read, r.errors.status, r.errors.timeout), (1, 2, 3));
        assert!((r.duration_s - 2.001234).abs() < 1e-9);
        assert_eq!(r.bytes_read, 5_100_000);
        assert_eq!(r.latency.p50, Some(590_000.0));
        assert_eq!(r.latency.min, Some(10_000.0));
        assert!(parse_wrk("nothing").is_err());
    }

    #[test]
    fn reads_h2load_text() {
        let out = "starting benchmark...\n\
spawning thread #0: 64 total client(s). Timing-based test with 0s of warm-up time and 2s of main duration for measurements.\n\
Warm-up phase is over for thread #0.\n\
Main benchmark duration is over for thread #0. Stopping all clients.\n\
Stopped all clients for thread #0\n\
\n\
finished in 2.00s, 49530.50 req/s, 2.41MB/s\n\
requests: 99061 total, 99125 started, 99061 done, 99061 succeeded, 0 failed, 0 errored, 0 timeout\n\
status codes: 99061 2xx, 0 3xx, 0 4xx, 0 5xx\n\
traffic: 4.82MB (5052111) total, 3.59MB (3764318) headers (space savings 0.00%), 1.13MB (1188732) data\n\
                     min         max         mean         sd        +/- sd\n\
time for request:      125us      5.25ms      1.29ms       311us    75.97%\n\
time for connect:      143us      2.57ms      1.26ms       691us    60.00%\n\
time to 1st byte:     2.84ms      3.83ms      3.32ms       306us    60.00%\n\
req/s           :     770.12      781.45      775.02        3.11    60.94%\n";
        let r = parse_h2load(out).unwrap();
        assert_eq!(r.requests, 99_061);
        assert_eq!(r.status.s2xx, 99_061);
        assert_eq!(r.bytes_read, 5_052_111);
        assert!((r.duration_s - 2.0).abs() < 1e-9);
        assert_eq!(r.latency.min, Some(125_000.0));
        assert_eq!(r.latency.max, Some(5_250_000.0));
        assert_eq!(r.latency.mean, Some(1_290_000.0));
        assert_eq!(r.latency.stdev, Some(311_000.0));
        assert_eq!(r.latency.p50, None);
        assert!(parse_h2load("garbage").is_err());
    }

    #[test]
    fn the_wrk_script_sets_the_request() {
        let s = wrk_script(&HttpRequest::for_scenario("json").unwrap());
        assert!(s.contains("wrk.method = \"POST\""));
        assert!(s.contains("wrk.headers[\"Content-Type\"] = \"application/json\""));
        assert!(s.contains("wrk.body"));
        assert!(s.contains("done = function"));
    }
}
