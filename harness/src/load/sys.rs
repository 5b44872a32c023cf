//! Thin, safe wrappers over the Linux calls the engine makes: clock, sockets, epoll, pinning, rusage.

use std::io;
use std::net::SocketAddr;
use std::os::fd::RawFd;

/// CLOCK_MONOTONIC in nanoseconds (a vDSO call, no syscall).
#[inline]
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn cvt(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 { Err(io::Error::last_os_error()) } else { Ok(ret) }
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
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
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

/// The client's source addresses with a connection per request: a new connection takes the next of
/// 127.0.0.1 to 127.0.0.254 in turn. Each source address has its own ephemeral ports (32768-60999 by
/// default) towards the target, so the client's TIME_WAIT sockets are spread over 254 times as many
/// address and port pairs, and a run of minutes does not run out of them whatever `tcp_tw_reuse` says.
pub struct SourceSpread {
    next: u8,
}

/// The last byte of the source addresses a `SourceSpread` goes through: 127.0.0.1 to 127.0.0.254.
const SPREAD_LAST: u8 = 254;

impl SourceSpread {
    /// A spread for a thread's connections to `target`, or None when it has no use: keep-alive
    /// connections, or a target outside 127.0.0.0/8 (an IPv6 loopback target has one address only).
    /// `thread` staggers where the threads start.
    pub fn for_target(target: &SocketAddr, per_request: bool, thread: usize) -> Option<SourceSpread> {
        let loopback4 = matches!(target, SocketAddr::V4(a) if a.ip().is_loopback());
        (per_request && loopback4).then(|| SourceSpread { next: (thread * 37 % usize::from(SPREAD_LAST)) as u8 + 1 })
    }

    /// Binds `fd` to the next source address; the port is chosen at connect, for the target's address and
    /// port (IP_BIND_ADDRESS_NO_PORT), so the ports of every source address are shared by the threads.
    fn bind_next(&mut self, fd: RawFd) -> io::Result<()> {
        let ip = std::net::Ipv4Addr::new(127, 0, 0, self.next);
        self.next = if self.next == SPREAD_LAST { 1 } else { self.next + 1 };
        setsockopt(fd, libc::IPPROTO_IP, libc::IP_BIND_ADDRESS_NO_PORT, &(1 as libc::c_int));
        let (_, storage, len) = sockaddr(&SocketAddr::from((ip, 0)));
        cvt(unsafe { libc::bind(fd, &storage as *const _ as *const libc::sockaddr, len) }).map(|_| ())
    }
}

/// A non-blocking TCP socket with TCP_NODELAY of `family` (AF_INET, AF_INET6), bound to the next source
/// address of `spread` when there is one.
pub fn tcp_socket(family: libc::c_int, spread: Option<&mut SourceSpread>) -> io::Result<RawFd> {
    let fd = cvt(unsafe { libc::socket(family, libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, 0) })?;
    set_nodelay(fd);
    if let Some(spread) = spread {
        if let Err(e) = spread.bind_next(fd) {
            close(fd);
            return Err(e);
        }
    }
    Ok(fd)
}

/// A socket from `tcp_socket`, connecting to `addr`. Returns the fd and whether the connection completed
/// at once.
pub fn connect_nonblocking(addr: &SocketAddr, spread: Option<&mut SourceSpread>) -> io::Result<(RawFd, bool)> {
    let (family, storage, len) = sockaddr(addr);
    let fd = tcp_socket(family, spread)?;
    let ret = unsafe { libc::connect(fd, &storage as *const _ as *const libc::sockaddr, len) };
    if ret == 0 {
        return Ok((fd, true));
    }
    let err = io::Error::last_os_error();
    if err.raw_os_error() == Some(libc::EINPROGRESS) {
        Ok((fd, false))
    } else {
        close(fd);
        Err(err)
    }
}

/// setsockopt(2) with a typed value; failures are ignored (the options set here are best effort).
pub fn setsockopt<T>(fd: RawFd, level: libc::c_int, name: libc::c_int, value: &T) {
    unsafe { libc::setsockopt(fd, level, name, value as *const T as *const libc::c_void, std::mem::size_of::<T>() as libc::socklen_t) };
}

/// Turns Nagle's algorithm off: every request leaves at once.
pub fn set_nodelay(fd: RawFd) {
    setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, &(1 as libc::c_int));
}

pub(crate) fn sockaddr(addr: &SocketAddr) -> (libc::c_int, libc::sockaddr_storage, libc::socklen_t) {
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr { s_addr: u32::from_ne_bytes(a.ip().octets()) },
                sin_zero: [0; 8],
            };
            unsafe { std::ptr::write(&mut storage as *mut _ as *mut libc::sockaddr_in, sin) };
            (libc::AF_INET, storage, std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t)
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr { s6_addr: a.ip().octets() },
                sin6_scope_id: a.scope_id(),
            };
            unsafe { std::ptr::write(&mut storage as *mut _ as *mut libc::sockaddr_in6, sin6) };
            (libc::AF_INET6, storage, std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t)
        }
    }
}

/// The pending error of a socket whose non-blocking connect finished (0 when it succeeded).
pub fn socket_error(fd: RawFd) -> i32 {
    let mut err: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    unsafe { libc::getsockopt(fd, libc::SOL_SOCKET, libc::SO_ERROR, &mut err as *mut _ as *mut libc::c_void, &mut len) };
    err
}

pub fn close(fd: RawFd) {
    unsafe { libc::close(fd) };
}

/// read(2); Ok(0) is end of stream; WouldBlock surfaces as an error of that kind.
#[inline]
pub fn read(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    let n = unsafe { libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
    if n < 0 { Err(io::Error::last_os_error()) } else { Ok(n as usize) }
}

#[inline]
pub fn write(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    let n = unsafe { libc::send(fd, buf.as_ptr() as *const libc::c_void, buf.len(), libc::MSG_NOSIGNAL) };
    if n < 0 { Err(io::Error::last_os_error()) } else { Ok(n as usize) }
}

/// An epoll set whose wait takes a nanosecond timeout (epoll_pwait2, Linux 5.11+; falls back to
/// epoll_wait's milliseconds, rounded up, on older kernels).
pub struct Epoll {
    fd: RawFd,
    has_pwait2: bool,
}

impl Epoll {
    pub fn new() -> io::Result<Self> {
        let fd = cvt(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        Ok(Epoll { fd, has_pwait2: true })
    }

    pub fn add(&self, fd: RawFd, events: u32, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event { events, u64: token };
        cvt(unsafe { libc::epoll_ctl(self.fd, libc::EPOLL_CTL_ADD, fd, &mut ev) }).map(|_| ())
    }

    pub fn modify(&self, fd: RawFd, events: u32, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event { events, u64: token };
        cvt(unsafe { libc::epoll_ctl(self.fd, libc::EPOLL_CTL_MOD, fd, &mut ev) }).map(|_| ())
    }

    /// Waits at most `timeout_ns` (None: forever). Returns the number of events written to `events`.
    pub fn wait(&mut self, events: &mut [libc::epoll_event], timeout_ns: Option<u64>) -> usize {
        let max = events.len() as libc::c_int;
        let n = match timeout_ns {
            Some(ns) if self.has_pwait2 => {
                let ts = libc::timespec { tv_sec: (ns / 1_000_000_000) as libc::time_t, tv_nsec: (ns % 1_000_000_000) as libc::c_long };
                let r = unsafe {
                    libc::syscall(libc::SYS_epoll_pwait2, self.fd, events.as_mut_ptr(), max, &ts as *const libc::timespec, std::ptr::null::<libc::sigset_t>(), 0usize)
                } as libc::c_int;
                if r < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS) {
                    self.has_pwait2 = false;
                    return self.wait(events, timeout_ns);
                }
                r
            }
            Some(ns) => unsafe { libc::epoll_wait(self.fd, events.as_mut_ptr(), max, ns.div_ceil(1_000_000).min(i32::MAX as u64) as libc::c_int) },
            None => unsafe { libc::epoll_wait(self.fd, events.as_mut_ptr(), max, -1) },
        };
        n.max(0) as usize // EINTR and friends: no events this time
    }
}

impl Drop for Epoll {
    fn drop(&mut self) {
        close(self.fd);
    }
}
