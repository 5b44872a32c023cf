//! Helpers shared by the integration tests: a private copy of the fixture catalog, and a check that no
//! process started from it is left.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub mod fake_vm;
pub mod reference_repo;
pub mod history_backends;
pub mod nginx;
pub mod postgres;
pub mod steal;
// The skip of a test that cannot reach its subject, the same file as the unit tests'.
#[path = "../../src/testing.rs"]
mod testing;
pub use testing::skip;

/// A copy of `tests/fixtures/<name>` in a fresh temporary folder (builds write into it).
pub fn fixture_copy(name: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::Builder::new().prefix("serverbench-test-").tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
    let dst = tmp.path().join(name);
    copy_dir(&src, &dst);
    (tmp, dst)
}

fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for entry in std::fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let to = dst.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to);
        } else {
            std::fs::copy(entry.path(), &to).unwrap();
        }
    }
}

/// Every process: (pid, command line with spaces for NULs, state letter from /proc/<pid>/stat).
pub fn processes() -> Vec<(u32, String, char)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else { continue };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s.rsplit_once(')').and_then(|(_, r)| r.trim_start().chars().next()))
            .unwrap_or('Z');
        found.push((pid, cmdline, state));
    }
    found
}

/// Processes whose command line mentions `marker` (a temporary folder), other than zombies.
pub fn processes_mentioning(marker: &Path) -> Vec<String> {
    let marker = marker.to_string_lossy().to_string();
    processes()
        .into_iter()
        .filter(|(_, cmdline, state)| cmdline.contains(&marker) && *state != 'Z')
        .map(|(pid, cmdline, _)| format!("{pid}: {cmdline}"))
        .collect()
}

/// Waits up to `limit` for `done`.
pub fn eventually(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    done()
}

/// The serverbench binary, with no input.
pub fn serverbench() -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_serverbench"));
    cmd.stdin(std::process::Stdio::null());
    cmd
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The one run folder under `out`.
pub fn only_run_dir(out: &Path) -> PathBuf {
    let dirs: Vec<PathBuf> = std::fs::read_dir(out)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir() && !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs[0].clone()
}

/// A loopback listener with this backlog. Fakes ask SOMAXCONN, as real servers do: with the 128 of
/// `TcpListener::bind`, thousands of simultaneous connects overflow the accept queue and the kernel drops
/// handshakes, which would measure the fake rather than the code under test.
pub fn listen_loopback(backlog: i32) -> std::net::TcpListener {
    use std::os::fd::AsRawFd;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    // listen() again on a listening socket only changes its backlog.
    // SAFETY: listen(2) takes integers only; the listener's descriptor is open for the call.
    assert_eq!(unsafe { libc::listen(listener.as_raw_fd(), backlog) }, 0, "listen: {}", std::io::Error::last_os_error());
    listener
}

/// Benchmarks (and builds) in one test binary run one at a time: two at once would share the server's
/// CPU, and each would rightly flag the other's rounds `disturbed` and run them again. Hold the guard for
/// the whole test.
pub fn one_bench_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}
