//! Scale: many keep-alive connections open at once, each served, and the server's resident memory at a
//! few connection counts. Connections are opened in batches, each served once, and a held connection idle
//! for a few seconds is served again, so that a server's idle keep-alive timeout does not thin them out
//! while the rest are opened. One process cannot hold more sockets than its open-files limit, so past
//! that the connections are spread over client processes (`serverbench check --hold`), each holding its
//! share until told to let go; at the top every connection is served once more, all at the same time.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write as _};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::model::checks::RssPoint;

use super::values::{random_bytes, Rng};
use crate::os::{limits, proc};
use crate::wire::Conn;
use super::wire::{check_json, check_plaintext, probe, read_hello};
use super::case::{Failed, Options, Target, Verdict};
use crate::wire::Scenario;

/// Descriptors a process keeps for itself besides the held connections.
const FD_RESERVE: u64 = 128;
/// Descriptors left to the server beyond what it had open before the check.
const SERVER_FD_SLACK: u64 = 24;
/// Longest the client processes may take to open and serve their share.
const HOLD_TIMEOUT: Duration = Duration::from_secs(180);
/// Connections opened (and first served) together.
const OPEN_BATCH: usize = 100;
/// Held connections served together: each gets its request, then each answer is read.
const SERVE_BATCH: usize = 500;
/// A held connection idle this long is served again: well below the 5 s idle keep-alive timeout common
/// in frameworks, with room for the time a round of serving takes.
const KEEP_ALIVE_AFTER: Duration = Duration::from_secs(3);

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

/// What an answer must be.
enum Expect {
    Hello,
    Plaintext,
    Json(u64),
    Echo(Vec<u8>),
}

/// The scenario's ordinary request, and what its answer must be.
fn exchange(scenario: Scenario, rng: &mut Rng) -> (Vec<u8>, Expect) {
    let Some(request) = scenario.request() else {
        let payload = random_bytes(rng, 64);
        return (payload.clone(), Expect::Echo(payload));
    };
    match scenario {
        Scenario::Json => {
            let n = rng.u64(..1 << 31);
            (request.render(n), Expect::Json(n))
        }
        Scenario::Plaintext => (request.render(0), Expect::Plaintext),
        _ => (request.render(0), Expect::Hello),
    }
}

fn check_answer(c: &mut Conn, micro: bool, expect: &Expect) -> Result<(), Failed> {
    match expect {
        Expect::Hello => read_hello(c, micro).map(|_| ()),
        Expect::Plaintext => check_plaintext(&c.read_response()?),
        Expect::Json(n) => check_json(&c.read_response()?, *n),
        Expect::Echo(payload) => {
            if c.read_exact(payload.len())? != *payload {
                return Err("the echoed bytes differ".into());
            }
            Ok(())
        }
    }
}

/// One ordinary exchange on an open connection.
pub fn serve_once(c: &mut Conn, scenario: Scenario, micro: bool, rng: &mut Rng) -> Result<(), Failed> {
    let (request, expect) = exchange(scenario, rng);
    c.send(&request)?;
    check_answer(c, micro, &expect)
}

/// Serves every connection of `batch` once: all requests first, then every answer, within `timeout` for
/// the whole batch. Returns the index and reason of each connection that failed.
fn serve_batch(batch: &mut [Conn], t: &Target, rng: &mut Rng, timeout: Duration) -> Vec<(usize, Failed)> {
    let mut failed = Vec::new();
    let mut waiting = Vec::with_capacity(batch.len());
    for (i, c) in batch.iter_mut().enumerate() {
        let (request, expect) = exchange(t.scenario, rng);
        match c.send(&request) {
            Ok(()) => waiting.push((i, expect)),
            Err(e) => failed.push((i, e.into())),
        }
    }
    let deadline = Instant::now() + timeout;
    for (i, expect) in waiting {
        let c = &mut batch[i];
        c.timeout = deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
        if let Err(e) = check_answer(c, t.micro, &expect) {
            failed.push((i, e));
        }
    }
    failed
}

/// Connections held open and kept served, the longest idle first.
pub struct Held {
    t: Target,
    /// Each connection with when it was last served, oldest first.
    conns: VecDeque<(Conn, Instant)>,
    rng: Rng,
    timeout: Duration,
    /// Held connections that the server closed or stopped answering (they are dropped).
    pub lost: usize,
    pub first_loss: Option<String>,
}

impl Held {
    pub fn new(t: &Target, timeout: Duration, seed: u64) -> Held {
        Held { t: *t, conns: VecDeque::new(), rng: Rng::with_seed(seed), timeout, lost: 0, first_loss: None }
    }

    pub fn len(&self) -> usize {
        self.conns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.conns.is_empty()
    }

    /// Opens `n` more connections in batches, each served once, keeping the older ones served meanwhile.
    /// A connection that cannot be opened or served is an error.
    pub fn add(&mut self, n: usize) -> Result<(), Failed> {
        let mut left = n;
        while left > 0 {
            let size = left.min(OPEN_BATCH);
            let mut fresh = Vec::with_capacity(size);
            for _ in 0..size {
                let k = self.conns.len() + fresh.len() + 1;
                fresh.push(Conn::open(self.t.addr, self.timeout).map_err(|e| Failed(format!("connection {k}: {e}")))?);
            }
            let t = self.t;
            if let Some((i, e)) = serve_batch(&mut fresh, &t, &mut self.rng, self.timeout).into_iter().next() {
                return Err(format!("connection {}: {e}", self.conns.len() + i + 1).into());
            }
            let now = Instant::now();
            self.conns.extend(fresh.into_iter().map(|c| (c, now)));
            left -= size;
            self.keep_alive();
        }
        Ok(())
    }

    /// Serves again every connection idle for `KEEP_ALIVE_AFTER`.
    pub fn keep_alive(&mut self) {
        let stale = self.conns.iter().take_while(|(_, served)| served.elapsed() >= KEEP_ALIVE_AFTER).count();
        self.serve_oldest(stale);
    }

    /// Serves every held connection once more.
    pub fn serve_all(&mut self) {
        self.serve_oldest(self.conns.len());
    }

    /// Serves the `n` longest idle connections, in batches; those that fail are dropped and counted as lost.
    fn serve_oldest(&mut self, n: usize) {
        let t = self.t;
        let mut left = n.min(self.conns.len());
        while left > 0 {
            let size = left.min(SERVE_BATCH);
            let mut batch: Vec<Conn> = self.conns.drain(..size).map(|(c, _)| c).collect();
            let mut failed = serve_batch(&mut batch, &t, &mut self.rng, self.timeout);
            failed.sort_unstable_by_key(|(i, _)| *i);
            self.lost += failed.len();
            if let Some((_, e)) = failed.first() {
                self.first_loss.get_or_insert_with(|| e.to_string());
            }
            let now = Instant::now();
            let mut dead = failed.iter().map(|(i, _)| *i).peekable();
            for (i, c) in batch.into_iter().enumerate() {
                if dead.peek() == Some(&i) {
                    dead.next();
                } else {
                    self.conns.push_back((c, now));
                }
            }
            left -= size;
        }
    }
}

/// Descriptors this process may still open, once its soft limit is raised as far as it goes.
fn own_room() -> u64 {
    let soft = limits::raise_open_files_to_hard();
    let open = proc::own_open_files().unwrap_or(0);
    soft.saturating_sub(open + FD_RESERVE)
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
}

impl Holder {
    fn spawn(exe: &PathBuf, t: &Target, share: usize, timeout: Duration, seed: u64) -> Result<Holder, Failed> {
        let mut cmd = Command::new(exe);
        cmd.args(hold_args(t, share, timeout, seed)).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit());
        let mut child = cmd.spawn().map_err(|e| Failed(format!("cannot start the client process {}: {e}", exe.display())))?;
        let stdout = child.stdout.take().expect("piped");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Holder { stdin: child.stdin.take(), child, lines: rx })
    }

    /// The next line the process prints, keeping this process's own connections served while waiting.
    fn next_line(&self, deadline: Instant, held: &mut Held) -> Result<String, Failed> {
        loop {
            match self.lines.recv_timeout(Duration::from_millis(200)) {
                Ok(line) => return Ok(line),
                Err(mpsc::RecvTimeoutError::Disconnected) => return Err("a client process exited without reporting".into()),
                Err(mpsc::RecvTimeoutError::Timeout) if Instant::now() >= deadline => {
                    return Err(format!("a client process did not report within {} s", HOLD_TIMEOUT.as_secs()).into())
                }
                Err(mpsc::RecvTimeoutError::Timeout) => held.keep_alive(),
            }
        }
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

/// The client process: opens and serves `count` connections, prints `held N lost M[ first: reason]` (or
/// `error: ...`), keeps them served, answers each `count` line on stdin by serving all once more and
/// printing `open N lost M[ first: reason]`, and exits when stdin closes.
pub fn hold_main(addr: SocketAddr, scenario: Scenario, micro: bool, count: usize, timeout: Duration, seed: u64) -> anyhow::Result<()> {
    limits::ensure_open_files(count as u64 + FD_RESERVE)?;
    let t = Target { addr, scenario, micro, pid: None };
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut held = Held::new(&t, timeout, seed);
    let mut out = std::io::stdout().lock();
    match held.add(count) {
        Ok(()) => writeln!(out, "{}", counts_line("held", &held))?,
        Err(e) => writeln!(out, "error: {e} ({} connections held)", held.len())?,
    }
    out.flush()?;
    loop {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(Ok(line)) if line.trim() == "count" => {
                held.serve_all();
                writeln!(out, "{}", counts_line("open", &held))?;
                out.flush()?;
            }
            Ok(Ok(_)) => {}
            Ok(Err(_)) | Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(()),
            Err(mpsc::RecvTimeoutError::Timeout) => held.keep_alive(),
        }
    }
}

/// `WORD N lost M[ first: reason]`: what a client process holds and has lost.
fn counts_line(word: &str, held: &Held) -> String {
    let first = held.first_loss.as_ref().map(|e| format!(" first: {e}")).unwrap_or_default();
    format!("{word} {} lost {}{first}", held.len(), held.lost)
}

/// Parses a `counts_line` that starts with `word`.
fn parse_counts(line: &str, word: &str) -> Option<(usize, usize, Option<String>)> {
    let (counts, first) = match line.split_once(" first: ") {
        Some((c, f)) => (c, Some(f.to_string())),
        None => (line, None),
    };
    let f: Vec<&str> = counts.split_whitespace().collect();
    match f.as_slice() {
        [w, n, "lost", m] if *w == word => Some((n.parse().ok()?, m.parse().ok()?, first)),
        _ => None,
    }
}

/// Holds `s.connections` connections open at once (fewer when the server's open-files limit cannot
/// take them; the report says so), each served when opened, kept served, and served again together at
/// the top; reads the server's memory at each step.
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
    let mut held = Held::new(t, timeout, o.seed);
    let mut steps: Vec<usize> = s.steps.iter().copied().filter(|&n| n < target).collect();
    steps.sort_unstable();
    for step in steps {
        if let Err(e) = held.add(step - held.len()) {
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
        if let Err(e) = held.add(rest) {
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
                    report.verdict = Verdict::fail(e.0);
                    return report;
                }
            }
        }
        let deadline = started + HOLD_TIMEOUT;
        let mut errors = Vec::new();
        for h in &holders {
            match h.next_line(deadline, &mut held) {
                Ok(line) if parse_counts(&line, "held").is_some() => {}
                Ok(line) => errors.push(line),
                Err(e) => errors.push(e.0),
            }
        }
        if !errors.is_empty() {
            report.verdict = Verdict::fail(format!("client processes: {}", errors.join("; ")));
            return report;
        }
    }
    let opened_s = started.elapsed().as_secs_f64();
    let top_rss = settle_and_read(server);
    // The top: every connection, in every process, served once more at the same time.
    for h in holders.iter_mut() {
        h.ask("count");
    }
    held.serve_all();
    let (mut open_now, mut lost, mut first_loss) = (held.len(), held.lost, held.first_loss.clone());
    let deadline = Instant::now() + HOLD_TIMEOUT;
    for h in &holders {
        match h.next_line(deadline, &mut held).ok().and_then(|l| parse_counts(&l, "open")) {
            Some((n, m, first)) => {
                open_now += n;
                lost += m;
                first_loss = first_loss.or(first);
            }
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
    report.verdict = if lost > 0 || open_now < target {
        Verdict::fail(format!(
            "the server closed (or stopped answering) {lost} of the {target} held connections ({opened_s:.1} s to open them all; each was served again after {} s idle); {open_now} answered at the top; the first: {}{capped}",
            KEEP_ALIVE_AFTER.as_secs(),
            first_loss.unwrap_or_else(|| "-".into())
        ))
    } else if let Err(e) = after {
        Verdict::fail(format!("{target} connections held at once, but after they were closed the server did not answer: {e}"))
    } else {
        Verdict::pass(format!(
            "{target} connections open at once, each served when opened, again after every {} s idle, and all together at the top; held by {processes}{capped}",
            KEEP_ALIVE_AFTER.as_secs()
        ))
    };
    report
}

#[cfg(test)]
mod tests {
    use super::parse_counts;

    #[test]
    fn client_process_lines() {
        assert_eq!(parse_counts("held 10000 lost 0", "held"), Some((10000, 0, None)));
        assert_eq!(parse_counts("open 9 lost 1 first: no answer within 10s", "open"), Some((9, 1, Some("no answer within 10s".into()))));
        assert_eq!(parse_counts("open 9 lost 1", "held"), None);
        assert_eq!(parse_counts("error: connection 5: refused (4 connections held)", "held"), None);
    }
}
