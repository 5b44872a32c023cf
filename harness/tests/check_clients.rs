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

#[test]
fn ab_needs_http10_keep_alive_only_when_asked() {
    let o = options();
    let good = start(Scenario::Plaintext, Flaws::default());
    let v = tools::ab(&good.target(false), &o);
    expect("ab_needs_http10_keep_alive_only_when_asked", "ab", v.clone(), Status::Pass);
    if v.status == Status::Skip {
        return;
    }
    // Answered as HTTP/1.1 and kept open: ab -k sees no keep-alive and waits for a close that never comes.
    let wrong = start(Scenario::Plaintext, Flaws { http10_as_11: true, ..Flaws::default() });
    let v = tools::ab(&wrong.target(false), &o);
    assert_eq!(v.status, Status::Fail, "{}", v.reason);
    assert!(v.reason.contains("ab -k"), "{}", v.reason);
    // Closes after every answer: ab -k counts no answer as kept.
    let closing = start(Scenario::Plaintext, Flaws { close_after_answer: true, ..Flaws::default() });
    let v = tools::ab(&closing.target(false), &o);
    assert_eq!(v.status, Status::Fail, "{}", v.reason);
}

#[test]
fn clients_compare_the_file_byte_for_byte() {
    let o = options();
    let good = start(Scenario::File, Flaws::default());
    let wrong = start(Scenario::File, Flaws { file_wrong_byte: true, ..Flaws::default() });
    for (tool, check) in [("curl", tools::curl as fn(&_, &_) -> Verdict), ("wrk", tools::wrk)] {
        let test = "clients_compare_the_file_byte_for_byte";
        let v = check(&good.target(true), &o);
        expect(test, tool, v.clone(), Status::Pass);
        if v.status == Status::Skip {
            continue;
        }
        let v = check(&wrong.target(true), &o);
        assert_eq!(v.status, Status::Fail, "{tool}: {}", v.reason);
        assert!(v.reason.len() < 400, "{tool} quoted the whole file: {}", v.reason);
    }
}
