//! How evenly a server's workers shared its work in a round: the busiest worker's CPU time over the mean of
//! the workers' (1.0: perfectly even). Read from each thread's CPU time within the measured window.

use serde::{Deserialize, Serialize};

/// A thread counts as a worker when it ran at least this share of the busiest thread's CPU time.
pub const WORKER_SHARE_OF_BUSIEST: f64 = 0.1;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WorkerBalance {
    /// Threads counted as workers (see `worker_balance`).
    pub workers: usize,
    /// CPU seconds of the busiest worker and the mean over the workers.
    pub busiest_cpu_s: f64,
    pub mean_cpu_s: f64,
    /// busiest / mean: 1.0 when every worker did the same, `workers` when one did everything.
    pub imbalance: f64,
}

/// The balance of a round from its threads' CPU seconds and the workers the server was asked to run.
///
/// The workers are the busiest threads: at least as many as asked for (so a worker that did nothing still
/// counts, which is what an uneven load looks like on a per-core server), and more when more threads each
/// ran at least a tenth of the busiest one's time (a thread per connection, a runtime with more threads
/// than workers). Helper threads that barely ran (timers, garbage collectors, blocking pools) are left
/// out. Absent with fewer than two workers, or when no thread ran.
pub fn worker_balance(thread_cpu_s: &[f64], workers_asked: usize) -> Option<WorkerBalance> {
    let mut cpu: Vec<f64> = thread_cpu_s.iter().copied().filter(|c| c.is_finite() && *c >= 0.0).collect();
    cpu.sort_by(|a, b| b.total_cmp(a));
    let busiest = *cpu.first()?;
    if busiest <= 0.0 {
        return None;
    }
    let busy = cpu.iter().filter(|c| **c >= WORKER_SHARE_OF_BUSIEST * busiest).count();
    let workers = busy.max(workers_asked).min(cpu.len());
    if workers < 2 {
        return None;
    }
    let mean = cpu[..workers].iter().sum::<f64>() / workers as f64;
    Some(WorkerBalance { workers, busiest_cpu_s: busiest, mean_cpu_s: mean, imbalance: busiest / mean })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_workers_are_balanced_and_one_idle_worker_is_not() {
        let even = worker_balance(&[0.5, 0.5, 0.001], 2).unwrap();
        assert_eq!((even.workers, even.imbalance), (2, 1.0));
        // Two per-core workers, one given every connection: the idle one still counts (as the second
        // busiest thread, beside a helper that barely ran).
        let skewed = worker_balance(&[0.9, 0.0, 0.002], 2).unwrap();
        assert_eq!(skewed.workers, 2);
        assert!((skewed.imbalance - 2.0).abs() < 0.01, "{skewed:?}");
        // Helpers that barely ran are not workers; threads that each did a share are, beyond those asked.
        let per_connection = worker_balance(&[0.2, 0.1, 0.1, 0.1, 0.001], 1).unwrap();
        assert_eq!(per_connection.workers, 4);
        assert!((per_connection.imbalance - 0.2 / 0.125).abs() < 1e-9);
    }

    #[test]
    fn one_worker_or_no_work_has_no_balance() {
        assert_eq!(worker_balance(&[0.9, 0.01], 1), None);
        assert_eq!(worker_balance(&[], 2), None);
        assert_eq!(worker_balance(&[0.0, 0.0], 2), None);
        assert_eq!(worker_balance(&[0.9], 4), None);
    }
}
