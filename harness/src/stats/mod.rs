//! Histograms and round statistics.

pub mod histogram;
pub mod rounds;
