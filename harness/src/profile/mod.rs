//! Where a server's time went: its on-CPU stacks as `os::perf` samples them in the profiled round
//! (`bench --profile`, docs/profile.md), folded (`folded.rs`) and read per request; in an A/B run, B's against
//! A's (`diff.rs`).

pub mod diff;
pub mod folded;
