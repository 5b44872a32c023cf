//! `serverbench compare`: its arguments.

use std::path::PathBuf;

use clap::Args;

use crate::compare::{FailOn, Options, Rules, DEFAULT_ALPHA, DEFAULT_NOISE_PCT, DEFAULT_SPREADS};

#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// The baseline run folder (holding run.json).
    pub run_a: PathBuf,
    /// The run compared against it.
    pub run_b: PathBuf,
    /// Where the HTML page goes [default: compare-<run A>.html in run B's folder]
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// A change needs the Mann–Whitney two-sided p-value below this...
    #[arg(long, default_value_t = DEFAULT_ALPHA, value_name = "P")]
    pub alpha: f64,
    /// ... and its whole 95% interval of B/A beyond this band around 1, in percent.
    #[arg(long, default_value_t = DEFAULT_NOISE_PCT, value_name = "PCT")]
    pub noise: f64,
    /// ... and beyond this many spreads of the other configurations' scatter around their common change.
    #[arg(long, default_value_t = DEFAULT_SPREADS, value_name = "K")]
    pub spreads: f64,
    /// Print the comparison as JSON instead of Markdown.
    #[arg(long)]
    pub json: bool,
    /// Exit with status 3 when a figure is worse: `worse` (any of req/s, p99, CPU per request) or
    /// `worse:rps,p99,cpu` (those named). Everything is printed and written first.
    #[arg(long, value_name = "worse[:METRICS]")]
    pub fail_on: Option<FailOn>,
}

impl CompareArgs {
    pub fn rules(&self) -> Rules {
        Rules { alpha: self.alpha, noise_pct: self.noise, spreads: self.spreads }
    }

    pub fn options(&self) -> Options {
        Options { rules: self.rules(), output: self.output.clone(), json: self.json, fail_on: self.fail_on.clone() }
    }
}
