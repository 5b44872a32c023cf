//! CPU sets: taskset-style lists ("0-3,6"), the CPUs this process may use, and the default split between
//! server and client.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What `CpuSet::allowed` said before `pin_process` pinned the threads, while it holds them.
static PINNED_FROM: std::sync::Mutex<Option<CpuSet>> = std::sync::Mutex::new(None);

/// Holds every thread of this process on some CPUs until dropped, then gives them back the CPUs they had.
#[derive(Debug)]
pub struct PinnedProcess {
    before: CpuSet,
    /// Threads that could not be pinned.
    pub failed: usize,
}

/// Pins every thread of this process to `cpus` (threads started later inherit the mask of the thread that
/// starts them) until the returned guard is dropped.
pub fn pin_process(cpus: &CpuSet) -> PinnedProcess {
    let before = CpuSet::allowed();
    let failed = set_all_threads(cpus);
    *PINNED_FROM.lock().unwrap_or_else(|e| e.into_inner()) = Some(before.clone());
    PinnedProcess { before, failed }
}

impl Drop for PinnedProcess {
    fn drop(&mut self) {
        set_all_threads(&self.before);
        *PINNED_FROM.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// Pins the calling thread to one CPU.
pub fn pin_current_thread(cpu: usize) -> std::io::Result<()> {
    let set = CpuSet::new(vec![cpu]).to_libc();
    // SAFETY: `set` is a live cpu_set_t and the size passed is its own; the kernel only reads it.
    if unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Sets the affinity of every thread of this process; returns how many could not be set.
fn set_all_threads(cpus: &CpuSet) -> usize {
    let set = cpus.to_libc();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return 1 };
    let mut failed = 0;
    for t in tasks.flatten() {
        let Some(tid) = t.file_name().to_str().and_then(|s| s.parse::<libc::pid_t>().ok()) else { continue };
        // SAFETY: as above; a thread that ended meanwhile is an error, counted.
        if unsafe { libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) } != 0 {
            failed += 1;
        }
    }
    failed
}

/// A CPU list that does not parse; the message shows how to write one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadCpuList(pub String);

/// The CPU numbers of a list such as `1`, `0,2` or `0-3,6` (as taskset -c takes it), in the order
/// written: the load generator pins its threads in that order. The one parser of CPU lists.
pub fn parse_list(text: &str) -> Result<Vec<usize>, BadCpuList> {
    let mut cpus = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || BadCpuList(format!("'{text}' is not a CPU list; write it like taskset -c: 1 or 0,2 or 0-3,6"));
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.trim().parse().map_err(|_| bad())?, b.trim().parse().map_err(|_| bad())?);
                if a > b {
                    return Err(BadCpuList(format!("CPU range '{part}' runs backwards")));
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(part.parse().map_err(|_| bad())?),
        }
    }
    if cpus.is_empty() {
        return Err(BadCpuList(format!("empty CPU list '{text}'")));
    }
    Ok(cpus)
}

/// A sorted set of CPU numbers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuSet(Vec<usize>);

impl CpuSet {
    pub fn new(mut cpus: Vec<usize>) -> CpuSet {
        cpus.sort_unstable();
        cpus.dedup();
        CpuSet(cpus)
    }

    /// Parses a list such as `1`, `0,2` or `0-3,6` (as taskset -c takes it).
    pub fn parse(text: &str) -> Result<CpuSet, BadCpuList> {
        parse_list(text).map(CpuSet::new)
    }

    /// The CPUs this process may run on (its affinity mask); while `pin_process` holds its threads on
    /// fewer, the CPUs it had before.
    pub fn allowed() -> CpuSet {
        if let Some(before) = PINNED_FROM.lock().unwrap_or_else(|e| e.into_inner()).clone() {
            return before;
        }
        // SAFETY: cpu_set_t is an array of integers, for which all zeroes is a valid value (the empty set).
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: `set` is a live, exclusively borrowed cpu_set_t and the size passed is its own, the most the
        // kernel writes.
        let ok = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } == 0;
        let cpus: Vec<usize> = if ok {
            // SAFETY: CPU_ISSET only indexes the set's array, with bounds checks; `c` < CPU_SETSIZE is inside it.
            (0..libc::CPU_SETSIZE as usize).filter(|&c| unsafe { libc::CPU_ISSET(c, &set) }).collect()
        } else {
            (0..std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).collect()
        };
        CpuSet::new(cpus)
    }

    pub fn cpus(&self) -> &[usize] {
        &self.0
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn first(&self) -> CpuSet {
        CpuSet(self.0.iter().take(1).copied().collect())
    }
    pub fn is_subset_of(&self, other: &CpuSet) -> bool {
        self.0.iter().all(|c| other.0.contains(c))
    }
    pub fn overlaps(&self, other: &CpuSet) -> bool {
        self.0.iter().any(|c| other.0.contains(c))
    }

    pub fn to_libc(&self) -> libc::cpu_set_t {
        // SAFETY: as in `allowed`: all zeroes is the empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for &c in &self.0 {
            // SAFETY: CPU_SET only indexes the set's array, with bounds checks (a CPU past CPU_SETSIZE panics).
            unsafe { libc::CPU_SET(c, &mut set) };
        }
        set
    }

    /// Default split: the server on the upper half of the CPUs (at least one), the client on the rest.
    /// With a single CPU both share it.
    pub fn split(allowed: &CpuSet) -> (CpuSet, CpuSet) {
        let n = allowed.len();
        if n <= 1 {
            return (allowed.clone(), allowed.clone());
        }
        let server_count = (n / 2).max(1);
        let (client, server) = allowed.0.split_at(n - server_count);
        (CpuSet(server.to_vec()), CpuSet(client.to_vec()))
    }
}

impl fmt::Display for CpuSet {
    /// Compact form: `0-3,6`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        let mut i = 0;
        while i < self.0.len() {
            let start = self.0[i];
            let mut end = start;
            while i + 1 < self.0.len() && self.0[i + 1] == end + 1 {
                i += 1;
                end = self.0[i];
            }
            parts.push(if start == end { start.to_string() } else { format!("{start}-{end}") });
            i += 1;
        }
        f.write_str(&parts.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_taskset_lists() {
        let s = CpuSet::parse("6, 0-3,2").unwrap();
        assert_eq!(s.cpus(), &[0, 1, 2, 3, 6]);
        assert_eq!(s.to_string(), "0-3,6");
        assert!(CpuSet::parse("a").is_err());
        assert!(CpuSet::parse("3-1").is_err());
        assert!(CpuSet::parse("").is_err());
        assert_eq!(parse_list("5,0-2").unwrap(), vec![5, 0, 1, 2]);
        assert!(parse_list("x").unwrap_err().to_string().contains("CPU list"));
    }

    #[test]
    fn server_takes_the_upper_half() {
        let two = CpuSet::new(vec![0, 1]);
        assert_eq!(CpuSet::split(&two), (CpuSet::new(vec![1]), CpuSet::new(vec![0])));
        let three = CpuSet::new(vec![0, 1, 2]);
        assert_eq!(CpuSet::split(&three), (CpuSet::new(vec![2]), CpuSet::new(vec![0, 1])));
        let eight = CpuSet::new((0..8).collect());
        assert_eq!(CpuSet::split(&eight).0.to_string(), "4-7");
        let one = CpuSet::new(vec![5]);
        assert_eq!(CpuSet::split(&one), (one.clone(), one.clone()));
    }

    #[test]
    fn this_process_may_run_somewhere() {
        assert!(!CpuSet::allowed().is_empty());
    }
}
