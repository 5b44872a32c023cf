//! What one load run is asked to do: target, threads, connections, mode, stop rule, workload.

use std::net::SocketAddr;
use std::time::Duration;

use super::http::Expect;
use super::mix::Mix;
use crate::wire::{HttpRequest, Scenario};

/// How requests are paced on each connection.
#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    /// Closed loop: the next request leaves as soon as a response completes.
    Throughput,
    /// Closed loop with a pause of `think_time` between a response and the next request.
    Latency { think_time: Duration },
    /// Open loop at a fixed total rate (wrk2's model); latency is measured from the intended send time.
    Rate { requests_per_s: f64 },
}

/// When a run ends.
#[derive(Debug, Clone, PartialEq)]
pub enum Stop {
    /// Each connection sends exactly this many requests; the wall clock runs from the first send to the last response.
    RequestsPerConnection(u64),
    /// Run `warmup` (not recorded), then measure for `measure`.
    Duration { warmup: Duration, measure: Duration },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EchoKind {
    /// Write `size` bytes, read `size` bytes back, repeat; one latency sample per exchange.
    PingPong,
    /// Keep a send side and a receive side busy; throughput only.
    Stream,
}

/// What travels over each connection.
#[derive(Debug, Clone, PartialEq)]
pub enum Workload {
    Http {
        request: HttpRequest,
        /// Requests in flight per connection (1 = no pipelining).
        pipeline: u32,
        /// What a valid response is beyond a 2xx status; anything else is a `mismatch` error and is not
        /// counted as a request.
        expect: Expect,
        /// What varies from request to request (`work`'s N, `counter`'s key); its choices come from
        /// `LoadConfig::seed`.
        mix: Mix,
    },
    Echo { kind: EchoKind, size_bytes: usize },
}

/// How the worker threads move bytes. Both run the same engine; only the system calls differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IoBackend {
    /// io_uring when this kernel has what it needs (see `backend::ring::Uring::probe`), epoll otherwise.
    #[default]
    Auto,
    /// A level-triggered epoll set per thread; one read and one send per response.
    Epoll,
    /// A ring per thread: multishot receives into provided buffers, sends submitted in batches.
    IoUring,
    /// `IoUring` with an SQPOLL kernel thread per ring, pinned to its worker's CPU, that takes the
    /// submissions from the queue by itself (needs `cpus`; its CPU time counts as the client's).
    IoUringSqpoll,
}

impl IoBackend {
    pub fn name(self) -> &'static str {
        match self {
            IoBackend::Auto => "auto",
            IoBackend::Epoll => "epoll",
            IoBackend::IoUring => "io_uring",
            IoBackend::IoUringSqpoll => "io_uring-sqpoll",
        }
    }
}

/// How a worker thread waits for the kernel to report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Poll {
    /// The wait call sleeps until something is reported or the next timer is due.
    #[default]
    Sleep,
    /// The wait call never sleeps while load is driven: the thread asks again at once (a CPU of its own
    /// is needed). The time spent in asks that found nothing is counted apart from the work.
    Busy,
}

impl Poll {
    pub fn name(self) -> &'static str {
        match self {
            Poll::Sleep => "sleep",
            Poll::Busy => "busy",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct LoadConfig {
    pub target: SocketAddr,
    /// Worker threads; each owns `connections / threads` connections (the remainder spread over the first ones).
    pub threads: usize,
    pub connections: usize,
    /// CPUs the worker threads are pinned to, one each, round robin. None: not pinned.
    pub cpus: Option<Vec<usize>>,
    pub mode: Mode,
    pub stop: Stop,
    pub workload: Workload,
    /// A request still unanswered after this long is a `timeout` error and its connection is reopened.
    pub timeout: Duration,
    pub io: IoBackend,
    pub poll: Poll,
    /// With `Stop::Duration`: the measured window opens only once every connection has completed an
    /// exchange (and the warm-up is over), waiting at most this long from the start. None: it opens when
    /// the warm-up ends, whoever has been served.
    pub ramp: Option<Duration>,
    /// With `ramp`: connections an earlier round of the same server served before its ramp stalled (a
    /// pool that serves 16 of 64). Once this many are served the window opens, without waiting the
    /// `RAMP_STALL` to learn again that the rest will not be.
    pub ramp_served: Option<usize>,
    /// Every request (echo: every exchange) on a new connection: HTTP requests say `Connection: close`, the
    /// client closes as soon as the answer is complete, and each slot connects again when its next request
    /// is due. Latency then runs from the start of the connect.
    pub connection_per_request: bool,
    /// The seed of every choice the workload makes (`Mix`): the same seed sends the same requests.
    pub seed: u64,
    /// The length of the intervals the window is cut into, each with its own latency histogram.
    pub interval: Duration,
}

impl Workload {
    /// The workload a scenario implies. `exact` turns on the byte-for-byte check of `hello` responses
    /// (micro contestants); platform servers may add headers and are held to the body.
    pub fn for_scenario(scenario: &str, pipeline: u32, exact: bool) -> Option<Self> {
        let scenario = Scenario::parse(scenario)?;
        let Some(request) = scenario.request() else {
            return Some(Workload::Echo { kind: EchoKind::PingPong, size_bytes: 512 });
        };
        let mix = match scenario {
            Scenario::Work => Mix::Work { base_us: crate::wire::DEFAULT_WORK_US, heavy_connections: None, heavy_requests: None },
            Scenario::Counter => Mix::Counter { keys: 1 },
            _ => Mix::Fixed,
        };
        Some(Workload::Http { request, pipeline, expect: Expect::for_scenario(scenario, exact), mix })
    }
}

pub use super::mix::DEFAULT_SEED;

impl LoadConfig {
    /// A closed-loop throughput run of `hello` with defaults that suit a quick test.
    pub fn new(target: SocketAddr) -> Self {
        LoadConfig {
            target,
            threads: 1,
            connections: 64,
            cpus: None,
            mode: Mode::Throughput,
            stop: Stop::Duration { warmup: Duration::ZERO, measure: Duration::from_secs(10) },
            workload: Workload::for_scenario(Scenario::Hello.name(), 1, true).unwrap(),
            timeout: Duration::from_secs(5),
            io: IoBackend::Auto,
            poll: Poll::Sleep,
            ramp: None,
            ramp_served: None,
            connection_per_request: false,
            seed: DEFAULT_SEED,
            interval: super::intervals::DEFAULT_INTERVAL,
        }
    }
}
