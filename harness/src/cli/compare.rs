//! `serverbench compare`: its arguments.

use std::path::PathBuf;

use clap::Args;

use crate::compare::DEFAULT_ALPHA;

#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// The baseline run folder (holding run.json).
    pub run_a: PathBuf,
    /// The run compared against it.
    pub run_b: PathBuf,
    /// Where the HTML page goes [default: compare.html in the current directory]
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// A change counts as beyond noise when Welch's two-sided p-value is below this.
    #[arg(long, default_value_t = DEFAULT_ALPHA, value_name = "P")]
    pub alpha: f64,
}
