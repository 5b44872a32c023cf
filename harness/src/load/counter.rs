//! `counter`'s proof of no lost update: every value a server returns for a key is kept (one bit each), so
//! a value returned twice is seen, and the values' range is held against the requests that could have
//! taken a number.

use serde::{Deserialize, Serialize};

/// The values one worker received, per key.
#[derive(Default)]
pub(super) struct CounterTally {
    /// Per key, a bit per value received (bit v of word v / 64).
    seen: Vec<Vec<u64>>,
    /// Values received that the same worker had received before for that key.
    repeated: u64,
    values: u64,
}

impl CounterTally {
    /// A response said counter `key` is now `value`; false when this worker had received it before.
    #[inline]
    pub fn record(&mut self, key: usize, value: u64) -> bool {
        if self.seen.len() <= key {
            self.seen.resize_with(key + 1, Vec::new);
        }
        let bits = &mut self.seen[key];
        let (word, bit) = ((value / 64) as usize, 1u64 << (value % 64));
        if bits.len() <= word {
            bits.resize((word + 1).next_power_of_two(), 0);
        }
        self.values += 1;
        if bits[word] & bit != 0 {
            self.repeated += 1;
            return false;
        }
        bits[word] |= bit;
        true
    }

    /// Adds `other`'s values: one that both received is repeated.
    pub fn absorb(&mut self, other: CounterTally) {
        self.repeated += other.repeated;
        self.values += other.values;
        if self.seen.len() < other.seen.len() {
            self.seen.resize_with(other.seen.len(), Vec::new);
        }
        for (mine, theirs) in self.seen.iter_mut().zip(other.seen) {
            if mine.len() < theirs.len() {
                mine.resize(theirs.len(), 0);
            }
            for (m, t) in mine.iter_mut().zip(theirs) {
                self.repeated += u64::from((*m & t).count_ones());
                *m |= t;
            }
        }
    }

    /// What the values show, given the requests sent (each may have taken a number whether or not its
    /// answer came back) and the most a client before this one can have left in flight.
    pub fn report(&self, sent: u64, earlier_in_flight: u64) -> CounterReport {
        let mut gaps = 0;
        let mut keys = 0;
        for bits in &self.seen {
            let Some(low) = bits.iter().position(|w| *w != 0) else { continue };
            let high = bits.iter().rposition(|w| *w != 0).expect("a word is set");
            let lowest = low as u64 * 64 + u64::from(bits[low].trailing_zeros());
            let highest = high as u64 * 64 + 63 - u64::from(bits[high].leading_zeros());
            let distinct: u64 = bits.iter().map(|w| u64::from(w.count_ones())).sum();
            gaps += highest - lowest + 1 - distinct;
            keys += 1;
        }
        let unanswered = sent.saturating_sub(self.values);
        let slack = unanswered + earlier_in_flight;
        CounterReport { keys, values: self.values, repeated: self.repeated, gaps, slack, lost_updates: self.repeated + gaps.saturating_sub(slack) }
    }
}

/// What `counter`'s answers showed over a whole run (warm-up included).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterReport {
    /// Keys answered at least once.
    pub keys: u64,
    /// Values received.
    pub values: u64,
    /// Values received more than once for one key: two increments that returned one number.
    pub repeated: u64,
    /// Numbers missing between a key's lowest and highest value received.
    pub gaps: u64,
    /// How many numbers may be missing without an update being lost: requests sent without an answer
    /// (the server may have counted them) plus what an earlier client can have left in flight.
    pub slack: u64,
    /// `repeated` plus the gaps beyond `slack`: increments the server lost. Each is also a `mismatch` error
    /// (a value one thread had seen before is one as it arrives; across threads, and gaps, at the end).
    pub lost_updates: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_returned_twice_is_a_lost_update_within_and_across_workers() {
        let mut a = CounterTally::default();
        for v in [1, 2, 3, 3] {
            a.record(0, v);
        }
        let mut b = CounterTally::default();
        for v in [4, 2, 5] {
            b.record(0, v);
        }
        b.record(7, 1000);
        a.absorb(b);
        let r = a.report(8, 0);
        assert_eq!((r.keys, r.values, r.repeated, r.gaps), (2, 8, 2, 0));
        assert_eq!(r.lost_updates, 2);
    }

    #[test]
    fn gaps_are_lost_only_beyond_the_unanswered_requests() {
        let mut t = CounterTally::default();
        for v in (10..20).chain(22..30) {
            t.record(3, v);
        }
        assert_eq!(t.report(18, 0).gaps, 2);
        assert_eq!(t.report(18, 0).lost_updates, 2, "every request answered: 2 numbers were never given out");
        assert_eq!(t.report(20, 0).lost_updates, 0, "two requests unanswered may hold them");
        assert_eq!(t.report(18, 2).lost_updates, 0, "or a client before this one");
    }
}
