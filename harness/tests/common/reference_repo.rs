//! Throwaway git repositories whose catalog holds the run's control (harness/control/control.c) as a
//! contestant named `reference`, for the tests that build revisions: A/B runs against a baseline, and
//! bisection.

use std::path::{Path, PathBuf};

use super::text;

/// `git ARGS` in `dir`, which must succeed; its output.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=serverbench test", "-c", "user.email=test@serverbench.invalid", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
    text(&out.stdout).trim().to_string()
}

/// The run's control (harness/control/control.c) as a contestant named `reference`, as a manifest of a
/// catalog sees it; `env` adds a line (such as the busy-wait per request of SB_CONTROL_SPIN_NS).
pub fn reference_manifest(env: &str) -> String {
    format!(
        "name = \"reference\"\nlanguage = \"c\"\nframework = \"epoll\"\ncategory = \"micro\"\nmodel = \"single-loop\"\nio = \"epoll\"\n\
         scenarios = [\"hello\"]\nrequires = [\"cc\"]\nbuild = \"mkdir -p {{dir}}/build && cc -O2 -o {{dir}}/build/control {{dir}}/control.c\"\n\
         run = \"{{dir}}/build/control {{scenario}} {{host}} {{port}} {{workers}}\"\n{env}\n"
    )
}

pub fn control_source() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("control/control.c")).unwrap()
}

/// A throwaway git repository whose top folder is a catalog of `reference` with this source and manifest,
/// committed; its folder and the commit.
pub fn repo_at(tmp: &Path, source: &str, manifest: &str) -> (PathBuf, String) {
    let repo = tmp.join("catalog");
    let dir = repo.join("c").join("reference");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("control.c"), source).unwrap();
    std::fs::write(dir.join("contestant.toml"), manifest).unwrap();
    std::fs::write(repo.join(".gitignore"), "build/\n").unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "reference"]);
    let commit = git(&repo, &["rev-parse", "HEAD"]);
    (repo, commit)
}

