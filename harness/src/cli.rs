//! The command line, defined in one place.

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "serverbench", version, about = "A benchmark of approaches to writing server applications")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Drive one server with the built-in load generator (a wrk-class client).
    Load(crate::load::cli::LoadArgs),
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
