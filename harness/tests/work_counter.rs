//! `work` and `counter`: the checks and the load generator against fake servers in this process (a thread
//! per connection on loopback), correct or with one flaw each: a counter without synchronisation, a
//! handler that sleeps instead of working, a wrong N. No test asserts a speed.

mod common;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serverbench::check::work::{counter_concurrent, counter_response, work_busy, work_response};
use serverbench::check::{Failed, Options, Scenario, Target};
use serverbench::load::{self, LoadConfig, LoadReport, Mix, Skew, Stop, Workload};

#[derive(Clone, Copy, PartialEq)]
enum Flaw {
    None,
    /// Reads the counter, lets other threads run, writes it back plus one: two threads lose updates.
    RacyCounter,
    /// `work` sleeps N µs instead of working.
    SleepingWork,
    /// `work` answers N + 1.
    WrongN,
}

struct Fake {
    addr: SocketAddr,
    /// Per connection (in accept order), the paths it asked.
    paths: Arc<Mutex<BTreeMap<usize, Vec<String>>>>,
    stop: Arc<AtomicBool>,
}

impl Drop for Fake {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
    }
}

/// The work a correct server does: N µs of running time on the monotonic clock (steps of 50 µs or more
/// are time the thread did not run).
fn busy_wait(us: u64) {
    let (mut total, mut last) = (Duration::ZERO, Instant::now());
    while total < Duration::from_micros(us) {
        let now = Instant::now();
        let step = now - last;
        if step < Duration::from_micros(50) {
            total += step;
        }
        last = now;
    }
}

fn answer(body: &str) -> Vec<u8> {
    format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

fn start(flaw: Flaw) -> Fake {
    let listener = common::listen_loopback(libc::SOMAXCONN);
    let addr = listener.local_addr().unwrap();
    let paths = Arc::new(Mutex::new(BTreeMap::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let counters: Arc<Vec<AtomicU64>> = Arc::new((0..65_536).map(|_| AtomicU64::new(0)).collect());
    let lock = Arc::new(Mutex::new(()));
    let (p, s) = (paths.clone(), stop.clone());
    std::thread::spawn(move || {
        for (index, conn) in listener.incoming().enumerate() {
            if s.load(Ordering::SeqCst) {
                break;
            }
            let Ok(mut conn) = conn else { continue };
            let (p, counters, lock) = (p.clone(), counters.clone(), lock.clone());
            std::thread::spawn(move || {
                let _ = conn.set_nodelay(true);
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                while let Ok(n @ 1..) = conn.read(&mut chunk) {
                    buf.extend_from_slice(&chunk[..n]);
                    let mut out = Vec::new();
                    while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&buf[..end]).to_string();
                        buf.drain(..end + 4);
                        let path = head.split(' ').nth(1).unwrap_or("").to_string();
                        p.lock().unwrap().entry(index).or_insert_with(Vec::new).push(path.clone());
                        let value = path.rsplit('/').next().and_then(|v| v.parse::<u64>().ok());
                        let Some(value) = value else {
                            out.extend_from_slice(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
                            continue;
                        };
                        if path.starts_with("/work/") && value <= 1_000_000 {
                            match flaw {
                                Flaw::SleepingWork => std::thread::sleep(Duration::from_micros(value)),
                                _ => busy_wait(value),
                            }
                            out.extend(answer(&(value + u64::from(flaw == Flaw::WrongN)).to_string()));
                        } else if path.starts_with("/counter/") && value < 65_536 {
                            let c = &counters[value as usize];
                            let new = if flaw == Flaw::RacyCounter {
                                let v = c.load(Ordering::SeqCst);
                                std::thread::yield_now();
                                c.store(v + 1, Ordering::SeqCst);
                                v + 1
                            } else {
                                let _held = lock.lock().unwrap();
                                let v = c.load(Ordering::SeqCst) + 1;
                                c.store(v, Ordering::SeqCst);
                                v
                            };
                            out.extend(answer(&new.to_string()));
                        } else {
                            out.extend_from_slice(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
                        }
                    }
                    if conn.write_all(&out).is_err() {
                        return;
                    }
                }
            });
        }
    });
    Fake { addr, paths, stop }
}

fn target(f: &Fake, scenario: Scenario) -> Target {
    Target { addr: f.addr, scenario, micro: true, pid: None }
}

fn options() -> Options {
    // The fake runs on every CPU of the machine.
    Options { server_cpus: std::thread::available_parallelism().map_or(1, |n| n.get()), ..Options::default() }
}

fn assert_fails(r: Result<String, Failed>, words: &str) {
    match r {
        Ok(ok) => panic!("expected a failure mentioning {words:?}, got a pass: {ok}"),
        Err(Failed(reason)) => assert!(reason.contains(words), "the reason {reason:?} does not mention {words:?}"),
    }
}

#[test]
fn work_checks_pass_a_busy_server_and_fail_a_sleeping_or_wrong_one() {
    let good = start(Flaw::None);
    work_response(&target(&good, Scenario::Work), &options()).expect("a correct work server");
    work_busy(&target(&good, Scenario::Work), &options()).expect("a correct work server works");
    let sleeping = start(Flaw::SleepingWork);
    work_response(&target(&sleeping, Scenario::Work), &options()).expect("sleeping answers the right N, late enough");
    assert_fails(work_busy(&target(&sleeping, Scenario::Work), &options()), "does the handler sleep?");
    let wrong = start(Flaw::WrongN);
    assert_fails(work_response(&target(&wrong, Scenario::Work), &options()), "expected the body 0, got 1");
}

#[test]
fn the_counter_check_catches_an_unsynchronised_counter_as_lost_updates() {
    let good = start(Flaw::None);
    counter_response(&target(&good, Scenario::Counter), &options()).expect("a correct counter");
    counter_concurrent(&target(&good, Scenario::Counter), &options()).expect("a synchronised counter loses nothing");
    let racy = start(Flaw::RacyCounter);
    counter_response(&target(&racy, Scenario::Counter), &options()).expect("one connection alone sees no race");
    assert_fails(counter_concurrent(&target(&racy, Scenario::Counter), &options()), "lost updates");
}

fn load_config(f: &Fake, scenario: &str, mix: Mix, connections: usize, per_connection: u64) -> LoadConfig {
    let mut workload = Workload::for_scenario(scenario, 1, true).unwrap();
    if let Workload::Http { mix: m, .. } = &mut workload {
        *m = mix;
    }
    LoadConfig { threads: 2, connections, stop: Stop::RequestsPerConnection(per_connection), workload, seed: 42, ..LoadConfig::new(f.addr) }
}

fn run(c: &LoadConfig) -> LoadReport {
    load::run(c, Arc::new(AtomicBool::new(false))).expect("load run failed")
}

#[test]
fn the_load_generator_counts_lost_updates_as_errors() {
    let good = start(Flaw::None);
    let r = run(&load_config(&good, "counter", Mix::Counter { keys: 1 }, 16, 200));
    let c = r.counter.expect("a counter report");
    assert_eq!((c.values, c.repeated, c.gaps, c.lost_updates), (3200, 0, 0, 0), "{c:?}");
    assert_eq!((r.requests, r.errors.total()), (3200, 0), "{:?}", r.errors);
    let r = run(&load_config(&good, "counter", Mix::Counter { keys: 64 }, 16, 200));
    assert_eq!(r.counter.unwrap().keys, 64, "200 requests on each of 16 connections reach every one of 64 keys");

    let racy = start(Flaw::RacyCounter);
    let r = run(&load_config(&racy, "counter", Mix::Counter { keys: 1 }, 16, 200));
    let c = r.counter.expect("a counter report");
    assert!(c.lost_updates > 0 && c.repeated > 0, "an unsynchronised counter under 16 connections: {c:?}");
    assert_eq!(r.errors.mismatch, c.lost_updates, "each lost update is a mismatch error, once: {:?}", r.errors);
    // One thread: every repeat is seen as it arrives, and that response is not counted as served.
    let r = run(&LoadConfig { threads: 1, ..load_config(&racy, "counter", Mix::Counter { keys: 1 }, 16, 200) });
    let c = r.counter.expect("a counter report");
    assert!(c.repeated > 0, "{c:?}");
    assert_eq!(r.requests, 3200 - c.repeated, "a repeated value is not a valid response: {c:?}");
}

#[test]
fn heavy_connections_and_requests_follow_the_seed_and_wrong_n_is_a_mismatch() {
    let f = start(Flaw::None);
    let skew = |s: &str| Some(Skew::parse(s).unwrap());
    let mix = Mix::Work { base_us: 10, heavy_connections: skew("1/4:10"), heavy_requests: None };
    let r = run(&load_config(&f, "work", mix.clone(), 16, 20));
    assert_eq!((r.requests, r.errors.total()), (320, 0), "{:?}", r.errors);
    let per_conn = |f: &Fake| f.paths.lock().unwrap().values().map(|p| p.iter().filter(|p| *p == "/work/100").count()).collect::<Vec<_>>();
    let heavy = per_conn(&f);
    assert_eq!(heavy.iter().filter(|n| **n == 20).count(), 4, "a quarter of 16 connections send only /work/100: {heavy:?}");
    assert_eq!(heavy.iter().filter(|n| **n == 0).count(), 12, "the others only /work/10: {heavy:?}");

    let g = start(Flaw::None);
    let mix = Mix::Work { base_us: 10, heavy_connections: None, heavy_requests: skew("0.5:3") };
    run(&load_config(&g, "work", mix, 4, 200));
    let heavy = g.paths.lock().unwrap().values().flatten().filter(|p| *p == "/work/30").count();
    assert!((300..500).contains(&heavy), "about half of 800 requests heavy: {heavy}");

    let wrong = start(Flaw::WrongN);
    let r = run(&load_config(&wrong, "work", Mix::Work { base_us: 10, heavy_connections: None, heavy_requests: None }, 4, 10));
    assert_eq!((r.requests, r.errors.mismatch), (0, 40), "an answer with another N is invalid");
}
