//! `bench --search`: after a configuration's measured rounds, each server's capacity under a latency
//! objective, found by `load::search` from open-loop rate rounds run between the same probes as any round.

use crate::load::search::{judge_figures, search, SearchResult, Slo, Step};
use crate::model::Flag;

use crate::ui::event::SearchEvent;

use super::probed::{Coordinates, Prober};
use super::runner::{Context, Live, Record};
use super::served::LiveServer;
use super::options::SyscallCounting;

/// The search starts at this share of the measured (closed-loop) req/s: usually a rate that passes, from
/// which doubling brackets the capacity in a step or two.
pub const START_SHARE: f64 = 0.5;
/// A step whose round was disturbed is run again, at most this many times in all.
const STEP_ATTEMPTS: u32 = 2;

/// Finds the capacity of every live server at connection count `ci`; a server that dies meanwhile is
/// failed for what remains.
pub(super) fn search_capacities<S: LiveServer>(ctx: &Context, record: &mut Record, prober: &mut Prober, scenario: &str, live: &mut [Live<S>], ci: usize, connections: usize) {
    let Some(slo) = ctx.opts.search.clone() else { return };
    for l in live.iter_mut().filter(|l| !l.failed) {
        if ctx.stopped() {
            return;
        }
        let mi = l.measurements[ci][0];
        let Some(median) = record.run.measurements[mi].summary().median_rps else { continue };
        let name = l.contestant.name.clone();
        ctx.ui.emit(SearchEvent::Begun { contestant: &name, scenario, connections, slo: &slo.text });
        match search_one(ctx, prober, &slo, scenario, l, connections, median * START_SHARE) {
            Ok(found) => {
                ctx.ui.emit(SearchEvent::Found { contestant: &name, scenario, connections, slo: &slo.text, found: &found });
                record.run.measurements[mi].capacity = Some(found.into());
            }
            Err(e) if ctx.stopped() => {
                ctx.ui.emit(SearchEvent::Interrupted { contestant: &name, error: &e });
                return;
            }
            Err(e) => {
                let reason = format!("capacity search at {}: {e:#}", slo.text);
                ctx.ui.emit(SearchEvent::Failed { contestant: &name, scenario, reason: &reason });
                if l.server.exited().is_some() {
                    l.failed = true;
                }
                record.contestant_mut(&name).warnings.push(reason);
            }
        }
    }
}

fn search_one<S: LiveServer>(ctx: &Context, prober: &mut Prober, slo: &Slo, scenario: &str, l: &mut Live<S>, connections: usize, start: f64) -> anyhow::Result<SearchResult<Flag>> {
    let mut index = 0;
    let window_s = match ctx.opts.stop {
        super::options::StopRule::Duration(d) => d.as_secs_f64(),
        super::options::StopRule::Requests(_) => 1.0,
    };
    search(slo, start, window_s, |rate| {
        let mut attempt = 0;
        loop {
            anyhow::ensure!(!ctx.stopped(), "interrupted");
            index += 1;
            attempt += 1;
            ctx.ui.emit(SearchEvent::Step { contestant: &l.contestant.name, scenario, connections, index, rate });
            let count_syscalls = ctx.opts.syscall_counts == SyscallCounting::Rounds;
            let round = prober.round(l, Coordinates { scenario, connections, rate: Some(rate), index, warmup: false, count_syscalls, ramp_served: None });
            if let Some(status) = l.server.exited() {
                anyhow::bail!(l.server.explain(&format!("the server exited ({status}) at {rate:.0} req/s")));
            }
            let round = round?;
            anyhow::ensure!(!round.load.interrupted, "interrupted");
            if round.has_flag(&Flag::Disturbed) && attempt < STEP_ATTEMPTS {
                continue;
            }
            let load = &round.load;
            return Ok(Step { flags: round.flags.clone(), ..judge_figures(slo, rate, load.requests_per_s(), &load.latency, load.errors.total()) });
        }
    })
}
