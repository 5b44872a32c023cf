//! A server's life, shared by the benchmark rounds and the conformance checks: its dependencies and
//! build, its start pinned to CPUs, readiness, verification, the /proc probe of its process tree, and
//! its stop.

pub mod prepare;
pub mod probe;
pub mod server;
pub mod start;
pub mod verify;

pub use prepare::{make_ready, stamp_dir, version, Prepared};
pub use start::{start_verified, ServerSetup, Started};

/// The host every server listens on and every client connects to.
pub const HOST: &str = "127.0.0.1";
