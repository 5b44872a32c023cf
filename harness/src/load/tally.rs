//! One worker's counts, histograms and timeline while it measures, and their merge into the report.

use hdrhistogram::Histogram;

use super::config::{LoadConfig, Mode, Stop, Workload};
use super::counter::CounterTally;
use super::mix::Mix;
use super::report::{ConnectionSpread, ErrorCounts, LoadReport, StatusCounts};
use crate::stats::histogram::new_latency_histogram;

const NS_PER_S: u64 = 1_000_000_000;

/// One thread's measurements, merged by `merge`.
pub(super) struct WorkerResult {
    pub requests: u64,
    pub reconnects: u64,
    pub keepalive_lost: u64,
    pub connections_opened: u64,
    pub backlog: u64,
    /// What each connection received in the window (`LoadReport::requests`' unit).
    pub per_connection: Vec<u64>,
    pub errors: ErrorCounts,
    pub status: StatusCounts,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub response_bytes: u64,
    pub latency: Histogram<u64>,
    pub uncorrected: Option<Histogram<u64>>,
    pub timeline: Vec<u64>,
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
            connections_opened: 0,
            backlog: 0,
            per_connection: Vec::new(),
            errors: ErrorCounts::default(),
            status: StatusCounts::default(),
            bytes_read: 0,
            bytes_written: 0,
            response_bytes: 0,
            latency: new_latency_histogram(),
            uncorrected: None,
            timeline: Vec::new(),
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

    /// A response completed: its latency from the intended and from the actual send.
    #[inline]
    pub fn record_latency(&mut self, now: u64, intended_ns: u64, sent_ns: u64) {
        self.latency.saturating_record(now.saturating_sub(intended_ns).max(1));
        if let Some(u) = &mut self.uncorrected {
            u.saturating_record(now.saturating_sub(sent_ns).max(1));
        }
    }

    /// Adds `by` to the second of the measured window that `now` falls in.
    #[inline]
    pub fn bump_timeline(&mut self, now: u64, measure_start_ns: u64, by: u64) {
        let sec = (now.saturating_sub(measure_start_ns) / NS_PER_S) as usize;
        if self.timeline.len() <= sec {
            self.timeline.resize(sec + 1, 0);
        }
        self.timeline[sec] += by;
    }
}

/// Merges the workers' results into one report.
pub(super) fn merge(config: &LoadConfig, results: Vec<WorkerResult>) -> LoadReport {
    let mut latency = new_latency_histogram();
    let mut uncorrected = matches!(config.mode, Mode::Rate { .. }).then(new_latency_histogram);
    let mut rep = LoadReport::empty(results.len(), config.connections);
    let (mut first, mut last, mut measured) = (u64::MAX, 0u64, 0u64);
    let mut per_connection: Vec<u64> = Vec::with_capacity(config.connections);
    let mut counter = CounterTally::default();
    let mut sent = 0;
    let mut repeats_counted = 0;
    // Summed over the threads: a thread that could not say makes the sum unknown.
    rep.client_migrations = Some(0);
    for r in &results {
        sent += r.sent;
        repeats_counted += r.repeats_counted;
        rep.requests += r.requests;
        rep.reconnects += r.reconnects;
        rep.keepalive_lost += r.keepalive_lost;
        rep.connections_opened += r.connections_opened;
        rep.backlog += r.backlog;
        per_connection.extend_from_slice(&r.per_connection);
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
        rep.thread_cpu_s.push(r.cpu_s);
        rep.client_poll_s += r.poll_s;
        rep.client_user_s += r.usage.user_s;
        rep.client_system_s += r.usage.system_s;
        rep.client_voluntary_switches += r.usage.voluntary_switches;
        rep.client_involuntary_switches += r.usage.involuntary_switches;
        rep.client_migrations = rep.client_migrations.zip(r.usage.migrations).map(|(a, b)| a + b);
        rep.client_system_calls += r.system_calls;
        rep.thread_poll_s.push(r.poll_s);
        first = first.min(r.first_send_ns);
        last = last.max(r.last_response_ns);
        measured = measured.max(r.measured_ns);
        rep.interrupted |= r.interrupted;
    }
    rep.duration_s = match config.stop {
        Stop::RequestsPerConnection(_) if !rep.interrupted && last > first => (last - first) as f64 / 1e9,
        _ => measured as f64 / 1e9,
    };
    rep.per_connection = ConnectionSpread::of(&mut per_connection);
    if let Workload::Http { mix: Mix::Counter { .. }, pipeline, .. } = &config.workload {
        for r in results {
            counter.absorb(r.counter);
        }
        // A client before this one (an earlier round) can have left a request in flight on each connection.
        let c = counter.report(sent, config.connections as u64 * u64::from(*pipeline));
        // Every lost update is a mismatch error once: the repeats a thread saw as they arrived in the
        // window are counted already.
        rep.errors.mismatch += c.lost_updates.saturating_sub(repeats_counted);
        rep.counter = Some(c);
    }
    rep.latency = latency;
    rep.latency_uncorrected = uncorrected;
    rep
}
