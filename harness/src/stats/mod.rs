//! Histograms and a round's intervals of them, round statistics (median and its interval), the rank test
//! that compares two runs, the scatter of many ratios around the change they share, rank ranges within a
//! run, and the paired ratio of two versions measured back to back.

pub mod drift;
pub mod histogram;
pub mod intervals;
pub mod paired;
pub mod rank;
pub mod rank_range;
pub mod rounds;
pub mod scatter;
pub mod slope;
pub mod student_t;
