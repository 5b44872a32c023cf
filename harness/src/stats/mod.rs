//! Histograms and round statistics.

pub mod histogram;
