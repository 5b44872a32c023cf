//! The server's side of one round, read on the machine the server runs on: its process tree sampled with
//! the measured window's edges marked (`probe::Sampler`), and that machine's counters around the round
//! (every CPU's /proc/stat, the listeners' overflows). A local round and the agent on a server host run
//! this same code, so both read the same figures the same way.

use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::probe::{Marks, Sampler, Usage};
use crate::os::cpustat::CpuStat;
use crate::os::proc;
use crate::os::syscalls::{Counter, NotCounted};

/// A round being watched.
pub struct RoundWatch {
    sampler: Sampler,
    listen_before: Option<(u64, u64)>,
    stat_before: Option<CpuStat>,
    started: Instant,
}

/// What the server's machine saw over a round.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerSide {
    pub usage: Usage,
    /// The span the figures cover: the measured window when its edges were marked, the whole round
    /// otherwise (external tools, or a run that ended before its window opened).
    pub wall_s: f64,
    /// Every CPU's counters at the edges of that span; absent when /proc/stat could not be read.
    pub stat_before: Option<CpuStat>,
    pub stat_after: Option<CpuStat>,
    /// The listeners' overflows and drops before and after the whole round, ramp included: a listener
    /// overflows while connections are being set up.
    pub listen_before: Option<(u64, u64)>,
    pub listen_after: Option<(u64, u64)>,
}

impl RoundWatch {
    /// Starts sampling the tree of `pid`; with `syscall_cpus`, its system calls are counted on those CPUs
    /// (otherwise the reason they are not is kept).
    pub fn begin(pid: i32, syscall_cpus: Result<Vec<usize>, impl Into<NotCounted>>) -> RoundWatch {
        let sampler = Sampler::spawn_counting(pid, pid, syscall_cpus.map(|cpus| Counter::open(&cpus)).map_err(Into::into));
        let listen_before = proc::listen_overflows_and_drops();
        let stat_before = CpuStat::read();
        RoundWatch { sampler, listen_before, stat_before, started: Instant::now() }
    }

    /// What the load calls at its window's edges.
    pub fn marks(&self) -> Marks {
        self.sampler.marks()
    }

    pub fn finish(self) -> ServerSide {
        let call_s = self.started.elapsed().as_secs_f64();
        let stat_after = CpuStat::read();
        let listen_after = proc::listen_overflows_and_drops();
        let mut usage = self.sampler.finish();
        let (wall_s, stat_before, stat_after) = match usage.window.take() {
            Some(w) => (w.wall_s, w.stat_open, w.stat_close),
            None => (call_s, self.stat_before, stat_after),
        };
        ServerSide { usage, wall_s, stat_before, stat_after, listen_before: self.listen_before, listen_after }
    }
}
