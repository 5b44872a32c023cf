//! The per-thread worker and its loop. Each thread owns its connections, its backend, its timer
//! heap, its counters and histograms, and shares nothing while measuring; results are merged when
//! all threads are done.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier, Mutex};

use super::backend::epoll::EpollBackend;
use super::backend::uring::UringBackend;
use super::backend::Backend;
use super::config::{EchoKind, IoBackend, LoadConfig, Mode, Stop, Workload};
use super::conn::{Budget, Conn, State};
use super::sys::{self, now_ns};
use super::tally::WorkerResult;
use super::SetupError;
use crate::stats::histogram::new_latency_histogram;
use crate::wire::RequestTemplate;

/// Echo stream: bytes offered to the socket per write.
const STREAM_WRITE_BYTES: usize = 64 * 1024;
/// Connections of one thread that may be connecting at once while the run is being set up.
const CONNECT_RAMP: usize = 256;
/// The longest the loop sleeps, so that a stop request is seen promptly.
const MAX_WAIT_NS: u64 = 50_000_000;

/// What all worker threads read; fixed before they start.
pub(super) struct Shared {
    pub config: LoadConfig,
    /// The backend every worker uses: `Epoll` or `IoUring`, never `Auto` (resolved before the start).
    pub io: IoBackend,
    pub template: Option<RequestTemplate>,
    pub expect: Option<Vec<u8>>,
    pub stop: Arc<AtomicBool>,
    pub barrier: Barrier,
    pub setup_error: Mutex<Option<SetupError>>,
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
    /// Rate mode: time between two requests of one connection.
    pub interval_ns: u64,
    pub measure_start_ns: u64,
    pub recording: bool,
    /// Connections that spent their budget.
    pub done: usize,
    pub r: WorkerResult,
}

/// Runs one worker thread: pins it, opens its connections, waits for the others, then drives load.
pub(super) fn run_worker(shared: &Shared, index: usize, conn_count: usize, first_global: usize) -> WorkerResult {
    let cfg = &shared.config;
    // The report says the client was pinned: a thread that could not be pinned fails the run instead.
    let pinned = match &cfg.cpus {
        Some(cpus) => {
            let cpu = cpus[index % cpus.len()];
            crate::os::cpus::pin_current_thread(cpu).map_err(|e| SetupError(format!("cannot pin client thread {index} to CPU {cpu}: {e}")))
        }
        None => Ok(()),
    };
    match shared.io {
        IoBackend::IoUring => run_with(
            shared,
            pinned.and_then(|()| {
                let io = UringBackend::new(&cfg.target, conn_count).map_err(|e| SetupError(format!("cannot set up io_uring: {e}")))?;
                Ok((Engine::new(shared, conn_count), io))
            }),
            first_global,
        ),
        _ => run_with(
            shared,
            pinned.and_then(|()| {
                let io = EpollBackend::new(cfg.target, conn_count).map_err(|e| SetupError(format!("epoll_create1 failed: {e}")))?;
                Ok((Engine::new(shared, conn_count), io))
            }),
            first_global,
        ),
    }
}

fn run_with<B: Backend>(shared: &Shared, setup: Result<(Engine, B), SetupError>, first_global: usize) -> WorkerResult {
    let (mut engine, mut io) = match setup {
        Ok(parts) => parts,
        Err(e) => {
            shared.setup_error.lock().unwrap().get_or_insert(e);
            shared.barrier.wait();
            return WorkerResult::empty();
        }
    };
    if let Err(e) = engine.open_all(&mut io) {
        shared.setup_error.lock().unwrap().get_or_insert(e);
    }
    shared.barrier.wait();
    if shared.setup_error.lock().unwrap().is_some() {
        return engine.r;
    }
    engine.drive(&mut io, first_global);
    engine.r
}

impl<'a> Engine<'a> {
    fn new(shared: &'a Shared, conn_count: usize) -> Self {
        let cfg = &shared.config;
        let pipeline = match &cfg.workload {
            Workload::Http { pipeline, .. } => (*pipeline).max(1) as usize,
            Workload::Echo { .. } => 1,
        };
        let out_capacity_bytes = match (&cfg.workload, &shared.template) {
            (Workload::Http { .. }, Some(t)) => t.max_len() * pipeline,
            (Workload::Echo { size_bytes, .. }, _) => *size_bytes,
            _ => 0,
        };
        let pattern_len = match cfg.workload {
            Workload::Echo { kind: EchoKind::Stream, .. } => STREAM_WRITE_BYTES,
            Workload::Echo { size_bytes, .. } => size_bytes,
            _ => 0,
        };
        // xorshift: echo payloads that are not all one byte, so a reordering would be seen.
        let mut x: u32 = 0x9E37_79B9;
        let pattern = (0..pattern_len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect();
        let budget = match (&cfg.stop, &cfg.workload) {
            (Stop::RequestsPerConnection(r), Workload::Echo { kind: EchoKind::Stream, size_bytes }) => Budget::StreamBytes(r * *size_bytes as u64),
            (Stop::RequestsPerConnection(r), _) => Budget::Requests(*r),
            (Stop::Duration { .. }, _) => Budget::Unlimited,
        };
        Engine {
            shared,
            conns: (0..conn_count).map(|_| Conn::new(out_capacity_bytes, pipeline)).collect(),
            timers: BinaryHeap::with_capacity(conn_count * (pipeline + 1) + 16),
            pattern,
            pipeline,
            budget,
            interval_ns: match cfg.mode {
                Mode::Rate { requests_per_s } => (cfg.connections as f64 * 1e9 / requests_per_s).max(1.0) as u64,
                _ => 0,
            },
            measure_start_ns: 0,
            recording: false,
            done: 0,
            r: WorkerResult { uncorrected: matches!(cfg.mode, Mode::Rate { .. }).then(new_latency_histogram), ..WorkerResult::empty() },
        }
    }

    #[inline]
    pub fn is_stream(&self) -> bool {
        matches!(self.shared.config.workload, Workload::Echo { kind: EchoKind::Stream, .. })
    }

    /// Opens every connection before the clock starts, at most CONNECT_RAMP at a time.
    fn open_all<B: Backend>(&mut self, io: &mut B) -> Result<(), SetupError> {
        let target = self.shared.config.target;
        let timeout_ns = self.shared.config.timeout.as_nanos() as u64;
        // Connections whose connect finished, with 0 or the error number.
        let mut finished: Vec<(usize, i32)> = Vec::new();
        let (mut next, mut pending, mut open) = (0usize, 0usize, 0usize);
        while open < self.conns.len() {
            if self.shared.stop.load(Ordering::Relaxed) {
                return Err("interrupted while connecting".into());
            }
            if self.shared.setup_error.lock().unwrap().is_some() {
                return Err("another thread failed to connect".into());
            }
            while next < self.conns.len() && pending < CONNECT_RAMP {
                self.start_connect(io, next).map_err(|e| SetupError(format!("cannot connect to {target}: {e}")))?;
                next += 1;
                pending += 1;
            }
            finished.clear();
            io.wait(MAX_WAIT_NS);
            io.finished_connects(&mut finished);
            for &(i, err) in &finished {
                if self.conns[i].state != State::Connecting {
                    continue;
                }
                match err {
                    0 => {
                        self.set_open(io, i);
                        pending -= 1;
                        open += 1;
                    }
                    e => {
                        return Err(SetupError(format!("cannot connect to {target}: {} (is the server listening?)", io::Error::from_raw_os_error(e))));
                    }
                }
            }
            let now = now_ns();
            if self.conns[..next].iter().any(|c| c.state == State::Connecting && now - c.since_ns > timeout_ns) {
                return Err(SetupError(format!("cannot connect to {target}: no answer within {:?} ({open} of {} connections open)", self.shared.config.timeout, self.conns.len())));
            }
        }
        Ok(())
    }

    /// The loop: timers, timeout scans, one wait for the backend, then every event it reported.
    fn drive<B: Backend>(&mut self, io: &mut B, first_global: usize) {
        let shared: &'a Shared = self.shared;
        let cfg = &shared.config;
        let t0 = now_ns();
        let (warmup_ns, end_ns) = match cfg.stop {
            Stop::Duration { warmup, measure } => (warmup.as_nanos() as u64, Some(t0 + (warmup + measure).as_nanos() as u64)),
            Stop::RequestsPerConnection(_) => (0, None),
        };
        self.measure_start_ns = t0 + warmup_ns;
        let timeout_ns = cfg.timeout.as_nanos() as u64;
        let scan_every_ns = (timeout_ns / 4).clamp(1_000_000, 100_000_000);
        let mut next_scan = t0 + scan_every_ns;
        let mut cpu_start = 0.0;
        if warmup_ns == 0 {
            self.recording = true;
            cpu_start = sys::thread_cpu_s();
        }
        for i in 0..self.conns.len() {
            self.conns[i].next_intended_ns = t0 + ((first_global + i) as f64 * self.interval_ns as f64 / cfg.connections as f64) as u64;
            self.start_traffic(io, i, t0);
        }
        let mut now = now_ns();
        loop {
            if self.shared.stop.load(Ordering::Relaxed) {
                self.r.interrupted = true;
                break;
            }
            if !self.recording && now >= self.measure_start_ns {
                self.recording = true;
                cpu_start = sys::thread_cpu_s();
            }
            if end_ns.is_some_and(|e| now >= e) || (self.budget.limit().is_some() && self.done == self.conns.len()) {
                break;
            }
            self.fire_timers(io, now);
            if now >= next_scan {
                self.scan_timeouts(io, now, timeout_ns);
                next_scan = now + scan_every_ns;
            }
            let mut wake = next_scan.min(now + MAX_WAIT_NS);
            if let Some(Reverse((at, _, _))) = self.timers.peek() {
                wake = wake.min(*at);
            }
            if let Some(e) = end_ns {
                wake = wake.min(e);
            }
            if !self.recording {
                wake = wake.min(self.measure_start_ns);
            }
            let n = io.wait(wake.saturating_sub(now));
            now = now_ns();
            io.dispatch(&mut |io, i, event| self.on_event(io, i, event, now));
            if n > 0 {
                now = now_ns();
            }
        }
        let stop_ns = now_ns();
        self.r.cpu_s = if self.recording { sys::thread_cpu_s() - cpu_start } else { 0.0 };
        self.r.measured_ns = match end_ns {
            Some(e) if !self.r.interrupted => e - self.measure_start_ns,
            _ => stop_ns.saturating_sub(self.measure_start_ns),
        };
        if let Workload::Echo { kind: EchoKind::Stream, size_bytes } = cfg.workload {
            self.r.requests = self.r.bytes_read / size_bytes as u64;
            for t in &mut self.r.timeline {
                *t /= size_bytes as u64;
            }
        }
        for i in 0..self.conns.len() {
            io.close(i);
        }
    }
}
