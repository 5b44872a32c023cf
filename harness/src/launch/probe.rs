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
use crate::os::proc::{all_processes, page_bytes, pss_bytes, tree, ProcKey, ProcStat};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How often a sampler reads /proc during a round.
pub const SAMPLE_INTERVAL: Duration = Duration::from_millis(100);

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
