//! h2load: its text report read into the round's figures (no quantiles: it prints none).

use crate::load::{ErrorCounts, StatusCounts};
use crate::model::LatencyPoints;

use super::summary::ToolReport;

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
}
