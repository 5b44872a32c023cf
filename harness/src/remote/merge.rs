//! One report from the reports of several client hosts, exactly: counts add, histograms add (a percentile
//! of the merge is read from every recorded latency, never averaged from the hosts' percentiles), CPU
//! times add and the per-thread lists are laid end to end. What cannot be merged exactly is left absent:
//! the spread of requests over connections (each host knows only its own connections).

use hdrhistogram::Histogram;

use crate::load::LoadReport;

/// The merge of `parts` (at least one). The window is the longest of the hosts' windows, so that a
/// rate (requests over seconds) is never higher than what the hosts did together; their windows start
/// together (`drive`), so the longest is about the span of them all.
pub fn merge(parts: &[LoadReport]) -> anyhow::Result<LoadReport> {
    anyhow::ensure!(!parts.is_empty(), "no client host reported");
    let mut m = LoadReport::empty(0, 0);
    let mut uncorrected: Option<Histogram<u64>> = None;
    let mut io: Vec<&str> = Vec::new();
    // Summed over the hosts: a host that could not say makes the sum unknown.
    m.client_migrations = Some(0);
    for p in parts {
        m.requests += p.requests;
        m.reconnects += p.reconnects;
        m.keepalive_lost += p.keepalive_lost;
        m.connections_opened += p.connections_opened;
        m.backlog += p.backlog;
        m.ramp_s = max_opt(m.ramp_s, p.ramp_s);
        m.unserved_at_start = match (m.unserved_at_start, p.unserved_at_start) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
        };
        m.errors.add(&p.errors);
        m.status.add(&p.status);
        m.duration_s = m.duration_s.max(p.duration_s);
        m.bytes_read += p.bytes_read;
        m.bytes_written += p.bytes_written;
        if m.response_bytes == 0 {
            m.response_bytes = p.response_bytes;
        }
        m.latency.add(&p.latency).map_err(|e| anyhow::anyhow!("the hosts' latency histograms do not add up: {e:?}"))?;
        if let Some(u) = &p.latency_uncorrected {
            let into = uncorrected.get_or_insert_with(crate::stats::histogram::new_latency_histogram);
            into.add(u).map_err(|e| anyhow::anyhow!("the hosts' uncorrected histograms do not add up: {e:?}"))?;
        }
        // Second i of each host's window is second i of the merge: the windows start together.
        if m.timeline.len() < p.timeline.len() {
            m.timeline.resize(p.timeline.len(), 0);
        }
        for (into, n) in m.timeline.iter_mut().zip(&p.timeline) {
            *into += n;
        }
        m.client_cpu_s += p.client_cpu_s;
        m.thread_cpu_s.extend(&p.thread_cpu_s);
        m.client_poll_s += p.client_poll_s;
        m.thread_poll_s.extend(&p.thread_poll_s);
        m.client_user_s += p.client_user_s;
        m.client_system_s += p.client_system_s;
        m.client_voluntary_switches += p.client_voluntary_switches;
        m.client_involuntary_switches += p.client_involuntary_switches;
        m.client_migrations = m.client_migrations.zip(p.client_migrations).map(|(a, b)| a + b);
        m.client_system_calls += p.client_system_calls;
        m.threads += p.threads;
        m.connections += p.connections;
        m.interrupted |= p.interrupted;
        if !io.contains(&p.io.as_str()) {
            io.push(&p.io);
        }
    }
    m.latency_uncorrected = uncorrected;
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

    fn part(latencies_us: &[u64], duration_s: f64, threads: &[f64]) -> LoadReport {
        let mut r = LoadReport::empty(threads.len(), 4);
        for &l in latencies_us {
            r.latency.record(l * 1000).unwrap();
        }
        r.requests = latencies_us.len() as u64;
        r.errors.timeout = 1;
        r.duration_s = duration_s;
        r.timeline = vec![r.requests];
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
        assert_eq!(m.timeline, [100]);
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
