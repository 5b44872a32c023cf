//! The commits a bisection walks: those after the good revision up to the bad one (git's ancestry path),
//! split into the ones that change the contestant's inputs, as its build's fingerprint knows them
//! (`catalog::build::BuildInputs`: its language folder less the other contestants' folders), and the rest,
//! which cannot have changed its build and are listed as passed over.

use std::path::Path;

use anyhow::Context as _;

use crate::os::git::git;

/// A commit: its full hash and its subject line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    pub hash: String,
    pub subject: String,
}

impl Commit {
    /// The first 10 characters of the hash.
    pub fn short(&self) -> &str {
        &self.hash[..self.hash.len().min(10)]
    }
}

/// The commits between the ends of a bisection.
#[derive(Debug, Clone, PartialEq)]
pub struct Between {
    pub good: Commit,
    pub bad: Commit,
    /// After `good`, oldest first, that change the inputs; always ending with `bad`, which is judged
    /// whether or not it changed them itself.
    pub inputs: Vec<Commit>,
    /// The other commits of that path, oldest first: none of them changes the contestant's build.
    pub others: Vec<Commit>,
}

/// The commits of `repo` between `good` and `bad` for a contestant whose inputs are the folders `inputs`
/// less `excluded` (paths relative to the repository).
pub fn between(repo: &Path, good: &str, bad: &str, inputs: &[&Path], excluded: &[&Path]) -> anyhow::Result<Between> {
    let (good, bad) = (resolve(repo, good)?, resolve(repo, bad)?);
    anyhow::ensure!(good.hash != bad.hash, "--good and --bad are the same commit ({})", good.short());
    let ancestor = git(repo, &["merge-base", "--is-ancestor", &good.hash, &bad.hash]).is_ok();
    anyhow::ensure!(ancestor, "--good {} is not an ancestor of --bad {}: a bisection walks from an older commit to a newer one", good.short(), bad.short());
    let range = format!("{}..{}", good.hash, bad.hash);
    let all = log(repo, &range, &[])?;
    let mut paths: Vec<String> = inputs.iter().map(|p| p.display().to_string()).collect();
    paths.extend(excluded.iter().map(|p| format!(":(exclude){}", p.display())));
    let touching = log(repo, &range, &paths)?;
    let (mut inputs, others): (Vec<Commit>, Vec<Commit>) = all.into_iter().filter(|c| *c != bad).partition(|c| touching.contains(c));
    inputs.push(bad.clone());
    Ok(Between { good, bad, inputs, others })
}

fn resolve(repo: &Path, rev: &str) -> anyhow::Result<Commit> {
    let line = git(repo, &["log", "-1", "--format=%H %s", "--end-of-options", &format!("{rev}^{{commit}}"), "--"])
        .with_context(|| format!("'{rev}' names no commit of {}", repo.display()))?;
    Ok(commit(&line))
}

/// The commits of `range` on its ancestry path, oldest first, that change `paths` (all with none).
fn log(repo: &Path, range: &str, paths: &[String]) -> anyhow::Result<Vec<Commit>> {
    let mut args = vec!["log", "--reverse", "--ancestry-path", "--format=%H %s", range, "--"];
    args.extend(paths.iter().map(String::as_str));
    Ok(git(repo, &args)?.lines().filter(|l| !l.is_empty()).map(commit).collect())
}

/// A line of `--format=%H %s`.
fn commit(line: &str) -> Commit {
    let (hash, subject) = line.split_once(' ').unwrap_or((line, ""));
    Commit { hash: hash.to_string(), subject: subject.to_string() }
}
