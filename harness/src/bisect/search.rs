//! The search itself, without a machine: the two ends against each other first, then a binary search over
//! the commits between them, each step the good end (A) against a midpoint (B). A step that reads like the
//! ends' difference puts the culprit at or before the midpoint; one that reads `same` puts it after; one
//! that reads neither (`unclear`, or a change the other way, which no version between the ends should
//! show) is asked again with more pairs (`attempt`), then ends the search with the range it narrowed to. A midpoint that cannot be built or run is skipped as `git bisect skip` does: the search
//! tries its neighbours, and ends with a range where only skipped commits are left between the bounds.
//!
//! Where the ends changed little, a midpoint is judged by bands no wider than half the ends' change
//! (`halfway`): with the A/B run's own bands (`same` within ±2%), a change of 3%, as the ends read a
//! busy-wait of 300 ns on this VM, read `same` on a midpoint that had it, and the search named a later
//! commit. Bands are never widened: half of an 8% change that the ends overestimated would call a 5%
//! midpoint `same`.

use crate::model::ab::Bands;
use crate::model::verdict::Verdict;

use super::commits::Commit;

/// What one A/B step read, and what it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub a: Commit,
    pub b: Commit,
    /// 1 for the first try of this pair of revisions, 2 for the next (with more pairs), ...
    pub attempt: u32,
    pub reading: Reading,
}

/// A step's reading of B against A on the bisected figure.
#[derive(Debug, Clone, PartialEq)]
pub enum Reading {
    /// The A/B run's verdict, with its B/A and interval where it had one, its pairs and seconds.
    Judged { verdict: Verdict, ratio: Option<(f64, f64, f64)>, pairs: usize, seconds: f64 },
    /// B could not be built, started or verified: the commit is skipped.
    Broken(String),
}

/// How a bisection ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The ends read `same`: nothing to look for.
    NoDifference,
    /// The ends could not be told apart either way (`unclear` or `untested` after every attempt), or the bad
    /// end could not be run.
    EndsUnclear,
    /// The first commit whose version reads like the bad end.
    Culprit(Commit),
    /// The culprit is after `after` (the good end, or a commit read `same`) and at or before `upto`; the
    /// commits between could not be judged (`unclear` after every attempt, or skipped).
    Range { after: Commit, upto: Commit },
}

/// What a bisection did: its steps in order, the commits skipped as broken, and how it ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Bisection {
    pub steps: Vec<Step>,
    pub skipped: Vec<Commit>,
    pub outcome: Outcome,
}

/// One A/B step: B against A, the `attempt`-th time for this pair, with the bands to judge it by (None:
/// the A/B run's own, for the ends; `halfway` after them). An error ends the search.
pub type Judge<'a> = dyn FnMut(&Commit, &Commit, u32, Option<Bands>) -> anyhow::Result<Reading> + 'a;

/// The bands of the steps after the ends: the A/B run's own, each narrowed to half the ends' change (in
/// per cent) where that is less; None where the ends gave no B/A.
pub fn halfway(ends: &Reading) -> Option<Bands> {
    let Reading::Judged { ratio: Some((ratio, _, _)), .. } = ends else { return None };
    let half = (1.0 - ratio).abs() / 2.0 * 100.0;
    let own = Bands::default();
    (ratio.is_finite() && *ratio > 0.0).then(|| Bands { change_pct: half.min(own.change_pct), same_pct: half.min(own.same_pct) })
}

/// Bisects from `good` to the last of `candidates`, the bad end: the commits after `good` that change the
/// contestant's inputs, oldest first (`Between::inputs`). `attempts` is how often a step that reads neither
/// way is asked before the search settles for a range.
pub fn bisect(good: &Commit, candidates: &[Commit], attempts: u32, judge: &mut Judge) -> anyhow::Result<Bisection> {
    let mut b = Bisection { steps: Vec::new(), skipped: Vec::new(), outcome: Outcome::EndsUnclear };
    let Some(bad) = candidates.last() else { anyhow::bail!("no commit after the good end to bisect") };
    // The ends: the direction of the change is whatever they show.
    let direction = match ask(&mut b, good, bad, attempts, &[Verdict::Same, Verdict::Worse, Verdict::Better], None, judge)? {
        Some(Verdict::Same) => return Ok(Bisection { outcome: Outcome::NoDifference, ..b }),
        Some(v @ (Verdict::Worse | Verdict::Better)) => v,
        _ => return Ok(b),
    };
    let bands = b.steps.last().and_then(|s| halfway(&s.reading));
    // The culprit lies in candidates[lo..hi]: after candidates[lo - 1] (or good), at or before candidates[hi - 1].
    let (mut lo, mut hi) = (0usize, candidates.len());
    let mut broken = vec![false; candidates.len()];
    while hi - lo > 1 {
        // The midpoints to try, nearest the middle first; the last, candidates[hi - 1], is known bad.
        let middle = lo + (hi - 1 - lo) / 2;
        let mut order: Vec<usize> = (lo..hi - 1).filter(|&i| !broken[i]).collect();
        order.sort_by_key(|&i| (i.abs_diff(middle), i));
        let Some(&mid) = order.first() else { break };
        match ask(&mut b, good, &candidates[mid], attempts, &[Verdict::Same, direction], bands, judge)? {
            Some(Verdict::Same) => lo = mid + 1,
            Some(v) if v == direction => hi = mid + 1,
            Some(_) => break,
            None => {
                broken[mid] = true;
                b.skipped.push(candidates[mid].clone());
            }
        }
    }
    b.outcome = if hi - lo == 1 {
        Outcome::Culprit(candidates[lo].clone())
    } else {
        Outcome::Range { after: if lo == 0 { good.clone() } else { candidates[lo - 1].clone() }, upto: candidates[hi - 1].clone() }
    };
    Ok(b)
}

/// Asks B against A up to `attempts` times while it reads none of `deciding`; its last verdict, or None
/// when B was broken.
fn ask(b: &mut Bisection, good: &Commit, at: &Commit, attempts: u32, deciding: &[Verdict], bands: Option<Bands>, judge: &mut Judge) -> anyhow::Result<Option<Verdict>> {
    for attempt in 1..=attempts.max(1) {
        let reading = judge(good, at, attempt, bands)?;
        b.steps.push(Step { a: good.clone(), b: at.clone(), attempt, reading: reading.clone() });
        match reading {
            Reading::Broken(_) => return Ok(None),
            Reading::Judged { verdict, .. } if deciding.contains(&verdict) || attempt == attempts.max(1) => return Ok(Some(verdict)),
            Reading::Judged { .. } => {}
        }
    }
    unreachable!("the last attempt returns")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commits(n: usize) -> Vec<Commit> {
        (0..=n).map(|i| Commit { hash: format!("{i:040}"), subject: format!("commit {i}") }).collect()
    }

    fn judged(verdict: Verdict) -> Reading {
        Reading::Judged { verdict, ratio: None, pairs: 20, seconds: 1.0 }
    }

    /// A judge that reads `worse` from commit `culprit` on, `same` before it, broken at `broken`, and
    /// `unclear` at `unclear` (every attempt).
    fn judge_with(culprit: usize, broken: &[usize], unclear: &[usize]) -> impl FnMut(&Commit, &Commit, u32, Option<Bands>) -> anyhow::Result<Reading> {
        let (broken, unclear) = (broken.to_vec(), unclear.to_vec());
        move |_, b, _, _| {
            let i: usize = b.hash.parse().unwrap();
            Ok(if broken.contains(&i) {
                Reading::Broken("does not build".into())
            } else if unclear.contains(&i) {
                judged(Verdict::Unclear)
            } else {
                judged(if i >= culprit { Verdict::Worse } else { Verdict::Same })
            })
        }
    }

    #[test]
    fn every_culprit_among_eight_commits_is_found_in_at_most_four_steps() {
        let c = commits(8);
        for culprit in 1..=8 {
            let b = bisect(&c[0], &c[1..=8], 2, &mut judge_with(culprit, &[], &[])).unwrap();
            assert_eq!(b.outcome, Outcome::Culprit(c[culprit].clone()), "culprit {culprit}: {:?}", b.steps);
            assert!(b.steps.len() <= 4, "culprit {culprit}: {} steps", b.steps.len());
            assert!(b.steps.iter().all(|s| s.a == c[0]), "every step against the good end");
        }
    }

    #[test]
    fn ends_that_read_the_same_stop_at_the_first_step() {
        let c = commits(8);
        let b = bisect(&c[0], &c[1..=8], 2, &mut |_: &Commit, _: &Commit, _, _| Ok(judged(Verdict::Same))).unwrap();
        assert_eq!((b.outcome, b.steps.len()), (Outcome::NoDifference, 1));
    }

    #[test]
    fn an_improvement_is_bisected_as_a_regression_is() {
        let c = commits(8);
        let mut judge = |_: &Commit, b: &Commit, _: u32, _| Ok(judged(if b.hash.parse::<usize>().unwrap() >= 3 { Verdict::Better } else { Verdict::Same }));
        assert_eq!(bisect(&c[0], &c[1..=8], 1, &mut judge).unwrap().outcome, Outcome::Culprit(c[3].clone()));
    }

    #[test]
    fn a_midpoint_read_the_other_way_is_asked_again() {
        let c = commits(8);
        let mut asked = 0;
        let mut judge = |_: &Commit, b: &Commit, _: u32, _| {
            let i: usize = b.hash.parse().unwrap();
            asked += usize::from(i == 4);
            // Commit 4 reads better once (a false call), then same.
            Ok(judged(match i {
                4 if asked == 1 => Verdict::Better,
                i if i >= 6 => Verdict::Worse,
                _ => Verdict::Same,
            }))
        };
        let b = bisect(&c[0], &c[1..=8], 2, &mut judge).unwrap();
        assert_eq!(b.outcome, Outcome::Culprit(c[6].clone()), "{:?}", b.steps);
    }

    #[test]
    fn a_broken_midpoint_is_skipped_and_its_neighbours_decide() {
        let c = commits(8);
        let b = bisect(&c[0], &c[1..=8], 2, &mut judge_with(6, &[4], &[])).unwrap();
        assert_eq!(b.outcome, Outcome::Culprit(c[6].clone()), "{:?}", b.steps);
        assert_eq!(b.skipped, vec![c[4].clone()]);
        // The culprit itself broken: the answer is the range it hides in.
        let b = bisect(&c[0], &c[1..=8], 2, &mut judge_with(5, &[5], &[])).unwrap();
        assert_eq!(b.outcome, Outcome::Range { after: c[4].clone(), upto: c[6].clone() }, "{:?}", b.steps);
    }

    #[test]
    fn an_unclear_step_is_asked_again_then_the_search_ends_with_its_range() {
        let c = commits(8);
        let b = bisect(&c[0], &c[1..=8], 3, &mut judge_with(6, &[], &[4])).unwrap();
        let at_4: Vec<u32> = b.steps.iter().filter(|s| s.b == c[4]).map(|s| s.attempt).collect();
        assert_eq!(at_4, [1, 2, 3], "asked three times");
        assert_eq!(b.outcome, Outcome::Range { after: c[0].clone(), upto: c[8].clone() });
    }

    #[test]
    fn ends_that_cannot_be_told_apart_end_it() {
        let c = commits(8);
        let b = bisect(&c[0], &c[1..=8], 2, &mut |_: &Commit, _: &Commit, _, _| Ok(judged(Verdict::Unclear))).unwrap();
        assert_eq!((b.outcome, b.steps.len()), (Outcome::EndsUnclear, 2));
    }

    #[test]
    fn midpoints_are_judged_against_half_the_ends_change() {
        let c = commits(8);
        let mut asked: Vec<(usize, Option<Bands>)> = Vec::new();
        let mut judge = |_: &Commit, b: &Commit, _: u32, bands: Option<Bands>| {
            let i: usize = b.hash.parse().unwrap();
            asked.push((i, bands));
            let ratio = if i >= 5 { 0.9674 } else { 1.0 };
            Ok(Reading::Judged { verdict: if i >= 5 { Verdict::Worse } else { Verdict::Same }, ratio: Some((ratio, ratio - 0.02, ratio + 0.02)), pairs: 30, seconds: 1.0 })
        };
        let b = bisect(&c[0], &c[1..=8], 2, &mut judge).unwrap();
        assert_eq!(b.outcome, Outcome::Culprit(c[5].clone()));
        assert_eq!(asked[0], (8, None), "the ends by the A/B run's own bands");
        // Half of 3.26% narrows `same` to ±1.63%; the change band, 1%, is narrower already.
        let half = Bands { change_pct: 1.0, same_pct: (1.0 - 0.9674) / 2.0 * 100.0 };
        assert!(asked[1..].iter().all(|(_, bands)| *bands == Some(half)), "{asked:?}");
        let wide = Reading::Judged { verdict: Verdict::Worse, ratio: Some((0.92, 0.89, 0.95)), pairs: 10, seconds: 1.0 };
        assert_eq!(halfway(&wide), Some(Bands::default()), "never wider than the run's own");
        assert_eq!(halfway(&Reading::Broken("no build".into())), None);
        assert_eq!(halfway(&Reading::Judged { verdict: Verdict::Unclear, ratio: None, pairs: 3, seconds: 1.0 }), None);
    }
}
