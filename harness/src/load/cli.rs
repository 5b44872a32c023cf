//! `serverbench load`: options, validation into a LoadConfig, and the human and JSON output.

use clap::Args;

#[derive(Debug, Args)]
pub struct LoadArgs {
    /// Target, as http://HOST:PORT/PATH or HOST:PORT
    pub target: String,
}

pub fn run(args: LoadArgs) -> anyhow::Result<()> {
    let _ = args;
    anyhow::bail!("the load generator is being written")
}
