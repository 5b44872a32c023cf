//! How far a host's wall clock is from this machine's: `date +%s.%N` there, answered over one ssh channel
//! a line at a time, so that a round trip is the channel's and not a new connection's. Of several round
//! trips the shortest is kept (Cristian's method): the host read its clock somewhere inside it, so the
//! offset from the trip's midpoint is true to within half its length.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::Instant;

use anyhow::Context;

use super::host::{ssh, HostSpec};
use super::protocol::unix_now;

/// Round trips made; the shortest counts.
const TRIPS: usize = 7;

/// A clock offset: the host's clock minus this machine's, and the round trip it was read over (seconds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Offset {
    pub offset_s: f64,
    pub rtt_s: f64,
}

pub fn measure(spec: &HostSpec, options: &[String]) -> anyhow::Result<Offset> {
    let mut child = ssh(spec, options, "while read -r _; do date +%s.%N; done")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot run ssh")?;
    let mut input = child.stdin.take().expect("piped");
    let mut output = BufReader::new(child.stdout.take().expect("piped"));
    let mut best: Option<Offset> = None;
    let mut failure = None;
    for _ in 0..TRIPS {
        let sent = unix_now();
        let clock = Instant::now();
        let mut line = String::new();
        if input.write_all(b"\n").and_then(|()| input.flush()).is_err() || output.read_line(&mut line).unwrap_or(0) == 0 {
            failure = Some("the channel closed".to_string());
            break;
        }
        let rtt_s = clock.elapsed().as_secs_f64();
        let Ok(there) = line.trim().parse::<f64>() else {
            failure = Some(format!("`date +%s.%N` printed '{}', not seconds with a fraction (GNU date is needed)", line.trim()));
            break;
        };
        let sample = Offset { offset_s: there - (sent + rtt_s / 2.0), rtt_s };
        if best.is_none_or(|b| sample.rtt_s < b.rtt_s) {
            best = Some(sample);
        }
    }
    drop(input);
    let out = child.wait_with_output()?;
    match (best, failure) {
        (Some(b), None) => Ok(b),
        (_, why) => anyhow::bail!(
            "could not read its clock: {} {}",
            why.unwrap_or_default(),
            String::from_utf8_lossy(&out.stderr).trim()
        ),
    }
}
