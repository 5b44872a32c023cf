//! The profiled rounds of `bench --profile` (docs/profile.md): after a measurement's other rounds, one more
//! round of the same load while perf samples every task on the server's CPUs (`os::perf`), the stacks
//! folded (`profile::folded`) without the harness's own probes, saved in the run folder (report.html draws
//! them), and summed up in the measurement's `Profile`; for a server whose threads block, one more round
//! recording where they waited (its switches off a CPU). In an A/B run both versions take profiled rounds in
//! turn (A B B A A B...), and B's stacks are read against A's per request (`profile::diff`). The rounds go into no
//! other figure: they take no probe of the machine (`Prober::unprobed_round`), whose history judges the
//! rounds that count.

use crate::model::profile::{FrameCost, OffCpu, Profile, ProfileChange};
use crate::model::Measurement;
use crate::os::perf::{Events, NotSampled, Sampling, FREQUENCY_HZ};
use crate::profile::diff::{self, BEYOND_NOISE};
use crate::profile::folded::Folded;

use super::options::StopRule;
use super::probed::Prober;
use super::runner::{Context, Live};
use super::served::LiveServer;

/// Functions listed with their samples (or their change) in run.json and the summaries.
const TOP_FRAMES: usize = 12;
/// Seconds of profiled load each version of an A/B run gets, in rounds of the run's length taken in the
/// order A B B A A B...: a drift of the machine during them weighs on both alike. c-epoll's `epoll_wait`
/// that grew 58% per request (`MAX_EVENTS` 256 → 4, docs/ab.md) stood 2.2 standard errors of the sampling
/// noise from none with 1 s a side and within the noise with 3 s (about 2,800 samples a side); with 12 s
/// (about 11,600 samples a side at 999 Hz) it stands out.
const AB_PROFILED_S: f64 = 12.0;
/// The fewest profiled rounds a side, however long the rounds: enough turns for the order to even out drift.
const AB_ROUNDS_LEAST: usize = 6;

/// Profiled rounds each version of an A/B run takes: `AB_PROFILED_S` of load in rounds of the run's length
/// (24 of an A/B run's default 0.5 s), at least `AB_ROUNDS_LEAST`; rounds that stop after a number of requests
/// take the least.
fn ab_rounds(stop: &StopRule) -> usize {
    match stop {
        StopRule::Duration(d) if !d.is_zero() => ((AB_PROFILED_S / d.as_secs_f64()).ceil() as usize).max(AB_ROUNDS_LEAST),
        _ => AB_ROUNDS_LEAST,
    }
}

/// Why a profiled round left no profile, in the words a person reads.
#[derive(Debug, thiserror::Error)]
enum NoProfile {
    #[error("the server runs on another host; profiles are taken on this machine only")]
    ServerElsewhere,
    #[error(transparent)]
    NotSampled(#[from] NotSampled),
    #[error("the profiled round did not run: {0:#}")]
    Round(anyhow::Error),
    #[error("cannot write {}: {source}", .path.display())]
    Files { path: std::path::PathBuf, source: std::io::Error },
}

impl NoProfile {
    fn files(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> NoProfile + '_ {
        move |source| NoProfile::Files { path: path.to_path_buf(), source }
    }
}

/// What one or more profiled rounds of a server sampled.
#[derive(Default)]
struct Sampled {
    folded: Folded,
    requests: u64,
    duration_s: f64,
}

/// The profiled round of `l` at `connections`, for measurement `m`: its profile, or why there is none; for
/// a server whose threads block (`io = "blocking"`), a second round recording where they waited.
pub(super) fn profiled_round<S: LiveServer>(ctx: &Context, prober: &mut Prober, scenario: &str, l: &mut Live<S>, connections: usize, m: &Measurement) -> Profile {
    let mut sampled = Sampled::default();
    let mut profile = sample(ctx, prober, scenario, l, connections, m, Events::OnCpu, &mut sampled)
        .and_then(|()| profile_of(ctx, m, &sampled))
        .unwrap_or_else(|why| Profile::unavailable(FREQUENCY_HZ, why.to_string()));
    if profile.unavailable.is_none() && l.contestant.io == "blocking" && !ctx.stopped() {
        let mut switches = Sampled::default();
        profile.off_cpu = Some(
            sample(ctx, prober, scenario, l, connections, m, Events::Switches, &mut switches)
                .and_then(|()| off_cpu_of(ctx, m, &switches))
                .unwrap_or_else(|why| OffCpu::unavailable(why.to_string())),
        );
    }
    profile
}

/// The profiled rounds of an A/B run's two live servers (A first in `live`, with measurements `ms`): each
/// side's profile, and B's against A's where both were sampled.
pub(super) fn profiled_pairs(ctx: &Context, prober: &mut Prober, scenario: &str, live: &mut [Live], connections: usize, ms: [&Measurement; 2]) -> ([Profile; 2], Option<ProfileChange>) {
    let mut sampled = [Sampled::default(), Sampled::default()];
    let mut failed: [Option<String>; 2] = [None, None];
    for k in (0..ab_rounds(&ctx.opts.stop)).flat_map(|r| if r % 2 == 0 { [0, 1] } else { [1, 0] }) {
        if failed[k].is_none() && !ctx.stopped() {
            failed[k] = sample(ctx, prober, scenario, &mut live[k], connections, ms[k], Events::OnCpu, &mut sampled[k]).err().map(|e| e.to_string());
        }
    }
    let profile = |k: usize| match failed[k].clone() {
        Some(why) => Profile::unavailable(FREQUENCY_HZ, why),
        None => profile_of(ctx, ms[k], &sampled[k]).unwrap_or_else(|why| Profile::unavailable(FREQUENCY_HZ, why.to_string())),
    };
    let profiles = [profile(0), profile(1)];
    let change = profiles.iter().all(|p| p.unavailable.is_none()).then(|| change_of(&sampled[0], &sampled[1]));
    (profiles, change)
}

/// One profiled round of `l` recording `events`, its stacks and requests added to `into`.
#[allow(clippy::too_many_arguments)]
fn sample<S: LiveServer>(ctx: &Context, prober: &mut Prober, scenario: &str, l: &mut Live<S>, connections: usize, m: &Measurement, events: Events, into: &mut Sampled) -> Result<(), NoProfile> {
    if ctx.hosts.server.is_some() {
        return Err(NoProfile::ServerElsewhere);
    }
    let dir = profiles_dir(ctx)?;
    let sampling = Sampling::start(&ctx.opts.server_cpus, &dir.join(format!("{}.perf.data", stem(m))), events)?;
    let round = prober.unprobed_round(scenario, l, connections, m.load_fraction.and(m.rate_rps));
    let script = sampling.stop();
    let round = round.map_err(NoProfile::Round)?;
    let script = script?;
    into.folded.merge(&Folded::of_perf_script(&script, Some(std::process::id())));
    into.requests += round.load.requests;
    into.duration_s += round.load.duration_s;
    Ok(())
}

/// The profile of what was sampled, its folded stacks saved beside the others.
fn profile_of(ctx: &Context, m: &Measurement, s: &Sampled) -> Result<Profile, NoProfile> {
    let folded = save(ctx, m, "folded", &s.folded)?;
    let per_1000 = |n: u64| n as f64 * 1000.0 / s.requests.max(1) as f64;
    Ok(Profile {
        folded: Some(folded),
        frequency_hz: FREQUENCY_HZ,
        samples: s.folded.samples,
        requests: s.requests,
        requests_per_s: (s.duration_s > 0.0).then(|| s.requests as f64 / s.duration_s),
        unknown_frames: s.folded.unknown_share(),
        top_frames: s.folded.own_samples().into_iter().take(TOP_FRAMES).map(|(frame, n)| FrameCost { frame, samples_per_1000_requests: per_1000(n) }).collect(),
        unavailable: None,
        off_cpu: None,
    })
}

/// Where the blocking server's tasks waited, its switches' stacks saved beside its profile.
fn off_cpu_of(ctx: &Context, m: &Measurement, s: &Sampled) -> Result<OffCpu, NoProfile> {
    let folded = save(ctx, m, "off-cpu.folded", &s.folded)?;
    let per_1000 = |n: u64| n as f64 * 1000.0 / s.requests.max(1) as f64;
    Ok(OffCpu {
        folded: Some(folded),
        switches: s.folded.samples,
        requests: s.requests,
        blocked_in: s.folded.blocked_in().into_iter().take(TOP_FRAMES).map(|(frame, n)| FrameCost { frame, samples_per_1000_requests: per_1000(n) }).collect(),
        unavailable: None,
    })
}

/// B's sampled stacks against A's: the functions whose change stands beyond the noise.
fn change_of(a: &Sampled, b: &Sampled) -> ProfileChange {
    fn side(s: &Sampled) -> diff::Side<'_> {
        diff::Side { folded: &s.folded, requests: s.requests }
    }
    let frames = diff::changes(side(a), side(b))
        .into_iter()
        .filter(|c| c.z.abs() >= BEYOND_NOISE)
        .take(TOP_FRAMES)
        .collect();
    ProfileChange { a_samples: a.folded.samples, b_samples: b.folded.samples, frames }
}

/// Saves `folded` as profiles/`stem(m)`.`extension`; its path relative to the run folder.
fn save(ctx: &Context, m: &Measurement, extension: &str, folded: &Folded) -> Result<String, NoProfile> {
    let path = profiles_dir(ctx)?.join(format!("{}.{extension}", stem(m)));
    std::fs::write(&path, folded.text()).map_err(NoProfile::files(&path))?;
    Ok(ctx.relative(&path))
}

fn profiles_dir(ctx: &Context) -> Result<std::path::PathBuf, NoProfile> {
    let dir = ctx.run_dir.join("profiles");
    std::fs::create_dir_all(&dir).map_err(NoProfile::files(&dir))?;
    Ok(dir)
}

/// A measurement's files in profiles/: `NAME.SCENARIO.cCONNECTIONS`.
fn stem(m: &Measurement) -> String {
    format!("{}.{}.c{}", m.contestant, m.scenario, m.connections)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn an_ab_run_profiles_each_side_for_twelve_seconds_in_rounds_of_its_length() {
        assert_eq!(ab_rounds(&StopRule::Duration(Duration::from_millis(500))), 24);
        assert_eq!(ab_rounds(&StopRule::Duration(Duration::from_millis(700))), 18, "17.1 rounds, rounded up");
        assert_eq!(ab_rounds(&StopRule::Duration(Duration::from_secs(2))), 6);
        assert_eq!(ab_rounds(&StopRule::Duration(Duration::from_secs(10))), AB_ROUNDS_LEAST, "never fewer turns than the least");
        assert_eq!(ab_rounds(&StopRule::Requests(1000)), AB_ROUNDS_LEAST);
        assert_eq!(ab_rounds(&StopRule::Duration(Duration::ZERO)), AB_ROUNDS_LEAST);
    }
}
