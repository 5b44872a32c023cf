//! The options that shape `work` and `counter` requests, shared by `load` and `bench`.

use std::time::Duration;

use clap::Args;

use super::parse_duration;
use crate::load::config::DEFAULT_SEED;
use crate::load::mix::{MixOptions, Skew};

#[derive(Debug, Clone, Args)]
pub struct MixArgs {
    /// `work`: how long each request asks the server to busy-wait (100us, 1ms) [default: 100us]
    #[arg(long, value_parser = parse_duration)]
    pub work: Option<Duration>,
    /// `work`: a fraction F of the connections asks K times --work on every request (F:K, F as 1/8,
    /// 0.125 or 12.5%), chosen from --seed
    #[arg(long = "heavy-connections", value_parser = Skew::parse)]
    pub heavy_connections: Option<Skew>,
    /// `work`: a fraction P of the requests, drawn from --seed, asks K times --work (P:K)
    #[arg(long = "heavy-requests", value_parser = Skew::parse)]
    pub heavy_requests: Option<Skew>,
    /// `counter`: the keys requests spread over, uniformly (1: one hot counter)
    #[arg(long, default_value_t = 1)]
    pub keys: u32,
    /// The seed of every choice of the workload (heavy connections and requests, keys)
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,
}

impl MixArgs {
    pub fn options(&self) -> MixOptions {
        MixOptions {
            work_us: self.work.map_or(crate::wire::DEFAULT_WORK_US, |d| d.as_micros() as u64),
            heavy_connections: self.heavy_connections,
            heavy_requests: self.heavy_requests,
            keys: self.keys,
            seed: self.seed,
        }
    }
}
