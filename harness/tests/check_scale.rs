//! The scale check on fake servers: connections held at once and each served, memory read at each step,
//! a server that closes some of them or dies caught; and the client processes that carry connections past
//! one process's open-files limit.

mod check_support;
mod common;

use check_support::{options, start, Flaws};
use serverbench::check::scale::{self, ScaleOptions, ServerProcess};
use serverbench::check::{Scenario, Status};

/// This test process stands in for the server's process tree.
struct Me {
    hard_limit: u64,
}

impl ServerProcess for Me {
    fn rss_bytes(&self) -> Option<u64> {
        let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
        Some(statm.split_whitespace().nth(1)?.parse::<u64>().ok()? * 4096)
    }
    fn open_files(&self) -> Option<(u64, u64)> {
        let open = std::fs::read_dir("/proc/self/fd").ok()?.count() as u64;
        Some((open, self.hard_limit))
    }
}

fn small(connections: usize) -> ScaleOptions {
    ScaleOptions { connections, steps: vec![2, 50], client_exe: None, per_process: None }
}

#[test]
fn holds_every_connection_and_reads_memory_at_each_step() {
    let o = options();
    let good = start(Scenario::Hello, Flaws::default());
    let me = Me { hard_limit: u64::MAX / 2 };
    let r = scale::run(&good.target(true), &o, &small(300), Some(&me));
    assert_eq!(r.verdict.status, Status::Pass, "{}", r.verdict.reason);
    assert_eq!((r.asked, r.held, r.capped.is_none()), (300, 300, true));
    let counts: Vec<usize> = r.rss.iter().map(|p| p.connections).collect();
    assert_eq!(counts, [2, 50, 300]);
    assert!(r.rss.iter().all(|p| p.rss_bytes.is_some_and(|b| b > 0)));
}

#[test]
fn a_server_limit_caps_the_count_and_says_so() {
    let o = options();
    let good = start(Scenario::Plaintext, Flaws::default());
    let open = std::fs::read_dir("/proc/self/fd").unwrap().count() as u64;
    let me = Me { hard_limit: open + 64 + 120 };
    let r = scale::run(&good.target(false), &o, &small(300), Some(&me));
    assert_eq!(r.verdict.status, Status::Pass, "{}", r.verdict.reason);
    assert!(r.held >= 100 && r.held < 300, "held {}", r.held);
    assert!(r.capped.as_ref().is_some_and(|c| c.contains("hard limit")), "{:?}", r.capped);
    assert!(r.verdict.reason.contains("300 asked"), "{}", r.verdict.reason);
}

#[test]
fn connections_closed_by_the_server_are_caught() {
    let o = options();
    let crowded = start(Scenario::Hello, Flaws { keep_at_most: Some(100), ..Flaws::default() });
    let r = scale::run(&crowded.target(true), &o, &small(200), None);
    assert_eq!(r.verdict.status, Status::Fail, "{}", r.verdict.reason);
    assert!(r.verdict.reason.contains("the server closed"), "{}", r.verdict.reason);
    assert!(r.held <= 101, "held {}", r.held);
}

#[test]
fn a_server_that_dies_fails() {
    let o = options();
    let fragile = start(Scenario::Echo, Flaws { die_above: Some(120), ..Flaws::default() });
    let r = scale::run(&fragile.target(true), &o, &small(200), None);
    assert_eq!(r.verdict.status, Status::Fail, "{}", r.verdict.reason);
    // Which connection notices first depends on timing: the one refused after the 120th, or one already
    // held that the dying server closed while the check was serving it again.
    assert!(r.verdict.reason.starts_with("on the way to 200 connections: connection "), "{}", r.verdict.reason);
}

#[test]
fn client_processes_carry_a_share_each() {
    let o = options();
    let good = start(Scenario::Json, Flaws::default());
    let s = ScaleOptions {
        connections: 450,
        steps: vec![2],
        client_exe: Some(env!("CARGO_BIN_EXE_serverbench").into()),
        per_process: Some(200),
    };
    let r = scale::run(&good.target(false), &o, &s, None);
    assert_eq!(r.verdict.status, Status::Pass, "{}", r.verdict.reason);
    assert_eq!(r.held, 450);
    assert!(r.verdict.reason.contains("3 client processes"), "{}", r.verdict.reason);
}

#[test]
fn held_connections_are_kept_served_past_an_idle_timeout() {
    use std::time::{Duration, Instant};
    let idle = start(Scenario::Hello, Flaws { idle_close: Some(Duration::from_millis(4000)), ..Flaws::default() });
    let t = idle.target(true);
    let mut kept = scale::Held::new(&t, Duration::from_secs(2), 1);
    let mut left_idle = scale::Held::new(&t, Duration::from_secs(2), 2);
    kept.add(10).unwrap();
    left_idle.add(10).unwrap();
    let until = Instant::now() + Duration::from_millis(5000);
    while Instant::now() < until {
        kept.keep_alive();
        std::thread::sleep(Duration::from_millis(100));
    }
    kept.serve_all();
    left_idle.serve_all();
    assert_eq!((kept.len(), kept.lost), (10, 0), "{:?}", kept.first_loss);
    assert_eq!((left_idle.len(), left_idle.lost), (0, 10));
}
