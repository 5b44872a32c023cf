//! The commits a bisection walks: those after the good revision up to the bad one (git's ancestry path),
//! split into the ones that change the contestant's inputs, as the build's fingerprint knows them (its
//! language folder less the other contestants' folders: `catalog::build::source_files`), and the rest,
//! which cannot have changed its build and are listed as passed over.

use std::path::Path;

use anyhow::Context as _;

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
    /// After `good`, up to and including `bad`, that change the inputs, oldest first.
    pub inputs: Vec<Commit>,
    /// The other commits of that path, oldest first: none of them changes the contestant's build.
    pub others: Vec<Commit>,
}

/// The commits of `repo` between `good` and `bad` for the contestant in `dir` (relative to the
/// repository), whose inputs are `inputs` (paths relative to the repository, the folders of other
/// contestants under them excluded by `excluded`).
pub fn between(repo: &Path, good: &str, bad: &str, inputs: &[&Path], excluded: &[&Path]) -> anyhow::Result<Between> {
    let good = resolve(repo, good)?;
    let bad = resolve(repo, bad)?;
    anyhow::ensure!(good.hash != bad.hash, "--good and --bad are the same commit ({})", good.short());
    let ancestor = git(repo, &["merge-base", "--is-ancestor", &good.hash, &bad.hash]).is_ok();
    anyhow::ensure!(ancestor, "--good {} is not an ancestor of --bad {}: a bisection walks from an older commit to a newer one", good.short(), bad.short());
    let range = format!("{}..{}", good.hash, bad.hash);
    let all = list(repo, &["rev-list", "--reverse", "--ancestry-path", &range])?;
    let mut spec: Vec<String> = vec!["--".into()];
    spec.extend(inputs.iter().map(|p| p.display().to_string()));
    spec.extend(excluded.iter().map(|p| format!(":(exclude){}", p.display())));
    let mut args = vec!["rev-list", "--reverse", "--ancestry-path", range.as_str()];
    args.extend(spec.iter().map(String::as_str));
    let touching = list(repo, &args)?;
    let (mut inputs, others): (Vec<Commit>, Vec<Commit>) = all.into_iter().partition(|c| touching.contains(c));
    // The bad end is always judged, whether or not it changed the inputs itself.
    if inputs.last() != Some(&bad) {
        inputs.push(bad.clone());
    }
    let others = others.into_iter().filter(|c| *c != bad).collect();
    Ok(Between { good, bad, inputs, others })
}

fn resolve(repo: &Path, rev: &str) -> anyhow::Result<Commit> {
    let hash = git(repo, &["rev-parse", "--verify", "--quiet", &format!("{rev}^{{commit}}")])
        .with_context(|| format!("'{rev}' names no commit of {}", repo.display()))?;
    Ok(Commit { subject: git(repo, &["log", "-1", "--format=%s", &hash])?, hash })
}

fn list(repo: &Path, args: &[&str]) -> anyhow::Result<Vec<Commit>> {
    let hashes = git(repo, args)?;
    hashes.lines().filter(|l| !l.is_empty()).map(|h| resolve(repo, h)).collect()
}

fn git(repo: &Path, args: &[&str]) -> anyhow::Result<String> {
    let out = std::process::Command::new("git").arg("-C").arg(repo).args(args).output().context("running git")?;
    anyhow::ensure!(out.status.success(), "git {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim());
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}
