//! A contestant's server: started in its own process group, pinned to the server CPUs, logging to a file;
//! readiness by connecting until a deadline; stopping with SIGTERM, then SIGKILL after a grace period, and
//! checking that no process of its tree survives and its port is free.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
#[cfg(test)]
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::os::cpus::CpuSet;
use crate::os::proc::{self, ProcKey, ProcStat};
use crate::os::process;

use super::LOOPBACK;

/// Lines of a server's log quoted in a failure message.
pub const LOG_TAIL_LINES: usize = 15;
/// The longest wait for a frozen tree to be stopped.
const FREEZE_WAIT: Duration = Duration::from_millis(200);
/// How long a server has between SIGTERM and SIGKILL.
pub const STOP_GRACE: Duration = Duration::from_secs(3);
const KILL_WAIT: Duration = Duration::from_secs(2);
const PORT_RELEASE_WAIT: Duration = Duration::from_secs(2);
/// A server's log is kept under about this size: past it, the middle is dropped and a line says how much.
/// The server writes to the file itself (never to a pipe that could fill), so a contestant that floods its
/// output neither stalls nor fills the disk.
pub const LOG_LIMIT: u64 = 16 << 20;
/// What a trimmed log keeps: its first bytes (the start-up messages) and its last ones.
const LOG_KEEP_HEAD: u64 = 1 << 20;
const LOG_KEEP_TAIL: u64 = 256 << 10;
const LOG_CHECK_EVERY: Duration = Duration::from_millis(50);

/// How to start one server.
pub struct Launch<'a> {
    /// The run command with placeholders filled in; run with `sh -c`.
    pub command: String,
    pub env: Vec<(String, String)>,
    pub cwd: &'a Path,
    pub cpus: &'a CpuSet,
    pub log: PathBuf,
}

#[derive(Debug)]
pub struct Server {
    pub port: u16,
    /// The address it listens on: loopback unless client hosts must reach it.
    ip: IpAddr,
    pub log: PathBuf,
    child: Child,
    exit: Option<ExitStatus>,
    /// Every process of its tree seen so far (the leader included).
    seen: HashSet<ProcKey>,
    stopped: bool,
    _log_limit: LogLimit,
}

/// What stopping a server found.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StopReport {
    /// SIGTERM did not end the tree within the grace period; SIGKILL did the rest.
    pub killed_after_s: Option<f64>,
    /// Processes still alive after SIGKILL, as "pid (name)".
    pub survivors: Vec<String>,
    pub port_in_use: bool,
}

/// Why a started server is not ready: it exited, another process answers its port, time ran out, or
/// the run was interrupted; with the tail of its log.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NotReady(pub String);

impl StopReport {
    /// One message per violation of the contestant rules.
    pub fn warnings(&self, port: u16) -> Vec<String> {
        let mut w = Vec::new();
        if let Some(s) = self.killed_after_s {
            w.push(format!("did not exit within {s:.1} s of SIGTERM and was killed"));
        }
        if !self.survivors.is_empty() {
            w.push(format!("processes survived SIGKILL of its tree: {}", self.survivors.join(", ")));
        }
        if self.port_in_use {
            w.push(format!("port {port} was still in use after it stopped"));
        }
        w
    }
}

/// The lowest port handed out for servers.
const PORT_FLOOR: u16 = 10_000;

/// A port on 127.0.0.1 that nothing uses right now, below the kernel's ephemeral range: ports in that range
/// are given to the load generator's own connections, and one of them could take the port between this
/// check and the server's bind. The start is random so that parallel runs rarely probe the same ports.
pub fn free_port() -> std::io::Result<u16> {
    free_port_on(LOOPBACK)
}

/// `free_port` on another address of this machine.
pub fn free_port_on(ip: IpAddr) -> std::io::Result<u16> {
    use std::hash::{BuildHasher, Hasher};
    let ephemeral_low = proc::ephemeral_port_low().unwrap_or(32_768);
    if ephemeral_low > PORT_FLOOR + 100 {
        let span = ephemeral_low - PORT_FLOOR;
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u32(std::process::id());
        let start = (h.finish() % u64::from(span)) as u16;
        for i in 0..span.min(500) {
            let port = PORT_FLOOR + (start + i) % span;
            if !port_in_use_on(ip, port) {
                return Ok(port);
            }
        }
    }
    Ok(TcpListener::bind((ip, 0))?.local_addr()?.port())
}

/// Whether something still listens on (or holds) 127.0.0.1:port. std sets SO_REUSEADDR, so connections in
/// TIME_WAIT do not count.
pub fn port_in_use(port: u16) -> bool {
    port_in_use_on(LOOPBACK, port)
}

fn port_in_use_on(ip: IpAddr, port: u16) -> bool {
    TcpListener::bind((ip, port)).is_err()
}

/// `exec <command>` for a simple command, so the server replaces the shell instead of running under it
/// (the shell would otherwise sit in the tree and add its memory); a compound command is left alone.
fn exec_simple(command: &str) -> String {
    let simple = !command.contains([';', '&', '|', '\n', '(', ')', '`', '$', '<', '>']);
    if simple { format!("exec {command}") } else { command.to_string() }
}

impl Server {
    pub fn start(launch: Launch, port: u16) -> anyhow::Result<Server> {
        Server::start_on(launch, SocketAddr::new(LOOPBACK, port))
    }

    /// `start` of a server that listens on `addr`, an address of this machine.
    pub fn start_on(launch: Launch, addr: SocketAddr) -> anyhow::Result<Server> {
        let (ip, port) = (addr.ip(), addr.port());
        // Appending, so that the server's writes follow the end of the file when it is trimmed.
        File::create(&launch.log)?;
        let log = OpenOptions::new().append(true).open(&launch.log)?;
        let mut cmd = process::shell(&exec_simple(&launch.command), launch.cwd);
        cmd.env(crate::wire::FILES_ENV, crate::wire::files_dir()?)
            .envs(launch.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        let child = process::spawn_group(&mut cmd, Some(launch.cpus))
            .map_err(|e| anyhow::anyhow!("could not start `{}`: {e}", launch.command))?;
        let _log_limit = LogLimit::watch(launch.log.clone());
        let mut server = Server { port, ip, log: launch.log, child, exit: None, seen: HashSet::new(), stopped: false, _log_limit };
        server.remember_tree();
        Ok(server)
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    pub fn addr(&self) -> SocketAddr {
        SocketAddr::new(self.ip, self.port)
    }

    /// The exit status once the leader has exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        if self.exit.is_none() {
            self.exit = self.child.try_wait().ok().flatten();
        }
        self.exit
    }

    /// A failure message: `what`, then what the server's log says.
    pub fn explain(&self, what: &str) -> String {
        process::with_log(what, &self.log, LOG_TAIL_LINES)
    }

    /// Connects until the server accepts, it exits, `timeout` passes or `stop` is set.
    pub fn wait_ready(&mut self, timeout: Duration, stop: &AtomicBool) -> Result<(), NotReady> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.exited() {
                return Err(NotReady(self.explain(&format!("exited ({status}) before accepting connections"))));
            }
            if TcpStream::connect_timeout(&self.addr(), Duration::from_millis(200)).is_ok() {
                let all = proc::all_processes();
                let pid = self.pid();
                let tree = proc::tree(pid, pid, &all);
                self.remember(&tree.iter().map(ProcStat::key).collect::<Vec<_>>());
                if let Some(why) = self.foreign_listener(&tree, &all) {
                    return Err(NotReady(self.explain(&why)));
                }
                return Ok(());
            }
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                return Err(NotReady("interrupted while waiting for it to accept connections".into()));
            }
            if Instant::now() >= deadline {
                return Err(NotReady(self.explain(&format!(
                    "did not accept connections on {} within {:.0} s",
                    self.addr(),
                    timeout.as_secs_f64()
                ))));
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// The port was free when it was chosen, but another process may have bound it before the server
    /// did: then the connection that looked like readiness reached that process. Every socket listening
    /// on the port must be held by a process of the server's tree; if one is not, this says whose it is.
    fn foreign_listener(&self, tree: &[ProcStat], all: &[ProcStat]) -> Option<String> {
        let listeners = proc::listening_inodes(self.port);
        let ours: HashSet<u64> = tree.iter().flat_map(|p| proc::socket_inodes(p.pid)).collect();
        let foreign: Vec<u64> = listeners.into_iter().filter(|i| !ours.contains(i)).collect();
        if foreign.is_empty() {
            return None;
        }
        let owner = all
            .iter()
            .find(|p| proc::socket_inodes(p.pid).iter().any(|i| foreign.contains(i)))
            .map_or("a process this user cannot see".to_string(), |p| format!("pid {} ({})", p.pid, p.comm));
        Some(format!(
            "port {} is answered by {owner}, outside the server's process tree: it took the port after it was chosen; \
             the server was not measured",
            self.port
        ))
    }

    /// Adds processes seen by a probe to the tree to be checked at stop.
    pub fn remember(&mut self, members: &[ProcKey]) {
        self.seen.extend(members.iter().copied());
    }

    fn remember_tree(&mut self) {
        let pid = self.pid();
        let members: Vec<ProcKey> = proc::tree(pid, pid, &proc::all_processes()).iter().map(ProcStat::key).collect();
        self.remember(&members);
    }

    /// Processes of the tree still alive (not zombies): the group, the leader's descendants, and every
    /// process seen earlier that still exists under the same identity.
    fn alive(&self) -> Vec<ProcStat> {
        let all = proc::all_processes();
        let pid = self.pid();
        let mut out = proc::tree(pid, pid, &all);
        for p in &all {
            if self.seen.contains(&p.key()) && !out.iter().any(|o| o.pid == p.pid) {
                out.push(p.clone());
            }
        }
        out.retain(|p| !p.is_zombie());
        out
    }

    fn signal_all(&self, signal: i32) {
        process::signal_group(self.pid(), signal);
        for p in self.alive() {
            // SAFETY: kill(2) takes integers only; a process that is gone meanwhile is an error, ignored.
            unsafe { libc::kill(p.pid, signal) };
        }
    }

    /// Freezes the whole tree (SIGSTOP): a server that is not being measured takes no CPU, not even for its
    /// timers, garbage collector or scheduler threads, while another one is.
    /// Returns once every process of the tree is stopped (at most `FREEZE_WAIT`: a signal to a process
    /// running on another CPU takes effect a moment later).
    pub fn freeze(&mut self) {
        self.remember_tree();
        self.signal_all(libc::SIGSTOP);
        let deadline = Instant::now() + FREEZE_WAIT;
        while self.alive().iter().any(|p| p.state != 'T' && p.state != 't') && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Lets a frozen tree run again (SIGCONT).
    pub fn thaw(&self) {
        self.signal_all(libc::SIGCONT);
    }

    /// SIGTERM to the tree; after `grace`, SIGKILL; then the checks. A frozen tree is thawed after the
    /// SIGTERM, so that it handles the signal at once.
    pub fn stop(mut self, grace: Duration) -> StopReport {
        self.remember_tree();
        self.stopped = true;
        let mut report = StopReport::default();
        let started = Instant::now();
        self.signal_all(libc::SIGTERM);
        self.signal_all(libc::SIGCONT);
        if !self.wait_gone(grace) {
            report.killed_after_s = Some(started.elapsed().as_secs_f64());
            self.signal_all(libc::SIGKILL);
            self.wait_gone(KILL_WAIT);
        }
        report.survivors = self.alive().iter().map(|p| format!("{} ({})", p.pid, p.comm)).collect();
        // A socket closed through io_uring is released asynchronously: give the kernel a moment.
        let deadline = Instant::now() + PORT_RELEASE_WAIT;
        report.port_in_use = loop {
            let busy = port_in_use_on(self.ip, self.port);
            if !busy || Instant::now() >= deadline {
                break busy;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        report
    }

    /// Waits until the leader is reaped and the tree is empty.
    fn wait_gone(&mut self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            let leader_done = self.exited().is_some();
            if leader_done && self.alive().is_empty() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Keeps a server's log under `LOG_LIMIT` while the server lives: a thread looks at its size every
/// `LOG_CHECK_EVERY` and trims it. Dropping this wakes the thread for one last look and waits for it, so
/// that the runner never exits in the middle of a trim.
#[derive(Debug)]
struct LogLimit {
    done: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl LogLimit {
    fn watch(path: PathBuf) -> LogLimit {
        let done = Arc::new(AtomicBool::new(false));
        let flag = done.clone();
        let thread = std::thread::Builder::new()
            .name("log-limit".into())
            .spawn(move || {
                let mut dropped = 0;
                loop {
                    let last = flag.load(Ordering::Relaxed);
                    dropped = trim_log(&path, LOG_LIMIT, dropped).unwrap_or(dropped);
                    if last {
                        break;
                    }
                    std::thread::park_timeout(LOG_CHECK_EVERY);
                }
            })
            .ok();
        LogLimit { done, thread }
    }
}

impl Drop for LogLimit {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

/// When the log at `path` is over `limit`, keeps its first `LOG_KEEP_HEAD` bytes and its last lines (up
/// to `LOG_KEEP_TAIL` bytes) with a line between that says how many bytes were dropped in all
/// (`dropped_before` from earlier trims). Returns the new total. Writes the server appends meanwhile may be
/// lost; the tail quoted in a failure message stays.
pub fn trim_log(path: &Path, limit: u64, dropped_before: u64) -> std::io::Result<u64> {
    let mut f = OpenOptions::new().read(true).append(true).open(path)?;
    let size = f.metadata()?.len();
    if size <= limit.max(LOG_KEEP_HEAD + LOG_KEEP_TAIL) {
        return Ok(dropped_before);
    }
    let mut tail = vec![0; LOG_KEEP_TAIL as usize];
    f.seek(SeekFrom::Start(size - LOG_KEEP_TAIL))?;
    f.read_exact(&mut tail)?;
    let cut = tail.iter().position(|&b| b == b'\n').map_or(0, |i| i + 1);
    let tail = &tail[cut..];
    // An earlier trim's own line lies in the part dropped now and is counted with it (a hundred bytes).
    let dropped = dropped_before + size - LOG_KEEP_HEAD - tail.len() as u64;
    f.set_len(LOG_KEEP_HEAD)?;
    writeln!(f, "\n[serverbench: {dropped} bytes of this server's output dropped here to keep its log under {} MiB]", limit >> 20)?;
    f.write_all(tail)?;
    Ok(dropped)
}

impl Drop for Server {
    /// A server dropped without `stop` (an error path) is killed with its group, never left behind.
    fn drop(&mut self) {
        if !self.stopped {
            self.signal_all(libc::SIGKILL);
            let _ = self.child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_ports_are_free_and_below_the_ephemeral_range() {
        let port = free_port().unwrap();
        assert!(!port_in_use(port));
        let held = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).unwrap();
        assert!(port_in_use(port));
        drop(held);
        assert!(port >= PORT_FLOOR);
    }

    #[test]
    fn a_flooded_log_keeps_its_head_and_tail_under_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("server.log");
        let mut text = b"started on port 1\n".to_vec();
        while text.len() < 3 << 20 {
            text.extend_from_slice(format!("flood line {}\n", text.len()).as_bytes());
        }
        text.extend_from_slice(b"the last line\n");
        std::fs::write(&path, &text).unwrap();
        let dropped = trim_log(&path, 2 << 20, 0).unwrap() as usize;
        let kept = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
        let line = format!("\n[serverbench: {dropped} bytes of this server's output dropped here to keep its log under 2 MiB]\n");
        assert_eq!(kept.len() - line.len() + dropped, text.len(), "what is kept and what is dropped make the whole");
        assert!(kept.len() < 2 << 20);
        assert!(kept.starts_with("started on port 1\n"));
        assert!(kept.ends_with("the last line\n"));
        assert!(kept.contains(&line));
        assert_eq!(trim_log(&path, 2 << 20, 7).unwrap(), 7, "a log under the limit is left alone");
    }

    #[test]
    fn simple_commands_replace_the_shell() {
        assert_eq!(exec_simple("/x/server hello 127.0.0.1 1 1"), "exec /x/server hello 127.0.0.1 1 1");
        assert_eq!(exec_simple("cd x && ./server"), "cd x && ./server");
        assert_eq!(exec_simple("FOO=$BAR ./server"), "FOO=$BAR ./server");
    }
}
