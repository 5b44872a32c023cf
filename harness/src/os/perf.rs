//! On-CPU stacks sampled by Linux perf, driven as a tool (Debian's `linux-perf`): `perf record` of every
//! task on a set of CPUs (so that a forking server's children are in it) at a fixed frequency with the
//! software `cpu-clock` event (a VM without a hardware PMU has it too), call chains unwound from DWARF
//! (frame pointers break at Debian's glibc, where a sample in `getppid` lost `main`), kernel and user;
//! then `perf script` reads the samples back as text for `profile::folded`. For servers whose threads block,
//! a sampling of the other kind records every switch off a CPU (`sched:sched_switch`) with its call chain:
//! where the waiting happens.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use super::cpus::CpuSet;
use super::process::{self, Waited};

/// Samples a second on each CPU: not 1000, so that sampling does not run in step with a 1000 Hz timer.
pub const FREQUENCY_HZ: u32 = 999;
/// The user stack copied with each sample for DWARF unwinding, in bytes: deep enough for the servers'
/// stacks (an event loop under a runtime's scheduler), small enough that a round of samples stays tens of MB.
const STACK_BYTES: u32 = 16_384;
/// How long perf may take to open its events and write its header.
const START_TIMEOUT: Duration = Duration::from_secs(5);
/// How long perf may take to write its samples after SIGINT, and `perf script` to unwind them.
const STOP_TIMEOUT: Duration = Duration::from_secs(120);

/// What a sampling records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Events {
    /// Where the CPU time goes: `cpu-clock` at `FREQUENCY_HZ`, call chains from DWARF.
    OnCpu,
    /// Where the tasks wait: every `sched:sched_switch`, with the kernel's call chain and the user frames
    /// that frame pointers reach (a DWARF copy of the stack at every switch would cost more than the
    /// switch), and the tracepoint's fields, which tell a task that blocked from one that was preempted.
    Switches,
}

impl Events {
    fn record_args(self) -> Vec<String> {
        match self {
            Events::OnCpu => ["-e", "cpu-clock", "-F", &FREQUENCY_HZ.to_string(), "--call-graph", &format!("dwarf,{STACK_BYTES}")].map(String::from).to_vec(),
            Events::Switches => ["-e", "sched:sched_switch", "--call-graph", "fp"].map(String::from).to_vec(),
        }
    }

    fn script_fields(self) -> &'static str {
        match self {
            Events::OnCpu => "comm,pid,ip,sym,dso",
            Events::Switches => "comm,pid,trace,ip,sym,dso",
        }
    }
}

/// Why a profile could not be taken, in the words a person reads.
#[derive(Debug, thiserror::Error)]
pub enum NotSampled {
    #[error("perf is not installed (Debian's linux-perf): {0}")]
    NoPerf(std::io::Error),
    #[error("perf could not sample the server's CPUs (the kernel refused, or perf failed): {0}")]
    Refused(String),
    #[error("perf did not answer within {} s; its log: {log}", .within.as_secs())]
    Hung { within: Duration, log: String },
    #[error("the profile's files: {0}")]
    Io(#[from] std::io::Error),
}

/// `perf record` running on a set of CPUs, writing to a data file beside its log.
pub struct Sampling {
    events: Events,
    child: Child,
    data: PathBuf,
    log: PathBuf,
}

impl Sampling {
    /// Starts recording `events` of every task on `cpus` into `data` (its log beside it, `.log`), and
    /// returns once perf has opened its events.
    pub fn start(cpus: &CpuSet, data: &Path, events: Events) -> Result<Sampling, NotSampled> {
        let log = data.with_extension("log");
        let out = std::fs::File::create(&log)?;
        let list = cpus.cpus().iter().map(usize::to_string).collect::<Vec<_>>().join(",");
        let mut cmd = Command::new("perf");
        cmd.arg("record")
            .args(events.record_args())
            .args(["-C", &list, "-o"])
            .arg(data)
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out);
        let _ = std::fs::remove_file(data);
        let child = process::spawn_group(&mut cmd, None).map_err(NotSampled::NoPerf)?;
        let mut sampling = Sampling { events, child, data: data.to_path_buf(), log };
        // perf writes the data file's header once its events are open.
        let began = Instant::now();
        loop {
            if let Some(status) = sampling.child.try_wait()? {
                return Err(NotSampled::Refused(format!("perf record exited ({status}):\n{}", process::log_tail(&sampling.log, 5))));
            }
            if std::fs::metadata(&sampling.data).is_ok_and(|m| m.len() > 0) {
                return Ok(sampling);
            }
            if began.elapsed() >= START_TIMEOUT {
                sampling.kill();
                return Err(NotSampled::Hung { within: START_TIMEOUT, log: process::log_tail(&sampling.log, 5) });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stops sampling and reads the samples back as `perf script` prints them: each sample a line with the
    /// task's name and pid (and a switch's fields), then its frames, innermost first, one a line (address,
    /// symbol, object), and a blank line. The data file is removed; `perf script`'s complaints go to the log.
    pub fn stop(mut self) -> Result<String, NotSampled> {
        let pgid = self.child.id() as i32;
        process::signal_group(pgid, libc::SIGINT);
        let never = AtomicBool::new(false);
        match process::wait(&mut self.child, STOP_TIMEOUT, &never)? {
            Waited::Exited(_) => {}
            _ => {
                self.kill();
                return Err(NotSampled::Hung { within: STOP_TIMEOUT, log: process::log_tail(&self.log, 5) });
            }
        }
        let log = std::fs::OpenOptions::new().append(true).open(&self.log)?;
        let script = Command::new("perf")
            .args(["script", "-F", self.events.script_fields(), "-i"])
            .arg(&self.data)
            .stdin(Stdio::null())
            .stderr(log)
            .output()
            .map_err(NotSampled::NoPerf)?;
        let _ = std::fs::remove_file(&self.data);
        if !script.status.success() {
            return Err(NotSampled::Refused(format!("perf script exited ({}):\n{}", script.status, process::log_tail(&self.log, 5))));
        }
        Ok(String::from_utf8_lossy(&script.stdout).into_owned())
    }

    fn kill(&mut self) {
        process::signal_group(self.child.id() as i32, libc::SIGKILL);
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.data);
    }
}

impl Drop for Sampling {
    /// A sampling never stopped (an error or an interrupt between start and stop) leaves no perf behind.
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.kill();
        }
    }
}
