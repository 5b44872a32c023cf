//! `serverbench history` and `serverbench history import`: their arguments.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

use super::BadValue;
use crate::history::change_points::{Settings, DEFAULT_MAX_P, DEFAULT_MIN_SEGMENT};
use crate::model::verdict::Metric;

#[derive(Debug, Clone, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct HistoryArgs {
    #[command(subcommand)]
    pub action: Option<HistoryAction>,
    #[command(flatten)]
    pub show: ShowArgs,
}

#[derive(Debug, Clone, Subcommand)]
pub enum HistoryAction {
    /// Record the runs of run folders (holding run.json) or of results folders (holding run folders).
    Import(ImportArgs),
}

#[derive(Debug, Clone, Args)]
pub struct ImportArgs {
    /// Run folders, or results folders whose run folders are all imported.
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    #[command(flatten)]
    pub db: DbArg,
}

#[derive(Debug, Clone, Args)]
pub struct DbArg {
    /// The history: a file, or a PostgreSQL database as postgres://user@host/db (its password in
    /// PGPASSWORD) [default: $SERVERBENCH_HISTORY, else <repo>/results/history.sqlite]
    #[arg(long, value_name = "PATH|URL")]
    pub db: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct ShowArgs {
    #[command(flatten)]
    pub db: DbArg,
    /// Only this contestant's series (the change points are still judged against every series).
    #[arg(long, value_name = "NAME")]
    pub contestant: Option<String>,
    /// The figure: rps (req/s), p99 or cpu (server CPU per request).
    #[arg(long, value_parser = parse_metric, default_value = "rps", value_name = "rps|p99|cpu")]
    pub metric: Metric,
    /// Print the series and change points as JSON.
    #[arg(long)]
    pub json: bool,
    /// Also write the history as an HTML page, a chart per configuration, to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Exit with status 3 when a server's own change point (not the machine's) lies in the last runs of a series.
    #[arg(long, value_enum, value_name = "change")]
    pub fail_on: Option<FailOnChange>,
    /// A change point needs Student's t-test between its two sides below this p-value.
    #[arg(long, default_value_t = DEFAULT_MAX_P, value_name = "P")]
    pub max_p: f64,
    /// The fewest runs on either side of a change point.
    #[arg(long, default_value_t = DEFAULT_MIN_SEGMENT, value_name = "N")]
    pub min_segment: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOnChange {
    Change,
}

impl ShowArgs {
    pub fn settings(&self) -> Settings {
        Settings { max_p: self.max_p, min_segment: self.min_segment }
    }
}

/// `rps`, `p99` or `cpu`, as `compare --fail-on` names them.
pub fn parse_metric(text: &str) -> Result<Metric, BadValue> {
    Metric::ALL
        .into_iter()
        .find(|m| text.eq_ignore_ascii_case(m.flag()))
        .ok_or_else(|| BadValue(format!("'{text}' is not a figure of the history: give rps, p99 or cpu")))
}
