//! Builds, cached: a stamp per contestant folder and build command records a fingerprint of the sources
//! (the contestant's files plus the shared files of its language folder, e.g. go.mod or Cargo.lock), the
//! manifest and the command. An unchanged fingerprint after a successful build skips the build; otherwise
//! the build command runs, and the build tool's own incrementality keeps it quick. A stamp is of one folder:
//! a folder made again at the same path (a fresh checkout of a revision, whose build outputs are not there
//! yet) is built again.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use super::template::{expand, Vars};
use super::{Catalog, Contestant, SKIPPED_DIRS};
use crate::os::git::git;
use crate::os::process::{self, Waited};

/// Longest a build may take (a cold Maven or Cargo build on a small machine).
pub const BUILD_TIMEOUT: Duration = Duration::from_secs(30 * 60);
const LOG_TAIL_LINES: usize = 20;

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum BuildResult {
    Built,
    /// Sources unchanged since the last successful build.
    Cached,
    /// The manifest has no build command.
    NothingToBuild,
    Failed(String),
    Interrupted,
}

#[derive(Debug, Clone)]
pub struct BuildOutcome {
    pub result: BuildResult,
    pub log: PathBuf,
    pub seconds: f64,
}

impl BuildOutcome {
    pub fn ok(&self) -> bool {
        matches!(self.result, BuildResult::Built | BuildResult::Cached | BuildResult::NothingToBuild)
    }
}

/// Builds contestants once per process: variants that share a folder and build command share one build.
pub struct Builder {
    stamps: PathBuf,
    logs: PathBuf,
    force: bool,
    done: HashMap<(PathBuf, String), BuildOutcome>,
}

impl Builder {
    /// `stamps`: where fingerprints of successful builds are kept; `logs`: where build logs go;
    /// `force`: build even when the fingerprint is unchanged.
    pub fn new(stamps: PathBuf, logs: PathBuf, force: bool) -> Builder {
        Builder { stamps, logs, force, done: HashMap::new() }
    }

    pub fn build(&mut self, c: &Contestant, catalog: &Catalog, stop: &AtomicBool) -> anyhow::Result<BuildOutcome> {
        std::fs::create_dir_all(&self.logs)?;
        let log = self.logs.join(format!("{}.build.log", c.name));
        let Some(template) = &c.build else {
            std::fs::write(&log, "no build command in the manifest\n")?;
            return Ok(BuildOutcome { result: BuildResult::NothingToBuild, log, seconds: 0.0 });
        };
        let vars = Vars { dir: &c.dir, scenario: "", host: "", port: 0, workers: 0 };
        let command = expand(template, &vars, true);
        let key = (c.dir.clone(), command.clone());
        if let Some(outcome) = self.done.get(&key) {
            return Ok(outcome.clone());
        }
        std::fs::create_dir_all(&self.stamps)?;
        let stamp = self.stamps.join(format!("{:016x}.stamp", fnv(key.0.as_os_str().as_encoded_bytes(), &command)));
        let fingerprint = format!("{:016x}\n{}", fingerprint(c, catalog, &command)?, folder_identity(&c.dir));
        let started = Instant::now();
        let result = if !self.force && std::fs::read_to_string(&stamp).ok().as_deref() == Some(fingerprint.as_str()) {
            std::fs::write(
                &log,
                format!(
                    "$ {command}\nskipped: sources, manifest and command unchanged since the last successful build \
                     (stamp {}; pass --rebuild to build anyway)\n",
                    stamp.display()
                ),
            )?;
            BuildResult::Cached
        } else {
            let _ = std::fs::remove_file(&stamp);
            let result = run_build(&command, &c.dir, &log, stop)?;
            if result == BuildResult::Built {
                std::fs::write(&stamp, &fingerprint)?;
            }
            result
        };
        let outcome = BuildOutcome { result, log, seconds: started.elapsed().as_secs_f64() };
        if outcome.result != BuildResult::Interrupted {
            self.done.insert(key, outcome.clone());
        }
        Ok(outcome)
    }
}

/// Runs a build command in `dir` with its output in `log`, within `BUILD_TIMEOUT`; `stop` interrupts it.
pub fn run_build(command: &str, dir: &Path, log: &Path, stop: &AtomicBool) -> anyhow::Result<BuildResult> {
    use std::io::Write as _;
    let mut out = File::create(log)?;
    writeln!(out, "$ {command}")?;
    let mut cmd: Command = process::shell(command, dir);
    cmd.stdout(out.try_clone()?).stderr(out.try_clone()?).stdin(Stdio::null());
    let mut child = match process::spawn_group(&mut cmd, None) {
        Ok(c) => c,
        Err(e) => return Ok(BuildResult::Failed(format!("could not start the build: {e}"))),
    };
    let pgid = child.id() as i32;
    let waited = process::wait(&mut child, BUILD_TIMEOUT, stop)?;
    if !matches!(waited, Waited::Exited(_)) {
        process::signal_group(pgid, libc::SIGKILL);
        let _ = child.wait();
    }
    Ok(match waited {
        Waited::Exited(s) if s.success() => BuildResult::Built,
        Waited::Exited(s) => BuildResult::Failed(process::with_log(&format!("build failed ({s})"), log, LOG_TAIL_LINES)),
        Waited::TimedOut => {
            BuildResult::Failed(format!("build took longer than {} s and was stopped", BUILD_TIMEOUT.as_secs()))
        }
        Waited::Interrupted => BuildResult::Interrupted,
    })
}

/// The folder itself, as opposed to its path: its inode and the time it was made, to the nanosecond (an
/// inode is reused at once when a folder is removed and made again); empty where the file system keeps no
/// birth time, where a stamp is of the path.
fn folder_identity(dir: &Path) -> String {
    use std::os::unix::fs::MetadataExt as _;
    let Ok(meta) = std::fs::metadata(dir) else { return String::new() };
    match meta.created().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()) {
        Some(born) => format!("folder {} made {}.{:09}\n", meta.ino(), born.as_secs(), born.subsec_nanos()),
        None => String::new(),
    }
}

/// FNV-1a over a path and a command: names the stamp file.
fn fnv(a: &[u8], b: &str) -> u64 {
    let mut h = Fnv::new();
    h.write(a);
    h.write(&[0]);
    h.write(b.as_bytes());
    h.0
}

/// 64-bit FNV-1a: a stable hash for change detection (not for security).
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// Fingerprint of everything a build reads: the source files, the manifest and the command.
pub fn fingerprint(c: &Contestant, catalog: &Catalog, command: &str) -> anyhow::Result<u64> {
    let mut h = Fnv::new();
    h.write(command.as_bytes());
    h.write(&[0]);
    h.write(&std::fs::read(&c.manifest).unwrap_or_default());
    for file in source_files(c, catalog) {
        h.write(file.as_os_str().as_encoded_bytes());
        h.write(&[0]);
        match std::fs::read(&file) {
            Ok(bytes) => {
                h.write(&(bytes.len() as u64).to_le_bytes());
                h.write(&bytes);
            }
            Err(_) => h.write(b"(unreadable)"),
        }
    }
    Ok(h.0)
}

/// The folders a contestant's build may read from: its language folder (the first folder under the
/// catalog root), less the folders of the other contestants in it.
#[derive(Debug, Clone, PartialEq)]
pub struct BuildInputs {
    pub top: PathBuf,
    pub others: Vec<PathBuf>,
}

impl BuildInputs {
    pub fn of(c: &Contestant, catalog: &Catalog) -> BuildInputs {
        let top = match c.dir.strip_prefix(&catalog.root).ok().and_then(|rel| rel.components().next()) {
            Some(first) => catalog.root.join(first),
            None => c.dir.clone(),
        };
        let others = catalog.manifest_dirs.iter().filter(|d| **d != c.dir && !c.dir.starts_with(d) && d.starts_with(&top)).cloned().collect();
        BuildInputs { top, others }
    }
}

/// The files a contestant's build may read: everything under `BuildInputs` that git does not ignore.
/// Without git, a walk that skips build outputs.
pub fn source_files(c: &Contestant, catalog: &Catalog) -> Vec<PathBuf> {
    let inputs = BuildInputs::of(c, catalog);
    let mut files = git_files(&inputs.top).unwrap_or_else(|| {
        let mut v = Vec::new();
        walk(&inputs.top, &mut v);
        v
    });
    files.retain(|f| f.is_file() && !inputs.others.iter().any(|d| f.starts_with(d)));
    files.sort();
    files
}

fn git_files(top: &Path) -> Option<Vec<PathBuf>> {
    let listed = git(top, &["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "."]).ok()?;
    let mut files: Vec<PathBuf> = listed.split('\0').filter(|p| !p.is_empty()).map(|p| top.join(p)).collect();
    files.dedup();
    Some(files)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => {
                if !name.starts_with('.') && !SKIPPED_DIRS.contains(&name.as_ref()) {
                    walk(&path, out);
                }
            }
            Ok(_) => out.push(path),
            Err(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::folder_identity;

    #[test]
    fn a_folder_made_again_at_the_same_path_is_another_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("reference");
        std::fs::create_dir(&dir).unwrap();
        let first = folder_identity(&dir);
        if first.is_empty() {
            // This file system keeps no birth time: a stamp is of the path, as before.
            assert!(std::fs::metadata(&dir).unwrap().created().is_err());
            return;
        }
        std::fs::write(dir.join("main.c"), "int main(void) { return 0; }\n").unwrap();
        assert_eq!(folder_identity(&dir), first, "its files change, the folder stays");
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::create_dir(&dir).unwrap();
        assert_ne!(folder_identity(&dir), first);
    }
}
