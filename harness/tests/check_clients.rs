//! Real clients (curl, wrk, h2load) against fake servers: a correct one passes, a wrong one fails. Where a
//! tool is not installed the check must say so as a skip naming the package.

mod check_support;
mod common;

use check_support::{options, start, Flaws};
use serverbench::check::{tools, Scenario, Status, Verdict};

fn installed(tool: &str) -> bool {
    std::process::Command::new(tool).arg("--version").output().is_ok()
}

/// Where the tool is missing the check must say so as a skip naming the package; the test itself then
/// cannot reach its subject and is skipped (a failure under CI=true).
fn expect(test: &str, tool: &str, v: Verdict, status: Status) {
    if !installed(tool) {
        assert_eq!(v.status, Status::Skip, "{tool} missing: {}", v.reason);
        assert!(v.reason.contains("apt-get install"), "{}", v.reason);
        return common::skip(test, &format!("{tool} missing"));
    }
    assert_eq!(v.status, status, "{tool}: {}", v.reason);
}

#[test]
fn curl_gets_the_right_bodies() {
    let o = options();
    for scenario in [Scenario::Hello, Scenario::Plaintext, Scenario::Json] {
        let good = start(scenario, Flaws::default());
        expect("curl_gets_the_right_bodies", "curl", tools::curl(&good.target(false), &o), Status::Pass);
    }
    let wrong = start(Scenario::Hello, Flaws { wrong_body: true, ..Flaws::default() });
    expect("curl_gets_the_right_bodies", "curl", tools::curl(&wrong.target(false), &o), Status::Fail);
}

#[test]
fn wrk_sees_no_errors_and_checks_every_body() {
    let o = options();
    for scenario in [Scenario::Hello, Scenario::Plaintext, Scenario::Json] {
        let good = start(scenario, Flaws::default());
        expect("wrk_sees_no_errors_and_checks_every_body", "wrk", tools::wrk(&good.target(false), &o), Status::Pass);
    }
    let wrong = start(Scenario::Json, Flaws { json_i16: true, ..Flaws::default() });
    expect("wrk_sees_no_errors_and_checks_every_body", "wrk", tools::wrk(&wrong.target(false), &o), Status::Pass); // 42 fits in an i16
    let string = start(Scenario::Json, Flaws { json_string: true, ..Flaws::default() });
    expect("wrk_sees_no_errors_and_checks_every_body", "wrk", tools::wrk(&string.target(false), &o), Status::Fail);
    let missing = start(Scenario::Plaintext, Flaws { no_404: false, content_type: None, ..Flaws::default() });
    let mut t = missing.target(false);
    t.scenario = Scenario::Hello; // asks for "/", which the plaintext server answers with 404
    expect("wrk_sees_no_errors_and_checks_every_body", "wrk", tools::wrk(&t, &o), Status::Fail);
}

#[test]
fn h2load_sees_every_request_succeed() {
    let o = options();
    for scenario in [Scenario::Hello, Scenario::Plaintext, Scenario::Json] {
        let good = start(scenario, Flaws::default());
        expect("h2load_sees_every_request_succeed", "h2load", tools::h2load(&good.target(false), &o), Status::Pass);
    }
    let notfound = start(Scenario::Plaintext, Flaws::default());
    let mut t = notfound.target(false);
    t.scenario = Scenario::Hello;
    expect("h2load_sees_every_request_succeed", "h2load", tools::h2load(&t, &o), Status::Fail);
}
