//! The server host (`bench --server-host`): made ready like a client host (its facts, a copy of this
//! program, its clock), then one agent (`serverbench agent`) started there over ssh for the whole run,
//! which builds, starts, pins, probes and stops the servers on request. The checkout is not copied: it
//! must be there already (`--server-checkout`). Dropping the host closes the channel: the agent ends every
//! server it started and exits, and the copy's folder is removed.

use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;

use super::agent_link::AgentLink;
use super::agent_protocol::{BuildOutcomeThere, Reply, Request};
use super::host::{ssh, HostSpec};
use super::remote_server::RemoteServer;
use super::setup::{prepare_one, remove_folder, ReadyHost};
use crate::launch::ServerSetup;
use crate::model::HostRecord;

/// A server's verification on the server host.
pub type Answer = Result<crate::launch::verify::Sample, crate::launch::verify::Failure>;

pub struct ServerHost {
    host: ReadyHost,
    link: Arc<AgentLink>,
    ssh_options: Vec<String>,
}

/// How a contestant came out of its build there: the outcome, its version, its build log.
pub struct BuiltThere {
    pub outcome: BuildOutcomeThere,
    pub version: Option<String>,
    pub log: Option<String>,
}

impl ServerHost {
    /// Makes the host ready and starts its agent on the catalog at `catalog` (a path there); every failure
    /// names the host, and nothing is left there when one stops it.
    pub fn prepare(spec: &HostSpec, ssh_options: &[String], address: IpAddr, tolerance: Duration, catalog: &Path, rebuild: bool, say: &dyn Fn(&str)) -> anyhow::Result<ServerHost> {
        let name = format!("server host {spec}");
        say(&format!("{name}: copying serverbench and reading its clock"));
        // No time of the server host's clock is used: its offset is recorded and checked once.
        let mut host = prepare_one(spec, ssh_options, address, tolerance, "agent ...", false).with_context(|| name.clone())?;
        let work = host.binary.rsplit_once('/').map_or("/tmp", |(dir, _)| dir).to_string();
        let line = format!(
            "exec {} agent --catalog {} --work {}{}",
            quoted(&host.binary),
            quoted(&catalog.to_string_lossy()),
            quoted(&work),
            if rebuild { " --rebuild" } else { "" }
        );
        let command = ssh(spec, ssh_options, &line);
        host.record.ssh_command = super::host::shown(&command);
        let link = match AgentLink::open(name.clone(), command) {
            Ok(l) => l,
            Err(e) => {
                remove_folder(spec, ssh_options, &host.binary);
                return Err(e);
            }
        };
        say(&format!(
            "{name}: {} cores, {}, clock {:+.2} ms (± {:.2} ms); its agent reads the catalog at {}",
            host.record.cores,
            host.record.cpu_model,
            host.record.clock_offset_ms,
            host.record.clock_rtt_ms / 2.0,
            catalog.display()
        ));
        Ok(ServerHost { host, link: Arc::new(link), ssh_options: ssh_options.to_vec() })
    }

    pub fn record(&self) -> HostRecord {
        self.host.record.clone()
    }

    /// `server host [USER@]HOST`, as errors name it.
    pub fn name(&self) -> String {
        format!("server host {}", self.host.spec)
    }

    /// A contestant's dependencies and build there.
    pub fn build(&self, contestant: &str, install: bool, workers: usize) -> anyhow::Result<BuiltThere> {
        match self.link.call(&Request::Prepare { contestant: contestant.to_string(), install, workers })? {
            Reply::Prepared { outcome, version, log } => Ok(BuiltThere { outcome, version, log }),
            other => anyhow::bail!("{}: the agent answered a build with {other:?}", self.name()),
        }
    }

    /// Starts a contestant's server there, waits until it accepts and has the agent verify its answer
    /// there. The outer error is the host's (the channel, the agent); the inner one the server's (why it
    /// did not start, and its log).
    pub fn start(&self, contestant: &str, scenario: &str, setup: &ServerSetup) -> anyhow::Result<Result<(RemoteServer, Answer), (String, String)>> {
        let request = Request::Start {
            contestant: contestant.to_string(),
            scenario: scenario.to_string(),
            address: setup.address,
            cpus: setup.cpus.cpus().to_vec(),
            workers: setup.workers,
            start_timeout: setup.start_timeout,
            verify_timeout: setup.timeout,
        };
        Ok(match self.link.call(&request)? {
            Reply::Started { server, port, answer } => Ok((RemoteServer::new(self.link.clone(), server, std::net::SocketAddr::new(setup.address, port)), answer)),
            Reply::StartFailed { reason, log } => Err((format!("{reason} (on {})", self.name()), log)),
            other => anyhow::bail!("{}: the agent answered a start with {other:?}", self.name()),
        })
    }

    /// The speed of its CPUs `cpus`, probed there.
    pub fn probe(&self, cpus: &[usize], each: Duration) -> anyhow::Result<Vec<crate::os::speed::CpuSpeed>> {
        match self.link.call(&Request::Probe { cpus: cpus.to_vec(), each })? {
            Reply::Speeds { speeds } => Ok(speeds),
            other => anyhow::bail!("{}: the agent answered a speed probe with {other:?}", self.name()),
        }
    }

    /// Waits there until its CPUs `cpus` are quiet, at most `limit`; the ms waited.
    pub fn wait_quiet(&self, cpus: &[usize], limit: Duration) -> anyhow::Result<Option<f64>> {
        match self.link.call(&Request::WaitQuiet { cpus: cpus.to_vec(), limit })? {
            Reply::Waited { ms } => Ok(ms),
            other => anyhow::bail!("{}: the agent answered a wait for quiet CPUs with {other:?}", self.name()),
        }
    }
}

impl Drop for ServerHost {
    fn drop(&mut self) {
        self.link.close();
        remove_folder(&self.host.spec, &self.ssh_options, &self.host.binary);
    }
}

/// `text` as one word of a POSIX shell.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn words_are_quoted_for_the_remote_shell() {
        assert_eq!(super::quoted("/srv/bench mark/it's"), r"'/srv/bench mark/it'\''s'");
    }
}
