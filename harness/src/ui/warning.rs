//! What a run warns of: printed in every mode, `-q` included, each in the words of its `Display`.

use std::fmt;

use crate::os::cpus::CpuSet;

/// A warning of the runner.
pub enum Warning<'a> {
    /// The run asked for the control and cannot have it: why.
    NoControl(&'a dyn fmt::Display),
    /// A manifest of the catalog that does not parse or validate: the catalog's error.
    InvalidManifest(&'a str),
    /// One of the options' notes.
    Note(&'a str),
    /// Some of the harness's threads could not be pinned to the client CPUs.
    NotPinned { client_cpus: &'a CpuSet },
    /// Writing the results failed after a pass or a pair; the run goes on.
    NotSaved(SavedAfter),
    /// A server that could not be stopped.
    NotStopped { contestant: &'a str, error: &'a anyhow::Error },
    /// What a server's stop revealed (a process left behind, a port still held), in the words the
    /// contestant's warnings keep.
    AtStop { contestant: &'a str, warning: &'a str },
}

/// What a failed save came after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SavedAfter {
    Pass,
    Pair,
}

impl fmt::Display for Warning<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::NoControl(why) => write!(f, "no control in this run: {why}"),
            Warning::InvalidManifest(e) => write!(f, "invalid manifest: {e}"),
            Warning::Note(note) => write!(f, "note: {note}"),
            Warning::NotPinned { client_cpus } => write!(f, "some harness threads could not be pinned to the client CPUs {client_cpus}"),
            Warning::NotSaved(SavedAfter::Pass) => f.write_str("could not save the results after a pass"),
            Warning::NotSaved(SavedAfter::Pair) => f.write_str("could not save the results after a pair"),
            Warning::NotStopped { contestant, error } => write!(f, "{contestant}: could not be stopped: {error:#}"),
            Warning::AtStop { contestant, warning } => write!(f, "{contestant}: {warning}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_warning_reads_as_the_runner_said_it() {
        let cpus = CpuSet::parse("2-3").unwrap();
        let error = anyhow::anyhow!("no such process").context("kill");
        let cases: Vec<(Warning, &str)> = vec![
            (Warning::NoControl(&"--no-control"), "no control in this run: --no-control"),
            (Warning::InvalidManifest("x/contestant.toml: missing field `run`"), "invalid manifest: x/contestant.toml: missing field `run`"),
            (Warning::Note("--rate is ignored"), "note: --rate is ignored"),
            (Warning::NotPinned { client_cpus: &cpus }, "some harness threads could not be pinned to the client CPUs 2-3"),
            (Warning::NotSaved(SavedAfter::Pass), "could not save the results after a pass"),
            (Warning::NotSaved(SavedAfter::Pair), "could not save the results after a pair"),
            (Warning::NotStopped { contestant: "c-epoll", error: &error }, "c-epoll: could not be stopped: kill: no such process"),
            (Warning::AtStop { contestant: "c-epoll", warning: "port 8080 still held" }, "c-epoll: port 8080 still held"),
        ];
        for (warning, said) in cases {
            assert_eq!(warning.to_string(), said);
        }
    }
}
