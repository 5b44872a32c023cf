//! `serverbench bisect`: its arguments.

use std::path::PathBuf;

use clap::Args;

use super::history::parse_metric;
use crate::model::verdict::Metric;

/// Which commit between a good and a bad revision changed a contestant's figure (docs/history.md,
/// "Which commit?").
#[derive(Debug, Clone, Args)]
pub struct BisectArgs {
    /// The contestant, by its name in the catalog.
    #[arg(value_name = "NAME")]
    pub name: String,
    /// A revision whose version is as it should be (older).
    #[arg(long, value_name = "REV")]
    pub good: String,
    /// A revision whose version has the change (newer; a descendant of --good).
    #[arg(long, value_name = "REV")]
    pub bad: String,
    /// The figure to bisect on.
    #[arg(long, value_parser = parse_metric, default_value = "rps", value_name = "rps|p99|cpu")]
    pub metric: Metric,
    /// How often a step that reads neither way (`unclear`) is run again, each time with as many more pairs,
    /// before the search settles for the range it narrowed to.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub attempts: u32,
    /// The catalog root holding contestants/**/contestant.toml, inside a git repository [default: <repo>/contestants]
    #[arg(long, value_name = "DIR")]
    pub contestants: Option<PathBuf>,
    /// Where each step's A/B run folder and the worktrees go [default: <repo>/results]
    #[arg(short, long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Options for each step's A/B run, after `--`, as `bench` takes them (-d 200ms, --same-band 3%, ...).
    #[arg(last = true, value_name = "BENCH_OPTIONS")]
    pub bench: Vec<String>,
}
