//! The server's system calls from real runs, not set by hand: a server that answers each request with one
//! read and one write comes out at 1.0 of each per request, epoll_wait counted apart; with counting turned
//! off the figures are absent with the reason, never 0. In a file of its own so that no other test shares
//! the server's CPU meanwhile (the counts are of everything that runs there).

mod common;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use serverbench::catalog::{Catalog, Selection};
use serverbench::model::{Measurement, MeasurementStatus};
use serverbench::os::syscalls::{SyscallCounters, COUNTED, METHOD};
use serverbench::run::options::{BenchChoices, BenchOptions};
use serverbench::ui::{Ui, Verbosity};

/// cost-counted with eight connections over two 1.5 s rounds after a warm-up, changed by `tweak`.
fn measure(tweak: impl FnOnce(&mut BenchChoices)) -> Measurement {
    let (tmp, catalog) = common::fixture_copy("cost");
    let mut choices = BenchChoices {
        selection: Selection { terms: vec!["cost-counted".into()], ..Default::default() },
        connections: vec![8],
        warmup: 1,
        rounds: serverbench::run::options::Rounds::Fixed(2),
        duration: Some(Duration::from_millis(1500)),
        start_timeout: Duration::from_secs(20),
        install: false,
        ..BenchChoices::new(catalog.clone(), tmp.path().join("results"))
    };
    tweak(&mut choices);
    let opts = BenchOptions::new(choices).unwrap();
    let catalog = Catalog::discover(&opts.catalog_root).unwrap();
    let (id, dir) = serverbench::run::create_run_dir(&opts.out_dir).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let run = serverbench::run::bench(&opts, &catalog, &id, &dir, &Ui::new(Verbosity::Quiet), &stop, None, &mut |_| Ok(())).unwrap();
    let m = run.measurements[0].clone();
    assert_eq!(m.status, MeasurementStatus::Measured, "{:?}", m.reason);
    assert!(m.measured_rounds().count() > 0, "no round counted; flags: {:?}", m.rounds.iter().map(|r| &r.flags).collect::<Vec<_>>());
    m
}

/// One test, so that its servers never share the server CPU with each other.
#[test]
fn the_servers_calls_are_counted_by_name_or_absent_with_the_reason() {
    one_read_and_one_write_per_request_are_counted_as_such();
    without_counting_the_calls_are_absent_with_the_reason();
}

fn one_read_and_one_write_per_request_are_counted_as_such() {
    const TEST: &str = "the_servers_calls_are_counted_by_name_or_absent_with_the_reason";
    let cpus = serverbench::os::cpus::CpuSet::allowed();
    if let Err(why) = SyscallCounters::open(cpus.cpus(), COUNTED) {
        return common::skip(TEST, &why);
    }
    // Counted per CPU, the server's calls are told apart from the client's only on CPUs of their own.
    if cpus.len() < 2 {
        return common::skip(TEST, &format!("needs two CPUs to keep the server apart from the client; this process may use {cpus}"));
    }
    let m = measure(|c| c.count_syscalls = true);
    for r in m.measured_rounds() {
        let per = r.server.syscalls_per_request.as_ref().unwrap_or_else(|| panic!("round {}: {:?}", r.index, r.server.syscalls_unavailable));
        assert_eq!(r.server.syscalls_method.as_deref(), Some(METHOD));
        for name in ["read", "write"] {
            let n = per.by_name[name];
            assert!((n - 1.0).abs() <= 0.1, "round {}: {n:.3} {name} calls per request: {per:?}", r.index);
        }
        // One epoll_wait serves every connection that is ready: some, and not one per request.
        let waits = per.by_name["epoll_wait"] + per.by_name["epoll_pwait"];
        assert!(waits > 0.0 && waits < 1.0, "round {}: {waits:.3} epoll waits per request", r.index);
        let named: f64 = per.by_name.values().sum();
        // The counters are read one after another while the server may still run, hence the small allowance.
        assert!((per.total - named).abs() <= 1e-3 * per.total, "the total is the sum of the calls by name (other included): {per:?}");
    }
    let summary = m.summary();
    let per = summary.server_syscalls_per_request.expect("every round counted");
    assert_eq!(per.leading(2).iter().map(|(name, _)| *name).collect::<std::collections::BTreeSet<_>>(), ["read", "write"].into());
    assert_eq!(summary.server_syscalls_method.as_deref(), Some(METHOD));
}

/// Not asked for (the default), or with the client on the server's CPUs (whose calls would be counted as the server's): the
/// figures are absent and the reason says which.
fn without_counting_the_calls_are_absent_with_the_reason() {
    let cpu = serverbench::os::cpus::CpuSet::allowed().first().to_string();
    for (m, reason) in [
        (measure(|_| {}), "--syscall-counts"),
        (
            measure(|c| {
                c.count_syscalls = true;
                (c.server_cpus, c.client_cpus) = (Some(cpu.clone()), Some(cpu.clone()));
            }),
            "overlap",
        ),
    ] {
        for r in m.measured_rounds() {
            assert_eq!(r.server.syscalls, None);
            assert_eq!(r.server.syscalls_per_request, None);
            assert!(r.server.syscalls_unavailable.as_deref().is_some_and(|w| w.contains(reason)), "{:?}", r.server);
        }
        let summary = m.summary();
        assert_eq!(summary.server_syscalls_per_request, None);
        assert!(summary.server_syscalls_unavailable.as_deref().is_some_and(|w| w.contains(reason)));
        assert_eq!(summary.server_syscalls_method, None);
    }
}
