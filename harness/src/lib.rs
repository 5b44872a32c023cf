//! serverbench: a benchmark of approaches to writing server applications.

pub mod load;
pub mod stats;
