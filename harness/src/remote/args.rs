//! The `serverbench load` arguments that make a client host's worker run exactly a given `LoadConfig` of
//! a benchmark round: the round's workload comes from its scenario, so the scenario and whether responses
//! are held byte for byte (micro contestants) are given with it. A test in `cli::load`, whose parser the worker uses, holds the round trip exact.

use std::time::Duration;

use crate::load::{IoBackend, LoadConfig, Mix, Mode, Poll, Stop, Workload};

/// The arguments after `serverbench load`, the target included, without `--worker` and `--start-at`.
pub fn load_args(c: &LoadConfig, scenario: &str, micro: bool) -> Vec<String> {
    let mut a: Vec<String> = vec![c.target.to_string(), "--allow-remote".into(), "--scenario".into(), scenario.into()];
    let mut put = |k: &str, v: String| {
        a.push(k.into());
        a.push(v);
    };
    put("-t", c.threads.to_string());
    put("-c", c.connections.to_string());
    if let Some(cpus) = &c.cpus {
        put("--cpus", cpus.iter().map(ToString::to_string).collect::<Vec<_>>().join(","));
    }
    match c.mode {
        Mode::Throughput => put("--mode", "throughput".into()),
        Mode::Latency { think_time } => {
            put("--mode", "latency".into());
            put("--think-time", nanos(think_time));
        }
        Mode::Rate { requests_per_s } => {
            put("--mode", "rate".into());
            put("--rate", requests_per_s.to_string());
        }
    }
    match c.stop {
        Stop::RequestsPerConnection(n) => put("-n", n.to_string()),
        Stop::Duration { warmup, measure } => {
            put("-d", nanos(measure));
            put("--warmup-time", nanos(warmup));
        }
    }
    put("--timeout", nanos(c.timeout));
    put("--io", match c.io { IoBackend::Auto => "auto", IoBackend::Epoll => "epoll", IoBackend::IoUring => "io_uring", IoBackend::IoUringSqpoll => "io_uring-sqpoll" }.into());
    put("--poll", match c.poll { Poll::Sleep => "sleep", Poll::Busy => "busy" }.into());
    if let Some(r) = c.ramp {
        put("--ramp", nanos(r));
    }
    put("--seed", c.seed.to_string());
    put("--interval", nanos(c.interval));
    if let Workload::Http { pipeline, mix, .. } = &c.workload {
        put("--pipeline", pipeline.to_string());
        match mix {
            Mix::Fixed => {}
            Mix::Work { base_us, heavy_connections, heavy_requests } => {
                put("--work", format!("{base_us}us"));
                if let Some(s) = heavy_connections {
                    put("--heavy-connections", s.to_string());
                }
                if let Some(s) = heavy_requests {
                    put("--heavy-requests", s.to_string());
                }
            }
            Mix::Counter { keys } => put("--keys", keys.to_string()),
        }
    }
    if c.connection_per_request {
        a.push("--connection-per-request".into());
    }
    if !micro {
        a.push("--no-expect".into());
    }
    a
}

/// A duration to the nanosecond, as `parse_duration` reads it back.
fn nanos(d: Duration) -> String {
    format!("{}ns", d.as_nanos())
}
