//! Latency histograms: construction, quantile summaries and the V2 base64 form stored in run.json.
//!
//! Values are nanoseconds. The trackable range is 1 ns to 1 hour with 3 significant digits, so every
//! value from 1 us up is kept to within 0.1%; recording saturates at the top, so no sample is dropped.

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

pub const HIGHEST_TRACKABLE_NS: u64 = 3_600 * 1_000_000_000;
pub const SIGNIFICANT_DIGITS: u8 = 3;

pub fn new_latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIGHEST_TRACKABLE_NS, SIGNIFICANT_DIGITS)
        .expect("constant histogram bounds are valid")
}

/// Latency figures in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub count: u64,
    pub min_ns: u64,
    pub mean_ns: f64,
    pub stdev_ns: f64,
    pub p25_ns: u64,
    pub p50_ns: u64,
    pub p75_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub p9999_ns: u64,
    pub max_ns: u64,
}

impl LatencySummary {
    pub fn of(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return LatencySummary::default();
        }
        let q = |x: f64| h.value_at_quantile(x);
        LatencySummary {
            count: h.len(),
            min_ns: h.min(),
            mean_ns: h.mean(),
            stdev_ns: h.stdev(),
            p25_ns: q(0.25),
            p50_ns: q(0.50),
            p75_ns: q(0.75),
            p90_ns: q(0.90),
            p99_ns: q(0.99),
            p999_ns: q(0.999),
            p9999_ns: q(0.9999),
            max_ns: h.max(),
        }
    }
}

/// HdrHistogram V2 encoding (uncompressed), base64: readable by every HdrHistogram implementation.
pub fn to_base64(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    V2Serializer::new().serialize(h, &mut bytes).expect("serializing into a Vec cannot fail");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

pub fn from_base64(text: &str) -> anyhow::Result<Histogram<u64>> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(text.trim())?;
    let h: Histogram<u64> = Deserializer::new()
        .deserialize(&mut &bytes[..])
        .map_err(|e| anyhow::anyhow!("not an HdrHistogram V2 encoding: {e:?}"))?;
    Ok(h)
}

/// serde adapter: a histogram travels as its base64 V2 encoding.
pub mod serde_b64 {
    use super::*;
    use serde::{Deserializer as De, Serializer as Ser};

    pub fn serialize<S: Ser>(h: &Histogram<u64>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&to_base64(h))
    }
    pub fn deserialize<'de, D: De<'de>>(d: D) -> Result<Histogram<u64>, D::Error> {
        let text = String::deserialize(d)?;
        from_base64(&text).map_err(serde::de::Error::custom)
    }
}

/// serde adapter for an optional histogram.
pub mod serde_b64_opt {
    use super::*;
    use serde::{Deserializer as De, Serializer as Ser};

    pub fn serialize<S: Ser>(h: &Option<Histogram<u64>>, s: S) -> Result<S::Ok, S::Error> {
        match h {
            Some(h) => s.serialize_some(&to_base64(h)),
            None => s.serialize_none(),
        }
    }
    pub fn deserialize<'de, D: De<'de>>(d: D) -> Result<Option<Histogram<u64>>, D::Error> {
        let text: Option<String> = Option::deserialize(d)?;
        text.map(|t| from_base64(&t).map_err(serde::de::Error::custom)).transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_base64() {
        let mut h = new_latency_histogram();
        for v in [1_000u64, 2_000, 17_513, 5_000_000, HIGHEST_TRACKABLE_NS * 2] {
            h.saturating_record(v);
        }
        let back = from_base64(&to_base64(&h)).unwrap();
        assert_eq!(back.len(), 5);
        assert_eq!(back.max(), h.max());
        assert_eq!(back.value_at_quantile(0.5), h.value_at_quantile(0.5));
    }

    #[test]
    fn keeps_three_digits_from_one_microsecond() {
        let mut h = new_latency_histogram();
        h.record(17_513).unwrap();
        let got = h.value_at_quantile(0.5) as f64;
        assert!((got - 17_513.0).abs() / 17_513.0 < 0.001, "{got}");
    }

    #[test]
    fn saturates_instead_of_dropping() {
        let mut h = new_latency_histogram();
        h.saturating_record(u64::MAX);
        assert_eq!(h.len(), 1);
        assert!(h.max() >= HIGHEST_TRACKABLE_NS);
    }

    #[test]
    fn summary_of_empty_is_zero() {
        assert_eq!(LatencySummary::of(&new_latency_histogram()).count, 0);
    }
}
