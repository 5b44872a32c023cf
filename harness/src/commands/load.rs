//! `serverbench load`: one run of the load generator, printed for a person or as JSON.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;

use crate::cli::load::LoadArgs;
use crate::load::output::{describe, human_summary, timeline, to_json};
use crate::load::search::{judge, search, Slo};
use crate::load::{LoadConfig, Mode, Stop};

pub fn run(args: LoadArgs) -> anyhow::Result<()> {
    let config = args.to_config()?;
    let stop = Arc::new(AtomicBool::new(false));
    // First Ctrl-C: stop and print what was measured; a second one exits at once.
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&stop))?;
        signal_hook::flag::register(sig, Arc::clone(&stop))?;
    }
    if args.worker {
        return crate::remote::worker::serve(&config, args.start_at, stop);
    }
    let mut out = std::io::stdout().lock();
    if let Some(objective) = &args.search {
        let text = capacity(&args, config, objective, stop)?;
        return write_out(&mut out, &text);
    }
    if !args.json {
        writeln!(out, "{}", describe(&args.target, &config))?;
        out.flush()?;
    }
    let report = crate::load::run(&config, stop)?;
    if let (Some(path), Some(intervals)) = (&args.hdr_log, &report.intervals) {
        let log = intervals.to_hdr_log(report.duration_s, &format!("serverbench load {}: intervals of the measured window", args.target))?;
        std::fs::write(path, log).with_context(|| format!("cannot write the interval log {}", path.display()))?;
    }
    let text = if args.json {
        serde_json::to_string_pretty(&to_json(&config, &report))? + "\n"
    } else if args.timeline {
        timeline(&report, args.latency_unit) + &human_summary(&config, &report, args.latency_unit)
    } else {
        human_summary(&config, &report, args.latency_unit)
    };
    write_out(&mut out, &text)
}

fn write_out(out: &mut impl Write, text: &str) -> anyhow::Result<()> {
    match out.write_all(text.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// `--search`: rate rounds of the configured length (2 s unless -d says), from --rate or from the req/s of
/// a throughput round; what is printed is the capacity, its bracket and every step.
fn capacity(args: &LoadArgs, mut config: LoadConfig, objective: &str, stop: Arc<AtomicBool>) -> anyhow::Result<String> {
    let slo = Slo::parse(objective)?;
    let measure = match (config.stop.clone(), args.duration) {
        (Stop::RequestsPerConnection(_), _) => anyhow::bail!("--search runs rounds of --duration, not --requests-per-connection"),
        (_, Some(d)) => d,
        (_, None) => Duration::from_secs(2),
    };
    config.stop = Stop::Duration { warmup: args.warmup_time, measure };
    let start = match config.mode {
        Mode::Rate { requests_per_s } => requests_per_s,
        _ => {
            let probe = LoadConfig { mode: Mode::Throughput, ..config.clone() };
            crate::load::run(&probe, stop.clone())?.requests_per_s()
        }
    };
    let result = search(&slo, start, measure.as_secs_f64(), |rate| {
        if stop.load(Ordering::Relaxed) {
            anyhow::bail!("interrupted");
        }
        let report = crate::load::run(&LoadConfig { mode: Mode::Rate { requests_per_s: rate }, ..config.clone() }, stop.clone())?;
        Ok(judge(&slo, rate, &report))
    })?;
    if args.json {
        return Ok(serde_json::to_string_pretty(&serde_json::json!({
            "target": config.target.to_string(),
            "slo": result.slo.text,
            "capacity_rps": result.capacity_rps,
            "bracket": [result.bracket.0, result.bracket.1],
            "steps": result.steps,
        }))? + "\n");
    }
    let mut text = format!("Capacity search at {} on {} ({} connections, rounds of {measure:?})\n", slo.text, config.target, config.connections);
    text += "  rate asked   achieved   latency at the percentile   errors   passed\n";
    for s in &result.steps {
        let latency = s.latency_ns.map_or("n/a".to_string(), |l| format!("{:.3} ms", l as f64 / 1e6));
        text += &format!("  {:>10.0} {:>10.0} {:>27} {:>8} {:>8}\n", s.rate, s.achieved, latency, s.errors, if s.pass { "yes" } else { "no" });
    }
    text += &format!("Capacity @ {}: {}\n", slo.text, result.describe());
    Ok(text)
}
