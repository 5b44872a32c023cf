//! `serverbench compare`: its arguments.

use std::path::PathBuf;

use clap::Args;

use crate::compare::{Rules, DEFAULT_ALPHA, DEFAULT_NOISE_PCT};

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
    /// Print the comparison as JSON instead of Markdown.
    #[arg(long)]
    pub json: bool,
}

impl CompareArgs {
    pub fn rules(&self) -> Rules {
        Rules { alpha: self.alpha, noise_pct: self.noise }
    }
}
