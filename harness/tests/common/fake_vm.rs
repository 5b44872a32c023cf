//! A fake 2-CPU VM for A/B pairs (`run::ab::PairedRounds`): its speed moves in stretches as the real
//! one's does, so that the pairs scheduler, its stop rule and what is built on them are tested without
//! servers.

use serverbench::model::ab::{AbPair, Side};
use serverbench::run::ab::{Measured, PairedRounds};
use serverbench::stats::paired::PairedRatio;

/// The VM's own scatter of a round beyond the machine's stretches: pairs of one server on it differ by
/// about 5% (±1.2% at 60 pairs, ±0.9% at 100, resampling the rounds of two unchanged runs in pairs).
pub const ROUND_NOISE: f64 = 0.035;

/// A machine whose speed holds for stretches of 2 to 10 s at a level between 0.7x and 1.0x, then jumps
/// (as the 2-CPU VM's did: docs/methodology.md), serving two versions of one server whose own rounds
/// scatter by `noise` (log scale, normal) on top; B serves `b_factor` times A's rate. A round takes 0.5 s
/// and the probes and the wait for quiet CPUs around it 0.15 s; its speed is the mean over its window,
/// so a jump inside it counts in part. One round in fifty is disturbed.
pub struct FakeVm {
    rng: fastrand::Rng,
    t: f64,
    /// (end, speed) of the current stretch.
    stretch: (f64, f64),
    b_factor: f64,
    noise: f64,
    rounds: [u32; 2],
}

impl FakeVm {
    pub fn new(seed: u64, b_factor: f64, noise: f64) -> FakeVm {
        FakeVm { rng: fastrand::Rng::with_seed(seed), t: 0.0, stretch: (0.0, 1.0), b_factor, noise, rounds: [0, 0] }
    }

    fn speed_at(&mut self, t: f64) -> f64 {
        while t >= self.stretch.0 {
            self.stretch = (self.stretch.0 + 2.0 + 8.0 * self.rng.f64(), 0.7 + 0.3 * self.rng.f64());
        }
        self.stretch.1
    }

    fn normal(&mut self) -> f64 {
        // Box–Muller.
        let (u, v) = (self.rng.f64().max(1e-12), self.rng.f64());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

impl PairedRounds for FakeVm {
    fn round(&mut self, side: Side, _pair: u32) -> anyhow::Result<Option<Measured>> {
        let start = self.t + 0.15;
        let speed = (0..10).map(|i| self.speed_at(start + 0.05 * f64::from(i))).sum::<f64>() / 10.0;
        self.t = start + 0.5;
        let version = if side == Side::B { self.b_factor } else { 1.0 };
        let rps = 150_000.0 * speed * version * (self.noise * self.normal()).exp();
        let k = if side == Side::A { 0 } else { 1 };
        self.rounds[k] += 1;
        Ok(Some(Measured::requests_per_s(self.rounds[k], rps, self.rng.f64() >= 0.02)))
    }

    fn paired(&mut self, _: &AbPair, _: bool, _: Option<&PairedRatio>) {}
}

