//! Number formats shared by the tables and the progress lines; an absent figure prints as `n/a`.

/// A figure that could not be measured (or does not apply), never printed as a zero.
pub const ABSENT: &str = "n/a";

/// "0.12 0.34 0.56 at the start, 1.50 0.50 0.25 at the end (1, 5, 15 min)": load from outside the run
/// shows as a rise.
pub fn load_average(start: Option<[f64; 3]>, end: Option<[f64; 3]>) -> String {
    let three = |l: Option<[f64; 3]>| l.map_or(ABSENT.to_string(), |l| format!("{:.2} {:.2} {:.2}", l[0], l[1], l[2]));
    match end {
        Some(_) => format!("{} at the start, {} at the end (1, 5, 15 min)", three(start), three(end)),
        None => format!("{} at the start (1, 5, 15 min)", three(start)),
    }
}

pub fn or_absent(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    match v {
        Some(v) if v.is_finite() => f(v),
        _ => ABSENT.to_string(),
    }
}

/// Whole number.
pub fn int(v: f64) -> String {
    format!("{:.0}", v)
}

/// Nanoseconds as milliseconds with three decimals (httpbench's unit).
pub fn ms(ns: f64) -> String {
    format!("{:.3}", ns / 1e6)
}

/// Nanoseconds as microseconds with one decimal.
pub fn us(ns: f64) -> String {
    format!("{:.1}", ns / 1e3)
}

/// Bytes as MiB with one decimal.
pub fn mib(bytes: f64) -> String {
    format!("{:.1}", bytes / (1024.0 * 1024.0))
}

/// A percentage without decimals.
pub fn pct(v: f64) -> String {
    format!("{:.0}", v)
}

/// One decimal.
pub fn one(v: f64) -> String {
    format!("{:.1}", v)
}

/// "capacity @ p99<1ms", the column of `bench --search`, when one of `measurements` was searched.
pub fn capacity_header<'a>(mut measurements: impl Iterator<Item = &'a crate::model::Measurement>) -> Option<String> {
    measurements.find_map(|m| m.capacity.as_ref()).map(|c| format!("capacity @ {}", c.slo.text))
}

/// A searched capacity in req/s: the highest passing rate, "≥N" when no rate failed, "none" when none
/// passed, n/a when not searched.
pub fn capacity(m: &crate::model::Measurement) -> String {
    match m.capacity.as_ref().map(|c| c.bracket) {
        None => ABSENT.to_string(),
        Some((Some(lo), Some(_))) => int(lo),
        Some((Some(lo), None)) => format!("≥{}", int(lo)),
        Some((None, _)) => "none".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(ms(26_400.0), "0.026");
        assert_eq!(us(50_340.0), "50.3");
        assert_eq!(mib(3.0 * 1024.0 * 1024.0), "3.0");
        assert_eq!(or_absent(None, int), "n/a");
        assert_eq!(or_absent(Some(f64::NAN), int), "n/a");
        assert_eq!(or_absent(Some(1234.4), int), "1234");
    }
}
