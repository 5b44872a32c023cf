//! An A/B run (`bench --baseline REV`, `bench --ab DIR_A DIR_B`, docs/ab.md): two versions of one
//! contestant measured in pairs of rounds back to back until B/A is decided. Where the versions come from
//! (`sides.rs`), the pairs and their stop rule, generic over how a round is measured (`pairs.rs`), and the
//! runner's side of it, real servers between the usual probes (`measure.rs`).

pub(in crate::run) mod measure;
pub mod pairs;
pub mod sides;

pub use pairs::{first_of, run_pairs, Ended, Measured, PairPlan, PairedRounds, PairsOutcome, MIN_PAIRS};
