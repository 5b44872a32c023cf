//! Getting hosts ready before the first round, one after the other, each failure naming its host: reach
//! it, read what it is (architecture, CPU, kernel, the route to the server and its MTU), copy this program
//! there into a fresh temporary folder, check that it runs (its shared libraries are there), and open a
//! channel to its clock and read its offset, which is read again before every round of a client host.
//! Client hosts here; the server host (`server_host`) is made ready the same way. The folders are removed,
//! and the clock channels closed, when the hosts are dropped.

use std::net::IpAddr;
use std::process::Stdio;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::Context;

use super::clock::{Clock, Offset};
use super::host::{shown, ssh, HostSpec};
use crate::model::HostRecord;

/// A host ready to run this program: a client host's workers, or the server host's agent.
#[derive(Debug)]
pub struct ReadyHost {
    pub spec: HostSpec,
    /// This program's copy there.
    pub binary: String,
    /// The channel to its clock, kept open for a client host (read before every round); none for the
    /// server host, whose clock is read only once.
    clock: Option<Mutex<Clock>>,
    /// How long an ssh command there took to start and answer: the start instant leaves room for it.
    pub connect_s: f64,
    pub record: HostRecord,
}

/// The hosts of a run; dropping them removes the copies.
#[derive(Debug)]
pub struct ClientHosts {
    pub hosts: Vec<ReadyHost>,
    pub ssh_options: Vec<String>,
    /// `--clock-tolerance`: how far from ours a host's clock may be, at the start and before every round.
    pub tolerance: Duration,
}

impl ClientHosts {
    /// Prepares every host, or fails on the first that cannot be used (the ones prepared before are
    /// cleaned up). `say` is told what is being done.
    pub fn prepare(specs: &[HostSpec], ssh_options: &[String], server: IpAddr, tolerance: Duration, say: &dyn Fn(&str)) -> anyhow::Result<ClientHosts> {
        let mut ready = ClientHosts { hosts: Vec::new(), ssh_options: ssh_options.to_vec(), tolerance };
        for spec in specs {
            say(&format!("client host {spec}: copying serverbench and reading its clock"));
            let host = prepare_one(spec, ssh_options, server, tolerance, "load --worker ...", true).with_context(|| format!("client host {spec}"))?;
            say(&format!(
                "client host {spec}: {} cores, {}, clock {:+.2} ms (± {:.2} ms)",
                host.record.cores,
                host.record.cpu_model,
                host.record.clock_offset_ms,
                host.record.clock_rtt_ms / 2.0
            ));
            ready.hosts.push(host);
        }
        Ok(ready)
    }

    pub fn records(&self) -> Vec<HostRecord> {
        self.hosts.iter().map(|h| h.record.clone()).collect()
    }
}

impl ReadyHost {
    /// Its clock's offset now, read over the open channel (opened again once if it was lost, as when the host
    /// went down and came back): an error when it cannot be read or is further off than `tolerance`.
    pub fn clock_now(&self, options: &[String], tolerance: Duration) -> anyhow::Result<Offset> {
        let Some(clock) = &self.clock else { anyhow::bail!("its clock is read only when it is prepared") };
        let mut clock = clock.lock().unwrap_or_else(|e| e.into_inner());
        let reading = clock.read().or_else(|_| {
            *clock = Clock::open(&self.spec, options)?;
            clock.read()
        });
        reading.and_then(|o| o.within(tolerance, Some(self.first_offset())))
    }

    /// Its clock minus ours when the run began.
    fn first_offset(&self) -> Offset {
        Offset { offset_s: self.record.clock_offset_ms / 1e3, rtt_s: self.record.clock_rtt_ms / 1e3 }
    }

}

impl Drop for ClientHosts {
    fn drop(&mut self) {
        for h in &self.hosts {
            remove_folder(&h.spec, &self.ssh_options, &h.binary);
        }
    }
}

/// The folder of a copy, removed (best effort: an unreachable host keeps it under /tmp).
pub(super) fn remove_folder(spec: &HostSpec, options: &[String], binary: &str) {
    if let Some((dir, _)) = binary.rsplit_once('/') {
        let _ = ssh(spec, options, &format!("rm -rf '{dir}'")).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).status();
    }
}

/// Runs `command` there; its stdout, or an error with what ssh and the command said.
fn run(spec: &HostSpec, options: &[String], command: &str) -> anyhow::Result<String> {
    let out = ssh(spec, options, command).stdin(Stdio::null()).output().context("cannot run ssh (is OpenSSH's client installed?)")?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let said = String::from_utf8_lossy(&out.stderr).trim().to_string();
    if out.status.code() == Some(255) {
        anyhow::bail!("cannot be reached over ssh: {said} (check `ssh -o BatchMode=yes {spec} true` works without a password prompt)");
    }
    anyhow::bail!("`{command}` failed ({}): {said}", out.status)
}

/// The facts, one a line, and a fresh folder last.
fn facts_script(server: IpAddr) -> String {
    format!(
        "uname -m; uname -sr; getconf _NPROCESSORS_ONLN; \
         echo \"$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)\"; \
         r=$(ip -o route get {server} 2>/dev/null | head -n1); echo \"$r\"; \
         dev=$(echo \"$r\" | sed -n 's/.* dev \\([^ ]*\\).*/\\1/p'); \
         echo \"$(cat /sys/class/net/$dev/mtu 2>/dev/null)\"; \
         mktemp -d /tmp/serverbench.XXXXXX"
    )
}

/// `uname -m` of this program's own build.
fn own_arch() -> &'static str {
    std::env::consts::ARCH
}

fn same_arch(there: &str) -> bool {
    there == own_arch() || (there == "arm64" && own_arch() == "aarch64")
}

/// Makes one host ready; `runs` is what the copy will be run with there, for the record.
/// `keep_clock`: whether the channel to its clock stays open for readings before the rounds.
pub(super) fn prepare_one(spec: &HostSpec, options: &[String], server: IpAddr, tolerance: Duration, runs: &str, keep_clock: bool) -> anyhow::Result<ReadyHost> {
    let started = Instant::now();
    let facts = run(spec, options, &facts_script(server))?;
    let connect_s = started.elapsed().as_secs_f64();
    let lines: Vec<&str> = facts.lines().collect();
    anyhow::ensure!(lines.len() >= 7, "did not describe itself (uname, getconf, ip, mktemp): it printed {facts:?}");
    let dir = lines[6].trim().to_string();
    anyhow::ensure!(dir.starts_with("/tmp/serverbench."), "mktemp gave '{dir}'");
    let binary = format!("{dir}/serverbench");
    let cleanup = |e: anyhow::Error| {
        remove_folder(spec, options, &binary);
        e
    };
    let arch = lines[0].trim();
    if !same_arch(arch) {
        return Err(cleanup(anyhow::anyhow!(
            "is {arch} and this serverbench is built for {}: build serverbench there, or use a host of the same architecture",
            own_arch()
        )));
    }
    let route = lines[4];
    let word_after = |key: &str| route.split_whitespace().skip_while(|w| *w != key).nth(1).map(str::to_string);
    let exe = std::env::current_exe().context("cannot find this program's own binary")?;
    // Through ssh itself rather than scp: scp needs the host's SFTP subsystem, which some servers leave out.
    let file = std::fs::File::open(&exe).with_context(|| format!("cannot read {}", exe.display()))?;
    let copied = ssh(spec, options, &format!("cat > '{binary}' && chmod 755 '{binary}'")).stdin(file).output().context("cannot run ssh")?;
    if !copied.status.success() {
        return Err(cleanup(anyhow::anyhow!("cannot copy serverbench there: {}", String::from_utf8_lossy(&copied.stderr).trim())));
    }
    run(spec, options, &format!("'{binary}' load --help >/dev/null"))
        .map_err(|e| cleanup(anyhow::anyhow!("cannot run the copy of serverbench ({binary}), a library it needs may be missing: {e:#}")))?;
    let mut clock = Clock::open(spec, options).map_err(cleanup)?;
    let offset = clock.read().and_then(|o| o.within(tolerance, None)).map_err(cleanup)?;
    let record = HostRecord {
        host: spec.to_string(),
        arch: arch.to_string(),
        kernel: lines[1].trim().to_string(),
        cores: lines[2].trim().parse().unwrap_or(0),
        cpu_model: Some(lines[3].trim()).filter(|m| !m.is_empty()).unwrap_or("unknown").to_string(),
        clock_offset_ms: offset.offset_s * 1e3,
        clock_rtt_ms: offset.rtt_s * 1e3,
        source_address: word_after("src"),
        server_address: server.to_string(),
        interface: word_after("dev"),
        mtu: lines[5].trim().parse().ok(),
        ssh_command: shown(&ssh(spec, options, &format!("{binary} {runs}"))),
        binary: binary.clone(),
    };
    Ok(ReadyHost { spec: spec.clone(), binary, clock: keep_clock.then(|| Mutex::new(clock)), connect_s, record })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn architectures_must_match() {
        assert!(same_arch(std::env::consts::ARCH));
        assert!(!same_arch("riscv64"));
    }
}
