//! Histograms, round statistics (median and its interval), and the rank test that compares two runs.

pub mod drift;
pub mod histogram;
pub mod rank;
pub mod rank_range;
pub mod rounds;
