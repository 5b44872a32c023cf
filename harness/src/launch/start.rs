//! Bringing one server up for a scenario: a free port, the manifest's run command started pinned to the
//! server CPUs, readiness, and verification of its answer before anyone relies on it.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::catalog::template::{expand, Vars};
use crate::catalog::Contestant;
use crate::ui::Ui;

use super::server::{self, Launch, Server};
use super::verify;
use crate::os::cpus;

/// Where and how a server runs.
pub struct ServerSetup<'a> {
    /// The address it listens on (`{host}`): `HOST` unless client hosts must reach it.
    pub address: std::net::IpAddr,
    pub cpus: &'a cpus::CpuSet,
    pub workers: usize,
    pub start_timeout: Duration,
    /// Read and write limit of the verification.
    pub timeout: Duration,
}

/// A server started and verified, or why not; `S` is the server here, or one on a server host.
pub enum Started<S = Server> {
    Verified(S, verify::Sample),
    /// Why it is not measured; the server, when it was started, still has to be stopped.
    Failed(Option<S>, String, Option<Vec<u8>>),
}

/// Starts a contestant's server for a scenario on a free port, waits until it accepts, verifies it.
pub fn start_verified(c: &Contestant, scenario: &str, setup: &ServerSetup, log: PathBuf, ui: &Ui, stop: &AtomicBool) -> Started {
    match start_ready(c, scenario, setup, log, ui, stop) {
        Ok(server) => {
            let answer = verify::verify(server.addr(), scenario, c.is_micro(), setup.timeout);
            judged(server, answer)
        }
        Err((server, reason)) => Started::Failed(server, reason, None),
    }
}

/// A started server with the outcome of its verification (made here, or on the server host).
pub fn judged<S>(server: S, answer: Result<verify::Sample, verify::Failure>) -> Started<S> {
    match answer {
        Ok(sample) => Started::Verified(server, sample),
        Err(f) => Started::Failed(Some(server), format!("answered wrongly, not measured: {}", f.reason), f.sample),
    }
}

/// Starts a contestant's server for a scenario on a free port of `setup.address` and waits until it
/// accepts; or why not, with the server when it was started (it still has to be stopped).
// The error carries the server back so that it is stopped; it is made once per start, so its size costs nothing.
#[allow(clippy::result_large_err)]
pub fn start_ready(c: &Contestant, scenario: &str, setup: &ServerSetup, log: PathBuf, ui: &Ui, stop: &AtomicBool) -> Result<Server, (Option<Server>, String)> {
    let port = match server::free_port_on(setup.address) {
        Ok(p) => p,
        Err(e) => return Err((None, format!("no free port on {}: {e}", setup.address))),
    };
    let host = setup.address.to_string();
    let vars = Vars { dir: &c.dir, scenario, host: &host, port, workers: setup.workers };
    let launch = Launch {
        command: expand(&c.run, &vars, true),
        env: c.env.iter().map(|(k, v)| (k.clone(), expand(v, &vars, false))).collect(),
        cwd: &c.dir,
        cpus: setup.cpus,
        log,
    };
    ui.emit(crate::ui::event::ServerEvent::Command { contestant: &c.name, command: &launch.command, port, cpus: setup.cpus });
    let mut server = match Server::start_on(launch, std::net::SocketAddr::new(setup.address, port)) {
        Ok(s) => s,
        Err(e) => return Err((None, format!("could not start: {e:#}"))),
    };
    match server.wait_ready(setup.start_timeout, stop) {
        Ok(()) => Ok(server),
        Err(reason) => Err((Some(server), format!("failed to start: {reason}"))),
    }
}
