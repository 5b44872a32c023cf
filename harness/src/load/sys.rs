//! Thin, safe wrappers over the Linux calls the engine makes beyond its sockets (`os::socket`): the
//! clock, epoll, rusage.

use std::io;
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd, RawFd};

use crate::os::socket::cvt;

/// CLOCK_MONOTONIC in nanoseconds (a vDSO call, no syscall).
#[inline]
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a live, exclusively borrowed timespec, the one thing clock_gettime writes.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// What the calling thread has spent: user and system CPU seconds, voluntary and involuntary context switches.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ThreadUsage {
    pub user_s: f64,
    pub system_s: f64,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
    /// Moves to another CPU (from /proc/thread-self/sched); None where the kernel does not say.
    pub migrations: Option<u64>,
}

impl ThreadUsage {
    pub fn now() -> ThreadUsage {
        // SAFETY: rusage is a C struct of integers, for which all zeroes is a valid value.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `ru` is a live, exclusively borrowed rusage, the one thing getrusage writes.
        unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        ThreadUsage {
            user_s: tv(ru.ru_utime),
            system_s: tv(ru.ru_stime),
            voluntary_switches: ru.ru_nvcsw as u64,
            involuntary_switches: ru.ru_nivcsw as u64,
            migrations: crate::os::proc::migrations(std::path::Path::new("/proc/thread-self/sched")),
        }
    }

    pub fn cpu_s(&self) -> f64 {
        self.user_s + self.system_s
    }

    /// What was spent between `before` and `self`.
    pub fn since(&self, before: &ThreadUsage) -> ThreadUsage {
        ThreadUsage {
            user_s: (self.user_s - before.user_s).max(0.0),
            system_s: (self.system_s - before.system_s).max(0.0),
            voluntary_switches: self.voluntary_switches.saturating_sub(before.voluntary_switches),
            involuntary_switches: self.involuntary_switches.saturating_sub(before.involuntary_switches),
            migrations: self.migrations.zip(before.migrations).map(|(now, then)| now.saturating_sub(then)),
        }
    }
}

/// An epoll set whose wait takes a nanosecond timeout (epoll_pwait2, Linux 5.11+; falls back to
/// epoll_wait's milliseconds, rounded up, on older kernels).
pub struct Epoll {
    fd: OwnedFd,
    has_pwait2: bool,
}

impl Epoll {
    pub fn new() -> io::Result<Self> {
        // SAFETY: epoll_create1 takes a flag only and returns a new descriptor or -1.
        let fd = cvt(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        // SAFETY: `fd` was just opened here and nothing else holds it, so the OwnedFd is its one owner.
        Ok(Epoll { fd: unsafe { OwnedFd::from_raw_fd(fd) }, has_pwait2: true })
    }

    pub fn add(&self, fd: RawFd, events: u32, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event { events, u64: token };
        // SAFETY: `ev` is a live epoll_event that the kernel only reads; the epoll descriptor is ours.
        cvt(unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) }).map(|_| ())
    }

    pub fn modify(&self, fd: RawFd, events: u32, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event { events, u64: token };
        // SAFETY: as in `add`.
        cvt(unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), libc::EPOLL_CTL_MOD, fd, &mut ev) }).map(|_| ())
    }

    /// Waits at most `timeout_ns` (None: forever). Returns the number of events written to `events`.
    pub fn wait(&mut self, events: &mut [libc::epoll_event], timeout_ns: Option<u64>) -> usize {
        let max = events.len() as libc::c_int;
        let n = match timeout_ns {
            Some(ns) if self.has_pwait2 => {
                let ts = libc::timespec { tv_sec: (ns / 1_000_000_000) as libc::time_t, tv_nsec: (ns % 1_000_000_000) as libc::c_long };
                // SAFETY: `events` is a live, exclusively borrowed slice of `max` epoll_events, the most the
                // kernel writes; `ts` is a live timespec it only reads; a null sigmask with size 0 means none.
                let r = unsafe {
                    libc::syscall(libc::SYS_epoll_pwait2, self.fd.as_raw_fd(), events.as_mut_ptr(), max, &ts as *const libc::timespec, std::ptr::null::<libc::sigset_t>(), 0usize)
                } as libc::c_int;
                if r < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS) {
                    self.has_pwait2 = false;
                    return self.wait(events, timeout_ns);
                }
                r
            }
            // SAFETY: `events` is a live, exclusively borrowed slice of `max` epoll_events, the most the kernel writes.
            Some(ns) => unsafe { libc::epoll_wait(self.fd.as_raw_fd(), events.as_mut_ptr(), max, ns.div_ceil(1_000_000).min(i32::MAX as u64) as libc::c_int) },
            // SAFETY: as above.
            None => unsafe { libc::epoll_wait(self.fd.as_raw_fd(), events.as_mut_ptr(), max, -1) },
        };
        n.max(0) as usize // EINTR and friends: no events this time
    }
}
