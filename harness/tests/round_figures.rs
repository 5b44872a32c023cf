//! The per-round figures from real runs, not set by hand: a server that spends a known 2 ms of CPU on
//! each request comes out at that cost per request and saturated; one that sleeps 2 ms per request shows a
//! low CPU share, its thread asleep at most samples, and `server-sleeping` as its limit; a round whose
//! responses cost the client far more than the server is flagged client-bound from what was measured; a server that closes after each answer is flagged server-closes;
//! one that fails every other request has only its valid answers counted; a thread per connection makes a
//! context switch per request and an event loop seldom one; a server that forks per request has its CPU
//! from the clock ticks, a steady one from its threads' exact run time. In a file of its own so that no other test shares the server's
//! CPU meanwhile.

mod common;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use serverbench::catalog::Catalog;
use serverbench::cli::bench::BenchArgs;
use serverbench::run::options::BenchOptions;
use serverbench::model::{ConnectionsSummary, CpuSource, Measurement, MeasurementStatus, MeasurementSummary, Round, LIMIT_SERVER_SLEEPING, Flag, Saturation};
use serverbench::run::load_source::Engine;
use serverbench::run::round_plan::RoundPlan;
use serverbench::run::rounds::run_round;
use serverbench::launch::server::{free_port, Launch, Server};
use serverbench::ui::{Ui, Verbosity};

const COST_US: f64 = 2000.0;

/// Four connections, 1.5 s rounds, on the default server and client CPUs, changed by `tweak`. Up to 12
/// rounds for those asked: the runner runs a round that steal disturbed again, and this VM's steal comes in
/// stretches that can take several rounds in a row.
fn options_with(name: &str, catalog: &std::path::Path, out: &std::path::Path, tweak: &impl Fn(&mut BenchArgs)) -> BenchOptions {
    let (catalog, out) = (catalog.display().to_string(), out.display().to_string());
    let mut args = BenchArgs::parse(&[
        name, "--contestants", &catalog, "-o", &out, "-c", "4", "--warmup", "1", "--rounds", "2", "--max-rounds", "12", "-d", "1500ms", "--start-timeout", "20s", "--no-install",
    ])
    .unwrap();
    tweak(&mut args);
    args.options(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap(), Vec::new()).unwrap()
}

/// The measured rounds of one fixture contestant that count: 2 after a warm-up.
fn rounds_of(name: &str) -> Vec<Round> {
    counting_rounds_in("cost", name, |_| {})
}

/// The rounds that count of one contestant of `fixture` with `tweak`.
fn counting_rounds_in(fixture: &str, name: &str, tweak: impl Fn(&mut BenchArgs)) -> Vec<Round> {
    let m = measurement_in(fixture, name, tweak);
    let rounds: Vec<Round> = m.measured_rounds().cloned().collect();
    assert!(!rounds.is_empty(), "{name}: no round counted; flags of those run: {:?}", m.rounds.iter().map(|r| &r.flags).collect::<Vec<_>>());
    rounds
}

/// The measurement of one contestant of the `cost` fixtures, with `options_with`'s `tweak`.
fn measurement_of(name: &str, tweak: impl Fn(&mut BenchArgs)) -> Measurement {
    measurement_in("cost", name, tweak)
}

/// The measurement of one contestant of the fixture catalog `fixture`, with `options_with`'s `tweak`: up
/// to three times while steal left out every round (`common::steal::measured_past_steal`).
fn measurement_in(fixture: &str, name: &str, tweak: impl Fn(&mut BenchArgs)) -> Measurement {
    common::steal::measured_past_steal(name, || measured_once(fixture, name, &tweak), |m| m.measured_rounds().next().is_some())
}

fn measured_once(fixture: &str, name: &str, tweak: &impl Fn(&mut BenchArgs)) -> Measurement {
    let (tmp, catalog) = common::fixture_copy(fixture);
    let opts = options_with(name, &catalog, &tmp.path().join("results"), tweak);
    let catalog = Catalog::discover(&opts.catalog_root).unwrap();
    let (id, dir) = serverbench::run::create_run_dir(&opts.out_dir).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let run = serverbench::run::bench(&opts, &catalog, &id, &dir, &Ui::new(Verbosity::Quiet), &stop, None, &mut |_| Ok(())).unwrap();
    let m = run.measurements[0].clone();
    assert_eq!(m.status, MeasurementStatus::Measured, "{name}: {:?}", m.reason);
    m
}

/// One test, so that its two servers never share the server CPU with each other.
#[test]
fn a_known_cost_per_request_and_a_sleeping_server_are_measured_as_such() {
    a_known_cost_per_request_is_measured_as_such();
    a_server_that_sleeps_shows_a_low_cpu_share();
    a_busy_polling_client_is_not_the_limit_of_a_sleeping_server();
    a_client_that_limits_the_round_is_flagged_from_measured_figures();
    a_server_that_closes_after_each_answer_is_flagged_server_closes();
    a_server_that_fails_half_its_answers_counts_half();
    a_rate_the_server_cannot_hold_is_flagged();
    a_capacity_search_finds_the_known_capacity();
    a_server_that_starves_half_its_connections_is_flagged_unfair();
    a_thread_per_connection_switches_once_a_request_and_an_event_loop_seldom();
    a_steady_server_has_exact_cpu_and_a_forking_one_ticks();
}

/// The server's CPU comes from its threads' exact run time when all of them lived through the window, and
/// from the clock ticks when a process of the tree ended inside it (a child per request), whose run time
/// went with it: the round records which.
fn a_steady_server_has_exact_cpu_and_a_forking_one_ticks() {
    let steady = one_round("busy", 4);
    assert_eq!(steady.server.cpu_source, Some(CpuSource::Schedstat), "{:?}", steady.server);
    assert!(steady.server.cpu_s.is_some_and(|s| s > 0.0) && steady.server.cpu_us_per_request.is_some(), "{:?}", steady.server);
    let forking = one_round("forking", 4);
    assert!(forking.load.requests > 0, "{:?}", forking.load);
    assert_eq!(forking.server.cpu_source, Some(CpuSource::Ticks), "{:?}", forking.server);
    assert!(forking.server.cpu_s.is_some_and(|s| s > 0.0) && forking.server.utilisation_pct.is_some(), "{:?}", forking.server);
}

/// Context switches per request of two servers whose count is known from how they wait: a thread per
/// connection (http-good) blocks in recv(2) before every request (one voluntary switch each, at least),
/// where one event loop (cost-counted) under 32 busy connections finds several ready at each epoll_wait
/// and seldom sleeps.
fn a_thread_per_connection_switches_once_a_request_and_an_event_loop_seldom() {
    let per_request = |fixture: &str, name: &str, scenario: &str| {
        let rounds = counting_rounds_in(fixture, name, |c| {
            c.connections = Some(vec![32]);
            c.scenario = vec![scenario.into()];
        });
        let switches: u64 = rounds.iter().map(|r| r.server.cost.as_ref().expect("the server's threads were read").voluntary_switches).sum();
        switches as f64 / rounds.iter().map(|r| r.load.requests).sum::<u64>() as f64
    };
    let threads = per_request("http", "http-good", "plaintext");
    assert!(threads >= 0.9, "a thread per connection: {threads:.3} voluntary switches per request");
    let event_loop = per_request("cost", "cost-counted", "hello");
    assert!(event_loop <= 0.1, "one event loop: {event_loop:.3} voluntary switches per request");
    eprintln!("voluntary context switches per request: a thread per connection {threads:.3}, one event loop {event_loop:.3}");
}

/// A server that never answers on every other connection: the round's window waits for them in vain
/// (ramp-incomplete, two unserved), and two of four connections get nothing in it (unfair). The fair
/// servers of the rounds above are not flagged.
fn a_server_that_starves_half_its_connections_is_flagged_unfair() {
    // A timeout beyond the round, so that no starved connection is reopened (and perhaps served).
    let r = one_round_with("partial", 4, |c| c.timeout = Duration::from_secs(60));
    let spread = r.load.per_connection.expect("a spread over the connections");
    assert_eq!(spread.starved, 2, "{spread:?}");
    assert!(spread.jain.is_some_and(|j| (j - 0.5).abs() < 0.05), "{spread:?}");
    assert!(r.has_flag(&Flag::Unfair), "{:?}", r.flags);
    assert!(r.has_flag(&Flag::RampIncomplete) && r.load.unserved_at_start == Some(2), "{:?} {:?}", r.flags, r.load.unserved_at_start);
    assert!(r.load.requests > 0, "{:?}", r.load);
    // Every connection established (the round ran), two served: the summary keeps the figures and the
    // tables say so.
    let connections = ConnectionsSummary::over([&r.load]).expect("the built-in client counts them");
    assert_eq!(connections, ConnectionsSummary { asked: 4, served: 2, served_in_window: 2 });
    let summary = MeasurementSummary { connections: Some(connections), ..Default::default() };
    assert_eq!(summary.served_flag().as_deref(), Some("served 2/4 connections"));
    for fair in one_round("busy", 4).flags.iter().chain(&one_round("failing", 4).flags) {
        assert!(*fair != Flag::Unfair && *fair != Flag::RampIncomplete, "a fair server flagged {fair}");
    }
}

/// `bench --search`: the 2 ms server's capacity is 500/s; at a rate it holds its latency is the service
/// time, so an objective far above that finds the capacity itself, to the search's precision. p90, whose
/// steps need 100 responses to be judged (p99 would need 1,000, beyond this server in a round).
fn a_capacity_search_finds_the_known_capacity() {
    // The search needs a median to start from: `options_with`'s room for rounds left out gives it one.
    let m = measurement_of("cost-busy", |c| c.search = Some("p90<50ms".into()));
    let found = m.capacity.clone().unwrap_or_else(|| {
        panic!("the measurement was not searched; its rounds' flags: {:?}", m.rounds.iter().map(|r| &r.flags).collect::<Vec<_>>())
    });
    let capacity = found.capacity_rps.unwrap_or_else(|| panic!("no rate passed: {:#?}", found.steps));
    let expected = 1e6 / COST_US;
    assert!((capacity / expected - 1.0).abs() <= 0.15, "capacity {capacity:.0}/s for {expected:.0}/s: {:#?}", found.steps);
    let failed = found.bracket.1.unwrap_or_else(|| panic!("no rate failed: {:#?}", found.steps));
    assert!(failed > capacity && failed / capacity <= serverbench::load::search::PRECISION, "{capacity}..{failed}");
    assert!(found.steps.iter().any(|s| !s.pass && s.flags.contains(&Flag::RateNotHeld)), "{:#?}", found.steps);
}

fn a_known_cost_per_request_is_measured_as_such() {
    for r in rounds_of("cost-busy") {
        let per_request_us = r.server.cpu_us_per_request.expect("server CPU was probed");
        let busy_pct = r.server.utilisation_pct.expect("server CPU was probed");
        // The spin is 2 ms of CPU time per request; the interpreter adds a few per cent around it.
        assert!((per_request_us / COST_US - 1.0).abs() <= 0.15, "{per_request_us:.0} us per request for a {COST_US} us spin");
        assert!(busy_pct >= 85.0, "a server spinning on every request is saturated: {busy_pct:.1}%");
        assert!(r.load.requests > 0 && r.load.errors.total() == 0, "{:?}", r.load.errors);
        assert!(!r.flags.contains(&Flag::ClientBound), "{:?}", r.flags);
        assert_eq!(r.saturation.as_deref(), Some(Saturation::ServerBound.name()), "{busy_pct:.1}% busy");
        assert_eq!(r.limit, None, "a server-bound round has no other limit");
        let threads = r.server.threads.expect("the server's thread states were read");
        assert!(threads.samples > 0 && threads.running > threads.sleeping, "{threads:?}");
        // The split into user and kernel time adds up to the server's CPU per request.
        let cost = r.server.cost.expect("the server's threads were read");
        let split_us = (cost.user_s + cost.system_s) * 1e6 / r.load.requests as f64;
        assert!((split_us / per_request_us - 1.0).abs() <= 0.1, "user + kernel {split_us:.0} us of {per_request_us:.0} us per request");
    }
}

fn a_server_that_sleeps_shows_a_low_cpu_share() {
    for r in rounds_of("cost-sleepy") {
        let busy_pct = r.server.utilisation_pct.expect("server CPU was probed");
        assert!(busy_pct < 40.0, "a server asleep 2 ms per request: {busy_pct:.1}% busy");
        assert!(r.load.requests > 0 && r.load.errors.total() == 0, "{:?}", r.load.errors);
        // Neither side was busy: not client-bound, but unsaturated (the limit is the server's sleep).
        assert!(!r.flags.contains(&Flag::ClientBound), "{:?}", r.flags);
        assert!(r.has_flag(&Flag::Unsaturated), "{:?}, client limit {:?}", r.flags, r.client_limit_pct);
        assert_eq!(r.saturation.as_deref(), Some(Saturation::Unsaturated.name()));
        // Its one thread was asleep at most samples, and the round says so.
        let threads = r.server.threads.expect("the server's thread states were read");
        assert!(threads.samples > 0 && 2 * threads.sleeping > threads.thread_samples(), "{threads:?}");
        assert_eq!(r.limit.as_deref(), Some(LIMIT_SERVER_SLEEPING), "{threads:?}, {busy_pct:.1}% busy");
        // Its thread slept in the event loop's wait for the requests' timers: voluntary context switches (one
        // wait often covers several timers, so fewer than one per request, about one per two here).
        let cost = r.server.cost.expect("the server's threads were read");
        assert!(cost.voluntary_switches as f64 >= 0.1 * r.load.requests as f64, "{cost:?} for {} requests", r.load.requests);
    }
}

/// Busy-polling against the same sleeping server: the client spins on its CPU while it waits, and that is
/// counted as polling, not work, so the round is still unsaturated, not client-bound.
fn a_busy_polling_client_is_not_the_limit_of_a_sleeping_server() {
    if serverbench::os::cpus::CpuSet::allowed().len() < 2 {
        common::skip("a_busy_polling_client_is_not_the_limit_of_a_sleeping_server", "busy-polling needs a client CPU apart from the server's");
        return;
    }
    let r = one_round_with("sleepy", 16, |c| c.client_poll = serverbench::cli::load::PollArg::Busy);
    assert_eq!(r.load.poll, "busy");
    assert!(r.load.requests > 0 && r.load.errors.total() == 0, "{:?}", r.load.errors);
    assert!(r.load.client_poll_s > r.load.client_work_s(), "poll {} s, work {} s", r.load.client_poll_s, r.load.client_work_s());
    assert_eq!(r.saturation.as_deref(), Some(Saturation::Unsaturated.name()), "client limit {:?}, client CPU {} s", r.client_limit_pct, r.load.client_cpu_s);
}

/// One round of `known_cost.py --<behaviour>` straight through the round runner: the pre-measurement check
/// would rightly refuse these servers, and the rounds are about the figures only.
fn one_round(behaviour: &str, connections: usize) -> Round {
    one_round_with(behaviour, connections, |_| {})
}

fn one_round_with(behaviour: &str, connections: usize, tweak: impl Fn(&mut BenchArgs)) -> Round {
    let (tmp, catalog) = common::fixture_copy("cost");
    let name = format!("cost-{behaviour}");
    let opts = options_with(&name, &catalog, &tmp.path().join("results"), &tweak);
    let script = catalog.join("python/known_cost.py");
    let port = free_port().unwrap();
    let launch = Launch {
        command: format!("python3 {} --{behaviour} 127.0.0.1 {port}", script.display()),
        env: Vec::new(),
        cwd: tmp.path(),
        cpus: &opts.server_cpus,
        log: tmp.path().join(format!("{behaviour}.log")),
    };
    let mut server = Server::start(launch, port).unwrap();
    let ready = common::eventually(Duration::from_secs(10), || std::net::TcpStream::connect(server.addr()).is_ok());
    assert!(ready, "the {behaviour} fixture did not start");
    let plan = RoundPlan {
        opts: &opts,
        contestant: &name,
        scenario: "hello",
        micro: false,
        connections,
        response_bytes: 0,
        workdir: tmp.path(),
        rate: None,
        workers: opts.workers,
        count_syscalls: false,
        ramp_served: None,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let r = run_round(&mut server, &Engine, &plan, 1, false, &stop).unwrap();
    server.stop(Duration::from_secs(2));
    r
}

fn a_client_that_limits_the_round_is_flagged_from_measured_figures() {
    // Enough responses in flight that the client always has bytes to parse.
    let r = one_round("chunked", 16);
    let (server_pct, client_pct) = (r.server.utilisation_pct.unwrap(), r.client_busy_pct.unwrap());
    assert!(r.load.requests > 0 && r.load.errors.total() == 0, "{:?}", r.load.errors);
    assert!(server_pct < 50.0 && client_pct >= 90.0, "server {server_pct:.1}% busy, client {client_pct:.1}%");
    assert!(r.flags.contains(&Flag::ClientBound), "server {server_pct:.1}%, client {client_pct:.1}%: {:?}", r.flags);
    assert_eq!(r.saturation.as_deref(), Some(Saturation::ClientBound.name()));
    assert!(r.client_limit_pct.unwrap() >= 90.0 && r.load.thread_cpu_s.len() == r.load.threads, "{:?}", r.load.thread_cpu_s);

    // Three client threads on the one client CPU: no thread is busy alone, and the client is still the limit.
    let r = one_round_with("chunked", 16, |c| c.threads = Some(3));
    assert_eq!(r.load.threads, 3);
    let busiest = r.load.thread_cpu_s.iter().copied().fold(0.0, f64::max) / r.load.duration_s * 100.0;
    assert!(busiest < 90.0, "one thread of three on one CPU was {busiest:.1}% busy");
    assert_eq!(r.saturation.as_deref(), Some(Saturation::ClientBound.name()), "client limit {:?}, server {:?}", r.client_limit_pct, r.server.utilisation_pct);
}

/// A server that answers with `Connection: close` and then closes: every answer is valid and none was
/// lost, but the round measured reconnects too.
fn a_server_that_closes_after_each_answer_is_flagged_server_closes() {
    let r = one_round("closing", 4);
    assert!(r.load.requests > 0, "{:?}", r.load);
    assert_eq!(r.load.errors.total(), 0, "{:?}", r.load.errors);
    assert!(r.load.server_closes > 0 && r.load.reconnects > 0, "closes {}, reconnects {}", r.load.server_closes, r.load.reconnects);
    assert_eq!(r.load.keepalive_lost, 0, "no request was outstanding at a close");
    assert!(r.has_flag(&Flag::ServerCloses), "{:?}", r.flags);
    assert!(!r.has_flag(&Flag::KeepaliveLost) && !r.has_flag(&Flag::Errors), "{:?}", r.flags);
}

/// A server that answers every other request with a 500: only the valid half counts as requests.
fn a_server_that_fails_half_its_answers_counts_half() {
    let connections = 4;
    let r = one_round("failing", connections);
    let l = &r.load;
    assert!(l.requests > 0, "{l:?}");
    assert_eq!(l.requests, l.status.s2xx, "only the valid answers count");
    assert_eq!(l.errors.status, l.status.s5xx, "every 500 is an error");
    // Each connection alternates valid and failed answers: at the window's edges they differ by one at most.
    assert!(l.requests.abs_diff(l.errors.status) <= connections as u64, "{} valid, {} failed", l.requests, l.errors.status);
    assert!(r.has_flag(&Flag::Errors), "{:?}", r.flags);
    assert!(!r.has_flag(&Flag::KeepaliveLost), "{:?}", r.flags);
}

/// A rate four times what the server can answer (it spins 2 ms per request: at most 500 a second).
fn a_rate_the_server_cannot_hold_is_flagged() {
    let (tmp, catalog) = common::fixture_copy("cost");
    let out = tmp.path().join("results");
    let opts = options_with("cost-busy", &catalog, &out, &|c: &mut BenchArgs| {
        c.warmup = 0;
        c.rounds = "1".into();
        c.duration = Some(Duration::from_millis(1000));
        c.mode = serverbench::run::options::ModeKind::Rate;
        c.rate = Some(serverbench::cli::bench::RateArg::PerS(2000.0));
    });
    let catalog = Catalog::discover(&opts.catalog_root).unwrap();
    let (id, dir) = serverbench::run::create_run_dir(&opts.out_dir).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let run = serverbench::run::bench(&opts, &catalog, &id, &dir, &Ui::new(Verbosity::Quiet), &stop, None, &mut |_| Ok(())).unwrap();
    let m = &run.measurements[0];
    assert_eq!(m.status, MeasurementStatus::Measured, "{:?}", m.reason);
    // Steal does not make a server hold a rate it cannot: every measured round is read, disturbed or not.
    let measured: Vec<&Round> = m.rounds.iter().filter(|r| !r.warmup).collect();
    assert!(!measured.is_empty(), "no round measured");
    for r in measured {
        assert!(r.load.requests_per_s() < 0.98 * 2000.0, "{} answers/s", r.load.requests_per_s());
        assert!(r.has_flag(&Flag::RateNotHeld), "{:?}", r.flags);
        assert!(r.load.backlog > 0, "the timetable ran ahead of the answers: a backlog");
    }
}
