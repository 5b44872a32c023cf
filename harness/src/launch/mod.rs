//! A server's life, shared by the benchmark rounds and the conformance checks: its dependencies and
//! build, its start pinned to CPUs, readiness, verification, the /proc probe of its process tree, and
//! its stop. What a round reads on the server's machine is `round_watch`.

pub mod prepare;
pub mod probe;
pub mod round_watch;
pub mod server;
pub mod start;
pub mod verify;

pub use prepare::{make_ready, stamp_dir, version, Prepared};
pub use start::{judged, start_ready, start_verified, ServerSetup, Started};

/// The address every server listens on and every client connects to, unless client hosts must reach the
/// servers (`bench --server-address`); `HOST` is the same as text.
pub const LOOPBACK: std::net::IpAddr = std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);
pub const HOST: &str = "127.0.0.1";
