//! The limit on open file descriptors (RLIMIT_NOFILE): raised as far as a run needs, with an error that says
//! how to fix it when it cannot be.

fn open_files_limit() -> libc::rlimit {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `lim` is a live, exclusively borrowed rlimit, the one thing getrlimit writes.
    unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    lim
}

/// Makes sure `needed` file descriptors can be open at once, raising RLIMIT_NOFILE (the hard limit too
/// when privileged). The error says how to fix it.
pub fn ensure_open_files(needed: u64) -> anyhow::Result<()> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: as in `open_files_limit`.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    if lim.rlim_cur >= needed {
        return Ok(());
    }
    let want = libc::rlimit { rlim_cur: needed, rlim_max: lim.rlim_max.max(needed) };
    // SAFETY: `want` is a live rlimit that setrlimit only reads.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &want) } == 0 {
        return Ok(());
    }
    anyhow::bail!(
        "{needed} open files are needed but the limit is {} (hard {}) and cannot be raised by this user; \
         run `ulimit -n {needed}` as root first (or raise nofile in /etc/security/limits.conf), or use fewer connections",
        lim.rlim_cur,
        lim.rlim_max
    )
}

/// Raises the soft limit to the hard one and returns the soft limit that holds afterwards.
pub fn raise_open_files_to_hard() -> u64 {
    let hard = open_files_limit().rlim_max;
    let _ = ensure_open_files(hard);
    open_files_limit().rlim_cur
}
