//! What the harness asks of the operating system, below every other room: CPU sets and pinning, per-CPU
//! time from /proc/stat, every other /proc reader, the machine's facts in /sys (`machine.rs`), system calls counted by tracepoints, the CPU speed probe, raw
//! TCP socket calls, and child processes in their own group with a deadline.

pub mod cpus;
pub mod cpustat;
pub mod git;
pub mod limits;
pub mod machine;
pub mod peer_socket;
pub mod perf;
pub mod proc;
pub mod process;
pub mod socket;
pub mod speed;
pub mod syscalls;
