//! Places in a table that claim no more than the rounds show: each row's range of ranks ("3–11") from
//! pairwise Mann–Whitney tests of its rounds against every other row's, with Holm's correction for the
//! number of comparisons.
//!
//! The method is the individual rank interval of Klein, Wright and Wieczorek ("A joint confidence region
//! for an overall ranking of populations", J. R. Stat. Soc. C 69(3), 2020): a row's best place is one more
//! than the rows significantly above it, its worst the count of rows less those significantly below it.
//! "Significantly" is decided per row over its K − 1 comparisons at a family-wise 5% with Holm's step-down
//! procedure (S. Holm, "A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6,
//! 1979), so each row's range holds its true place with at least 95% confidence whatever the rounds'
//! distribution (the U test assumes none: see `rank`). Rows whose rounds cannot be told apart share
//! places; a row that stands apart from all gets one place.
//!
//! With few rounds a range stays wide by necessity: the smallest two-sided p of U between 6 and 6 values
//! is 2/924 = 0.0022, above Holm's first threshold 0.05/37 for a table of 38 rows, so no row of such a
//! table is told apart below 7 rounds (7 and 7: 0.00058).

use serde::{Deserialize, Serialize};

/// Family-wise error rate of each row's comparisons.
pub const RANK_ALPHA: f64 = 0.05;

/// The places a row may hold, 1 being the best.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankRange {
    pub best: usize,
    pub worst: usize,
}

impl RankRange {
    /// "3" or "3–11".
    pub fn label(&self) -> String {
        if self.best == self.worst { self.best.to_string() } else { format!("{}–{}", self.best, self.worst) }
    }
}

/// Which end of a figure is the better one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
}

/// The range of places of each row, from the values of its rounds; None for a row with fewer than two
/// positive finite values, which takes no place and is not counted among the others.
pub fn rank_ranges(rows: &[Vec<f64>], better: Better) -> Vec<Option<RankRange>> {
    let ranked: Vec<usize> = (0..rows.len()).filter(|&i| usable(&rows[i])).collect();
    let k = ranked.len();
    // tests[a][b]: the p of rows a and b, and whether b stands above a (None: U exactly at its centre).
    let mut tests = vec![vec![None; k]; k];
    for a in 0..k {
        for b in a + 1..k {
            if let Some(t) = super::rank::mann_whitney(&rows[ranked[a]], &rows[ranked[b]]) {
                let half = (rows[ranked[a]].len() * rows[ranked[b]].len()) as f64 / 2.0;
                // U counts pairs where b's value is the higher one.
                let b_higher = t.u > half;
                let b_above = (better == Better::Higher) == b_higher && t.u != half;
                tests[a][b] = Some((t.p, if t.u == half { None } else { Some(b_above) }));
                tests[b][a] = Some((t.p, if t.u == half { None } else { Some(!b_above) }));
            }
        }
    }
    let mut out = vec![None; rows.len()];
    for (a, &row) in ranked.iter().enumerate() {
        // Holm over this row's K − 1 comparisons: the smallest p against α/(K−1), the next against
        // α/(K−2), ..., stopping at the first that fails.
        let mut family: Vec<(f64, Option<bool>)> = (0..k).filter(|&b| b != a).filter_map(|b| tests[a][b]).collect();
        family.sort_by(|x, y| x.0.total_cmp(&y.0));
        let m = family.len();
        let (mut above, mut below) = (0usize, 0usize);
        for (step, (p, other_above)) in family.iter().enumerate() {
            if *p > RANK_ALPHA / (m - step) as f64 {
                break;
            }
            match other_above {
                Some(true) => above += 1,
                Some(false) => below += 1,
                None => {}
            }
        }
        out[row] = Some(RankRange { best: 1 + above, worst: k - below });
    }
    out
}

fn usable(values: &[f64]) -> bool {
    values.len() >= 2 && values.iter().all(|v| v.is_finite() && *v > 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rounds around `centre`, spread by ±1% in a fixed pattern.
    fn rounds(centre: f64, n: usize) -> Vec<f64> {
        (0..n).map(|i| centre * (1.0 + 0.01 * ((i * 7 % n) as f64 / n as f64 - 0.5))).collect()
    }

    fn labels(r: &[Option<RankRange>]) -> Vec<String> {
        r.iter().map(|x| x.map_or("-".into(), |x| x.label())).collect()
    }

    #[test]
    fn rows_far_apart_each_take_one_place() {
        let rows = vec![rounds(100.0, 16), rounds(200.0, 16), rounds(150.0, 16)];
        assert_eq!(labels(&rank_ranges(&rows, Better::Higher)), ["3", "1", "2"]);
        assert_eq!(labels(&rank_ranges(&rows, Better::Lower)), ["1", "3", "2"]);
    }

    #[test]
    fn rows_that_overlap_share_their_places() {
        // Two rows drawn from the same values in another order cannot be told apart; the third stands
        // above both.
        let a = rounds(100.0, 12);
        let mut b = a.clone();
        b.reverse();
        let rows = vec![a, b, rounds(300.0, 12)];
        assert_eq!(labels(&rank_ranges(&rows, Better::Higher)), ["2–3", "2–3", "1"]);
    }

    #[test]
    fn few_rounds_in_a_large_table_tell_nothing_apart() {
        // 6 rounds each: the best U test p (2/924) is above Holm's first threshold for 37 comparisons.
        let rows: Vec<Vec<f64>> = (0..38).map(|i| rounds(100.0 + 50.0 * i as f64, 6)).collect();
        assert_eq!(rank_ranges(&rows, Better::Higher), [Some(RankRange { best: 1, worst: 38 }); 38]);
        // With 7 (2/3432) the same rows stand apart.
        let rows: Vec<Vec<f64>> = (0..38).map(|i| rounds(100.0 + 50.0 * i as f64, 7)).collect();
        let r = rank_ranges(&rows, Better::Higher);
        assert_eq!(r[37], Some(RankRange { best: 1, worst: 1 }));
        assert_eq!(r[0], Some(RankRange { best: 38, worst: 38 }));
    }

    #[test]
    fn a_chain_of_neighbours_gives_overlapping_ranges() {
        // Rows 2% apart with a ±5% spread: each is told apart from far rows only.
        let spread = |c: f64| -> Vec<f64> { (0..16).map(|i| c * (0.95 + 0.1 * (i * 5 % 16) as f64 / 15.0)).collect() };
        let rows: Vec<Vec<f64>> = (0..8).map(|i| spread(100.0 * 1.02f64.powi(i))).collect();
        let r = rank_ranges(&rows, Better::Higher);
        let top = r[7].unwrap();
        let bottom = r[0].unwrap();
        assert_eq!(top.best, 1);
        assert!(top.worst > 1 && top.worst < 8, "{top:?}");
        assert_eq!(bottom.worst, 8);
        assert!(bottom.best > 1 && bottom.best < 8, "{bottom:?}");
        for w in r.windows(2) {
            let (lo, hi) = (w[0].unwrap(), w[1].unwrap());
            assert!(hi.best <= lo.best && hi.worst <= lo.worst, "ranges move with the medians: {r:?}");
        }
    }

    #[test]
    fn a_row_without_rounds_takes_no_place() {
        let rows = vec![rounds(100.0, 10), vec![], rounds(200.0, 10)];
        assert_eq!(labels(&rank_ranges(&rows, Better::Higher)), ["2", "-", "1"]);
    }
}
