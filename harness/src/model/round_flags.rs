//! The rule that raises a round's flags from its figures, in one pure function: the runner gathers the
//! facts, this judges them (`cpu-drift` alone is judged from the speed probes around the round, after it).

use super::closes::close_flags;
use super::flag::Flag;
use super::limit::Saturation;
use super::round_load::RoundLoad;

/// Foreign or steal time above this share of a CPU's window disturbs a round...
pub const DISTURBED_THRESHOLD_PCT: f64 = 3.0;
/// ... when it is also more than this many clock ticks: /proc counts in ticks (10 ms), and the difference
/// of two counters read at both ends of a window can be off by two without anything having run.
pub const DISTURBED_MIN_TICKS: f64 = 2.0;
/// Below this Jain's index the round is unfair (0.5 is half the connections served, the other half
/// starved; a fair closed-loop round is above 0.95 on this machine).
pub const UNFAIR_JAIN: f64 = 0.8;

/// What a round's flags are judged from.
#[derive(Debug, Clone, Copy)]
pub struct RoundFacts<'a> {
    /// The client's figures of the round.
    pub load: &'a RoundLoad,
    /// Whether the server's CPU time could be read.
    pub server_probed: bool,
    /// Who limited the round, where both sides were measured.
    pub saturation: Option<Saturation>,
    /// The client paced the round (a rate, think time): neither side busy is its normal state.
    pub paced: bool,
    /// The rate asked of an open-loop round, and the share of it that counts as held.
    pub rate: Option<(f64, f64)>,
    /// Foreign time on the server's CPUs and steal, each as a share of the window, where read.
    pub foreign_pct: Option<f64>,
    pub steal_pct: Option<f64>,
    /// The window's wall time, the server's CPUs and /proc's clock ticks a second.
    pub wall_s: f64,
    pub server_cpus: usize,
    pub ticks_per_s: f64,
}

/// The round's flags, in the order a round lists them.
pub fn judge(f: &RoundFacts) -> Vec<Flag> {
    let load = f.load;
    let mut flags = Vec::new();
    if !f.server_probed {
        flags.push(Flag::ServerUnprobed);
    }
    // A paced round's `unsaturated` is recorded as its saturation, not raised.
    if let Some(flag) = f.saturation.filter(|s| !(f.paced && *s == Saturation::Unsaturated)).and_then(Saturation::flag) {
        flags.push(flag);
    }
    if load.errors.total() > 0 {
        flags.push(Flag::Errors);
    }
    flags.extend(close_flags(load.keepalive_lost, load.server_closes));
    if load.unserved_at_start.is_some_and(|n| n > 0) {
        flags.push(Flag::RampIncomplete);
    }
    if load.per_connection.is_some_and(|s| s.starved > 0 || s.jain.is_some_and(|j| j < UNFAIR_JAIN)) {
        flags.push(Flag::Unfair);
    }
    if f.rate.is_some_and(|(rate, held)| load.requests_per_s() < held * rate) {
        flags.push(Flag::RateNotHeld);
    }
    // A share of the window, and more than the counters' rounding (a 0.5 s round is 50 ticks a CPU, so two
    // ticks of rounding alone would be 4%).
    let beyond = |pct: Option<f64>, cpus: usize| {
        pct.is_some_and(|p| p > DISTURBED_THRESHOLD_PCT && p / 100.0 * f.wall_s * cpus as f64 * f.ticks_per_s > DISTURBED_MIN_TICKS)
    };
    if beyond(f.foreign_pct, f.server_cpus.max(1)) || beyond(f.steal_pct, 1) {
        flags.push(Flag::Disturbed);
    }
    if load.interrupted {
        flags.push(Flag::Interrupted);
    }
    flags
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::round_load::{ConnectionSpread, ErrorCounts, StatusCounts};
    use crate::stats::histogram::new_latency_histogram;

    fn quiet(load: &RoundLoad) -> RoundFacts<'_> {
        RoundFacts {
            load,
            server_probed: true,
            saturation: Some(Saturation::ServerBound),
            paced: false,
            rate: None,
            foreign_pct: Some(0.0),
            steal_pct: Some(0.0),
            wall_s: 0.5,
            server_cpus: 1,
            ticks_per_s: 100.0,
        }
    }

    /// A plain round of 100k req/s over 64 connections, changed by `change`.
    fn load_with(change: impl Fn(&mut RoundLoad)) -> RoundLoad {
        let mut load = RoundLoad {
            requests: 50_000,
            reconnects: 0,
            keepalive_lost: 0,
            server_closes: 0,
            keepalive_lost_excludes_server_closes: true,
            connections_opened: 64,
            backlog: 0,
            ramp_s: None,
            unserved_at_start: Some(0),
            per_connection: None,
            connections_served: Some(64),
            errors: ErrorCounts::default(),
            status: StatusCounts { s2xx: 50_000, ..StatusCounts::default() },
            duration_s: 0.5,
            bytes_read: 0,
            bytes_written: 0,
            response_bytes: 0,
            latency: new_latency_histogram(),
            latency_uncorrected: None,
            intervals: None,
            timeline: None,
            client_cpu_s: 0.0,
            thread_cpu_s: vec![],
            client_poll_s: 0.0,
            thread_poll_s: vec![],
            client_user_s: 0.0,
            client_system_s: 0.0,
            client_voluntary_switches: 0,
            client_involuntary_switches: 0,
            client_migrations: None,
            client_system_calls: 0,
            poll: "sleep".into(),
            counter: None,
            threads: 1,
            connections: 64,
            interrupted: false,
            io: "io_uring".into(),
        };
        change(&mut load);
        load
    }

    fn spread(starved: u64, jain: f64) -> ConnectionSpread {
        ConnectionSpread { min: 0, p1: 0, median: 780, max: 900, starved, jain: Some(jain) }
    }

    #[test]
    fn every_flag_but_cpu_drift_is_raised_by_its_own_fact_and_no_other() {
        let plain = load_with(|_| ());
        assert_eq!(judge(&quiet(&plain)), Vec::<Flag>::new(), "a server-bound round with nothing unusual");
        let errors = load_with(|l| l.errors.read = 3);
        let lost = load_with(|l| l.keepalive_lost = 2);
        let closes = load_with(|l| l.server_closes = 8);
        let ramp = load_with(|l| l.unserved_at_start = Some(48));
        let starved = load_with(|l| l.per_connection = Some(spread(1, 0.99)));
        let uneven = load_with(|l| l.per_connection = Some(spread(0, 0.5)));
        let cut = load_with(|l| l.interrupted = true);
        let cases: Vec<(&str, RoundFacts, Vec<Flag>)> = vec![
            ("no CPU time read", RoundFacts { server_probed: false, ..quiet(&plain) }, vec![Flag::ServerUnprobed]),
            ("client busy, server not", RoundFacts { saturation: Some(Saturation::ClientBound), ..quiet(&plain) }, vec![Flag::ClientBound]),
            ("both busy", RoundFacts { saturation: Some(Saturation::BothBusy), ..quiet(&plain) }, vec![Flag::BothBusy]),
            ("neither busy", RoundFacts { saturation: Some(Saturation::Unsaturated), ..quiet(&plain) }, vec![Flag::Unsaturated]),
            ("neither busy, paced", RoundFacts { saturation: Some(Saturation::Unsaturated), paced: true, ..quiet(&plain) }, vec![]),
            ("one side unread", RoundFacts { saturation: None, ..quiet(&plain) }, vec![]),
            ("failed requests", quiet(&errors), vec![Flag::Errors]),
            ("requests lost to a close", quiet(&lost), vec![Flag::KeepaliveLost]),
            ("clean closes", quiet(&closes), vec![Flag::ServerCloses]),
            ("connections unserved when the window opened", quiet(&ramp), vec![Flag::RampIncomplete]),
            ("a starved connection", quiet(&starved), vec![Flag::Unfair]),
            ("Jain's index below 0.8", quiet(&uneven), vec![Flag::Unfair]),
            ("a rate not held", RoundFacts { rate: Some((110_000.0, 0.98)), ..quiet(&plain) }, vec![Flag::RateNotHeld]),
            ("a rate held within 2%", RoundFacts { rate: Some((101_000.0, 0.98)), ..quiet(&plain) }, vec![]),
            ("foreign time of 10%", RoundFacts { foreign_pct: Some(10.0), ..quiet(&plain) }, vec![Flag::Disturbed]),
            ("steal of 10%", RoundFacts { steal_pct: Some(10.0), ..quiet(&plain) }, vec![Flag::Disturbed]),
            // 4% of a 0.5 s window is 2 ticks: the counters' rounding, not a disturbance.
            ("steal within the rounding", RoundFacts { steal_pct: Some(4.0), ..quiet(&plain) }, vec![]),
            ("steal of 3% on a long round", RoundFacts { steal_pct: Some(3.0), wall_s: 10.0, ..quiet(&plain) }, vec![]),
            ("steal of 4% on a long round", RoundFacts { steal_pct: Some(4.0), wall_s: 10.0, ..quiet(&plain) }, vec![Flag::Disturbed]),
            ("interrupted", quiet(&cut), vec![Flag::Interrupted]),
        ];
        for (what, facts, flags) in cases {
            assert_eq!(judge(&facts), flags, "{what}");
        }
    }

    #[test]
    fn flags_come_in_the_order_a_round_lists_them() {
        let load = load_with(|l| {
            l.errors.read = 1;
            l.keepalive_lost = 1;
            l.server_closes = 1;
            l.unserved_at_start = Some(1);
            l.interrupted = true;
        });
        let facts = RoundFacts { server_probed: false, saturation: Some(Saturation::ClientBound), steal_pct: Some(50.0), ..quiet(&load) };
        let order: Vec<Flag> = Flag::KNOWN.into_iter().filter(|f| judge(&facts).contains(f)).collect();
        assert_eq!(judge(&facts), order);
        assert_eq!(order.len(), 8);
    }
}
