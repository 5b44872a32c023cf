//! Histograms, round statistics, and the significance test that compares two runs.

pub mod histogram;
pub mod rounds;
pub mod significance;
