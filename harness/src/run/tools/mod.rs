//! External load tools (wrk, h2load, hey, ab), run pinned to the client CPUs and parsed into the same result
//! model. wrk, h2load and ab keep no histogram the harness can read: what they print is stored, the rest
//! marked absent; hey prints every response's latency (`hey.rs`), which fills the round's histogram.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::catalog::requires;
use crate::os::cpus::CpuSet;
use crate::launch::probe::Sampler;
use crate::os::process;
use crate::load::{HttpRequest, LoadReport};
use crate::model::LatencyPoints;

use crate::run::options::{StopRule, Tool};

pub mod ab;
pub mod hey;
mod h2load;
mod summary;
mod wrk;

pub use h2load::parse_h2load;
pub use summary::ToolReport;
pub use wrk::parse_wrk;
use wrk::wrk_script;

/// One run of an external tool.
pub struct ToolRun<'a> {
    pub tool: Tool,
    pub target: SocketAddr,
    pub scenario: &'a str,
    pub connections: usize,
    pub threads: usize,
    pub pipeline: u32,
    pub stop: StopRule,
    pub timeout: Duration,
    pub cpus: &'a CpuSet,
    /// Where the request script or body and the tool's output are written.
    pub workdir: &'a Path,
    /// Names the output file, e.g. `c-epoll.hello.c64`; it holds the last round's output.
    pub label: &'a str,
    /// The checkout that builds hey (`hey::binary`).
    pub repo_root: &'a Path,
    /// Every request on a new connection (`--connection-per-request`): ab without `-k`.
    pub connection_per_request: bool,
}

/// Installs the Debian package of `tool` when its command is missing and installing is allowed (root,
/// apt, not --no-install), the way a contestant's packages are; its output goes to `logs/tools.apt.log`.
pub fn install_if_missing(tool: Tool, install: bool, logs: &Path, ui: &crate::ui::Ui) -> anyhow::Result<()> {
    let Some((command, package)) = tool.debian() else { return Ok(()) };
    if requires::find_command(command).is_some() {
        return Ok(());
    }
    let name = tool.name();
    anyhow::ensure!(
        install && requires::System::detect().can_install(),
        "--tool {name}: `{command}` is not installed (apt-get install -y {package})"
    );
    ui.emit(crate::ui::event::RunEvent::InstallingTool { package, tool: name });
    let log = logs.join("tools.apt.log");
    requires::install(&[package.to_string()], &log).map_err(|e| anyhow::anyhow!("--tool {name}: installing {package}: {e:#}"))?;
    anyhow::ensure!(requires::find_command(command).is_some(), "--tool {name}: `{command}` is still missing after installing {package}; see {}", log.display());
    Ok(())
}

/// Runs the tool and returns the report in the engine's shape with the latency the tool printed: in the
/// report's histogram when it printed every request's (hey), else as points beside an empty histogram.
pub fn run(t: &ToolRun, stop: &AtomicBool) -> anyhow::Result<(LoadReport, Option<LatencyPoints>)> {
    let request = HttpRequest::for_scenario(t.scenario)
        .ok_or_else(|| anyhow::anyhow!("{} speaks HTTP only; scenario {} needs --tool builtin", t.tool.name(), t.scenario))?;
    // ab is one thread whatever it is asked.
    let threads = if t.tool == Tool::Ab { 1 } else { t.threads.min(t.connections).max(1) };
    let name = t.tool.name();
    let ab_csv = t.workdir.join(format!("{}.{name}.csv", t.label));
    let url = format!("http://{}{}", t.target, request.path);
    let (program, args) = command_line(t, &request, threads, url, &ab_csv)?;

    let out_path = t.workdir.join(format!("{}.{name}.out", t.label));
    let out = std::fs::File::create(&out_path)?;
    let mut cmd = std::process::Command::new(&program);
    cmd.args(&args).stdin(Stdio::null()).stdout(out.try_clone()?).stderr(out);
    let started = Instant::now();
    let mut child = process::spawn_group(&mut cmd, Some(t.cpus))
        .map_err(|e| anyhow::anyhow!("could not start {name} ({program}): {e}"))?;
    let pid = child.id() as i32;
    let sampler = Sampler::spawn(pid, pid);
    let mut interrupted = false;
    let limit = match t.stop {
        StopRule::Duration(d) => d + t.timeout + Duration::from_secs(10),
        StopRule::Requests(_) => Duration::from_secs(24 * 3600),
    };
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if stop.load(Ordering::Relaxed) && !interrupted {
            // Every tool prints what it measured when interrupted.
            interrupted = true;
            process::signal_group(pid, libc::SIGINT);
        }
        if started.elapsed() > limit {
            process::signal_group(pid, libc::SIGKILL);
            let _ = child.wait();
            anyhow::bail!("{name} did not finish within {:.0} s", limit.as_secs_f64());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let usage = sampler.finish();
    let wall_s = started.elapsed().as_secs_f64();
    let text = std::fs::read_to_string(&out_path).unwrap_or_default();
    let parsed = match t.tool {
        Tool::Wrk => parse_wrk(&text),
        Tool::Hey => hey::parse(&text),
        Tool::Ab => ab::parse(&text, std::fs::read_to_string(&ab_csv).ok().as_deref()),
        _ => parse_h2load(&text),
    };
    let parsed = parsed.map_err(|e| {
        anyhow::anyhow!("{name} ({status}): {e}; its output ({}):\n{}", out_path.display(), process::log_tail(&out_path, 10))
    })?;
    let (latency, points) = match parsed.histogram {
        Some(h) => (h, None),
        None => (crate::stats::histogram::new_latency_histogram(), Some(parsed.latency)),
    };
    let report = LoadReport {
        requests: parsed.requests,
        errors: parsed.errors,
        status: parsed.status,
        duration_s: if parsed.duration_s > 0.0 { parsed.duration_s } else { wall_s },
        bytes_read: parsed.bytes_read,
        // No tool reports bytes written or the response size (the runner fills in the size the
        // verification saw); wrk and h2load no full histogram either (what they print is kept beside it).
        latency,
        client_cpu_s: usage.cpu_s.ok_or_else(|| anyhow::anyhow!("{name}'s CPU time could not be read from /proc"))?,
        interrupted,
        ..LoadReport::empty(threads, t.connections)
    };
    Ok((report, points))
}

/// The program and arguments that run `t`'s tool with `threads` threads against `url`: wrk's request
/// script and h2load's body are written to the work folder first, ab's CSV of percentiles goes to `ab_csv`.
fn command_line(t: &ToolRun, request: &HttpRequest, threads: usize, url: String, ab_csv: &Path) -> anyhow::Result<(String, Vec<String>)> {
    Ok(match t.tool {
        Tool::Wrk => {
            let script = t.workdir.join(format!("wrk-{}.lua", t.scenario));
            std::fs::write(&script, wrk_script(request))?;
            let secs = match t.stop {
                StopRule::Duration(d) => d.as_secs_f64().ceil().max(1.0) as u64,
                StopRule::Requests(_) => anyhow::bail!("wrk runs for a duration only"),
            };
            let mut a = vec![
                format!("-t{threads}"),
                format!("-c{}", t.connections),
                format!("-d{secs}s"),
                format!("--timeout={}s", t.timeout.as_secs().max(1)),
                "-s".into(),
                script.display().to_string(),
                url,
            ];
            a.extend(["--".into(), t.pipeline.to_string()]);
            ("wrk".to_string(), a)
        }
        Tool::H2load => {
            let mut a = vec![
                "--h1".into(),
                format!("-t{threads}"),
                format!("-c{}", t.connections),
                format!("-m{}", t.pipeline),
            ];
            match t.stop {
                StopRule::Duration(d) => a.push(format!("-D{}ms", d.as_millis().max(1))),
                StopRule::Requests(n) => a.push(format!("-n{}", n * t.connections as u64)),
            }
            for (k, v) in &request.headers {
                a.push(format!("-H{k}: {v}"));
            }
            if request.method == "POST" {
                let body = t.workdir.join(format!("h2load-{}.body", t.scenario));
                std::fs::write(&body, br#"{"sequence": 1}"#)?;
                a.push(format!("-d{}", body.display()));
            }
            a.push(url);
            ("h2load".to_string(), a)
        }
        Tool::Hey => {
            let a = hey::args(request, &url, t.connections, threads, t.stop, t.timeout);
            (hey::binary(t.repo_root).display().to_string(), a)
        }
        Tool::Ab => {
            let _ = std::fs::remove_file(ab_csv);
            ("ab".to_string(), ab::args(request, &url, t.connections, !t.connection_per_request, t.stop, t.timeout, ab_csv)?)
        }
        Tool::Builtin => anyhow::bail!("the built-in generator is not an external tool"),
    })
}
