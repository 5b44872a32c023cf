//! The machines around each round: the server's CPUs waited on until quiet, and the speed of the CPUs that
//! do the round's work (the server's, here or on the server host through its agent; the client's, when the
//! load runs here) probed just before and just after the round and judged against the run's own median: a
//! round measured while a machine itself ran at another speed is flagged (`cpu-drift`), and `compare` uses
//! the probes of two runs to tell a change of the machine from a change of a contestant. This machine's
//! CPUs that do no work of the round (the client CPUs, when the load comes from client hosts) are not
//! probed: their speed says nothing of the round.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::model::{cross_cpu_moved, RoundCpuSpeed, DRIFT_THRESHOLD};
use crate::os::speed::{self, CpuSpeed};
use crate::remote::ServerHost;

/// Each loop of the CPU speed probe runs this long on every CPU at once. The loops explain almost none of a
/// round's scatter (median R² 0.03, docs/methodology.md) and serve to flag `cpu-drift`, so they are short.
pub const PROBE_EACH: Duration = Duration::from_millis(5);
/// The cross-CPU probe runs this long: its rate is the machine model's covariate (`model::machine_model`).
/// Both probes together, before and after a round: about 50 ms.
pub const CROSS_PROBE: Duration = Duration::from_millis(15);
/// Probes of a CPU needed before its median is trusted to judge a round.
pub const MIN_PROBES: usize = 5;
/// A probe taken after a round serves as the next round's probe before it when that round starts within
/// this long of it: nothing but a frozen server ran in between, and probing again would cost a quarter of
/// the gap between rounds.
pub const PROBE_REUSE: Duration = Duration::from_millis(150);

/// The longest wait for quiet server CPUs before a round starts anyway (its figures then say so).
pub const QUIET_LIMIT: Duration = Duration::from_millis(500);

/// Where the server's CPUs are.
pub(super) enum ServerCpus<'a> {
    Here(Vec<usize>),
    /// On the server host, probed by its agent.
    There(&'a ServerHost, Vec<usize>),
}

/// One probe of every CPU the round works on: the server's, and this machine's client CPUs; and, when
/// both are this machine's and apart, the rate at which a cache line goes between the first of each.
#[derive(Debug, Clone, Default)]
pub(super) struct Speeds {
    pub server: Vec<CpuSpeed>,
    pub client: Vec<CpuSpeed>,
    pub cross_per_ms: Option<f64>,
    /// The last round's probe after it, standing as this round's probe before: already in the history.
    pub reused: bool,
}

/// What the probes around a round say of it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Judged {
    pub speeds: Vec<RoundCpuSpeed>,
    /// The user-loop probe furthest from its CPU's run median, as a ratio to it.
    pub speed_index: Option<f64>,
    /// The mean cross-CPU rate of the two probes, and the one further from the run's median as a ratio.
    pub cross_per_ms: Option<f64>,
    pub cross_index: Option<f64>,
}

impl Judged {
    /// Whether the machine ran at another speed: a loop beyond `DRIFT_THRESHOLD`, or the cross-CPU rate
    /// beyond `CROSS_DRIFT`.
    pub fn drifted(&self) -> bool {
        self.speed_index.is_some_and(drifted) || self.cross_index.is_some_and(cross_cpu_moved)
    }
}

/// How the CPUs around a round are read: one probe of every CPU it works on, and the wait for quiet ones.
/// The run's are `OnCpus`; a test's can be fakes, so that whole passes of rounds run with no probe.
pub(super) trait CpuProbes {
    /// Every server and client CPU, probed at once.
    fn probe(&self) -> Speeds;
    /// Waits until the server's CPUs are quiet, at most `QUIET_LIMIT`; the time waited in ms, absent
    /// when it cannot be read.
    fn wait_quiet(&self) -> Option<f64>;
    /// The clock the rounds are timed by, a probe is reused by (`PROBE_REUSE`) and the time budget is spent
    /// by: the real one, or a test's, which moves only as its fakes say.
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// The CPUs themselves: the server's, here or on the server host, and this machine's client CPUs.
struct OnCpus<'a> {
    server: ServerCpus<'a>,
    /// This machine's client CPUs, when the load runs here; empty when it comes from client hosts.
    client_cpus: Vec<usize>,
}

/// The run's probes so far, per role, CPU and loop.
pub(super) struct MachineWatch<'a> {
    probes: Box<dyn CpuProbes + 'a>,
    history: HashMap<(&'static str, usize, bool), Vec<f64>>,
    /// The run's cross-CPU probes so far.
    cross_history: Vec<f64>,
    /// When measuring began: rounds are timed from here.
    began: Instant,
    /// The last probe after a round, and when it ended.
    last_after: Option<(Instant, Speeds)>,
}

impl<'a> MachineWatch<'a> {
    pub(super) fn new(server: ServerCpus<'a>, client_cpus: &[usize]) -> MachineWatch<'a> {
        MachineWatch::with_probes(Box::new(OnCpus { server, client_cpus: client_cpus.to_vec() }))
    }

    /// A watch whose probes are `probes`.
    pub(super) fn with_probes(probes: Box<dyn CpuProbes + 'a>) -> MachineWatch<'a> {
        let began = probes.now();
        MachineWatch { probes, history: HashMap::new(), cross_history: Vec::new(), began, last_after: None }
    }

    /// The instant on the probes' clock (`CpuProbes::now`).
    pub(super) fn now(&self) -> Instant {
        self.probes.now()
    }

    /// Seconds since measuring began.
    pub(super) fn elapsed_s(&self) -> f64 {
        self.now().saturating_duration_since(self.began).as_secs_f64()
    }

    /// The probe before a round: the last round's probe after it when that ended within `PROBE_REUSE`,
    /// else a new one.
    pub(super) fn probe_before(&mut self) -> Speeds {
        self.probe_before_at(self.now())
    }

    /// `probe_before` at the instant `now`.
    fn probe_before_at(&mut self, now: Instant) -> Speeds {
        match self.last_after.take() {
            Some((at, speeds)) if now.saturating_duration_since(at) <= PROBE_REUSE => Speeds { reused: true, ..speeds },
            _ => self.probes.probe(),
        }
    }

    /// The probe after a round, kept for the next round's `probe_before`.
    pub(super) fn probe_after(&mut self) -> Speeds {
        let speeds = self.probes.probe();
        self.last_after = Some((self.now(), speeds.clone()));
        speeds
    }

    pub(super) fn wait_quiet(&self) -> Option<f64> {
        self.probes.wait_quiet()
    }

    /// The round's speeds (the mean of the probes before and after, per CPU) and the user-loop probe
    /// furthest from the run's median of its CPU, as a ratio to it (absent until `MIN_PROBES` exist); then
    /// adds both probes to the run's history (a reused probe before is there already). The syscall loop is recorded but not judged: on the 2-CPU VMs
    /// this was tuned on it swings by 25% between probes while req/s follows it only weakly (correlation
    /// 0.1 to 0.6), where the user loop held within 2% on a quiet machine and fell to 0.45x in the slow
    /// stretches that halve a round (docs/methodology.md).
    pub(super) fn judge(&mut self, before: &Speeds, after: &Speeds) -> Judged {
        let crosses: Vec<f64> = [before.cross_per_ms, after.cross_per_ms].into_iter().flatten().collect();
        let (b, a) = (roles(before), roles(after));
        let mut furthest: Option<f64> = None;
        for (role, s) in b.iter().chain(&a) {
            let Some(h) = self.history.get(&(*role, s.cpu, true)).filter(|h| h.len() >= MIN_PROBES) else { continue };
            let median = crate::stats::rounds::median(h);
            if median > 0.0 {
                let ratio = s.user_per_ms / median;
                if furthest.is_none_or(|f| ratio.ln().abs() > f.ln().abs()) {
                    furthest = Some(ratio);
                }
            }
        }
        let mut speeds: Vec<RoundCpuSpeed> = b
            .iter()
            .map(|(role, at_start)| {
                let at_end = a.iter().find(|(r, x)| r == role && x.cpu == at_start.cpu).map_or(at_start, |(_, x)| x);
                RoundCpuSpeed {
                    cpu: at_start.cpu,
                    role: role.to_string(),
                    user_per_ms: (at_start.user_per_ms + at_end.user_per_ms) / 2.0,
                    syscall_per_ms: (at_start.syscall_per_ms + at_end.syscall_per_ms) / 2.0,
                }
            })
            .collect();
        speeds.sort_by_key(|s| s.cpu);
        let mut cross_index: Option<f64> = None;
        if self.cross_history.len() >= MIN_PROBES {
            let median = crate::stats::rounds::median(&self.cross_history);
            for c in crosses.iter().filter(|_| median > 0.0) {
                let ratio = c / median;
                if cross_index.is_none_or(|f| ratio.ln().abs() > f.ln().abs()) {
                    cross_index = Some(ratio);
                }
            }
        }
        // A reused probe before is in the history already, from the round whose probe after it was.
        for probe in [before, after].into_iter().filter(|p| !p.reused) {
            self.remember(probe);
        }
        let cross_per_ms = (!crosses.is_empty()).then(|| crosses.iter().sum::<f64>() / crosses.len() as f64);
        Judged { speeds, speed_index: furthest, cross_per_ms, cross_index }
    }

    /// One probe added to the run's history: each CPU's loops, and the cross-CPU rate.
    fn remember(&mut self, probe: &Speeds) {
        for (role, s) in roles(probe) {
            self.history.entry((role, s.cpu, true)).or_default().push(s.user_per_ms);
            self.history.entry((role, s.cpu, false)).or_default().push(s.syscall_per_ms);
        }
        self.cross_history.extend(probe.cross_per_ms);
    }
}

impl CpuProbes for OnCpus<'_> {
    /// Every server and client CPU, probed at once (the server host's while this machine's run). A server
    /// host that does not answer leaves its CPUs out: the round's own request to it names the host.
    fn probe(&self) -> Speeds {
        match &self.server {
            ServerCpus::Here(server) => {
                let mut cpus: Vec<usize> = server.iter().chain(&self.client_cpus).copied().collect();
                cpus.sort_unstable();
                cpus.dedup();
                let (server_speeds, client): (Vec<CpuSpeed>, Vec<CpuSpeed>) = speed::probe(&cpus, PROBE_EACH).into_iter().partition(|s| server.contains(&s.cpu));
                let cross_per_ms = match (server.first(), self.client_cpus.first()) {
                    (Some(&s), Some(&c)) if !server.contains(&c) => speed::cross_cpu(c, s, CROSS_PROBE),
                    _ => None,
                };
                Speeds { server: server_speeds, client, cross_per_ms, reused: false }
            }
            ServerCpus::There(host, cpus) => std::thread::scope(|scope| {
                let there = scope.spawn(|| host.probe(cpus, PROBE_EACH).unwrap_or_default());
                let client = speed::probe(&self.client_cpus, PROBE_EACH);
                Speeds { server: there.join().unwrap_or_default(), client, cross_per_ms: None, reused: false }
            }),
        }
    }

    /// Waits until the server's CPUs are quiet, at most `QUIET_LIMIT`; the time waited in ms, absent when
    /// /proc/stat cannot be read (or the server host did not answer).
    fn wait_quiet(&self) -> Option<f64> {
        match &self.server {
            ServerCpus::Here(cpus) => crate::os::cpustat::wait_quiet(cpus, QUIET_LIMIT),
            ServerCpus::There(host, cpus) => host.wait_quiet(cpus, QUIET_LIMIT).ok().flatten(),
        }
    }
}

/// A probe's CPUs with the role each plays in the round.
fn roles(s: &Speeds) -> Vec<(&'static str, CpuSpeed)> {
    s.server.iter().map(|c| ("server", *c)).chain(s.client.iter().map(|c| ("client", *c))).collect()
}

/// Whether a speed index departs from 1 by more than the drift threshold, either way.
pub fn drifted(index: f64) -> bool {
    !(1.0 - DRIFT_THRESHOLD..=1.0 / (1.0 - DRIFT_THRESHOLD)).contains(&index)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_that_starts_right_after_the_last_takes_its_probe_and_a_later_one_probes_anew() {
        let mut watch = MachineWatch::new(ServerCpus::Here(vec![0]), &[]);
        let after = watch.probe_after();
        let at = watch.last_after.as_ref().unwrap().0;
        let before = watch.probe_before_at(at + PROBE_REUSE);
        assert!(before.reused && !after.reused);
        assert_eq!(before.server.len(), 1);
        assert_eq!(before.server[0].user_per_ms, after.server[0].user_per_ms, "taken from the last probe");
        // Taken once only: the round after that one probes again.
        let again = watch.probe_before_at(at);
        assert!(!again.reused);
        assert_ne!(again.server[0].user_per_ms, after.server[0].user_per_ms, "a probe of its own");
        let after = watch.probe_after();
        let at = watch.last_after.as_ref().unwrap().0;
        let later = watch.probe_before_at(at + PROBE_REUSE + Duration::from_millis(1));
        assert!(!later.reused);
        assert_ne!(later.server[0].user_per_ms, after.server[0].user_per_ms, "too old to stand for the round");
    }

    #[test]
    fn a_reused_probe_enters_the_history_once() {
        let mut w = MachineWatch::new(ServerCpus::Here(vec![1]), &[0]);
        let probe = |cross: f64| Speeds { server: vec![speed(1, 1000.0, 100.0)], client: vec![speed(0, 1000.0, 100.0)], cross_per_ms: Some(cross), reused: false };
        w.judge(&probe(1.0), &probe(2.0));
        // The next round's probe before is the last one's after.
        w.judge(&Speeds { reused: true, ..probe(2.0) }, &probe(3.0));
        assert_eq!(w.cross_history, [1.0, 2.0, 3.0]);
        assert_eq!(w.history[&("server", 1, true)].len(), 3);
        assert_eq!(w.history[&("client", 0, false)].len(), 3);
    }

    fn speed(cpu: usize, user: f64, syscall: f64) -> CpuSpeed {
        CpuSpeed { cpu, user_per_ms: user, syscall_per_ms: syscall }
    }

    #[test]
    fn a_slow_probe_is_judged_against_the_runs_median() {
        let mut w = MachineWatch::new(ServerCpus::Here(vec![1]), &[0]);
        let usual = Speeds { server: vec![speed(1, 1000.0, 100.0)], client: vec![speed(0, 1000.0, 100.0)], cross_per_ms: None, reused: false };
        // Too few probes yet (two a round): no judgement.
        for _ in 0..3 {
            assert_eq!(w.judge(&usual, &usual).speed_index, None);
        }
        let Judged { speeds, speed_index: index, .. } = w.judge(&usual, &usual);
        assert_eq!(index, Some(1.0));
        assert_eq!(speeds.iter().map(|s| s.role.as_str()).collect::<Vec<_>>(), ["client", "server"]);
        // CPU 1's user loop at 0.45x after the round (a slow stretch that began inside it).
        let slow = Speeds { server: vec![speed(1, 450.0, 72.0)], client: vec![speed(0, 1000.0, 100.0)], cross_per_ms: None, reused: false };
        let Judged { speeds, speed_index: index, .. } = w.judge(&usual, &slow);
        assert_eq!(index, Some(0.45));
        assert!(drifted(index.unwrap()));
        assert_eq!(speeds[1].user_per_ms, 725.0);
        assert!(!drifted(0.85) && !drifted(1.2) && drifted(1.3) && drifted(0.75));
    }

    #[test]
    fn the_same_cpu_number_on_two_machines_is_judged_apart() {
        // The server host's CPU 0 runs at twice the speed of this machine's CPU 0, which the client uses.
        let mut w = MachineWatch::new(ServerCpus::Here(vec![0]), &[0]);
        let usual = Speeds { server: vec![speed(0, 2000.0, 100.0)], client: vec![speed(0, 1000.0, 100.0)], cross_per_ms: None, reused: false };
        for _ in 0..3 {
            w.judge(&usual, &usual);
        }
        let Judged { speeds, speed_index: index, .. } = w.judge(&usual, &usual);
        assert_eq!(index, Some(1.0), "each against its own median");
        assert_eq!(speeds.iter().map(|s| (s.role.as_str(), s.user_per_ms)).collect::<Vec<_>>(), [("server", 2000.0), ("client", 1000.0)]);
    }

    #[test]
    fn a_round_whose_cpus_pass_data_at_another_speed_has_drifted() {
        // The loops hold; the cross-CPU rate falls from about 6,900 to 2,400 a ms (the host moved a vCPU away
        // from the other's cache), as it did on the 2-CPU VM while c-epoll fell to 0.70x.
        let mut w = MachineWatch::new(ServerCpus::Here(vec![1]), &[0]);
        let at = |cross: f64| Speeds { server: vec![speed(1, 1000.0, 100.0)], client: vec![speed(0, 1000.0, 100.0)], cross_per_ms: Some(cross), reused: false };
        for cross in [6900.0, 7400.0, 6200.0] {
            let j = w.judge(&at(cross), &at(cross));
            assert!(!j.drifted() && j.cross_per_ms == Some(cross));
        }
        // Within one regime the rate swings (4,474 was seen): not drift.
        let j = w.judge(&at(6900.0), &at(4474.0));
        assert!(j.cross_index.is_some_and(|i| i > crate::model::CROSS_DRIFT) && !j.drifted(), "{j:?}");
        assert_eq!(j.speed_index, Some(1.0));
        let j = w.judge(&at(6900.0), &at(2400.0));
        assert!(j.drifted(), "{j:?}");
        assert!((j.cross_per_ms.unwrap() - 4650.0).abs() < 1e-9);
        // Without the rate (servers on another host) nothing is judged of it.
        let none = Speeds { cross_per_ms: None, ..at(0.0) };
        let j = w.judge(&none, &none);
        assert_eq!((j.cross_per_ms, j.cross_index, j.drifted()), (None, None, false));
    }
}
