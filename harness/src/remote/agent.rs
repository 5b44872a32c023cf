//! The server host's side (`serverbench agent`): it reads the catalog of the checkout there, then does what
//! the harness asks, one request a line (`agent_protocol`), with the same code a local run uses (`launch`:
//! builds, starts pinned to CPUs, readiness, verification, the /proc probe of a round, the wait for quiet
//! server CPUs and their speed probe around it, stops). When its stdin closes (ssh
//! closes it when the channel ends: the run is over, the harness was killed, the connection died) it kills
//! every server it started and exits, so nothing is left on the host.

use std::collections::HashMap;
use std::io::{BufRead, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};

use super::agent_protocol::{BuildOutcomeThere, Reply, Request, ServerId, LOG_COPY_BYTES};
use crate::catalog::build::Builder;
use crate::catalog::requires::System;
use crate::catalog::{Catalog, Contestant};
use crate::launch::round_watch::RoundWatch;
use crate::launch::server::{Server, STOP_GRACE};
use crate::launch::verify::verify;
use crate::launch::{make_ready, start_ready, version, Prepared, ServerSetup};
use crate::os::cpus::{pin_process, CpuSet, PinnedProcess};
use crate::ui::{Ui, Verbosity};

struct Agent {
    catalog: Catalog,
    builder: Builder,
    logs: PathBuf,
    servers: HashMap<ServerId, Server>,
    next: ServerId,
    /// The round being watched, and whose.
    round: Option<(ServerId, RoundWatch)>,
    /// Set when the channel closes: a build or a start under way gives up.
    stop: Arc<AtomicBool>,
    ui: Ui,
    /// Once a server was started: the agent's own threads (its probe among them) kept off the server CPUs,
    /// as the harness's are on a single machine.
    pinned: Option<PinnedProcess>,
}

/// Serves requests until stdin closes. `work` is the agent's own folder (logs, build stamps).
pub fn serve(catalog_dir: &Path, work: &Path, rebuild: bool) -> anyhow::Result<()> {
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel::<String>();
    let closed = stop.clone();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
        closed.store(true, Ordering::SeqCst);
    });
    let catalog = match Catalog::discover(catalog_dir) {
        Ok(c) => c,
        Err(e) => {
            say(&Reply::Failed { error: format!("cannot read the catalog at {}: {e:#} (is the checkout there? see --server-checkout)", catalog_dir.display()) });
            return Ok(());
        }
    };
    say(&Reply::Ready { contestants: catalog.contestants.len() });
    let logs = work.join("logs");
    let builder = Builder::new(work.join("build-stamps"), logs.clone(), rebuild);
    let mut agent = Agent { catalog, builder, logs, servers: HashMap::new(), next: 1, round: None, stop, ui: Ui::new(Verbosity::Quiet), pinned: None };
    // A closed channel ends the loop: the sender is dropped with the reader thread.
    while let Ok(line) = rx.recv() {
        let reply = match serde_json::from_str::<Request>(&line) {
            Ok(request) => agent.handle(request),
            Err(e) => Reply::Failed { error: format!("cannot read the request {line:?}: {e}") },
        };
        say(&reply);
    }
    // Dropping a server that was not stopped kills its whole tree (SIGKILL to its group and every process
    // seen in it), frozen or not.
    agent.round = None;
    agent.servers.clear();
    Ok(())
}

fn say(reply: &Reply) {
    let mut out = std::io::stdout().lock();
    // A closed stdout means the channel is gone; the closed stdin ends the loop.
    let _ = out.write_all(reply.to_line().as_bytes()).and_then(|()| out.flush());
}

impl Agent {
    fn handle(&mut self, request: Request) -> Reply {
        match self.try_handle(request) {
            Ok(r) => r,
            Err(e) => Reply::Failed { error: format!("{e:#}") },
        }
    }

    fn contestant(&self, name: &str) -> anyhow::Result<&Contestant> {
        self.catalog
            .contestants
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| anyhow::anyhow!("the catalog here has no contestant {name}: the checkout there differs from this one"))
    }

    fn server(&mut self, id: ServerId) -> anyhow::Result<&mut Server> {
        self.servers.get_mut(&id).ok_or_else(|| anyhow::anyhow!("no server {id} runs here"))
    }

    fn try_handle(&mut self, request: Request) -> anyhow::Result<Reply> {
        Ok(match request {
            Request::Prepare { contestant, install, workers } => self.prepare(&contestant, install, workers)?,
            Request::Start { contestant, scenario, address, cpus, workers, start_timeout, verify_timeout } => {
                let cpus = CpuSet::new(cpus);
                let allowed = CpuSet::allowed();
                anyhow::ensure!(cpus.is_subset_of(&allowed), "the server CPUs {cpus} are not all CPUs the agent may use here ({allowed})");
                let rest: Vec<usize> = allowed.cpus().iter().filter(|c| !cpus.cpus().contains(c)).copied().collect();
                if self.pinned.is_none() && !rest.is_empty() {
                    self.pinned = Some(pin_process(&CpuSet::new(rest)));
                }
                let setup = ServerSetup { address, cpus: &cpus, workers, start_timeout, timeout: start_timeout };
                let (id, log) = (self.next, self.logs.join(format!("server-{}.log", self.next)));
                self.next += 1;
                std::fs::create_dir_all(&self.logs)?;
                let c = self.contestant(&contestant)?;
                let micro = c.is_micro();
                match start_ready(c, &scenario, &setup, log.clone(), &self.ui, &self.stop) {
                    Ok(server) => {
                        let (port, answer) = (server.port, verify(server.addr(), &scenario, micro, verify_timeout));
                        self.servers.insert(id, server);
                        Reply::Started { server: id, port, answer }
                    }
                    Err((server, reason)) => {
                        if let Some(s) = server {
                            s.stop(STOP_GRACE);
                        }
                        Reply::StartFailed { reason, log: log_tail(&log) }
                    }
                }
            }
            Request::Freeze { server } => {
                self.server(server)?.freeze();
                Reply::Done
            }
            Request::Thaw { server } => {
                self.server(server)?.thaw();
                Reply::Done
            }
            Request::Exited { server } => Reply::Exited { status: self.server(server)?.exited().map(|s| s.to_string()) },
            Request::Explain { server, what } => Reply::Explained { text: self.server(server)?.explain(&what) },
            Request::RoundBegin { server, syscall_cpus } => {
                let pid = self.server(server)?.pid();
                self.round = Some((server, RoundWatch::begin(pid, syscall_cpus)));
                Reply::Done
            }
            Request::Mark { open } => {
                let (_, watch) = self.round.as_ref().ok_or_else(|| anyhow::anyhow!("no round is being watched"))?;
                let marks = watch.marks();
                if open { marks.open() } else { marks.close() }
                Reply::Done
            }
            Request::RoundEnd => {
                let (id, watch) = self.round.take().ok_or_else(|| anyhow::anyhow!("no round is being watched"))?;
                let side = watch.finish();
                self.server(id)?.remember(&side.usage.members);
                Reply::Round { side: Box::new(side) }
            }
            Request::Probe { cpus, each } => Reply::Speeds { speeds: crate::os::speed::probe(&cpus, each) },
            Request::WaitQuiet { cpus, limit } => Reply::Waited { ms: crate::os::cpustat::wait_quiet(&cpus, limit) },
            Request::Stop { server, grace } => {
                let s = self.servers.remove(&server).ok_or_else(|| anyhow::anyhow!("no server {server} runs here"))?;
                let log = s.log.clone();
                let report = s.stop(grace);
                Reply::Stopped { report, log: log_tail(&log) }
            }
        })
    }

    fn prepare(&mut self, name: &str, install: bool, workers: usize) -> anyhow::Result<Reply> {
        let c = self.contestant(name)?.clone();
        let prepared = make_ready(&c, &self.catalog, &mut self.builder, System::detect(), install, &self.logs, &self.ui, &self.stop)?;
        let (outcome, log) = match prepared {
            Prepared::Ready(o) => (BuildOutcomeThere::Ready { result: o.result.clone(), seconds: o.seconds }, Some(o.log)),
            Prepared::Skipped(reason) => (BuildOutcomeThere::Skipped { reason }, None),
            Prepared::Failed(reason, o) => (BuildOutcomeThere::Failed { reason, seconds: o.seconds }, Some(o.log)),
            Prepared::Interrupted => (BuildOutcomeThere::Interrupted, None),
        };
        let version = matches!(outcome, BuildOutcomeThere::Ready { .. }).then(|| version(&c, workers)).flatten();
        Ok(Reply::Prepared { outcome, version, log: log.map(|l| log_tail(&l)) })
    }
}

/// The end of a log, at most `LOG_COPY_BYTES`, with a line saying what was left out.
fn log_tail(path: &Path) -> String {
    let Ok(mut f) = std::fs::File::open(path) else { return String::new() };
    let size = f.metadata().map_or(0, |m| m.len());
    let skipped = size.saturating_sub(LOG_COPY_BYTES);
    let mut bytes = Vec::new();
    if f.seek(SeekFrom::Start(skipped)).is_err() || f.read_to_end(&mut bytes).is_err() {
        return String::new();
    }
    let text = String::from_utf8_lossy(&bytes).into_owned();
    if skipped == 0 {
        text
    } else {
        format!("[serverbench: the first {skipped} bytes of this log were left on the server host]\n{text}")
    }
}
