//! The per-thread worker. Each thread owns its connections, epoll set, timer heap, counters and
//! histograms, and shares nothing while measuring; results are merged when all threads are done.
//!
//! A connection moves connecting -> open -> (response complete -> next request) ... and is reopened
//! after any error. Errors are counted by class, never thrown.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier, Mutex};

use hdrhistogram::Histogram;

use super::config::{EchoKind, IoBackend, LoadConfig, Mode, Stop, Workload};
use super::http::{Complete, RequestTemplate, ResponseParser};
use super::report::{ErrorCounts, LoadReport, StatusCounts};
use super::sys::{self, now_ns, Epoll};
use super::uring::{self, Completion, Op, Uring};
use crate::stats::histogram::new_latency_histogram;

const READ_BUF_BYTES: usize = 64 * 1024;
const MAX_EVENTS: usize = 1024;
/// Connections of one thread that may be connecting at once while the run is being set up.
const CONNECT_RAMP: usize = 256;
/// The longest the loop sleeps, so that a stop request is seen promptly.
const MAX_WAIT_NS: u64 = 50_000_000;
const RECONNECT_BACKOFF_NS: u64 = 10_000_000;
const NS_PER_S: u64 = 1_000_000_000;

const EV_IN: u32 = libc::EPOLLIN as u32;
const EV_OUT: u32 = libc::EPOLLOUT as u32;

/// What all worker threads read; fixed before they start.
pub(super) struct Shared {
    pub config: LoadConfig,
    /// The backend every worker uses: `Epoll` or `IoUring`, never `Auto` (resolved before the start).
    pub io: IoBackend,
    pub template: Option<RequestTemplate>,
    pub expect: Option<Vec<u8>>,
    pub stop: Arc<AtomicBool>,
    pub barrier: Barrier,
    pub setup_error: Mutex<Option<String>>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Connecting,
    Open,
    /// Waiting to reconnect after a failed connect.
    Backoff,
    /// Sent its last request and received its last response (`-n`).
    Done,
}

#[derive(Clone, Copy)]
struct Sent {
    intended_ns: u64,
    sent_ns: u64,
}

struct Conn {
    fd: RawFd,
    state: State,
    /// Bumped whenever the socket is replaced, so timers of an old socket are ignored.
    generation: u32,
    since_ns: u64,
    /// Rendered request bytes not yet accepted by the kernel (from `out_off`).
    out: Vec<u8>,
    out_off: usize,
    /// Requests counted as sent but not yet rendered into `out` (io_uring: while a send is in flight,
    /// `out` is the kernel's to read and is not touched).
    queued: usize,
    /// epoll: blocked on a full socket buffer, waiting for EPOLLOUT.
    want_out: bool,
    /// io_uring: a send of this connection is in flight (at most one at a time, across reconnects).
    send_busy: bool,
    inflight: VecDeque<Sent>,
    /// Requests sent (or lost to a failed connect) on this connection: the `-n` budget.
    sent: u64,
    sequence: u64,
    next_intended_ns: u64,
    timer_at: u64,
    parser: ResponseParser,
    /// Echo: bytes of the current exchange received so far (ping-pong), or bytes written (stream).
    echo_bytes: u64,
}

/// One thread's measurements, merged by `merge`.
pub(super) struct WorkerResult {
    requests: u64,
    errors: ErrorCounts,
    status: StatusCounts,
    bytes_read: u64,
    bytes_written: u64,
    response_bytes: u64,
    latency: Histogram<u64>,
    uncorrected: Option<Histogram<u64>>,
    timeline: Vec<u64>,
    cpu_s: f64,
    first_send_ns: u64,
    last_response_ns: u64,
    measured_ns: u64,
    interrupted: bool,
}

/// How a worker moves bytes; everything above this is the same engine.
enum Io {
    Epoll(Epoll),
    Uring(Box<Uring>),
}

impl WorkerResult {
    fn empty() -> Self {
        WorkerResult {
            requests: 0,
            errors: ErrorCounts::default(),
            status: StatusCounts::default(),
            bytes_read: 0,
            bytes_written: 0,
            response_bytes: 0,
            latency: new_latency_histogram(),
            uncorrected: None,
            timeline: Vec::new(),
            cpu_s: 0.0,
            first_send_ns: u64::MAX,
            last_response_ns: 0,
            measured_ns: 0,
            interrupted: false,
        }
    }
}

struct Worker<'a> {
    shared: &'a Shared,
    io: Io,
    /// io_uring: the completions of one wait, and connections whose receive must be armed again.
    completions: Vec<Completion>,
    rearm: Vec<(usize, u32)>,
    conns: Vec<Conn>,
    timers: BinaryHeap<Reverse<(u64, u32, u32)>>,
    buf: Vec<u8>,
    pattern: Vec<u8>,
    pipeline: usize,
    limit: Option<u64>,
    interval_ns: u64,
    measure_start_ns: u64,
    recording: bool,
    done: usize,
    r: WorkerResult,
}

/// Runs one worker thread: pins it, opens its connections, waits for the others, then drives load.
pub(super) fn run_worker(shared: &Shared, index: usize, conn_count: usize, first_global: usize) -> WorkerResult {
    let cfg = &shared.config;
    // The report says the client was pinned: a thread that could not be pinned fails the run instead.
    let pinned = match &cfg.cpus {
        Some(cpus) => {
            let cpu = cpus[index % cpus.len()];
            sys::pin_current_thread(cpu).map_err(|e| format!("cannot pin client thread {index} to CPU {cpu}: {e}"))
        }
        None => Ok(()),
    };
    let mut w = match pinned.and_then(|()| Worker::new(shared, conn_count)) {
        Ok(w) => w,
        Err(e) => {
            shared.setup_error.lock().unwrap().get_or_insert(e);
            shared.barrier.wait();
            return WorkerResult::empty();
        }
    };
    let setup = w.open_all();
    if let Err(e) = setup {
        shared.setup_error.lock().unwrap().get_or_insert(e);
    }
    shared.barrier.wait();
    if shared.setup_error.lock().unwrap().is_some() {
        return w.r;
    }
    w.drive(first_global);
    w.r
}

impl<'a> Worker<'a> {
    fn new(shared: &'a Shared, conn_count: usize) -> Result<Self, String> {
        let cfg = &shared.config;
        let pipeline = match &cfg.workload {
            Workload::Http { pipeline, .. } => (*pipeline).max(1) as usize,
            Workload::Echo { .. } => 1,
        };
        let out_cap = match (&cfg.workload, &shared.template) {
            (Workload::Http { .. }, Some(t)) => t.max_len() * pipeline,
            (Workload::Echo { size_bytes, .. }, _) => *size_bytes,
            _ => 0,
        };
        let pattern_len = match cfg.workload {
            Workload::Echo { kind: EchoKind::Stream, .. } => READ_BUF_BYTES,
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
        let conns = (0..conn_count)
            .map(|_| Conn {
                fd: -1,
                state: State::Backoff,
                generation: 0,
                since_ns: 0,
                out: Vec::with_capacity(out_cap),
                out_off: 0,
                queued: 0,
                want_out: false,
                send_busy: false,
                inflight: VecDeque::with_capacity(pipeline),
                sent: 0,
                sequence: 0,
                next_intended_ns: 0,
                timer_at: 0,
                parser: ResponseParser::new(),
                echo_bytes: 0,
            })
            .collect();
        let interval_ns = match cfg.mode {
            Mode::Rate { requests_per_s } => (cfg.connections as f64 * 1e9 / requests_per_s).max(1.0) as u64,
            _ => 0,
        };
        let io = match shared.io {
            IoBackend::IoUring => Io::Uring(Box::new(Uring::new(&cfg.target).map_err(|e| format!("cannot set up io_uring: {e}"))?)),
            _ => Io::Epoll(Epoll::new().map_err(|e| format!("epoll_create1 failed: {e}"))?),
        };
        Ok(Worker {
            shared,
            io,
            completions: Vec::with_capacity(1024),
            rearm: Vec::new(),
            conns,
            timers: BinaryHeap::with_capacity(conn_count * (pipeline + 1) + 16),
            buf: vec![0; READ_BUF_BYTES],
            pattern,
            pipeline,
            // The `-n` budget: requests per connection, or for echo streaming bytes received.
            limit: match (cfg.stop.clone(), &cfg.workload) {
                (Stop::RequestsPerConnection(r), Workload::Echo { kind: EchoKind::Stream, size_bytes }) => Some(r * *size_bytes as u64),
                (Stop::RequestsPerConnection(r), _) => Some(r),
                (Stop::Duration { .. }, _) => None,
            },
            interval_ns,
            measure_start_ns: 0,
            recording: false,
            done: 0,
            r: WorkerResult { uncorrected: matches!(cfg.mode, Mode::Rate { .. }).then(new_latency_histogram), ..WorkerResult::empty() },
        })
    }

    /// Opens every connection before the clock starts, at most CONNECT_RAMP at a time.
    fn open_all(&mut self) -> Result<(), String> {
        let target = self.shared.config.target;
        let timeout_ns = self.shared.config.timeout.as_nanos() as u64;
        let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; MAX_EVENTS];
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
                self.start_connect(next).map_err(|e| format!("cannot connect to {target}: {e}"))?;
                next += 1;
                pending += 1;
            }
            // Connections whose connect finished, with 0 or the error number.
            finished.clear();
            match &mut self.io {
                Io::Epoll(ep) => {
                    let n = ep.wait(&mut events, Some(MAX_WAIT_NS));
                    for ev in &events[..n] {
                        let i = ev.u64 as usize;
                        if self.conns[i].state == State::Connecting {
                            finished.push((i, sys::socket_error(self.conns[i].fd)));
                        }
                    }
                }
                Io::Uring(u) => {
                    u.wait(MAX_WAIT_NS, &mut self.completions);
                    for c in &self.completions {
                        // Nothing but connects is submitted before the clock starts.
                        if c.op == Op::Connect && self.conns[c.conn].state == State::Connecting {
                            finished.push((c.conn, -c.result));
                        }
                    }
                }
            }
            for &(i, err) in &finished {
                match err {
                    0 => {
                        self.set_open(i);
                        pending -= 1;
                        open += 1;
                    }
                    e => {
                        return Err(format!("cannot connect to {target}: {} (is the server listening?)", io::Error::from_raw_os_error(e)));
                    }
                }
            }
            let now = now_ns();
            if self.conns[..next].iter().any(|c| c.state == State::Connecting && now - c.since_ns > timeout_ns) {
                return Err(format!("cannot connect to {target}: no answer within {:?} ({open} of {} connections open)", self.shared.config.timeout, self.conns.len()));
            }
        }
        Ok(())
    }

    fn start_connect(&mut self, i: usize) -> io::Result<()> {
        let c = &mut self.conns[i];
        c.since_ns = now_ns();
        match &mut self.io {
            Io::Epoll(ep) => {
                let (fd, _) = sys::connect_nonblocking(&self.shared.config.target)?;
                c.fd = fd;
                c.state = State::Connecting;
                // Registered once per socket; EPOLLOUT reports when the connect finished.
                ep.add(fd, EV_IN | EV_OUT, i as u64)
            }
            Io::Uring(u) => {
                c.fd = u.connect(i, c.generation)?;
                c.state = State::Connecting;
                Ok(())
            }
        }
    }

    fn set_open(&mut self, i: usize) {
        let stream = matches!(self.shared.config.workload, Workload::Echo { kind: EchoKind::Stream, .. });
        let c = &mut self.conns[i];
        c.state = State::Open;
        if let Io::Epoll(ep) = &self.io {
            c.want_out = stream;
            let _ = ep.modify(c.fd, if stream { EV_IN | EV_OUT } else { EV_IN }, i as u64);
        }
    }

    /// Closes a connection's socket. With io_uring the socket is shut down first: its armed receive
    /// holds a reference that would otherwise keep the connection open.
    fn close_socket(&mut self, i: usize) {
        let c = &mut self.conns[i];
        if c.fd >= 0 {
            if matches!(self.io, Io::Uring(_)) {
                unsafe { libc::shutdown(c.fd, libc::SHUT_RDWR) };
            }
            sys::close(c.fd);
            c.fd = -1;
        }
    }

    /// The connection is open and the clock runs: arm its receive (io_uring) and start its traffic.
    fn start_traffic(&mut self, i: usize, now: u64) {
        if let Io::Uring(u) = &mut self.io {
            let c = &self.conns[i];
            u.recv(c.fd, i, c.generation);
        }
        self.on_open(i, now);
    }

    fn drive(&mut self, first_global: usize) {
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
            self.start_traffic(i, t0);
        }
        let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; MAX_EVENTS];
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
            if end_ns.is_some_and(|e| now >= e) || (self.limit.is_some() && self.done == self.conns.len()) {
                break;
            }
            self.fire_timers(now);
            if now >= next_scan {
                self.scan_timeouts(now, timeout_ns);
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
            let n = match &mut self.io {
                Io::Epoll(ep) => {
                    let n = ep.wait(&mut events, Some(wake.saturating_sub(now)));
                    now = now_ns();
                    for ev in &events[..n] {
                        let ev = *ev;
                        self.on_event(ev.u64 as usize, ev.events, now);
                    }
                    n
                }
                Io::Uring(u) => {
                    let mut completions = std::mem::take(&mut self.completions);
                    u.wait(wake.saturating_sub(now), &mut completions);
                    now = now_ns();
                    for c in &completions {
                        self.on_completion(c, now);
                    }
                    self.after_completions();
                    let n = completions.len();
                    self.completions = completions;
                    n
                }
            };
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
            self.close_socket(i);
        }
    }

    fn has_budget(&self, i: usize) -> bool {
        self.limit.is_none_or(|r| self.conns[i].sent < r)
    }

    /// A connection has just opened (at the start, or after a reconnect): start its traffic.
    fn on_open(&mut self, i: usize, now: u64) {
        match (&self.shared.config.workload, &self.shared.config.mode) {
            (Workload::Echo { kind: EchoKind::Stream, .. }, _) => self.stream_write(i),
            (_, Mode::Rate { .. }) => self.send_due(i, now),
            _ => {
                let n = self.pipeline.min(self.budget_left(i));
                self.send(i, n, now, now);
            }
        }
        self.check_done(i);
    }

    fn budget_left(&self, i: usize) -> usize {
        match self.limit {
            Some(r) => r.saturating_sub(self.conns[i].sent).min(usize::MAX as u64) as usize,
            None => usize::MAX,
        }
    }

    /// Sends `n` requests: counts them as outstanding from `now`, then renders and writes them (with
    /// io_uring, once the connection's previous send has completed).
    fn send(&mut self, i: usize, n: usize, intended_ns: u64, now: u64) {
        if n == 0 || self.conns[i].state != State::Open {
            return;
        }
        let c = &mut self.conns[i];
        for _ in 0..n {
            c.sent += 1;
            c.inflight.push_back(Sent { intended_ns, sent_ns: now });
        }
        c.queued += n;
        self.r.first_send_ns = self.r.first_send_ns.min(now);
        self.flush(i);
    }

    /// Renders the queued requests after the bytes not yet written.
    fn render_queued(&mut self, i: usize) {
        let c = &mut self.conns[i];
        if c.out_off > 0 {
            c.out.drain(..c.out_off);
            c.out_off = 0;
        }
        for _ in 0..c.queued {
            match (&self.shared.config.workload, &self.shared.template) {
                (Workload::Http { .. }, Some(t)) => t.render(&mut c.out, c.sequence),
                _ => c.out.extend_from_slice(&self.pattern),
            }
            c.sequence += 1;
        }
        c.queued = 0;
    }

    /// Hands the connection's pending bytes to the kernel: written at once (epoll, unless waiting for
    /// EPOLLOUT) or submitted as one send (io_uring, unless one is in flight; its completion calls
    /// this again).
    fn flush(&mut self, i: usize) {
        let c = &self.conns[i];
        let uring = matches!(self.io, Io::Uring(_));
        if uring && (c.send_busy || c.state != State::Open) {
            return;
        }
        self.render_queued(i);
        let c = &mut self.conns[i];
        match &mut self.io {
            Io::Epoll(_) if !c.want_out => self.write_out(i),
            Io::Epoll(_) => {}
            Io::Uring(u) if c.out_off < c.out.len() => {
                c.send_busy = true;
                // `out` is not touched while the send is in flight (`send_busy`), and it lives as long as the worker.
                unsafe { u.send(c.fd, c.out.as_ptr().add(c.out_off), c.out.len() - c.out_off, i, c.generation) };
            }
            Io::Uring(_) => {}
        }
    }

    /// The ring of an io_uring worker (completions exist only there).
    fn ring(&mut self) -> &mut Uring {
        match &mut self.io {
            Io::Uring(u) => u,
            Io::Epoll(_) => unreachable!("an io_uring completion on an epoll worker"),
        }
    }

    /// Rate mode: sends every request whose intended time has come (late ones included, never
    /// dropped), then arms a timer for the next one.
    fn send_due(&mut self, i: usize, now: u64) {
        while self.conns[i].inflight.len() < self.pipeline && self.has_budget(i) && self.conns[i].next_intended_ns <= now {
            let intended = self.conns[i].next_intended_ns;
            self.conns[i].next_intended_ns += self.interval_ns;
            self.send(i, 1, intended, now);
            if self.conns[i].state != State::Open {
                return;
            }
        }
        let budget = self.has_budget(i);
        let c = &mut self.conns[i];
        if c.inflight.len() < self.pipeline && budget && c.timer_at != c.next_intended_ns {
            c.timer_at = c.next_intended_ns;
            self.timers.push(Reverse((c.next_intended_ns, i as u32, c.generation)));
        }
    }

    /// epoll: writes until everything is written or the socket buffer is full.
    fn write_out(&mut self, i: usize) {
        let Io::Epoll(ep) = &self.io else { return };
        let c = &mut self.conns[i];
        while c.out_off < c.out.len() {
            match sys::write(c.fd, &c.out[c.out_off..]) {
                Ok(n) => {
                    c.out_off += n;
                    if self.recording {
                        self.r.bytes_written += n as u64;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if !c.want_out {
                        c.want_out = true;
                        let _ = ep.modify(c.fd, EV_IN | EV_OUT, i as u64);
                    }
                    return;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    let lost = c.inflight.len().max(1) as u64;
                    self.r.errors.write += lost;
                    self.reconnect(i, now_ns());
                    return;
                }
            }
        }
        c.out.clear();
        c.out_off = 0;
        if c.want_out {
            c.want_out = false;
            let _ = ep.modify(c.fd, EV_IN, i as u64);
        }
    }

    /// Echo stream: keep the send side busy until the socket buffer is full (or the budget is spent).
    fn stream_write(&mut self, i: usize) {
        let cap = self.limit;
        let c = &mut self.conns[i];
        loop {
            let room = cap.map_or(self.pattern.len() as u64, |cap| cap.saturating_sub(c.echo_bytes).min(self.pattern.len() as u64));
            let ep = match &mut self.io {
                Io::Epoll(ep) => ep,
                Io::Uring(u) => {
                    if room > 0 && !c.send_busy && c.state == State::Open {
                        c.send_busy = true;
                        // The pattern is never changed and lives as long as the worker.
                        unsafe { u.send(c.fd, self.pattern.as_ptr(), room as usize, i, c.generation) };
                    }
                    return;
                }
            };
            if room == 0 {
                let _ = ep.modify(c.fd, EV_IN, i as u64);
                return;
            }
            match sys::write(c.fd, &self.pattern[..room as usize]) {
                Ok(n) => {
                    c.echo_bytes += n as u64;
                    self.r.first_send_ns = self.r.first_send_ns.min(self.measure_start_ns);
                    if self.recording {
                        self.r.bytes_written += n as u64;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    self.r.errors.write += 1;
                    self.reconnect(i, now_ns());
                    return;
                }
            }
        }
    }

    fn on_event(&mut self, i: usize, events: u32, now: u64) {
        match self.conns[i].state {
            State::Connecting => {
                if sys::socket_error(self.conns[i].fd) == 0 {
                    self.set_open(i);
                    self.start_traffic(i, now);
                } else {
                    self.connect_failed(i, now);
                }
            }
            State::Open => {
                // Blocked mid-write and the peer went away: the failure belongs to the write.
                if self.conns[i].want_out && events & (libc::EPOLLERR as u32 | libc::EPOLLHUP as u32) != 0 {
                    self.write_out(i);
                    return;
                }
                if events & (EV_IN | libc::EPOLLERR as u32 | libc::EPOLLHUP as u32) != 0 {
                    self.on_readable(i, now);
                }
                if events & EV_OUT != 0 && self.conns[i].state == State::Open {
                    if matches!(self.shared.config.workload, Workload::Echo { kind: EchoKind::Stream, .. }) {
                        self.stream_write(i);
                    } else if self.conns[i].want_out {
                        self.write_out(i);
                    }
                }
            }
            State::Backoff | State::Done => {}
        }
    }

    /// io_uring: one completion. Those of an earlier socket of the connection (an older generation)
    /// only release what they held.
    fn on_completion(&mut self, done: &Completion, now: u64) {
        let i = done.conn;
        let current = uring::same_generation(done.generation, self.conns[i].generation) && self.conns[i].state != State::Backoff;
        match done.op {
            Op::Connect => {
                if current && self.conns[i].state == State::Connecting {
                    if done.result == 0 {
                        self.set_open(i);
                        self.start_traffic(i, now);
                    } else {
                        self.connect_failed(i, now);
                    }
                }
            }
            Op::Recv => {
                let current = current && self.conns[i].state == State::Open;
                if let Some(bid) = done.buffer() {
                    if current && done.result > 0 {
                        // The buffer is the kernel's again only after `give_back` below and the next publish.
                        let data = unsafe { self.ring().data(bid, done.result as usize) };
                        self.on_data(i, data, now);
                    }
                    self.ring().give_back(bid);
                }
                if !current {
                    return;
                }
                match done.result {
                    0 => self.on_eof(i, now),
                    r if r == -libc::ENOBUFS => self.rearm.push((i, self.conns[i].generation)),
                    r if r < 0 => self.on_read_error(i, now),
                    _ => {
                        let c = &self.conns[i];
                        if !done.more() && c.state == State::Open && uring::same_generation(done.generation, c.generation) {
                            self.rearm.push((i, c.generation));
                        }
                    }
                }
            }
            Op::Send => {
                self.conns[i].send_busy = false;
                let current = current && self.conns[i].state == State::Open;
                if !current {
                    // The bytes went to an earlier socket; a newer one may be waiting to send.
                    self.resume_sending(i);
                    return;
                }
                if done.result < 0 {
                    self.r.errors.write += self.conns[i].inflight.len().max(1) as u64;
                    self.reconnect(i, now);
                    return;
                }
                let n = done.result as u64;
                if self.recording {
                    self.r.bytes_written += n;
                }
                let c = &mut self.conns[i];
                if matches!(self.shared.config.workload, Workload::Echo { kind: EchoKind::Stream, .. }) {
                    c.echo_bytes += n;
                    self.r.first_send_ns = self.r.first_send_ns.min(self.measure_start_ns);
                } else {
                    c.out_off += n as usize;
                    if c.out_off == c.out.len() {
                        c.out.clear();
                        c.out_off = 0;
                    }
                }
                self.resume_sending(i);
            }
        }
    }

    /// io_uring: the connection may send again (its previous send completed).
    fn resume_sending(&mut self, i: usize) {
        if self.conns[i].state != State::Open {
            return;
        }
        if matches!(self.shared.config.workload, Workload::Echo { kind: EchoKind::Stream, .. }) {
            self.stream_write(i);
        } else {
            self.flush(i);
        }
    }

    /// io_uring: after a batch of completions, hand the receive buffers back and re-arm the receives
    /// that ended.
    fn after_completions(&mut self) {
        let Io::Uring(u) = &mut self.io else { return };
        u.publish();
        for (i, generation) in self.rearm.drain(..) {
            let c = &self.conns[i];
            if c.state == State::Open && c.generation == generation {
                u.recv(c.fd, i, generation);
            }
        }
    }

    /// epoll: one read, then whatever it brought.
    fn on_readable(&mut self, i: usize, now: u64) {
        let mut buf = std::mem::take(&mut self.buf);
        match sys::read(self.conns[i].fd, &mut buf) {
            Ok(0) => self.on_eof(i, now),
            Ok(n) => self.on_data(i, &buf[..n], now),
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted) => {}
            Err(_) => self.on_read_error(i, now),
        }
        self.buf = buf;
    }

    /// The server closed. With nothing outstanding that is an ordinary end of keep-alive.
    fn on_eof(&mut self, i: usize, now: u64) {
        let c = &self.conns[i];
        let lost = c.inflight.len() as u64 + u64::from(c.inflight.is_empty() && !c.parser.idle());
        self.r.errors.read += lost;
        self.reconnect(i, now);
    }

    fn on_read_error(&mut self, i: usize, now: u64) {
        self.r.errors.read += self.conns[i].inflight.len().max(1) as u64;
        self.reconnect(i, now);
    }

    /// Bytes received on connection `i`, from either backend.
    fn on_data(&mut self, i: usize, data: &[u8], now: u64) {
        let n = data.len();
        if self.recording {
            self.r.bytes_read += n as u64;
        }
        match self.shared.config.workload {
            Workload::Http { .. } => self.on_http_bytes(i, data, now),
            Workload::Echo { kind: EchoKind::PingPong, size_bytes } => self.on_pingpong_bytes(i, data, size_bytes as u64, now),
            Workload::Echo { kind: EchoKind::Stream, size_bytes } => {
                if self.recording {
                    self.bump_timeline(now, n as u64);
                }
                let c = &mut self.conns[i];
                let _ = size_bytes;
                if let Some(limit_bytes) = self.limit {
                    // For streaming, `sent` counts bytes received: done once the budget came back.
                    c.sent += n as u64;
                    if c.sent >= limit_bytes && c.state != State::Done {
                        self.r.last_response_ns = now;
                        self.finish(i);
                    }
                }
            }
        }
    }

    fn on_http_bytes(&mut self, i: usize, data: &[u8], now: u64) {
        let expect = self.shared.expect.as_deref();
        let recording = self.recording;
        let measure_start = self.measure_start_ns;
        let c = &mut self.conns[i];
        let r = &mut self.r;
        let mut completed = 0usize;
        let mut close = false;
        let mut orphan = false;
        let fed = c.parser.feed(data, expect, |done: Complete| {
            let Some(sent) = c.inflight.pop_front() else {
                orphan = true; // a response to no request
                return;
            };
            completed += 1;
            close |= done.close;
            r.last_response_ns = now;
            if r.response_bytes == 0 {
                r.response_bytes = done.bytes;
            }
            if recording {
                r.requests += 1;
                r.status.count(done.status);
                if done.status / 100 != 2 {
                    r.errors.status += 1;
                }
                if done.mismatch {
                    r.errors.mismatch += 1;
                }
                r.latency.saturating_record(now.saturating_sub(sent.intended_ns).max(1));
                if let Some(u) = &mut r.uncorrected {
                    u.saturating_record(now.saturating_sub(sent.sent_ns).max(1));
                }
                let sec = ((now.saturating_sub(measure_start)) / NS_PER_S) as usize;
                if r.timeline.len() <= sec {
                    r.timeline.resize(sec + 1, 0);
                }
                r.timeline[sec] += 1;
            }
        });
        if fed.is_err() || orphan {
            self.r.errors.framing += self.conns[i].inflight.len().max(1) as u64;
            self.reconnect(i, now);
            return;
        }
        if close {
            self.r.errors.read += self.conns[i].inflight.len() as u64;
            self.reconnect(i, now);
            return;
        }
        self.after_responses(i, completed, now);
    }

    fn on_pingpong_bytes(&mut self, i: usize, got: &[u8], size: u64, now: u64) {
        let n = got.len();
        let c = &mut self.conns[i];
        let at = c.echo_bytes as usize;
        if at + n > size as usize || c.inflight.is_empty() {
            self.r.errors.framing += 1; // more bytes than were sent
            self.reconnect(i, now);
            return;
        }
        let wrong = got != &self.pattern[at..at + n];
        c.echo_bytes += n as u64;
        if wrong && self.recording {
            self.r.errors.mismatch += 1;
        }
        if c.echo_bytes < size {
            return;
        }
        c.echo_bytes = 0;
        let sent = c.inflight.pop_front().expect("checked above");
        self.r.last_response_ns = now;
        if self.r.response_bytes == 0 {
            self.r.response_bytes = size;
        }
        if self.recording {
            self.r.requests += 1;
            self.r.latency.saturating_record(now.saturating_sub(sent.intended_ns).max(1));
            if let Some(u) = &mut self.r.uncorrected {
                u.saturating_record(now.saturating_sub(sent.sent_ns).max(1));
            }
            self.bump_timeline(now, 1);
        }
        self.after_responses(i, 1, now);
    }

    fn bump_timeline(&mut self, now: u64, by: u64) {
        let sec = (now.saturating_sub(self.measure_start_ns) / NS_PER_S) as usize;
        if self.r.timeline.len() <= sec {
            self.r.timeline.resize(sec + 1, 0);
        }
        self.r.timeline[sec] += by;
    }

    /// `completed` responses arrived on connection `i`: send what the mode says comes next.
    fn after_responses(&mut self, i: usize, completed: usize, now: u64) {
        if completed > 0 {
            match self.shared.config.mode {
                Mode::Throughput => {
                    let n = completed.min(self.budget_left(i));
                    self.send(i, n, now, now);
                }
                Mode::Latency { think_time } => {
                    let at = now + think_time.as_nanos() as u64;
                    let generation = self.conns[i].generation;
                    for _ in 0..completed.min(self.budget_left(i)) {
                        self.timers.push(Reverse((at, i as u32, generation)));
                    }
                }
                Mode::Rate { .. } => self.send_due(i, now),
            }
        }
        self.check_done(i);
    }

    fn check_done(&mut self, i: usize) {
        let c = &mut self.conns[i];
        if let Some(r) = self.limit {
            if c.state == State::Open && c.sent >= r && c.inflight.is_empty() && !matches!(self.shared.config.workload, Workload::Echo { kind: EchoKind::Stream, .. }) {
                self.finish(i);
            }
        }
    }

    /// The connection has spent its `-n` budget. Its socket is closed so that a server closing idle
    /// connections cannot wake this thread again.
    fn finish(&mut self, i: usize) {
        self.close_socket(i);
        let c = &mut self.conns[i];
        c.state = State::Done;
        self.done += 1;
    }

    fn fire_timers(&mut self, now: u64) {
        while let Some(&Reverse((at, i, generation))) = self.timers.peek() {
            if at > now {
                break;
            }
            self.timers.pop();
            let i = i as usize;
            if self.conns[i].generation != generation {
                continue;
            }
            match self.conns[i].state {
                State::Backoff => self.connect_again(i, now),
                State::Open => match self.shared.config.mode {
                    Mode::Rate { .. } => {
                        self.conns[i].timer_at = 0;
                        self.send_due(i, now);
                    }
                    _ => {
                        let n = 1.min(self.budget_left(i));
                        self.send(i, n, now, now);
                    }
                },
                _ => {}
            }
        }
    }

    /// Every request outstanding longer than the timeout is a `timeout` error; so is a connect that hangs.
    fn scan_timeouts(&mut self, now: u64, timeout_ns: u64) {
        for i in 0..self.conns.len() {
            let c = &self.conns[i];
            let stuck = match c.state {
                State::Open => c.inflight.front().is_some_and(|s| now.saturating_sub(s.sent_ns) > timeout_ns),
                State::Connecting => now.saturating_sub(c.since_ns) > timeout_ns,
                _ => false,
            };
            if stuck {
                self.r.errors.timeout += c.inflight.len().max(1) as u64;
                self.reconnect(i, now);
            }
        }
    }

    /// Closes the socket and opens a new one (or finishes the connection when its budget is spent).
    fn reconnect(&mut self, i: usize, now: u64) {
        self.close_socket(i);
        let c = &mut self.conns[i];
        c.generation = c.generation.wrapping_add(1);
        c.parser.reset();
        c.inflight.clear();
        // A send still in flight keeps `send_busy`, so `out` is not rendered into until it completes.
        c.out.clear();
        c.out_off = 0;
        c.queued = 0;
        c.want_out = false;
        c.echo_bytes = 0;
        c.timer_at = 0;
        c.state = State::Backoff;
        if self.limit.is_some() && !self.has_budget(i) {
            self.finish(i);
            return;
        }
        self.connect_again(i, now);
    }

    fn connect_again(&mut self, i: usize, now: u64) {
        if self.start_connect(i).is_err() {
            self.connect_failed(i, now);
        }
    }

    /// A connect failed: count it, spend one request of the `-n` budget (so a dead server cannot
    /// keep the run going), and retry after a pause.
    fn connect_failed(&mut self, i: usize, now: u64) {
        self.r.errors.connect += 1;
        self.close_socket(i);
        let c = &mut self.conns[i];
        c.generation = c.generation.wrapping_add(1);
        c.state = State::Backoff;
        if let Some(limit) = self.limit {
            c.sent += 1;
            if c.sent >= limit {
                self.finish(i);
                return;
            }
        }
        self.timers.push(Reverse((now + RECONNECT_BACKOFF_NS, i as u32, c.generation)));
    }
}

/// Merges the workers' results into one report.
pub(super) fn merge(config: &LoadConfig, results: Vec<WorkerResult>) -> LoadReport {
    let mut latency = new_latency_histogram();
    let mut uncorrected = matches!(config.mode, Mode::Rate { .. }).then(new_latency_histogram);
    let mut rep = LoadReport::empty(results.len(), config.connections);
    let (mut first, mut last, mut measured) = (u64::MAX, 0u64, 0u64);
    for r in &results {
        rep.requests += r.requests;
        rep.errors.add(&r.errors);
        rep.status.add(&r.status);
        rep.bytes_read += r.bytes_read;
        rep.bytes_written += r.bytes_written;
        if rep.response_bytes == 0 {
            rep.response_bytes = r.response_bytes;
        }
        latency.add(&r.latency).expect("histograms share their bounds");
        if let (Some(u), Some(ru)) = (&mut uncorrected, &r.uncorrected) {
            u.add(ru).expect("histograms share their bounds");
        }
        if rep.timeline.len() < r.timeline.len() {
            rep.timeline.resize(r.timeline.len(), 0);
        }
        for (t, v) in rep.timeline.iter_mut().zip(&r.timeline) {
            *t += v;
        }
        rep.client_cpu_s += r.cpu_s;
        first = first.min(r.first_send_ns);
        last = last.max(r.last_response_ns);
        measured = measured.max(r.measured_ns);
        rep.interrupted |= r.interrupted;
    }
    rep.duration_s = match config.stop {
        Stop::RequestsPerConnection(_) if !rep.interrupted && last > first => (last - first) as f64 / 1e9,
        _ => measured as f64 / 1e9,
    };
    rep.latency = latency;
    rep.latency_uncorrected = uncorrected;
    rep
}
