//! What the client measured in one round, as run.json stores it under each round's `load`. The load
//! generator has its own report (`load::LoadReport`), turned into this one by a conversion in `run/`, so a
//! change of the engine's report is not a change of the file format.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::stats::histogram::{self, LatencySummary};
use super::intervals::Intervals;

/// Errors by class.
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

    /// Adds another round's counts (a summary's errors are those of its rounds).
    pub fn add(&mut self, o: &ErrorCounts) {
        let ErrorCounts { connect, read, write, timeout, status, framing, mismatch } = *o;
        *self = ErrorCounts {
            connect: self.connect + connect,
            read: self.read + read,
            write: self.write + write,
            timeout: self.timeout + timeout,
            status: self.status + status,
            framing: self.framing + framing,
            mismatch: self.mismatch + mismatch,
        };
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

/// A measurement's connections as the client saw them over its rounds: asked for (and established: a
/// connect completes in the kernel whether or not the server ever accepts, which users of wrk cannot tell
/// from being served), and the fewest served in a round and served inside a round's window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnectionsSummary {
    pub asked: u64,
    pub served: u64,
    pub served_in_window: u64,
}

impl ConnectionsSummary {
    /// Over `rounds`; absent when any of them does not say (an external tool's, one without the spread over
    /// its connections) or there is none.
    pub fn over<'a>(rounds: impl IntoIterator<Item = &'a RoundLoad>) -> Option<ConnectionsSummary> {
        let mut fewest: Option<ConnectionsSummary> = None;
        for l in rounds {
            let asked = l.connections as u64;
            let this = ConnectionsSummary {
                asked,
                served: l.connections_served?,
                served_in_window: l.connections_served_in_window()?,
            };
            fewest = Some(match fewest {
                None => this,
                Some(f) => ConnectionsSummary {
                    asked: f.asked.max(this.asked),
                    served: f.served.min(this.served),
                    served_in_window: f.served_in_window.min(this.served_in_window),
                },
            });
        }
        fewest
    }

    /// Whether some connection asked for went unserved inside a window.
    pub fn short(&self) -> bool {
        self.served_in_window < self.asked
    }
}

/// What `counter`'s answers showed over a whole run (warm-up included).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterCheck {
    /// Keys answered at least once.
    pub keys: u64,
    /// Values received.
    pub values: u64,
    /// Values received more than once for one key: two increments that returned one number.
    pub repeated: u64,
    /// Numbers missing between a key's lowest and highest value received.
    pub gaps: u64,
    /// How many numbers may be missing without an update being lost.
    pub slack: u64,
    /// `repeated` plus the gaps beyond `slack`: increments the server lost.
    pub lost_updates: u64,
}

/// The client's figures of one round (the built-in generator's, merged over client hosts, or an external
/// tool's).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RoundLoad {
    /// Valid responses (HTTP: a 2xx status and the body the workload expects), exchanges (echo ping-pong)
    /// or `size`-byte messages received (echo stream) inside the measured window: what req/s counts.
    pub requests: u64,
    /// Connections reopened inside the measured window, after an error or a close by the server.
    #[serde(default)]
    pub reconnects: u64,
    /// Keep-alive connections the server ended with requests outstanding inside the measured window, however
    /// it ended them (a close after `Connection: close` or without it, a reset); the requests lost are
    /// errors of their class besides.
    #[serde(default)]
    pub keepalive_lost: u64,
    /// Keep-alive connections the server closed cleanly inside the measured window: after a complete
    /// response, with no request outstanding (a keep-alive limit, an idle timeout). No error.
    #[serde(default)]
    pub server_closes: u64,
    /// Whether `keepalive_lost` leaves the clean closes out: true in every load written now. Runs stored
    /// before it was written counted them in `keepalive_lost` too; reading them subtracts them
    /// (`measurement::read_rounds`), so in memory it is always true.
    #[serde(default)]
    pub keepalive_lost_excludes_server_closes: bool,
    /// Connects that completed inside the measured window.
    #[serde(default)]
    pub connections_opened: u64,
    /// Rate mode: requests whose intended send time fell inside the measured window but that were never
    /// sent.
    #[serde(default)]
    pub backlog: u64,
    /// Seconds from the start until every connection had been served (or the ramp's limit), and the
    /// connections still unserved when the window opened.
    #[serde(default)]
    pub ramp_s: Option<f64>,
    #[serde(default)]
    pub unserved_at_start: Option<u64>,
    /// How evenly the connections were served inside the window; absent with no connection.
    #[serde(default)]
    pub per_connection: Option<ConnectionSpread>,
    /// Connections (with a connection per request, slots) that received at least one response (exchange,
    /// message) in the round, ramp included; every one was established (a failed connect stops the round),
    /// which a server that never accepts does not prevent: the kernel completes the handshake. Those served
    /// inside the window: `connections_served_in_window()`. Absent for external tools and in runs stored
    /// before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections_served: Option<u64>,
    pub errors: ErrorCounts,
    pub status: StatusCounts,
    /// Seconds of the measured window.
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
    /// The window cut into intervals of equal length (`--interval`), each with its responses, errors and
    /// latency histogram (HdrHistogram V2, base64, as `latency`); they add up to `latency`. Absent for
    /// external tools and in runs stored before intervals were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intervals: Option<Intervals>,
    /// Runs stored before intervals were kept: the responses completed in each second of the window. Kept
    /// as read so that such a run is written back unchanged; absent in newer runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<Vec<u64>>,
    /// CPU seconds (user + system) the client's worker threads spent in the measured window.
    pub client_cpu_s: f64,
    /// The same per worker thread, in thread order; empty for external tools.
    #[serde(default)]
    pub thread_cpu_s: Vec<f64>,
    /// Of `client_cpu_s`, the time a busy-polling client spent in asks of the kernel that found nothing.
    #[serde(default)]
    pub client_poll_s: f64,
    /// The same per worker thread, in thread order.
    #[serde(default)]
    pub thread_poll_s: Vec<f64>,
    /// `client_cpu_s` split into user and system time, and the worker threads' context switches.
    #[serde(default)]
    pub client_user_s: f64,
    #[serde(default)]
    pub client_system_s: f64,
    #[serde(default)]
    pub client_voluntary_switches: u64,
    #[serde(default)]
    pub client_involuntary_switches: u64,
    /// The worker threads' moves to another CPU in the window; absent where the kernel does not say.
    #[serde(default)]
    pub client_migrations: Option<u64>,
    /// System calls the built-in client's threads made in the window; 0 for external tools.
    #[serde(default)]
    pub client_system_calls: u64,
    /// How the client waited for the kernel: "sleep" or "busy"; empty for external tools.
    #[serde(default)]
    pub poll: String,
    /// `counter`: what the values returned show about lost updates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter: Option<CounterCheck>,
    /// Worker threads and connections that ran.
    pub threads: usize,
    pub connections: usize,
    /// True when the round was stopped early (Ctrl-C).
    pub interrupted: bool,
    /// How the client moved bytes: "io_uring" or "epoll", with the reason when io_uring was wanted but not
    /// available.
    #[serde(default)]
    pub io: String,
}

impl RoundLoad {
    /// Connections served inside the measured window: those asked for less the starved ones; absent where
    /// the spread over the connections is not known (an external tool's round).
    pub fn connections_served_in_window(&self) -> Option<u64> {
        Some((self.connections as u64).saturating_sub(self.per_connection?.starved))
    }
    pub fn requests_per_s(&self) -> f64 {
        per_s(self.requests, self.duration_s)
    }
    pub fn bytes_read_per_s(&self) -> f64 {
        per_s(self.bytes_read, self.duration_s)
    }
    pub fn latency_summary(&self) -> LatencySummary {
        LatencySummary::of(&self.latency)
    }
    /// The client's CPU seconds of work: all it used but what busy-polling spent finding nothing.
    pub fn client_work_s(&self) -> f64 {
        (self.client_cpu_s - self.client_poll_s).max(0.0)
    }
}

fn per_s(count: u64, duration_s: f64) -> f64 {
    if duration_s > 0.0 { count as f64 / duration_s } else { 0.0 }
}
