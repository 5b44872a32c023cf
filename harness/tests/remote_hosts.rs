//! Load from client hosts over ssh, with real hosts: two network namespaces made here, each joined to this
//! machine by a veth pair addressed from 198.18.0.0/15 (the range set aside for benchmark tests) and each
//! running Debian's OpenSSH server with a key made here. A real `serverbench bench` serves c-epoll on this
//! side and loads it from both namespaces; the merged figures must be the exact sum of the hosts', and
//! nothing may be left running. Needs root (namespaces, sshd); skipped with the reason otherwise.

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
}

impl Drop for Lab {
    fn drop(&mut self) {
        for ns in &mut self.spaces {
            if let Some(mut c) = ns.sshd.take() {
                let _ = c.kill();
                let _ = c.wait();
            }
            for pid in ns_pids(&ns.name) {
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            let _ = Command::new("ip").args(["netns", "del", &ns.name]).stderr(Stdio::null()).status();
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

/// Two namespaces, addressed from 198.18.0.0/15 with a subnet of this test's own (from its pid), each with
/// a route to the server's address only.
fn make_lab() -> Lab {
    let pid = std::process::id();
    let octet = (pid % 250) as u8;
    let mut lab = Lab { dir: tempfile::Builder::new().prefix("serverbench-remote-").tempdir().unwrap(), spaces: Vec::new() };
    let taken = text_of(&["ip", "-o", "addr"]);
    for (k, letter) in ["a", "b"].iter().enumerate() {
        let base = 4 * k as u8;
        let outside = Ipv4Addr::new(198, 18, octet, base + 1);
        let inside = Ipv4Addr::new(198, 18, octet, base + 2);
        assert!(!taken.contains(&format!("inet {outside}/")), "{outside} is already an address of this machine (a crashed run?)");
        let name = format!("sbt{pid}{letter}");
        let (veth_out, veth_in) = (format!("sb{pid}{letter}"), format!("sb{pid}{letter}n"));
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
    let addrs = text_of(&["ip", "-n", &ns.name, "-o", "addr"]);
    assert!(addrs.contains(&format!("inet {target}/30")), "{target} is not in namespace {}: {addrs}", ns.name);
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

/// Runs the benchmark, killed if it outlives `BENCH_LIMIT`.
fn bench(args: &[String], out: &Path) -> (bool, String) {
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
    let _ = out;
    (status.is_some_and(|s| s.success()), said)
}

#[test]
fn load_from_two_namespaces_over_ssh_merges_exactly() {
    if let Some(why) = missing() {
        common::skip("load_from_two_namespaces_over_ssh_merges_exactly", &why);
        return;
    }
    let _alone = common::one_bench_at_a_time();
    let mut lab = make_lab();
    let ssh_options = start_sshd(&mut lab);
    for ns in &lab.spaces {
        assert_ours(&lab, ns.inside);
    }
    let out: PathBuf = lab.dir.path().join("results");
    let mut args: Vec<String> = ["bench", "c-epoll", "--scenario", "hello", "-c", "8", "--warmup", "1", "--rounds", "2", "-d", "500ms", "--no-install"]
        .map(String::from)
        .to_vec();
    args.extend(["--server-address".into(), lab.spaces[0].outside.to_string(), "-o".into(), out.display().to_string()]);
    for ns in &lab.spaces {
        args.extend(["--client-host".into(), format!("root@{}", ns.inside)]);
    }
    for o in &ssh_options {
        args.extend(["--ssh-option".into(), o.clone()]);
    }
    let (ok, said) = bench(&args, &out);
    assert!(ok, "serverbench bench failed or ran over {BENCH_LIMIT:?}:\n{said}");
    assert!(said.contains("client hosts"), "the table says which hosts loaded it:\n{said}");

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
        assert_eq!(r.load.connections, 8);
        eprintln!("round {} (warm-up {}): merged {} = {}", r.index, r.warmup, r.load.requests, r.hosts.iter().map(|h| format!("{} from {}", h.requests, h.host)).collect::<Vec<_>>().join(" + "));
    }
    // Every worker is gone: nothing runs in the namespaces but their sshd, and no copy of serverbench runs.
    for ns in &lab.spaces {
        let sshd = ns.sshd.as_ref().map(|c| c.id() as i32);
        let stray: Vec<i32> = ns_pids(&ns.name).into_iter().filter(|p| Some(*p) != sshd).collect();
        let stray: Vec<String> = stray.iter().map(|p| format!("{p}: {}", std::fs::read_to_string(format!("/proc/{p}/cmdline")).unwrap_or_default().replace('\0', " "))).collect();
        assert!(stray.is_empty(), "left in {}: {stray:?}", ns.name);
    }
    let workers: Vec<_> = common::processes().into_iter().filter(|(_, c, s)| c.contains("load --worker") && *s != 'Z').collect();
    assert!(workers.is_empty(), "workers left: {workers:?}");
    let marker = lab.dir.path().to_path_buf();
    drop(lab);
    assert!(common::processes_mentioning(&marker).is_empty(), "left after the teardown: {:?}", common::processes_mentioning(&marker));
}
