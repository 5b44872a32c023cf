//! One report from the reports of several client hosts, exactly: counts add, histograms add (a percentile
//! of the merge is read from every recorded latency, never averaged from the hosts' percentiles), CPU
//! times add and the per-thread lists are laid end to end. What cannot be merged exactly is left absent:
//! the spread of requests over connections (each host knows only its own connections).

use crate::load::LoadReport;

/// The merge of `parts` (at least one). The window is the longest of the hosts' windows, so that a
/// rate (requests over seconds) is never higher than what the hosts did together; their windows start
/// together (`drive`), so the longest is about the span of them all.
pub fn merge(parts: &[LoadReport]) -> anyhow::Result<LoadReport> {
    anyhow::ensure!(!parts.is_empty(), "no client host reported");
    let mut m = LoadReport::empty(0, 0);
    let mut io: Vec<&str> = Vec::new();
    // Summed over the hosts: a host that could not say makes the sum unknown.
    m.client_migrations = Some(0);
    for p in parts {
        m.add(p).map_err(|e| anyhow::anyhow!("the hosts' reports do not add up: {e}"))?;
        m.ramp_s = max_opt(m.ramp_s, p.ramp_s);
        m.unserved_at_start = match (m.unserved_at_start, p.unserved_at_start) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
        };
        m.duration_s = m.duration_s.max(p.duration_s);
        if !io.contains(&p.io.as_str()) {
            io.push(&p.io);
        }
    }
    m.poll = parts[0].poll.clone();
    m.io = io.join(" / ");
    Ok(m)
}

fn max_opt(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::intervals::{Interval, Intervals};

    fn part(latencies_us: &[u64], duration_s: f64, threads: &[f64]) -> LoadReport {
        let mut r = LoadReport::empty(threads.len(), 4);
        for &l in latencies_us {
            r.latency.record(l * 1000).unwrap();
        }
        r.requests = latencies_us.len() as u64;
        r.errors.timeout = 1;
        r.duration_s = duration_s;
        r.intervals = Some(Intervals {
            length_ms: 100.0,
            each: vec![Interval { requests: r.requests, errors: 1, latency: crate::stats::histogram::to_base64(&r.latency) }],
        });
        r.thread_cpu_s = threads.to_vec();
        r.client_cpu_s = threads.iter().sum();
        r.io = "epoll".into();
        r.client_migrations = Some(threads.len() as u64);
        r
    }

    #[test]
    fn counts_and_histograms_add_and_percentiles_come_from_every_latency() {
        // One host answered 90 requests in 100 us, the other 10 in 10 ms: the merged median is 100 us and
        // its p95 10 ms, which no mean of the two hosts' percentiles gives.
        let fast = part(&[100; 90], 0.5, &[0.1, 0.2]);
        let slow = part(&[10_000; 10], 0.52, &[0.05]);
        let m = merge(&[fast, slow]).unwrap();
        assert_eq!(m.requests, 100);
        assert_eq!(m.latency.len(), 100);
        assert_eq!(m.errors.timeout, 2);
        let intervals = m.intervals.as_ref().unwrap();
        assert_eq!((intervals.each.len(), intervals.each[0].requests, intervals.each[0].errors), (1, 100, 2));
        assert_eq!(intervals.sum().unwrap(), m.latency, "the hosts' intervals add up to the merged histogram");
        assert_eq!(m.threads, 3);
        assert_eq!(m.connections, 8);
        assert_eq!(m.thread_cpu_s, [0.1, 0.2, 0.05]);
        assert!((m.client_cpu_s - 0.35).abs() < 1e-12);
        assert_eq!(m.duration_s, 0.52);
        assert_eq!(m.io, "epoll");
        assert_eq!(m.client_migrations, Some(3), "the hosts' migrations add");
        let us = |q: f64| m.latency.value_at_quantile(q) / 1000;
        assert!((99..=101).contains(&us(0.5)), "{}", us(0.5));
        assert!((9_990..=10_010).contains(&us(0.95)), "{}", us(0.95));
        assert!(m.per_connection.is_none(), "each host knows only its own connections");
    }
}
