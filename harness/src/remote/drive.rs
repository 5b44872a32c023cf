//! One round of load from the client hosts: every host's clock offset read again (a host whose clock has
//! drifted beyond the tolerance fails the round), the round's connections (and rate) shared out over the
//! hosts, every worker started over ssh with the same start instant (in its own clock: ours plus its
//! offset), the window's edges passed on as the first host opens and the last one closes, and the reports
//! merged. A host whose worker ends without a report fails the round with its name and what it said.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use super::args::load_args;
use super::host::ssh;
use super::merge::merge;
use super::protocol::{unix_now, WorkerLine};
use super::setup::ClientHosts;
use crate::load::{Edge, LoadConfig, LoadReport, Mode, WindowWatch};
use crate::model::HostLoad;

/// Time given to every worker to be started and connected before the common start, beyond the slowest
/// ssh start seen while preparing.
const START_MARGIN: Duration = Duration::from_millis(500);

/// A round's merged report and each host's part of it.
#[derive(Debug)]
pub struct Merged {
    pub report: LoadReport,
    pub hosts: Vec<HostLoad>,
}

/// What a host's reader thread passes on.
enum Event {
    Line(WorkerLine),
    /// Its stdout ended (the worker exited or the connection is gone).
    Ended,
}

/// `config` split over `n` hosts: connections as evenly as they go (the first hosts take the remainder),
/// threads at most the host's connections, a rate in proportion to the connections.
pub fn shares(config: &LoadConfig, n: usize) -> anyhow::Result<Vec<LoadConfig>> {
    anyhow::ensure!(config.connections >= n, "{} connections cannot be shared over {n} client hosts: give -c at least {n}", config.connections);
    Ok((0..n)
        .map(|i| {
            let connections = config.connections / n + usize::from(i < config.connections % n);
            let mode = match config.mode {
                Mode::Rate { requests_per_s } => Mode::Rate { requests_per_s: requests_per_s * connections as f64 / config.connections as f64 },
                ref m => m.clone(),
            };
            LoadConfig { connections, threads: config.threads.min(connections).max(1), mode, ..config.clone() }
        })
        .collect())
}

impl ClientHosts {
    /// Runs `config` (a round of `scenario`; `micro` holds hello to every byte) from every host.
    pub fn run(&self, config: &LoadConfig, scenario: &str, micro: bool, stop: &Arc<AtomicBool>, watch: Option<WindowWatch>) -> anyhow::Result<Merged> {
        let shares = shares(config, self.hosts.len())?;
        let offsets = self
            .hosts
            .iter()
            .map(|h| h.clock_now(&self.ssh_options, self.tolerance).map(|o| o.offset_s).map_err(|e| e.context(format!("client host {}", h.spec))))
            .collect::<anyhow::Result<Vec<f64>>>()?;
        let lead = self.hosts.iter().map(|h| h.connect_s).fold(0.0, f64::max) * 2.0 + START_MARGIN.as_secs_f64();
        let start = unix_now() + lead;
        let (tx, rx) = mpsc::channel::<(usize, Event)>();
        let mut children: Vec<Child> = Vec::new();
        let mut commands = Vec::new();
        for (i, (host, share)) in self.hosts.iter().zip(&shares).enumerate() {
            let args = load_args(share, scenario, micro);
            let line = format!("exec '{}' load --worker --start-at {:.6} {}", host.binary, start + offsets[i], args.join(" "));
            let spawned = ssh(&host.spec, &self.ssh_options, &line).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn();
            let mut child = match spawned {
                Ok(c) => c,
                Err(e) => {
                    end_all(&mut children);
                    anyhow::bail!("client host {}: cannot run ssh: {e}", host.spec);
                }
            };
            let stdout = child.stdout.take().expect("piped");
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                    if let Ok(l) = serde_json::from_str::<WorkerLine>(&line) {
                        let _ = tx.send((i, Event::Line(l)));
                    }
                }
                let _ = tx.send((i, Event::Ended));
            });
            children.push(child);
            commands.push(args);
        }
        drop(tx);
        let n = self.hosts.len();
        let mut reports: Vec<Option<LoadReport>> = (0..n).map(|_| None).collect();
        let mut failures: Vec<Option<String>> = vec![None; n];
        let mut opened: Vec<Option<f64>> = vec![None; n];
        let (mut ended, mut closed) = (0, 0);
        let mut window_open = false;
        let mut interrupted = false;
        // The first host whose worker ended without a report: the others were stopped because of it.
        let mut lost: Option<usize> = None;
        while ended < n {
            if stop.load(Ordering::Relaxed) && !interrupted {
                // Closing the channels ends the workers; what they measured is not a round.
                interrupted = true;
                end_all(&mut children);
            }
            let Ok((i, event)) = rx.recv_timeout(Duration::from_millis(100)) else { continue };
            match event {
                Event::Line(WorkerLine::Window { open: true, unix_s }) => {
                    opened[i] = Some(unix_s - offsets[i]);
                    if !window_open {
                        window_open = true;
                        if let Some(w) = &watch {
                            w(Edge::Open);
                        }
                    }
                }
                Event::Line(WorkerLine::Window { open: false, .. }) => {
                    closed += 1;
                    if closed == n {
                        if let Some(w) = watch.as_ref().filter(|_| window_open) {
                            w(Edge::Close);
                        }
                    }
                }
                Event::Line(WorkerLine::Report { report }) => reports[i] = Some(*report),
                Event::Line(WorkerLine::Failed { error }) => failures[i] = Some(error),
                Event::Ended => {
                    ended += 1;
                    // A host that ends without a report ends the round: the others are stopped at once.
                    if reports[i].is_none() && !interrupted && lost.is_none() {
                        lost = Some(i);
                        for (k, c) in children.iter_mut().enumerate() {
                            if k != i && reports[k].is_none() {
                                let _ = c.kill();
                            }
                        }
                    }
                }
            }
        }
        if window_open && closed < n {
            if let Some(w) = &watch {
                w(Edge::Close);
            }
        }
        // Every worker has said all it will: closing stdin ends it, and with it the ssh session.
        let mut said = Vec::new();
        for c in children.iter_mut() {
            drop(c.stdin.take());
            let mut text = String::new();
            if let Some(mut e) = c.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut e, &mut text);
            }
            let status = c.wait().ok();
            said.push((status, text));
        }
        anyhow::ensure!(!interrupted, "interrupted");
        if let Some(i) = lost {
            let (status, stderr) = &said[i];
            let why = failures[i].clone().unwrap_or_else(|| {
                let how = if status.and_then(|s| s.code()) == Some(255) { "the ssh connection failed or was cut" } else { "the worker exited" };
                format!("{how} ({})", status.map_or("unknown status".to_string(), |s| s.to_string()))
            });
            let tail: Vec<&str> = stderr.lines().rev().take(3).collect::<Vec<_>>().into_iter().rev().collect();
            let tail = if tail.is_empty() { String::new() } else { format!(": {}", tail.join(" / ")) };
            anyhow::bail!("client host {}: no report from its worker: {why}{tail}", self.hosts[i].spec);
        }
        let first_open = opened.iter().flatten().copied().fold(f64::INFINITY, f64::min);
        let cpus = config.cpus.as_ref().map_or(config.threads, Vec::len);
        let mut parts = Vec::new();
        let mut hosts = Vec::new();
        for (i, report) in reports.into_iter().enumerate() {
            let host = &self.hosts[i].spec;
            let report = report.expect("a host without a report is `lost`");
            hosts.push(HostLoad {
                host: host.to_string(),
                requests: report.requests,
                errors: report.errors.total(),
                latency_count: report.latency.len(),
                duration_s: report.duration_s,
                threads: report.threads,
                connections: report.connections,
                client_cpu_s: report.client_cpu_s,
                client_work_s: report.client_work_s(),
                client_limit_pct: report.client_limit_pct(report.duration_s, cpus),
                window_open_s: opened[i].map(|t| t - first_open),
                clock_offset_ms: Some(offsets[i] * 1e3),
                command: commands[i].clone(),
            });
            parts.push(report);
        }
        Ok(Merged { report: merge(&parts)?, hosts })
    }
}

/// Closes every channel: the ssh clients are killed, so the sessions end and each worker's stdin closes.
fn end_all(children: &mut [Child]) {
    for c in children.iter_mut() {
        let _ = c.kill();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_and_rate_are_shared_out() {
        let mut c = LoadConfig::new("198.18.1.1:1".parse().unwrap());
        c.connections = 5;
        c.threads = 2;
        c.mode = Mode::Rate { requests_per_s: 1000.0 };
        let s = shares(&c, 2).unwrap();
        assert_eq!(s.iter().map(|s| s.connections).collect::<Vec<_>>(), [3, 2]);
        assert_eq!(s.iter().map(|s| s.threads).collect::<Vec<_>>(), [2, 2]);
        assert_eq!(s[0].mode, Mode::Rate { requests_per_s: 600.0 });
        assert_eq!(s[1].mode, Mode::Rate { requests_per_s: 400.0 });
        c.connections = 1;
        assert!(shares(&c, 2).unwrap_err().to_string().contains("-c at least 2"));
    }
}
