//! Where the load came from and the servers ran, for every export that says it: each client host as
//! recorded when the run prepared it, with what it did over the measured rounds (client CPU, requests, its
//! most limited round) and how far its clock was read from this machine's, before the first round and
//! before each round; and the server host's clock as read once.

use crate::model::{HostRecord, RunResult};

/// One client host over a whole run.
pub struct HostTotals<'a> {
    pub record: &'a HostRecord,
    /// Client CPU seconds over the measured rounds.
    pub cpu_s: f64,
    pub requests: u64,
    /// The highest client limit of any measured round (its busiest thread's share); absent when no round said.
    pub limit_pct: Option<f64>,
    /// The readings of its clock offset before the rounds (milliseconds), lowest and highest; absent in
    /// runs that read it only once.
    pub offset_range_ms: Option<(f64, f64)>,
}

/// Every client host of the run, in the order given to `--client-host`.
pub fn totals(run: &RunResult) -> Vec<HostTotals<'_>> {
    run.environment
        .client_hosts
        .iter()
        .map(|record| {
            let mut t = HostTotals { record, cpu_s: 0.0, requests: 0, limit_pct: None, offset_range_ms: None };
            let rounds = run.measurements.iter().flat_map(|m| m.rounds.iter());
            for h in rounds.clone().filter(|r| !r.warmup).flat_map(|r| r.hosts.iter()).filter(|h| h.host == record.host) {
                t.cpu_s += h.client_cpu_s;
                t.requests += h.requests;
                t.limit_pct = higher(t.limit_pct, h.client_limit_pct);
            }
            for ms in rounds.flat_map(|r| r.hosts.iter()).filter(|h| h.host == record.host).filter_map(|h| h.clock_offset_ms) {
                t.offset_range_ms = Some(t.offset_range_ms.map_or((ms, ms), |(lo, hi)| (lo.min(ms), hi.max(ms))));
            }
            t
        })
        .collect()
}

/// "+0.12 ms (± 0.05)": a host's clock minus this machine's when the run began, with half the round trip
/// it was read over.
pub fn first_clock(h: &HostRecord) -> String {
    format!("{:+.2} ms (± {:.2})", h.clock_offset_ms, h.clock_rtt_ms / 2.0)
}

fn higher(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

impl HostTotals<'_> {
    /// "198.18.0.2 → 198.18.0.1 via veth0, MTU 1500", or what of it is known.
    pub fn path(&self) -> String {
        let h = self.record;
        match (&h.source_address, &h.interface, h.mtu) {
            (Some(src), Some(dev), Some(mtu)) => format!("{src} → {} via {dev}, MTU {mtu}", h.server_address),
            _ => format!("→ {} (route not read)", h.server_address),
        }
    }

    /// "+0.12 ms (± 0.05); before the rounds +0.10 to +0.31 ms".
    pub fn clock(&self) -> String {
        let rounds = self.offset_range_ms.map_or(String::new(), |(lo, hi)| format!("; before the rounds {lo:+.2} to {hi:+.2} ms"));
        format!("{}{rounds}", first_clock(self.record))
    }

    /// "at most 63%", or "n/a".
    pub fn limit(&self) -> String {
        self.limit_pct.map_or("n/a".to_string(), |l| format!("{l:.0}%"))
    }
}
