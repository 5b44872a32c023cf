//! Histograms, round statistics (median and its interval), the rank test that compares two runs, and the
//! scatter of many ratios around the change they share.

pub mod drift;
pub mod histogram;
pub mod rank;
pub mod rounds;
pub mod scatter;
