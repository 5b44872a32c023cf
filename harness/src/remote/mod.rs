//! Load from client hosts over ssh (`bench --client-host`): each host is prepared once (`setup`: its
//! facts, a copy of this program, its clock's offset), then every round runs `serverbench load --worker`
//! on each of them with a share of the connections and a common start instant (`drive`, `args`), and
//! their reports are merged exactly (`merge`). The worker's side is `worker`; what it says, `protocol`.
//! OpenSSH is the transport: the user's own ssh configuration applies (`host`).

mod args;
mod clock;
mod drive;
mod host;
mod merge;
pub mod protocol;
mod setup;
pub mod worker;

pub use drive::{shares, Merged};
pub use host::HostSpec;
pub use merge::merge;
pub use setup::{ClientHost, ClientHosts};
