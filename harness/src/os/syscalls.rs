//! System calls counted by the kernel's tracepoints on a set of CPUs: `raw_syscalls:sys_enter` for all of
//! them and `syscalls:sys_enter_<name>` for each counted name, one counting (not sampling) perf event per
//! tracepoint and CPU, for every task that runs there. The runner pins a server to CPUs of its own and
//! flags a round in which anything else ran on them, so on those CPUs the counts are the server's.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::os::fd::FromRawFd;
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
    ("receive", &["read", "readv", "recvfrom", "recvmsg"]),
    ("send", &["write", "writev", "sendto", "sendmsg", "sendfile64"]),
    ("wait", &["epoll_wait", "epoll_pwait", "io_uring_enter"]),
    ("futex", &["futex"]),
];
/// The method recorded in run.json for counts taken here.
pub const METHOD: &str = "tracepoints";

/// Where tracefs may be mounted.
const TRACEFS: &[&str] = &["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// Calls counted over some span: all of them, and those of each counted name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyscallCounts {
    pub total: u64,
    pub by_name: BTreeMap<String, u64>,
}

impl SyscallCounts {
    /// What was counted between `before` and `self`.
    pub fn since(&self, before: &SyscallCounts) -> SyscallCounts {
        SyscallCounts {
            total: self.total.saturating_sub(before.total),
            by_name: self.by_name.iter().map(|(n, c)| (n.clone(), c.saturating_sub(before.by_name.get(n).copied().unwrap_or(0)))).collect(),
        }
    }

    /// The total less the named calls.
    pub fn other(&self) -> u64 {
        self.total.saturating_sub(self.by_name.values().sum())
    }
}

/// Open counters: one perf event per tracepoint and CPU. Closed when dropped.
#[derive(Debug)]
pub struct SyscallCounters {
    total: Vec<File>,
    by_name: Vec<(String, Vec<File>)>,
}

impl SyscallCounters {
    /// Counters of every call and of each of `names` on `cpus`. A name the kernel has no tracepoint for is
    /// left out (its calls count in the total only); Err says why nothing can be counted.
    pub fn open(cpus: &[usize], names: &[&str]) -> Result<SyscallCounters, String> {
        if cpus.is_empty() {
            return Err("no CPU to count on".into());
        }
        let events = events_dir()?;
        let total_id = tracepoint_id(&events.join("raw_syscalls/sys_enter/id"))?;
        let total = open_on(total_id, cpus)?;
        let mut by_name = Vec::new();
        for name in names {
            let Ok(id) = tracepoint_id(&events.join(format!("syscalls/sys_enter_{name}/id"))) else { continue };
            by_name.push((name.to_string(), open_on(id, cpus)?));
        }
        Ok(SyscallCounters { total, by_name })
    }

    /// The counts since the counters were opened, summed over the CPUs.
    pub fn read(&self) -> Result<SyscallCounts, String> {
        let mut by_name = BTreeMap::new();
        for (name, files) in &self.by_name {
            by_name.insert(name.clone(), sum(files)?);
        }
        Ok(SyscallCounts { total: sum(&self.total)?, by_name })
    }
}

/// The events folder of tracefs, mounting tracefs where it is not (as root only).
fn events_dir() -> Result<PathBuf, String> {
    let found = || TRACEFS.iter().map(|d| Path::new(d).join("events")).find(|e| e.join("raw_syscalls").is_dir());
    if let Some(events) = found() {
        return Ok(events);
    }
    // Mounting is what `mount -t tracefs nodev /sys/kernel/tracing` does; it fails harmlessly when not root.
    let mounted = Path::new(TRACEFS[0]).is_dir() && unsafe {
        libc::mount(c"nodev".as_ptr(), c"/sys/kernel/tracing".as_ptr(), c"tracefs".as_ptr(), 0, std::ptr::null())
    } == 0;
    found().ok_or_else(|| {
        let how = if mounted { "tracefs has no raw_syscalls events" } else { "tracefs is not mounted and could not be (needs root)" };
        format!("{how}: looked in {}", TRACEFS.join(" and "))
    })
}

fn tracepoint_id(path: &Path) -> Result<u64, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    text.trim().parse().map_err(|_| format!("{} holds no tracepoint id", path.display()))
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

/// One counter of tracepoint `id` on each of `cpus`, for every task.
fn open_on(id: u64, cpus: &[usize]) -> Result<Vec<File>, String> {
    let attr = PerfEventAttr { kind: PERF_TYPE_TRACEPOINT, size: std::mem::size_of::<PerfEventAttr>() as u32, config: id, ..Default::default() };
    cpus.iter()
        .map(|&cpu| {
            let pid: libc::pid_t = -1;
            let fd = unsafe { libc::syscall(libc::SYS_perf_event_open, &attr as *const PerfEventAttr, pid, cpu as libc::c_int, -1 as libc::c_int, PERF_FLAG_FD_CLOEXEC) };
            if fd < 0 {
                return Err(refusal(std::io::Error::last_os_error(), cpu));
            }
            Ok(unsafe { File::from_raw_fd(fd as i32) })
        })
        .collect()
}

/// Why perf_event_open refused, with what to change.
fn refusal(e: std::io::Error, cpu: usize) -> String {
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").map(|s| s.trim().to_string()).unwrap_or_else(|_| "unknown".into());
    match e.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => format!(
            "perf_event_open on CPU {cpu} refused ({e}): counting every task of a CPU needs root or CAP_PERFMON (perf_event_paranoid is {paranoid})"
        ),
        Some(libc::ENOENT) | Some(libc::ENODEV) | Some(libc::EOPNOTSUPP) => format!("the kernel has no tracepoint events ({e})"),
        Some(libc::ENOSYS) => "the kernel has no perf_event_open".into(),
        _ => format!("perf_event_open on CPU {cpu} failed: {e}"),
    }
}

fn sum(files: &[File]) -> Result<u64, String> {
    files.iter().try_fold(0u64, |total, mut f| {
        let mut value = [0u8; 8];
        f.read_exact(&mut value).map_err(|e| format!("reading a counter failed: {e}"))?;
        Ok(total + u64::from_ne_bytes(value))
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
            // Unit tests have no skip log; with CI=true a missing method is a failure, as in the other tests.
            Err(why) if std::env::var("CI").as_deref() != Ok("true") => return eprintln!("SKIPPED a_known_number_of_calls_is_counted: {why}"),
            Err(why) => panic!("tracepoints cannot be opened: {why}"),
        };
        let before = counters.read().unwrap();
        for _ in 0..1000 {
            unsafe { libc::getppid() };
        }
        let spent = counters.read().unwrap().since(&before);
        let getppid = spent.by_name["getppid"];
        assert!(getppid >= 1000, "1,000 getppid calls counted as {getppid}");
        // The reads of the counters themselves are calls too, and the total holds every named call.
        assert!(spent.by_name["read"] >= 1, "{spent:?}");
        assert!(spent.total >= getppid + spent.by_name["read"], "{spent:?}");
        assert_eq!(spent.other(), spent.total - getppid - spent.by_name["read"]);
    }

    #[test]
    fn every_kind_names_counted_calls_and_none_twice() {
        let mut seen = std::collections::BTreeSet::new();
        for (_, names) in KINDS {
            for name in *names {
                assert!(COUNTED.contains(name), "{name} is not counted");
                assert!(seen.insert(*name), "{name} is of two kinds");
            }
        }
        // Per request: a read, a write, an epoll_wait per 50, and an accept4 per 100 (of no kind: other).
        let counts = SyscallCounts {
            total: 20_300,
            by_name: [("read", 10_000), ("write", 10_000), ("epoll_wait", 200), ("accept4", 100)].map(|(n, c)| (n.to_string(), c)).into(),
        };
        let per = crate::model::SyscallsPerRequest::of(&counts, 10_000).unwrap();
        assert_eq!(per.by_kind(), vec![1.0, 1.0, 0.02, 0.0, 0.01]);
    }

    #[test]
    fn counts_since_are_differences_by_name() {
        let at = |total, read| SyscallCounts { total, by_name: [("read".to_string(), read)].into() };
        let spent = at(10, 4).since(&at(3, 1));
        assert_eq!(spent, at(7, 3));
        assert_eq!(spent.other(), 4);
    }
}
