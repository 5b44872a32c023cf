//! serverbench: a benchmark of approaches to writing server applications.

pub mod cli;
pub mod load;
pub mod stats;

/// Runs one parsed command line.
pub fn run(cli: cli::Cli) -> anyhow::Result<()> {
    match cli.command {
        cli::Command::Load(args) => load::cli::run(args),
    }
}
