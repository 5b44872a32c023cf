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

pub enum Started {
    Verified(Server, verify::Sample),
    /// Why it is not measured; the server, when it was started, still has to be stopped.
    Failed(Option<Server>, String, Option<Vec<u8>>),
}

/// Starts a contestant's server for a scenario on a free port, waits until it accepts, verifies it.
pub fn start_verified(c: &Contestant, scenario: &str, setup: &ServerSetup, log: PathBuf, ui: &Ui, stop: &AtomicBool) -> Started {
    let port = match server::free_port_on(setup.address) {
        Ok(p) => p,
        Err(e) => return Started::Failed(None, format!("no free port on {}: {e}", setup.address), None),
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
    ui.detail(&format!("{}: $ {} (port {port}, CPUs {})", c.name, launch.command, setup.cpus));
    let mut server = match Server::start_on(launch, std::net::SocketAddr::new(setup.address, port)) {
        Ok(s) => s,
        Err(e) => return Started::Failed(None, format!("could not start: {e:#}"), None),
    };
    if let Err(reason) = server.wait_ready(setup.start_timeout, stop) {
        return Started::Failed(Some(server), format!("failed to start: {reason}"), None);
    }
    match verify::verify(server.addr(), scenario, c.is_micro(), setup.timeout) {
        Ok(sample) => Started::Verified(server, sample),
        Err(f) => Started::Failed(Some(server), format!("answered wrongly, not measured: {}", f.reason), f.sample),
    }
}
