//! ApacheBench (`ab`, Debian's apache2-utils), the tool the third source document measured nginx and
//! Photon with: its command line for one round and its output read into the result model.
//!
//! ab speaks HTTP/1.0 from one thread. Its own default is a new connection per request (it waits for the
//! server to close after each answer); with `-k` it asks `Connection: keep-alive` and keeps a connection
//! as long as the answers say `keep-alive`. A round of `bench` keeps connections alive unless
//! `--connection-per-request` is given, so `-k` is passed unless it is (docs/runner.md).
//!
//! What it prints of latency: a table of the share of requests served within a time, in whole
//! milliseconds, and with `-e FILE` the same for every percent from 0 to 100 in thousandths of a
//! millisecond. The file is read where it was written; the table only where it was not. Its mean and
//! deviation it prints in whole milliseconds, and nothing beyond the 99th percentile but the maximum:
//! those figures are absent, not rounded or zero.

use std::path::Path;
use std::time::Duration;

use crate::load::{ErrorCounts, HttpRequest, StatusCounts};
use crate::model::LatencyPoints;

use crate::run::options::StopRule;

use super::summary::ToolReport;

/// ab keeps one record per request it may send (`-n`), allocated up front; with `-t` the round ends at the
/// time limit, and `-n` is set to this many requests per second of it: above what ab's one thread reaches
/// on loopback (about 21,000 a second against nginx here), at 32 bytes a record.
pub const REQUESTS_PER_S_CEILING: u64 = 250_000;

/// The arguments of one round: `connections` concurrent requests (`-c`), keep-alive (`-k`) unless every
/// request is to have its own connection, for the round's duration in whole seconds (`-t`, rounded up)
/// or `per_connection` requests per connection (`-n`), each read or write bounded by `timeout` (`-s`);
/// errors counted without stopping (`-r`), no progress lines (`-q`), the percentiles into `csv` (`-e`).
pub fn args(request: &HttpRequest, url: &str, connections: usize, keepalive: bool, stop: StopRule, timeout: Duration, csv: &Path) -> anyhow::Result<Vec<String>> {
    anyhow::ensure!(request.method == "GET" && request.body.is_empty(), "--tool ab sends GET requests only; {} {} needs another tool", request.method, request.path);
    let mut a = vec!["-q".to_string(), "-r".into(), format!("-c{connections}"), format!("-s{}", timeout.as_secs().max(1))];
    match stop {
        StopRule::Duration(d) => {
            let secs = d.as_secs_f64().ceil().max(1.0) as u64;
            // -t sets -n to 50,000 itself: -n must come after it.
            a.push(format!("-t{secs}"));
            a.push(format!("-n{}", (secs * REQUESTS_PER_S_CEILING).max(connections as u64)));
        }
        StopRule::Requests(n) => a.push(format!("-n{}", n * connections as u64)),
    }
    if keepalive {
        a.push("-k".into());
    }
    a.push("-H".into());
    a.push(format!("Host: {}", request.host));
    for (k, v) in &request.headers {
        a.push("-H".into());
        a.push(format!("{k}: {v}"));
    }
    a.extend(["-e".into(), csv.display().to_string(), url.to_string()]);
    Ok(a)
}

/// The number after `label` on a line of ab's report, e.g. `Complete requests:      1000`.
fn field<T: std::str::FromStr>(text: &str, label: &str) -> Option<T> {
    text.lines().find_map(|l| l.trim_start().strip_prefix(label)?.split_whitespace().next()?.parse().ok())
}

/// ab's breakdown of its failed requests: `   (Connect: 0, Receive: 2, Length: 5, Exceptions: 0)`, printed
/// only when some failed.
fn failure(text: &str, kind: &str) -> u64 {
    let Some(line) = text.lines().map(str::trim).find(|l| l.starts_with("(Connect:")) else { return 0 };
    line.trim_matches(|c| c == '(' || c == ')')
        .split(',')
        .find_map(|part| part.trim().strip_prefix(kind)?.strip_prefix(':')?.trim().parse().ok())
        .unwrap_or(0)
}

/// Percentiles in ns by percent from `-e`'s file: `Percentage served,Time in ms` then `0,0.123` ...
/// `100,2.000`.
fn csv_percentiles(csv: &str) -> Vec<(u32, f64)> {
    csv.lines()
        .filter_map(|l| {
            let (pct, ms) = l.split_once(',')?;
            Some((pct.trim().parse().ok()?, ms.trim().parse::<f64>().ok()? * 1e6))
        })
        .collect()
}

/// The same from the report's table, `  50%      3` ... ` 100%     12 (longest request)`, whole milliseconds
/// rounded to the nearest: a 0 there says "below half a millisecond", which is no figure, so it is left out.
fn table_percentiles(text: &str) -> Vec<(u32, f64)> {
    let Some(start) = text.find("Percentage of the requests served within a certain time (ms)") else { return Vec::new() };
    text[start..]
        .lines()
        .skip(1)
        .map_while(|l| {
            let mut words = l.split_whitespace();
            let pct = words.next()?.strip_suffix('%')?.parse::<u32>().ok()?;
            let ms = words.next()?.parse::<f64>().ok()?;
            Some((pct, ms))
        })
        .filter(|(_, ms)| *ms > 0.0)
        .map(|(pct, ms)| (pct, ms * 1e6))
        .collect()
}

/// Reads ab's report, with the percentiles of its `-e` file where there is one. Requests are ab's complete
/// requests less those it counted as non-2xx or as failing on length (an answer whose length differs from
/// the first answer's: a wrong body); its receive failures and exceptions are read errors, its connect
/// failures connect errors, its write errors write errors.
pub fn parse(text: &str, csv: Option<&str>) -> anyhow::Result<ToolReport> {
    let complete: u64 = field(text, "Complete requests:").ok_or_else(|| anyhow::anyhow!("no 'Complete requests:' line from ab"))?;
    let duration_s: f64 = field(text, "Time taken for tests:").ok_or_else(|| anyhow::anyhow!("no 'Time taken for tests:' line from ab"))?;
    let non_2xx: u64 = field(text, "Non-2xx responses:").unwrap_or(0);
    let errors = ErrorCounts {
        connect: failure(text, "Connect"),
        read: failure(text, "Receive") + failure(text, "Exceptions"),
        write: field(text, "Write errors:").unwrap_or(0),
        status: non_2xx,
        framing: failure(text, "Length"),
        ..ErrorCounts::default()
    };
    let requests = complete.saturating_sub(non_2xx + errors.framing);
    let percentiles = match csv.map(csv_percentiles).filter(|p| !p.is_empty()) {
        Some(p) => p,
        None => table_percentiles(text),
    };
    let at = |pct: u32| percentiles.iter().find(|(p, _)| *p == pct).map(|(_, ns)| *ns).filter(|_| requests > 0);
    Ok(ToolReport {
        requests,
        errors,
        // ab tells 2xx from the rest only as a count of the rest.
        status: StatusCounts::default(),
        duration_s,
        bytes_read: field(text, "Total transferred:").unwrap_or(0),
        latency: LatencyPoints { min: at(0), p25: at(25), p50: at(50), p75: at(75), p90: at(90), p99: at(99), max: at(100), ..LatencyPoints::default() },
        histogram: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Captured from `ab -q -r -c4 -s5 -t1 -n250000 -k -H 'Host: bench' -e F http://127.0.0.1:41233/plaintext`
    /// against Debian's nginx 1.22.1 answering `return 200 "Hello, World!"` (one process), with its `-e` file.
    const NGINX_KEEPALIVE: &str = include_str!("../../../tests/fixtures/ab/nginx-keepalive.out");
    const NGINX_CSV: &str = include_str!("../../../tests/fixtures/ab/nginx-keepalive.csv");
    /// The same nginx asked for a path it does not serve, without -k (`-n2000`): 2,000 answers of 404.
    const NGINX_404_PER_REQUEST: &str = include_str!("../../../tests/fixtures/ab/nginx-404-per-request.out");

    #[test]
    fn reads_counts_and_the_percentile_file() {
        let r = parse(NGINX_KEEPALIVE, Some(NGINX_CSV)).unwrap();
        assert_eq!(r.requests, 21_249);
        assert_eq!(r.errors.total(), 0);
        assert!((r.duration_s - 1.001).abs() < 1e-9);
        assert_eq!(r.bytes_read, 3_420_989);
        let l = r.latency;
        assert_eq!((l.min, l.p25, l.p50, l.p75), (Some(20_000.0), Some(56_000.0), Some(68_000.0), Some(77_000.0)));
        assert_eq!((l.p90, l.p99, l.max), (Some(85_000.0), Some(4_275_000.0), Some(10_817_000.0)));
        // What ab gives only in whole milliseconds, or not at all, is absent, never 0.
        assert_eq!((l.mean, l.stdev, l.p999, l.p9999), (None, None, None, None));
        assert!(r.histogram.is_none());
    }

    #[test]
    fn without_the_file_the_table_gives_whole_milliseconds_and_no_zeros() {
        let l = parse(NGINX_KEEPALIVE, None).unwrap().latency;
        assert_eq!((l.p50, l.p75, l.p90), (None, None, None), "a 0 in ab's table is below half a millisecond, not 0");
        assert_eq!((l.p99, l.max), (Some(4e6), Some(11e6)));
        assert_eq!((l.min, l.p25), (None, None), "the table has neither");
        assert_eq!(parse(NGINX_KEEPALIVE, Some("garbage")).unwrap().latency, l, "an unreadable file: the table");
    }

    #[test]
    fn answers_other_than_2xx_are_status_errors_not_requests() {
        let r = parse(NGINX_404_PER_REQUEST, None).unwrap();
        assert_eq!((r.requests, r.errors.status, r.errors.total()), (0, 2000, 2000));
        assert!((r.duration_s - 0.45).abs() < 1e-9);
        assert_eq!(r.latency, LatencyPoints::default(), "no request, no latency");
    }

    #[test]
    fn failures_are_sorted_into_the_model_s_classes() {
        let out = "Time taken for tests:   2.5 seconds\nComplete requests:      1000\nFailed requests:        9\n   \
                   (Connect: 1, Receive: 2, Length: 5, Exceptions: 1)\nWrite errors:           3\nNon-2xx responses:      40\n\
                   Total transferred:      100 bytes\n";
        let r = parse(out, None).unwrap();
        assert_eq!((r.errors.connect, r.errors.read, r.errors.framing, r.errors.write, r.errors.status), (1, 3, 5, 3, 40));
        assert_eq!(r.requests, 1000 - 40 - 5, "non-2xx and wrong-length answers are not requests");
        assert!((r.duration_s - 2.5).abs() < 1e-12);
        assert_eq!(r.latency, LatencyPoints::default(), "no table, no file, no latency");
        assert!(parse("apr_socket_connect(): Connection refused (111)", None).is_err());
    }

    #[test]
    fn keep_alive_unless_each_request_has_its_own_connection() {
        let plaintext = HttpRequest::for_scenario("plaintext").unwrap();
        let csv = Path::new("/tmp/x.csv");
        let a = args(&plaintext, "http://127.0.0.1:9/plaintext", 64, true, StopRule::Duration(Duration::from_millis(500)), Duration::from_secs(5), csv).unwrap();
        for want in ["-q", "-r", "-c64", "-s5", "-t1", "-k", "-e", "/tmp/x.csv", "http://127.0.0.1:9/plaintext"] {
            assert!(a.iter().any(|x| x == want), "{want} in {a:?}");
        }
        let (t, n) = (a.iter().position(|x| x == "-t1").unwrap(), a.iter().position(|x| x.starts_with("-n")).unwrap());
        assert!(t < n && a[n] == format!("-n{REQUESTS_PER_S_CEILING}"), "-n after -t: {a:?}");
        assert!(a.windows(2).any(|w| w[0] == "-H" && w[1] == format!("Host: {}", plaintext.host)), "{a:?}");
        assert_eq!(a.last().unwrap(), "http://127.0.0.1:9/plaintext");
        let per_request = args(&plaintext, "u", 8, false, StopRule::Requests(10), Duration::ZERO, csv).unwrap();
        assert!(!per_request.contains(&"-k".to_string()) && per_request.contains(&"-n80".to_string()), "{per_request:?}");
        assert!(per_request.contains(&"-s1".to_string()) && !per_request.iter().any(|x| x.starts_with("-t")), "{per_request:?}");
        let json = HttpRequest::for_scenario("json").unwrap();
        assert!(args(&json, "u", 1, true, StopRule::Requests(1), Duration::ZERO, csv).is_err(), "no POST");
    }
}
