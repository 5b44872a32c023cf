//! The timeout checks: hello-timeout closes idle and silent connections and cuts off a client that never
//! reads, without closing an active one; hello keeps idle connections open.

mod check_support;
mod common;

use std::time::Duration;

use check_support::{assert_fails, options, start, Flaws};
use serverbench::check::{timeout, Scenario};

const T: Duration = Duration::from_millis(300);

#[test]
fn hello_keeps_an_idle_connection_open() {
    let o = options();
    let good = start(Scenario::Hello, Flaws::default());
    timeout::idle_open(&good.target(true), &o).unwrap();

    let closing = start(Scenario::Hello, Flaws { idle_close: Some(T), ..Flaws::default() });
    assert_fails(timeout::idle_open(&closing.target(true), &o), "closed an idle connection");
}

#[test]
fn hello_timeout_closes_idle_and_silent_connections_in_time() {
    let o = options();
    let good = start(Scenario::HelloTimeout, Flaws { timeout: Some(T), ..Flaws::default() });
    let r = timeout::idle_close(&good.target(true), &o).unwrap();
    assert!(r.contains("after the last answer"), "{r}");
    timeout::silent_close(&good.target(true), &o).unwrap();

    let never = start(Scenario::HelloTimeout, Flaws::default());
    assert_fails(timeout::idle_close(&never.target(true), &o), "still open");
    assert_fails(timeout::silent_close(&never.target(true), &o), "still open");

    let early = start(Scenario::HelloTimeout, Flaws { timeout: Some(Duration::from_millis(30)), ..Flaws::default() });
    assert_fails(timeout::idle_close(&early.target(true), &o), "well before");
}

#[test]
fn hello_timeout_does_not_cut_an_active_client() {
    let o = options();
    let good = start(Scenario::HelloTimeout, Flaws { timeout: Some(T), ..Flaws::default() });
    timeout::active(&good.target(true), &o).unwrap();

    let per_connection = start(Scenario::HelloTimeout, Flaws { connection_lifetime: Some(T), ..Flaws::default() });
    assert_fails(timeout::active(&per_connection.target(true), &o), "of 8");
}

#[test]
fn a_client_that_never_reads_is_cut_off() {
    let o = options();
    let good = start(Scenario::HelloTimeout, Flaws { timeout: Some(T), ..Flaws::default() });
    let r = timeout::no_reader(&good.target(true), &o).unwrap();
    assert!(r.contains("cut off"), "{r}");

    let never = start(Scenario::HelloTimeout, Flaws::default());
    assert_fails(timeout::no_reader(&never.target(true), &o), "still connected");
}
