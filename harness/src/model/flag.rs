//! A round's flags: what was unusual about it, each stored in run.json under the name printed in the
//! tables (`client-bound`, `disturbed`, ...), and the one rule that raises them from the round's figures.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One flag of a round.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Flag {
    /// The server was not busy while the client was: the round measured the client.
    ClientBound,
    /// The server's CPUs and the client's limit were both busy (`limit::BUSY_THRESHOLD_PCT`): the figure
    /// belongs to both sides, and a faster client could have drawn more from the server (or not).
    BothBusy,
    /// Neither the server nor the client was busy: the limit was elsewhere (too few connections, a server
    /// that sleeps or waits on a lock, the network).
    Unsaturated,
    /// Rate mode: the valid responses per second fell short of the rate asked by more than
    /// `1 - load::search::RATE_HELD_SHARE` (Lancet's rule: within 2%): the server (or the client) could not
    /// hold the rate, and the latency figures are those of an overloaded system, not of the rate asked.
    RateNotHeld,
    /// The measured window opened with connections never served: the ramp's limit passed while the server
    /// was still accepting or answering its first requests, and the round ranks a server not yet in
    /// steady state.
    RampIncomplete,
    /// The connections were served unevenly: some got nothing in the window, or Jain's index over their
    /// responses was below `UNFAIR_JAIN`.
    Unfair,
    /// Some requests failed.
    Errors,
    /// The round was cut short by Ctrl-C.
    Interrupted,
    /// The server's process tree could not be read from /proc: its CPU and memory are absent, not zero.
    ServerUnprobed,
    /// Something else used the server's CPUs, or the hypervisor took them (steal), for more than
    /// `DISTURBED_THRESHOLD_PCT` of the window: the round is kept in run.json but left out of the summary.
    Disturbed,
    /// The CPUs ran at a speed more than `DRIFT_THRESHOLD` away from the run's median around this round
    /// (the speed probe). A warning, not a verdict: the round stays in the summary (on the machines this
    /// was tuned on the probe beside a round did not predict its req/s well enough to judge it;
    /// docs/methodology.md).
    CpuDrift,
    /// The server ended keep-alive connections with requests outstanding (a close, after `Connection:
    /// close` or without it, or a reset): those requests were lost (errors), and the figure includes the
    /// cost of reconnecting.
    KeepaliveLost,
    /// The server closed keep-alive connections cleanly, after a complete response with nothing
    /// outstanding (a keep-alive limit such as nginx's `keepalive_requests`, an idle timeout,
    /// `Connection: close`): no request was lost, but the figure includes the cost of reconnecting, which
    /// a keep-alive benchmark does not mean to measure.
    ServerCloses,
    /// A flag this version does not know, read from a run stored by another: kept as it was written.
    Other(String),
}

impl Flag {
    /// Every flag this version raises, in the order a round lists them.
    pub const KNOWN: [Flag; 13] = [
        Flag::ServerUnprobed,
        Flag::ClientBound,
        Flag::BothBusy,
        Flag::Unsaturated,
        Flag::Errors,
        Flag::KeepaliveLost,
        Flag::ServerCloses,
        Flag::RampIncomplete,
        Flag::Unfair,
        Flag::RateNotHeld,
        Flag::Disturbed,
        Flag::Interrupted,
        Flag::CpuDrift,
    ];

    /// The name in run.json, the tables and the documentation.
    pub fn name(&self) -> &str {
        match self {
            Flag::Other(name) => name,
            known => known.known_name().expect("every flag but Other has a name of its own"),
        }
    }

    /// The name of a flag this version raises; none for `Other`.
    pub fn known_name(&self) -> Option<&'static str> {
        Some(match self {
            Flag::ClientBound => "client-bound",
            Flag::BothBusy => "both-busy",
            Flag::Unsaturated => "unsaturated",
            Flag::RateNotHeld => "rate-not-held",
            Flag::RampIncomplete => "ramp-incomplete",
            Flag::Unfair => "unfair",
            Flag::Errors => "errors",
            Flag::Interrupted => "interrupted",
            Flag::ServerUnprobed => "server-unprobed",
            Flag::Disturbed => "disturbed",
            Flag::CpuDrift => "cpu-drift",
            Flag::KeepaliveLost => "keepalive-lost",
            Flag::ServerCloses => "server-closes",
            Flag::Other(_) => return None,
        })
    }

    /// The flag of that name; `Other` for a name this version does not raise.
    pub fn named(name: &str) -> Flag {
        Flag::KNOWN.into_iter().find(|f| f.name() == name).unwrap_or_else(|| Flag::Other(name.to_string()))
    }
}

impl fmt::Display for Flag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Flag {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Flag {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Flag, D::Error> {
        String::deserialize(d).map(|name| Flag::named(&name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_flag_is_stored_under_the_name_runs_have_always_used() {
        let stored = [
            "server-unprobed",
            "client-bound",
            "both-busy",
            "unsaturated",
            "errors",
            "keepalive-lost",
            "server-closes",
            "ramp-incomplete",
            "unfair",
            "rate-not-held",
            "disturbed",
            "interrupted",
            "cpu-drift",
        ];
        for (flag, name) in Flag::KNOWN.iter().zip(stored) {
            assert_eq!(serde_json::to_string(flag).unwrap(), format!("\"{name}\""));
            assert_eq!(serde_json::from_str::<Flag>(&format!("\"{name}\"")).unwrap(), *flag);
        }
    }

    #[test]
    fn a_flag_of_another_version_is_read_and_written_back_as_it_was() {
        let flag: Flag = serde_json::from_str("\"outlier\"").unwrap();
        assert_eq!(flag, Flag::Other("outlier".into()));
        assert_eq!(serde_json::to_string(&flag).unwrap(), "\"outlier\"");
    }
}
