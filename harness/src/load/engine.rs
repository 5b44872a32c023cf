//! One worker thread's state: the connections, the timer heap and the tally, and what all threads share.
//! The state machine (machine.rs), sending (send.rs), receiving (receive.rs) and the workload schedules
//! (schedule.rs) are methods on it; the thread's loop is in worker.rs.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};

use super::config::{EchoKind, IoBackend, LoadConfig, Mode, Stop, Workload};
use super::window::{Edge, WindowWatch};
use super::conn::{Budget, Conn};
use super::intervals::IntervalRecorder;
use super::tally::WorkerResult;
use super::SetupError;
use crate::stats::histogram::new_latency_histogram;
use super::mix::Paths;

/// Echo stream: bytes offered to the socket per write.
const STREAM_WRITE_BYTES: usize = 64 * 1024;

/// What all worker threads read; fixed before they start.
pub(super) struct Shared {
    pub config: LoadConfig,
    /// The backend every worker uses: `Epoll` or `IoUring`, never `Auto` (resolved before the start).
    pub io: IoBackend,
    /// The requests' paths (one for most workloads); None for echo.
    pub paths: Option<Paths>,
    pub expect: super::http::Expect,
    pub stop: Arc<AtomicBool>,
    pub barrier: Barrier,
    pub setup_error: Mutex<Option<SetupError>>,
    /// Told when the measured window opens and closes.
    pub watch: Option<WindowWatch>,
    /// Whether some thread has begun to record (the window is open), and when the first one did (0: not yet).
    pub opened: AtomicBool,
    pub opened_ns: AtomicU64,
    /// Threads that have not yet stopped driving load: the last one to stop closes the window.
    pub driving: AtomicUsize,
    /// Connections (of every thread) that have not yet completed an exchange.
    pub unserved: AtomicUsize,
    /// When the first thread began driving load, and when the ramp ended and the window could open (0: not
    /// yet); with the connections still unserved then.
    pub began_ns: AtomicU64,
    /// When a connection was last served for the first time (0: none yet).
    pub last_served_ns: AtomicU64,
    pub ramp_end_ns: AtomicU64,
    pub unserved_at_open: AtomicUsize,
}

impl Shared {
    /// Whether the measured window may open at `now` (the warm-up is over by then): the ramp is over
    /// when every connection has been served, when its limit has passed, or when it has stalled: some
    /// connections were served but no other for `RAMP_STALL` (a pool of 16 threads never serves the rest
    /// of 64 connections, and waiting the whole limit for them cost 5 s a round), or as many were served as
    /// an earlier round served before its ramp stalled (`ramp_served`). The first thread to find it over
    /// notes when, and how many connections were still unserved.
    pub fn ramp_over(&self, now: u64, began: u64) -> bool {
        if self.ramp_end_ns.load(Ordering::SeqCst) != 0 {
            return true;
        }
        let unserved = self.unserved.load(Ordering::SeqCst);
        let limit = self.config.ramp.map_or(0, |r| r.as_nanos() as u64);
        let last_served = self.last_served_ns.load(Ordering::SeqCst);
        let stalled = last_served != 0 && now >= last_served.max(began) + RAMP_STALL.as_nanos() as u64;
        let as_before = self.config.ramp_served.is_some_and(|k| self.config.connections.saturating_sub(unserved) >= k);
        if unserved > 0 && now < began + limit && !stalled && !as_before {
            return false;
        }
        if self.ramp_end_ns.compare_exchange(0, now, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
            self.unserved_at_open.store(unserved, Ordering::SeqCst);
        }
        true
    }

    /// A thread began to record at `now`: the first one opens the window. Returns when the window opened,
    /// the origin of every thread's intervals.
    pub fn recording_started(&self, now: u64) -> u64 {
        let _ = self.opened_ns.compare_exchange(0, now, Ordering::SeqCst, Ordering::SeqCst);
        if !self.opened.swap(true, Ordering::SeqCst) {
            if let Some(w) = &self.watch {
                w(Edge::Open);
            }
        }
        self.opened_ns.load(Ordering::SeqCst)
    }

    /// A thread stopped driving load: the last one closes the window, if it was opened.
    pub fn driving_stopped(&self) {
        if self.driving.fetch_sub(1, Ordering::SeqCst) == 1 && self.opened.load(Ordering::SeqCst) {
            if let Some(w) = &self.watch {
                w(Edge::Close);
            }
        }
    }
}

/// How long a ramp may go without serving a connection it had not served before, once it has served one,
/// before the window opens without the rest. A thread per connection at 1,000 connections serves its
/// next connection within tens of milliseconds while its acceptor competes with hundreds of runnable
/// threads (docs/methodology.md, "A steady-state window"); a pool whose threads are all taken serves no
/// other, ever.
pub const RAMP_STALL: std::time::Duration = std::time::Duration::from_secs(1);

/// The most bytes a connection writes at once: its pipeline of the longest request, or an echo message.
pub(super) fn out_capacity_bytes(cfg: &LoadConfig, paths: Option<&Paths>) -> usize {
    match (&cfg.workload, paths) {
        (Workload::Http { pipeline, .. }, Some(t)) => t.max_len() * (*pipeline).max(1) as usize,
        (Workload::Echo { size_bytes, .. }, _) => *size_bytes,
        _ => 0,
    }
}

/// How many intervals a thread expects to close (their encodings are reserved before the clock starts).
fn expected_intervals(cfg: &LoadConfig) -> usize {
    const WITHOUT_A_DURATION: usize = 64;
    const MOST_RESERVED: usize = 100_000;
    match cfg.stop {
        Stop::Duration { measure, .. } => (measure.as_nanos() / cfg.interval.as_nanos().max(1)) as usize,
        Stop::RequestsPerConnection(_) => WITHOUT_A_DURATION,
    }
    .min(MOST_RESERVED)
}

/// Everything a worker knows but its backend: the connections, the timers and the tally.
pub(super) struct Engine<'a> {
    pub shared: &'a Shared,
    pub conns: Vec<Conn>,
    /// (due time, connection, its generation when armed), earliest first.
    pub timers: BinaryHeap<Reverse<(u64, u32, u32)>>,
    /// Echo payload: what is sent, and what must come back.
    pub pattern: Vec<u8>,
    pub pipeline: usize,
    pub budget: Budget,
    /// A new connection for every request (`LoadConfig::connection_per_request`).
    pub per_request: bool,
    /// Rate mode: time between two requests of one connection.
    pub interval_ns: u64,
    pub measure_start_ns: u64,
    pub recording: bool,
    /// Connections that spent their budget.
    pub done: usize,
    pub r: WorkerResult,
}

impl<'a> Engine<'a> {
    /// `first_global`: the index of its first connection over all threads (seeds each one's choices).
    pub fn new(shared: &'a Shared, conn_count: usize, first_global: usize) -> Self {
        let cfg = &shared.config;
        let pipeline = match &cfg.workload {
            Workload::Http { pipeline, .. } => (*pipeline).max(1) as usize,
            Workload::Echo { .. } => 1,
        };
        let out_capacity_bytes = out_capacity_bytes(cfg, shared.paths.as_ref());
        let pattern_len = match cfg.workload {
            Workload::Echo { kind: EchoKind::Stream, .. } => STREAM_WRITE_BYTES,
            Workload::Echo { size_bytes, .. } => size_bytes,
            _ => 0,
        };
        // Echo payloads that are not all one byte, so a reordering would be seen; the same in every run.
        let mut pattern = vec![0u8; pattern_len];
        fastrand::Rng::with_seed(0x9E37_79B9).fill(&mut pattern);
        let budget = match (&cfg.stop, &cfg.workload) {
            (Stop::RequestsPerConnection(r), Workload::Echo { kind: EchoKind::Stream, size_bytes }) => Budget::StreamBytes(r * *size_bytes as u64),
            (Stop::RequestsPerConnection(r), _) => Budget::Requests(*r),
            (Stop::Duration { .. }, _) => Budget::Unlimited,
        };
        Engine {
            shared,
            conns: (0..conn_count)
                .map(|i| {
                    let mut c = Conn::new(out_capacity_bytes, pipeline);
                    if let Some(p) = &shared.paths {
                        c.rng = p.rng(first_global + i);
                        c.heavy = p.is_heavy(first_global + i);
                    }
                    c
                })
                .collect(),
            timers: BinaryHeap::with_capacity(conn_count * (pipeline + 1) + 16),
            pattern,
            pipeline,
            budget,
            per_request: cfg.connection_per_request,
            interval_ns: match cfg.mode {
                Mode::Rate { requests_per_s } => (cfg.connections as f64 * 1e9 / requests_per_s).max(1.0) as u64,
                _ => 0,
            },
            measure_start_ns: 0,
            recording: false,
            done: 0,
            r: WorkerResult {
                uncorrected: matches!(cfg.mode, Mode::Rate { .. }).then(new_latency_histogram),
                intervals: IntervalRecorder::new(cfg.interval, expected_intervals(cfg)),
                ..WorkerResult::empty()
            },
        }
    }

    #[inline]
    pub fn is_stream(&self) -> bool {
        matches!(self.shared.config.workload, Workload::Echo { kind: EchoKind::Stream, .. })
    }
}
