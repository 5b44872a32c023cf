//! The per-thread worker and its loop. Each thread owns its connections, its backend, its timer
//! heap, its counters and histograms (an `Engine`), and shares nothing while measuring; results are
//! merged when all threads are done.

use std::cmp::Reverse;
use std::io;
use std::sync::atomic::Ordering;

use super::backend::epoll::EpollBackend;
use super::backend::ring::{RingSetup, Uring};
use super::backend::uring::UringBackend;
use super::backend::Backend;
use super::config::{EchoKind, IoBackend, Mode, Poll, Stop, Workload};
use super::conn::State;
use super::engine::{Engine, Shared};
use super::sys::{self, now_ns};
use crate::os::socket::SourceSpread;
use super::tally::WorkerResult;
use super::SetupError;

/// Connections of one thread that may be connecting at once while the run is being set up.
const CONNECT_RAMP: usize = 256;
/// How often a thread looks whether the ramp is over while it waits for the window to open.
const RAMP_POLL_NS: u64 = 1_000_000;
/// The longest the loop sleeps, so that a stop request is seen promptly.
const MAX_WAIT_NS: u64 = 50_000_000;

/// Runs one worker thread: pins it, opens its connections, waits for the others, then drives load.
pub(super) fn run_worker(shared: &Shared, index: usize, conn_count: usize, first_global: usize) -> WorkerResult {
    let cfg = &shared.config;
    // The report says the client was pinned: a thread that could not be pinned fails the run instead.
    let cpu = cfg.cpus.as_ref().map(|cpus| cpus[index % cpus.len()]);
    let pinned = match cpu {
        Some(cpu) => {
            crate::os::cpus::pin_current_thread(cpu).map_err(|e| SetupError(format!("cannot pin client thread {index} to CPU {cpu}: {e}")))
        }
        None => Ok(()),
    };
    let spread = || SourceSpread::for_target(&cfg.target, cfg.connection_per_request, index);
    match shared.io {
        IoBackend::IoUring | IoBackend::IoUringSqpoll => run_with(
            shared,
            pinned.and_then(|()| {
                let sqpoll = shared.io == IoBackend::IoUringSqpoll;
                let setup = RingSetup {
                    conn_count,
                    send_slot_bytes: if Uring::writes_from_registered_buffers() { send_slot_bytes(shared) } else { 0 },
                    // Validated: with SQPOLL the client is pinned, and the kernel thread shares its worker's CPU.
                    sqpoll_cpu: cpu.filter(|_| sqpoll),
                };
                let io = UringBackend::new(&cfg.target, &setup, spread()).map_err(|e| match setup.sqpoll_cpu {
                    Some(cpu) => SetupError(format!("cannot set up io_uring with an SQPOLL thread on CPU {cpu} (the kernel refused: {e}); use --io io_uring")),
                    None => SetupError(format!("cannot set up io_uring: {e}")),
                })?;
                Ok((Engine::new(shared, conn_count, first_global), io))
            }),
            first_global,
        ),
        _ => run_with(
            shared,
            pinned.and_then(|()| {
                let io = EpollBackend::new(cfg.target, conn_count, spread()).map_err(|e| SetupError(format!("epoll_create1 failed: {e}")))?;
                Ok((Engine::new(shared, conn_count, first_global), io))
            }),
            first_global,
        ),
    }
}

/// Requests up to this long are copied into a registered send slot per connection (a few MiB pinned at
/// 20,000 connections); longer writes (long pipelines, large echo messages) are sent from where they are.
const MAX_SEND_SLOT_BYTES: usize = 1024;

/// The size of each connection's registered send slot: what it writes at once, in cache lines; 0 when
/// that is longer than `MAX_SEND_SLOT_BYTES`.
fn send_slot_bytes(shared: &Shared) -> usize {
    let bytes = super::engine::out_capacity_bytes(&shared.config, shared.paths.as_ref()).next_multiple_of(64);
    if bytes <= MAX_SEND_SLOT_BYTES { bytes } else { 0 }
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
        let _ = shared.began_ns.compare_exchange(0, t0, Ordering::SeqCst, Ordering::SeqCst);
        let began = shared.began_ns.load(Ordering::SeqCst);
        let (warmup_ns, measure_ns) = match cfg.stop {
            Stop::Duration { warmup, measure } => (warmup.as_nanos() as u64, Some(measure.as_nanos() as u64)),
            Stop::RequestsPerConnection(_) => (0, None),
        };
        // With a ramp the window opens once every connection has been served (or the ramp's limit passed).
        let ramped = cfg.ramp.is_some() && measure_ns.is_some();
        // The window's end, once it has opened (with `-d`).
        let mut end_ns: Option<u64> = None;
        self.measure_start_ns = t0 + warmup_ns;
        let timeout_ns = cfg.timeout.as_nanos() as u64;
        let scan_every_ns = (timeout_ns / 4).clamp(1_000_000, 100_000_000);
        let mut next_scan = t0 + scan_every_ns;
        let mut cpu_start = sys::ThreadUsage::default();
        let mut calls_start = 0;
        let mut kernel_start = None;
        if warmup_ns == 0 && !ramped {
            cpu_start = self.begin_recording(t0);
            calls_start = io.system_calls();
            kernel_start = io.kernel_thread_ns();
            end_ns = measure_ns.map(|m| t0 + m);
        }
        for i in 0..self.conns.len() {
            self.conns[i].next_intended_ns = t0 + ((first_global + i) as f64 * self.interval_ns as f64 / cfg.connections as f64) as u64;
            if self.per_request {
                // The connections opened before the clock only showed that the server answers: every
                // request's latency starts with its own connect.
                self.drop_socket(io, i);
                self.connect_when_due(io, i, t0, false);
            } else {
                self.start_traffic(io, i, t0);
            }
        }
        let busy = cfg.poll == Poll::Busy;
        let stream = self.is_stream();
        // Busy-polling: time in asks of the kernel that found nothing, while recording.
        let mut poll_ns = 0u64;
        let mut now = now_ns();
        loop {
            if self.shared.stop.load(Ordering::Relaxed) {
                self.r.interrupted = true;
                break;
            }
            if !self.recording && now >= self.measure_start_ns && (!ramped || shared.ramp_over(now, began)) {
                cpu_start = self.begin_recording(now);
                calls_start = io.system_calls();
                kernel_start = io.kernel_thread_ns();
                end_ns = measure_ns.map(|m| now + m);
            }
            if end_ns.is_some_and(|e| now >= e) || (self.budget.limit().is_some() && self.done == self.conns.len()) {
                break;
            }
            // Everything counted from here on with this `now` belongs to the interval `now` is in.
            self.r.tick(now, stream);
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
                // Until the warm-up ends; then, while the ramp lasts, often enough to open the window promptly.
                wake = wake.min(if now < self.measure_start_ns { self.measure_start_ns } else { now + RAMP_POLL_NS });
            }
            let asked = now;
            let n = io.wait(if busy { 0 } else { wake.saturating_sub(now) });
            now = now_ns();
            self.r.tick(now, stream);
            if n == 0 {
                if busy && self.recording {
                    poll_ns += now - asked;
                }
                continue;
            }
            io.dispatch(&mut |io, i, event| self.on_event(io, i, event, now));
            now = now_ns();
        }
        let stop_ns = now_ns();
        if self.recording {
            self.r.close_intervals(stream);
        }
        let mut spent = if self.recording { sys::ThreadUsage::now().since(&cpu_start) } else { sys::ThreadUsage::default() };
        // A kernel thread that worked for this one (SQPOLL) is the client's too: its time is system time,
        // and the part of it that found no work is polling.
        if let (Some((total0, work0)), Some((total1, work1)), true) = (kernel_start, io.kernel_thread_ns(), self.recording) {
            let (total_ns, work_ns) = (total1.saturating_sub(total0), work1.saturating_sub(work0));
            spent.system_s += total_ns as f64 / 1e9;
            poll_ns += total_ns.saturating_sub(work_ns);
        }
        self.r.cpu_s = spent.cpu_s();
        self.r.usage = spent;
        self.r.system_calls = if self.recording { io.system_calls() - calls_start } else { 0 };
        self.r.poll_s = (poll_ns as f64 / 1e9).min(self.r.cpu_s);
        if matches!(cfg.mode, Mode::Rate { .. }) && self.interval_ns > 0 {
            self.r.backlog = self.backlog_at(end_ns.unwrap_or(stop_ns).min(stop_ns));
        }
        shared.driving_stopped();
        self.r.measured_ns = match end_ns {
            Some(e) if !self.r.interrupted => e - self.measure_start_ns,
            _ if self.recording => stop_ns.saturating_sub(self.measure_start_ns),
            _ => 0,
        };
        let stream_size = match cfg.workload {
            Workload::Echo { kind: EchoKind::Stream, size_bytes } => size_bytes as u64,
            _ => 1,
        };
        self.r.per_connection = self.conns.iter().map(|c| c.window_units / stream_size).collect();
        self.r.connections_served = self.conns.iter().filter(|c| c.served).count() as u64;
        if let Workload::Echo { kind: EchoKind::Stream, size_bytes } = cfg.workload {
            self.r.requests = self.r.bytes_read / size_bytes as u64;
        }
        for i in 0..self.conns.len() {
            io.close(i);
        }
    }
}

impl Engine<'_> {
    /// Rate mode: the requests of the timetable due before `end` that no connection sent.
    fn backlog_at(&self, end: u64) -> u64 {
        self.conns
            .iter()
            .filter(|c| c.state != State::Done && c.next_intended_ns < end)
            .map(|c| (end - c.next_intended_ns).div_ceil(self.interval_ns))
            .sum()
    }

    /// The window opens for this thread at `now`: responses count from here; returns what the thread has spent.
    fn begin_recording(&mut self, now: u64) -> sys::ThreadUsage {
        self.recording = true;
        self.measure_start_ns = now;
        let stream = self.is_stream();
        self.r.start_intervals(self.shared.recording_started(now), now, stream);
        sys::ThreadUsage::now()
    }
}
