//! What the harness asks of the operating system, below every other room: CPU sets and pinning, and
//! child processes in their own group with a deadline.

pub mod cpus;
pub mod process;
