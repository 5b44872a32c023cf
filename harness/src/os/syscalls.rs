//! System calls counted by the kernel's tracepoints on a set of CPUs: `raw_syscalls:sys_enter` for all of
//! them and `syscalls:sys_enter_<name>` for each counted name, one counting (not sampling) perf event per
//! tracepoint and CPU, for every task that runs there. The runner pins a server to CPUs of its own and
//! flags a round in which anything else ran on them, so on those CPUs the counts are the server's.
//!
//! Where the tracepoints cannot be opened (not root, a kernel without them), `/proc/<pid>/io` of each of the
//! server's processes gives what it can: `syscr` and `syscw`, the read-like and write-like calls (read,
//! readv, pread64, preadv and write, writev, pwrite64, pwritev, sendfile; not recv*, send*), and no total.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The calls counted by name; every other call is counted only in the total.
pub const COUNTED: &[&str] = &[
    "read", "readv", "recvfrom", "recvmsg", "write", "writev", "sendto", "sendmsg", "sendfile64", "epoll_wait",
    "epoll_pwait", "epoll_ctl", "io_uring_enter", "futex", "accept4", "close",
];
/// What the total less the named calls is called.
pub const OTHER: &str = "other";
/// The counted calls by what they do for a request, as the report draws them; every call not named here
/// (epoll_ctl, accept4, close and the uncounted ones) is `OTHER`.
pub const KINDS: &[(&str, &[&str])] = &[
    ("receive", &["read", "readv", "recvfrom", "recvmsg", PROC_READS]),
    ("send", &["write", "writev", "sendto", "sendmsg", "sendfile64", PROC_WRITES]),
    ("wait", &["epoll_wait", "epoll_pwait", "io_uring_enter"]),
    ("futex", &["futex"]),
];
/// The method recorded in run.json for counts taken by the tracepoints.
pub const METHOD: &str = "tracepoints";
/// The method recorded for counts read from /proc/<pid>/io, and the names its two counts go by.
pub const PROC_METHOD: &str = "proc-io";
pub const PROC_READS: &str = "syscr";
pub const PROC_WRITES: &str = "syscw";

/// Where tracefs may be mounted.
const TRACEFS: &[&str] = &["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// Why system calls are not counted (or could not be read), as a person reads it. It travels to a server
/// host's agent as the string itself.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error("{0}")]
#[serde(transparent)]
pub struct NotCounted(pub String);

impl From<String> for NotCounted {
    fn from(reason: String) -> NotCounted {
        NotCounted(reason)
    }
}

impl From<&str> for NotCounted {
    fn from(reason: &str) -> NotCounted {
        NotCounted(reason.to_string())
    }
}

/// Calls counted over some span: all of them (absent where the method cannot count them all), and those of
/// each counted name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyscallCounts {
    pub total: Option<u64>,
    pub by_name: BTreeMap<String, u64>,
}

impl SyscallCounts {
    /// What was counted between `before` and `self`.
    pub fn since(&self, before: &SyscallCounts) -> SyscallCounts {
        SyscallCounts {
            total: self.total.zip(before.total).map(|(now, then)| now.saturating_sub(then)),
            by_name: self.by_name.iter().map(|(n, c)| (n.clone(), c.saturating_sub(before.by_name.get(n).copied().unwrap_or(0)))).collect(),
        }
    }

    /// The total less the named calls, where there is a total.
    pub fn other(&self) -> Option<u64> {
        self.total.map(|t| t.saturating_sub(self.by_name.values().sum()))
    }
}

/// How a span's system calls are counted.
#[derive(Debug)]
pub enum Counter {
    /// The tracepoints on the server's CPUs: every call, and the counted ones by name.
    Tracepoints(SyscallCounters),
    /// `/proc/<pid>/io` of the server's processes, read-like and write-like calls only, because the
    /// tracepoints could not be opened (why is kept).
    ProcIo { tracepoints_refused: NotCounted },
}

impl Counter {
    /// The tracepoints on `cpus`, else /proc.
    pub fn open(cpus: &[usize]) -> Counter {
        match SyscallCounters::open(cpus, COUNTED) {
            Ok(c) => Counter::Tracepoints(c),
            Err(why) => Counter::ProcIo { tracepoints_refused: why },
        }
    }

    /// The method run.json records.
    pub fn method(&self) -> &'static str {
        match self {
            Counter::Tracepoints(_) => METHOD,
            Counter::ProcIo { .. } => PROC_METHOD,
        }
    }

    /// The counts so far: of the CPUs, or of the processes `pids` (the server's tree as last read).
    pub fn read(&self, pids: impl Iterator<Item = i32>) -> Result<SyscallCounts, NotCounted> {
        match self {
            Counter::Tracepoints(c) => c.read(),
            Counter::ProcIo { tracepoints_refused } => proc_io(pids).map_err(|e| NotCounted(format!("{e}; the tracepoints were refused too: {tracepoints_refused}"))),
        }
    }
}

/// `syscr` and `syscw` summed over `pids`. A process that ended meanwhile is skipped (its calls are lost,
/// as its threads' CPU time is).
fn proc_io(pids: impl Iterator<Item = i32>) -> Result<SyscallCounts, NotCounted> {
    let (mut reads, mut writes, mut read_any) = (0u64, 0u64, false);
    let mut refused = None;
    for pid in pids {
        let text = match std::fs::read_to_string(format!("/proc/{pid}/io")) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                refused = Some(format!("cannot read /proc/{pid}/io: {e}"));
                continue;
            }
        };
        let field = |name: &str| text.lines().find_map(|l| l.strip_prefix(name)?.trim().parse::<u64>().ok());
        if let (Some(r), Some(w)) = (field("syscr:"), field("syscw:")) {
            (reads, writes, read_any) = (reads + r, writes + w, true);
        }
    }
    if !read_any {
        return Err(NotCounted(refused.unwrap_or_else(|| "no process of the server had a /proc/<pid>/io to read".into())));
    }
    Ok(SyscallCounts { total: None, by_name: [(PROC_READS.to_string(), reads), (PROC_WRITES.to_string(), writes)].into() })
}

/// Open counters: one perf event per tracepoint and CPU, those of a CPU in one group led by the counter of
/// every call, so that one read gives all of them at the same instant (read one after another, a reader
/// preempted between two reads saw the total fall short of the calls by name). Closed when dropped.
#[derive(Debug)]
pub struct SyscallCounters {
    /// Per CPU, the group's leader (every call), which reads the whole group.
    leaders: Vec<File>,
    /// The names counted, in the order of the group's members.
    names: Vec<String>,
    /// The members' own descriptors: a member stays in its group while open.
    _members: Vec<File>,
}

impl SyscallCounters {
    /// Counters of every call and of each of `names` on `cpus`. A name the kernel has no tracepoint for is
    /// left out (its calls count in the total only); Err says why nothing can be counted.
    pub fn open(cpus: &[usize], names: &[&str]) -> Result<SyscallCounters, NotCounted> {
        if cpus.is_empty() {
            return Err("no CPU to count on".into());
        }
        let events = events_dir()?;
        let total_id = tracepoint_id(&events.join("raw_syscalls/sys_enter/id"))?;
        let named: Vec<(String, u64)> = names
            .iter()
            .filter_map(|name| tracepoint_id(&events.join(format!("syscalls/sys_enter_{name}/id"))).ok().map(|id| (name.to_string(), id)))
            .collect();
        let (mut leaders, mut members) = (Vec::new(), Vec::new());
        for &cpu in cpus {
            let leader = open_on(total_id, cpu, None)?;
            for (_, id) in &named {
                members.push(open_on(*id, cpu, Some(&leader))?);
            }
            leaders.push(leader);
        }
        Ok(SyscallCounters { leaders, names: named.into_iter().map(|(name, _)| name).collect(), _members: members })
    }

    /// The counts since the counters were opened, summed over the CPUs.
    pub fn read(&self) -> Result<SyscallCounts, NotCounted> {
        let mut values = vec![0u64; 1 + self.names.len()];
        for mut leader in &self.leaders {
            // PERF_FORMAT_GROUP: the number of counters, then each one's value, the leader's first.
            let mut bytes = vec![0u8; 8 * (2 + self.names.len())];
            leader.read_exact(&mut bytes).map_err(|e| NotCounted(format!("reading a counter group failed: {e}")))?;
            let words: Vec<u64> = bytes.chunks_exact(8).map(|w| u64::from_ne_bytes(w.try_into().expect("8 bytes"))).collect();
            if words[0] as usize != values.len() {
                return Err(NotCounted(format!("a counter group read {} counters, not {}", words[0], values.len())));
            }
            values.iter_mut().zip(&words[1..]).for_each(|(sum, v)| *sum += v);
        }
        let by_name = self.names.iter().cloned().zip(values[1..].iter().copied()).collect();
        Ok(SyscallCounts { total: Some(values[0]), by_name })
    }
}

impl Drop for SyscallCounters {
    /// Closes the events on a thread of their own: closing the last event of a tracepoint waits for the
    /// kernel to see every CPU leave the tracepoint's probe (about 0.6 s on the 2-CPU VM, once a round), and
    /// the calls stop being counted before that wait, so the round need not sit through it.
    fn drop(&mut self) {
        let files = (std::mem::take(&mut self.leaders), std::mem::take(&mut self._members));
        // Where no thread can start, the closure that holds the files is dropped here, and closes them.
        let _ = std::thread::Builder::new().name("close-counters".into()).spawn(move || drop(files));
    }
}

/// The events folder of tracefs, mounting tracefs where it is not (as root only).
fn events_dir() -> Result<PathBuf, NotCounted> {
    let found = || TRACEFS.iter().map(|d| Path::new(d).join("events")).find(|e| e.join("raw_syscalls").is_dir());
    if let Some(events) = found() {
        return Ok(events);
    }
    // Mounting is what `mount -t tracefs nodev /sys/kernel/tracing` does; it fails harmlessly when not root.
    let mounted = Path::new(TRACEFS[0]).is_dir()
        // SAFETY: the three strings are NUL-terminated literals and the data pointer is null, which tracefs
        // takes as no options.
        && unsafe {
        libc::mount(c"nodev".as_ptr(), c"/sys/kernel/tracing".as_ptr(), c"tracefs".as_ptr(), 0, std::ptr::null())
    } == 0;
    found().ok_or_else(|| {
        let how = if mounted { "tracefs has no raw_syscalls events" } else { "tracefs is not mounted and could not be (needs root)" };
        NotCounted(format!("{how}: looked in {}", TRACEFS.join(" and ")))
    })
}

fn tracepoint_id(path: &Path) -> Result<u64, NotCounted> {
    let text = std::fs::read_to_string(path).map_err(|e| NotCounted(format!("cannot read {}: {e}", path.display())))?;
    text.trim().parse().map_err(|_| NotCounted(format!("{} holds no tracepoint id", path.display())))
}

/// The part of `struct perf_event_attr` the kernel reads first (PERF_ATTR_SIZE_VER0, 64 bytes); every
/// flag zero: enabled at once, user and kernel counted, no sampling.
#[repr(C)]
#[derive(Default)]
struct PerfEventAttr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
}

const PERF_TYPE_TRACEPOINT: u32 = 2;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;
/// read_format: one read of the leader gives every counter of its group.
const PERF_FORMAT_GROUP: u64 = 1 << 3;

/// A counter of tracepoint `id` on `cpu`, for every task: the leader of a group that reads as one
/// (PERF_FORMAT_GROUP), or a member of `group`.
fn open_on(id: u64, cpu: usize, group: Option<&File>) -> Result<File, NotCounted> {
    let attr = PerfEventAttr {
        kind: PERF_TYPE_TRACEPOINT,
        size: std::mem::size_of::<PerfEventAttr>() as u32,
        config: id,
        read_format: PERF_FORMAT_GROUP,
        ..Default::default()
    };
    let pid: libc::pid_t = -1;
    let group_fd = group.map_or(-1, |g| g.as_raw_fd());
    // SAFETY: `attr` is a live perf_event_attr whose `size` field is its own size, so the kernel reads no more
    // than it; `group_fd` is -1 or the descriptor of an open leader, which `group` keeps open; the other
    // arguments are integers.
    let fd = unsafe { libc::syscall(libc::SYS_perf_event_open, &attr as *const PerfEventAttr, pid, cpu as libc::c_int, group_fd, PERF_FLAG_FD_CLOEXEC) };
    if fd < 0 {
        return Err(refusal(std::io::Error::last_os_error(), cpu));
    }
    // SAFETY: `fd` (>= 0) was just returned by perf_event_open and nothing else holds it.
    Ok(unsafe { File::from_raw_fd(fd as i32) })
}

/// Why perf_event_open refused, with what to change.
fn refusal(e: std::io::Error, cpu: usize) -> NotCounted {
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").map(|s| s.trim().to_string()).unwrap_or_else(|_| "unknown".into());
    NotCounted(match e.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => format!(
            "perf_event_open on CPU {cpu} refused ({e}): counting every task of a CPU needs root or CAP_PERFMON (perf_event_paranoid is {paranoid})"
        ),
        Some(libc::ENOENT) | Some(libc::ENODEV) | Some(libc::EOPNOTSUPP) => format!("the kernel has no tracepoint events ({e})"),
        Some(libc::ENOSYS) => "the kernel has no perf_event_open".into(),
        _ => format!("perf_event_open on CPU {cpu} failed: {e}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_number_of_calls_is_counted() {
        let cpus = crate::os::cpus::CpuSet::allowed().cpus().to_vec();
        let counters = match SyscallCounters::open(&cpus, &["getppid", "read"]) {
            Ok(c) => c,
            Err(why) => return crate::testing::skip("os::syscalls::tests::a_known_number_of_calls_is_counted", &format!("tracepoints cannot be opened: {why}")),
        };
        let before = counters.read().unwrap();
        for _ in 0..1000 {
            // SAFETY: getppid takes no argument and cannot fail.
            unsafe { libc::getppid() };
        }
        let spent = counters.read().unwrap().since(&before);
        let getppid = spent.by_name["getppid"];
        assert!(getppid >= 1000, "1,000 getppid calls counted as {getppid}");
        // The reads of the counters themselves are calls too, and the total holds every named call.
        assert!(spent.by_name["read"] >= 1, "{spent:?}");
        let total = spent.total.expect("the tracepoints count every call");
        assert!(total >= getppid + spent.by_name["read"], "{spent:?}");
        assert_eq!(spent.other(), Some(total - getppid - spent.by_name["read"]));
    }

    #[test]
    fn every_kind_names_counted_calls_and_none_twice() {
        let mut seen = std::collections::BTreeSet::new();
        for (_, names) in KINDS {
            for name in *names {
                assert!(COUNTED.contains(name) || [PROC_READS, PROC_WRITES].contains(name), "{name} is not counted");
                assert!(seen.insert(*name), "{name} is of two kinds");
            }
        }
    }

    #[test]
    fn counts_since_are_differences_by_name() {
        let at = |total, read| SyscallCounts { total: Some(total), by_name: [("read".to_string(), read)].into() };
        let spent = at(10, 4).since(&at(3, 1));
        assert_eq!(spent, at(7, 3));
        assert_eq!(spent.other(), Some(4));
    }

    #[test]
    fn proc_io_counts_this_processes_reads_and_writes() {
        let me = std::process::id() as i32;
        let before = proc_io([me].into_iter()).expect("a process may read its own /proc/<pid>/io");
        let (mut r, mut w) = (std::fs::File::open("/dev/zero").unwrap(), std::fs::OpenOptions::new().write(true).open("/dev/null").unwrap());
        let mut buf = [0u8; 16];
        for _ in 0..100 {
            std::io::Read::read_exact(&mut r, &mut buf).unwrap();
            std::io::Write::write_all(&mut w, &buf).unwrap();
        }
        let spent = proc_io([me].into_iter()).unwrap().since(&before);
        assert_eq!(spent.total, None, "/proc gives no total");
        // Other tests of this binary may read and write meanwhile: at least ours.
        assert!(spent.by_name[PROC_READS] >= 100 && spent.by_name[PROC_WRITES] >= 100, "{spent:?}");
        assert!(proc_io([i32::MAX].into_iter()).is_err(), "no process, no counts");
    }
}
