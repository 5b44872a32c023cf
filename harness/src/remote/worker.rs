//! The client host's side: `serverbench load --worker` waits for the common start instant, runs the load,
//! and tells the harness its window's edges and its report as JSON lines (`protocol`). It exits as soon as
//! its stdin closes: ssh closes it when the channel ends (the harness finished with it, was killed, or the
//! connection died), so no worker outlives the run that started it.

use std::io::{Read, Write};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use super::protocol::{unix_now, WorkerLine};
use crate::load::{self, Edge, LoadConfig, WindowWatch};

/// How far ahead a start instant may be: further means a clock or a caller gone wrong.
const LONGEST_WAIT: Duration = Duration::from_secs(60);

/// Runs one worker's load. Its lines go to stdout; the exit status is 1 when it has no report.
pub fn serve(config: &LoadConfig, start_at: Option<f64>, stop: Arc<AtomicBool>) -> anyhow::Result<()> {
    std::thread::spawn(|| {
        let mut sink = [0u8; 256];
        let mut stdin = std::io::stdin();
        while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
        // The channel is gone: nobody reads what would follow, and nothing may be left running.
        std::process::exit(1);
    });
    if let Some(at) = start_at {
        let wait = at - unix_now();
        anyhow::ensure!(wait < LONGEST_WAIT.as_secs_f64(), "the start instant is {wait:.1} s away, more than {LONGEST_WAIT:?}");
        if wait > 0.0 {
            std::thread::sleep(Duration::from_secs_f64(wait));
        }
    }
    let watch: WindowWatch = Arc::new(|edge| say(&WorkerLine::Window { open: edge == Edge::Open, unix_s: unix_now() }));
    match load::run_watched(config, stop, Some(watch)) {
        Ok(report) => {
            say(&WorkerLine::Report { report: Box::new(report) });
            Ok(())
        }
        Err(e) => {
            say(&WorkerLine::Failed { error: format!("{e:#}") });
            std::process::exit(1);
        }
    }
}

fn say(line: &WorkerLine) {
    let mut out = std::io::stdout().lock();
    // A closed stdout means the channel is gone; the stdin watcher ends the process.
    let _ = out.write_all(line.to_line().as_bytes()).and_then(|()| out.flush());
}
