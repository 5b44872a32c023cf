//! `serverbench load URL` against a server that is not a contestant: Debian's nginx with its defaults
//! (a `return 200` and a static file). Without `--scenario` every well-framed 2xx answer is valid and
//! nginx's close after its `keepalive_requests` (1,000 by default) is the server's, not an error; with
//! `--scenario hello` its answers are held to the contestants' 51 bytes and do not match.

mod common;

use serde_json::Value;

use common::nginx::nginx_or_skip;

/// Requests each connection sends: past nginx's default limit of 1,000 per keep-alive connection twice.
const REQUESTS_PER_CONNECTION: u64 = 2500;
const CONNECTIONS: u64 = 4;

/// `serverbench load` with these arguments, its exit status checked.
fn load(args: &[&str]) -> String {
    let out = common::serverbench().arg("load").args(args).output().unwrap();
    assert!(out.status.success(), "serverbench load {args:?}: {}{}", common::text(&out.stdout), common::text(&out.stderr));
    common::text(&out.stdout)
}

fn load_json(url: &str, extra: &[&str]) -> Value {
    let n = REQUESTS_PER_CONNECTION.to_string();
    let c = CONNECTIONS.to_string();
    let mut args = vec!["--json", "-t", "1", "-c", &c, "-n", &n];
    args.extend_from_slice(extra);
    args.push(url);
    serde_json::from_str(&load(&args)).unwrap()
}

#[test]
fn a_plain_get_counts_every_answer_of_nginx_and_its_keepalive_limit_is_no_error() {
    let Some(nginx) = nginx_or_skip("a_plain_get_counts_every_answer_of_nginx") else { return };
    for path in ["/", "/static/page.html"] {
        let url = format!("http://127.0.0.1:{}{path}", nginx.port);
        let r = load_json(&url, &[]);
        let all = REQUESTS_PER_CONNECTION * CONNECTIONS;
        assert_eq!(r["requests"], all, "{path}: every answer is valid: {r}");
        assert_eq!(r["errors_total"], 0, "{path}: {}", r["errors"]);
        assert_eq!(r["status"]["s2xx"], all, "{path}");
        // nginx ends each keep-alive connection after 1,000 requests, with `Connection: close`: twice on
        // each connection here, cleanly, and the client reconnects. No request was outstanding, so no
        // keep-alive was lost.
        let closes = r["server_closes"].as_u64().unwrap();
        assert!(closes > 0, "{path}: {r}");
        assert_eq!(closes, CONNECTIONS * ((REQUESTS_PER_CONNECTION - 1) / 1000), "{path}: {r}");
        assert_eq!(r["keepalive_lost"], 0, "{path}: every close was clean: {r}");
        assert!(r["client_cpu_us_per_request"].as_f64().is_some_and(|us| us > 0.0), "{path}: {r}");
    }
    let text = load(&["-t", "1", "-c", "4", "-n", "2500", &format!("http://127.0.0.1:{}/", nginx.port)]);
    assert!(text.contains("10000 valid requests"), "{text}");
    assert!(!text.contains("Errors:"), "no error: {text}");
    assert!(text.contains("8 closed by the server after a complete response"), "{text}");
    assert!(!text.contains("keep-alive lost"), "{text}");
}

#[test]
fn a_scenario_holds_nginx_to_the_contestants_answer() {
    let Some(nginx) = nginx_or_skip("a_scenario_holds_nginx_to_the_contestants_answer") else { return };
    let url = format!("http://127.0.0.1:{}/", nginx.port);
    let r = load_json(&url, &["--scenario", "hello"]);
    // nginx adds Server, Date and Content-Type: not the 51 bytes of a micro contestant's hello.
    assert_eq!(r["requests"], 0, "{r}");
    assert_eq!(r["errors"]["mismatch"], REQUESTS_PER_CONNECTION * CONNECTIONS, "{r}");
    assert!(r["client_cpu_us_per_request"].is_null(), "no valid response, no CPU per request: {r}");
    let text = load(&["--scenario", "hello", "-t", "1", "-c", "4", "-n", "100", &url]);
    assert!(text.contains("0 valid requests"), "{text}");
    assert!(text.contains("(n/a per request)"), "no valid response, no CPU per request: {text}");
    // Held to the body only, nginx's answer is valid.
    let r = load_json(&url, &["--scenario", "hello", "--no-expect"]);
    assert_eq!(r["requests"], REQUESTS_PER_CONNECTION * CONNECTIONS, "{r}");
}
