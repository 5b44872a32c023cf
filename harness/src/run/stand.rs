//! What a benchmark does to the world around it, chosen once for a run: how a contestant is made ready
//! (its dependencies and build), how its server is started and verified, and what a round reads (the load
//! source and the probes of the CPUs). The runner's is `Real`: here, or on the server host and the client
//! hosts of `--server-host` and `--client-host`. Tests run a whole benchmark on a stand of fakes
//! (`run/fakes.rs`), with nothing built or started, as hyperfine runs its benchmarks on a mock executor.

use std::path::{Path, PathBuf};

use crate::catalog::build::{BuildOutcome, Builder};
use crate::catalog::requires::System;
use crate::catalog::{Catalog, Contestant};
use crate::launch::{make_ready, version, Prepared, ServerSetup, Started};
use crate::remote::agent_protocol::BuildOutcomeThere;
use crate::remote::ServerHost;
use crate::ui::event::BuildEvent;

use super::probed::Prober;
use super::runner::Context;
use super::served::{LiveServer, Served};

/// What a benchmark's phases do outside the harness.
pub(super) trait Stand {
    /// The servers it starts.
    type Server: LiveServer;

    /// A contestant made ready to start, with the version it reports when it is.
    fn make_ready(&self, ctx: &Context, catalog: &Catalog, builder: &mut Builder, c: &Contestant) -> anyhow::Result<(Prepared, Option<String>)>;

    /// A contestant's server for `scenario`, started and verified; its log goes to `log`.
    fn start(&self, ctx: &Context, c: &Contestant, scenario: &str, setup: &ServerSetup, log: PathBuf) -> Started<Self::Server>;

    /// What the rounds read: the probes of the CPUs and the load source.
    fn prober<'p, 'a>(&self, ctx: &'p Context<'a>) -> Prober<'p, 'a>;

    /// Whether the harness's own threads are kept off the servers' CPUs while it measures.
    fn pins_the_harness(&self) -> bool;

    /// The seed of the servers' order in each pass, where the stand fixes it; otherwise the run draws one
    /// from the clock (`BenchOptions::record`).
    fn fixed_seed(&self) -> Option<u64>;
}

/// The runner's stand: contestants built and servers started here, or by the agent on the server host;
/// the load from here, from the client hosts or from an external tool.
pub(super) struct Real;

impl Stand for Real {
    type Server = Served;

    fn make_ready(&self, ctx: &Context, catalog: &Catalog, builder: &mut Builder, c: &Contestant) -> anyhow::Result<(Prepared, Option<String>)> {
        let logs = ctx.run_dir.join("logs");
        if let Some(host) = ctx.hosts.server {
            return prepare_there(ctx, host, c, &logs);
        }
        let prepared = make_ready(c, catalog, builder, System::detect(), ctx.opts.install, &logs, ctx.ui, ctx.stop)?;
        let version = matches!(prepared, Prepared::Ready(_)).then(|| version(c, ctx.opts.workers)).flatten();
        Ok((prepared, version))
    }

    fn start(&self, ctx: &Context, c: &Contestant, scenario: &str, setup: &ServerSetup, log: PathBuf) -> Started<Served> {
        Served::start(ctx.hosts.server, c, scenario, setup, log, ctx.ui, ctx.stop)
    }

    fn prober<'p, 'a>(&self, ctx: &'p Context<'a>) -> Prober<'p, 'a> {
        Prober::new(ctx)
    }

    fn pins_the_harness(&self) -> bool {
        true
    }

    fn fixed_seed(&self) -> Option<u64> {
        None
    }
}

/// A contestant made ready by the agent on the server host, and the version it reports there. A host
/// that is lost is an error, naming it.
fn prepare_there(ctx: &Context, host: &ServerHost, c: &Contestant, logs: &Path) -> anyhow::Result<(Prepared, Option<String>)> {
    ctx.ui.emit(BuildEvent::BuildingThere { contestant: &c.name, host: &host.name() });
    let built = host.build(&c.name, ctx.opts.install, ctx.opts.workers)?;
    let log = logs.join(format!("{}.build.log", c.name));
    if let Some(text) = &built.log {
        std::fs::create_dir_all(logs)?;
        std::fs::write(&log, text)?;
    }
    let there = |reason: String| format!("{reason} (on {})", host.name());
    let outcome = |result, seconds| BuildOutcome { result, log: log.clone(), seconds };
    let prepared = match built.outcome {
        BuildOutcomeThere::Ready { result, seconds } => Prepared::Ready(outcome(result, seconds)),
        BuildOutcomeThere::Skipped { reason } => Prepared::Skipped(there(reason)),
        BuildOutcomeThere::Failed { reason, seconds } => {
            Prepared::Failed(there(reason.clone()), outcome(crate::catalog::build::BuildResult::Failed(reason), seconds))
        }
        BuildOutcomeThere::Interrupted => Prepared::Interrupted,
    };
    match &prepared {
        Prepared::Skipped(reason) | Prepared::Failed(reason, _) => ctx.ui.emit(BuildEvent::NotReadyThere { contestant: &c.name, reason }),
        _ => {}
    }
    Ok((prepared, built.version))
}
