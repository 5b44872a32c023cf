//! Real clients that no one here wrote: curl, wrk and h2load (HTTP/1.1) must get valid answers from every
//! HTTP scenario, with no errors; ApacheBench (HTTP/1.0, with and without keep-alive) from `plaintext`. A missing tool is a skip that names the Debian package to install.

use std::io::Read as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::case::{Failed, Options, Target, Verdict};
use crate::wire::Scenario;

/// The Debian package of each tool.
pub const TOOLS: &[(&str, &str)] = &[("curl", "curl"), ("wrk", "wrk"), ("h2load", "nghttp2-client"), ("ab", "apache2-utils")];

const JSON_SEQUENCE: u64 = 42;

struct Run {
    ok: bool,
    stdout: String,
    stderr: String,
}

/// Runs a tool with a deadline; None when it is not installed.
fn run(tool: &str, args: &[String], timeout: Duration) -> Result<Option<Run>, Failed> {
    let mut child = match Command::new(tool).args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn() {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot start {tool}: {e}").into()),
    };
    let (mut out, mut err) = (child.stdout.take().expect("piped"), child.stderr.take().expect("piped"));
    let reader = std::thread::spawn(move || {
        let (mut o, mut e) = (String::new(), String::new());
        let _ = out.read_to_string(&mut o);
        let _ = err.read_to_string(&mut e);
        (o, e)
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break Some(s);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (stdout, stderr) = reader.join().unwrap_or_default();
    match status {
        None => Err(format!("{tool} did not finish within {timeout:?}").into()),
        Some(s) => Ok(Some(Run { ok: s.success(), stdout, stderr })),
    }
}

fn missing(tool: &str) -> Verdict {
    let pkg = TOOLS.iter().find(|(t, _)| *t == tool).map(|(_, p)| *p).unwrap_or(tool);
    Verdict::skip(format!("{tool} is not installed (fix: `apt-get install -y {pkg}`)"))
}

fn url(t: &Target) -> String {
    let path = t.scenario.request().map_or_else(|| "/".to_string(), |r| r.path);
    format!("http://{}{path}", t.addr)
}

fn expected_body(t: &Target) -> String {
    if t.scenario == Scenario::Json {
        return format!("{{\"sequence\":{JSON_SEQUENCE}}}");
    }
    t.scenario.expected().map(|e| String::from_utf8_lossy(e.body).into_owned()).unwrap_or_default()
}

/// The expected body for a message: whole when short, else its start and its length.
fn brief_body(t: &Target) -> String {
    let body = expected_body(t);
    if body.len() <= 40 {
        return format!("{body:?}");
    }
    let start: String = body.chars().take(16).collect();
    format!("{start:?}... ({} bytes)", body.len())
}

fn json_body() -> String {
    format!("{{\"sequence\": {JSON_SEQUENCE}}}")
}

/// A body equal to the expected one; JSON compared as values.
fn body_ok(t: &Target, body: &str) -> bool {
    if t.scenario == Scenario::Json {
        serde_json::from_str::<serde_json::Value>(body).ok() == serde_json::from_str(&expected_body(t)).ok()
    } else {
        body == expected_body(t)
    }
}

fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

/// A temporary file removed when dropped.
struct TempFile(PathBuf);

impl TempFile {
    fn new(suffix: &str, text: &str) -> Result<TempFile, Failed> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!("serverbench-check-{}-{}{suffix}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        let path = std::env::temp_dir().join(name);
        std::fs::write(&path, text).map_err(|e| Failed(format!("cannot write {}: {e}", path.display())))?;
        Ok(TempFile(path))
    }
    fn arg(&self) -> String {
        self.0.display().to_string()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// What curl writes after each body: the mark, the status, the end of the mark.
const CURL_MARK_FORMAT: &str = "<<sb-status %{http_code}>>";
const CURL_MARK: &str = "<<sb-status ";
const CURL_MARK_END: &str = ">>";

/// Three requests on one curl connection; each must be a 200 with the scenario's body.
pub fn curl(t: &Target, _o: &Options) -> Verdict {
    let mut args: Vec<String> =
        ["-sS", "--http1.1", "--max-time", "5", "-w", CURL_MARK_FORMAT].iter().map(|s| s.to_string()).collect();
    if t.scenario == Scenario::Json {
        args.extend(["-H".into(), "Content-Type: application/json".into(), "--data-binary".into(), json_body()]);
    }
    for _ in 0..3 {
        args.push(url(t));
    }
    let r = match run("curl", &args, Duration::from_secs(20)) {
        Ok(Some(r)) => r,
        Ok(None) => return missing("curl"),
        Err(e) => return Verdict::fail(e.0),
    };
    if !r.ok {
        return Verdict::fail(format!("curl failed: {}", last_lines(&r.stderr, 3)));
    }
    // Each URL prints its body, then the mark and its status; a body may hold newlines (`file`).
    let answers: Vec<(&str, &str)> = r
        .stdout
        .split_terminator(CURL_MARK_END)
        .filter_map(|part| part.rsplit_once(CURL_MARK))
        .collect();
    if answers.len() != 3 {
        return Verdict::fail(format!("curl printed {:?}; expected three answers", r.stdout));
    }
    for (i, (body, code)) in answers.iter().enumerate() {
        if *code != "200" || !body_ok(t, body) {
            return Verdict::fail(format!("curl request {}: status {code}, body {}; expected 200 and {}", i + 1, crate::wire::client::show(body.as_bytes(), 80), brief_body(t)));
        }
    }
    Verdict::pass(format!("3 requests on one connection: 200 with {}", brief_body(t)))
}

/// wrk for one second on 8 connections, with a Lua check of every body; no socket error, no non-2xx
/// answer, no wrong body.
pub fn wrk(t: &Target, _o: &Options) -> Verdict {
    let expected = expected_body(t);
    let body_test = if t.scenario == Scenario::Json {
        format!(r#"string.match(body, '^%s*{{%s*"sequence"%s*:%s*{JSON_SEQUENCE}%s*}}%s*$') ~= nil"#)
    } else {
        format!("body == {expected:?}")
    };
    let request = if t.scenario == Scenario::Json {
        format!("wrk.method = \"POST\"\nwrk.body = '{}'\nwrk.headers[\"Content-Type\"] = \"application/json\"\n", json_body())
    } else {
        String::new()
    };
    let script = format!(
        r#"{request}local threads = {{}}
function setup(thread) table.insert(threads, thread) end
function init(args) wrong = 0 end
function response(status, headers, body)
  if not ({body_test}) then wrong = wrong + 1 end
end
function done(summary, latency, requests)
  local w = 0
  for _, t in ipairs(threads) do w = w + t:get("wrong") end
  io.write(string.format("sb-wrong-bodies: %d\n", w))
end
"#
    );
    let script = match TempFile::new(".lua", &script) {
        Ok(f) => f,
        Err(e) => return Verdict::fail(e.0),
    };
    let args: Vec<String> =
        ["-t1", "-c8", "-d1s", "--timeout", "2s", "-s", &script.arg(), &url(t)].iter().map(|s| s.to_string()).collect();
    let r = match run("wrk", &args, Duration::from_secs(20)) {
        Ok(Some(r)) => r,
        Ok(None) => return missing("wrk"),
        Err(e) => return Verdict::fail(e.0),
    };
    if !r.ok {
        return Verdict::fail(format!("wrk failed: {}", last_lines(&(r.stderr + &r.stdout), 3)));
    }
    let requests = r.stdout.lines().find_map(|l| l.trim().split_once(" requests in").and_then(|(n, _)| n.trim().parse::<u64>().ok()));
    let socket_errors = r.stdout.lines().find(|l| l.contains("Socket errors:")).map(|l| l.trim().to_string());
    let non_2xx = r.stdout.lines().find(|l| l.contains("Non-2xx or 3xx responses:")).map(|l| l.trim().to_string());
    let wrong: u64 = r
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("sb-wrong-bodies: ").and_then(|n| n.trim().parse().ok()))
        .unwrap_or(u64::MAX);
    let problems: Vec<String> = [
        socket_errors,
        non_2xx,
        (wrong == u64::MAX).then(|| "the body check did not report".to_string()),
        (wrong > 0 && wrong != u64::MAX).then(|| format!("{wrong} answers with a body other than {}", brief_body(t))),
        (requests.unwrap_or(0) == 0).then(|| "no request completed".to_string()),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !problems.is_empty() {
        return Verdict::fail(format!("wrk: {}", problems.join("; ")));
    }
    Verdict::pass(format!("wrk -t1 -c8 -d1s: {} requests, no errors, every body {}", requests.unwrap_or(0), brief_body(t)))
}

/// h2load in HTTP/1.1 mode: 200 requests on 4 connections, all succeeded with 2xx.
pub fn h2load(t: &Target, _o: &Options) -> Verdict {
    let mut args: Vec<String> = ["--h1", "-n", "200", "-c", "4", "-t", "1"].iter().map(|s| s.to_string()).collect();
    let body_file;
    if t.scenario == Scenario::Json {
        body_file = match TempFile::new(".json", &json_body()) {
            Ok(f) => f,
            Err(e) => return Verdict::fail(e.0),
        };
        args.extend(["-d".into(), body_file.arg(), "-H".into(), "Content-Type: application/json".into()]);
    }
    args.push(url(t));
    let r = match run("h2load", &args, Duration::from_secs(30)) {
        Ok(Some(r)) => r,
        Ok(None) => return missing("h2load"),
        Err(e) => return Verdict::fail(e.0),
    };
    let line = |prefix: &str| r.stdout.lines().find(|l| l.trim_start().starts_with(prefix)).map(|l| l.trim().to_string());
    let Some(requests) = line("requests:") else {
        return Verdict::fail(format!("h2load printed no summary: {}", last_lines(&(r.stderr.clone() + &r.stdout), 3)));
    };
    // "requests: 200 total, 200 started, 200 done, 200 succeeded, 0 failed, 0 errored, 0 timeout"
    let count = |what: &str| {
        requests.split(',').find_map(|p| {
            let p = p.trim().trim_start_matches("requests:").trim();
            p.strip_suffix(what).and_then(|n| n.trim().parse::<u64>().ok())
        })
    };
    let status = line("status codes:").unwrap_or_default();
    let twoxx = status
        .trim_start_matches("status codes:")
        .split(',')
        .find_map(|p| p.trim().strip_suffix("2xx").and_then(|n| n.trim().parse::<u64>().ok()));
    let (total, succeeded) = (count("total"), count("succeeded"));
    let clean = r.ok
        && total == Some(200)
        && succeeded == Some(200)
        && twoxx == Some(200)
        && ["failed", "errored", "timeout"].iter().all(|w| count(w) == Some(0));
    if clean {
        Verdict::pass("h2load --h1 -n 200 -c 4: 200 succeeded, all 2xx")
    } else {
        Verdict::fail(format!("h2load --h1 -n 200 -c 4: {requests}; {status}"))
    }
}

/// Requests each ApacheBench run sends: with keep-alive on 8 connections, and without on 4.
const AB_KEEPALIVE_REQUESTS: u64 = 2_000;
const AB_CLOSE_REQUESTS: u64 = 200;

/// ApacheBench speaks HTTP/1.0: with `-k` it asks `Connection: keep-alive` and keeps a connection only
/// when the answer says `keep-alive`; without it, it waits for the server to close after each answer. A
/// server that keeps HTTP/1.0 connections open without saying so, or closes them when asked to keep
/// them, stalls ab or makes it count failures.
pub fn ab(t: &Target, _o: &Options) -> Verdict {
    let mut said = Vec::new();
    for (keepalive, n, c) in [(true, AB_KEEPALIVE_REQUESTS, 8u64), (false, AB_CLOSE_REQUESTS, 4)] {
        let mut args: Vec<String> = vec!["-n".into(), n.to_string(), "-c".into(), c.to_string(), "-s".into(), "5".into()];
        if keepalive {
            args.push("-k".into());
        }
        args.push(url(t));
        let how = format!("ab{} -n {n} -c {c}", if keepalive { " -k" } else { "" });
        let r = match run("ab", &args, Duration::from_secs(30)) {
            Ok(Some(r)) => r,
            Ok(None) => return missing("ab"),
            Err(e) => return Verdict::fail(format!("{how}: {}", e.0)),
        };
        let field = |name: &str| {
            r.stdout.lines().find_map(|l| l.strip_prefix(name).and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok()))
        };
        let (complete, failed, non_2xx, kept) =
            (field("Complete requests:"), field("Failed requests:"), field("Non-2xx responses:"), field("Keep-Alive requests:"));
        let mut problems: Vec<String> = Vec::new();
        if !r.ok || complete.is_none() {
            problems.push(format!("did not finish: {}", last_lines(&(r.stderr.clone() + &r.stdout), 3)));
        } else {
            if complete != Some(n) {
                problems.push(format!("{} of {n} requests complete", complete.unwrap_or(0)));
            }
            if failed != Some(0) {
                problems.push(format!("{} failed", failed.unwrap_or(u64::MAX)));
            }
            if let Some(bad) = non_2xx.filter(|b| *b > 0) {
                problems.push(format!("{bad} non-2xx answers"));
            }
            if keepalive && kept != Some(n) {
                problems.push(format!("{} of {n} answers kept the connection (the answer must say `Connection: keep-alive`)", kept.unwrap_or(0)));
            }
        }
        if !problems.is_empty() {
            return Verdict::fail(format!("{how}: {}", problems.join("; ")));
        }
        said.push(format!("{how}: all complete"));
    }
    Verdict::pass(format!("{} (HTTP/1.0)", said.join(", ")))
}
