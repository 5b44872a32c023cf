//! Where a round's load comes from, chosen once per run from the options (`chosen`): the built-in engine
//! here, the engine on client hosts, or an external tool (wrk, h2load, hey, ab). A round sees only
//! `LoadSource`, so that a test can drive one from a source of its own, with no load generator running.

use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::load::{self, LoadReport, WindowWatch};
use crate::model::{HostLoad, LatencyPoints};
use crate::remote::ClientHosts;

use super::client_syscalls::ClientCount;
use super::options::Tool;
use super::round_plan::{load_config, RoundPlan};
use super::tools::{self, ToolRun};

/// What drove a round's load: the client's report, the latency an external tool printed, and the client
/// hosts' own shares where they drove it.
pub struct Driven {
    pub report: LoadReport,
    pub tool_latency_ns: Option<LatencyPoints>,
    pub hosts: Vec<HostLoad>,
}

/// A source of load for rounds.
pub trait LoadSource {
    /// Whether the load runs on this machine: only then are the client's CPUs read and its calls
    /// counted here.
    fn here(&self) -> bool;

    /// The round's load against `target`. `watch` learns the edges of the measured window; `client_count`
    /// counts the client's calls around an external tool's run (the engine marks its own window).
    fn drive(&self, target: SocketAddr, plan: &RoundPlan, watch: WindowWatch, client_count: Option<&ClientCount>, stop: &Arc<AtomicBool>) -> anyhow::Result<Driven>;
}

/// The built-in engine, on this machine.
pub struct Engine;

/// The built-in engine on client hosts (`--client-host`), their reports merged.
pub struct OnClientHosts<'a>(pub &'a ClientHosts);

/// An external tool (`--tool`), run here.
pub struct ExternalTool(pub Tool);

/// The run's source: `--tool`'s, on `--client-host`s where the built-in engine runs there (the command
/// line refuses a tool with client hosts).
pub fn chosen(tool: Tool, hosts: Option<&ClientHosts>) -> Box<dyn LoadSource + '_> {
    match (tool, hosts) {
        (Tool::Builtin, Some(hosts)) => Box::new(OnClientHosts(hosts)),
        (Tool::Builtin, None) => Box::new(Engine),
        (tool, _) => Box::new(ExternalTool(tool)),
    }
}

impl LoadSource for Engine {
    fn here(&self) -> bool {
        true
    }

    fn drive(&self, target: SocketAddr, plan: &RoundPlan, watch: WindowWatch, _: Option<&ClientCount>, stop: &Arc<AtomicBool>) -> anyhow::Result<Driven> {
        let cfg = load_config(plan, target)?;
        Ok(Driven { report: load::run_watched(&cfg, stop.clone(), Some(watch))?, tool_latency_ns: None, hosts: Vec::new() })
    }
}

impl LoadSource for OnClientHosts<'_> {
    fn here(&self) -> bool {
        false
    }

    fn drive(&self, target: SocketAddr, plan: &RoundPlan, watch: WindowWatch, _: Option<&ClientCount>, stop: &Arc<AtomicBool>) -> anyhow::Result<Driven> {
        let cfg = load_config(plan, target)?;
        let merged = self.0.run(&cfg, plan.scenario, plan.micro, stop, Some(watch))?;
        Ok(Driven { report: merged.report, tool_latency_ns: None, hosts: merged.hosts })
    }
}

impl LoadSource for ExternalTool {
    fn here(&self) -> bool {
        true
    }

    fn drive(&self, target: SocketAddr, plan: &RoundPlan, _: WindowWatch, client_count: Option<&ClientCount>, stop: &Arc<AtomicBool>) -> anyhow::Result<Driven> {
        let o = plan.opts;
        let label = format!("{}.{}.c{}", plan.contestant, plan.scenario, plan.connections);
        client_count.iter().for_each(|c| c.mark(load::Edge::Open));
        let run = ToolRun {
            tool: self.0,
            target,
            scenario: plan.scenario,
            connections: plan.connections,
            threads: o.client_threads,
            pipeline: o.pipeline,
            stop: o.stop,
            timeout: o.timeout,
            cpus: &o.client_cpus,
            workdir: plan.workdir,
            label: &label,
            repo_root: &o.repo_root,
            connection_per_request: o.connection_per_request,
        };
        let ran = tools::run(&run, stop);
        client_count.iter().for_each(|c| c.mark(load::Edge::Close));
        let (report, tool_latency_ns) = ran?;
        Ok(Driven { report, tool_latency_ns, hosts: Vec::new() })
    }
}
