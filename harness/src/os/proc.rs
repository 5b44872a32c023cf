//! Readers of /proc, once for the whole harness: a process's stat line, the process table and one process
//! tree in it, memory (RSS, PSS), open descriptors and their limit, socket inodes, the kernel's TCP tables,
//! and the machine facts a run records. Parsing is the `procfs` crate's; the load average is read by hand
//! because procfs holds it as f32, which would print 0.53 as 0.5299999713897705 in run.json.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;

use procfs::process::{FDTarget, Process};
use procfs::{Current, FromRead};

pub use procfs::net::TcpState;

/// A process as one line of /proc/<pid>/stat shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcStat {
    pub pid: i32,
    pub comm: String,
    pub state: char,
    pub ppid: i32,
    pub pgrp: i32,
    /// utime + stime + cutime + cstime, in clock ticks.
    pub cpu_ticks: u64,
    /// utime and stime alone: every thread of the process, ended ones included, in clock ticks.
    pub user_ticks: u64,
    pub system_ticks: u64,
    /// Start time after boot in clock ticks: with the pid it names a process even if the pid is reused.
    pub start_ticks: u64,
    pub rss_pages: u64,
}

/// A process identity that survives pid reuse.
pub type ProcKey = (i32, u64);

impl ProcStat {
    pub fn key(&self) -> ProcKey {
        (self.pid, self.start_ticks)
    }

    /// Parses the text of /proc/<pid>/stat (the command name in parentheses may hold spaces or parentheses).
    pub fn parse(text: &str) -> Option<ProcStat> {
        procfs::process::Stat::from_read(text.as_bytes()).ok().map(ProcStat::from)
    }

    pub fn read(pid: i32) -> Option<ProcStat> {
        Process::new(pid).ok()?.stat().ok().map(ProcStat::from)
    }

    pub fn is_zombie(&self) -> bool {
        matches!(self.state, 'Z' | 'X')
    }
}

impl From<procfs::process::Stat> for ProcStat {
    fn from(s: procfs::process::Stat) -> ProcStat {
        ProcStat {
            pid: s.pid,
            comm: s.comm,
            state: s.state,
            ppid: s.ppid,
            pgrp: s.pgrp,
            cpu_ticks: s.utime + s.stime + s.cutime.max(0) as u64 + s.cstime.max(0) as u64,
            user_ticks: s.utime,
            system_ticks: s.stime,
            start_ticks: s.starttime,
            rss_pages: s.rss,
        }
    }
}

/// Every process visible in /proc (one that exits while the table is read is left out).
pub fn all_processes() -> Vec<ProcStat> {
    let Ok(all) = procfs::process::all_processes() else { return Vec::new() };
    all.flatten().filter_map(|p| p.stat().ok()).map(ProcStat::from).collect()
}

/// The processes of the tree rooted at `root` whose group is `pgid`: group members and descendants of root.
pub fn tree(root: i32, pgid: i32, all: &[ProcStat]) -> Vec<ProcStat> {
    let mut children: HashMap<i32, Vec<&ProcStat>> = HashMap::new();
    for p in all {
        children.entry(p.ppid).or_default().push(p);
    }
    let mut members: HashMap<i32, &ProcStat> = all.iter().filter(|p| p.pgrp == pgid || p.pid == root).map(|p| (p.pid, p)).collect();
    let mut stack: Vec<i32> = members.keys().copied().collect();
    while let Some(pid) = stack.pop() {
        for c in children.get(&pid).into_iter().flatten() {
            if members.insert(c.pid, c).is_none() {
                stack.push(c.pid);
            }
        }
    }
    let mut out: Vec<ProcStat> = members.into_values().cloned().collect();
    out.sort_by_key(|p| p.pid);
    out
}

/// The summed `Pss:` of the processes' smaps_rollup; None when any could not be read (a partial sum would
/// pass for the whole).
pub fn pss_bytes(processes: &[ProcStat]) -> Option<u64> {
    if processes.is_empty() {
        return None;
    }
    processes
        .iter()
        .map(|p| {
            let rollup = Process::new(p.pid).ok()?.smaps_rollup().ok()?;
            rollup.memory_map_rollup.iter().find_map(|m| m.extension.map.get("Pss").copied())
        })
        .sum()
}

/// The scheduler state of each thread of a process (field 3 of /proc/<pid>/task/<tid>/stat: R, S, D, ...),
/// read by hand: one short read a thread, since a sampler reads them beside a busy server. A thread that
/// ends while the list is read is left out; nothing when the process is gone.
pub fn thread_states(pid: i32) -> Vec<char> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return Vec::new() };
    tasks.flatten().filter_map(|t| std::fs::read_to_string(t.path().join("stat")).ok().and_then(|s| state_field(&s))).collect()
}

/// What one thread has spent since it started: CPU time exactly (schedstat, nanoseconds), the same split
/// into user and system time (stat, clock ticks), and its context switches (status): voluntary (it waited
/// for something) and involuntary (the scheduler took its CPU).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ThreadCost {
    pub cpu_ns: u64,
    pub user_ticks: u64,
    pub system_ticks: u64,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
    /// Moves to another CPU (`se.nr_migrations` in `sched`, which kernels without scheduler debugging
    /// lack: absent then).
    pub migrations: Option<u64>,
}

impl ThreadCost {
    /// What was spent between `before` and `self`.
    pub fn since(&self, before: &ThreadCost) -> ThreadCost {
        ThreadCost {
            cpu_ns: self.cpu_ns.saturating_sub(before.cpu_ns),
            user_ticks: self.user_ticks.saturating_sub(before.user_ticks),
            system_ticks: self.system_ticks.saturating_sub(before.system_ticks),
            voluntary_switches: self.voluntary_switches.saturating_sub(before.voluntary_switches),
            involuntary_switches: self.involuntary_switches.saturating_sub(before.involuntary_switches),
            migrations: self.migrations.map(|m| m.saturating_sub(before.migrations.unwrap_or(0))),
        }
    }

    /// Nothing spent yet, every figure known: where sums start.
    pub fn zero() -> ThreadCost {
        ThreadCost { migrations: Some(0), ..ThreadCost::default() }
    }

    /// Adds `other`; a figure missing from either is missing from the sum.
    pub fn add(&mut self, other: &ThreadCost) {
        self.migrations = self.migrations.zip(other.migrations).map(|(a, b)| a + b);
        self.cpu_ns += other.cpu_ns;
        self.user_ticks += other.user_ticks;
        self.system_ticks += other.system_ticks;
        self.voluntary_switches += other.voluntary_switches;
        self.involuntary_switches += other.involuntary_switches;
    }
}

/// Each thread of a process with what it has spent (a thread whose files cannot all be read is left out).
pub fn thread_costs(pid: i32) -> Vec<(i32, ThreadCost)> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return Vec::new() };
    tasks
        .flatten()
        .filter_map(|t| {
            let tid = t.file_name().to_str()?.parse().ok()?;
            let dir = t.path();
            let schedstat = std::fs::read_to_string(dir.join("schedstat")).ok()?;
            let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
            let status = std::fs::read_to_string(dir.join("status")).ok()?;
            // After the command name: state is field 3, utime 14 and stime 15 (1-based, as in proc(5)).
            let after_comm: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
            let switches = |name: &str| status.lines().find_map(|l| l.strip_prefix(name)?.trim().parse().ok());
            Some((
                tid,
                ThreadCost {
                    cpu_ns: schedstat.split_whitespace().next()?.parse().ok()?,
                    user_ticks: after_comm.get(11)?.parse().ok()?,
                    system_ticks: after_comm.get(12)?.parse().ok()?,
                    voluntary_switches: switches("voluntary_ctxt_switches:")?,
                    involuntary_switches: switches("nonvoluntary_ctxt_switches:")?,
                    migrations: migrations(&dir.join("sched")),
                },
            ))
        })
        .collect()
}

/// A thread's moves to another CPU so far, from its `sched` file; None where the kernel has none.
pub fn migrations(sched: &std::path::Path) -> Option<u64> {
    let text = std::fs::read_to_string(sched).ok()?;
    text.lines().find_map(|l| l.strip_prefix("se.nr_migrations")?.trim_start().strip_prefix(':')?.trim().parse().ok())
}

/// The state field of a stat line: the first character after the command name's closing parenthesis (the
/// name may hold parentheses itself).
fn state_field(stat: &str) -> Option<char> {
    stat[stat.rfind(')')? + 1..].trim_start().chars().next()
}

pub fn page_bytes() -> u64 {
    procfs::page_size()
}

/// Descriptors a process holds open and its hard limit on them; None when either cannot be read.
pub fn open_files(pid: i32) -> Option<(u64, u64)> {
    let p = Process::new(pid).ok()?;
    let open = p.fd_count().ok()? as u64;
    let hard = match p.limits().ok()?.max_open_files.hard_limit {
        procfs::process::LimitValue::Value(v) => v,
        procfs::process::LimitValue::Unlimited => u64::MAX,
    };
    Some((open, hard))
}

/// Descriptors this process holds open; None when /proc/self/fd cannot be read.
pub fn own_open_files() -> Option<u64> {
    Some(Process::myself().ok()?.fd_count().ok()? as u64)
}

/// Inodes of the sockets a process holds open (the `socket:[N]` links in /proc/<pid>/fd).
pub fn socket_inodes(pid: i32) -> HashSet<u64> {
    let Ok(fds) = Process::new(pid).and_then(|p| p.fd()) else { return HashSet::new() };
    fds.flatten()
        .filter_map(|fd| match fd.target {
            FDTarget::Socket(inode) => Some(inode),
            _ => None,
        })
        .collect()
}

/// Of these processes, the first that holds the socket with this inode, and its descriptor; None when
/// none does (or none could be read).
pub fn socket_holder(pids: &[i32], inode: u64) -> Option<(i32, i32)> {
    pids.iter().find_map(|&pid| {
        let fd = Process::new(pid).ok()?.fd().ok()?.flatten().find(|fd| matches!(fd.target, FDTarget::Socket(i) if i == inode))?;
        Some((pid, fd.fd))
    })
}

/// Every TCP socket of the kernel's tables, IPv4 and IPv6 (a table that cannot be read is left out).
fn tcp_sockets() -> Vec<procfs::net::TcpNetEntry> {
    let mut all = procfs::net::tcp().unwrap_or_default();
    all.extend(procfs::net::tcp6().unwrap_or_default());
    all
}

/// Inodes of the TCP sockets listening on `port`, IPv4 and IPv6.
pub fn listening_inodes(port: u16) -> Vec<u64> {
    tcp_sockets()
        .into_iter()
        .filter(|e| e.state == TcpState::Listen && e.local_address.port() == port)
        .map(|e| e.inode)
        .collect()
}

/// One connection as the kernel's TCP table shows it from the side whose local address is `local`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TcpSocket {
    pub state: TcpState,
    /// Bytes sent and not yet acknowledged by the peer.
    pub tx_queue: u64,
    pub inode: u64,
}

/// An IPv4 address as itself, also where a dual-stack IPv6 socket shows it as `::ffff:a.b.c.d`.
fn plain(addr: SocketAddr) -> SocketAddr {
    match addr {
        SocketAddr::V6(v6) => match v6.ip().to_ipv4_mapped() {
            Some(v4) => SocketAddr::new(v4.into(), v6.port()),
            None => addr,
        },
        v4 => v4,
    }
}

/// The socket with this local and remote address; None when the table holds none (or cannot be read).
pub fn tcp_socket(local: SocketAddr, remote: SocketAddr) -> Option<TcpSocket> {
    tcp_sockets()
        .into_iter()
        .find(|e| plain(e.local_address) == plain(local) && plain(e.remote_address) == plain(remote))
        .map(|e| TcpSocket { state: e.state, tx_queue: u64::from(e.tx_queue), inode: e.inode })
}

/// The 1, 5 and 15 minute load averages now; None when /proc/loadavg cannot be read (never zeros).
pub fn load_average() -> Option<[f64; 3]> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let load: Vec<f64> = text.split_whitespace().take(3).map_while(|v| v.parse().ok()).collect();
    load.try_into().ok()
}

/// The first CPU's model name; None when /proc/cpuinfo names none.
pub fn cpu_model() -> Option<String> {
    let info = procfs::CpuInfo::current().ok()?;
    info.model_name(0).or_else(|| info.get_field(0, "Model")).or_else(|| info.get_field(0, "cpu model")).map(str::to_string)
}

/// The kernel's name and release, as `uname -sr` prints them; None when /proc/sys/kernel cannot be read.
pub fn kernel() -> Option<String> {
    let read = |name: &str| std::fs::read_to_string(format!("/proc/sys/kernel/{name}")).ok().map(|s| s.trim().to_string());
    Some(format!("{} {}", read("ostype")?, read("osrelease")?))
}

/// Memory the machine has, in bytes; None when /proc/meminfo cannot be read.
pub fn memory_bytes() -> Option<u64> {
    procfs::Meminfo::current().ok().map(|m| m.mem_total)
}

/// The kernel's count of connections its listeners could not take (TcpExt ListenOverflows: the accept
/// queue was full; ListenDrops: dropped for any reason, overflows included), machine-wide, since boot;
/// None when /proc/net/netstat cannot be read.
pub fn listen_overflows_and_drops() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/net/netstat").ok()?;
    let mut lines = text.lines().filter(|l| l.starts_with("TcpExt:"));
    let (names, values) = (lines.next()?, lines.next()?);
    let field = |name: &str| {
        let at = names.split_whitespace().position(|n| n == name)?;
        values.split_whitespace().nth(at)?.parse::<u64>().ok()
    };
    Some((field("ListenOverflows")?, field("ListenDrops")?))
}

/// The lowest port of the kernel's ephemeral range; None when it cannot be read.
pub fn ephemeral_port_low() -> Option<u16> {
    let text = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_stat_line_with_an_awkward_name() {
        let line = "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 7 3 20 0 4 0 98765 1000000 321 \
                    18446744073709551615 94075882569728 94075882589609 140724947055408 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 \
                    94075882605616 94075882607232 94076795584512 140724947057344 140724947057364 140724947057364 \
                    140724947058667 0";
        let p = ProcStat::parse(line).unwrap();
        assert_eq!(p.pid, 4242);
        assert_eq!(p.comm, "a (b) c");
        assert_eq!((p.state, p.ppid, p.pgrp), ('S', 1, 4242));
        assert_eq!(p.cpu_ticks, 250 + 50 + 7 + 3);
        assert_eq!(p.start_ticks, 98765);
        assert_eq!(p.rss_pages, 321);
    }

    #[test]
    fn reads_the_state_of_every_thread() {
        assert_eq!(state_field("4242 (a (b) c) D 1 4242"), Some('D'));
        assert_eq!(state_field("4242 (a"), None);
        let _second = std::thread::spawn(|| std::thread::sleep(std::time::Duration::from_millis(500)));
        let states = thread_states(std::process::id() as i32);
        assert!(states.len() >= 2 && states.contains(&'R'), "{states:?}");
        assert!(thread_states(-1).is_empty());
    }

    #[test]
    fn reads_the_listen_counters() {
        let (overflows, drops) = listen_overflows_and_drops().expect("/proc/net/netstat");
        assert!(drops >= overflows, "every overflow is also a drop: {overflows} > {drops}");
    }

    #[test]
    fn a_thread_moved_between_cpus_counts_its_migrations() {
        let cpus = crate::os::cpus::CpuSet::allowed().cpus().to_vec();
        if cpus.len() < 2 {
            return crate::testing::skip("os::proc::tests::a_thread_moved_between_cpus_counts_its_migrations", "one CPU only");
        }
        let moved = std::thread::spawn(move || {
            let sched = std::path::Path::new("/proc/thread-self/sched");
            crate::os::cpus::pin_current_thread(cpus[0]).unwrap();
            let before = migrations(sched)?;
            for i in 1..=4 {
                crate::os::cpus::pin_current_thread(cpus[i % 2]).unwrap();
            }
            Some(migrations(sched)? - before)
        })
        .join()
        .unwrap();
        // A kernel without scheduler debugging has no `sched` file: the figure is then absent, never 0.
        match moved {
            Some(n) => assert!(n >= 4, "pinned to another CPU four times, {n} migrations counted"),
            None => assert!(!std::path::Path::new("/proc/self/sched").exists(), "sched exists but was not read"),
        }
    }

    #[test]
    fn reads_this_process() {
        let me = ProcStat::read(std::process::id() as i32).unwrap();
        assert_eq!(me.pid, std::process::id() as i32);
        assert!(me.rss_pages > 0);
    }

    #[test]
    fn a_tree_follows_parents_and_groups() {
        let p = |pid, ppid, pgrp| ProcStat {
            pid,
            comm: String::new(),
            state: 'S',
            ppid,
            pgrp,
            cpu_ticks: 0,
            user_ticks: 0,
            system_ticks: 0,
            start_ticks: 0,
            rss_pages: 0,
        };
        // 10 leads group 10; 11 is its child; 12 is a child of 11 in its own session; 13 is in group 10
        // but was reparented to init; 20 is unrelated.
        let all = [p(1, 0, 1), p(10, 1, 10), p(11, 10, 10), p(12, 11, 12), p(13, 1, 10), p(20, 1, 20)];
        let pids: Vec<i32> = tree(10, 10, &all).iter().map(|p| p.pid).collect();
        assert_eq!(pids, [10, 11, 12, 13]);
    }
}
