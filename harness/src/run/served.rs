//! The server a round measures, on this machine or on the server host (`--server-host`): one face for the
//! runner, so that a round reads the server's figures from the local probe or from the agent there, the
//! same figures read by the same code (`launch::round_watch`) either way.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use crate::catalog::Contestant;
use crate::launch::round_watch::{RoundWatch, ServerSide};
use crate::launch::server::{Server, StopReport};
use crate::launch::{judged, start_verified, ServerSetup, Started};
use crate::load::{Edge, WindowWatch};
use crate::remote::{RemoteRound, RemoteServer, ServerHost};
use crate::ui::event::ServerEvent;
use crate::ui::Ui;

/// A server that was started for a scenario.
pub enum Served {
    Here(Server),
    /// On the server host; its log is copied to `log` when it stops.
    There { server: RemoteServer, log: PathBuf },
}

/// Why a round does not count the server's system calls; the round records it in their place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NotCounted(pub String);

/// What a round needs of the server it measures.
pub trait RoundServer {
    /// What reads the server over a round; the load marks its window's edges through it.
    type Probe: RoundMarks;

    fn addr(&self) -> SocketAddr;
    /// Whether it runs on this machine, so that its CPUs are this machine's.
    fn is_here(&self) -> bool;
    /// Starts reading its figures for a round; its system calls counted on `syscall_cpus`, or why not.
    fn watch_round(&mut self, syscall_cpus: Result<Vec<usize>, NotCounted>) -> anyhow::Result<Self::Probe>;
    fn end_round(&mut self, probe: Self::Probe) -> anyhow::Result<ServerSide>;
}

/// Where the load marks the edges of its measured window.
pub trait RoundMarks {
    fn marks(&self) -> WindowWatch;
}

/// A round's reading of the server, here or there.
pub enum RoundProbe {
    Here(RoundWatch),
    There(RemoteRound),
}

impl RoundMarks for RoundProbe {
    fn marks(&self) -> WindowWatch {
        match self {
            RoundProbe::Here(w) => {
                let marks = w.marks();
                Arc::new(move |edge| match edge {
                    Edge::Open => marks.open(),
                    Edge::Close => marks.close(),
                })
            }
            RoundProbe::There(r) => r.marks(),
        }
    }
}

impl RoundServer for Server {
    type Probe = RoundProbe;

    fn addr(&self) -> SocketAddr {
        Server::addr(self)
    }

    fn is_here(&self) -> bool {
        true
    }

    fn watch_round(&mut self, syscall_cpus: Result<Vec<usize>, NotCounted>) -> anyhow::Result<RoundProbe> {
        Ok(RoundProbe::Here(RoundWatch::begin(self.pid(), syscall_cpus.map_err(|e| e.0))))
    }

    fn end_round(&mut self, probe: RoundProbe) -> anyhow::Result<ServerSide> {
        match probe {
            RoundProbe::Here(w) => {
                let side = w.finish();
                self.remember(&side.usage.members);
                Ok(side)
            }
            RoundProbe::There(r) => r.finish(),
        }
    }
}

impl RoundServer for Served {
    type Probe = RoundProbe;

    fn addr(&self) -> SocketAddr {
        match self {
            Served::Here(s) => s.addr(),
            Served::There { server, .. } => server.addr(),
        }
    }

    fn is_here(&self) -> bool {
        matches!(self, Served::Here(_))
    }

    fn watch_round(&mut self, syscall_cpus: Result<Vec<usize>, NotCounted>) -> anyhow::Result<RoundProbe> {
        match self {
            Served::Here(s) => s.watch_round(syscall_cpus),
            Served::There { server, .. } => Ok(RoundProbe::There(server.begin_round(syscall_cpus.map_err(|e| e.0))?)),
        }
    }

    fn end_round(&mut self, probe: RoundProbe) -> anyhow::Result<ServerSide> {
        match self {
            Served::Here(s) => s.end_round(probe),
            Served::There { .. } => match probe {
                RoundProbe::There(r) => r.finish(),
                RoundProbe::Here(w) => Ok(w.finish()),
            },
        }
    }
}

/// What measuring needs of a live server beyond its rounds: frozen between them (SIGSTOP, so that nothing
/// of it runs during another's round), and said dead, with what its log says, when it exits. The runner's
/// servers are `Served`; a test's can be a fake, so that whole passes of rounds run with no process.
pub trait LiveServer: RoundServer {
    fn freeze(&mut self);
    fn thaw(&self);
    fn exited(&mut self) -> Option<String>;
    fn explain(&self, what: &str) -> String;
    /// Stops it (SIGTERM, SIGKILL after `grace`) and says what the stop found.
    fn stop(self, grace: Duration) -> anyhow::Result<StopReport>
    where
        Self: Sized;
}

impl LiveServer for Served {
    /// Freezes its tree (SIGSTOP). On a host that was lost this does nothing: the next round fails,
    /// naming the host.
    fn freeze(&mut self) {
        match self {
            Served::Here(s) => s.freeze(),
            Served::There { server, .. } => {
                let _ = server.freeze();
            }
        }
    }

    fn thaw(&self) {
        match self {
            Served::Here(s) => s.thaw(),
            Served::There { server, .. } => {
                let _ = server.thaw();
            }
        }
    }

    /// How its leader exited, once it has. A server on a host that was lost is not known to have exited:
    /// the round's own error names the host.
    fn exited(&mut self) -> Option<String> {
        match self {
            Served::Here(s) => s.exited().map(|status| status.to_string()),
            Served::There { server, .. } => server.exited().ok().flatten(),
        }
    }

    /// A failure message: `what`, then what its log says.
    fn explain(&self, what: &str) -> String {
        match self {
            Served::Here(s) => s.explain(what),
            Served::There { server, .. } => server.explain(what),
        }
    }

    /// A server there has its log copied here.
    fn stop(self, grace: Duration) -> anyhow::Result<StopReport> {
        match self {
            Served::Here(s) => Ok(s.stop(grace)),
            Served::There { server, log } => {
                let (report, text) = server.stop(grace)?;
                let _ = std::fs::write(&log, text);
                Ok(report)
            }
        }
    }
}

impl Served {
    /// Starts and verifies a contestant's server: here, or through the agent on `host`, which verifies it
    /// there (this machine may not reach the servers when the load comes from client hosts).
    pub fn start(host: Option<&ServerHost>, c: &Contestant, scenario: &str, setup: &ServerSetup, log: PathBuf, ui: &Ui, stop: &AtomicBool) -> Started<Served> {
        let Some(host) = host else {
            return match start_verified(c, scenario, setup, log, ui, stop) {
                Started::Verified(s, sample) => Started::Verified(Served::Here(s), sample),
                Started::Failed(s, reason, sample) => Started::Failed(s.map(Served::Here), reason, sample),
            };
        };
        ui.emit(ServerEvent::StartingThere { contestant: &c.name, host: &host.name(), cpus: setup.cpus });
        match host.start(&c.name, scenario, setup) {
            Err(e) => Started::Failed(None, format!("{e:#}"), None),
            Ok(Err((reason, text))) => {
                let _ = std::fs::write(&log, text);
                Started::Failed(None, reason, None)
            }
            Ok(Ok((server, answer))) => match judged(server, answer) {
                Started::Verified(server, sample) => Started::Verified(Served::There { server, log }, sample),
                Started::Failed(server, reason, sample) => Started::Failed(server.map(|server| Served::There { server, log }), reason, sample),
            },
        }
    }
}
