//! Resource probe: CPU time and resident memory of a whole process tree, read from /proc.
//!
//! The tree is the server's process group plus every descendant of its leader (found through the ppid
//! field of /proc/<pid>/stat), so a child that starts its own session is still counted. A process's CPU
//! time is utime + stime + cutime + cstime: the last two carry the time of children it has reaped. A child
//! seen during the round that is gone by its end was reaped by its parent, whose cutime/cstime now hold its
//! whole life, so only the part before the round is subtracted for it. Memory is the sum of the tree's
//! resident set sizes at each sample (shared pages of prefork children count once per process, as `ps`
//! shows them); the peak is the largest sum seen.

use crate::os::cpustat::ticks_per_s;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How often a sampler reads /proc during a round.
pub const SAMPLE_INTERVAL: Duration = Duration::from_millis(100);

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

    /// Parses the text of /proc/<pid>/stat. The command name is in parentheses and may hold spaces or
    /// parentheses itself, so fields are counted from the last ')'.
    pub fn parse(text: &str) -> Option<ProcStat> {
        let open = text.find('(')?;
        let close = text.rfind(')')?;
        let pid = text[..open].trim().parse().ok()?;
        let comm = text[open + 1..close].to_string();
        let f: Vec<&str> = text[close + 1..].split_whitespace().collect();
        // f[0] is field 3 (state) of proc(5).
        let num = |i: usize| f.get(i).and_then(|v| v.parse::<i64>().ok());
        Some(ProcStat {
            pid,
            comm,
            state: f.first()?.chars().next()?,
            ppid: num(1)? as i32,
            pgrp: num(2)? as i32,
            cpu_ticks: (num(11)? + num(12)? + num(13)?.max(0) + num(14)?.max(0)) as u64,
            start_ticks: num(19)? as u64,
            rss_pages: num(21)?.max(0) as u64,
        })
    }

    pub fn read(pid: i32) -> Option<ProcStat> {
        ProcStat::parse(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
    }

    pub fn is_zombie(&self) -> bool {
        matches!(self.state, 'Z' | 'X')
    }
}

/// Every process visible in /proc.
pub fn all_processes() -> Vec<ProcStat> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
        .filter_map(ProcStat::read)
        .collect()
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
    processes.iter().map(|p| {
        let text = std::fs::read_to_string(format!("/proc/{}/smaps_rollup", p.pid)).ok()?;
        let kb = text.lines().find_map(|l| l.strip_prefix("Pss:"))?.trim().trim_end_matches("kB").trim().parse::<u64>().ok()?;
        Some(kb * 1024)
    }).sum()
}

fn page_bytes() -> u64 {
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 { p as u64 } else { 4096 }
}

/// What a probe saw over its window. Both figures are absent when no sample found a process of the tree
/// (it was gone, or /proc could not be read): a zero would pass for a measurement.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Usage {
    pub cpu_s: Option<f64>,
    pub peak_rss_bytes: Option<u64>,
    /// Proportional set size of the tree at the end of the window (shared pages divided among the processes
    /// that share them), from /proc/<pid>/smaps_rollup; absent when it could not be read.
    pub pss_bytes: Option<u64>,
    /// Every process seen in the tree.
    pub members: Vec<ProcKey>,
}

/// Accumulates samples of one process tree between `start` and `finish`.
#[derive(Debug)]
pub struct Probe {
    root: i32,
    pgid: i32,
    start: HashMap<ProcKey, u64>,
    /// Last seen CPU ticks and parent of each member.
    last: HashMap<ProcKey, (u64, i32)>,
    peak_rss_pages: u64,
}

impl Probe {
    /// Takes the first sample: the CPU time already spent is the baseline.
    pub fn start(root: i32, pgid: i32) -> Probe {
        let mut probe = Probe { root, pgid, start: HashMap::new(), last: HashMap::new(), peak_rss_pages: 0 };
        let now = probe.read();
        probe.start = now.iter().map(|p| (p.key(), p.cpu_ticks)).collect();
        probe.record(&now);
        probe
    }

    fn read(&self) -> Vec<ProcStat> {
        tree(self.root, self.pgid, &all_processes())
    }

    fn record(&mut self, now: &[ProcStat]) {
        for p in now {
            self.last.insert(p.key(), (p.cpu_ticks, p.ppid));
        }
        self.peak_rss_pages = self.peak_rss_pages.max(now.iter().map(|p| p.rss_pages).sum());
    }

    pub fn sample(&mut self) {
        let now = self.read();
        self.record(&now);
    }

    /// Takes the last sample and accounts the window.
    pub fn finish(mut self) -> Usage {
        let now = self.read();
        self.record(&now);
        let alive: HashSet<ProcKey> = now.iter().map(ProcStat::key).collect();
        let alive_pids: HashSet<i32> = now.iter().map(|p| p.pid).collect();
        let mut ticks: i64 = 0;
        for (key, (last, ppid)) in &self.last {
            let before = *self.start.get(key).unwrap_or(&0) as i64;
            if alive.contains(key) || !alive_pids.contains(ppid) {
                ticks += *last as i64 - before;
            } else {
                // Reaped by a parent still in the tree: the parent's cutime/cstime hold its whole life.
                ticks -= before;
            }
        }
        let seen = !self.last.is_empty();
        Usage {
            cpu_s: seen.then(|| ticks.max(0) as f64 / ticks_per_s()),
            peak_rss_bytes: seen.then(|| self.peak_rss_pages * page_bytes()),
            pss_bytes: pss_bytes(&now),
            members: self.last.keys().copied().collect(),
        }
    }
}

/// A probe sampling on its own thread until finished.
pub struct Sampler {
    done: Arc<AtomicBool>,
    handle: JoinHandle<Probe>,
}

impl Sampler {
    pub fn spawn(root: i32, pgid: i32) -> Sampler {
        let done = Arc::new(AtomicBool::new(false));
        let mut probe = Probe::start(root, pgid);
        let flag = done.clone();
        let handle = std::thread::Builder::new()
            .name("probe".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    std::thread::park_timeout(SAMPLE_INTERVAL);
                    probe.sample();
                }
                probe
            })
            .expect("spawning the probe thread");
        Sampler { done, handle }
    }

    pub fn finish(self) -> Usage {
        self.done.store(true, Ordering::Relaxed);
        self.handle.thread().unpark();
        self.handle.join().expect("the probe thread does not panic").finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_stat_line_with_an_awkward_name() {
        let line = "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 7 3 20 0 4 0 98765 1000000 321 18446744073709551615";
        let p = ProcStat::parse(line).unwrap();
        assert_eq!(p.pid, 4242);
        assert_eq!(p.comm, "a (b) c");
        assert_eq!((p.state, p.ppid, p.pgrp), ('S', 1, 4242));
        assert_eq!(p.cpu_ticks, 250 + 50 + 7 + 3);
        assert_eq!(p.start_ticks, 98765);
        assert_eq!(p.rss_pages, 321);
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
