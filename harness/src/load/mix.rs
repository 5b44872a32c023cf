//! Requests that differ from one to the next: `work`'s N (a base, heavier on some connections or some
//! requests) and `counter`'s key. Every choice comes from a seed, so a run can be repeated request for
//! request; the paths are rendered once, before the run.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::wire::{counter_path, work_path, HttpRequest, RequestTemplate, Scenario, COUNTER_KEYS, MAX_WORK_US};

/// Mix options that cannot run, with what they need instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadMix(pub String);

/// The seed when none is given.
pub const DEFAULT_SEED: u64 = 1;

/// A share of connections or requests made `factor` times heavier than the base.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Skew {
    /// Between 0 and 1.
    pub fraction: f64,
    /// At least 1.
    pub factor: u64,
}

impl Skew {
    /// `F:K`: F a fraction (`1/8`, `0.125` or `12.5%`), K a whole factor of at least 1.
    pub fn parse(text: &str) -> Result<Skew, BadMix> {
        let (f, k) = text.split_once(':').ok_or_else(|| BadMix(format!("'{text}': expected F:K, e.g. 1/8:10 (an eighth, 10 times the base)")))?;
        let fraction = match (f.split_once('/'), f.strip_suffix('%')) {
            (Some((a, b)), _) => a.trim().parse::<f64>().ok().zip(b.trim().parse::<f64>().ok()).map(|(a, b)| a / b),
            (None, Some(p)) => p.trim().parse::<f64>().ok().map(|p| p / 100.0),
            (None, None) => f.trim().parse::<f64>().ok(),
        }
        .filter(|x| x.is_finite() && (0.0..=1.0).contains(x))
        .ok_or_else(|| BadMix(format!("'{text}': the fraction '{f}' must be between 0 and 1, as 1/8, 0.125 or 12.5%")))?;
        let factor = k.trim().parse::<u64>().ok().filter(|k| *k >= 1).ok_or_else(|| BadMix(format!("'{text}': the factor '{k}' must be a whole number of at least 1")))?;
        Ok(Skew { fraction, factor })
    }
}

impl fmt::Display for Skew {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.fraction, self.factor)
    }
}

/// What varies between requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Mix {
    /// Every request is the workload's own.
    #[default]
    Fixed,
    /// `GET /work/<N>`: N = `base_us`; on the heavy connections `base_us × factor`; a heavy request
    /// asks `base_us × factor` (the heavier of the two when both apply).
    Work { base_us: u64, heavy_connections: Option<Skew>, heavy_requests: Option<Skew> },
    /// `GET /counter/<k>`, k uniform over `keys` keys.
    Counter { keys: u32 },
}

impl Mix {
    /// The reason this mix cannot run, if any.
    pub fn problem(&self) -> Option<String> {
        match self {
            Mix::Fixed => None,
            Mix::Work { base_us, heavy_connections, heavy_requests } => {
                let heaviest = [heavy_connections, heavy_requests].iter().filter_map(|s| s.map(|s| s.factor)).max().unwrap_or(1);
                (base_us.saturating_mul(heaviest) > MAX_WORK_US)
                    .then(|| format!("--work {base_us}us times the heaviest factor {heaviest} is above the {MAX_WORK_US} µs a request may ask"))
            }
            Mix::Counter { keys } => (!(1..=COUNTER_KEYS).contains(keys)).then(|| format!("--keys must be between 1 and {COUNTER_KEYS}, not {keys}")),
        }
    }
}

/// The options behind a run's mixes (`--work`, `--heavy-connections`, `--heavy-requests`, `--keys`,
/// `--seed`), as run.json records them; each scenario takes the ones that concern it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MixOptions {
    pub work_us: u64,
    pub heavy_connections: Option<Skew>,
    pub heavy_requests: Option<Skew>,
    pub keys: u32,
    pub seed: u64,
}

impl Default for MixOptions {
    fn default() -> Self {
        MixOptions { work_us: crate::wire::DEFAULT_WORK_US, heavy_connections: None, heavy_requests: None, keys: 1, seed: DEFAULT_SEED }
    }
}

impl MixOptions {
    /// What varies between a scenario's requests.
    pub fn for_scenario(&self, scenario: Scenario) -> Mix {
        match scenario {
            Scenario::Work => Mix::Work { base_us: self.work_us, heavy_connections: self.heavy_connections, heavy_requests: self.heavy_requests },
            Scenario::Counter => Mix::Counter { keys: self.keys },
            _ => Mix::Fixed,
        }
    }

    /// Options given for a scenario that is not run would silently do nothing: an error names them.
    pub fn check_against(&self, scenarios: &[Scenario]) -> Result<(), BadMix> {
        let d = MixOptions::default();
        let work_given = self.work_us != d.work_us || self.heavy_connections.is_some() || self.heavy_requests.is_some();
        if work_given && !scenarios.contains(&Scenario::Work) {
            return Err(BadMix("--work, --heavy-connections and --heavy-requests shape the `work` scenario; add --scenario work".into()));
        }
        if self.keys != d.keys && !scenarios.contains(&Scenario::Counter) {
            return Err(BadMix("--keys shapes the `counter` scenario; add --scenario counter".into()));
        }
        for s in scenarios {
            if let Some(problem) = self.for_scenario(*s).problem() {
                return Err(BadMix(problem));
            }
        }
        Ok(())
    }

    /// Whether `work` requests differ in weight (heavy connections or requests): only the builtin tool,
    /// which checks every answer against its N, can send them.
    pub fn skewed(&self) -> bool {
        self.heavy_connections.is_some() || self.heavy_requests.is_some()
    }
}

impl Mix {
    /// What varies, e.g. "100 µs of work per request, 12.5% of connections ×10"; None for `Fixed`.
    pub fn describe(&self) -> Option<String> {
        match self {
            Mix::Work { base_us, heavy_connections, heavy_requests } => {
                let mut s = format!("{base_us} µs of work per request");
                if let Some(k) = heavy_connections {
                    s.push_str(&format!(", {}% of connections ×{}", k.fraction * 100.0, k.factor));
                }
                if let Some(k) = heavy_requests {
                    s.push_str(&format!(", {}% of requests ×{}", k.fraction * 100.0, k.factor));
                }
                Some(s)
            }
            Mix::Counter { keys } => Some(format!("{keys} counter{}", if *keys == 1 { "" } else { "s" })),
            Mix::Fixed => None,
        }
    }
}

/// The mix made ready for a run: a template per path it sends, and which connections are heavy.
pub struct Paths {
    /// Indexed by a request's variant.
    pub templates: Vec<RequestTemplate>,
    /// What each variant asks: `work`'s N, or `counter`'s key.
    pub values: Vec<u64>,
    heavy: Vec<bool>,
    /// The variant of a heavy connection's ordinary request.
    heavy_variant: u32,
    request_skew: Option<(f64, u32)>,
    keys: u32,
    seed: u64,
}

impl Paths {
    /// `request` is the workload's request; its path is replaced per variant.
    pub fn new(mix: &Mix, request: &HttpRequest, connections: usize, seed: u64) -> Paths {
        let template = |path: String| RequestTemplate::new(&HttpRequest { path, ..request.clone() });
        let mut paths = Paths { templates: Vec::new(), values: Vec::new(), heavy: Vec::new(), heavy_variant: 0, request_skew: None, keys: 0, seed };
        match mix {
            Mix::Fixed => {
                paths.templates.push(RequestTemplate::new(request));
                paths.values.push(0);
            }
            Mix::Work { base_us, heavy_connections, heavy_requests } => {
                let mut add = |us: u64| -> u32 {
                    if let Some(i) = paths.values.iter().position(|v| *v == us) {
                        return i as u32;
                    }
                    paths.values.push(us);
                    paths.templates.push(template(work_path(us)));
                    (paths.values.len() - 1) as u32
                };
                add(*base_us);
                let heavy_variant = heavy_connections.map_or(0, |s| add(base_us * s.factor));
                paths.heavy_variant = heavy_variant;
                if let Some(s) = heavy_requests {
                    let i = add(base_us * s.factor);
                    paths.request_skew = Some((s.fraction, i));
                }
                paths.heavy = heavy_set(connections, heavy_connections.map_or(0.0, |s| s.fraction), seed);
            }
            Mix::Counter { keys } => {
                paths.keys = *keys;
                for k in 0..*keys {
                    paths.values.push(u64::from(k));
                    paths.templates.push(template(counter_path(k)));
                }
            }
        }
        paths
    }

    /// Whether the variants are `counter` keys, whose answers are kept (`counter.rs`).
    pub fn counts(&self) -> bool {
        self.keys > 0
    }

    /// The longest request any variant renders.
    pub fn max_len(&self) -> usize {
        self.templates.iter().map(RequestTemplate::max_len).max().unwrap_or(0)
    }

    /// The generator of connection `index`'s choices (its index over all threads), from the run's seed.
    pub fn rng(&self, index: usize) -> fastrand::Rng {
        fastrand::Rng::with_seed(self.seed ^ (index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }

    /// Whether connection `index` is one of the heavy ones.
    pub fn is_heavy(&self, index: usize) -> bool {
        self.heavy.get(index).copied().unwrap_or(false)
    }

    /// The variant of a connection's next request.
    #[inline]
    pub fn choose(&self, heavy_connection: bool, rng: &mut fastrand::Rng) -> u32 {
        if self.keys > 0 {
            return rng.u32(..self.keys);
        }
        let mut v = if heavy_connection { self.heavy_variant } else { 0 };
        if let Some((p, heavy)) = self.request_skew {
            if rng.f64() < p && self.values[heavy as usize] >= self.values[v as usize] {
                v = heavy;
            }
        }
        v
    }
}

/// Exactly round(fraction × connections) heavy connections, spread by a shuffle from `seed`.
fn heavy_set(connections: usize, fraction: f64, seed: u64) -> Vec<bool> {
    let count = (fraction * connections as f64).round() as usize;
    let mut order: Vec<usize> = (0..connections).collect();
    fastrand::Rng::with_seed(seed).shuffle(&mut order);
    let mut heavy = vec![false; connections];
    for i in order.into_iter().take(count) {
        heavy[i] = true;
    }
    heavy
}

#[cfg(test)]
mod tests {
    use super::*;

    fn work(heavy_connections: Option<&str>, heavy_requests: Option<&str>) -> Mix {
        Mix::Work {
            base_us: 100,
            heavy_connections: heavy_connections.map(|s| Skew::parse(s).unwrap()),
            heavy_requests: heavy_requests.map(|s| Skew::parse(s).unwrap()),
        }
    }

    #[test]
    fn skews_parse_as_fractions_decimals_and_percentages() {
        assert_eq!(Skew::parse("1/8:10").unwrap(), Skew { fraction: 0.125, factor: 10 });
        assert_eq!(Skew::parse("0.125:10").unwrap(), Skew { fraction: 0.125, factor: 10 });
        assert_eq!(Skew::parse("12.5%:3").unwrap(), Skew { fraction: 0.125, factor: 3 });
        for bad in ["1/8", "2:10", "1/8:0", "1/8:1.5", "x:2", "-0.1:2"] {
            assert!(Skew::parse(bad).is_err(), "{bad}");
        }
        assert!(Skew::parse("9/8:2").unwrap_err().to_string().contains("between 0 and 1"));
    }

    #[test]
    fn exactly_the_fraction_of_connections_is_heavy_and_the_same_for_a_seed() {
        let req = HttpRequest::get("/work/100");
        let p = Paths::new(&work(Some("1/8:10"), None), &req, 64, 7);
        assert_eq!((0..64).filter(|i| p.is_heavy(*i)).count(), 8);
        assert_eq!(p.values, [100, 1000]);
        let again = Paths::new(&work(Some("1/8:10"), None), &req, 64, 7);
        assert!((0..64).all(|i| p.is_heavy(i) == again.is_heavy(i)));
        let other = Paths::new(&work(Some("1/8:10"), None), &req, 64, 8);
        assert!((0..64).any(|i| p.is_heavy(i) != other.is_heavy(i)), "another seed, other connections");
        let mut rng = p.rng(3);
        assert!((0..100).all(|_| p.choose(true, &mut rng) == 1 && p.choose(false, &mut rng) == 0));
    }

    #[test]
    fn heavy_requests_come_at_their_rate_from_the_seed() {
        let p = Paths::new(&work(None, Some("0.25:4")), &HttpRequest::get("/work/100"), 8, 1);
        assert_eq!(p.values, [100, 400]);
        let picks = |i| {
            let mut rng = p.rng(i);
            (0..10_000).map(|_| p.choose(p.is_heavy(i), &mut rng)).collect::<Vec<_>>()
        };
        let heavy = picks(0).iter().filter(|v| **v == 1).count();
        assert!((2_300..2_700).contains(&heavy), "{heavy} heavy of 10,000 at 0.25");
        assert_eq!(picks(0), picks(0));
        assert_ne!(picks(0), picks(1));
    }

    #[test]
    fn counter_keys_cover_the_range_and_paths_render() {
        let p = Paths::new(&Mix::Counter { keys: 4 }, &HttpRequest::get("/counter/0"), 2, 1);
        let mut rng = p.rng(0);
        let mut seen = [0; 4];
        for _ in 0..1000 {
            seen[p.choose(false, &mut rng) as usize] += 1;
        }
        assert!(seen.iter().all(|n| *n > 150), "{seen:?}");
        let mut out = Vec::new();
        p.templates[3].render(&mut out, 0);
        assert_eq!(out, b"GET /counter/3 HTTP/1.1\r\nHost: bench\r\n\r\n");
        assert!(Mix::Counter { keys: 0 }.problem().is_some());
        assert!(Mix::Counter { keys: COUNTER_KEYS + 1 }.problem().is_some());
        assert!(work(Some("1/8:20000"), None).problem().unwrap().contains("1000000"));
    }
}
