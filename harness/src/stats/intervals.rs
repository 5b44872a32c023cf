//! A round cut into equal intervals of its measured window: each interval's responses, errors and latency
//! histogram, as HdrHistogram's interval logs keep them (`HistogramLogWriter`), stored like a round's own
//! histogram (HdrHistogram V2, base64). Interval i covers [i × length, (i + 1) × length) from the window's
//! opening; the last one ends with the window and may be shorter. Every recorded latency is in exactly one
//! interval, so the intervals' histograms add up to the round's.

use std::time::Duration;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::histogram::{from_base64, new_latency_histogram, to_base64, LatencySummary};

/// One interval of a round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Valid responses completed in the interval (what req/s counts).
    pub requests: u64,
    /// Errors of every class counted in the interval.
    pub errors: u64,
    /// The latencies of those responses, in ns (in rate mode from each request's intended send time):
    /// HdrHistogram V2, base64, as the round's `latency`.
    pub latency: String,
}

/// A round's intervals, in order from the window's opening.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Intervals {
    /// Every interval's length but the last's, which ends with the window.
    pub length_ms: f64,
    pub each: Vec<Interval>,
}

/// Why two series of intervals cannot be added.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum IntervalsError {
    #[error("intervals of {0} ms and of {1} ms cannot be added")]
    Lengths(f64, f64),
    #[error("an interval's histogram does not decode: {0}")]
    Decode(String),
    #[error("interval histograms of different bounds cannot be added")]
    Bounds,
    #[error("the interval log cannot be written: {0}")]
    Log(String),
}

impl Interval {
    /// An interval in which nothing completed.
    pub fn empty() -> Interval {
        thread_local! {
            static EMPTY: String = to_base64(&new_latency_histogram());
        }
        Interval { requests: 0, errors: 0, latency: EMPTY.with(Clone::clone) }
    }

    pub fn histogram(&self) -> Result<Histogram<u64>, IntervalsError> {
        from_base64(&self.latency).map_err(|e| IntervalsError::Decode(e.to_string()))
    }

    /// The interval's latency figures; all 0 for an interval without responses or one that does not decode.
    pub fn summary(&self) -> LatencySummary {
        self.histogram().map(|h| LatencySummary::of(&h)).unwrap_or_default()
    }

    /// Adds `other`'s counts and latencies.
    pub fn add(&mut self, other: &Interval) -> Result<(), IntervalsError> {
        self.requests += other.requests;
        self.errors += other.errors;
        let mut h = self.histogram()?;
        h.add(other.histogram()?).map_err(|_| IntervalsError::Bounds)?;
        self.latency = to_base64(&h);
        Ok(())
    }
}

impl Intervals {
    pub fn new(length_ms: f64) -> Intervals {
        Intervals { length_ms, each: Vec::new() }
    }

    /// Adds another share of the same window (another thread's, another client host's): interval i to
    /// interval i.
    pub fn add(&mut self, other: &Intervals) -> Result<(), IntervalsError> {
        if self.each.is_empty() && self.length_ms != other.length_ms {
            self.length_ms = other.length_ms;
        }
        if self.length_ms != other.length_ms {
            return Err(IntervalsError::Lengths(self.length_ms, other.length_ms));
        }
        if self.each.len() < other.each.len() {
            self.each.resize_with(other.each.len(), Interval::empty);
        }
        for (into, part) in self.each.iter_mut().zip(&other.each) {
            into.add(part)?;
        }
        Ok(())
    }

    /// Keeps `count` intervals (at least one): what completed after them (in the instant the window
    /// closed) goes into the last one, and missing ones are empty.
    pub fn fit(&mut self, count: usize) -> Result<(), IntervalsError> {
        let count = count.max(1);
        if self.each.len() > count {
            let tail = self.each.split_off(count);
            for t in &tail {
                self.each[count - 1].add(t)?;
            }
        }
        self.each.resize_with(count, Interval::empty);
        Ok(())
    }

    /// The sum of every interval's histogram: the round's histogram.
    pub fn sum(&self) -> Result<Histogram<u64>, IntervalsError> {
        let mut total = new_latency_histogram();
        for i in &self.each {
            total.add(i.histogram()?).map_err(|_| IntervalsError::Bounds)?;
        }
        Ok(total)
    }

    /// Each interval's start and length in seconds from the window's opening, given the window's length.
    pub fn spans_s(&self, window_s: f64) -> impl Iterator<Item = (f64, f64)> {
        spans_s(self.length_ms, self.each.len(), window_s)
    }

    /// The intervals as an HdrHistogram interval log (`HistogramLogWriter`'s format: a line per interval,
    /// `start,length,max,histogram`, seconds from the window's opening, latencies in ns, each histogram in
    /// the V2 compressed encoding), readable by HdrHistogram's log readers and tools.
    pub fn to_hdr_log(&self, window_s: f64, comment: &str) -> Result<String, IntervalsError> {
        use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;
        use hdrhistogram::serialization::V2DeflateSerializer;
        let mut out = Vec::new();
        let mut serializer = V2DeflateSerializer::new();
        let write_error = |e: &dyn std::fmt::Debug| IntervalsError::Log(format!("{e:?}"));
        {
            let mut log = IntervalLogWriterBuilder::new().add_comment(comment).begin_log_with(&mut out, &mut serializer).map_err(|e| write_error(&e))?;
            for (i, (start_s, length_s)) in self.each.iter().zip(self.spans_s(window_s)) {
                let h = i.histogram()?;
                log.write_histogram(&h, Duration::from_secs_f64(start_s), Duration::from_secs_f64(length_s), None).map_err(|e| write_error(&e))?;
            }
        }
        String::from_utf8(out).map_err(|e| write_error(&e))
    }

    /// How many intervals a window of `window_ns` holds: the last one may be shorter.
    pub fn count_for(window_ns: u64, length_ns: u64) -> usize {
        window_ns.div_ceil(length_ns.max(1)).max(1) as usize
    }
}

/// The start and length in seconds, from the window's opening, of each of `count` intervals of `length_ms`
/// in a window of `window_s`: the last one ends with the window.
pub fn spans_s(length_ms: f64, count: usize, window_s: f64) -> impl Iterator<Item = (f64, f64)> {
    let len = length_ms / 1e3;
    (0..count).map(move |i| {
        let start = i as f64 * len;
        (start, if i + 1 == count && window_s > start { (window_s - start).min(len) } else { len })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interval(latencies_ns: &[u64], errors: u64) -> Interval {
        let mut h = new_latency_histogram();
        for &l in latencies_ns {
            h.record(l).unwrap();
        }
        Interval { requests: latencies_ns.len() as u64, errors, latency: to_base64(&h) }
    }

    #[test]
    fn shares_of_one_window_add_interval_by_interval() {
        let mut a = Intervals { length_ms: 100.0, each: vec![interval(&[1_000, 2_000], 0)] };
        let b = Intervals { length_ms: 100.0, each: vec![interval(&[3_000], 1), interval(&[200_000_000], 0)] };
        a.add(&b).unwrap();
        assert_eq!(a.each.len(), 2);
        assert_eq!((a.each[0].requests, a.each[0].errors), (3, 1));
        assert_eq!(a.each[1].summary().max_ns, b.each[1].summary().max_ns);
        assert_eq!(a.sum().unwrap().len(), 4);
        let other_length = Intervals { length_ms: 50.0, each: vec![interval(&[1], 0)] };
        assert_eq!(a.add(&other_length), Err(IntervalsError::Lengths(100.0, 50.0)));
    }

    #[test]
    fn what_completed_after_the_window_joins_the_last_interval() {
        let mut s = Intervals { length_ms: 100.0, each: vec![interval(&[1_000], 0), interval(&[], 0), interval(&[5_000], 2)] };
        s.fit(2).unwrap();
        assert_eq!(s.each.len(), 2);
        assert_eq!((s.each[1].requests, s.each[1].errors, s.each[1].summary().max_ns), (1, 2, interval(&[5_000], 0).summary().max_ns));
        s.fit(4).unwrap();
        assert_eq!(s.each.len(), 4, "missing intervals are empty ones");
        assert_eq!(s.each[3], Interval::empty());
        assert_eq!(s.sum().unwrap().len(), 2);
    }

    #[test]
    fn the_last_interval_ends_with_the_window() {
        let s = Intervals { length_ms: 100.0, each: vec![Interval::empty(); 3] };
        let spans: Vec<(f64, f64)> = s.spans_s(0.25).collect();
        assert_eq!(spans.len(), 3);
        assert!((spans[2].0 - 0.2).abs() < 1e-9 && (spans[2].1 - 0.05).abs() < 1e-9, "{spans:?}");
        assert_eq!(Intervals::count_for(250_000_000, 100_000_000), 3);
        assert_eq!(Intervals::count_for(200_000_000, 100_000_000), 2);
        assert_eq!(Intervals::count_for(0, 100_000_000), 1);
    }

    #[test]
    fn the_interval_log_reads_back_with_hdrhistograms_log_reader() {
        use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
        use hdrhistogram::serialization::Deserializer;
        let s = Intervals { length_ms: 100.0, each: vec![interval(&[1_000, 2_000], 0), interval(&[], 0), interval(&[200_000_000], 1)] };
        let log = s.to_hdr_log(0.25, "serverbench load").unwrap();
        assert!(log.starts_with("#serverbench load\n"), "{log}");
        let mut read = Vec::new();
        for entry in IntervalLogIterator::new(log.as_bytes()) {
            if let LogEntry::Interval(h) = entry.unwrap() {
                let bytes = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, h.encoded_histogram()).unwrap();
                let hist: Histogram<u64> = Deserializer::new().deserialize(&mut &bytes[..]).unwrap();
                read.push((h.start_timestamp().as_secs_f64(), h.duration().as_secs_f64(), hist.len(), hist.max()));
            }
        }
        assert_eq!(read.len(), 3);
        assert!((read[1].0 - 0.1).abs() < 1e-3 && (read[2].1 - 0.05).abs() < 1e-3, "{read:?}");
        assert_eq!((read[0].2, read[1].2, read[2].2), (2, 0, 1));
        assert_eq!(read[2].3, s.each[2].summary().max_ns);
    }

    #[test]
    fn a_broken_histogram_is_an_error_not_a_zero() {
        let mut bad = interval(&[1_000], 0);
        bad.latency = "not base64".into();
        assert!(matches!(bad.histogram(), Err(IntervalsError::Decode(_))));
        let s = Intervals { length_ms: 100.0, each: vec![bad] };
        assert!(s.sum().is_err());
    }
}
