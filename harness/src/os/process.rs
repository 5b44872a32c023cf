//! Child processes in their own process group (session), optionally pinned to CPUs; waiting with a deadline
//! that an interrupt can cut short; the tail of a log.

use std::io;
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::cpus::CpuSet;

/// `sh -c <command>` in `cwd`.
pub fn shell(command: &str, cwd: &Path) -> Command {
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(command).current_dir(cwd).stdin(Stdio::null());
    cmd
}

/// Starts `cmd` as the leader of a new session and process group (like `setsid`), so that the group can be
/// signalled as a whole and a terminal's Ctrl-C reaches only this process; with `cpus`, pinned to them
/// (`taskset` semantics: the mask is inherited by every thread and child).
pub fn spawn_group(cmd: &mut Command, cpus: Option<&CpuSet>) -> io::Result<Child> {
    let mask = cpus.map(CpuSet::to_libc);
    // SAFETY: between fork and exec the closure allocates nothing, takes no lock and makes only
    // async-signal-safe system calls (setsid, sched_setaffinity on a mask made before the fork), which is
    // what `pre_exec` asks of it.
    unsafe {
        cmd.pre_exec(move || {
            // Only async-signal-safe calls here: two system calls.
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            if let Some(mask) = &mask {
                if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), mask) != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    cmd.spawn()
}

/// Makes `cmd` a helper that must not outlive this process: in a session of its own (a terminal's Ctrl-C
/// reaches only this process, which ends it in order) and killed when the thread that starts it ends,
/// even when this process is killed with SIGKILL (`PR_SET_PDEATHSIG`). For ssh clients: their end closes
/// the remote side's channel.
pub fn tie_to_parent(cmd: &mut Command) -> &mut Command {
    // SAFETY: as in `spawn_group`: no allocation, no lock, only the async-signal-safe setsid and prctl.
    unsafe {
        cmd.pre_exec(|| {
            // Only async-signal-safe calls here: two system calls.
            if libc::setsid() < 0 || libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        })
    }
}

/// Sends `signal` to every process of the group; false when the group is gone.
pub fn signal_group(pgid: i32, signal: i32) -> bool {
    // SAFETY: kill(2) takes integers only; `pgid` > 0, so `-pgid` names that group and never every process (-1).
    pgid > 0 && unsafe { libc::kill(-pgid, signal) } == 0
}

pub enum Waited {
    Exited(ExitStatus),
    TimedOut,
    Interrupted,
}

/// Waits for `child` until it exits, `timeout` passes or `stop` is set.
pub fn wait(child: &mut Child, timeout: Duration, stop: &AtomicBool) -> io::Result<Waited> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Waited::Exited(status));
        }
        if stop.load(Ordering::Relaxed) {
            return Ok(Waited::Interrupted);
        }
        if Instant::now() >= deadline {
            return Ok(Waited::TimedOut);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The last `lines` lines of a log file, indented for quoting inside a message; empty when there are none.
pub fn log_tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read(path).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].iter().map(|l| format!("    {l}\n")).collect()
}

/// A failure message that leads with what failed and the log's last line (usually the one that says why),
/// followed by the log's last `lines` lines for the full story.
pub fn with_log(what: &str, log: &Path, lines: usize) -> String {
    let text = std::fs::read(log).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
    match text.lines().map(str::trim).rfind(|l| !l.is_empty()) {
        Some(last) => format!("{what}: {last}\nlast lines of {}:\n{}", log.display(), log_tail(log, lines)),
        None => format!("{what} (its log {} is empty)", log.display()),
    }
}

/// Runs a short shell command and returns its trimmed first line of output, or None when it fails or
/// takes longer than `timeout`.
pub fn first_line(command: &str, cwd: &Path, timeout: Duration) -> Option<String> {
    let mut cmd = shell(command, cwd);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = spawn_group(&mut cmd, None).ok()?;
    let pgid = child.id() as i32;
    // Read in a thread so a chatty command cannot fill the pipe and stall.
    let mut stdout = child.stdout.take()?;
    let mut stderr = child.stderr.take()?;
    let reader = std::thread::spawn(move || {
        use std::io::Read as _;
        let (mut out, mut err) = (String::new(), String::new());
        let _ = stdout.read_to_string(&mut out);
        let _ = stderr.read_to_string(&mut err);
        (out, err)
    });
    let never = AtomicBool::new(false);
    let status = match wait(&mut child, timeout, &never).ok()? {
        Waited::Exited(s) => s,
        _ => {
            signal_group(pgid, libc::SIGKILL);
            let _ = child.wait();
            return None;
        }
    };
    let (out, err) = reader.join().ok()?;
    // Some tools (java -version) print their version on stderr.
    let text = if out.trim().is_empty() { err } else { out };
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?.to_string();
    status.success().then_some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_line_of_a_command() {
        let dir = std::env::temp_dir();
        assert_eq!(first_line("printf '\\n a b \\nc'", &dir, Duration::from_secs(5)).as_deref(), Some("a b"));
        assert_eq!(first_line("echo x >&2", &dir, Duration::from_secs(5)).as_deref(), Some("x"));
        assert_eq!(first_line("exit 3", &dir, Duration::from_secs(5)), None);
        assert_eq!(first_line("sleep 5", &dir, Duration::from_millis(100)), None);
    }

    #[test]
    fn a_group_leader_gets_its_own_group() {
        let mut cmd = shell("sleep 5", &std::env::temp_dir());
        let mut child = spawn_group(&mut cmd, None).unwrap();
        let pid = child.id() as i32;
        let group = procfs::process::Process::new(pid).and_then(|p| p.stat()).unwrap().pgrp;
        assert_eq!(group, pid);
        assert!(signal_group(pid, libc::SIGKILL));
        child.wait().unwrap();
    }
}
