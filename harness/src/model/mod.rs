//! The result model: everything a run measured, as stored in `run.json`. The runner and the conformance
//! suite write it; exporters and the comparison only read it; `serverbench report` rebuilds every summary
//! from it alone. It defines every type the file holds, so the file's format changes only here.

pub mod ab;
pub mod balance;
pub mod capacity;
pub mod checks;
pub mod closes;
pub mod flag;
pub mod history_schema;
pub mod hosts;
pub mod intervals;
pub mod limit;
mod latency_points;
pub mod machine;
mod machine_fit;
pub mod machine_model;
pub mod measurement;
pub mod profile;
pub mod ranks;
pub mod round_flags;
pub mod round_load;
pub mod rounds_summary;
pub mod run;
pub mod server;
mod syscalls_summary;
pub mod time_spent;
pub mod verdict;

pub use balance::*;
pub use capacity::{Capacity, Objective, SearchStep};
pub use closes::close_flags;
pub use flag::Flag;
pub use round_flags::{judge, RoundFacts, DISTURBED_MIN_TICKS, DISTURBED_THRESHOLD_PCT, UNFAIR_JAIN};
pub use hosts::{HostLoad, HostRecord};
pub use intervals::{Interval, Intervals};
pub use limit::*;
pub use latency_points::LatencyPoints;
pub use machine_fit::MachineFactors;
pub use machine::{CpuFrequency, Exposure, MachineFacts, MemoryNow};
pub use measurement::*;
pub use round_load::{ConnectionSpread, ConnectionsSummary, CounterCheck, ErrorCounts, RoundLoad, StatusCounts};
pub use rounds_summary::RoundsSummary;
pub use run::*;
pub use time_spent::TimeSpent;
pub use server::{CostBreakdown, CpuSource, ServerUsage, SyscallCounts, SyscallsPerRequest};
