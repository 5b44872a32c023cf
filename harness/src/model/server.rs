//! The server's process tree during one round as the /proc probe read it: CPU, memory, thread states,
//! where its time went and its system calls per request.

use serde::{Deserialize, Serialize};

use super::round_load::RoundLoad;

/// The server's whole process tree during one round, from /proc. A figure that could not be read is
/// absent (null in run.json) and the round carries Flag::ServerUnprobed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerUsage {
    /// The CPU time of every process of the tree (threads included) over the round, from the source
    /// `cpu_source` names.
    pub cpu_s: Option<f64>,
    /// Where `cpu_s` came from: the threads' exact run time where it covers the window, else the clock
    /// ticks (10 ms steps, ±2% of a 0.5 s round); absent in runs stored before the source was recorded.
    #[serde(default)]
    pub cpu_source: Option<CpuSource>,
    /// The window the CPU time was taken over.
    pub wall_s: f64,
    /// CPUs the server was pinned to.
    pub cpus: usize,
    /// cpu_s / (wall_s × cpus), in percent.
    pub utilisation_pct: Option<f64>,
    pub cpu_us_per_request: Option<f64>,
    /// Largest sum of resident memory over the tree seen while sampling.
    pub peak_rss_bytes: Option<u64>,
    /// Proportional set size of the tree at the end of the round: pages shared by several processes of
    /// the tree (prefork) count once in total, where the RSS sum counts them once per process.
    #[serde(default)]
    pub pss_bytes: Option<u64>,
    /// Processes seen in the tree.
    pub processes: usize,
    /// The scheduler states of the tree's threads, sampled over the window; absent when none was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<super::limit::ThreadStates>,
    /// How evenly the workers shared the work (busiest worker's CPU over the mean); absent with fewer than
    /// two workers or when the threads' CPU times could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<super::balance::WorkerBalance>,
    /// Where the tree's threads spent the window: user and kernel time and context switches; absent when
    /// the threads could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<CostBreakdown>,
    /// The system calls made on the server's CPUs over the window, counted by `syscalls_method`, and the
    /// same per request (with `other`, the calls not counted by name); absent with the reason in
    /// `syscalls_unavailable` when they could not be counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syscalls: Option<SyscallCounts>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syscalls_per_request: Option<SyscallsPerRequest>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syscalls_method: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syscalls_unavailable: Option<String>,
}

/// Where a round's server CPU time came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CpuSource {
    /// The threads' run time in ns (/proc/<pid>/task/<tid>/schedstat): exact, and held only when no thread
    /// or process of the tree ended inside the window, since an ended thread's run time is gone with it.
    Schedstat,
    /// utime + stime + the reaped children's time in clock ticks: it keeps the time of what ended, at the
    /// ticks' coarseness.
    Ticks,
}

/// System calls counted over a round's window: all of them (absent where the method counts no total:
/// `proc-io`), and those of each counted name. The runner turns the counter's reading into it
/// (`run/to_model.rs`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyscallCounts {
    pub total: Option<u64>,
    pub by_name: std::collections::BTreeMap<String, u64>,
}

impl SyscallCounts {
    /// The total less the named calls, where there is a total.
    pub fn other(&self) -> Option<u64> {
        self.total.map(|t| t.saturating_sub(self.by_name.values().sum()))
    }

    /// Adds another span's counts: a total only where both have one.
    pub fn add(&mut self, o: &SyscallCounts) {
        self.total = self.total.zip(o.total).map(|(a, b)| a + b);
        for (name, n) in &o.by_name {
            *self.by_name.entry(name.clone()).or_default() += n;
        }
    }
}

/// System calls per request: all of them, and by name with `other` for the rest (both absent where the
/// method counts no total: `proc-io`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SyscallsPerRequest {
    pub total: Option<f64>,
    pub by_name: std::collections::BTreeMap<String, f64>,
}

impl SyscallsPerRequest {
    /// `counts` over `requests`; absent without a request.
    pub fn of(counts: &SyscallCounts, requests: u64) -> Option<SyscallsPerRequest> {
        let n = (requests > 0).then_some(requests as f64)?;
        let mut by_name: std::collections::BTreeMap<String, f64> = counts.by_name.iter().map(|(name, c)| (name.clone(), *c as f64 / n)).collect();
        if let Some(other) = counts.other() {
            by_name.insert(crate::os::syscalls::OTHER.into(), other as f64 / n);
        }
        Some(SyscallsPerRequest { total: counts.total.map(|t| t as f64 / n), by_name })
    }

    /// The `n` named calls made most often per request, most first (`other` is not a name); calls never
    /// made are left out.
    pub fn leading(&self, n: usize) -> Vec<(&str, f64)> {
        let mut named: Vec<(&str, f64)> =
            self.by_name.iter().filter(|(name, c)| name.as_str() != crate::os::syscalls::OTHER && **c > 0.0).map(|(name, c)| (name.as_str(), *c)).collect();
        named.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
        named.truncate(n);
        named
    }

    /// The calls per request of each of `syscalls::KINDS`, then of every other call (named calls of no kind
    /// and `other`): parts that add up to the total.
    pub fn by_kind(&self) -> Vec<f64> {
        use crate::os::syscalls::KINDS;
        // Folded from 0.0: a sum of no calls is 0, not the -0 of f64's Sum.
        let mut parts: Vec<f64> =
            KINDS.iter().map(|(_, names)| names.iter().filter_map(|n| self.by_name.get(*n)).fold(0.0, |a, c| a + c)).collect();
        let of_a_kind = |name: &str| KINDS.iter().any(|(_, names)| names.contains(&name));
        parts.push(self.by_name.iter().filter(|(name, _)| !of_a_kind(name)).fold(0.0, |a, (_, c)| a + c));
        parts
    }

    /// The leading calls as the tables print them: `read 1.00, write 1.00, epoll_wait 0.02`.
    pub fn leading_words(&self, n: usize) -> String {
        self.leading(n).iter().map(|(name, c)| format!("{name} {c:.2}")).collect::<Vec<_>>().join(", ")
    }
}

/// User and kernel CPU time and context switches of the server's threads over a measured window, from the
/// per-thread /proc files read at the window's edges. Threads that ended inside the window are missing, so
/// the times can fall short of `cpu_s`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CostBreakdown {
    pub user_s: f64,
    pub system_s: f64,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
    /// Moves of the threads to another CPU; absent where the kernel does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migrations: Option<u64>,
}

impl CostBreakdown {
    /// The built-in client's worker threads (getrusage); absent for external tools, which report none.
    pub fn of_client(load: &RoundLoad) -> Option<CostBreakdown> {
        (load.client_user_s + load.client_system_s > 0.0).then_some(CostBreakdown {
            user_s: load.client_user_s,
            system_s: load.client_system_s,
            voluntary_switches: load.client_voluntary_switches,
            involuntary_switches: load.client_involuntary_switches,
            migrations: load.client_migrations,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_calls_per_request_are_grouped_by_kind_and_the_rest_is_other() {
        // Per request: a read, a write, an epoll_wait per 50, and an accept4 per 100 (of no kind: other).
        let counts = SyscallCounts {
            total: Some(20_300),
            by_name: [("read", 10_000), ("write", 10_000), ("epoll_wait", 200), ("accept4", 100)].map(|(n, c)| (n.to_string(), c)).into(),
        };
        let per = SyscallsPerRequest::of(&counts, 10_000).unwrap();
        assert_eq!(per.by_kind(), vec![1.0, 1.0, 0.02, 0.0, 0.01]);
    }
}
