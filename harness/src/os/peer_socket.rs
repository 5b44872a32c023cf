//! An option of a socket another process holds, read through a copy of its descriptor
//! (`pidfd_getfd(2)`, Linux 5.6, which needs the right to ptrace that process: root, or the same user
//! where ptrace is not restricted). The copy shares the socket, so the option read is the holder's.

use std::io;
use std::os::fd::{FromRawFd as _, OwnedFd, AsRawFd as _};

fn pidfd_open(pid: i32) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes integers only and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` (>= 0) was just made by the call above for this process, and nothing else holds it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

fn pidfd_getfd(pidfd: &OwnedFd, target: i32) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_getfd takes integers only (`pidfd` is open for the call's length) and returns a new
    // descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), target, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` (>= 0) was just made by the call above for this process, and nothing else holds it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// Whether TCP_NODELAY is set on descriptor `fd` of process `pid` (Nagle's algorithm off).
pub fn tcp_nodelay(pid: i32, fd: i32) -> io::Result<bool> {
    let copy = pidfd_getfd(&pidfd_open(pid)?, fd)?;
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `value` and `len` are live locals; `len` says `value`'s size, which the kernel writes at most.
    let rc = unsafe {
        libc::getsockopt(copy.as_raw_fd(), libc::IPPROTO_TCP, libc::TCP_NODELAY, (&mut value as *mut libc::c_int).cast(), &mut len)
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(value != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn reads_the_option_of_a_descriptor_of_this_process() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (accepted, _) = listener.accept().unwrap();
        let me = std::process::id() as i32;
        accepted.set_nodelay(false).unwrap();
        // A process may always copy its own descriptors.
        assert!(!tcp_nodelay(me, accepted.as_raw_fd()).unwrap());
        accepted.set_nodelay(true).unwrap();
        assert!(tcp_nodelay(me, accepted.as_raw_fd()).unwrap());
        drop(client);
    }
}
