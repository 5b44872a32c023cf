//! How fast each CPU is right now: a short fixed probe, run on every CPU of a list at once (each thread
//! pinned to its CPU), of a pure user-space loop and then a loop of cheap system calls. On a virtual machine
//! the same CPU runs at different speeds from minute to minute (its host is shared), and a round measured
//! in a slow stretch reads as a slower server; a probe beside each round tells such rounds apart.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// One CPU's speed: loop iterations per millisecond.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CpuSpeed {
    pub cpu: usize,
    /// Pure user-space arithmetic (no memory traffic, no system calls).
    pub user_per_ms: f64,
    /// `getppid()` system calls, which also cross into the kernel and back as a server's calls do.
    pub syscall_per_ms: f64,
}

/// The name of every probe thread, so a test can tell it from the harness's other threads (it is the only
/// one allowed on a server's CPUs, between rounds).
pub const THREAD_NAME: &str = "speed-probe";

/// Probes every CPU of `cpus` at once for `each` of each loop. A CPU the thread could not be pinned to is
/// left out (a figure from the wrong CPU would mislead).
pub fn probe(cpus: &[usize], each: Duration) -> Vec<CpuSpeed> {
    let handles: Vec<_> = cpus
        .iter()
        .map(|&cpu| {
            std::thread::Builder::new()
                .name(THREAD_NAME.into())
                .spawn(move || {
                    super::cpus::pin_current_thread(cpu).ok()?;
                    Some(CpuSpeed { cpu, user_per_ms: user_loop(each), syscall_per_ms: syscall_loop(each) })
                })
                .ok()
        })
        .collect();
    handles.into_iter().flatten().filter_map(|h| h.join().ok().flatten()).collect()
}

/// Round trips per ms of one cache line passed back and forth between a thread on CPU `a` and a thread on
/// CPU `b`, each spinning until the other has written. It times what a client and a server on those CPUs
/// pay for every byte they hand each other, which neither loop of `probe` sees: on a VM whose host
/// sometimes runs its two vCPUs on cores that share a cache and sometimes on cores that do not, this rate
/// fell from about 6,900 to 2,000–2,900 for a stretch of seconds while both loops held within 2%, and
/// loopback req/s of c-epoll fell to 0.70x with it (docs/methodology.md). None when a thread cannot be
/// pinned, or the other thread does not answer within a second.
pub fn cross_cpu(a: usize, b: usize, each: Duration) -> Option<f64> {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;
    let ball = Arc::new(AtomicU64::new(0));
    let (ready, done) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
    let (ball_b, ready_b, done_b) = (ball.clone(), ready.clone(), done.clone());
    let answerer = std::thread::Builder::new()
        .name(THREAD_NAME.into())
        .spawn(move || {
            if super::cpus::pin_current_thread(b).is_err() {
                return;
            }
            ready_b.store(true, Ordering::Release);
            let mut v = 1;
            while !done_b.load(Ordering::Relaxed) {
                if ball_b.load(Ordering::Acquire) == v {
                    ball_b.store(v + 1, Ordering::Release);
                    v += 2;
                }
                std::hint::spin_loop();
            }
        })
        .ok()?;
    let asker = std::thread::Builder::new()
        .name(THREAD_NAME.into())
        .spawn(move || {
            super::cpus::pin_current_thread(a).ok()?;
            let give_up = Instant::now() + Duration::from_secs(1);
            while !ready.load(Ordering::Acquire) {
                if Instant::now() > give_up {
                    return None;
                }
                std::hint::spin_loop();
            }
            let start = Instant::now();
            let (mut v, mut n) = (0u64, 0u64);
            loop {
                ball.store(v + 1, Ordering::Release);
                let mut spins = 0u32;
                while ball.load(Ordering::Acquire) != v + 2 {
                    spins = spins.wrapping_add(1);
                    if spins.is_multiple_of(4096) && start.elapsed() > each + Duration::from_secs(1) {
                        return None;
                    }
                    std::hint::spin_loop();
                }
                v += 2;
                n += 1;
                if n.is_multiple_of(64) {
                    let e = start.elapsed();
                    if e >= each {
                        return Some(n as f64 / (e.as_secs_f64() * 1000.0));
                    }
                }
            }
        })
        .ok();
    let rate = asker.and_then(|h| h.join().ok().flatten());
    done.store(true, Ordering::Relaxed);
    let _ = answerer.join();
    rate
}

/// Iterations per ms of a dependent chain of integer operations (an xorshift step), checked against the
/// clock every 1,024 iterations.
fn user_loop(each: Duration) -> f64 {
    let start = Instant::now();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut n: u64 = 0;
    loop {
        for _ in 0..1024 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        n += 1024;
        let e = start.elapsed();
        if e >= each {
            std::hint::black_box(x);
            return n as f64 / (e.as_secs_f64() * 1000.0);
        }
    }
}

/// getppid() calls per ms (a system call that does no work, so it times the entry and exit).
fn syscall_loop(each: Duration) -> f64 {
    let start = Instant::now();
    let mut n: u64 = 0;
    loop {
        for _ in 0..64 {
            // SAFETY: getppid takes no argument and cannot fail.
            std::hint::black_box(unsafe { libc::syscall(libc::SYS_getppid) });
        }
        n += 64;
        let e = start.elapsed();
        if e >= each {
            return n as f64 / (e.as_secs_f64() * 1000.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_each_cpu_it_can_pin_to() {
        let allowed = crate::os::cpus::CpuSet::allowed();
        let speeds = probe(allowed.cpus(), Duration::from_millis(5));
        assert_eq!(speeds.iter().map(|s| s.cpu).collect::<Vec<_>>(), allowed.cpus());
        for s in &speeds {
            assert!(s.user_per_ms > 0.0 && s.syscall_per_ms > 0.0, "{s:?}");
        }
        // A CPU that does not exist is left out, not reported as zero.
        assert!(probe(&[libc::CPU_SETSIZE as usize - 1], Duration::from_millis(1)).is_empty());
    }

    #[test]
    fn a_cache_line_goes_back_and_forth_between_two_cpus() {
        let allowed = crate::os::cpus::CpuSet::allowed();
        let (a, b) = (allowed.cpus()[0], *allowed.cpus().last().unwrap());
        assert!(a != b, "this test needs two CPUs; this process may use {allowed}");
        let rate = cross_cpu(a, b, Duration::from_millis(5)).expect("two CPUs it may use");
        assert!(rate > 0.0, "{rate}");
        // A CPU that does not exist: absent, not zero, and no thread left spinning.
        assert_eq!(cross_cpu(a, libc::CPU_SETSIZE as usize - 1, Duration::from_millis(5)), None);
        assert_eq!(cross_cpu(libc::CPU_SETSIZE as usize - 1, b, Duration::from_millis(5)), None);
    }
}
