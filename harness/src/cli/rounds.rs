//! `bench`'s bounds on its rounds, checked together: `--max-rounds` against `--rounds`, and `--budget`,
//! which only `--rounds auto` outside an A/B run takes.

use std::time::Duration;

use super::{ab, parse_duration, BadValue};
use crate::run::options::{Rounds, DEFAULT_BUDGET};

/// `--budget` as given: a time, or `off`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Budget {
    Within(Duration),
    Off,
}

pub fn parse_budget(text: &str) -> Result<Budget, BadValue> {
    if text.trim() == "off" {
        return Ok(Budget::Off);
    }
    match parse_duration(text)? {
        d if d.is_zero() => Err(BadValue(format!("--budget takes a time above zero, such as 5m, or off; not '{text}'"))),
        d => Ok(Budget::Within(d)),
    }
}

/// The most rounds a measurement runs, and the run's time budget.
pub struct RoundsAsked {
    pub max_rounds: u32,
    pub budget: Option<Duration>,
}

/// `--max-rounds` and `--budget` as given, with their defaults, checked against `--rounds` and `--ab`.
pub fn rounds_asked(rounds: Rounds, max_rounds: Option<u32>, budget: Option<Budget>, ab: &ab::AbArgs) -> anyhow::Result<RoundsAsked> {
    let budget = match (rounds, budget) {
        (_, Some(Budget::Off)) => None,
        (Rounds::Fixed(n), Some(Budget::Within(_))) => {
            anyhow::bail!("--budget ends the passes of --rounds auto; --rounds {n} runs that many: leave out one of them")
        }
        (_, Some(Budget::Within(_))) if ab.is_ab() => {
            anyhow::bail!("an A/B run stops when its verdict is decided: leave out --budget (--max-rounds bounds its pairs)")
        }
        (_, Some(Budget::Within(b))) => Some(b),
        (Rounds::Auto { .. }, None) if !ab.is_ab() => Some(DEFAULT_BUDGET),
        _ => None,
    };
    let max_rounds = match (rounds, max_rounds) {
        (Rounds::Fixed(n), None) => n.saturating_mul(2),
        (Rounds::Auto { .. }, None) => ab.max_rounds_auto(),
        (_, Some(m)) => m,
    };
    match rounds {
        Rounds::Fixed(n) => {
            anyhow::ensure!(n >= 1, "--rounds must be at least 1");
            anyhow::ensure!(max_rounds >= n, "--max-rounds {max_rounds} is below --rounds {n}");
        }
        Rounds::Auto { target_ci_pct } => {
            anyhow::ensure!(target_ci_pct > 0.0, "--target-ci must be above 0%, such as 3%");
            let (fewest, what) = ab.fewest_auto();
            anyhow::ensure!(max_rounds as usize >= fewest, "--max-rounds must be at least {fewest} with --rounds auto ({what})");
        }
    }
    Ok(RoundsAsked { max_rounds, budget })
}
