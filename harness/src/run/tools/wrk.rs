//! wrk: the Lua script that sends the scenario's request and prints the round's summary line, and that
//! line read back.

use crate::load::{ErrorCounts, HttpRequest, StatusCounts};
use crate::model::LatencyPoints;

use super::summary::{SummaryLine, ToolReport};

/// A wrk script: the scenario's request (repeated for pipelining) and a machine-readable summary line.
pub(super) fn wrk_script(r: &HttpRequest) -> String {
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
    fn the_wrk_script_sets_the_request() {
        let s = wrk_script(&HttpRequest::for_scenario("json").unwrap());
        assert!(s.contains("wrk.method = \"POST\""));
        assert!(s.contains("wrk.headers[\"Content-Type\"] = \"application/json\""));
        assert!(s.contains("wrk.body"));
        assert!(s.contains("done = function"));
    }
}
