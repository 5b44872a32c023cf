//! One thread's interval histograms while it measures: the responses of the current interval are recorded
//! into one pre-allocated histogram; when the clock passes the interval's end (one comparison per turn of
//! the loop, none per response) the interval is encoded into a buffer reserved up front, added to the
//! round's histogram, and the histogram is cleared for the next one. No lock, and no allocation per
//! response.

use base64::Engine as _;
use hdrhistogram::serialization::{Serializer, V2Serializer};
use hdrhistogram::Histogram;

use crate::stats::histogram::new_latency_histogram;
use crate::stats::intervals::{Interval, Intervals};

/// How long each interval is unless `--interval` says.
pub const DEFAULT_INTERVAL: std::time::Duration = std::time::Duration::from_millis(100);
/// The shortest interval: shorter ones cost the thread a histogram's encoding too often.
pub const MIN_INTERVAL: std::time::Duration = std::time::Duration::from_millis(1);
/// Encoded bytes reserved per expected interval; a fuller histogram makes the buffer grow at a rollover.
const RESERVED_BYTES_PER_INTERVAL: usize = 512;

/// A closed interval of this thread: its place, counts and where its encoding is in `bytes`.
struct Closed {
    index: usize,
    requests: u64,
    errors: u64,
    bytes: std::ops::Range<usize>,
}

pub(super) struct IntervalRecorder {
    length_ns: u64,
    /// The opening of the window, the same for every thread.
    origin_ns: u64,
    index: usize,
    /// When the current interval ends: the one comparison of the loop.
    pub end_ns: u64,
    /// The current interval's latencies (the hot path records here).
    pub current: Histogram<u64>,
    /// The thread's counts when the current interval began.
    requests_before: u64,
    errors_before: u64,
    closed: Vec<Closed>,
    bytes: Vec<u8>,
    serializer: V2Serializer,
}

impl IntervalRecorder {
    /// A recorder that expects about `expected` intervals (their encodings are reserved up front). Where the
    /// window's length is not known ahead (`-n`, expected 0), the two buffers grow at a rollover, by doubling:
    /// an allocation every so many intervals, never on a response.
    pub fn new(length: std::time::Duration, expected: usize) -> IntervalRecorder {
        IntervalRecorder {
            length_ns: (length.as_nanos() as u64).max(1),
            origin_ns: 0,
            index: 0,
            end_ns: u64::MAX,
            current: new_latency_histogram(),
            requests_before: 0,
            errors_before: 0,
            closed: Vec::with_capacity(expected + 2),
            bytes: Vec::with_capacity((expected + 2) * RESERVED_BYTES_PER_INTERVAL),
            serializer: V2Serializer::new(),
        }
    }

    /// The window opened at `origin_ns` (for every thread); this thread records from `now`, with these counts.
    pub fn start(&mut self, origin_ns: u64, now: u64, requests: u64, errors: u64) {
        self.origin_ns = origin_ns.min(now);
        self.begin(now, requests, errors);
    }

    fn begin(&mut self, now: u64, requests: u64, errors: u64) {
        self.index = ((now - self.origin_ns) / self.length_ns) as usize;
        self.end_ns = self.origin_ns + (self.index as u64 + 1) * self.length_ns;
        self.requests_before = requests;
        self.errors_before = errors;
    }

    /// Closes the current interval with the thread's counts now, adds its latencies to the round's
    /// histogram `round`, and begins the one `now` falls in (intervals in which nothing happened are
    /// filled in at the merge).
    #[cold]
    pub fn roll(&mut self, now: u64, requests: u64, errors: u64, round: &mut Histogram<u64>) {
        self.close(requests, errors, round);
        self.begin(now, requests, errors);
    }

    /// Closes the current interval: the window closed.
    pub fn close(&mut self, requests: u64, errors: u64, round: &mut Histogram<u64>) {
        let (requests, errors) = (requests - self.requests_before, errors - self.errors_before);
        if requests == 0 && errors == 0 && self.current.is_empty() {
            return;
        }
        let at = self.bytes.len();
        self.serializer.serialize(&self.current, &mut self.bytes).expect("serializing into a Vec cannot fail");
        self.closed.push(Closed { index: self.index, requests, errors, bytes: at..self.bytes.len() });
        round.add(&self.current).expect("interval and round histograms share their bounds");
        self.current.reset();
        self.requests_before += requests;
        self.errors_before += errors;
    }

    /// The thread's intervals, every one from the first to its last, empty where nothing happened. With
    /// `units_per_request` above 1 (echo stream) the counts are bytes, turned into messages.
    pub fn into_intervals(self, units_per_request: u64) -> Intervals {
        let mut out = Intervals::new(self.length_ns as f64 / 1e6);
        for c in &self.closed {
            if out.each.len() <= c.index {
                out.each.resize_with(c.index + 1, Interval::empty);
            }
            // The bytes are the V2 encoding already: base64 of them is what `to_base64` writes.
            let latency = base64::engine::general_purpose::STANDARD.encode(&self.bytes[c.bytes.clone()]);
            out.each[c.index] = Interval { requests: c.requests / units_per_request.max(1), errors: c.errors, latency };
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const MS: u64 = 1_000_000;

    #[test]
    fn a_completion_in_a_new_interval_closes_the_last_and_the_sum_is_the_round() {
        let mut r = IntervalRecorder::new(Duration::from_millis(100), 4);
        let mut round = new_latency_histogram();
        let origin = 1_000 * MS;
        r.start(origin, origin + 5 * MS, 0, 0);
        assert_eq!(r.end_ns, origin + 100 * MS);
        r.current.record(2 * MS).unwrap();
        r.current.record(3 * MS).unwrap();
        // 250 ms in: intervals 0 closes with 2 responses and 1 error, interval 1 saw nothing, 2 begins.
        r.roll(origin + 250 * MS, 2, 1, &mut round);
        assert_eq!(r.end_ns, origin + 300 * MS);
        assert!(r.current.is_empty(), "cleared for the next interval");
        assert_eq!(round.len(), 2, "a closed interval is in the round's histogram");
        r.current.record(200 * MS).unwrap();
        r.close(3, 1, &mut round);
        assert_eq!(round.len(), 3);
        let s = r.into_intervals(1);
        assert_eq!(s.length_ms, 100.0);
        assert_eq!(s.each.len(), 3);
        assert_eq!((s.each[0].requests, s.each[0].errors), (2, 1));
        assert_eq!(s.each[1], Interval::empty());
        assert_eq!((s.each[2].requests, s.each[2].errors), (1, 0));
        assert!(s.each[2].summary().min_ns >= 199 * MS);
        assert!(s.each[0].summary().max_ns < 4 * MS);
        assert_eq!(s.sum().unwrap(), round, "the intervals add up to the round exactly");
    }

    #[test]
    fn a_thread_that_opens_late_starts_in_the_interval_of_its_opening() {
        let mut r = IntervalRecorder::new(Duration::from_millis(10), 1);
        let mut round = new_latency_histogram();
        r.start(0, 25 * MS, 7, 0);
        r.current.record(MS).unwrap();
        r.close(8, 0, &mut round);
        let s = r.into_intervals(1);
        assert_eq!(s.each.len(), 3);
        assert_eq!(s.each[2].requests, 1, "counted from the thread's own start");
        assert_eq!(s.each[0].requests + s.each[1].requests, 0);
    }

    #[test]
    fn stream_bytes_become_messages() {
        let mut r = IntervalRecorder::new(Duration::from_millis(100), 1);
        let mut round = new_latency_histogram();
        r.start(0, 0, 0, 0);
        r.close(4096, 0, &mut round);
        assert_eq!(r.into_intervals(1024).each[0].requests, 4);
    }
}
