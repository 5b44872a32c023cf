//! Resource probe: CPU time and resident memory of a whole process tree, read from /proc.
//!
//! The tree is the server's process group plus every descendant of its leader (found through the ppid
//! field of /proc/<pid>/stat), so a child that starts its own session is still counted. A process's CPU
//! time is utime + stime + cutime + cstime: the last two carry the time of children it has reaped. A child
//! seen during the round that is gone by its end was reaped by its parent, whose cutime/cstime now hold its
//! whole life, so only the part before the round is subtracted for it. Memory is the sum of the tree's
//! resident set sizes at each sample (shared pages of prefork children count once per process, as `ps`
//! shows them); the peak is the largest sum seen.
//!
//! A sampler can be told the edges of a measured window (`Sampler::marks`): it then reads the tree's CPU
//! time and the CPUs' counters (/proc/stat) at those edges, on its own thread as soon as it is woken, so
//! that the server's figures cover the same window as the client's and not the connection set-up and
//! teardown around it.
//!
//! Given counters of the server's CPUs (`os::syscalls`), the sampler reads them at the same edges: the
//! system calls made on those CPUs within the window.
//!
//! At each sample inside the window (over the whole life when no window was marked) the probe also counts
//! the scheduler state of every thread of the tree, which says what an unsaturated server was doing.

use crate::os::cpustat::{ticks_per_s, CpuStat};
use crate::model::ThreadStates;
use crate::os::syscalls::{Counter, NotCounted, SyscallCounts};
use crate::os::proc::{all_processes, page_bytes, pss_bytes, thread_costs, thread_states, tree, ProcKey, ProcStat, ThreadCost};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;
use std::thread::{JoinHandle, Thread};
use std::time::{Duration, Instant};

/// How often a sampler reads /proc during a round.
pub const SAMPLE_INTERVAL: Duration = Duration::from_millis(100);
/// Every this many samples (and at the window's edges) the whole of /proc is read to find new members of the
/// tree; the samples between read only the members already known. Reading every process on the machine
/// takes the client's CPU for a millisecond or more, which in rate mode delayed the requests due meanwhile:
/// with a full read every 100 ms, c-epoll at 5,000 req/s showed a p99 of 830 µs in a bench round against
/// 84 µs from `serverbench load` alone.
pub const FULL_READ_EVERY: u32 = 10;

/// What a probe saw over its window. Both figures are absent when no sample found a process of the tree
/// (it was gone, or /proc could not be read): a zero would pass for a measurement.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Usage {
    pub cpu_s: Option<f64>,
    pub peak_rss_bytes: Option<u64>,
    /// Proportional set size of the tree at the end of the window (shared pages divided among the processes
    /// that share them), from /proc/<pid>/smaps_rollup; absent when it could not be read.
    pub pss_bytes: Option<u64>,
    /// Every process seen in the tree.
    pub members: Vec<ProcKey>,
    /// The measured window the figures cover, when the sampler was told its edges; else they cover the
    /// sampler's whole life.
    pub window: Option<Window>,
    /// The tree's threads by scheduler state over the same span; absent when no thread was read.
    pub threads: Option<ThreadStates>,
    /// CPU seconds each thread of the tree ran within the measured window (threads of every process, those
    /// started inside the window included); empty when no window was marked.
    pub thread_cpu_s: Vec<f64>,
    /// What the tree's threads spent within the measured window, summed; absent when no window was marked
    /// or no thread could be read. Threads that ended inside the window are missing from it.
    pub thread_cost: Option<ThreadCost>,
    /// The tree's CPU seconds in the window from the threads' exact run time (schedstat, in ns), where
    /// it covers the window: no thread or process of the tree ended inside it. Absent otherwise (a thread
    /// per connection that closed, a forked child that exited): then only `cpu_s`, in clock ticks, holds
    /// their time.
    #[serde(default)]
    pub cpu_exact_s: Option<f64>,
    /// The system calls made on the server's CPUs over the same span; absent with the reason in
    /// `syscalls_unavailable` when they could not be counted.
    pub syscalls: Option<SyscallCounts>,
    /// How they were counted (`os::syscalls::Counter::method`).
    pub syscalls_method: Option<String>,
    pub syscalls_unavailable: Option<String>,
}

/// A measured window as the sampler read it at its edges.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Window {
    pub wall_s: f64,
    /// The CPUs' counters at the opening and the closing edge; absent when /proc/stat could not be read.
    pub stat_open: Option<CpuStat>,
    pub stat_close: Option<CpuStat>,
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
    /// Thread states counted since the window opened (since the start before it does).
    states: ThreadStates,
    /// The pids of the tree at the last full read, and the samples taken so far.
    known: Vec<ProcKey>,
    samples: u32,
    /// When the measured window opened, and the CPUs' counters then.
    opened: Option<(Instant, Option<CpuStat>)>,
    /// What each thread had spent when the window opened, by (process, thread id), and each process's
    /// user and kernel ticks.
    threads_at_open: HashMap<(ProcKey, i32), ThreadCost>,
    ticks_at_open: HashMap<ProcKey, (u64, u64)>,
    /// The figures at the closing edge.
    closed: Option<Usage>,
    /// The system call counters, or why there are none; their reading at the start of the span.
    syscalls: Result<Counter, NotCounted>,
    syscalls_at_open: Option<SyscallCounts>,
}

impl Probe {
    /// Takes the first sample: the CPU time already spent is the baseline; `syscalls` (the counters, or
    /// why there are none) is read at the same edges as the CPU time.
    pub fn start(root: i32, pgid: i32, syscalls: Result<Counter, NotCounted>) -> Probe {
        let mut probe = Probe { root, pgid, start: HashMap::new(), last: HashMap::new(), peak_rss_pages: 0, states: ThreadStates::default(), known: Vec::new(), samples: 0, opened: None, threads_at_open: HashMap::new(), ticks_at_open: HashMap::new(), closed: None, syscalls, syscalls_at_open: None };
        let now = probe.read();
        probe.syscalls_at_open = probe.count_syscalls().ok();
        probe.start = now.iter().map(|p| (p.key(), p.cpu_ticks)).collect();
        probe.record(&now);
        probe.count_states(&now);
        probe
    }

    fn read(&mut self) -> Vec<ProcStat> {
        let now = tree(self.root, self.pgid, &all_processes());
        self.known = now.iter().map(ProcStat::key).collect();
        now
    }

    /// The members found by the last full read, those still alive (a pid taken since by another process is
    /// not one of them).
    fn read_known(&self) -> Vec<ProcStat> {
        self.known.iter().filter_map(|k| ProcStat::read(k.0).filter(|p| p.key() == *k)).collect()
    }

    fn record(&mut self, now: &[ProcStat]) {
        for p in now {
            self.last.insert(p.key(), (p.cpu_ticks, p.ppid));
        }
        self.peak_rss_pages = self.peak_rss_pages.max(now.iter().map(|p| p.rss_pages).sum());
    }

    /// Counts the state of every thread of `now`, until the window closes.
    fn count_states(&mut self, now: &[ProcStat]) {
        if self.closed.is_none() {
            self.states.add_sample(now.iter().flat_map(|p| thread_states(p.pid)));
        }
    }

    pub fn sample(&mut self) {
        self.samples += 1;
        let now = if self.samples.is_multiple_of(FULL_READ_EVERY) { self.read() } else { self.read_known() };
        self.record(&now);
        self.count_states(&now);
    }

    /// The measured window opens: the CPU time spent so far is the new baseline.
    pub fn open_window(&mut self) {
        // Read in the reverse order of `close_window`, so that each reading spans the same window.
        let at = Instant::now();
        let stat = CpuStat::read();
        let now = self.read();
        self.syscalls_at_open = self.count_syscalls().ok();
        self.start = now.iter().map(|p| (p.key(), p.cpu_ticks)).collect();
        // A process that ended before the window has no part in it.
        self.last.clear();
        self.record(&now);
        self.threads_at_open = costs_by_thread(&now);
        self.ticks_at_open = now.iter().map(|p| (p.key(), (p.user_ticks, p.system_ticks))).collect();
        self.opened = Some((at, stat));
        self.closed = None;
        self.states = ThreadStates::default();
        self.count_states(&now);
    }

    /// The measured window closes: the figures are taken now; later samples no longer change them.
    pub fn close_window(&mut self) {
        let Some((opened_at, stat_open)) = self.opened.take() else { return };
        // One read of the tree serves the CPU totals and the threads.
        let now = self.read();
        let mut usage = self.account(&now);
        let threads = costs_by_thread(&now);
        let spent: Vec<ThreadCost> = threads
            .iter()
            .map(|(key, cost)| cost.since(&self.threads_at_open.get(key).copied().unwrap_or_default()))
            .collect();
        usage.thread_cpu_s = spent.iter().map(|c| c.cpu_ns as f64 / 1e9).collect();
        let exact_ns: u64 = spent.iter().map(|c| c.cpu_ns).sum();
        usage.cpu_exact_s = (!spent.is_empty() && self.nothing_ended(&now, &threads, &usage.members)).then(|| exact_ns as f64 / 1e9);
        usage.thread_cost = (!spent.is_empty()).then(|| {
            let mut sum = spent.iter().fold(ThreadCost::zero(), |mut sum, c| {
                sum.add(c);
                sum
            });
            // A thread's user and kernel ticks are whole ticks of its own life: threads that live for one
            // round and run a few ms each (a thread per connection) show none. The processes' ticks, which
            // add up every thread's time before rounding, then give the user/kernel split.
            let (user, system) = now.iter().fold((0, 0), |(u, s), p| {
                let (u0, s0) = self.ticks_at_open.get(&p.key()).copied().unwrap_or_default();
                (u + p.user_ticks.saturating_sub(u0), s + p.system_ticks.saturating_sub(s0))
            });
            if user + system > sum.user_ticks + sum.system_ticks {
                (sum.user_ticks, sum.system_ticks) = (user, system);
            }
            sum
        });
        self.account_syscalls(&mut usage);
        let stat_close = CpuStat::read();
        let wall_s = opened_at.elapsed().as_secs_f64();
        usage.window = Some(Window { wall_s, stat_open, stat_close });
        self.closed = Some(usage);
    }

    /// Takes the last sample and accounts the window: the measured window when one was closed, else the
    /// probe's whole life.
    pub fn finish(mut self) -> Usage {
        match self.closed.take() {
            Some(usage) => usage,
            None => {
                let now = self.read();
                let mut usage = self.account(&now);
                self.account_syscalls(&mut usage);
                usage
            }
        }
    }

    /// Accounts the window up to `now`, a read of the tree just taken.
    fn account(&mut self, now: &[ProcStat]) -> Usage {
        self.record(now);
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
            pss_bytes: pss_bytes(now),
            members: self.last.keys().copied().collect(),
            window: None,
            threads: (self.states.samples > 0).then_some(self.states),
            thread_cpu_s: Vec::new(),
            thread_cost: None,
            cpu_exact_s: None,
            syscalls: None,
            syscalls_method: None,
            syscalls_unavailable: None,
        }
    }

    /// The system calls so far: on the server's CPUs, or of the tree's processes as last read.
    fn count_syscalls(&self) -> Result<SyscallCounts, NotCounted> {
        self.syscalls.as_ref().map_err(Clone::clone)?.read(self.known.iter().map(|k| k.0))
    }

    /// The system calls since the span opened, or why they are missing.
    fn account_syscalls(&self, usage: &mut Usage) {
        let counted = match (self.count_syscalls(), &self.syscalls_at_open) {
            (Ok(now), Some(open)) => Ok(now.since(open)),
            (Err(why), _) => Err(why),
            (Ok(_), None) => Err("the counters could not be read when the window opened".into()),
        };
        (usage.syscalls, usage.syscalls_method, usage.syscalls_unavailable) = match counted {
            Ok(c) => (Some(c), self.syscalls.as_ref().ok().map(|c| c.method().to_string()), None),
            Err(why) => (None, None, Some(why.0)),
        };
    }
}

impl Probe {
    /// Whether every thread and process of the tree that ran in the window is still there at its close
    /// (`now`), so that the threads' run times hold all of the window's CPU time. A thread that ended is
    /// seen three ways: it was there at the opening and is gone; or, started and ended between two reads,
    /// its process's own clock ticks (which keep ended threads' time) outgrow its live threads' by more
    /// than their rounding; a process that ended is missing from `now`, or its time moved to its parent's
    /// children's ticks.
    fn nothing_ended(&self, now: &[ProcStat], threads: &HashMap<(ProcKey, i32), ThreadCost>, members: &[ProcKey]) -> bool {
        let alive: HashSet<ProcKey> = now.iter().map(ProcStat::key).collect();
        if !members.iter().all(|k| alive.contains(k)) {
            return false;
        }
        if !self.threads_at_open.keys().all(|k| threads.contains_key(k)) {
            return false;
        }
        now.iter().all(|p| {
            let (u0, s0) = self.ticks_at_open.get(&p.key()).copied().unwrap_or_default();
            let own = p.user_ticks.saturating_sub(u0) + p.system_ticks.saturating_sub(s0);
            let children_at_open = self.start.get(&p.key()).map_or(0, |t| t.saturating_sub(u0 + s0));
            let children_now = p.cpu_ticks.saturating_sub(p.user_ticks + p.system_ticks);
            let ticks_of = |map: &HashMap<(ProcKey, i32), ThreadCost>| -> (u64, u64) {
                map.iter().filter(|((k, _), _)| *k == p.key()).fold((0, 0), |(t, n), (_, c)| (t + c.user_ticks + c.system_ticks, n + 1))
            };
            let (live, count) = ticks_of(threads);
            let (live_at_open, _) = ticks_of(&self.threads_at_open);
            // Each thread's user and kernel ticks are rounded down apart: up to two ticks a thread.
            children_now == children_at_open && own <= live.saturating_sub(live_at_open) + 2 * count + 2
        })
    }
}

/// What each thread has spent, for every process of `now`.
fn costs_by_thread(now: &[ProcStat]) -> HashMap<(ProcKey, i32), ThreadCost> {
    now.iter().flat_map(|p| thread_costs(p.pid).into_iter().map(move |(tid, c)| ((p.key(), tid), c))).collect()
}

/// The window edges a sampler has been told of and not yet acted on.
const OPEN: u8 = 1;
const CLOSE: u8 = 2;

/// What a load run calls at the window's edges: it wakes the sampler, which reads /proc on its own thread.
#[derive(Clone)]
pub struct Marks {
    pending: Arc<AtomicU8>,
    /// Set by the sampler once it has read the closing edge.
    closed: Arc<AtomicBool>,
    thread: Thread,
}

/// How long the closing edge waits for the sampler to read it.
const CLOSE_WAIT: Duration = Duration::from_millis(200);

impl Marks {
    pub fn open(&self) {
        self.mark(OPEN);
    }
    /// The window closes: waits (at most `CLOSE_WAIT`) until the sampler has read the tree, so that the
    /// client tears its connections down only after the server's threads were read: a thread per connection
    /// ends with its connection, and with it its CPU time.
    pub fn close(&self) {
        self.mark(CLOSE);
        let since = Instant::now();
        while !self.closed.load(Ordering::SeqCst) && since.elapsed() < CLOSE_WAIT {
            std::thread::sleep(Duration::from_micros(100));
        }
    }
    fn mark(&self, edge: u8) {
        self.pending.fetch_or(edge, Ordering::SeqCst);
        self.thread.unpark();
    }
}

/// A probe sampling on its own thread until finished.
pub struct Sampler {
    done: Arc<AtomicBool>,
    pending: Arc<AtomicU8>,
    closed: Arc<AtomicBool>,
    handle: JoinHandle<Probe>,
}

impl Sampler {
    pub fn spawn(root: i32, pgid: i32) -> Sampler {
        Sampler::spawn_counting(root, pgid, Err("not asked for".into()))
    }

    /// As `spawn`, with the server CPUs' system call counters read at the window's edges.
    pub fn spawn_counting(root: i32, pgid: i32, syscalls: Result<Counter, NotCounted>) -> Sampler {
        let done = Arc::new(AtomicBool::new(false));
        let pending = Arc::new(AtomicU8::new(0));
        let closed = Arc::new(AtomicBool::new(false));
        let mut probe = Probe::start(root, pgid, syscalls);
        let (flag, edges, read_close) = (done.clone(), pending.clone(), closed.clone());
        let handle = std::thread::Builder::new()
            .name("probe".into())
            .spawn(move || loop {
                // `done` first: an edge marked before `finish` is then seen below.
                let finishing = flag.load(Ordering::SeqCst);
                let marked = edges.swap(0, Ordering::SeqCst);
                if marked & OPEN != 0 {
                    probe.open_window();
                }
                if marked & CLOSE != 0 {
                    probe.close_window();
                    read_close.store(true, Ordering::SeqCst);
                }
                if finishing {
                    return probe;
                }
                if marked == 0 {
                    std::thread::park_timeout(SAMPLE_INTERVAL);
                    probe.sample();
                }
            })
            .expect("spawning the probe thread");
        Sampler { done, pending, closed, handle }
    }

    /// What a load run calls at its window's edges.
    pub fn marks(&self) -> Marks {
        Marks { pending: self.pending.clone(), closed: self.closed.clone(), thread: self.handle.thread().clone() }
    }

    pub fn finish(self) -> Usage {
        self.done.store(true, Ordering::SeqCst);
        self.handle.thread().unpark();
        self.handle.join().expect("the probe thread does not panic").finish()
    }
}
