//! The command line, defined in one place: every subcommand's arguments (`bench`, `load` and `compare` in files
//! of their own) and the parsers of their values.

pub mod ab;
pub mod bench;
pub mod bisect;
pub mod compare;
pub mod history;
pub mod load;
pub mod mix;
pub mod rounds;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::catalog::Selection;
use crate::wire::Scenario;

/// A command-line value that does not parse; clap prints it after the option's name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadValue(pub String);

/// Durations as wrk and hyperfine users write them: `2`, `1.5s`, `500ms`, `200us`, `1m`, `1m30s`;
/// a bare number is seconds. One parser for every command.
pub fn parse_duration(s: &str) -> Result<Duration, BadValue> {
    let t = s.trim();
    let bad = || BadValue(format!("'{s}' is not a duration; write 2, 1.5s, 500ms, 200us or 1m"));
    const UNITS: [(&str, f64); 7] = [("ns", 1e-9), ("us", 1e-6), ("µs", 1e-6), ("ms", 1e-3), ("s", 1.0), ("m", 60.0), ("h", 3600.0)];
    let (number, scale) = UNITS.iter().find_map(|(u, k)| t.strip_suffix(u).map(|n| (n, *k))).unwrap_or((t, 1.0));
    match number.trim().parse::<f64>() {
        Ok(v) if v >= 0.0 && v.is_finite() => Ok(Duration::from_secs_f64(v * scale)),
        Ok(_) => Err(bad()),
        Err(_) => humantime::parse_duration(t).map_err(|_| bad()),
    }
}

/// A percentage such as `3%` or `3`.
pub fn parse_percent(text: &str) -> Result<f64, BadValue> {
    text.trim().trim_end_matches('%').trim().parse().map_err(|_| BadValue(format!("'{text}' is not a percentage; write 3% or 1.5")))
}

#[derive(Debug, Parser)]
#[command(name = "serverbench", version, about = "A benchmark of approaches to writing server applications")]
pub struct Cli {
    /// Print only results and warnings: no progress bar, no line per measurement.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Print every step: commands, builds, each round.
    #[arg(short, long, global = true)]
    pub verbose: bool,
    #[command(subcommand)]
    pub command: Command,
}

// One command is parsed per process: boxing the large arguments would save nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Drive one server with the built-in load generator (a wrk-class client).
    Load(load::LoadArgs),
    /// List the contestants: language, framework, category, model, io, scenarios, and whether each can run here.
    List(ListArgs),
    /// Build, start, verify and measure contestants; write results/<run-id>/ (run.json and the summaries).
    Bench(bench::BenchArgs),
    /// Check contestants against their wire contract, timeouts, bad input, 20,000 connections and real clients.
    Check(CheckArgs),
    /// Check dependencies (installing Debian packages as root) and build contestants, without measuring.
    Build(BuildArgs),
    /// Show each contestant's response per scenario, with its size.
    Responses(ResponsesArgs),
    /// Print the toolchain and contestant versions as Markdown tables.
    Versions(ListArgs),
    /// Regenerate every summary of a run (summary.md, summary.csv, report.html) from its run.json alone.
    Report(ReportArgs),
    /// Compare two runs: B/A of req/s, p99 and CPU per request per configuration, with the Mann-Whitney U
    /// test over the rounds and the machine's own change taken out; Markdown to stdout, an HTML page to
    /// compare-<run A>.html in run B's folder (or -o FILE).
    Compare(compare::CompareArgs),
    /// The history of runs (docs/history.md): each figure over runs per contestant and configuration, with
    /// its change points, the machine's told from the servers' own; `history import DIR...` records runs.
    History(history::HistoryArgs),
    /// Which commit changed a contestant's figure: the commits between --good and --bad that change its
    /// inputs, searched by A/B runs of two revisions built in worktrees (docs/history.md, "Which commit?").
    Bisect(bisect::BisectArgs),
    /// The server host's side of `bench --server-host`, started there over ssh: JSON requests on stdin,
    /// replies on stdout; it ends every server it started when stdin closes.
    #[command(hide = true)]
    Agent(AgentArgs),
}

#[derive(Debug, Clone, Args)]
pub struct AgentArgs {
    /// The catalog root of the checkout here.
    #[arg(long, value_name = "DIR")]
    pub catalog: PathBuf,
    /// The agent's own folder: build logs and stamps, server logs.
    #[arg(long, value_name = "DIR")]
    pub work: PathBuf,
    /// Build even when sources are unchanged.
    #[arg(long)]
    pub rebuild: bool,
}

/// Which contestants a command works on.
#[derive(Debug, Clone, Args)]
pub struct SelectArgs {
    /// Names, or a language, framework, category, model or io: a contestant matching any of them is used (all when none).
    #[arg(value_name = "NAME_OR_FILTER")]
    pub terms: Vec<String>,
    /// The catalog root holding contestants/**/contestant.toml [default: <repo>/contestants]
    #[arg(long, value_name = "DIR")]
    pub contestants: Option<PathBuf>,
    /// Only these languages (c, cpp, rust, go, java, javascript, python, erlang, d, config).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub language: Vec<String>,
    /// Only this category (micro, platform).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub category: Vec<String>,
    /// Only these models (thread-per-connection, thread-pool, process-per-connection, process-pool, per-core,
    /// work-sharing, work-stealing, prefork, single-loop).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub model: Vec<String>,
    /// Only these I/O kinds (blocking, epoll, io_uring, runtime).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub io: Vec<String>,
    /// Only these frameworks.
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub framework: Vec<String>,
}

impl SelectArgs {
    pub fn selection(&self) -> Selection {
        Selection {
            terms: self.terms.clone(),
            language: self.language.clone(),
            category: self.category.clone(),
            model: self.model.clone(),
            io: self.io.clone(),
            framework: self.framework.clone(),
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub select: SelectArgs,
}

#[derive(Debug, Clone, Args)]
pub struct BuildArgs {
    #[command(flatten)]
    pub select: SelectArgs,
    /// Where build logs (under .build-logs/) and build stamps go; use the same as for bench to share
    /// them [default: <repo>/results]
    #[arg(short, long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Build even when sources are unchanged since the last successful build.
    #[arg(long)]
    pub rebuild: bool,
    /// Never install missing Debian packages (by default they are installed when running as root).
    #[arg(long)]
    pub no_install: bool,
    /// Fail unless every selected contestant is built, except those whose manifest says (`unsupported`)
    /// they cannot be built on this kind of machine (what CI asks).
    #[arg(long)]
    pub require_all: bool,
}

#[derive(Debug, Clone, Args)]
pub struct ResponsesArgs {
    #[command(flatten)]
    pub select: SelectArgs,
    /// Only these scenarios [default: every scenario each contestant declares]
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub scenario: Vec<String>,
    /// Where build and server logs go [default: <repo>/results/.responses]
    #[arg(short, long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// A run folder, such as results/20260101-120000
    pub run_dir: PathBuf,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }

}

#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub select: SelectArgs,
    /// Only these checks, e.g. hello-response,bad-reset,scale (see docs/conformance.md) [default: all]
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub only: Vec<String>,
    /// Connections the scale check holds open at once (capped by the server's open-files limit).
    #[arg(long, default_value_t = 20_000, value_name = "N")]
    pub scale_connections: usize,
    /// Skip the scale check.
    #[arg(long)]
    pub no_scale: bool,
    /// The quick profile (CI's): the scale check holds 2,000 connections, except for the contestants of
    /// --full-scale; every other check is unchanged.
    #[arg(long)]
    pub quick: bool,
    /// With --quick, the contestants whose scale check still holds --scale-connections
    /// [default: c-epoll,c-threads,go-net,rust-tokio]
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub full_scale: Option<Vec<String>>,
    /// CPUs for the servers, as taskset -c takes them [default: the upper half]
    #[arg(long, value_name = "LIST")]
    pub server_cpus: Option<String>,
    /// The `{workers}` given to every server [default: the number of server CPUs]
    #[arg(long, value_name = "N")]
    pub workers: Option<usize>,
    /// Where the check folder is written: <DIR>/checks/<id>/ [default: <repo>/results]
    #[arg(short, long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// How long a server may take to accept its first connection.
    #[arg(long, value_parser = parse_duration, default_value = "30s", value_name = "TIME")]
    pub start_timeout: Duration,
    /// Never install missing Debian packages (contestants' and curl, wrk, h2load).
    #[arg(long)]
    pub no_install: bool,

    /// Client process of the scale check: hold connections to this address open until stdin closes.
    #[arg(long, hide = true, value_name = "ADDR")]
    pub hold: Option<SocketAddr>,
    #[arg(long, hide = true, default_value_t = 0)]
    pub hold_count: usize,
    #[arg(long, hide = true, default_value = Scenario::Hello.name())]
    pub hold_scenario: String,
    #[arg(long, hide = true)]
    pub hold_micro: bool,
    #[arg(long, hide = true, default_value_t = 10_000)]
    pub hold_timeout_ms: u64,
    #[arg(long, hide = true, default_value_t = 0)]
    pub hold_seed: u64,
}
