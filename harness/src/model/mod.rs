//! The result model: everything a run measured, as stored in `run.json`. The runner and the conformance
//! suite write it; exporters and the comparison only read it; `serverbench report` rebuilds every summary
//! from it alone.

pub mod balance;
pub mod checks;
pub mod hosts;
pub mod limit;
pub mod measurement;
pub mod ranks;
pub mod run;

pub use balance::*;
pub use hosts::{client_limit_pct, HostLoad, HostRecord};
pub use limit::*;
pub use measurement::*;
pub use run::*;
