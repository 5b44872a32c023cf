//! The load generator's intervals against fake servers on loopback: a server that stalls once for 200 ms
//! shows the stall in the intervals that complete the stalled requests and in no other, and the intervals
//! add up to the round's histogram. No test asserts a speed.

mod common;
mod load_support;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use load_support::*;
use serverbench::load::{self, Edge, IoBackend, LoadConfig, Mode, Stop};

const STALL: Duration = Duration::from_millis(200);
/// The tests run one at a time: each one's client and server would otherwise take the other's CPU.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
const INTERVAL: Duration = Duration::from_millis(100);

/// A `hello` server that, once it has answered `after` requests, holds every connection for STALL (one
/// lock for all of them); it notes when the stall ended.
fn stalling_server(after: u64, released: Arc<Mutex<Option<Instant>>>) -> FakeServer {
    let gate = Arc::new(Mutex::new(()));
    let served = Arc::new(AtomicU64::new(0));
    http_server(move |n, _| {
        let _hold = gate.lock().unwrap();
        let before = served.fetch_add(n, Ordering::SeqCst);
        if before < after && before + n >= after {
            std::thread::sleep(STALL);
            *released.lock().unwrap() = Some(Instant::now());
        }
        HELLO.repeat(n as usize)
    })
}

/// A round at a fixed rate whose server stalls about a second into it: the intervals whose histograms
/// hold a latency of 200 ms or more are those in which the stall ended (where the requests it held, and
/// those due during it, completed: in rate mode their latency runs from their intended send), every other
/// interval's latencies are below it, and the intervals add up to the round exactly.
#[test]
fn a_stall_shows_in_the_intervals_that_complete_the_stalled_requests() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let released = Arc::new(Mutex::new(None));
    let rate = 1000.0;
    let server = stalling_server(rate as u64, released.clone());
    let opened = Arc::new(Mutex::new(None));
    let o = opened.clone();
    let watch: load::WindowWatch = Arc::new(move |edge| {
        if edge == Edge::Open {
            o.lock().unwrap().get_or_insert(Instant::now());
        }
    });
    let c = LoadConfig {
        threads: 1,
        connections: 2,
        io: IoBackend::Epoll,
        mode: Mode::Rate { requests_per_s: rate },
        stop: Stop::Duration { warmup: Duration::ZERO, measure: Duration::from_millis(2500) },
        interval: INTERVAL,
        ..LoadConfig::new(server.addr)
    };
    let r = load::run_watched(&c, Arc::new(AtomicBool::new(false)), Some(watch)).expect("load run failed");
    let (opened, released) = (opened.lock().unwrap().expect("the window opened"), released.lock().unwrap().expect("the server stalled"));
    let intervals = r.intervals.as_ref().expect("the built-in client keeps intervals");
    assert_eq!(intervals.length_ms, 100.0);
    assert_eq!(intervals.each.len(), 25, "2.5 s in intervals of 100 ms");
    assert_eq!(intervals.sum().unwrap(), r.latency, "the intervals add up to the round's histogram");
    assert_eq!(intervals.each.iter().map(|i| i.requests).sum::<u64>(), r.requests);
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);

    // When the stall ended, in seconds from the window's opening: the stalled requests complete then, or
    // within a few milliseconds (the client reads them on its next turn).
    let end_s = released.duration_since(opened).as_secs_f64();
    assert!((0.5..2.0).contains(&end_s), "the stall ended {end_s} s into the window, not about 1.2 s");
    let slow: Vec<usize> = (0..intervals.each.len()).filter(|&i| intervals.each[i].summary().max_ns >= STALL.as_nanos() as u64).collect();
    assert!(!slow.is_empty(), "no interval holds the 200 ms stall: {:?}", maxima(intervals));
    let len_s = INTERVAL.as_secs_f64();
    // The stalled requests complete once the stall ends: in the interval of its end, or a little later
    // when the client waits for a CPU on a busy machine (a quarter of a second is allowed for it).
    let (first, last) = ((end_s / len_s).floor() as usize, ((end_s + 0.25) / len_s).floor() as usize);
    for &i in &slow {
        assert!(
            (first..=last).contains(&i),
            "interval {i} holds a latency of 200 ms or more, but the stall ended at {end_s:.3} s (interval {first}); maxima: {:?}",
            maxima(intervals)
        );
    }
    assert!(slow.windows(2).all(|w| w[1] == w[0] + 1), "the slow intervals {slow:?} are not one stretch");
    assert!(slow.len() <= 2, "the stall shows in intervals {slow:?}, more than where it ended");
    // Before the stall the server answers at once: those intervals' latencies are far below it.
    let before = (end_s - STALL.as_secs_f64()) / len_s;
    for (i, interval) in intervals.each.iter().enumerate().take((before.floor() as usize).saturating_sub(1)) {
        assert!(interval.requests > 0, "interval {i} before the stall completed nothing");
        assert!(interval.summary().max_ns < STALL.as_nanos() as u64 / 2, "interval {i} before the stall: {:?}", maxima(intervals));
    }
}

/// A closed-loop round: the stall empties the intervals during which nothing completed, and the one in
/// which it ended holds the stalled requests' 200 ms.
#[test]
fn in_a_closed_loop_the_stall_is_an_empty_interval_then_a_slow_one() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let released = Arc::new(Mutex::new(None));
    let server = stalling_server(500, released.clone());
    let c = LoadConfig {
        threads: 1,
        connections: 4,
        io: IoBackend::Epoll,
        stop: Stop::Duration { warmup: Duration::ZERO, measure: Duration::from_millis(1500) },
        interval: INTERVAL,
        ..LoadConfig::new(server.addr)
    };
    let r = load::run(&c, Arc::new(AtomicBool::new(false))).expect("load run failed");
    assert!(released.lock().unwrap().is_some(), "the server never stalled: {} requests", r.requests);
    let intervals = r.intervals.as_ref().unwrap();
    assert_eq!(intervals.sum().unwrap(), r.latency);
    let slow = intervals.each.iter().position(|i| i.summary().max_ns >= STALL.as_nanos() as u64).expect("an interval holds the stall");
    assert!(slow >= 1, "the stall ended in the first interval");
    // The 200 ms before the interval where it ended hold at least one whole interval without a response.
    assert!(intervals.each[..slow].iter().any(|i| i.requests == 0), "no empty interval during the stall: {:?}", counts(intervals));
}

fn maxima(s: &serverbench::stats::intervals::Intervals) -> Vec<String> {
    s.each.iter().map(|i| format!("{:.1}ms", i.summary().max_ns as f64 / 1e6)).collect()
}

fn counts(s: &serverbench::stats::intervals::Intervals) -> Vec<u64> {
    s.each.iter().map(|i| i.requests).collect()
}
