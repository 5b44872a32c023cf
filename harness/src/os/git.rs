//! git, asked in a folder: the one way the harness reads a repository (the revision a run's catalog was
//! at, an A/B run's baseline commit and its worktree, the files a contestant's build stamp covers). The
//! tests' own `testing.rs`, which the test binaries include by path, asks it apart.

use std::path::Path;
use std::process::{Command, Stdio};

/// Why git gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("cannot run git: {0}")]
    Spawn(#[from] std::io::Error),
    #[error("git {args}: {stderr}")]
    Failed { args: String, stderr: String },
}

/// The output of `git ARGS` run in `dir`, trimmed.
pub fn git(dir: &Path, args: &[&str]) -> Result<String, GitError> {
    let out = Command::new("git").args(args).current_dir(dir).stdin(Stdio::null()).output()?;
    if !out.status.success() {
        return Err(GitError::Failed { args: args.join(" "), stderr: String::from_utf8_lossy(&out.stderr).trim().to_string() });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The commit checked out in the work tree that holds `dir`, and whether the tree differs from it: a
/// tracked file changed, or a file git does not ignore added.
pub fn revision(dir: &Path) -> Result<(String, bool), GitError> {
    let commit = git(dir, &["rev-parse", "--verify", "HEAD"])?;
    let dirty = !git(dir, &["status", "--porcelain"])?.is_empty();
    Ok((commit, dirty))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_work_tree_names_its_commit_and_says_when_it_changed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let run = |args: &[&str]| git(dir, args).unwrap();
        run(&["init", "--quiet"]);
        std::fs::write(dir.join("a.txt"), "one").unwrap();
        run(&["add", "a.txt"]);
        run(&["-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "one"]);
        let (commit, dirty) = revision(dir).unwrap();
        assert_eq!((commit.len(), dirty), (40, false));
        std::fs::write(dir.join("a.txt"), "two").unwrap();
        assert_eq!(revision(dir).unwrap(), (commit.clone(), true), "a changed file");
        run(&["checkout", "--quiet", "a.txt"]);
        std::fs::write(dir.join("b.txt"), "new").unwrap();
        assert!(revision(dir).unwrap().1, "a new file");
        let outside = tempfile::tempdir().unwrap();
        assert!(matches!(revision(outside.path()), Err(GitError::Failed { .. })), "not a work tree");
    }
}
