//! The process-tree probe against a known busy child, and stopping a tree whose child left the group.

mod common;

use std::time::Duration;

use serverbench::os::cpus::CpuSet;
use serverbench::launch::probe::Sampler;
use serverbench::os::proc;
use serverbench::launch::server::{Launch, Server};

#[test]
fn the_probe_sees_the_cpu_and_memory_of_a_busy_grandchild() {
    let tmp = tempfile::tempdir().unwrap();
    // The leader sleeps; its child spins in a session of its own, outside the leader's process group.
    let script = tmp.path().join("tree.sh");
    std::fs::write(&script, "setsid sh -c 'while :; do :; done' &\nsleep 60\n").unwrap();
    let launch = Launch {
        command: format!("sh {}", script.display()),
        env: vec![],
        cwd: tmp.path(),
        cpus: &CpuSet::allowed(),
        log: tmp.path().join("tree.log"),
    };
    let mut server = Server::start(launch, serverbench::launch::server::free_port().unwrap()).unwrap();
    let pid = server.pid();
    assert!(common::eventually(Duration::from_secs(5), || proc::tree(pid, pid, &proc::all_processes()).len() >= 3));

    let sampler = Sampler::spawn(pid, pid);
    std::thread::sleep(Duration::from_millis(1500));
    let usage = sampler.finish();
    server.remember(&usage.members);

    // The spinning child is busy the whole time; on a loaded machine it still gets a fair share.
    let cpu_s = usage.cpu_s.expect("the tree was probed");
    assert!(cpu_s > 0.1, "CPU of the busy child: {cpu_s} s");
    assert!(cpu_s < 1.5 * CpuSet::allowed().len() as f64 + 0.5, "no more than the window allows: {cpu_s} s");
    assert!(usage.members.len() >= 3, "leader, sleep and the spinning child: {:?}", usage.members);
    assert!(usage.peak_rss_bytes.is_some_and(|b| b > 0));
    // PSS divides the pages the tree's processes share: never more than the RSS sum.
    let pss = usage.pss_bytes.expect("smaps_rollup of the tree was read");
    assert!(pss > 0 && pss <= usage.peak_rss_bytes.unwrap() + 4096 * 64, "PSS {pss} B, RSS {:?}", usage.peak_rss_bytes);

    let report = server.stop(Duration::from_secs(2));
    assert!(report.survivors.is_empty(), "{:?}", report.survivors);
    assert!(common::processes_mentioning(tmp.path()).is_empty());
    let spinning_left = proc::all_processes().iter().any(|p| usage.members.contains(&p.key()) && !p.is_zombie());
    assert!(!spinning_left, "the child outside the group was stopped too");
}

/// Told the edges of a measured window, a sampler's figures cover that window only: a server spinning
/// the whole time used no more CPU than the window holds, and less than a sampler of its whole life saw.
#[test]
fn marked_edges_bound_the_window() {
    let tmp = tempfile::tempdir().unwrap();
    let launch = Launch {
        command: "sh -c 'while :; do :; done'".into(),
        env: vec![],
        cwd: tmp.path(),
        cpus: &CpuSet::allowed(),
        log: tmp.path().join("spin.log"),
    };
    let server = Server::start(launch, serverbench::launch::server::free_port().unwrap()).unwrap();
    let pid = server.pid();
    let whole = Sampler::spawn(pid, pid);
    let marked = Sampler::spawn(pid, pid);
    let marks = marked.marks();
    std::thread::sleep(Duration::from_millis(300));
    marks.open();
    std::thread::sleep(Duration::from_millis(400));
    marks.close();
    std::thread::sleep(Duration::from_millis(500));
    let (in_window, over_life) = (marked.finish(), whole.finish());
    server.stop(Duration::from_secs(2));

    let window = in_window.window.clone().expect("the marked sampler read a window");
    // The sampler reads the counters when it wakes at a mark: the close waits for that reading, the open
    // does not, so a late wake at the open (2 ms in one CI, with steal) shortens the window a little.
    assert!(window.wall_s >= 0.35, "the window lasted {} s", window.wall_s);
    assert!(window.stat_open.is_some() && window.stat_close.is_some());
    assert!(over_life.window.is_none());
    let (cpu, life_cpu) = (in_window.cpu_s.unwrap(), over_life.cpu_s.unwrap());
    // Two ticks of /proc rounding at most beyond what the window holds on one CPU (the shell spins on one).
    assert!(cpu <= window.wall_s + 0.02, "{cpu} s of CPU in a window of {} s", window.wall_s);
    assert!(cpu < life_cpu, "the window ({cpu} s) must see less than the whole life ({life_cpu} s)");
    assert!(cpu > 0.0, "the server spun throughout the window");
}

/// Two spinning processes on one CPU, once at equal priority and once one of them at nice 19: the window
/// reads every thread of the tree, and the balance says even (about 1x) for the first and about 2x (one
/// worker did nearly everything) for the second. Shares of one CPU, not speeds.
#[test]
fn the_threads_of_the_tree_show_how_evenly_the_work_was_shared() {
    let tmp = tempfile::tempdir().unwrap();
    let cpu = CpuSet::parse(&CpuSet::allowed().cpus()[0].to_string()).unwrap();
    let balance = |second: &str| {
        let launch = Launch {
            command: format!("sh -c 'sh -c \"while :; do :; done\" & {second} sh -c \"while :; do :; done\" & wait'"),
            env: vec![],
            cwd: tmp.path(),
            cpus: &cpu,
            log: tmp.path().join("spin.log"),
        };
        let server = Server::start(launch, serverbench::launch::server::free_port().unwrap()).unwrap();
        let pid = server.pid();
        assert!(common::eventually(Duration::from_secs(5), || proc::tree(pid, pid, &proc::all_processes()).len() >= 3));
        let sampler = Sampler::spawn(pid, pid);
        let marks = sampler.marks();
        marks.open();
        std::thread::sleep(Duration::from_millis(600));
        marks.close();
        let usage = sampler.finish();
        server.stop(Duration::from_secs(2));
        assert!(usage.thread_cpu_s.len() >= 3, "the shell and its two spinning children: {:?}", usage.thread_cpu_s);
        serverbench::model::worker_balance(&usage.thread_cpu_s, 2).expect("two workers")
    };
    let even = balance("");
    assert!(even.workers == 2 && even.imbalance < 1.3, "{even:?}");
    let uneven = balance("nice -n 19");
    assert!(uneven.workers == 2 && uneven.imbalance > 1.7, "{uneven:?}");
}

#[test]
fn a_port_answered_by_another_process_is_not_taken_for_readiness() {
    // The port was free when chosen; then another process (this test) bound it before the server did.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let tmp = tempfile::tempdir().unwrap();
    let launch = Launch { command: "sleep 60".into(), env: vec![], cwd: tmp.path(), cpus: &CpuSet::allowed(), log: tmp.path().join("late.log") };
    let mut server = Server::start(launch, port).unwrap();
    let err = server.wait_ready(Duration::from_secs(5), &std::sync::atomic::AtomicBool::new(false)).unwrap_err().to_string();
    assert!(err.contains(&format!("port {port} is answered by pid {}", std::process::id())), "{err}");
    assert!(err.contains("outside the server's process tree"), "{err}");
    server.stop(Duration::from_secs(2));

    // A server that listens itself is ready, whether it holds the listener or a child of it does.
    let port = serverbench::launch::server::free_port().unwrap();
    let script = format!("python3 -c 'import socket,time; s=socket.socket(); s.bind((\"127.0.0.1\", {port})); s.listen(); time.sleep(60)'");
    for command in [script.clone(), format!("sh -c \"{}\"", script.replace('"', "\\\""))] {
        let launch = Launch { command, env: vec![], cwd: tmp.path(), cpus: &CpuSet::allowed(), log: tmp.path().join("own.log") };
        let mut server = Server::start(launch, port).unwrap();
        server.wait_ready(Duration::from_secs(10), &std::sync::atomic::AtomicBool::new(false)).unwrap();
        server.stop(Duration::from_secs(2));
    }
}

#[test]
fn an_idle_tree_costs_almost_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let launch = Launch {
        command: "sleep 60".into(),
        env: vec![],
        cwd: tmp.path(),
        cpus: &CpuSet::allowed(),
        log: tmp.path().join("idle.log"),
    };
    let server = Server::start(launch, serverbench::launch::server::free_port().unwrap()).unwrap();
    let sampler = Sampler::spawn(server.pid(), server.pid());
    std::thread::sleep(Duration::from_millis(500));
    let usage = sampler.finish();
    assert!(usage.cpu_s.is_some_and(|s| s < 0.2), "{:?}", usage.cpu_s);
    assert_eq!(usage.members.len(), 1, "`exec sleep` replaces the shell");
    let report = server.stop(Duration::from_secs(2));
    assert_eq!(report.killed_after_s, None, "sleep ends on SIGTERM");
}

/// A tree that cannot be read (no such process) gives absent figures, never a zero CPU or memory.
#[test]
fn a_tree_never_seen_is_absent_not_zero() {
    // Above any pid_max, so no process has it.
    let usage = Sampler::spawn(i32::MAX, i32::MAX).finish();
    assert_eq!((usage.cpu_s, usage.peak_rss_bytes), (None, None));
    assert!(usage.members.is_empty());
}

/// A sampler told a window's edges and the command's tree over it.
fn window_of(command: &str) -> serverbench::launch::probe::Usage {
    let tmp = tempfile::tempdir().unwrap();
    let launch = Launch { command: command.into(), env: vec![], cwd: tmp.path(), cpus: &CpuSet::allowed(), log: tmp.path().join("server.log") };
    let server = Server::start(launch, serverbench::launch::server::free_port().unwrap()).unwrap();
    let pid = server.pid();
    let sampler = Sampler::spawn(pid, pid);
    let marks = sampler.marks();
    std::thread::sleep(Duration::from_millis(200));
    marks.open();
    std::thread::sleep(Duration::from_millis(600));
    marks.close();
    let usage = sampler.finish();
    server.stop(Duration::from_secs(2));
    usage
}

/// The threads' exact run time stands for the tree's CPU when nothing of the tree ended inside the window,
/// and agrees with the clock ticks within their rounding; a tree whose children come and go (a process per
/// request) has its time only in the ticks, so the exact figure is absent rather than short.
#[test]
fn exact_cpu_time_only_where_it_covers_the_window() {
    let steady = window_of("sh -c 'while :; do :; done'");
    let (ticks_s, exact_s) = (steady.cpu_s.unwrap(), steady.cpu_exact_s.expect("one thread, alive throughout"));
    assert!(exact_s > 0.0);
    assert!((exact_s - ticks_s).abs() <= 0.03 + 0.1 * ticks_s, "schedstat {exact_s} s, ticks {ticks_s} s");

    let forking = window_of("sh -c 'while :; do /bin/true; done'");
    assert!(forking.cpu_s.is_some_and(|s| s > 0.0));
    assert_eq!(forking.cpu_exact_s, None, "children ended inside the window: {forking:?}");
}
