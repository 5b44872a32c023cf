//! Raw TCP socket calls on descriptors, for those that need what `std::net` does not give: non-blocking
//! connects in bulk, socket options std has no setter for, `TCP_INFO`, poll, and the source addresses of a
//! client that opens a connection per request.

use std::io;
use std::net::SocketAddr;
use std::os::fd::RawFd;

/// A libc return value as a `Result`: negative means errno holds why.
pub(crate) fn cvt(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 { Err(io::Error::last_os_error()) } else { Ok(ret) }
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
        // SAFETY: `storage` is a sockaddr_storage, large and aligned enough for any address, and `len` is
        // the size of the address `sockaddr` wrote into it; the kernel only reads that many bytes.
        cvt(unsafe { libc::bind(fd, (&raw const storage).cast::<libc::sockaddr>(), len) }).map(|_| ())
    }
}

/// A non-blocking TCP socket with TCP_NODELAY of `family` (AF_INET, AF_INET6), bound to the next source
/// address of `spread` when there is one.
pub fn tcp_socket(family: libc::c_int, spread: Option<&mut SourceSpread>) -> io::Result<RawFd> {
    // SAFETY: socket(2) takes only integers and returns a new descriptor or -1; no memory is shared.
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
    // SAFETY: as in `bind_next`: `len` bytes of the live `storage` hold the address.
    let ret = unsafe { libc::connect(fd, (&raw const storage).cast::<libc::sockaddr>(), len) };
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
    let _ = try_setsockopt(fd, level, name, value);
}

/// setsockopt(2) with a typed value, which says when the kernel refused it.
pub fn try_setsockopt<T>(fd: RawFd, level: libc::c_int, name: libc::c_int, value: &T) -> io::Result<()> {
    // SAFETY: the pointer and the length describe exactly the live `*value`, which the kernel only reads
    // (it rejects a length that does not fit the option with EINVAL).
    cvt(unsafe { libc::setsockopt(fd, level, name, (value as *const T).cast::<libc::c_void>(), std::mem::size_of::<T>() as libc::socklen_t) })
        .map(|_| ())
}

/// Turns Nagle's algorithm off: every request leaves at once.
pub fn set_nodelay(fd: RawFd) {
    setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, &(1 as libc::c_int));
}

/// The C form of `addr`: its family, the address in a sockaddr_storage, and how many bytes of it count.
pub(crate) fn sockaddr(addr: &SocketAddr) -> (libc::c_int, libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: sockaddr_storage is a C struct of integers and padding, for which all zeroes is a valid value
    // (the unspecified family, AF_UNSPEC).
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr { s_addr: u32::from_ne_bytes(a.ip().octets()) },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_storage is larger than sockaddr_in and aligned for every socket address type,
            // so the write stays inside `storage` and is aligned.
            unsafe { std::ptr::write((&raw mut storage).cast::<libc::sockaddr_in>(), sin) };
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
            // SAFETY: as for sockaddr_in: sockaddr_storage holds a sockaddr_in6 and is aligned for it.
            unsafe { std::ptr::write((&raw mut storage).cast::<libc::sockaddr_in6>(), sin6) };
            (libc::AF_INET6, storage, std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t)
        }
    }
}

/// The pending error of a socket whose non-blocking connect finished (0 when it succeeded).
pub fn socket_error(fd: RawFd) -> i32 {
    let mut err: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `err` and `len` are live locals; `len` says `err`'s size, which the kernel writes at most.
    unsafe { libc::getsockopt(fd, libc::SOL_SOCKET, libc::SO_ERROR, (&raw mut err).cast::<libc::c_void>(), &mut len) };
    err
}

/// The kernel's TCP state of the socket (`tcpi_state` of TCP_INFO: 1 established, 8 close-wait, ...);
/// None when it cannot be read.
pub fn tcp_state(fd: RawFd) -> Option<u8> {
    // SAFETY: tcp_info is a C struct of integers, for which all zeroes is a valid value.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: `info` and `len` are live locals; `len` says `info`'s size, which the kernel writes at most.
    let r = unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_INFO, (&raw mut info).cast::<libc::c_void>(), &mut len) };
    (r == 0).then_some(info.tcpi_state)
}

/// Waits up to `timeout_ms` for the events of `fds`; returns how many have some (each one's `revents`).
pub fn poll(fds: &mut [libc::pollfd], timeout_ms: i32) -> io::Result<usize> {
    // SAFETY: the pointer and count describe the live, exclusively borrowed slice, whose `revents` the
    // kernel writes.
    cvt(unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) }).map(|n| n as usize)
}

/// Closes a descriptor this process opened and no longer uses.
pub fn close(fd: RawFd) {
    // SAFETY: close(2) takes the number only; callers close a descriptor they own, once, after its last use.
    unsafe { libc::close(fd) };
}

/// read(2); Ok(0) is end of stream; WouldBlock surfaces as an error of that kind.
#[inline]
pub fn read(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: the pointer and length describe the live, exclusively borrowed `buf`; the kernel writes at
    // most `buf.len()` bytes into it.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast::<libc::c_void>(), buf.len()) };
    if n < 0 { Err(io::Error::last_os_error()) } else { Ok(n as usize) }
}

/// send(2) without SIGPIPE: a peer that closed is an EPIPE error, not the end of the process.
#[inline]
pub fn write(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: the pointer and length describe the live `buf`, which the kernel only reads.
    let n = unsafe { libc::send(fd, buf.as_ptr().cast::<libc::c_void>(), buf.len(), libc::MSG_NOSIGNAL) };
    if n < 0 { Err(io::Error::last_os_error()) } else { Ok(n as usize) }
}
