//! One worker's counts, histograms and intervals while it measures, and their merge into the report.

use hdrhistogram::Histogram;

use super::config::{EchoKind, LoadConfig, Mode, Stop, Workload};
use super::counter::CounterTally;
use super::intervals::IntervalRecorder;
use super::mix::Mix;
use super::report::{ConnectionSpread, ErrorCounts, LoadReport, StatusCounts};
use crate::stats::histogram::new_latency_histogram;
use crate::stats::intervals::Intervals;

/// One thread's measurements, merged by `merge`.
pub(super) struct WorkerResult {
    pub requests: u64,
    pub reconnects: u64,
    pub keepalive_lost: u64,
    pub server_closes: u64,
    pub connections_opened: u64,
    pub backlog: u64,
    /// What each connection received in the window (`LoadReport::requests`' unit).
    pub per_connection: Vec<u64>,
    /// Connections that were ever served in the run.
    pub connections_served: u64,
    pub errors: ErrorCounts,
    pub status: StatusCounts,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub response_bytes: u64,
    /// The closed intervals' latencies: the current interval's are in `intervals` until it closes.
    pub latency: Histogram<u64>,
    pub uncorrected: Option<Histogram<u64>>,
    pub intervals: IntervalRecorder,
    pub cpu_s: f64,
    /// The same split into user and system time, with the thread's context switches in the window.
    pub usage: super::sys::ThreadUsage,
    /// System calls the thread's backend made in the window (counted where they are made).
    pub system_calls: u64,
    /// Of `cpu_s`, the time spent busy-polling: asks of the kernel that found nothing (`Poll::Busy`).
    pub poll_s: f64,
    pub first_send_ns: u64,
    pub last_response_ns: u64,
    pub measured_ns: u64,
    pub interrupted: bool,
    /// Requests sent, in and out of the window.
    pub sent: u64,
    /// `counter`: the values received, in and out of the window.
    pub counter: CounterTally,
    /// `counter`: values this thread had received before, counted as `mismatch` errors (in the window).
    pub repeats_counted: u64,
}

impl WorkerResult {
    pub fn empty() -> Self {
        WorkerResult {
            requests: 0,
            reconnects: 0,
            keepalive_lost: 0,
            server_closes: 0,
            connections_opened: 0,
            backlog: 0,
            per_connection: Vec::new(),
            connections_served: 0,
            errors: ErrorCounts::default(),
            status: StatusCounts::default(),
            bytes_read: 0,
            bytes_written: 0,
            response_bytes: 0,
            latency: new_latency_histogram(),
            uncorrected: None,
            intervals: IntervalRecorder::new(super::intervals::DEFAULT_INTERVAL, 0),
            cpu_s: 0.0,
            usage: super::sys::ThreadUsage::default(),
            system_calls: 0,
            poll_s: 0.0,
            first_send_ns: u64::MAX,
            last_response_ns: 0,
            measured_ns: 0,
            interrupted: false,
            sent: 0,
            counter: CounterTally::default(),
            repeats_counted: 0,
        }
    }

    /// A response completed: its latency from the intended and from the actual send, into the current interval.
    #[inline]
    pub fn record_latency(&mut self, now: u64, intended_ns: u64, sent_ns: u64) {
        self.intervals.current.saturating_record(now.saturating_sub(intended_ns).max(1));
        if let Some(u) = &mut self.uncorrected {
            u.saturating_record(now.saturating_sub(sent_ns).max(1));
        }
    }

    /// The loop's clock read `now`: past the current interval's end, the next one begins (what the loop
    /// does with `now` from here on counts in it).
    #[inline]
    pub fn tick(&mut self, now: u64, stream: bool) {
        if now >= self.intervals.end_ns {
            let (units, errors) = (self.units(stream), self.errors.total());
            self.intervals.roll(now, units, errors, &mut self.latency);
        }
    }

    /// The window opened for this thread at `now` (for every thread at `origin_ns`).
    pub fn start_intervals(&mut self, origin_ns: u64, now: u64, stream: bool) {
        let (units, errors) = (self.units(stream), self.errors.total());
        self.intervals.start(origin_ns, now, units, errors);
    }

    /// The window closed: the last interval is closed and in `latency`.
    pub fn close_intervals(&mut self, stream: bool) {
        let (units, errors) = (self.units(stream), self.errors.total());
        self.intervals.close(units, errors, &mut self.latency);
    }

    /// What an interval counts: responses, or with an echo stream bytes (messages at the merge).
    fn units(&self, stream: bool) -> u64 {
        if stream { self.bytes_read } else { self.requests }
    }
}

impl WorkerResult {
    /// The figures the report holds of this thread's share, and what only the merge uses: its connections'
    /// counts, the `counter` tally and the window's edges.
    /// `units_per_request`: what one request is of an interval's count (an echo stream's message size).
    fn into_share(self, units_per_request: u64) -> (LoadReport, Edges) {
        let mut part = LoadReport::empty(1, 0);
        part.requests = self.requests;
        part.reconnects = self.reconnects;
        part.keepalive_lost = self.keepalive_lost;
        part.server_closes = self.server_closes;
        part.connections_opened = self.connections_opened;
        part.connections_served = Some(self.connections_served);
        part.backlog = self.backlog;
        part.errors = self.errors;
        part.status = self.status;
        part.bytes_read = self.bytes_read;
        part.bytes_written = self.bytes_written;
        part.response_bytes = self.response_bytes;
        part.latency = self.latency;
        part.latency_uncorrected = self.uncorrected;
        part.intervals = Some(self.intervals.into_intervals(units_per_request));
        part.client_cpu_s = self.cpu_s;
        part.thread_cpu_s = vec![self.cpu_s];
        part.client_poll_s = self.poll_s;
        part.thread_poll_s = vec![self.poll_s];
        part.client_user_s = self.usage.user_s;
        part.client_system_s = self.usage.system_s;
        part.client_voluntary_switches = self.usage.voluntary_switches;
        part.client_involuntary_switches = self.usage.involuntary_switches;
        part.client_migrations = self.usage.migrations;
        part.client_system_calls = self.system_calls;
        part.interrupted = self.interrupted;
        let edges = Edges {
            per_connection: self.per_connection,
            counter: self.counter,
            sent: self.sent,
            repeats_counted: self.repeats_counted,
            first_send_ns: self.first_send_ns,
            last_response_ns: self.last_response_ns,
            measured_ns: self.measured_ns,
        };
        (part, edges)
    }
}

/// What of a thread's result only the merge uses.
struct Edges {
    per_connection: Vec<u64>,
    counter: CounterTally,
    sent: u64,
    repeats_counted: u64,
    first_send_ns: u64,
    last_response_ns: u64,
    measured_ns: u64,
}

/// Merges the workers' results into one report.
pub(super) fn merge(config: &LoadConfig, results: Vec<WorkerResult>) -> LoadReport {
    let mut rep = LoadReport::empty(0, config.connections);
    let (mut first, mut last, mut measured) = (u64::MAX, 0u64, 0u64);
    let mut per_connection: Vec<u64> = Vec::with_capacity(config.connections);
    let mut counter = CounterTally::default();
    let mut sent = 0;
    let mut repeats_counted = 0;
    // Summed over the threads: a thread that could not say makes the sum unknown.
    rep.client_migrations = Some(0);
    let units_per_request = match config.workload {
        Workload::Echo { kind: EchoKind::Stream, size_bytes } => size_bytes as u64,
        _ => 1,
    };
    for r in results {
        let (part, e) = r.into_share(units_per_request);
        rep.add(&part).expect("histograms and intervals share their bounds");
        sent += e.sent;
        repeats_counted += e.repeats_counted;
        per_connection.extend_from_slice(&e.per_connection);
        counter.absorb(e.counter);
        first = first.min(e.first_send_ns);
        last = last.max(e.last_response_ns);
        measured = measured.max(e.measured_ns);
    }
    // In rate mode the uncorrected histogram is there even when no thread recorded into one.
    if matches!(config.mode, Mode::Rate { .. }) && rep.latency_uncorrected.is_none() {
        rep.latency_uncorrected = Some(new_latency_histogram());
    }
    rep.duration_s = match config.stop {
        Stop::RequestsPerConnection(_) if !rep.interrupted && last > first => (last - first) as f64 / 1e9,
        _ => measured as f64 / 1e9,
    };
    if let Some(i) = &mut rep.intervals {
        let length_ns = config.interval.as_nanos() as u64;
        i.fit(Intervals::count_for((rep.duration_s * 1e9) as u64, length_ns)).expect("this process encoded them");
    }
    rep.per_connection = ConnectionSpread::of(&mut per_connection);
    if let Workload::Http { mix: Mix::Counter { .. }, pipeline, .. } = &config.workload {
        // A client before this one (an earlier round) can have left a request in flight on each connection.
        let c = counter.report(sent, config.connections as u64 * u64::from(*pipeline));
        // Every lost update is a mismatch error once: the repeats a thread saw as they arrived in the
        // window are counted already.
        rep.errors.mismatch += c.lost_updates.saturating_sub(repeats_counted);
        rep.counter = Some(c);
    }
    rep
}
