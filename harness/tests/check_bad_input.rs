//! Bad input: a correct server survives each kind and answers the next connection; a server that dies,
//! blocks or misbehaves on it fails the check with a reason.

mod check_support;

use check_support::{assert_fails, options, start, Flaws};
use serverbench::check::{bad_input, Scenario};

#[test]
fn random_bytes() {
    let o = options();
    for scenario in [Scenario::Hello, Scenario::Plaintext, Scenario::Json, Scenario::Echo] {
        let good = start(scenario, Flaws::default());
        bad_input::random_bytes(&good.target(scenario.is_hello()), &o).unwrap_or_else(|e| panic!("{scenario}: {e}"));
    }
    let fragile = start(Scenario::Plaintext, Flaws { die_on_junk: true, ..Flaws::default() });
    assert_fails(bad_input::random_bytes(&fragile.target(false), &o), "after 64 KiB of random bytes");
}

#[test]
fn a_request_cut_in_the_middle() {
    let o = options();
    for scenario in [Scenario::Hello, Scenario::Plaintext, Scenario::Json, Scenario::Echo] {
        let good = start(scenario, Flaws::default());
        bad_input::cut_request(&good.target(true), &o).unwrap_or_else(|e| panic!("{scenario}: {e}"));
    }
    let serial = start(Scenario::Plaintext, Flaws { serial: true, ..Flaws::default() });
    assert_fails(bad_input::cut_request(&serial.target(false), &o), "half a request left hanging");
}

#[test]
fn resets_mid_request() {
    let o = options();
    for scenario in [Scenario::Hello, Scenario::Plaintext, Scenario::Echo] {
        let good = start(scenario, Flaws::default());
        bad_input::reset(&good.target(true), &o).unwrap_or_else(|e| panic!("{scenario}: {e}"));
    }
    let fragile = start(Scenario::Echo, Flaws { die_on_reset: true, ..Flaws::default() });
    assert_fails(bad_input::reset(&fragile.target(true), &o), "reset mid-request");
}

#[test]
fn half_closed_sockets() {
    let o = options();
    for scenario in [Scenario::Hello, Scenario::Plaintext, Scenario::Json, Scenario::Echo] {
        let good = start(scenario, Flaws::default());
        bad_input::half_close(&good.target(true), &o).unwrap_or_else(|e| panic!("{scenario}: {e}"));
    }
    let deaf = start(Scenario::Plaintext, Flaws { ignore_half_close: true, ..Flaws::default() });
    assert_fails(bad_input::half_close(&deaf.target(false), &o), "was not answered");
    // Closing without an answer is how some HTTP stacks take a half-close; only micro contestants must answer.
    let aborting = start(Scenario::Plaintext, Flaws { close_on_half_close: true, ..Flaws::default() });
    let r = bad_input::half_close(&aborting.target(false), &o).unwrap();
    assert!(r.contains("closed without an answer"), "{r}");
    assert_fails(bad_input::half_close(&aborting.target(true), &o), "was not answered");
}

#[test]
fn huge_headers_are_refused_by_platform_servers() {
    let o = options();
    let good = start(Scenario::Plaintext, Flaws::default());
    let r = bad_input::huge_headers(&good.target(false), &o).unwrap();
    assert!(r.contains("status 431"), "{r}");

    let lax = start(Scenario::Plaintext, Flaws { accept_huge_headers: true, ..Flaws::default() });
    assert_fails(bad_input::huge_headers(&lax.target(false), &o), "were accepted");
    // A micro contestant only has to survive it.
    bad_input::huge_headers(&lax.target(true), &o).unwrap();

    let hello = start(Scenario::Hello, Flaws::default());
    bad_input::huge_headers(&hello.target(true), &o).unwrap();
}

#[test]
fn many_connections_dropped_at_once() {
    let o = options();
    let good = start(Scenario::Hello, Flaws::default());
    let r = bad_input::drop_many(&good.target(true), &o).unwrap();
    assert!(r.contains("of 1000 connections established"), "{r}");

    let fragile = start(Scenario::Hello, Flaws { die_above: Some(200), ..Flaws::default() });
    assert_fails(bad_input::drop_many(&fragile.target(true), &o), "opened and dropped at once");
}
