//! The profiled round of `bench --profile` (docs/profile.md): after a measurement's other rounds, one more
//! round of the same load while perf samples every task on the server's CPUs (`os::perf`), the stacks
//! folded (`profile::folded`) without the harness's own probes, saved in the run folder (report.html draws
//! them), and summed up in the measurement's `Profile`. The round goes into no other figure.

use crate::model::profile::{FrameCost, Profile};
use crate::model::Measurement;
use crate::os::perf::{Sampling, FREQUENCY_HZ};
use crate::profile::folded::Folded;

use super::probed::Prober;
use super::runner::{Context, Live};

/// Functions listed with their samples in run.json and the summaries.
const TOP_FRAMES: usize = 12;

/// The profiled round of `l` at `connections`, for measurement `m`: its profile, or why there is none.
pub(super) fn profiled_round(ctx: &Context, prober: &mut Prober, scenario: &str, l: &mut Live, connections: usize, m: &Measurement) -> Profile {
    sampled(ctx, prober, scenario, l, connections, m).unwrap_or_else(|why| Profile::unavailable(FREQUENCY_HZ, why))
}

/// The profiled round, or why there is none.
fn sampled(ctx: &Context, prober: &mut Prober, scenario: &str, l: &mut Live, connections: usize, m: &Measurement) -> Result<Profile, String> {
    if ctx.hosts.server.is_some() {
        return Err("the server runs on another host; profiles are taken on this machine only".into());
    }
    let dir = ctx.run_dir.join("profiles");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let stem = format!("{}.{scenario}.c{connections}", m.contestant);
    let sampling = Sampling::start(&ctx.opts.server_cpus, &dir.join(format!("{stem}.perf.data"))).map_err(|e| e.to_string())?;
    let round = prober.round(scenario, l, connections, m.load_fraction.and(m.rate_rps), 1, false, false, None);
    let script = sampling.stop();
    let round = round.map_err(|e| format!("the profiled round did not run: {e:#}"))?;
    let script = script.map_err(|e| e.to_string())?;
    let folded = Folded::of_perf_script(&script, Some(std::process::id()));
    let requests = round.load.requests;
    let folded_path = dir.join(format!("{stem}.folded"));
    std::fs::write(&folded_path, folded.text()).map_err(|e| format!("cannot write the profile in {}: {e}", dir.display()))?;
    let per_1000 = |n: u64| n as f64 * 1000.0 / requests.max(1) as f64;
    Ok(Profile {
        folded: Some(ctx.relative(&folded_path)),
        frequency_hz: FREQUENCY_HZ,
        samples: folded.samples,
        requests,
        requests_per_s: (round.load.duration_s > 0.0).then(|| round.load.requests_per_s()),
        unknown_frames: folded.unknown_share(),
        top_frames: folded.own_samples().into_iter().take(TOP_FRAMES).map(|(frame, n)| FrameCost { frame, samples_per_1000_requests: per_1000(n) }).collect(),
        unavailable: None,
    })
}
