//! serverbench: a benchmark of approaches to writing server applications.

// serde_json's json! macro of `serverbench load --json` is deeper than the default limit.
#![recursion_limit = "256"]

pub mod bisect;
pub mod catalog;
pub mod check;
pub mod cli;
pub mod commands;
pub mod compare;
pub mod history;
pub mod launch;
pub mod load;
pub mod model;
pub mod os;
pub mod profile;
pub mod remote;
pub mod report;
pub mod run;
pub mod stats;
#[cfg(test)]
mod testing;
pub mod ui;
pub mod wire;

use ui::{Ui, Verbosity};

/// Runs one parsed command line.
pub fn run(cli: cli::Cli) -> anyhow::Result<()> {
    let ui = Ui::new(match (cli.quiet, cli.verbose) {
        (true, _) => Verbosity::Quiet,
        (_, true) => Verbosity::Verbose,
        _ => Verbosity::Normal,
    });
    match cli.command {
        cli::Command::Load(args) => commands::load::run(args),
        cli::Command::Agent(args) => commands::agent(args),
        cli::Command::List(args) => commands::list(args),
        cli::Command::Bench(args) => commands::bench(args, &ui),
        cli::Command::Check(args) => commands::check::run(args, &ui),
        cli::Command::Build(args) => commands::build(args, &ui),
        cli::Command::Responses(args) => commands::responses(args, &ui),
        cli::Command::Versions(args) => commands::versions(args),
        cli::Command::Report(args) => commands::report(args, &ui),
        cli::Command::Compare(args) => commands::compare(args),
        cli::Command::History(args) => commands::history::run(args),
        cli::Command::Bisect(args) => commands::bisect::run(args, &ui),
    }
}

/// The process exit code for an error: 130 for an interrupted run (as a shell reports SIGINT), 3 for a
/// regression that `compare --fail-on` was asked to fail on, 1 otherwise.
pub fn exit_code(error: &anyhow::Error) -> i32 {
    if error.downcast_ref::<commands::Interrupted>().is_some() {
        130
    } else if error.downcast_ref::<compare::Regressed>().is_some() {
        compare::gate::REGRESSION_EXIT
    } else {
        1
    }
}
