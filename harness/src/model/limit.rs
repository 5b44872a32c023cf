//! Who limited a round (`saturation`: server-bound, both-busy, client-bound, unsaturated) and why a round
//! was unsaturated: the scheduler states of the server's threads over the measured window, and the rule
//! that reads a limit from them (docs/methodology.md, "Saturation").

use serde::{Deserialize, Serialize};

use super::flag::Flag;

/// Who limited a round (a state stored as `saturation`; all but `server-bound` raise a flag of the same name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Saturation {
    /// The server's CPUs were at least `BUSY_THRESHOLD_PCT` busy: the number measures the server.
    ServerBound,
    /// The server's CPUs and the client's limit were both busy.
    BothBusy,
    /// The server was not busy while the client was: the round measured the client.
    ClientBound,
    /// Neither side was busy: the limit was elsewhere.
    Unsaturated,
}

impl Saturation {
    /// The name stored in a round's `saturation`: its flag's, or `server-bound`, which raises none.
    pub fn name(self) -> &'static str {
        self.flag().and_then(|flag| flag.known_name()).unwrap_or("server-bound")
    }

    /// The flag a round raises for it: none where the server was the limit.
    pub fn flag(self) -> Option<Flag> {
        match self {
            Saturation::ServerBound => None,
            Saturation::BothBusy => Some(Flag::BothBusy),
            Saturation::ClientBound => Some(Flag::ClientBound),
            Saturation::Unsaturated => Some(Flag::Unsaturated),
        }
    }
}

/// At or above this share of its CPUs the server is saturated (both-busy when the client's limit is at or
/// above it too); below it, with the client's limit at or above it, the round is client-bound; with
/// neither, unsaturated.
pub const BUSY_THRESHOLD_PCT: f64 = 90.0;

/// A round's saturation from the server's CPU share of the window and the client's limit, both in percent
/// (docs/methodology.md, "Saturation"): `server-bound`, `both-busy`, `client-bound` or `unsaturated`; none
/// when a figure it needs is absent. The states exclude each other: `client-bound` needs the server below
/// the threshold, `both-busy` at or above it.
pub fn saturation(server_pct: Option<f64>, client_limit_pct: Option<f64>) -> Option<Saturation> {
    let busy = |pct: f64| pct >= BUSY_THRESHOLD_PCT;
    match (server_pct, client_limit_pct) {
        (Some(server), Some(client)) if busy(server) && busy(client) => Some(Saturation::BothBusy),
        // The server's limit alone says whose figure it is; the client's, unread, cannot make it shared.
        (Some(server), _) if busy(server) => Some(Saturation::ServerBound),
        (Some(_), Some(client)) if busy(client) => Some(Saturation::ClientBound),
        (Some(_), Some(_)) => Some(Saturation::Unsaturated),
        _ => None,
    }
}

/// Thread-samples of the server's process tree by scheduler state (field 3 of /proc/<pid>/task/<tid>/stat),
/// counted at each sample of the measured window: a tree of 4 threads sampled 15 times gives 60.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadStates {
    /// Samples at which at least one thread was read.
    pub samples: u64,
    /// `R`: on a CPU or ready to run and waiting for one.
    pub running: u64,
    /// `S`: waiting for an event (a socket, a timer, a lock's futex).
    pub sleeping: u64,
    /// `D`: uninterruptible wait, mostly on disk I/O.
    pub blocked_io: u64,
    /// Any other state (stopped, traced, zombie, ...).
    pub other: u64,
}

impl ThreadStates {
    /// Adds one sample: the states of every thread read at one instant (nothing when none was read).
    pub fn add_sample(&mut self, states: impl IntoIterator<Item = char>) {
        let before = self.thread_samples();
        for state in states {
            match state {
                'R' => self.running += 1,
                'S' => self.sleeping += 1,
                'D' => self.blocked_io += 1,
                _ => self.other += 1,
            }
        }
        if self.thread_samples() > before {
            self.samples += 1;
        }
    }

    pub fn thread_samples(&self) -> u64 {
        self.running + self.sleeping + self.blocked_io + self.other
    }

    /// The mean number of threads in a state at one sample.
    fn mean(&self, count: u64) -> f64 {
        count as f64 / self.samples.max(1) as f64
    }
}

/// The requests in flight could not keep the server's CPUs busy: at most one per connection (times the
/// pipeline depth), no more than the server has CPUs.
pub const LIMIT_FEW_CONNECTIONS: &str = "few-connections";
/// The server's threads were ready to run for more time than they ran: something else had the CPUs.
pub const LIMIT_SERVER_RUNNABLE: &str = "server-runnable";
/// The server's threads waited on disk I/O (state D).
pub const LIMIT_SERVER_BLOCKED_IO: &str = "server-blocked-io";
/// The server's threads mostly slept (state S) while requests were outstanding: a timer, a lock, a
/// back-end, anything the server waits on without using the CPU.
pub const LIMIT_SERVER_SLEEPING: &str = "server-sleeping";
/// The round was paced by the client (a rate or a think time): neither side busy is what it asked for.
pub const LIMIT_PACED: &str = "paced";
/// The data fits none of the above, or the thread states could not be read.
pub const LIMIT_UNKNOWN: &str = "unknown";

/// Threads in state R on average over the window, as a share of the server's CPUs, that make an
/// unsaturated round `server-runnable` whatever else its threads did: by its threads' states the server
/// would have been server-bound (the same 90%), by its CPU time it was not, so it waited for CPUs that
/// something else had.
pub const RUNNABLE_SHARE_OF_CPUS: f64 = BUSY_THRESHOLD_PCT / 100.0;
/// Threads in state D on average over the window that make a round `server-blocked-io` whatever else its
/// threads did (a runtime's idle threads asleep would outweigh them).
pub const BLOCKED_IO_THREADS: f64 = 0.5;
/// Below this many threads on average, the largest part of the threads' time off a CPU names nothing: at
/// 10 samples a second, two samples of a 1.5 s round.
pub const MIN_PART_THREADS: f64 = 0.1;

/// What the rule of an unsaturated round reads.
#[derive(Debug, Clone, Copy)]
pub struct LimitInputs<'a> {
    pub threads: Option<&'a ThreadStates>,
    /// Connections times the pipeline depth: the most requests a closed loop has in flight.
    pub in_flight: usize,
    pub server_cpus: usize,
    /// The server's CPU time over the window's wall time: the threads on a CPU on average.
    pub cpus_used: Option<f64>,
    /// A rate or think-time round.
    pub paced: bool,
}

/// The limit of an unsaturated round (one whose server used less than 90% of its CPUs), the first rule
/// that holds.
pub fn unsaturated_limit(i: &LimitInputs) -> &'static str {
    if i.paced {
        return LIMIT_PACED;
    }
    if i.in_flight <= i.server_cpus {
        return LIMIT_FEW_CONNECTIONS;
    }
    let (Some(t), Some(used)) = (i.threads.filter(|t| t.samples > 0), i.cpus_used) else { return LIMIT_UNKNOWN };
    let (ready, blocked, asleep) = (t.mean(t.running), t.mean(t.blocked_io), t.mean(t.sleeping));
    if ready >= RUNNABLE_SHARE_OF_CPUS * i.server_cpus as f64 {
        return LIMIT_SERVER_RUNNABLE;
    }
    if blocked >= BLOCKED_IO_THREADS {
        return LIMIT_SERVER_BLOCKED_IO;
    }
    // The threads' time off a CPU, in threads on average: ready beyond the CPU time they got, in D, in S.
    // The largest part names the limit (the first on a tie).
    let parts = [(ready - used, LIMIT_SERVER_RUNNABLE), (blocked, LIMIT_SERVER_BLOCKED_IO), (asleep, LIMIT_SERVER_SLEEPING)];
    let (largest, limit) = parts.into_iter().fold((0.0, LIMIT_UNKNOWN), |best, part| if part.0 > best.0 { part } else { best });
    if largest >= MIN_PART_THREADS {
        limit
    } else {
        LIMIT_UNKNOWN
    }
}

/// How the reports print a limit: `server-sleeping` as "server sleeping".
pub fn limit_words(limit: &str) -> String {
    limit.replace('-', " ")
}

/// How many of a measurement's unsaturated rounds had one limit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LimitCount {
    pub limit: String,
    pub rounds: usize,
}

/// The limits of some rounds, most rounds first (then by name).
pub fn count_limits<'a>(limits: impl Iterator<Item = &'a str>) -> Vec<LimitCount> {
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    limits.for_each(|l| *counts.entry(l).or_default() += 1);
    let mut out: Vec<LimitCount> = counts.into_iter().map(|(limit, rounds)| LimitCount { limit: limit.into(), rounds }).collect();
    out.sort_by_key(|c| std::cmp::Reverse(c.rounds));
    out
}

/// "server sleeping" when every round had the same limit, else "server sleeping 2, unknown 1".
pub fn limits_words(counts: &[LimitCount]) -> String {
    match counts {
        [one] => limit_words(&one.limit),
        _ => counts.iter().map(|c| format!("{} {}", limit_words(&c.limit), c.rounds)).collect::<Vec<_>>().join(", "),
    }
}

/// summary.csv's form: "server-sleeping", or "server-sleeping:2;unknown:1".
pub fn limits_cell(counts: &[LimitCount]) -> String {
    match counts {
        [one] => one.limit.clone(),
        _ => counts.iter().map(|c| format!("{}:{}", c.limit, c.rounds)).collect::<Vec<_>>().join(";"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn states(samples: u64, running: u64, sleeping: u64, blocked_io: u64) -> ThreadStates {
        ThreadStates { samples, running, sleeping, blocked_io, other: 0 }
    }

    /// The limit on a server of two CPUs that used `used` of them.
    fn limit(threads: Option<ThreadStates>, in_flight: usize, used: f64) -> &'static str {
        unsaturated_limit(&LimitInputs { threads: threads.as_ref(), in_flight, server_cpus: 2, cpus_used: Some(used), paced: false })
    }

    #[test]
    fn saturation_names_the_side_at_its_limit_and_both_when_both_are() {
        assert_eq!(saturation(Some(95.0), Some(80.0)), Some(Saturation::ServerBound));
        assert_eq!(saturation(Some(95.0), Some(92.0)), Some(Saturation::BothBusy));
        assert_eq!(saturation(Some(90.0), Some(90.0)), Some(Saturation::BothBusy), "the threshold itself is busy");
        assert_eq!(saturation(Some(89.9), Some(95.0)), Some(Saturation::ClientBound), "client-bound and both-busy exclude each other");
        assert_eq!(saturation(Some(50.0), Some(50.0)), Some(Saturation::Unsaturated));
        assert_eq!(saturation(Some(95.0), None), Some(Saturation::ServerBound), "an unread client cannot make a round shared");
        assert_eq!(saturation(None, Some(95.0)), None, "never on a missing server figure");
        assert_eq!(saturation(Some(50.0), None), None);
    }

    #[test]
    fn counts_thread_samples_by_state() {
        let mut t = ThreadStates::default();
        t.add_sample("RSSD".chars());
        t.add_sample("SZt".chars());
        t.add_sample("".chars());
        assert_eq!(t, ThreadStates { samples: 2, running: 1, sleeping: 3, blocked_io: 1, other: 2 });
        assert_eq!(t.thread_samples(), 7);
    }

    #[test]
    fn the_first_rule_that_holds_names_the_limit() {
        // One thread asleep at 18 of 20 samples, with 4 connections on 2 CPUs.
        let asleep = states(20, 2, 18, 0);
        assert_eq!(limit(Some(asleep), 4, 0.1), LIMIT_SERVER_SLEEPING);
        // The same with two connections on the two CPUs: no more requests than CPUs.
        assert_eq!(limit(Some(asleep), 2, 0.1), LIMIT_FEW_CONNECTIONS);
        // Two threads ready to run at 19 of 20 samples on 2 CPUs, and yet the server was below 90%.
        assert_eq!(limit(Some(states(20, 38, 2, 0)), 8, 1.5), LIMIT_SERVER_RUNNABLE);
        // Ready more than asleep, beyond the CPU time it got: waiting for a CPU is the largest part.
        assert_eq!(limit(Some(states(20, 12, 8, 0)), 8, 0.1), LIMIT_SERVER_RUNNABLE);
        // The same share ready, but on a CPU for most of it: asleep is the largest part.
        assert_eq!(limit(Some(states(20, 12, 8, 0)), 8, 0.5), LIMIT_SERVER_SLEEPING);
        // Twenty idle threads asleep beside one thread in D at every sample.
        assert_eq!(limit(Some(states(20, 4, 400, 20)), 8, 0.2), LIMIT_SERVER_BLOCKED_IO);
        // One thread on a CPU at every sample, neither waiting nor asleep: the data names nothing.
        assert_eq!(limit(Some(states(20, 20, 1, 0)), 8, 0.98), LIMIT_UNKNOWN);
        // States never read: unknown.
        assert_eq!(limit(None, 8, 0.1), LIMIT_UNKNOWN);
        assert_eq!(limit(Some(ThreadStates::default()), 8, 0.1), LIMIT_UNKNOWN);
        let paced = LimitInputs { threads: Some(&asleep), in_flight: 1, server_cpus: 2, cpus_used: Some(0.1), paced: true };
        assert_eq!(unsaturated_limit(&paced), LIMIT_PACED);
        assert_eq!(limit_words(LIMIT_SERVER_BLOCKED_IO), "server blocked io");
    }

    #[test]
    fn limits_are_counted_most_rounds_first() {
        let counts = count_limits(["unknown", "server-sleeping", "server-sleeping"].into_iter());
        assert_eq!(limits_words(&counts), "server sleeping 2, unknown 1");
        assert_eq!(limits_cell(&counts), "server-sleeping:2;unknown:1");
        let one = count_limits(std::iter::once(LIMIT_FEW_CONNECTIONS));
        assert_eq!((limits_words(&one).as_str(), limits_cell(&one).as_str()), ("few connections", "few-connections"));
        assert_eq!(limits_words(&[]), "");
    }
}
