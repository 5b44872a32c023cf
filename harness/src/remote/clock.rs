//! How far a host's wall clock is from this machine's: `date +%s.%N` there, answered over one ssh channel
//! a line at a time, so that a round trip is the channel's and not a new connection's. Of several round
//! trips the shortest is kept (Cristian's method): the host read its clock somewhere inside it, so the
//! offset from the trip's midpoint is true to within half its length. The channel stays open for the whole
//! run, so that the offset is read again before every round for the price of a few round trips.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;

use super::host::{ssh, HostSpec};
use super::protocol::unix_now;

/// Round trips made per reading; the shortest counts.
const TRIPS: usize = 7;

/// A clock offset: the host's clock minus this machine's, and the round trip it was read over (seconds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Offset {
    pub offset_s: f64,
    pub rtt_s: f64,
}

impl Offset {
    /// The offset, or an error when it is beyond `tolerance`; `first` is the run's first reading, named
    /// when the clock has moved since.
    pub fn within(self, tolerance: Duration, first: Option<Offset>) -> anyhow::Result<Offset> {
        if self.offset_s.abs() <= tolerance.as_secs_f64() {
            return Ok(self);
        }
        let since = first.map_or(String::new(), |f| format!(" (it was {:+.3} ms when the run began)", f.offset_s * 1e3));
        anyhow::bail!(
            "its clock is {:+.3} ms from this machine's (± {:.3} ms){since}, beyond --clock-tolerance {tolerance:?}: synchronise the clocks (NTP, chrony) or raise the tolerance",
            self.offset_s * 1e3,
            self.rtt_s * 1e3 / 2.0,
        )
    }
}

/// An open channel to a host's clock; dropping it ends the loop there (its stdin closes).
#[derive(Debug)]
pub struct Clock {
    child: Child,
    input: Option<ChildStdin>,
    output: BufReader<ChildStdout>,
}

impl Clock {
    pub fn open(spec: &HostSpec, options: &[String]) -> anyhow::Result<Clock> {
        let mut child = ssh(spec, options, "while read -r _; do date +%s.%N; done")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .context("cannot run ssh")?;
        let input = child.stdin.take();
        let output = BufReader::new(child.stdout.take().expect("piped"));
        Ok(Clock { child, input, output })
    }

    /// One reading: the shortest of several round trips.
    pub fn read(&mut self) -> anyhow::Result<Offset> {
        let mut best: Option<Offset> = None;
        for _ in 0..TRIPS {
            let sent = unix_now();
            let clock = Instant::now();
            let mut line = String::new();
            let Some(input) = self.input.as_mut() else { return Err(self.failed("the channel was closed")) };
            if input.write_all(b"\n").and_then(|()| input.flush()).is_err() || self.output.read_line(&mut line).unwrap_or(0) == 0 {
                return Err(self.failed("the channel closed"));
            }
            let rtt_s = clock.elapsed().as_secs_f64();
            let Ok(there) = line.trim().parse::<f64>() else {
                return Err(self.failed(&format!("`date +%s.%N` printed '{}', not seconds with a fraction (GNU date is needed)", line.trim())));
            };
            let sample = Offset { offset_s: there - (sent + rtt_s / 2.0), rtt_s };
            if best.is_none_or(|b| sample.rtt_s < b.rtt_s) {
                best = Some(sample);
            }
        }
        Ok(best.expect("TRIPS > 0"))
    }

    /// The error of a failed reading, with what ssh said; the channel is closed.
    fn failed(&mut self, why: &str) -> anyhow::Error {
        self.close();
        let mut said = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut said);
        }
        anyhow::anyhow!("could not read its clock: {why} {}", said.trim())
    }

    fn close(&mut self) {
        drop(self.input.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Clock {
    fn drop(&mut self) {
        self.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_offset_beyond_the_tolerance_is_refused_and_says_how_it_moved() {
        let tolerance = Duration::from_millis(100);
        let near = Offset { offset_s: -0.099, rtt_s: 0.001 };
        assert_eq!(near.within(tolerance, None).unwrap(), near);
        let far = Offset { offset_s: 0.1505, rtt_s: 0.002 };
        let first = Offset { offset_s: 0.0021, rtt_s: 0.001 };
        let e = far.within(tolerance, Some(first)).unwrap_err().to_string();
        assert!(e.contains("+150.500 ms") && e.contains("± 1.000 ms") && e.contains("it was +2.100 ms when the run began"), "{e}");
        assert!(e.contains("--clock-tolerance 100ms"), "{e}");
        assert!(!Offset { offset_s: -0.2, rtt_s: 0.0 }.within(tolerance, None).unwrap_err().to_string().contains("when the run began"));
    }
}
