//! Where a run's load came from when it came from client hosts (`bench --client-host`), and where its
//! servers ran when on a server host (`bench --server-host`): each host as it was found before the first
//! round, and each client host's share of a round. The round's `load` is the exact merge of the shares
//! (`remote::merge`); these say who contributed what.

use serde::{Deserialize, Serialize};

/// A client host or the server host, as found when the run prepared it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostRecord {
    /// As given to `--client-host` or `--server-host`: `[USER@]HOST[:PORT]`.
    pub host: String,
    /// `uname -m` there (the same as this machine's, or the host was refused).
    pub arch: String,
    pub cpu_model: String,
    /// Online CPUs there.
    pub cores: usize,
    /// `uname -sr` there.
    pub kernel: String,
    /// The host's wall clock minus this machine's, in milliseconds, from the ssh round trip with the
    /// shortest time (`rtt_ms`); the true offset lies within half that round trip of it.
    pub clock_offset_ms: f64,
    pub clock_rtt_ms: f64,
    /// The network path the load took: the host's own address toward the server (`ip route get` there),
    /// the server's address, the interface's name and MTU; absent where the host could not say.
    pub source_address: Option<String>,
    pub server_address: String,
    pub interface: Option<String>,
    pub mtu: Option<u32>,
    /// The ssh command that starts a worker there (the `load` arguments of each round are in its rounds),
    /// or the server host's agent.
    pub ssh_command: String,
    /// Where the copy of this program was put there (removed when the run ends).
    pub binary: String,
}

/// One client host's share of a round.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostLoad {
    pub host: String,
    pub requests: u64,
    pub errors: u64,
    /// The count of the host's latency histogram (equal to its requests).
    pub latency_count: u64,
    pub duration_s: f64,
    pub threads: usize,
    pub connections: usize,
    pub client_cpu_s: f64,
    /// CPU seconds of work: `client_cpu_s` without busy-polling that found nothing.
    pub client_work_s: f64,
    /// The host's limit by the client-bound rule: its busiest thread's share of its window, or its work
    /// over (window × client CPUs) when that is higher; absent when its window had no length.
    pub client_limit_pct: Option<f64>,
    /// When its window opened, in seconds after the earliest host's (from the host's own clock, corrected
    /// by its measured offset).
    pub window_open_s: Option<f64>,
    /// The host's clock minus this machine's as read just before the round, in milliseconds (the start
    /// instant and the window's edges were corrected by it); absent in runs that read it only once.
    #[serde(default)]
    pub clock_offset_ms: Option<f64>,
    /// The `serverbench load` arguments the host ran.
    pub command: Vec<String>,
}
