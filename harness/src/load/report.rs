//! What one load run measured: counts, errors by class, latency histograms, intervals, client CPU.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::stats::histogram::{self, LatencySummary};
use crate::stats::intervals::{Intervals, IntervalsError};

/// Why two shares of one measurement do not add up.
#[derive(Debug, thiserror::Error)]
pub enum AddError {
    #[error("the latency histograms do not add: {0:?}")]
    Histogram(hdrhistogram::errors::AdditionError),
    #[error(transparent)]
    Intervals(#[from] IntervalsError),
}

/// Errors by class. On the hot path they are counted, never thrown; the connection is reopened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorCounts {
    /// connect() refused, reset or failed
    pub connect: u64,
    /// read failed or the peer closed with a request outstanding
    pub read: u64,
    /// write failed
    pub write: u64,
    /// a request unanswered for longer than the timeout
    pub timeout: u64,
    /// a complete response whose status is not 2xx
    pub status: u64,
    /// bytes that are not a valid HTTP response
    pub framing: u64,
    /// a well-framed 2xx response whose bytes or body are not what the workload expects
    pub mismatch: u64,
}

impl ErrorCounts {
    pub fn total(&self) -> u64 {
        self.connect + self.read + self.write + self.timeout + self.status + self.framing + self.mismatch
    }
    pub fn add(&mut self, o: &ErrorCounts) {
        self.connect += o.connect;
        self.read += o.read;
        self.write += o.write;
        self.timeout += o.timeout;
        self.status += o.status;
        self.framing += o.framing;
        self.mismatch += o.mismatch;
    }
}

/// How the window's requests (or exchanges, or messages) were spread over the connections.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ConnectionSpread {
    pub min: u64,
    /// The 1st percentile: the connection below which the worst-served 1% lie.
    pub p1: u64,
    pub median: u64,
    pub max: u64,
    /// Connections that received nothing in the window.
    pub starved: u64,
    /// Jain's fairness index, (Σx)² / (n Σx²): 1 when every connection got the same, 1/n when one got
    /// everything; absent when no connection got anything.
    pub jain: Option<f64>,
}

impl ConnectionSpread {
    /// The spread of `counts` (sorted in place); None for no connection.
    pub fn of(counts: &mut [u64]) -> Option<ConnectionSpread> {
        if counts.is_empty() {
            return None;
        }
        counts.sort_unstable();
        let n = counts.len();
        let sum: f64 = counts.iter().map(|&x| x as f64).sum();
        let squares: f64 = counts.iter().map(|&x| (x as f64) * (x as f64)).sum();
        Some(ConnectionSpread {
            min: counts[0],
            p1: counts[(n - 1) / 100],
            median: counts[n / 2],
            max: counts[n - 1],
            starved: counts.iter().take_while(|&&x| x == 0).count() as u64,
            jain: (squares > 0.0).then(|| sum * sum / (n as f64 * squares)),
        })
    }
}

/// Responses by status class.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusCounts {
    pub s1xx: u64,
    pub s2xx: u64,
    pub s3xx: u64,
    pub s4xx: u64,
    pub s5xx: u64,
    pub other: u64,
}

impl StatusCounts {
    pub fn count(&mut self, code: u16) {
        match code / 100 {
            1 => self.s1xx += 1,
            2 => self.s2xx += 1,
            3 => self.s3xx += 1,
            4 => self.s4xx += 1,
            5 => self.s5xx += 1,
            _ => self.other += 1,
        }
    }
    pub fn add(&mut self, o: &StatusCounts) {
        self.s1xx += o.s1xx;
        self.s2xx += o.s2xx;
        self.s3xx += o.s3xx;
        self.s4xx += o.s4xx;
        self.s5xx += o.s5xx;
        self.other += o.other;
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoadReport {
    /// Valid responses (HTTP: a 2xx status and the body the workload expects), exchanges (echo ping-pong)
    /// or `size`-byte messages received (echo stream) inside the measured window: what req/s counts. An
    /// invalid response is an error of class `status` or `mismatch` instead.
    pub requests: u64,
    /// Connections reopened inside the measured window, after an error or a close by the server.
    #[serde(default)]
    pub reconnects: u64,
    /// Keep-alive connections the server ended with requests outstanding inside the measured window, however
    /// it ended them (a close after `Connection: close` or without it, a reset): the requests lost are
    /// errors of their class (`read`, `write`) besides.
    #[serde(default)]
    pub keepalive_lost: u64,
    /// Keep-alive connections the server closed cleanly inside the measured window: after a complete
    /// response, with no request outstanding (a keep-alive limit such as nginx's `keepalive_requests`, an
    /// idle timeout). No error, but the round measured reconnects too.
    #[serde(default)]
    pub server_closes: u64,
    /// Connects that completed inside the measured window: with a connection per request about one per
    /// request (those still in flight at the window's edges make the difference), with keep-alive the
    /// reconnects that succeeded.
    #[serde(default)]
    pub connections_opened: u64,
    /// Rate mode: requests whose intended send time fell inside the measured window but that were never
    /// sent (the client fell behind its schedule, or the connections were all waiting on answers).
    #[serde(default)]
    pub backlog: u64,
    /// With a ramp (`LoadConfig::ramp`): seconds from the start until every connection had been served
    /// (or the ramp's limit), and the connections still unserved when the window opened.
    #[serde(default)]
    pub ramp_s: Option<f64>,
    #[serde(default)]
    pub unserved_at_start: Option<u64>,
    /// How evenly the connections were served inside the window; absent with no connection.
    #[serde(default)]
    pub per_connection: Option<ConnectionSpread>,
    /// Connections (with a connection per request, slots) that received at least one response (exchange,
    /// message) in the run, ramp included; every one of them was established (the run stops at a connect
    /// that fails), which a server that never accepts does not prevent: the kernel completes the
    /// handshake. The window's own count is `connections_served_in_window`. Absent for external tools.
    #[serde(default)]
    pub connections_served: Option<u64>,
    pub errors: ErrorCounts,
    pub status: StatusCounts,
    /// Seconds of the measured window: first send to last response with `-n`, the measured part with `-d`.
    pub duration_s: f64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Size of one response in bytes (head and body) as first seen; 0 if none was seen.
    pub response_bytes: u64,
    /// Latency in ns. In rate mode it is measured from each request's intended send time (corrected).
    #[serde(with = "histogram::serde_b64")]
    pub latency: Histogram<u64>,
    /// Rate mode only: latency from the actual send (uncorrected), for comparison.
    #[serde(with = "histogram::serde_b64_opt", default)]
    pub latency_uncorrected: Option<Histogram<u64>>,
    /// The window cut into intervals (`LoadConfig::interval`), each with its responses, errors and latency
    /// histogram, which add up to `latency`; None from external tools.
    #[serde(default)]
    pub intervals: Option<Intervals>,
    /// CPU seconds (user + system) the client's worker threads spent in the measured window.
    pub client_cpu_s: f64,
    /// The same per worker thread, in thread order (the busiest one shows a client limit that a mean over
    /// threads hides); empty for external tools.
    #[serde(default)]
    pub thread_cpu_s: Vec<f64>,
    /// Of `client_cpu_s`, the time a busy-polling client spent in asks of the kernel that found nothing:
    /// CPU it would otherwise have slept through. 0 when the client slept in its waits.
    #[serde(default)]
    pub client_poll_s: f64,
    /// The same per worker thread, in thread order.
    #[serde(default)]
    pub thread_poll_s: Vec<f64>,
    /// `client_cpu_s` split into user and system time, and the worker threads' voluntary and involuntary
    /// context switches in the window (getrusage per thread); 0 for external tools.
    #[serde(default)]
    pub client_user_s: f64,
    #[serde(default)]
    pub client_system_s: f64,
    #[serde(default)]
    pub client_voluntary_switches: u64,
    #[serde(default)]
    pub client_involuntary_switches: u64,
    /// The worker threads' moves to another CPU in the window; absent where the kernel does not say, and
    /// for external tools.
    #[serde(default)]
    pub client_migrations: Option<u64>,
    /// System calls the built-in client's threads made in the window, counted where they are made (reads,
    /// writes and waits with epoll; `io_uring_enter`s with io_uring); 0 for external tools.
    #[serde(default)]
    pub client_system_calls: u64,
    /// How the client waited for the kernel: "sleep", or "busy" (polling without sleeping); empty for
    /// external tools.
    #[serde(default)]
    pub poll: String,
    /// `counter`: what the values returned show about lost updates (None for other workloads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter: Option<super::counter::CounterReport>,
    /// Worker threads and connections that ran.
    pub threads: usize,
    pub connections: usize,
    /// True when the run was stopped early (Ctrl-C); the figures cover what was measured until then.
    pub interrupted: bool,
    /// How the client moved bytes: "io_uring" or "epoll", with the reason when io_uring was wanted
    /// but not available.
    #[serde(default)]
    pub io: String,
}

impl LoadReport {
    /// A report with nothing measured yet.
    pub fn empty(threads: usize, connections: usize) -> Self {
        LoadReport {
            requests: 0,
            reconnects: 0,
            keepalive_lost: 0,
            server_closes: 0,
            connections_opened: 0,
            backlog: 0,
            ramp_s: None,
            unserved_at_start: None,
            per_connection: None,
            connections_served: None,
            errors: ErrorCounts::default(),
            status: StatusCounts::default(),
            duration_s: 0.0,
            bytes_read: 0,
            bytes_written: 0,
            response_bytes: 0,
            latency: histogram::new_latency_histogram(),
            latency_uncorrected: None,
            intervals: None,
            client_cpu_s: 0.0,
            thread_cpu_s: Vec::new(),
            client_poll_s: 0.0,
            thread_poll_s: Vec::new(),
            client_user_s: 0.0,
            client_system_s: 0.0,
            client_voluntary_switches: 0,
            client_involuntary_switches: 0,
            client_migrations: None,
            client_system_calls: 0,
            poll: String::new(),
            counter: None,
            threads,
            connections,
            interrupted: false,
            io: String::new(),
        }
    }

    /// Adds `part`, another thread's or client host's share of the same measurement: counts, bytes, CPU
    /// times, switches and system calls add, the latency histograms add (so every quantile is read from
    /// every latency), interval i of the intervals adds, the per-thread lists are laid end to end, and so do
    /// threads and connections. Migrations stay known only while every part knows its own (start the sum
    /// at `Some(0)`). The window, the ramp and the spread over connections are the caller's to combine.
    pub fn add(&mut self, part: &LoadReport) -> Result<(), AddError> {
        self.requests += part.requests;
        self.reconnects += part.reconnects;
        self.keepalive_lost += part.keepalive_lost;
        self.server_closes += part.server_closes;
        self.connections_opened += part.connections_opened;
        // Known as long as some part says; a part that does not say adds nothing.
        self.connections_served = part.connections_served.map(|p| self.connections_served.unwrap_or(0) + p).or(self.connections_served);
        self.backlog += part.backlog;
        self.errors.add(&part.errors);
        self.status.add(&part.status);
        self.bytes_read += part.bytes_read;
        self.bytes_written += part.bytes_written;
        if self.response_bytes == 0 {
            self.response_bytes = part.response_bytes;
        }
        self.latency.add(&part.latency).map_err(AddError::Histogram)?;
        if let Some(u) = &part.latency_uncorrected {
            self.latency_uncorrected.get_or_insert_with(histogram::new_latency_histogram).add(u).map_err(AddError::Histogram)?;
        }
        if let Some(i) = &part.intervals {
            match &mut self.intervals {
                Some(into) => into.add(i)?,
                None => self.intervals = Some(i.clone()),
            }
        }
        self.client_cpu_s += part.client_cpu_s;
        self.thread_cpu_s.extend(&part.thread_cpu_s);
        self.client_poll_s += part.client_poll_s;
        self.thread_poll_s.extend(&part.thread_poll_s);
        self.client_user_s += part.client_user_s;
        self.client_system_s += part.client_system_s;
        self.client_voluntary_switches += part.client_voluntary_switches;
        self.client_involuntary_switches += part.client_involuntary_switches;
        self.client_migrations = self.client_migrations.zip(part.client_migrations).map(|(a, b)| a + b);
        self.client_system_calls += part.client_system_calls;
        self.threads += part.threads;
        self.connections += part.connections;
        self.interrupted |= part.interrupted;
        Ok(())
    }

    /// Connections served inside the measured window: those asked for less the starved ones; absent where
    /// the spread over the connections is not known (an external tool's run).
    pub fn connections_served_in_window(&self) -> Option<u64> {
        Some((self.connections as u64).saturating_sub(self.per_connection?.starved))
    }

    pub fn requests_per_s(&self) -> f64 {
        if self.duration_s > 0.0 { self.requests as f64 / self.duration_s } else { 0.0 }
    }
    pub fn bytes_read_per_s(&self) -> f64 {
        if self.duration_s > 0.0 { self.bytes_read as f64 / self.duration_s } else { 0.0 }
    }
    pub fn latency_summary(&self) -> LatencySummary {
        LatencySummary::of(&self.latency)
    }
    /// The client's CPU seconds of work: all it used but what busy-polling spent finding nothing.
    pub fn client_work_s(&self) -> f64 {
        (self.client_cpu_s - self.client_poll_s).max(0.0)
    }
    /// Each worker thread's CPU seconds of work, in thread order.
    pub fn thread_work_s(&self) -> Vec<f64> {
        self.thread_cpu_s.iter().enumerate().map(|(i, c)| (c - self.thread_poll_s.get(i).copied().unwrap_or(0.0)).max(0.0)).collect()
    }
    /// The client-bound rule's figure for one client (this machine, or one host): its busiest thread's
    /// share of the window (a mean over threads hides one at 100%), or its work over (window × its CPUs)
    /// when that is higher (more threads than CPUs: then no thread can be busy alone). Busy-polling that
    /// found nothing is not work. Absent for a window of no length.
    pub fn client_limit_pct(&self, window_s: f64, cpus: usize) -> Option<f64> {
        (window_s > 0.0).then(|| {
            let busiest = self.thread_work_s().into_iter().fold(0.0, f64::max) / window_s * 100.0;
            let over_cpus = self.client_work_s() / (window_s * cpus.max(1) as f64) * 100.0;
            busiest.max(over_cpus)
        })
    }
    /// Client CPU microseconds of work per completed request (busy-polling that found nothing left out);
    /// none without a valid response, since there is nothing to divide by.
    pub fn client_cpu_us_per_request(&self) -> Option<f64> {
        (self.requests > 0).then(|| self.client_work_s() * 1e6 / self.requests as f64)
    }
}
