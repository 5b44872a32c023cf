//! Per-CPU time from /proc/stat: what each CPU did between two readings, for telling a round's own work
//! apart from everything else that ran on its CPUs (other processes, the hypervisor's steal).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// One CPU's counters, in clock ticks since boot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuTimes {
    /// user + nice: tasks running in user space.
    pub user: u64,
    /// system: tasks running in the kernel (kernel threads included).
    pub system: u64,
    /// irq + softirq: interrupt work, which the kernel charges to no task.
    pub interrupts: u64,
    pub idle: u64,
    pub steal: u64,
}

impl CpuTimes {
    /// Time spent running tasks, in user space or in the kernel.
    pub fn tasks(&self) -> u64 {
        self.user + self.system
    }
    pub fn total(&self) -> u64 {
        self.tasks() + self.interrupts + self.idle + self.steal
    }
    fn minus(&self, o: &CpuTimes) -> CpuTimes {
        CpuTimes {
            user: self.user.saturating_sub(o.user),
            system: self.system.saturating_sub(o.system),
            interrupts: self.interrupts.saturating_sub(o.interrupts),
            idle: self.idle.saturating_sub(o.idle),
            steal: self.steal.saturating_sub(o.steal),
        }
    }
}

/// Every CPU's counters at one moment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuStat(pub HashMap<usize, CpuTimes>);

impl CpuStat {
    /// None when /proc/stat cannot be read.
    pub fn read() -> Option<CpuStat> {
        Self::parse(&std::fs::read_to_string("/proc/stat").ok()?)
    }

    /// Parses the `cpuN` lines: user nice system idle iowait irq softirq steal ...
    pub fn parse(text: &str) -> Option<CpuStat> {
        let mut map = HashMap::new();
        for line in text.lines() {
            // "cpu " is the sum over CPUs; "cpuN " is CPU N.
            let Some(rest) = line.strip_prefix("cpu").filter(|r| r.starts_with(|c: char| c.is_ascii_digit())) else { continue };
            let mut fields = rest.split_whitespace();
            let Some(Ok(cpu)) = fields.next().map(str::parse::<usize>) else { continue };
            let v: Vec<u64> = fields.map_while(|f| f.parse().ok()).collect();
            if v.len() < 8 {
                return None;
            }
            map.insert(cpu, CpuTimes { user: v[0] + v[1], system: v[2], interrupts: v[5] + v[6], idle: v[3] + v[4], steal: v[7] });
        }
        (!map.is_empty()).then_some(CpuStat(map))
    }

    /// What `cpus` did from `earlier` to now, summed; None if a CPU is missing from either reading.
    pub fn since(&self, earlier: &CpuStat, cpus: &[usize]) -> Option<CpuTimes> {
        let mut sum = CpuTimes::default();
        for c in cpus {
            let d = self.0.get(c)?.minus(earlier.0.get(c)?);
            sum.user += d.user;
            sum.system += d.system;
            sum.interrupts += d.interrupts;
            sum.idle += d.idle;
            sum.steal += d.steal;
        }
        Some(sum)
    }
}

/// `cpus` count as quiet when they were busy at most this share of a slice.
const QUIET_BUSY_SHARE: f64 = 0.2;
/// Every round pays one slice (docs/methodology.md, "Quiet before each round"): two ticks a CPU.
const QUIET_SLICE: std::time::Duration = std::time::Duration::from_millis(20);

/// Waits until `cpus` are quiet (busy at most a fifth of a 20 ms slice), at most `limit`; the time waited
/// in ms beyond the first slice, absent when /proc/stat cannot be read.
pub fn wait_quiet(cpus: &[usize], limit: std::time::Duration) -> Option<f64> {
    let started = std::time::Instant::now();
    let slice_ticks = QUIET_SLICE.as_secs_f64() * ticks_per_s() * cpus.len() as f64;
    let mut before = CpuStat::read()?;
    loop {
        std::thread::sleep(QUIET_SLICE);
        let now = CpuStat::read()?;
        let busy = now.since(&before, cpus)?;
        if (busy.tasks() + busy.interrupts) as f64 <= slice_ticks * QUIET_BUSY_SHARE || started.elapsed() >= limit {
            // The first slice is part of every wait: only what went beyond it is waiting.
            return Some((started.elapsed().saturating_sub(QUIET_SLICE)).as_secs_f64() * 1000.0);
        }
        before = now;
    }
}

/// Clock ticks per second (USER_HZ), the unit of /proc/stat and /proc/PID/stat.
pub fn ticks_per_s() -> f64 {
    match procfs::ticks_per_second() {
        0 => 100.0,
        t => t as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "cpu  100 0 50 1000 5 1 2 3 0 0\ncpu0 60 0 30 500 2 1 1 2 0 0\ncpu1 40 0 20 500 3 0 1 1 0 0\nintr 1\n";
    const B: &str = "cpu  300 0 150 1100 5 1 12 3 0 0\ncpu0 70 0 35 590 2 1 1 4 0 0\ncpu1 230 5 115 510 3 0 11 1 0 0\nintr 1\n";

    #[test]
    fn differences_per_cpu() {
        let (a, b) = (CpuStat::parse(A).unwrap(), CpuStat::parse(B).unwrap());
        assert_eq!(a.0.len(), 2);
        let d1 = b.since(&a, &[1]).unwrap();
        assert_eq!(d1, CpuTimes { user: 190 + 5, system: 95, interrupts: 10, idle: 10, steal: 0 });
        let d0 = b.since(&a, &[0]).unwrap();
        assert_eq!((d0.user, d0.system, d0.tasks(), d0.steal, d0.idle), (10, 5, 15, 2, 90));
        assert_eq!(b.since(&a, &[0, 1]).unwrap().total(), d0.total() + d1.total());
        assert!(b.since(&a, &[7]).is_none());
        assert!(CpuStat::parse("intr 1\n").is_none());
    }

    #[test]
    fn reads_this_machine() {
        let s = CpuStat::read().expect("/proc/stat");
        assert!(s.0.contains_key(&0));
        assert!(s.0[&0].total() > 0);
    }
}
