//! Other hosts over ssh, with real hosts: two network namespaces made here, each joined to this machine by a
//! veth pair addressed from 198.18.0.0/15 (the range set aside for benchmark tests) and each running
//! Debian's OpenSSH server with a key made here. A real `serverbench bench` serves c-epoll on this side and
//! loads it from both namespaces (the merged figures must be the exact sum of the hosts'), or serves it on
//! one namespace through the agent there and loads it from here (the server's figures are read there).
//! Nothing may be left running. Needs root (namespaces, sshd); skipped with the reason otherwise.

mod common;

use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serverbench::model::{MeasurementStatus, RunResult};

const SSHD: &str = "/usr/sbin/sshd";
/// The whole benchmark must end within this, or it is killed and the test fails.
const BENCH_LIMIT: Duration = Duration::from_secs(300);

/// One namespace: its name, the veth end on this side and in it, and their addresses.
struct Ns {
    name: String,
    outside: Ipv4Addr,
    inside: Ipv4Addr,
    sshd: Option<Child>,
}

/// What the test made; dropping it takes all of it down, on failure too: every process in the namespaces,
/// the namespaces (which removes their veth pairs), and the temporary folder.
struct Lab {
    dir: tempfile::TempDir,
    spaces: Vec<Ns>,
    /// Blackhole routes added on this side, removed with the lab.
    blackholes: Vec<String>,
}

impl Drop for Lab {
    fn drop(&mut self) {
        for ns in &mut self.spaces {
            if let Some(mut c) = ns.sshd.take() {
                let _ = c.kill();
                let _ = c.wait();
            }
            for pid in ns_pids(&ns.name) {
                // SAFETY: kill(2) takes integers only; a process that is gone meanwhile is an error, ignored.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            let _ = Command::new("ip").args(["netns", "del", &ns.name]).stderr(Stdio::null()).status();
        }
        for net in &self.blackholes {
            let _ = Command::new("ip").args(["route", "del", "blackhole", net]).stderr(Stdio::null()).status();
        }
    }
}

/// Processes running in a namespace.
fn ns_pids(ns: &str) -> Vec<i32> {
    let out = Command::new("ip").args(["netns", "pids", ns]).output().map(|o| o.stdout).unwrap_or_default();
    String::from_utf8_lossy(&out).split_whitespace().filter_map(|p| p.parse().ok()).collect()
}

fn sh(args: &[&str]) {
    let out = Command::new(args[0]).args(&args[1..]).output().unwrap_or_else(|e| panic!("{}: {e}", args.join(" ")));
    assert!(out.status.success(), "{}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr));
}

fn text_of(args: &[&str]) -> String {
    common::text(&Command::new(args[0]).args(&args[1..]).output().unwrap().stdout)
}

/// Why this test cannot run here, if it cannot.
fn missing() -> Option<String> {
    // SAFETY: geteuid takes nothing and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Some("needs root (network namespaces, sshd)".into());
    }
    for tool in ["ip", "ssh", "scp", "ssh-keygen"] {
        if serverbench::catalog::requires::find_command(tool).is_none() {
            return Some(format!("`{tool}` is not installed (openssh-client, iproute2)"));
        }
    }
    if !Path::new(SSHD).exists() {
        return Some(format!("{SSHD} is not installed (apt-get install openssh-server)"));
    }
    None
}

/// Two namespaces, addressed from 198.18.0.0/15 with a subnet of this test's own (from its pid and `tag`, one
/// per test of this file), each with a route to the server's address only.
fn make_lab(tag: u32) -> Lab {
    let pid = std::process::id();
    let octet = ((pid + 131 * tag) % 250) as u8;
    let mut lab = Lab { dir: tempfile::Builder::new().prefix("serverbench-remote-").tempdir().unwrap(), spaces: Vec::new(), blackholes: Vec::new() };
    let taken = text_of(&["ip", "-o", "addr"]);
    for (k, letter) in ["a", "b"].iter().enumerate() {
        let base = 4 * k as u8;
        let outside = Ipv4Addr::new(198, 18, octet, base + 1);
        let inside = Ipv4Addr::new(198, 18, octet, base + 2);
        assert!(!taken.contains(&format!("inet {outside}/")), "{outside} is already an address of this machine (a crashed run?)");
        let name = format!("sbt{pid}{tag}{letter}");
        let (veth_out, veth_in) = (format!("sb{pid}{tag}{letter}"), format!("sb{pid}{tag}{letter}n"));
        sh(&["ip", "netns", "add", &name]);
        lab.spaces.push(Ns { name: name.clone(), outside, inside, sshd: None });
        sh(&["ip", "link", "add", &veth_out, "type", "veth", "peer", "name", &veth_in, "netns", &name]);
        sh(&["ip", "addr", "add", &format!("{outside}/30"), "dev", &veth_out]);
        sh(&["ip", "link", "set", &veth_out, "up"]);
        sh(&["ip", "-n", &name, "addr", "add", &format!("{inside}/30"), "dev", &veth_in]);
        sh(&["ip", "-n", &name, "link", "set", &veth_in, "up"]);
        sh(&["ip", "-n", &name, "link", "set", "lo", "up"]);
    }
    // The server listens on the first pair's address on this side; the second namespace reaches it
    // through its own pair.
    let server = lab.spaces[0].outside.to_string();
    let (second, gateway) = (lab.spaces[1].name.clone(), lab.spaces[1].outside.to_string());
    sh(&["ip", "-n", &second, "route", "add", &format!("{server}/32"), "via", &gateway]);
    lab
}

/// The test targets only addresses of the namespaces it made.
fn assert_ours(lab: &Lab, target: Ipv4Addr) {
    let ns = lab.spaces.iter().find(|n| n.inside == target).unwrap_or_else(|| panic!("{target} is not a namespace this test made"));
    assert_in(&ns.name, target);
}

/// `target` is an address of namespace `ns`.
fn assert_in(ns: &str, target: Ipv4Addr) {
    let addrs = text_of(&["ip", "-n", ns, "-o", "addr"]);
    assert!(addrs.contains(&format!("inet {target}/30")), "{target} is not in namespace {ns}: {addrs}");
}

/// A third veth pair, between the two namespaces themselves (198.18.x.9 in the first, .10 in the second):
/// the first namespace's address on it, which the second reaches without passing through this machine.
/// This machine has no way to it: a blackhole route keeps anything it would send there from leaving
/// (without it, the default route would carry it to whatever answers outside).
fn link_spaces(lab: &mut Lab) -> Ipv4Addr {
    let (a, b) = (&lab.spaces[0], &lab.spaces[1]);
    let [_, _, octet, _] = a.inside.octets();
    let (in_a, in_b) = (Ipv4Addr::new(198, 18, octet, 9), Ipv4Addr::new(198, 18, octet, 10));
    let (veth_a, veth_b) = (format!("{}l", a.name), format!("{}l", b.name));
    sh(&["ip", "-n", &a.name, "link", "add", &veth_a, "type", "veth", "peer", "name", &veth_b, "netns", &b.name]);
    sh(&["ip", "-n", &a.name, "addr", "add", &format!("{in_a}/30"), "dev", &veth_a]);
    sh(&["ip", "-n", &b.name, "addr", "add", &format!("{in_b}/30"), "dev", &veth_b]);
    sh(&["ip", "-n", &a.name, "link", "set", &veth_a, "up"]);
    sh(&["ip", "-n", &b.name, "link", "set", &veth_b, "up"]);
    assert_in(&a.name, in_a);
    let net = format!("198.18.{octet}.8/30");
    sh(&["ip", "route", "add", "blackhole", &net]);
    lab.blackholes.push(net);
    in_a
}

/// Keys, a known_hosts file, and an sshd in each namespace that takes root's key and nothing else.
fn start_sshd(lab: &mut Lab) -> Vec<String> {
    let dir = lab.dir.path().to_path_buf();
    for key in ["host_key", "client_key"] {
        sh(&["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "serverbench-test", "-f", &dir.join(key).to_string_lossy()]);
    }
    std::fs::copy(dir.join("client_key.pub"), dir.join("authorized_keys")).unwrap();
    let host_pub = std::fs::read_to_string(dir.join("host_key.pub")).unwrap();
    let known: String = lab.spaces.iter().map(|n| format!("{} {}", n.inside, host_pub.trim())).collect::<Vec<_>>().join("\n") + "\n";
    std::fs::write(dir.join("known_hosts"), known).unwrap();
    // Debian's sshd refuses to start without its privilege separation folder.
    std::fs::create_dir_all("/run/sshd").unwrap();
    for ns in &mut lab.spaces {
        let config = dir.join(format!("sshd_config.{}", ns.name));
        std::fs::write(
            &config,
            format!(
                "ListenAddress {}\nPort 22\nHostKey {}\nPidFile {}\nAuthorizedKeysFile {}\nPermitRootLogin prohibit-password\n\
                 PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nPrintMotd no\n",
                ns.inside,
                dir.join("host_key").display(),
                dir.join(format!("sshd.{}.pid", ns.name)).display(),
                dir.join("authorized_keys").display()
            ),
        )
        .unwrap();
        let log = std::fs::File::create(dir.join(format!("sshd.{}.log", ns.name))).unwrap();
        let child = Command::new("ip")
            .args(["netns", "exec", &ns.name, SSHD, "-D", "-e", "-f"])
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        ns.sshd = Some(child);
    }
    for ns in &lab.spaces {
        let addr = SocketAddr::from((ns.inside, 22));
        let up = common::eventually(Duration::from_secs(10), || TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok());
        let log = std::fs::read_to_string(dir.join(format!("sshd.{}.log", ns.name))).unwrap_or_default();
        assert!(up, "sshd in {} did not listen on {addr}: {log}", ns.name);
    }
    [
        format!("IdentityFile={}", dir.join("client_key").display()),
        "IdentitiesOnly=yes".into(),
        format!("UserKnownHostsFile={}", dir.join("known_hosts").display()),
        "GlobalKnownHostsFile=/dev/null".into(),
        "StrictHostKeyChecking=yes".into(),
    ]
    .to_vec()
}

/// The arguments of a benchmark of c-epoll's hello with rounds of `round`, its results in `out`, every ssh
/// call given `ssh_options`.
/// (Without the run's control: the rounds the tests time their faults by are c-epoll's.)
fn c_epoll_args(lab: &Lab, out: &Path, round: &str, ssh_options: &[String]) -> Vec<String> {
    let catalog = c_epoll_alone(lab.dir.path());
    let mut args: Vec<String> = ["bench", "c-epoll", "--scenario", "hello", "-c", "8", "--warmup", "1", "--rounds", "2", "-d", round, "--no-install", "--no-control"]
        .map(String::from)
        .to_vec();
    args.extend(["--contestants".into(), catalog.display().to_string(), "-o".into(), out.display().to_string()]);
    for o in ssh_options {
        args.extend(["--ssh-option".into(), o.clone()]);
    }
    args
}

/// sshd started in the namespaces, and the arguments of a benchmark of c-epoll served on the first pair's
/// address on this side and loaded from both namespaces.
fn bench_args(lab: &mut Lab, out: &Path, round: &str) -> Vec<String> {
    let ssh_options = start_sshd(lab);
    for ns in &lab.spaces {
        assert_ours(lab, ns.inside);
    }
    let mut args = c_epoll_args(lab, out, round, &ssh_options);
    args.extend(["--server-address".into(), lab.spaces[0].outside.to_string()]);
    for ns in &lab.spaces {
        args.extend(["--client-host".into(), format!("root@{}", ns.inside)]);
    }
    args
}

/// sshd started in the namespaces, and the arguments of a benchmark of c-epoll built, served and probed in
/// the first namespace (`--server-host`, listening on its address there) and loaded from this side.
fn server_host_args(lab: &mut Lab, out: &Path, round: &str) -> Vec<String> {
    let ssh_options = start_sshd(lab);
    let server = lab.spaces[0].inside;
    assert_ours(lab, server);
    let mut args = c_epoll_args(lab, out, round, &ssh_options);
    args.extend(["--server-host".into(), format!("root@{server}"), "--server-address".into(), server.to_string()]);
    args
}

/// sshd started in the namespaces, and the arguments of a benchmark of c-epoll served in the first namespace
/// (`--server-host`, listening on its address toward the second) and loaded from the second
/// (`--client-host`): this machine only orchestrates.
fn apart_args(lab: &mut Lab, out: &Path, round: &str) -> Vec<String> {
    let ssh_options = start_sshd(lab);
    let server = link_spaces(lab);
    for ns in &lab.spaces {
        assert_ours(lab, ns.inside);
    }
    let mut args = c_epoll_args(lab, out, round, &ssh_options);
    args.extend(["--server-host".into(), format!("root@{}", lab.spaces[0].inside), "--server-address".into(), server.to_string()]);
    args.extend(["--client-host".into(), format!("root@{}", lab.spaces[1].inside)]);
    args
}

/// A catalog of c-epoll alone, without its variants (the name also selects them): the project's C folder
/// with the other contestants left out and the manifest cut before its variants.
fn c_epoll_alone(dir: &Path) -> PathBuf {
    let root = dir.join("catalog");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../contestants/c");
    let c = root.join("c");
    std::fs::create_dir_all(c.join("c-epoll")).unwrap();
    for shared in ["common.mk", "sb.h", "sb_timers.h"] {
        std::fs::copy(src.join(shared), c.join(shared)).unwrap();
    }
    for file in ["Makefile", "server.c"] {
        std::fs::copy(src.join("c-epoll").join(file), c.join("c-epoll").join(file)).unwrap();
    }
    let manifest = std::fs::read_to_string(src.join("c-epoll/contestant.toml")).unwrap();
    let own = manifest.split("\n[variants").next().unwrap();
    std::fs::write(c.join("c-epoll/contestant.toml"), own).unwrap();
    root
}

/// The lab of test `name` (`tag`: its own namespaces and subnet), its results folder and the benchmark's
/// arguments (from `args`), with the lock that keeps benchmarks apart; None when the test cannot run here
/// (then skipped).
fn prepared(name: &str, tag: u32, round: &str, args: fn(&mut Lab, &Path, &str) -> Vec<String>) -> Option<(std::sync::MutexGuard<'static, ()>, Lab, PathBuf, Vec<String>)> {
    if let Some(why) = missing() {
        common::skip(name, &why);
        return None;
    }
    let alone = common::one_bench_at_a_time();
    let mut lab = make_lab(tag);
    let out = lab.dir.path().join("results");
    let args = args(&mut lab, &out, round);
    Some((alone, lab, out, args))
}

/// Runs the benchmark, killed if it outlives `BENCH_LIMIT`.
fn bench(args: &[String], _out: &Path) -> (bool, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if started.elapsed() > BENCH_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let output = child.wait_with_output().unwrap();
    let said = format!("{}\n{}", common::text(&output.stdout), common::text(&output.stderr));
    (status.is_some_and(|s| s.success()), said)
}

#[test]
fn load_from_two_namespaces_over_ssh_merges_exactly() {
    let Some((_alone, lab, out, args)) = prepared("load_from_two_namespaces_over_ssh_merges_exactly", 0, "500ms", bench_args) else { return };
    // A clock off beyond the tolerance stops the run before anything is built, naming the host.
    let strict: Vec<String> = args.iter().cloned().chain(["--clock-tolerance".into(), "1ns".into()]).collect();
    let (ok, said) = bench(&strict, &out);
    assert!(!ok && said.contains(&format!("client host root@{}: its clock is", lab.spaces[0].inside)), "{said}");
    std::fs::remove_dir_all(&out).unwrap();
    let (ok, said) = bench(&args, &out);
    assert!(ok, "serverbench bench failed or ran over {BENCH_LIMIT:?}:\n{said}");
    assert!(said.contains("client hosts"), "the table says which hosts loaded it:\n{said}");
    for line in said.lines().filter(|l| l.contains("client hosts") || l.trim_start().starts_with("- root@") || l.starts_with("| c-epoll")) {
        eprintln!("{line}");
    }

    let dir = common::only_run_dir(&out);
    let run: RunResult = serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    let hosts = &run.environment.client_hosts;
    assert_eq!(hosts.iter().map(|h| h.host.as_str()).collect::<Vec<_>>(), lab.spaces.iter().map(|n| format!("root@{}", n.inside)).collect::<Vec<_>>());
    for h in hosts {
        assert!(h.cores >= 1 && !h.kernel.is_empty() && h.clock_rtt_ms > 0.0, "{h:?}");
        assert_eq!(h.server_address, lab.spaces[0].outside.to_string());
        assert!(h.source_address.is_some() && h.mtu.is_some(), "the network path: {h:?}");
        assert!(!Path::new(&h.binary).exists(), "the copy {} was not removed", h.binary);
    }
    let m = run.measurements.iter().find(|m| m.contestant == "c-epoll").expect("c-epoll was measured");
    assert_eq!(m.status, MeasurementStatus::Measured, "{:?}", m.reason);
    let measured: Vec<_> = m.rounds.iter().filter(|r| !r.warmup).collect();
    assert!(measured.len() >= 2, "{} measured rounds", measured.len());
    for r in &m.rounds {
        assert_eq!(r.hosts.len(), 2, "round {}: {:?}", r.index, r.hosts);
        let sum: u64 = r.hosts.iter().map(|h| h.requests).sum();
        assert_eq!(r.load.requests, sum, "round {}: merged requests against the hosts'", r.index);
        assert!(r.load.requests > 0, "round {}", r.index);
        assert_eq!(r.load.latency.len(), r.load.requests, "round {}: the merged histogram holds every request", r.index);
        assert_eq!(r.hosts.iter().map(|h| h.latency_count).sum::<u64>(), r.load.requests, "round {}", r.index);
        assert!(r.hosts.iter().all(|h| h.requests > 0 && h.client_limit_pct.is_some()), "round {}: {:?}", r.index, r.hosts);
        // Every round read each host's clock again; the namespaces share this machine's clock.
        assert!(r.hosts.iter().all(|h| h.clock_offset_ms.is_some_and(|ms| ms.abs() < 100.0)), "round {}: {:?}", r.index, r.hosts);
        assert_eq!(r.load.connections, 8);
        assert_probed_where_the_work_runs(r, &run.config.server_cpus);
        eprintln!("round {} (warm-up {}): merged {} = {}", r.index, r.warmup, r.load.requests, r.hosts.iter().map(|h| format!("{} from {}", h.requests, h.host)).collect::<Vec<_>>().join(" + "));
    }
    assert_nothing_left(lab);
}

/// The round's speed probes: every server CPU (here or on the server host) with both loops, this machine's
/// client CPUs only when the load ran here, and the wait for quiet server CPUs.
fn assert_probed_where_the_work_runs(r: &serverbench::model::Round, server_cpus: &str) {
    let server_cpus = serverbench::os::cpus::parse_list(server_cpus).unwrap();
    let server: Vec<usize> = r.machine.cpu_speed.iter().filter(|s| s.role == "server").map(|s| s.cpu).collect();
    assert_eq!(server, server_cpus, "round {}: {:?}", r.index, r.machine.cpu_speed);
    assert!(r.machine.cpu_speed.iter().all(|s| s.user_per_ms > 0.0 && s.syscall_per_ms > 0.0), "round {}: {:?}", r.index, r.machine.cpu_speed);
    let client_here = r.hosts.is_empty();
    assert_eq!(r.machine.cpu_speed.iter().any(|s| s.role == "client"), client_here, "round {}: client CPUs here probed only when the load ran here: {:?}", r.index, r.machine.cpu_speed);
    assert!(r.machine.quiet_wait_ms.is_some(), "round {}: the wait for quiet server CPUs", r.index);
}

/// Every worker, agent and server is gone: nothing runs in the namespaces but their sshd and no copy of
/// serverbench runs; after the teardown, nothing the test started either.
fn assert_nothing_left(lab: Lab) {
    for ns in &lab.spaces {
        let sshd = ns.sshd.as_ref().map(|c| c.id() as i32);
        let stray = common::eventually(Duration::from_secs(5), || ns_pids(&ns.name).into_iter().all(|p| Some(p) == sshd));
        let left: Vec<String> = ns_pids(&ns.name).iter().filter(|p| Some(**p) != sshd).map(|p| format!("{p}: {}", cmdline(*p))).collect();
        assert!(stray, "left in {}: {left:?}", ns.name);
    }
    let workers: Vec<_> = common::processes().into_iter().filter(|(_, c, s)| (c.contains("load --worker") || c.contains(" agent --catalog")) && *s != 'Z').collect();
    assert!(workers.is_empty(), "workers or agents left: {workers:?}");
    let marker = lab.dir.path().to_path_buf();
    drop(lab);
    assert!(common::processes_mentioning(&marker).is_empty(), "left after the teardown: {:?}", common::processes_mentioning(&marker));
}

fn cmdline(pid: i32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default().replace('\0', " ")
}

/// Kills everything the ssh sessions started in namespace `ns` (their sshd and what runs under it), all but
/// its listening sshd (`listener`), as a host that dies would lose it; what was killed.
fn kill_sessions(ns: &str, listener: Option<i32>) -> Vec<String> {
    ns_pids(ns)
        .into_iter()
        .filter(|p| Some(*p) != listener)
        .map(|p| {
            let line = cmdline(p);
            // SAFETY: as above.
            unsafe { libc::kill(p, libc::SIGKILL) };
            format!("{p}: {line}")
        })
        .collect()
}

/// Runs the benchmark while `killer` kills a host's sessions: the run fails naming `host` (as its errors
/// start), c-epoll fails with it, the round finished before the loss is kept, and nothing is left.
fn assert_lost_host_named(lab: Lab, out: &Path, args: &[String], host: &str, killer: std::thread::JoinHandle<Option<Vec<String>>>) {
    let (ok, said) = bench(args, out);
    let killed = killer.join().unwrap();
    assert!(killed.as_ref().is_some_and(|k| !k.is_empty()), "nothing ran there to kill ({killed:?}):\n{said}");
    assert!(!ok && said.contains(host), "the lost host is named (killed {killed:?}):\n{said}");
    let dir = common::only_run_dir(out);
    let run: RunResult = serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    let m = run.measurements.iter().find(|m| m.contestant == "c-epoll").expect("c-epoll has its measurement");
    assert_eq!(m.status, MeasurementStatus::Failed);
    assert!(m.reason.as_deref().unwrap_or_default().contains(host), "{:?}", m.reason);
    assert!(!m.rounds.is_empty(), "the round finished before the loss is kept: {said}");
    eprintln!("{} round(s) kept; c-epoll failed: {}", m.rounds.len(), m.reason.as_deref().unwrap_or_default().lines().next().unwrap_or_default());
    assert_nothing_left(lab);
}

#[test]
fn a_client_host_lost_mid_round_is_named_and_nothing_is_left() {
    let Some((_alone, lab, out, args)) = prepared("a_client_host_lost_mid_round_is_named_and_nothing_is_left", 1, "4s", bench_args) else { return };
    let (victim, listener) = (lab.spaces[1].name.clone(), lab.spaces[1].sshd.as_ref().map(|c| c.id() as i32));
    // One second into the second round's start instant (the first measured round's, 4 s long), the ssh
    // session of the second namespace (its sshd and the worker) is killed, as a host that dies would be.
    // The namespaces share this machine's clock, so the instant a worker was given is ours too.
    let killer = std::thread::spawn(move || {
        let mut starts = std::collections::BTreeSet::new();
        let begun = Instant::now();
        while begun.elapsed() < BENCH_LIMIT {
            for c in ns_pids(&victim).into_iter().map(cmdline) {
                if let Some(at) = c.split(" --start-at ").nth(1).and_then(|r| r.split(' ').next()).and_then(|t| t.parse::<f64>().ok()) {
                    starts.insert((at * 1e6) as u64);
                }
            }
            if let Some(&at) = starts.iter().nth(1) {
                let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64();
                std::thread::sleep(Duration::from_secs_f64((at as f64 / 1e6 + 1.0 - now).max(0.0)));
                return Some(kill_sessions(&victim, listener));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    });
    let host = format!("client host root@{}", lab.spaces[1].inside);
    assert_lost_host_named(lab, &out, &args, &host, killer);
}

#[test]
fn servers_on_a_server_host_are_probed_there_and_nothing_is_left() {
    let name = "servers_on_a_server_host_are_probed_there_and_nothing_is_left";
    let Some((_alone, lab, out, args)) = prepared(name, 2, "500ms", server_host_args) else { return };
    let host = format!("root@{}", lab.spaces[0].inside);
    // A clock off beyond the tolerance stops the run before anything is built, naming the host.
    let strict: Vec<String> = args.iter().cloned().chain(["--clock-tolerance".into(), "1ns".into()]).collect();
    let (ok, said) = bench(&strict, &out);
    assert!(!ok && said.contains(&format!("server host {host}: its clock is")), "{said}");
    std::fs::remove_dir_all(&out).unwrap();
    let (ok, said) = bench(&args, &out);
    assert!(ok, "serverbench bench failed or ran over {BENCH_LIMIT:?}:\n{said}");

    let dir = common::only_run_dir(&out);
    let run: RunResult = serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    assert_eq!(run.config.server_host.as_deref(), Some(host.as_str()));
    let h = run.environment.server_host.as_ref().expect("the server host is recorded");
    assert_eq!(h.host, host);
    assert!(h.cores >= 1 && !h.kernel.is_empty() && !h.cpu_model.is_empty() && h.clock_rtt_ms > 0.0, "{h:?}");
    assert!(h.ssh_command.contains(" agent --catalog "), "{h:?}");
    assert!(!Path::new(&h.binary).exists(), "the copy {} was not removed", h.binary);
    assert!(dir.join("logs/c-epoll.build.log").is_file(), "the build log is copied here");
    let m = run.measurements.iter().find(|m| m.contestant == "c-epoll").expect("c-epoll was measured");
    assert_eq!(m.status, MeasurementStatus::Measured, "{:?}", m.reason);
    let measured: Vec<_> = m.rounds.iter().filter(|r| !r.warmup).collect();
    assert!(measured.len() >= 2, "{} measured rounds", measured.len());
    for r in &measured {
        let cpu_s = r.server.cpu_s.unwrap_or_else(|| panic!("round {}: the server's CPU time is absent", r.index));
        assert!(r.load.requests > 0 && cpu_s > 0.0, "round {}: {} requests, {cpu_s} s of server CPU", r.index, r.load.requests);
        assert!(r.server.pss_bytes.is_some_and(|b| b > 0) && r.server.processes >= 1, "round {}: {:?}", r.index, r.server);
        assert!(r.server.cpu_us_per_request.is_some() && r.server.utilisation_pct.is_some(), "round {}: {:?}", r.index, r.server);
        assert_probed_where_the_work_runs(r, &run.config.server_cpus);
        assert!(r.machine.cpu_speed.iter().any(|s| s.role == "client"), "the load ran here: its CPUs are probed: {:?}", r.machine.cpu_speed);
        eprintln!(
            "round {}: {} requests, server CPU {:.3} s ({:.1} us/request, {:.0}% of its CPU), PSS {} KiB",
            r.index,
            r.load.requests,
            cpu_s,
            r.server.cpu_us_per_request.unwrap_or_default(),
            r.server.utilisation_pct.unwrap_or_default(),
            r.server.pss_bytes.unwrap_or_default() >> 10
        );
    }
    assert_nothing_left(lab);
}

#[test]
fn a_server_host_lost_mid_round_is_named_and_nothing_is_left() {
    let name = "a_server_host_lost_mid_round_is_named_and_nothing_is_left";
    let Some((_alone, lab, out, args)) = prepared(name, 3, "4s", server_host_args) else { return };
    let (victim, listener) = (lab.spaces[0].name.clone(), lab.spaces[0].sshd.as_ref().map(|c| c.id() as i32));
    // Once the warm-up round is saved, 1.5 s into the first measured round (4 s long), everything the ssh
    // session started in the namespace (its sshd, the agent, the server) is killed, as a host that dies.
    let results = out.clone();
    let killer = std::thread::spawn(move || {
        let begun = Instant::now();
        while begun.elapsed() < BENCH_LIMIT {
            let runs = std::fs::read_dir(&results).into_iter().flatten().flatten();
            let saved = runs.filter_map(|d| std::fs::read_to_string(d.path().join("run.json")).ok()).find_map(|t| serde_json::from_str::<RunResult>(&t).ok());
            if saved.is_some_and(|r| r.measurements.iter().any(|m| !m.rounds.is_empty())) {
                std::thread::sleep(Duration::from_millis(1500));
                return Some(kill_sessions(&victim, listener));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    });
    let host = format!("server host root@{}", lab.spaces[0].inside);
    assert_lost_host_named(lab, &out, &args, &host, killer);
}

#[test]
fn servers_on_one_host_loaded_from_another_while_this_machine_only_orchestrates() {
    let name = "servers_on_one_host_loaded_from_another_while_this_machine_only_orchestrates";
    let Some((_alone, lab, out, args)) = prepared(name, 4, "500ms", apart_args) else { return };
    let (server_host, client_host) = (format!("root@{}", lab.spaces[0].inside), format!("root@{}", lab.spaces[1].inside));
    // The server is started in the first namespace only: the processes there are watched while the run lasts.
    let (here, there) = (lab.spaces[0].name.clone(), lab.spaces[1].name.clone());
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watching = done.clone();
    let watcher = std::thread::spawn(move || {
        let (mut seen, mut clock_beside_agent): (Vec<(String, String)>, bool) = (Vec::new(), false);
        while !watching.load(std::sync::atomic::Ordering::Relaxed) {
            for (ns, label) in [(&here, "server"), (&there, "client")] {
                let lines: Vec<String> = ns_pids(ns).into_iter().map(cmdline).collect();
                if label == "server" && lines.iter().any(|c| c.contains(" agent --catalog ")) && lines.iter().any(|c| c.contains("date +%s.%N")) {
                    clock_beside_agent = true;
                }
                for c in lines.into_iter().filter(|c| c.contains("serverbench") || c.contains("c-epoll")) {
                    if !seen.iter().any(|(l, s)| l == label && *s == c) {
                        seen.push((label.to_string(), c));
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        (seen, clock_beside_agent)
    });
    let (ok, said) = bench(&args, &out);
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let (seen, clock_beside_agent) = watcher.join().unwrap();
    assert!(ok, "serverbench bench failed or ran over {BENCH_LIMIT:?}:\n{said}");
    let ran = |label: &str, what: &str| seen.iter().any(|(l, c)| l == label && c.contains(what));
    assert!(ran("server", " agent --catalog ") && ran("server", "build/server"), "the agent and the server ran in the server's namespace: {seen:?}");
    assert!(ran("client", " load --worker ") && !ran("client", "build/server") && !ran("server", " load --worker "), "{seen:?}");
    // The server host's clock is read once, while it is prepared: its channel is closed before the agent runs.
    assert!(!clock_beside_agent, "the server host's clock channel stayed open beside its agent");

    let dir = common::only_run_dir(&out);
    let run: RunResult = serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    assert_eq!(run.environment.server_host.as_ref().map(|h| h.host.as_str()), Some(server_host.as_str()));
    assert_eq!(run.environment.client_hosts.iter().map(|h| h.host.as_str()).collect::<Vec<_>>(), [client_host.as_str()]);
    let client = &run.environment.client_hosts[0];
    assert_eq!(client.server_address, args[args.iter().position(|a| a == "--server-address").unwrap() + 1]);
    assert!(client.interface.as_deref().is_some_and(|i| i.ends_with('l')), "the load took the link between the namespaces: {client:?}");
    let m = run.measurements.iter().find(|m| m.contestant == "c-epoll").expect("c-epoll was measured");
    assert_eq!(m.status, MeasurementStatus::Measured, "{:?}", m.reason);
    let measured: Vec<_> = m.rounds.iter().filter(|r| !r.warmup).collect();
    assert!(measured.len() >= 2, "{} measured rounds", measured.len());
    for r in &measured {
        assert_eq!(r.hosts.iter().map(|h| h.host.as_str()).collect::<Vec<_>>(), [client_host.as_str()], "round {}", r.index);
        assert_eq!(r.load.requests, r.hosts[0].requests, "round {}", r.index);
        assert_eq!(r.load.latency.len(), r.load.requests, "round {}: the histogram holds every request", r.index);
        let cpu_s = r.server.cpu_s.unwrap_or_else(|| panic!("round {}: the server's CPU time is absent", r.index));
        assert!(r.load.requests > 0 && cpu_s > 0.0 && r.server.pss_bytes.is_some_and(|b| b > 0), "round {}: {:?}", r.index, r.server);
        assert_probed_where_the_work_runs(r, &run.config.server_cpus);
        eprintln!("round {}: {} requests from {client_host}, server CPU {cpu_s:.3} s on {server_host}", r.index, r.load.requests);
    }
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.contains(&format!("Servers on server host {server_host}")) && summary.contains(&format!("  - {client_host}: ")), "{summary}");
    assert_nothing_left(lab);
}
