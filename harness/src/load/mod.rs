//! The load generator engine: connections, schedules, framing, per-thread workers; knows nothing of contestants.

mod backend;
// A run has one Workload, made once: boxing its large variant would save nothing.
#[allow(clippy::large_enum_variant)]
pub mod config;
mod conn;
mod counter;
mod engine;
pub use engine::RAMP_STALL;
pub mod http;
pub mod intervals;
mod machine;
pub mod mix;
pub mod output;
mod receive;
pub mod report;
pub mod search;
mod schedule;
mod send;
pub mod sys;
mod tally;
mod window;
mod worker;

pub use crate::wire::{HttpRequest, HELLO_RESPONSE};
pub use config::{EchoKind, IoBackend, LoadConfig, Mode, Poll, Stop, Workload};
pub use intervals::{DEFAULT_INTERVAL, MIN_INTERVAL};
pub use mix::{Mix, Skew};
pub use http::Expect;
pub use window::{Edge, WindowWatch};
pub use report::{ErrorCounts, LoadReport, StatusCounts};
pub use counter::CounterReport;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};

use anyhow::{bail, Context};

use mix::Paths;

/// Why a load run could not start: a thread not pinned, a backend not set up, a connection refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SetupError(pub String);

impl From<&str> for SetupError {
    fn from(reason: &str) -> SetupError {
        SetupError(reason.to_string())
    }
}

/// Checks a configuration before any connection is made; the error names the option and what it accepts.
pub fn validate(config: &LoadConfig) -> anyhow::Result<()> {
    if config.threads == 0 {
        bail!("--threads must be at least 1");
    }
    if config.connections < config.threads {
        bail!("--connections ({}) must be at least --threads ({}): each thread needs a connection", config.connections, config.threads);
    }
    if let Some(cpus) = &config.cpus {
        let allowed = crate::os::cpus::CpuSet::allowed();
        if cpus.is_empty() {
            bail!("--cpus is empty; give a list such as 0 or 0-3 or 0,2");
        }
        if let Some(bad) = cpus.iter().find(|c| !allowed.cpus().contains(c)) {
            bail!("--cpus names CPU {bad}, which this process may not use; allowed: {allowed}");
        }
    }
    if config.io == IoBackend::IoUringSqpoll && config.cpus.is_none() {
        bail!("--io io_uring-sqpoll needs --cpus: each thread's SQPOLL kernel thread is pinned to that thread's CPU, so that it never runs on the server's");
    }
    if config.poll == Poll::Busy {
        let cpus = config.cpus.as_ref().map_or(0, |c| c.iter().collect::<std::collections::BTreeSet<_>>().len());
        if cpus < config.threads {
            bail!("--poll busy needs a CPU of its own for each client thread: give --cpus with at least --threads ({}) CPUs", config.threads);
        }
    }
    match config.stop {
        Stop::RequestsPerConnection(0) => bail!("--requests-per-connection must be at least 1"),
        Stop::Duration { measure, .. } if measure.is_zero() => bail!("--duration must be longer than 0"),
        _ => {}
    }
    match config.mode {
        Mode::Rate { requests_per_s } if !(requests_per_s > 0.0 && requests_per_s.is_finite()) => {
            bail!("--rate must be a positive number of requests per second")
        }
        _ => {}
    }
    match &config.workload {
        Workload::Http { pipeline: 0, .. } => bail!("--pipeline must be at least 1"),
        Workload::Echo { size_bytes: 0, .. } => bail!("--size must be at least 1 byte"),
        Workload::Http { mix, .. } if mix.problem().is_some() => bail!("{}", mix.problem().unwrap_or_default()),
        Workload::Echo { kind: EchoKind::Stream, .. } if matches!(config.mode, Mode::Rate { .. } | Mode::Latency { .. }) => {
            bail!("--echo stream runs in throughput mode only (it has no requests to pace)")
        }
        _ => {}
    }
    if config.connection_per_request {
        match &config.workload {
            Workload::Http { pipeline, .. } if *pipeline > 1 => {
                bail!("--pipeline {pipeline} needs a connection that carries several requests; --connection-per-request sends one")
            }
            Workload::Echo { kind: EchoKind::Stream, .. } => {
                bail!("--echo stream has no exchanges to put on a connection each; --connection-per-request takes pingpong")
            }
            _ => {}
        }
    }
    if config.timeout.is_zero() {
        bail!("--timeout must be longer than 0");
    }
    if config.interval < MIN_INTERVAL {
        bail!("--interval must be at least {MIN_INTERVAL:?}");
    }
    Ok(())
}

/// Runs the load described by `config` and returns the merged report. Setting `stop` ends the run early;
/// what was measured until then is returned with `interrupted = true`.
pub fn run(config: &LoadConfig, stop: Arc<AtomicBool>) -> anyhow::Result<LoadReport> {
    run_watched(config, stop, None)
}

/// `run`, telling `watch` when the measured window opens and closes (see `window.rs`).
pub fn run_watched(config: &LoadConfig, stop: Arc<AtomicBool>, watch: Option<WindowWatch>) -> anyhow::Result<LoadReport> {
    validate(config)?;
    // Each connection is one descriptor; each thread adds an epoll set or a ring; a few more are already open.
    crate::os::limits::ensure_open_files((config.connections + config.threads + 32) as u64)?;
    let (paths, expect) = match &config.workload {
        Workload::Http { request, expect, mix, .. } => {
            let request = if config.connection_per_request { request.closing() } else { request.clone() };
            (Some(Paths::new(mix, &request, config.connections, config.seed)), expect.clone())
        }
        Workload::Echo { .. } => (None, Expect::Status),
    };
    let (io, io_name) = resolve_io(config.io)?;
    let shared = engine::Shared {
        config: config.clone(),
        io,
        paths,
        expect,
        stop,
        barrier: Barrier::new(config.threads),
        setup_error: Mutex::new(None),
        watch,
        opened: AtomicBool::new(false),
        opened_ns: AtomicU64::new(0),
        driving: AtomicUsize::new(config.threads),
        unserved: AtomicUsize::new(config.connections),
        began_ns: AtomicU64::new(0),
        last_served_ns: AtomicU64::new(0),
        ramp_end_ns: AtomicU64::new(0),
        unserved_at_open: AtomicUsize::new(0),
    };
    let per_thread = config.connections / config.threads;
    let extra = config.connections % config.threads;
    let results = std::thread::scope(|scope| {
        let mut handles = Vec::new();
        let mut first = 0;
        for t in 0..config.threads {
            let count = per_thread + usize::from(t < extra);
            let shared = &shared;
            let start = first;
            let handle = std::thread::Builder::new()
                .name(format!("sb-load-{t}"))
                .spawn_scoped(scope, move || worker::run_worker(shared, t, count, start))
                .context("cannot start a load thread")?;
            handles.push(handle);
            first += count;
        }
        handles
            .into_iter()
            .map(|h| h.join().map_err(|_| anyhow::anyhow!("a load thread panicked")))
            .collect::<anyhow::Result<Vec<_>>>()
    })?;
    if let Some(e) = shared.setup_error.lock().unwrap().take() {
        if shared.stop.load(Ordering::Relaxed) {
            // Stopped before the clock started: nothing was measured, which is not a failure.
            return Ok(LoadReport { interrupted: true, io: io_name, poll: config.poll.name().into(), ..LoadReport::empty(config.threads, config.connections) });
        }
        bail!(e);
    }
    let mut report = LoadReport { io: io_name, poll: config.poll.name().into(), ..tally::merge(config, results) };
    let ramp_end = shared.ramp_end_ns.load(Ordering::SeqCst);
    if config.ramp.is_some() && ramp_end != 0 {
        report.ramp_s = Some(ramp_end.saturating_sub(shared.began_ns.load(Ordering::SeqCst)) as f64 / 1e9);
        report.unserved_at_start = Some(shared.unserved_at_open.load(Ordering::SeqCst) as u64);
    }
    Ok(report)
}

/// The backend to use and how to name it in the report. `Auto` takes io_uring when this kernel has
/// everything it needs (checked once per process) and says why not otherwise.
pub fn resolve_io(wanted: IoBackend) -> anyhow::Result<(IoBackend, String)> {
    static PROBE: std::sync::OnceLock<Result<(), SetupError>> = std::sync::OnceLock::new();
    let probe = || PROBE.get_or_init(backend::ring::Uring::probe).clone();
    Ok(match wanted {
        IoBackend::Epoll => (IoBackend::Epoll, "epoll".into()),
        IoBackend::IoUring => match probe() {
            Ok(()) => (IoBackend::IoUring, "io_uring".into()),
            Err(e) => bail!("--io io_uring: {e}; use --io epoll"),
        },
        IoBackend::IoUringSqpoll => match probe().and_then(|()| backend::ring::Uring::probe_sqpoll()) {
            Ok(()) => (IoBackend::IoUringSqpoll, "io_uring-sqpoll".into()),
            Err(e) => bail!("--io io_uring-sqpoll: {e}; use --io epoll"),
        },
        IoBackend::Auto => match probe() {
            Ok(()) => (IoBackend::IoUring, "io_uring".into()),
            Err(e) => (IoBackend::Epoll, format!("epoll (io_uring unavailable: {e})")),
        },
    })
}
