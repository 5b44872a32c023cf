//! A server running on the server host, as the harness sees it: each action is a request to the agent
//! there. A round's window edges go to the agent from a thread of their own: the load engine calls its
//! window watch on a worker thread, which must not wait on the network when the window opens.

use std::net::SocketAddr;
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::agent_link::AgentLink;
use super::agent_protocol::{Reply, Request, ServerId};
use crate::os::syscalls::NotCounted;
use crate::launch::round_watch::ServerSide;
use crate::launch::server::StopReport;
use crate::load::{Edge, WindowWatch};

/// How long the closing edge waits for the agent to have read the server's tree (the local probe waits
/// 200 ms for its own thread; here an ssh round trip comes on top).
const CLOSE_ACK_WAIT: Duration = Duration::from_secs(1);

pub struct RemoteServer {
    link: Arc<AgentLink>,
    id: ServerId,
    addr: SocketAddr,
}

impl RemoteServer {
    pub(super) fn new(link: Arc<AgentLink>, id: ServerId, addr: SocketAddr) -> RemoteServer {
        RemoteServer { link, id, addr }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    fn done(&self, request: Request) -> anyhow::Result<()> {
        match self.link.call(&request)? {
            Reply::Done => Ok(()),
            other => anyhow::bail!("the agent answered {other:?}"),
        }
    }

    pub fn freeze(&self) -> anyhow::Result<()> {
        self.done(Request::Freeze { server: self.id })
    }

    pub fn thaw(&self) -> anyhow::Result<()> {
        self.done(Request::Thaw { server: self.id })
    }

    /// How its leader exited, if it has.
    pub fn exited(&self) -> anyhow::Result<Option<String>> {
        match self.link.call(&Request::Exited { server: self.id })? {
            Reply::Exited { status } => Ok(status),
            other => anyhow::bail!("the agent answered {other:?}"),
        }
    }

    /// `what`, then the tail of its log there.
    pub fn explain(&self, what: &str) -> String {
        match self.link.call(&Request::Explain { server: self.id, what: what.to_string() }) {
            Ok(Reply::Explained { text }) => text,
            Ok(other) => format!("{what} (the agent answered {other:?})"),
            Err(e) => format!("{what} ({e:#})"),
        }
    }

    /// Stops it there: what the stop found, and its log.
    pub fn stop(self, grace: Duration) -> anyhow::Result<(StopReport, String)> {
        match self.link.call(&Request::Stop { server: self.id, grace })? {
            Reply::Stopped { report, log } => Ok((report, log)),
            other => anyhow::bail!("the agent answered {other:?}"),
        }
    }

    /// The agent starts watching a round of this server.
    pub fn begin_round(&self, syscall_cpus: Result<Vec<usize>, impl Into<NotCounted>>) -> anyhow::Result<RemoteRound> {
        self.done(Request::RoundBegin { server: self.id, syscall_cpus: syscall_cpus.map_err(Into::into) })?;
        let (tx, rx) = mpsc::channel::<Option<Edge>>();
        let closed = Arc::new((Mutex::new(false), Condvar::new()));
        let (link, acked) = (self.link.clone(), closed.clone());
        let sender = std::thread::Builder::new().name("edges".into()).spawn(move || {
            while let Ok(Some(edge)) = rx.recv() {
                // A lost channel fails the round's end, which names the host.
                let _ = link.call(&Request::Mark { open: edge == Edge::Open });
                if edge == Edge::Close {
                    *acked.0.lock().unwrap_or_else(|e| e.into_inner()) = true;
                    acked.1.notify_all();
                }
            }
        })?;
        Ok(RemoteRound { link: self.link.clone(), edges: Arc::new(Mutex::new(tx)), closed, sender })
    }
}

/// A round the agent watches.
pub struct RemoteRound {
    link: Arc<AgentLink>,
    edges: Arc<Mutex<mpsc::Sender<Option<Edge>>>>,
    closed: Arc<(Mutex<bool>, Condvar)>,
    sender: JoinHandle<()>,
}

impl RemoteRound {
    /// What the load calls at its window's edges: the opening returns at once; the closing waits (at most
    /// `CLOSE_ACK_WAIT`) until the agent has read the tree, so that connections are torn down after it.
    pub fn marks(&self) -> WindowWatch {
        let (edges, closed) = (self.edges.clone(), self.closed.clone());
        Arc::new(move |edge| {
            let _ = edges.lock().unwrap_or_else(|e| e.into_inner()).send(Some(edge));
            if edge == Edge::Close {
                let done = closed.0.lock().unwrap_or_else(|e| e.into_inner());
                let _ = closed.1.wait_timeout_while(done, CLOSE_ACK_WAIT, |d| !*d);
            }
        })
    }

    /// The round's figures from the server host, once every edge was passed on.
    pub fn finish(self) -> anyhow::Result<ServerSide> {
        let _ = self.edges.lock().unwrap_or_else(|e| e.into_inner()).send(None);
        let _ = self.sender.join();
        match self.link.call(&Request::RoundEnd)? {
            Reply::Round { side } => Ok(*side),
            other => anyhow::bail!("the agent answered {other:?}"),
        }
    }
}
