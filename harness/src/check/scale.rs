//! Scale: many keep-alive connections open at once, each served at least once, and the server's resident
//! memory at a few connection counts. One process cannot hold more sockets than its open-files limit, so
//! past that the connections are spread over client processes (`serverbench check --hold`), each holding
//! its share open until told to let go; the check confirms they were all still open at the same moment.

use std::io::{BufRead, BufReader, Write as _};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::client::{get, post_json, Conn, Rng};
use super::wire::{check_json, check_plaintext, probe, read_hello};
use super::{Options, Scenario, Target, Verdict};
use crate::load::sys;

/// Descriptors a process keeps for itself besides the held connections.
const FD_RESERVE: u64 = 128;
/// Descriptors left to the server beyond what it had open before the check.
const SERVER_FD_SLACK: u64 = 24;
/// Longest the client processes may take to open and serve their share.
const HOLD_TIMEOUT: Duration = Duration::from_secs(180);

/// What the scale check can learn about the server's processes (from /proc).
pub trait ServerProcess {
    /// Resident memory of the whole process tree.
    fn rss_bytes(&self) -> Option<u64>;
    /// Of the server's processes, the one with the least room: descriptors open now and its hard limit.
    fn open_files(&self) -> Option<(u64, u64)>;
}

#[derive(Debug, Clone, PartialEq)]
pub struct ScaleOptions {
    /// Connections to hold at once at the top.
    pub connections: usize,
    /// Smaller counts at which memory is read on the way up.
    pub steps: Vec<usize>,
    /// The serverbench executable, for client processes; None holds everything in this process.
    pub client_exe: Option<PathBuf>,
    /// Most connections one client process holds [default: what its open-files limit allows].
    pub per_process: Option<usize>,
}

impl Default for ScaleOptions {
    fn default() -> Self {
        ScaleOptions { connections: 20_000, steps: vec![2, 400], client_exe: std::env::current_exe().ok(), per_process: None }
    }
}

/// The server's resident memory with this many connections open.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RssPoint {
    pub connections: usize,
    pub rss_bytes: Option<u64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ScaleReport {
    pub verdict: Verdict,
    pub rss: Vec<RssPoint>,
    /// Connections asked for and connections held open at once.
    pub asked: usize,
    pub held: usize,
    /// Why fewer than asked were tried (the server's open-files limit), if so.
    pub capped: Option<String>,
}

/// One ordinary exchange on an open connection, so that the connection counts as served.
pub fn serve_once(c: &mut Conn, scenario: Scenario, micro: bool, rng: &mut Rng) -> Result<(), String> {
    match scenario {
        Scenario::Hello | Scenario::HelloTimeout => {
            c.send(&get("/"))?;
            read_hello(c, micro).map(|_| ())
        }
        Scenario::Plaintext => {
            c.send(&get("/plaintext"))?;
            check_plaintext(&c.read_response()?)
        }
        Scenario::Json => {
            let n = rng.below(1 << 31);
            c.send(&post_json(&format!("{{\"sequence\": {n}}}")))?;
            check_json(&c.read_response()?, n)
        }
        Scenario::Echo => {
            let payload = rng.bytes(64);
            c.send(&payload)?;
            if c.read_exact(payload.len())? != payload {
                return Err("the echoed bytes differ".into());
            }
            Ok(())
        }
    }
}

/// Opens `count` connections one after the other, serving each once, and keeps them.
pub fn open_and_serve(t: &Target, count: usize, timeout: Duration, held: &mut Vec<Conn>, seed: u64) -> Result<(), String> {
    let mut rng = Rng::new(seed);
    for _ in 0..count {
        let n = held.len() + 1;
        let mut c = Conn::open(t.addr, timeout).map_err(|e| format!("connection {n}: {e}"))?;
        serve_once(&mut c, t.scenario, t.micro, &mut rng).map_err(|e| format!("connection {n}: {e}"))?;
        held.push(c);
    }
    Ok(())
}

/// How many of the held connections are still open (not closed by the server in the meantime).
pub fn still_open(held: &[Conn]) -> usize {
    held.iter().filter(|c| is_established(c.stream.as_raw_fd())).count()
}

fn is_established(fd: i32) -> bool {
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    let r = unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_INFO, &mut info as *mut _ as *mut libc::c_void, &mut len) };
    r == 0 && info.tcpi_state == 1 // TCP_ESTABLISHED: no FIN or reset from the server
}

/// Descriptors this process may still open, once its soft limit is raised as far as it goes.
fn own_room() -> u64 {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    let _ = sys::ensure_open_files(lim.rlim_max);
    unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    let open = std::fs::read_dir("/proc/self/fd").map(|d| d.count() as u64).unwrap_or(0);
    lim.rlim_cur.saturating_sub(open + FD_RESERVE)
}

fn settle_and_read(server: Option<&dyn ServerProcess>) -> Option<u64> {
    std::thread::sleep(Duration::from_millis(300));
    server.and_then(|s| s.rss_bytes())
}

/// A client process holding a share of the connections.
struct Holder {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    share: usize,
}

impl Holder {
    fn spawn(exe: &PathBuf, t: &Target, share: usize, timeout: Duration, seed: u64) -> Result<Holder, String> {
        let mut cmd = Command::new(exe);
        cmd.args(hold_args(t, share, timeout, seed)).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit());
        let mut child = cmd.spawn().map_err(|e| format!("cannot start the client process {}: {e}", exe.display()))?;
        let stdout = child.stdout.take().expect("piped");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Holder { stdin: child.stdin.take(), child, lines: rx, share })
    }

    fn next_line(&self, deadline: Instant) -> Result<String, String> {
        let left = deadline.saturating_duration_since(Instant::now());
        self.lines.recv_timeout(left).map_err(|e| match e {
            mpsc::RecvTimeoutError::Timeout => format!("a client process did not report within {} s", HOLD_TIMEOUT.as_secs()),
            mpsc::RecvTimeoutError::Disconnected => "a client process exited without reporting".to_string(),
        })
    }

    fn ask(&mut self, line: &str) {
        if let Some(s) = self.stdin.as_mut() {
            let _ = writeln!(s, "{line}");
            let _ = s.flush();
        }
    }
}

impl Drop for Holder {
    /// Closing stdin lets the process go; it is killed if it lingers.
    fn drop(&mut self) {
        self.stdin.take();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The arguments of `serverbench check --hold`, the client process of the scale check.
pub fn hold_args(t: &Target, count: usize, timeout: Duration, seed: u64) -> Vec<String> {
    let mut args = vec![
        "check".to_string(),
        "--hold".into(),
        t.addr.to_string(),
        "--hold-count".into(),
        count.to_string(),
        "--hold-scenario".into(),
        t.scenario.name().into(),
        "--hold-timeout-ms".into(),
        timeout.as_millis().to_string(),
        "--hold-seed".into(),
        seed.to_string(),
    ];
    if t.micro {
        args.push("--hold-micro".into());
    }
    args
}

/// The client process: opens and serves `count` connections, prints `held N` (or `error: ...`), then
/// answers each `count` line on stdin with `open N` and exits when stdin closes.
pub fn hold_main(addr: SocketAddr, scenario: Scenario, micro: bool, count: usize, timeout: Duration, seed: u64) -> anyhow::Result<()> {
    sys::ensure_open_files(count as u64 + FD_RESERVE)?;
    let t = Target { addr, scenario, micro };
    let mut held = Vec::with_capacity(count);
    let stdout = std::io::stdout();
    match open_and_serve(&t, count, timeout, &mut held, seed) {
        Ok(()) => writeln!(stdout.lock(), "held {}", held.len())?,
        Err(e) => writeln!(stdout.lock(), "error: {e} ({} connections held)", held.len())?,
    }
    stdout.lock().flush()?;
    for line in std::io::stdin().lock().lines() {
        if line?.trim() == "count" {
            writeln!(stdout.lock(), "open {}", still_open(&held))?;
            stdout.lock().flush()?;
        }
    }
    Ok(())
}

/// Holds `s.connections` connections open at once (fewer when the server's open-files limit cannot
/// take them; the report says so), each served once, reading the server's memory at each step.
pub fn run(t: &Target, o: &Options, s: &ScaleOptions, server: Option<&dyn ServerProcess>) -> ScaleReport {
    let mut report = ScaleReport { verdict: Verdict::fail("not run"), rss: Vec::new(), asked: s.connections, held: 0, capped: None };
    let mut target = s.connections;
    if let Some((open, hard)) = server.and_then(|p| p.open_files()) {
        let room = hard.saturating_sub(open + SERVER_FD_SLACK) as usize;
        if room < target {
            report.capped = Some(format!(
                "the server may open {hard} files (hard limit, which this user cannot raise) and had {open} open, so {room} connections were tried"
            ));
            target = room;
        }
    }
    let timeout = o.answer_timeout * 2;
    let mut held: Vec<Conn> = Vec::new();
    let mut steps: Vec<usize> = s.steps.iter().copied().filter(|&n| n < target).collect();
    steps.sort_unstable();
    for step in steps {
        if let Err(e) = open_and_serve(t, step - held.len(), timeout, &mut held, o.seed ^ step as u64) {
            report.held = held.len();
            report.verdict = Verdict::fail(format!("on the way to {step} connections: {e}"));
            return report;
        }
        report.rss.push(RssPoint { connections: step, rss_bytes: settle_and_read(server) });
    }
    // The rest: here if this process has room, else spread over client processes.
    let rest = target - held.len();
    let room = own_room() as usize;
    let per_process = s.per_process.unwrap_or(room).max(1);
    let mut holders = Vec::new();
    let started = Instant::now();
    if rest <= room && s.per_process.is_none() {
        if let Err(e) = open_and_serve(t, rest, timeout, &mut held, o.seed) {
            report.held = held.len();
            report.verdict = Verdict::fail(format!("on the way to {target} connections: {e}"));
            return report;
        }
    } else {
        let Some(exe) = &s.client_exe else {
            report.verdict = Verdict::fail(format!(
                "{rest} more connections do not fit in this process's open-files limit and no client executable was given"
            ));
            return report;
        };
        let processes = rest.div_ceil(per_process);
        for k in 0..processes {
            let share = rest / processes + usize::from(k < rest % processes);
            match Holder::spawn(exe, t, share, timeout, o.seed.wrapping_add(k as u64 + 1)) {
                Ok(h) => holders.push(h),
                Err(e) => {
                    report.verdict = Verdict::fail(e);
                    return report;
                }
            }
        }
        let deadline = started + HOLD_TIMEOUT;
        let mut errors = Vec::new();
        for h in &holders {
            match h.next_line(deadline) {
                Ok(line) if line == format!("held {}", h.share) => {}
                Ok(line) => errors.push(line),
                Err(e) => errors.push(e),
            }
        }
        if !errors.is_empty() {
            report.verdict = Verdict::fail(format!("client processes: {}", errors.join("; ")));
            return report;
        }
    }
    let opened_s = started.elapsed().as_secs_f64();
    let top_rss = settle_and_read(server);
    // Were they all open at the same moment? Ask every holder, count here.
    let mut open_now = still_open(&held);
    let deadline = Instant::now() + Duration::from_secs(30);
    for h in holders.iter_mut() {
        h.ask("count");
    }
    for h in &holders {
        match h.next_line(deadline).ok().and_then(|l| l.strip_prefix("open ").and_then(|n| n.parse::<usize>().ok())) {
            Some(n) => open_now += n,
            None => {
                report.verdict = Verdict::fail("a client process did not say how many of its connections were still open");
                return report;
            }
        }
    }
    report.rss.push(RssPoint { connections: target, rss_bytes: top_rss });
    report.held = open_now;
    let processes = if holders.is_empty() { "this process".to_string() } else { format!("this process and {} client processes", holders.len()) };
    drop(holders);
    drop(held);
    let after = probe(t, o, Duration::from_secs(10));
    let capped = report.capped.as_ref().map(|c| format!(" ({} asked; {c})", s.connections)).unwrap_or_default();
    report.verdict = if open_now < target {
        Verdict::fail(format!(
            "all {target} connections were served once, but only {open_now} were still open when the last had been served ({opened_s:.1} s); the server closed the others{capped}"
        ))
    } else if let Err(e) = after {
        Verdict::fail(format!("{target} connections held at once, but after they were closed the server did not answer: {e}"))
    } else {
        Verdict::pass(format!("{target} connections open at once, each served once, held by {processes}{capped}"))
    };
    report
}
