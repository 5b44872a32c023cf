//! The server's system calls from real runs, not set by hand: a server that answers each request with one
//! read and one write comes out at 1.0 of each per request, epoll_wait counted apart, whether counted in
//! every measured round or (the default) in one extra round after them that no other figure reads; with
//! counting turned off the figures are absent with the reason, never 0. The client's calls are counted
//! the same way on its CPUs in the same rounds. In a file of its own so that no other test shares
//! the server's CPU meanwhile (the counts are of everything that runs there).

mod common;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use serverbench::catalog::Catalog;
use serverbench::cli::bench::BenchArgs;
use serverbench::model::{Measurement, MeasurementStatus};
use serverbench::os::syscalls::{SyscallCounters, COUNTED, METHOD, PROC_METHOD, PROC_READS, PROC_WRITES};
use serverbench::run::options::SyscallCounting;
use serverbench::ui::{Ui, Verbosity};

/// `measure_once`, up to three times while steal left out every round or every counting round
/// (`common::steal::measured_past_steal`).
fn measure(tweak: impl Fn(&mut BenchArgs)) -> Measurement {
    let counted = |m: &Measurement| m.measured_rounds().next().is_some() && (m.counting_rounds.is_empty() || m.counting_rounds.iter().any(|r| r.counts()));
    let m = common::steal::measured_past_steal("cost-counted", || measure_once(&tweak), counted);
    assert!(m.measured_rounds().count() > 0, "no round counted; flags: {:?}", m.rounds.iter().map(|r| &r.flags).collect::<Vec<_>>());
    m
}

/// cost-counted with eight connections over two 1.5 s rounds after a warm-up (up to 12 when steal
/// disturbs them), changed by `tweak`.
fn measure_once(tweak: &impl Fn(&mut BenchArgs)) -> Measurement {
    let (tmp, catalog) = common::fixture_copy("cost");
    let (catalog_arg, out) = (catalog.display().to_string(), tmp.path().join("results").display().to_string());
    let mut args = BenchArgs::parse(&[
        "cost-counted", "--contestants", &catalog_arg, "-o", &out, "-c", "8", "--warmup", "1", "--rounds", "2", "--max-rounds", "12", "-d", "1500ms", "--start-timeout", "20s", "--no-install",
    ])
    .unwrap();
    tweak(&mut args);
    let opts = args.options(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap(), Vec::new()).unwrap();
    let catalog = Catalog::discover(&opts.catalog_root).unwrap();
    let (id, dir) = serverbench::run::create_run_dir(&opts.out_dir).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let run = serverbench::run::bench(&opts, &catalog, &id, &dir, &Ui::new(Verbosity::Quiet), &stop, None, &mut |_| Ok(())).unwrap();
    let m = run.measurements[0].clone();
    assert_eq!(m.status, MeasurementStatus::Measured, "{:?}", m.reason);
    m
}

/// One test, so that its servers never share the server CPU with each other.
#[test]
fn the_servers_calls_are_counted_by_name_or_absent_with_the_reason() {
    if !can_count() {
        return;
    }
    one_read_and_one_write_per_request_are_counted_as_such();
    by_default_an_extra_round_counts_and_the_measured_rounds_do_not();
    without_counting_the_calls_are_absent_with_the_reason();
    // Last: it gives up capabilities this process cannot take back.
    without_the_tracepoints_proc_counts_reads_and_writes();
}

/// Whether the tracepoints can be opened and the server kept on a CPU of its own; else the test is
/// skipped (failed under CI) with the reason.
fn can_count() -> bool {
    const TEST: &str = "the_servers_calls_are_counted_by_name_or_absent_with_the_reason";
    let cpus = serverbench::os::cpus::CpuSet::allowed();
    if let Err(why) = SyscallCounters::open(cpus.cpus(), COUNTED) {
        common::skip(TEST, &why.0);
        return false;
    }
    // Counted per CPU, the server's calls are told apart from the client's only on CPUs of their own.
    if cpus.len() < 2 {
        common::skip(TEST, &format!("needs two CPUs to keep the server apart from the client; this process may use {cpus}"));
        return false;
    }
    true
}

/// One read and one write per request, epoll_wait counted apart, in every round given.
fn assert_one_read_and_one_write<'r>(rounds: impl Iterator<Item = &'r serverbench::model::Round>) {
    for r in rounds {
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
        let total = per.total.expect("the tracepoints count every call");
        assert!((total - named).abs() <= 1e-3 * total, "the total is the sum of the calls by name (other included): {per:?}");
    }
}

fn one_read_and_one_write_per_request_are_counted_as_such() {
    let m = measure(|c| c.syscall_counts = SyscallCounting::Rounds);
    assert_one_read_and_one_write(m.measured_rounds());
    assert!(m.counting_rounds.is_empty(), "counted in the measured rounds, no extra round");
    let summary = m.summary();
    assert_eq!(summary.server_syscalls_from.as_deref(), Some("measured-rounds"));
    let per = summary.server_syscalls_per_request.expect("every round counted");
    assert_eq!(per.leading(2).iter().map(|(name, _)| *name).collect::<std::collections::BTreeSet<_>>(), ["read", "write"].into());
    assert_eq!(summary.server_syscalls_method.as_deref(), Some(METHOD));
}

/// By default the measured rounds run uncounted (their figures do not carry counting's cost) and one
/// extra round after them counts; the summary's calls come from it.
fn by_default_an_extra_round_counts_and_the_measured_rounds_do_not() {
    let m = measure(|_| {});
    assert!(m.measured_rounds().count() >= 2);
    for r in m.measured_rounds() {
        assert_eq!(r.server.syscalls, None, "round {}", r.index);
        assert!(r.server.syscalls_unavailable.as_deref().is_some_and(|w| w.contains("extra round")), "{:?}", r.server.syscalls_unavailable);
    }
    // One counting round that counts, after the measured ones; one that came out disturbed (steal) is
    // taken again, up to COUNTING_ATTEMPTS, and kept marked.
    let (counted, disturbed): (Vec<_>, Vec<_>) = m.counting_rounds.iter().partition(|r| r.counts());
    assert_eq!(counted.len(), 1, "one counting round that counts: {} taken", m.counting_rounds.len());
    assert!(disturbed.iter().all(|r| r.has_flag(&serverbench::model::Flag::Disturbed)) && m.counting_rounds.len() <= 3);
    let counting = counted[0];
    let last_measured = m.rounds.iter().filter_map(|r| r.machine.started_s).fold(0.0, f64::max);
    assert!(counting.machine.started_s.is_some_and(|t| t > last_measured), "the counting round comes after the measured rounds");
    assert_one_read_and_one_write(std::iter::once(counting));
    let summary = m.summary();
    assert_eq!(summary.server_syscalls_from.as_deref(), Some("extra-round"));
    assert_eq!(summary.server_syscalls_method.as_deref(), Some(METHOD));
    let per = summary.server_syscalls_per_request.expect("counted in the extra round");
    assert_eq!(per, counting.server.syscalls_per_request.clone().unwrap());
    // The counting round is in no other figure: the measured requests are the measured rounds' alone.
    assert_eq!(summary.requests, m.measured_rounds().map(|r| r.load.requests).sum::<u64>());
    assert_eq!(summary.rounds, m.measured_rounds().count());
    // The client's calls are counted the same way on its own CPUs, in the same round and only there: at
    // least every call the engine counted where it made them (the harness's sampler runs there too).
    assert!(m.measured_rounds().all(|r| r.client_syscalls.is_none()), "no client count in a measured round");
    let client = counting.client_syscalls.as_ref().expect("counted on the client's CPUs");
    let engine = counting.load.client_system_calls;
    assert!(engine > 0 && client.total.is_some_and(|t| t >= engine), "{client:?} against the engine's own {engine}");
    let per = summary.client_syscalls_per_request.expect("the client's calls per request");
    let (leading, _) = per.leading(1)[0];
    let backend: &[&str] =
        if counting.load.io.starts_with("io_uring") { &["io_uring_enter"] } else { &["read", "write", "recvfrom", "sendto", "epoll_wait", "epoll_pwait"] };
    assert!(backend.contains(&leading), "the client's leading call, {leading}, is one its backend ({}) makes: {per:?}", counting.load.io);
}

/// Turned off, or with the client on the server's CPUs (whose calls would be counted as the server's): the
/// figures are absent and the reason says which.
fn without_counting_the_calls_are_absent_with_the_reason() {
    let cpu = serverbench::os::cpus::CpuSet::allowed().first().to_string();
    for (m, reason) in [
        (measure(|c| c.syscall_counts = SyscallCounting::Off), "--syscall-counts off"),
        (
            measure(|c| {
                c.syscall_counts = SyscallCounting::Rounds;
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

/// With the tracepoints refused, the same run counts from /proc/<pid>/io: the method says so, the server's
/// one read(2) and one write(2) per request come out as 1.0 `syscr` and 1.0 `syscw`, and there is no total.
/// The tracepoints are refused by this thread giving up CAP_PERFMON and CAP_SYS_ADMIN, which counting every
/// task of a CPU needs while `perf_event_paranoid` is above 0 (threads started later inherit the loss).
fn without_the_tracepoints_proc_counts_reads_and_writes() {
    const TEST: &str = "the_servers_calls_are_counted_by_name_or_absent_with_the_reason";
    drop_effective_capabilities(&[CAP_SYS_ADMIN, CAP_PERFMON]);
    let cpus = serverbench::os::cpus::CpuSet::allowed();
    if SyscallCounters::open(cpus.cpus(), COUNTED).is_ok() {
        let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").unwrap_or_default();
        return common::skip(TEST, &format!("the tracepoints stay open without CAP_PERFMON (perf_event_paranoid {})", paranoid.trim()));
    }
    let m = measure(|_| {});
    let counting = m.counting_rounds.first().expect("a counting round");
    assert_eq!(counting.server.syscalls_method.as_deref(), Some(PROC_METHOD), "{:?}", counting.server.syscalls_unavailable);
    let per = counting.server.syscalls_per_request.as_ref().expect("counted from /proc");
    assert_eq!(per.total, None, "/proc counts no total: {per:?}");
    for name in [PROC_READS, PROC_WRITES] {
        let n = per.by_name[name];
        assert!((n - 1.0).abs() <= 0.1, "{n:.3} {name} per request: {per:?}");
    }
    let summary = m.summary();
    assert_eq!(summary.server_syscalls_method.as_deref(), Some(PROC_METHOD));
    assert!(summary.server_syscalls_per_request.is_some_and(|p| p.total.is_none()));
}

const CAP_SYS_ADMIN: u32 = 21;
const CAP_PERFMON: u32 = 38;

/// Clears `caps` from this thread's effective set (capget/capset, version 3).
fn drop_effective_capabilities(caps: &[u32]) {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Default, Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    let mut header = Header { version: 0x2008_0522, pid: 0 };
    let mut data = [Data::default(); 2];
    // SAFETY: `header` and `data` are live, exclusively borrowed and laid out as the kernel's
    // `__user_cap_header_struct` and two `__user_cap_data_struct`s of version 3, all capget writes.
    let got = unsafe { libc::syscall(libc::SYS_capget, &mut header as *mut Header, data.as_mut_ptr()) };
    assert_eq!(got, 0, "capget: {}", std::io::Error::last_os_error());
    for &cap in caps {
        data[(cap / 32) as usize].effective &= !(1 << (cap % 32));
    }
    // SAFETY: as for capget; capset only reads them.
    let set = unsafe { libc::syscall(libc::SYS_capset, &mut header as *mut Header, data.as_ptr()) };
    assert_eq!(set, 0, "capset: {}", std::io::Error::last_os_error());
}
