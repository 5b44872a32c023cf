//! Other machines over ssh. Load from client hosts (`bench --client-host`): each host is prepared once
//! (`setup`: its facts, a copy of this program, its clock's offset), then every round runs `serverbench
//! load --worker` on each of them with a share of the connections and a common start instant (`drive`,
//! `args`), and their reports are merged exactly (`merge`). The worker's side is `worker`; what it says,
//! `protocol`. Servers on a server host (`bench --server-host`): the host is prepared the same way and runs
//! one agent for the whole run (`server_host`, `agent_link`), which does to the servers there what a local
//! run does here (`agent`, `agent_protocol`); the harness drives each through `remote_server`. OpenSSH is
//! the transport: the user's own ssh configuration applies (`host`).

pub mod agent;
mod agent_link;
pub mod agent_protocol;
mod args;
mod clock;
mod drive;
mod host;
mod merge;
pub mod protocol;
mod remote_server;
mod server_host;
mod setup;
pub mod worker;

pub use args::load_args;
pub use drive::{shares, Merged};
pub use host::{BadHost, HostSpec};
pub use merge::merge;
pub use remote_server::{RemoteRound, RemoteServer};
pub use server_host::{BuiltThere, ServerHost};
pub use setup::{ClientHosts, ReadyHost};
