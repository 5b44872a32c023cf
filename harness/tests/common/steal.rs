//! The VM's steal, for tests that need rounds that count: this VM's hypervisor takes 15-70% of a CPU for
//! stretches of a minute or more, during which every round is rightly left out as disturbed. A test that
//! checks a known figure waits for the stretch to pass, within a bound, rather than read stolen rounds.

use std::time::{Duration, Instant};

use serverbench::os::cpustat::{ticks_per_s, CpuStat};

/// The steal that the runner leaves within a round (`DISTURBED_THRESHOLD_PCT`).
const QUIET_PCT: f64 = 3.0;

/// The most steal on any CPU over one second, in percent; None where /proc/stat cannot be read.
pub fn steal_pct_over_a_second() -> Option<f64> {
    let before = CpuStat::read()?;
    std::thread::sleep(Duration::from_secs(1));
    let after = CpuStat::read()?;
    let stolen: Option<Vec<f64>> = after.0.keys().map(|cpu| after.since(&before, &[*cpu]).map(|d| d.steal as f64 / ticks_per_s() * 100.0)).collect();
    stolen.map(|v| v.into_iter().fold(0.0, f64::max))
}

/// Waits until two seconds in a row show steal within the runner's threshold, for at most `bound`;
/// returns the steal of the last second read (None where it could not be read).
pub fn wait_for_quiet(bound: Duration) -> Option<f64> {
    let began = Instant::now();
    let mut quiet_seconds = 0;
    loop {
        let pct = steal_pct_over_a_second()?;
        quiet_seconds = if pct <= QUIET_PCT { quiet_seconds + 1 } else { 0 };
        if quiet_seconds >= 2 || began.elapsed() >= bound {
            return Some(pct);
        }
    }
}

/// Runs `one` (told whether it is the last try) up to three times, each after waiting (at most two minutes)
/// for a stretch of steal to pass, while it says steal left it short of the rounds it needs: a stretch can
/// outlast any bound on rounds (60% steal over twelve rounds in a row, 10-50% over twenty-three of
/// twenty-four here). On its last try `one` asserts what it needs instead.
pub fn tries_past_steal(mut one: impl FnMut(bool) -> bool) {
    for attempt in 1..=3 {
        wait_for_quiet(Duration::from_secs(120));
        if one(attempt == 3) {
            return;
        }
    }
}

/// What `measure` measured once it is `enough`, or after three tries (`tries_past_steal`); `what` names it
/// in the line of a try that steal left short.
pub fn measured_past_steal<T>(what: &str, mut measure: impl FnMut() -> T, enough: impl Fn(&T) -> bool) -> T {
    let mut measured = None;
    tries_past_steal(|last| {
        let m = measure();
        let done = last || enough(&m);
        if !done {
            eprintln!("{what}: steal left it short of the rounds it needs; again");
        }
        measured = Some(m);
        done
    });
    measured.expect("at least one try")
}
