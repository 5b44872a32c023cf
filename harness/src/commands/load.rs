//! `serverbench load`: one run of the load generator, printed for a person or as JSON.

use std::io::Write;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::cli::load::LoadArgs;
use crate::load::output::{describe, human_summary, to_json};

pub fn run(args: LoadArgs) -> anyhow::Result<()> {
    let config = args.to_config()?;
    let stop = Arc::new(AtomicBool::new(false));
    // First Ctrl-C: stop and print what was measured; a second one exits at once.
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&stop))?;
        signal_hook::flag::register(sig, Arc::clone(&stop))?;
    }
    let mut out = std::io::stdout().lock();
    if !args.json {
        writeln!(out, "{}", describe(&args.target, &config))?;
        out.flush()?;
    }
    let report = crate::load::run(&config, stop)?;
    let text = if args.json {
        serde_json::to_string_pretty(&to_json(&config, &report))? + "\n"
    } else {
        human_summary(&config, &report, args.latency_unit)
    };
    match out.write_all(text.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}
