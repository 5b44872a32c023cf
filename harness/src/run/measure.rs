//! The measuring phase: per scenario, every contestant's server started and verified, then warm-up and
//! measured rounds interleaved across the live servers, each round recorded as it ends; the servers are
//! stopped when the scenario is done.

use crate::catalog::Contestant;
use crate::launch::{start_verified, ServerSetup, Started};
use crate::model::{Measurement, MeasurementStatus};

use super::progress::{measurement_line, round_line};
use super::rounds::{self, RoundPlan};
use super::runner::{Live, Runner};

impl Runner<'_, '_> {
    pub(super) fn measure(&mut self, ready: &[&Contestant]) -> anyhow::Result<()> {
        let o = self.opts;
        let rounds_each = u64::from(o.warmup + o.rounds) * o.connections.len() as u64;
        let total: u64 = o.scenarios.iter().map(|s| ready.iter().filter(|c| c.supports(s)).count() as u64).sum::<u64>() * rounds_each;
        self.ui.start(total, "measuring");
        for scenario in &o.scenarios {
            if self.stopped() {
                break;
            }
            let mut live = Vec::new();
            for c in ready.iter().filter(|c| c.supports(scenario)) {
                if self.stopped() {
                    self.ui.drop_steps(rounds_each);
                    continue;
                }
                match self.launch(c, scenario) {
                    Some(l) => live.push(l),
                    None => self.ui.drop_steps(rounds_each),
                }
                (self.save)(self.run)?;
            }
            if !live.is_empty() {
                self.ui.line(&format!("{scenario}: {} server(s) started and verified", live.len()));
            }
            let result = self.rounds(scenario, &mut live);
            for l in live {
                self.stop_server(l.contestant, l.server);
            }
            (self.save)(self.run)?;
            result?;
        }
        Ok(())
    }

    /// Starts, waits for and verifies one server, creating its measurements. None when it failed (the
    /// measurements say why).
    pub(super) fn launch<'c>(&mut self, c: &'c Contestant, scenario: &str) -> Option<Live<'c>> {
        let o = self.opts;
        let first = self.run.measurements.len();
        for &connections in &o.connections {
            self.run.measurements.push(Measurement {
                contestant: c.name.clone(),
                scenario: scenario.to_string(),
                mode: o.mode.name().into(),
                connections,
                pipeline: o.pipeline,
                tool: o.tool.name().into(),
                status: MeasurementStatus::Pending,
                reason: None,
                response_bytes: None,
                server_log: None,
                rounds: Vec::new(),
            });
        }
        let measurements: Vec<usize> = (first..self.run.measurements.len()).collect();
        self.ui.status(format!("starting {} ({scenario})", c.name));
        let log = self.run_dir.join("logs").join(format!("{}.{scenario}.log", c.name));
        let rel = self.relative(&log);
        self.record_mut(&c.name).server_logs.push(rel.clone());
        for &i in &measurements {
            self.run.measurements[i].server_log = Some(rel.clone());
        }
        let setup = ServerSetup {
            cpus: &o.server_cpus,
            workers: o.workers,
            start_timeout: o.start_timeout,
            timeout: o.timeout,
        };
        match start_verified(c, scenario, &setup, log, self.ui, self.stop) {
            Started::Verified(server, sample) => {
                let bytes = sample.bytes.len() as u64;
                for &i in &measurements {
                    self.run.measurements[i].response_bytes = Some(bytes);
                }
                self.ui.detail(&format!("{} {scenario}: verified ({bytes} bytes)", c.name));
                Some(Live { contestant: c, server, measurements, response_bytes: bytes, failed: false })
            }
            Started::Failed(server, reason, _) => {
                self.ui.line(&format!("{} {scenario}: {}", c.name, reason.lines().next().unwrap_or_default()));
                self.fail(&measurements, reason);
                if let Some(server) = server {
                    self.stop_server(c, server);
                }
                None
            }
        }
    }

    /// Warm-up and measured rounds for every connection count, interleaved across the live servers; the
    /// starting server rotates each round so no one is always first.
    pub(super) fn rounds(&mut self, scenario: &str, live: &mut [Live]) -> anyhow::Result<()> {
        let o = self.opts;
        let total = o.warmup + o.rounds;
        let workdir = self.run_dir.join("logs");
        for (ci, &connections) in o.connections.iter().enumerate() {
            for r in 0..total {
                let n = live.len();
                let (kind, index, of) = if r < o.warmup { ("warm-up", r + 1, o.warmup) } else { ("round", r - o.warmup + 1, o.rounds) };
                let running = live.iter().filter(|l| !l.failed).count();
                if running > 0 && !self.stopped() {
                    self.ui.line(&format!("{scenario} c={connections}: {kind} {index} of {of} across {running} server(s)"));
                }
                for k in 0..n {
                    if self.stopped() {
                        return Ok(());
                    }
                    let l = &mut live[(k + r as usize) % n];
                    if l.failed {
                        continue;
                    }
                    let mi = l.measurements[ci];
                    let warmup = r < o.warmup;
                    self.ui.status(format!("{} {scenario} c={connections} {kind} {index}", l.contestant.name));
                    self.run.measurements[mi].status = MeasurementStatus::Running;
                    let plan = RoundPlan {
                        opts: o,
                        contestant: &l.contestant.name,
                        scenario,
                        micro: l.contestant.is_micro(),
                        connections,
                        response_bytes: l.response_bytes,
                        workdir: &workdir,
                    };
                    let outcome = rounds::run_round(&mut l.server, &plan, index, warmup, self.stop);
                    self.ui.step();
                    let died = l.server.exited();
                    let failure = match (outcome, died) {
                        (_, Some(status)) => Some(l.server.explain(&format!(
                            "the server exited ({status}) during {kind} {index} with {connections} connections"
                        ))),
                        (Ok(round), None) if round.load.interrupted => {
                            // A round cut short by Ctrl-C is not a round; what finished before stays.
                            self.run.measurements[mi].status = MeasurementStatus::Interrupted;
                            None
                        }
                        (Err(_), None) if self.stopped() => {
                            // The engine gave up on the interrupt before it had anything to report.
                            self.run.measurements[mi].status = MeasurementStatus::Interrupted;
                            None
                        }
                        (Err(e), None) => Some(format!("the load could not run in {kind} {index}: {e:#}")),
                        (Ok(round), None) => {
                            self.ui.detail(&round_line(&l.contestant.name, scenario, connections, &round));
                            let m = &mut self.run.measurements[mi];
                            m.rounds.push(round);
                            if !warmup && index == o.rounds {
                                m.status = MeasurementStatus::Measured;
                                self.ui.line(&measurement_line(m));
                            }
                            None
                        }
                    };
                    if let Some(reason) = failure {
                        let first = reason.lines().next().unwrap_or_default().to_string();
                        self.ui.line(&format!("{} {scenario}: failed: {first}", l.contestant.name));
                        l.failed = true;
                        let left = (o.connections.len() - ci) as u64 * u64::from(total) - u64::from(r) - 1;
                        self.ui.drop_steps(left);
                        let ms = l.measurements.clone();
                        self.fail(&ms, reason);
                    }
                    (self.save)(self.run)?;
                }
            }
        }
        Ok(())
    }
}
