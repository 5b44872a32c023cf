//! How the server ended keep-alive connections in a round: the two flags that tell a loss from a clean
//! close, their judgement, and the reading of rounds stored when `keepalive_lost` counted both.

use super::flag::Flag;
use super::round_load::RoundLoad;

/// The flags of a round in which the server ended `keepalive_lost` connections with requests outstanding
/// and closed `server_closes` cleanly, in the order a round lists them.
pub fn close_flags(keepalive_lost: u64, server_closes: u64) -> impl Iterator<Item = Flag> {
    [(Flag::KeepaliveLost, keepalive_lost), (Flag::ServerCloses, server_closes)].into_iter().filter(|(_, n)| *n > 0).map(|(flag, _)| flag)
}

/// A round's load and flags as stored when `keepalive_lost` included `server_closes` (its load has no
/// `keepalive_lost_excludes_server_closes`): the clean closes are taken out of it, and its `keepalive-lost`
/// flag, raised on either, is judged again in its place. Such a run never counted a close without
/// `Connection: close` that lost requests (they were `read` errors alone), so what is left is a floor.
/// Runs stored before `server_closes` existed cannot be split and keep their count.
pub fn separate_closes(load: &mut RoundLoad, flags: &mut Vec<Flag>) {
    if load.keepalive_lost_excludes_server_closes {
        return;
    }
    load.keepalive_lost = load.keepalive_lost.saturating_sub(load.server_closes);
    load.keepalive_lost_excludes_server_closes = true;
    if let Some(at) = flags.iter().position(|f| *f == Flag::KeepaliveLost) {
        let judged: Vec<Flag> = close_flags(load.keepalive_lost, load.server_closes).collect();
        flags.splice(at..=at, judged);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loss_and_a_clean_close_raise_flags_of_their_own() {
        let flags = |lost, closes| close_flags(lost, closes).collect::<Vec<_>>();
        assert_eq!(flags(0, 0), Vec::<Flag>::new(), "a keep-alive round the server never closed");
        assert_eq!(flags(0, 8), [Flag::ServerCloses], "nginx at its keepalive_requests: nothing lost");
        assert_eq!(flags(3, 0), [Flag::KeepaliveLost]);
        assert_eq!(flags(3, 8), [Flag::KeepaliveLost, Flag::ServerCloses]);
    }
}
