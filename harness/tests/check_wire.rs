//! The wire-contract checks pass on a correct fake server and fail, with a reason that names the fault,
//! on a fake server with that fault.

mod check_support;
mod common;

use check_support::{assert_fails, options, start, Flaws};
use serverbench::check::{wire, Scenario, Status};

#[test]
fn hello_exact_bytes_for_micro_and_a_valid_200_for_platform() {
    let o = options();
    let good = start(Scenario::Hello, Flaws::default());
    wire::hello_response(&good.target(true), &o).unwrap();
    wire::hello_response(&good.target(false), &o).unwrap();

    let header = start(Scenario::Hello, Flaws { extra_header: true, ..Flaws::default() });
    assert_fails(wire::hello_response(&header.target(true), &o), "expected exactly");
    wire::hello_response(&header.target(false), &o).unwrap();

    let body = start(Scenario::Hello, Flaws { wrong_body: true, ..Flaws::default() });
    assert_fails(wire::hello_response(&body.target(false), &o), "Hello world!");

    let twice = start(Scenario::Hello, Flaws { double_answer: true, ..Flaws::default() });
    let r = wire::hello_response(&twice.target(true), &o);
    assert!(r.is_err(), "an answer sent twice must fail: {r:?}");

    let closing = start(Scenario::Hello, Flaws { close_after_answer: true, ..Flaws::default() });
    assert_fails(wire::hello_response(&closing.target(true), &o), "request 2 of 10");
}

#[test]
fn plaintext_headers_and_body() {
    let o = options();
    let good = start(Scenario::Plaintext, Flaws::default());
    wire::plaintext_response(&good.target(false), &o).unwrap();

    let ctype = start(Scenario::Plaintext, Flaws { content_type: Some("text/html"), ..Flaws::default() });
    assert_fails(wire::plaintext_response(&ctype.target(false), &o), "Content-Type");
    let charset = start(Scenario::Plaintext, Flaws { content_type: Some("text/plain; charset=utf-8"), ..Flaws::default() });
    wire::plaintext_response(&charset.target(false), &o).unwrap();

    let chunked = start(Scenario::Plaintext, Flaws { chunked: true, ..Flaws::default() });
    assert_fails(wire::plaintext_response(&chunked.target(false), &o), "chunked");

    let closing = start(Scenario::Plaintext, Flaws { close_after_answer: true, ..Flaws::default() });
    assert!(wire::plaintext_response(&closing.target(false), &o).is_err());
}

#[test]
fn plaintext_date_must_exist_and_move_on() {
    let o = options();
    let good = start(Scenario::Plaintext, Flaws::default());
    let r = wire::plaintext_date(&good.target(false), &o).unwrap();
    assert!(r.contains("became"), "{r}");

    let none = start(Scenario::Plaintext, Flaws { no_date: true, ..Flaws::default() });
    assert_fails(wire::plaintext_date(&none.target(false), &o), "no Date header");

    let frozen = start(Scenario::Plaintext, Flaws { frozen_date: true, ..Flaws::default() });
    assert_fails(wire::plaintext_date(&frozen.target(false), &o), "stayed");
}

#[test]
fn plaintext_unknown_paths_are_404() {
    let o = options();
    let good = start(Scenario::Plaintext, Flaws::default());
    wire::plaintext_404(&good.target(false), &o).unwrap();

    let all200 = start(Scenario::Plaintext, Flaws { no_404: true, ..Flaws::default() });
    assert_fails(wire::plaintext_404(&all200.target(false), &o), "expected 404");
}

#[test]
fn pipelined_answers_come_in_order() {
    let o = options();
    let good = start(Scenario::Plaintext, Flaws::default());
    wire::plaintext_pipeline(&good.target(false), &o).unwrap();

    let reversed = start(Scenario::Plaintext, Flaws { reverse_pipeline: true, ..Flaws::default() });
    assert_fails(wire::plaintext_pipeline(&reversed.target(false), &o), "in the order");
}

#[test]
fn json_echoes_every_sequence_number() {
    let o = options();
    let good = start(Scenario::Json, Flaws::default());
    wire::json_sequence(&good.target(false), &o).unwrap();

    let string = start(Scenario::Json, Flaws { json_string: true, ..Flaws::default() });
    assert_fails(wire::json_sequence(&string.target(false), &o), "sent sequence 0");

    let small = start(Scenario::Json, Flaws { json_i16: true, ..Flaws::default() });
    assert_fails(wire::json_sequence(&small.target(false), &o), "sent sequence 65535");

    let no_parser = start(Scenario::Json, Flaws { json_fixed_layout: true, ..Flaws::default() });
    assert_fails(wire::json_sequence(&no_parser.target(false), &o), "status 400");
}

#[test]
fn echo_returns_a_mebibyte_intact() {
    let o = options();
    let good = start(Scenario::Echo, Flaws::default());
    wire::echo_1mib(&good.target(true), &o).unwrap();

    let lossy = start(Scenario::Echo, Flaws { echo_drop: true, ..Flaws::default() });
    let r = wire::echo_1mib(&lossy.target(true), &o);
    assert!(r.as_ref().is_err_and(|e| e.0.contains("byte 99999 differs") || e.0.contains("only")), "{r:?}");
}

#[test]
fn the_table_of_checks_fits_each_scenario() {
    use serverbench::check::{checks_for, Target};
    let addr = "127.0.0.1:1".parse().unwrap();
    let names = |s| checks_for(&Target { addr, scenario: s, micro: true, pid: None }).iter().map(|c| c.name).collect::<Vec<_>>();
    assert!(names(Scenario::Hello).contains(&"idle-open"));
    assert!(!names(Scenario::Hello).contains(&"timeout-idle"));
    assert!(names(Scenario::HelloTimeout).contains(&"timeout-no-reader"));
    assert!(!names(Scenario::Echo).contains(&"bad-huge-headers"));
    assert!(!names(Scenario::Echo).iter().any(|n| n.starts_with("client-")));
    assert!(names(Scenario::Json).contains(&"client-h2load"));
    let v: serverbench::check::Verdict = Err::<String, serverbench::check::Failed>("x".into()).into();
    assert_eq!(v.status, Status::Fail);
}
