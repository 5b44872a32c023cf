//! The machine's drift within a run, read from the servers themselves.
//!
//! A shared VM changes its own speed in stretches of seconds to minutes, and every server measured in such a
//! stretch is slowed alike. The rounds of a run form a randomized block design (Box, Hunter and Hunter,
//! "Statistics for Experimenters", 2nd ed., ch. 4): every server gets rounds in every pass, in a new random
//! order, so the rounds of the *other* servers measured around a round tell the machine's speed then. For
//! each round, the drift factor is the median, over the other servers' rounds that began within `window`
//! seconds of it, of their value relative to their own server's median; a round's value divided by its
//! factor is its value at the run's usual speed. Server medians are then taken again from the adjusted
//! values and the factors recomputed (`ITERATIONS` times), as Tukey's median polish sweeps rows and columns
//! in turn (J. W. Tukey, "Exploratory Data Analysis", 1977, ch. 11). Medians throughout, so that one server
//! that reacts to the machine unlike the others cannot move a factor.

/// Fewer other rounds than this within the window give no factor (the round is left as measured).
pub const MIN_NEIGHBOURS: usize = 4;
/// Rounds of different series within this many seconds of each other are taken to have seen the same
/// machine.
pub const WINDOW_S: f64 = 4.0;
/// Sweeps of medians and factors.
const ITERATIONS: usize = 3;

/// One round: which series (server) it belongs to, when it began (seconds), and its value (req/s).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub series: usize,
    pub t: f64,
    pub value: f64,
}

/// The drift factor of every point (1 = the run's usual speed, 0.8 = the machine ran 20% slow then), or
/// None where fewer than `MIN_NEIGHBOURS` rounds of other series began within `window` seconds.
pub fn factors(points: &[Point], window: f64) -> Vec<Option<f64>> {
    let series = points.iter().map(|p| p.series).max().map_or(0, |m| m + 1);
    let mut factor: Vec<Option<f64>> = vec![None; points.len()];
    for _ in 0..ITERATIONS {
        // Each series' median of its values at the usual speed, as the last sweep estimated them.
        let mut adjusted: Vec<Vec<f64>> = vec![Vec::new(); series];
        for (p, f) in points.iter().zip(&factor) {
            adjusted[p.series].push(p.value / f.unwrap_or(1.0));
        }
        let medians: Vec<Option<f64>> = adjusted.iter_mut().map(|v| median(v)).collect();
        factor = points
            .iter()
            .map(|p| {
                let mut relative: Vec<f64> = points
                    .iter()
                    .filter(|q| q.series != p.series && (q.t - p.t).abs() <= window)
                    .filter_map(|q| medians[q.series].filter(|m| *m > 0.0).map(|m| q.value / m))
                    .collect();
                if relative.len() < MIN_NEIGHBOURS {
                    return None;
                }
                median(&mut relative).filter(|f| *f > 0.0)
            })
            .collect();
    }
    factor
}

fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Five servers of speeds 100..500, one round each per 1 s slot, the machine at `speed(t)`.
    fn run(speed: impl Fn(f64) -> f64, slots: usize) -> Vec<Point> {
        let mut points = Vec::new();
        for slot in 0..slots {
            for s in 0..5 {
                let t = (slot * 5 + s) as f64;
                points.push(Point { series: s, t, value: 100.0 * (s + 1) as f64 * speed(t) });
            }
        }
        points
    }

    #[test]
    fn a_slow_stretch_is_taken_out_of_every_server_alike() {
        // The machine runs at 0.6x between 20 s and 30 s.
        let points = run(|t| if (20.0..30.0).contains(&t) { 0.6 } else { 1.0 }, 10);
        let f = factors(&points, WINDOW_S);
        assert_eq!(f.len(), points.len(), "a factor a round");
        for (p, f) in points.iter().zip(&f) {
            let f = f.expect("every round has neighbours");
            let adjusted = p.value / f;
            let usual = 100.0 * (p.series + 1) as f64;
            // Inside the stretch and well clear of it the value is restored exactly; at its edges the window
            // straddles both speeds and the median picks one of them.
            if (24.0..26.0).contains(&p.t) || p.t < 15.0 || p.t > 35.0 {
                assert!((adjusted - usual).abs() < 1e-9, "t {}: {adjusted} for {usual}", p.t);
            }
        }
    }

    #[test]
    fn a_steady_machine_gives_factors_of_one_and_a_lone_server_none() {
        let f = factors(&run(|_| 1.0, 4), WINDOW_S);
        assert_eq!(f.len(), 20, "a factor a round");
        assert!(f.iter().all(|f| f.is_some_and(|f| (f - 1.0).abs() < 1e-12)), "{f:?}");
        let alone: Vec<Point> = (0..8).map(|i| Point { series: 0, t: i as f64, value: 100.0 }).collect();
        assert_eq!(factors(&alone, WINDOW_S), [None; 8]);
    }

    #[test]
    fn one_server_slowed_alone_does_not_move_the_others() {
        // Server 2 halves in its own rounds 3..6; the machine is steady: its neighbours keep factor 1 and
        // its slow rounds stay slow (the factor is not its own doing).
        let mut points = run(|_| 1.0, 10);
        for p in points.iter_mut().filter(|p| p.series == 2 && (15.0..30.0).contains(&p.t)) {
            p.value *= 0.5;
        }
        let f = factors(&points, WINDOW_S);
        assert_eq!(f.len(), points.len(), "a factor a round");
        for (p, f) in points.iter().zip(&f) {
            assert!((f.unwrap() - 1.0).abs() < 1e-9, "t {} series {}: factor {f:?}", p.t, p.series);
        }
    }
}
