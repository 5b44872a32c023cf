//! A measurement's system calls per request, the server's and the client's, from the rounds that counted
//! them: the extra counting rounds where there are any, else the measured ones.

use super::measurement::{Measurement, Round};
use super::server::{SyscallCounts, SyscallsPerRequest};

impl Measurement {
    /// The server's system calls per request, with the method that counted them and which rounds they
    /// come from: the extra counting rounds where there are any (those not disturbed), else the measured
    /// `rounds`; or why there are none.
    pub(super) fn server_syscalls(&self, rounds: &[&Round]) -> Result<(SyscallsPerRequest, Option<String>, &'static str), Uncounted> {
        let (from, rounds) = self.syscall_rounds(rounds);
        if rounds.is_empty() {
            return Err(Uncounted("every round counting system calls was disturbed (something else ran on the server's CPUs)".into()));
        }
        let per = server_syscalls(&rounds)?;
        Ok((per, rounds[0].server.syscalls_method.clone(), from))
    }

    /// The rounds system calls are read from: the extra counting rounds where there are any (those not
    /// disturbed), else the measured `rounds`; and which of the two they are.
    fn syscall_rounds<'a>(&'a self, rounds: &[&'a Round]) -> (&'static str, Vec<&'a Round>) {
        if self.counting_rounds.is_empty() {
            ("measured-rounds", rounds.to_vec())
        } else {
            ("extra-round", self.counting_rounds.iter().filter(|r| r.counts()).collect())
        }
    }

    /// The client's system calls per request over the same rounds as the server's; absent unless every one
    /// of them counted them.
    pub(super) fn client_syscalls(&self, rounds: &[&Round]) -> Option<SyscallsPerRequest> {
        let (_, rounds) = self.syscall_rounds(rounds);
        per_request(&rounds, |r| r.client_syscalls.as_ref().ok_or(())).ok().flatten()
    }
}

/// Why a measurement has no system calls per request, as its summary says.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(super) struct Uncounted(String);

/// The server's system calls per request summed over `rounds`, or why a round has none: a sum over the other
/// rounds would pass for one over all of them.
fn server_syscalls(rounds: &[&Round]) -> Result<SyscallsPerRequest, Uncounted> {
    per_request(rounds, |r| r.server.syscalls.as_ref().ok_or_else(|| Uncounted(r.server.syscalls_unavailable.clone().unwrap_or_else(|| "not counted".into()))))?.ok_or_else(|| Uncounted("no request".into()))
}

/// One side's counts summed over `rounds` and divided by their requests (None without a request); the
/// first round without counts gives its error instead.
fn per_request<'a, E>(rounds: &[&'a Round], counts: impl Fn(&'a Round) -> Result<&'a SyscallCounts, E>) -> Result<Option<SyscallsPerRequest>, E> {
    let mut sum = SyscallCounts { total: Some(0), ..Default::default() };
    for r in rounds {
        sum.add(counts(r)?);
    }
    Ok(SyscallsPerRequest::of(&sum, rounds.iter().map(|r| r.load.requests).sum()))
}
