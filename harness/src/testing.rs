//! What a test does when it cannot reach its subject (a tool not installed, too few CPUs, a source tree
//! outside git): shared by the unit tests and, through `tests/common`, the integration tests.

use std::path::Path;

/// For a test that cannot reach its subject: call this and return. Under `CI=true` it fails the test, since
/// CI must reach everything. Otherwise the skip is printed and, when the test command set `SB_TEST_SKIPS`,
/// appended there as "test<TAB>reason" so that its last line counts the test as skipped, with the reason,
/// not as passed.
pub fn skip(test: &str, reason: &str) {
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("{test} cannot reach its subject: {reason} (with CI=true a skip is a failure)");
    }
    eprintln!("SKIPPED {test}: {reason}");
    if let Some(path) = std::env::var_os("SB_TEST_SKIPS") {
        use std::io::Write;
        let line = format!("{test}\t{reason}");
        // A test that meets the same missing tool twice is one skipped test.
        if std::fs::read_to_string(&path).is_ok_and(|t| t.lines().any(|l| l == line)) {
            return;
        }
        let mut log = std::fs::OpenOptions::new().create(true).append(true).open(&path).expect("SB_TEST_SKIPS is writable");
        // One write of the whole line: tests skip from threads of their own, and appends of one write each
        // do not interleave.
        log.write_all(format!("{line}\n").as_bytes()).expect("SB_TEST_SKIPS is writable");
    }
}

/// The root of the repository the tests were built in, when it is a git checkout whose HEAD names a
/// commit; otherwise (a source archive) the test `test` is skipped and None returned.
pub fn checkout_or_skip(test: &str) -> Option<&'static Path> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the harness is a folder of the repository");
    let head = std::process::Command::new("git").args(["rev-parse", "--verify", "HEAD"]).current_dir(root).output();
    match head {
        Ok(out) if out.status.success() => Some(root),
        Ok(out) => {
            skip(test, &format!("not a git checkout: {}", String::from_utf8_lossy(&out.stderr).trim()));
            None
        }
        Err(e) => {
            skip(test, &format!("git cannot run: {e}"));
            None
        }
    }
}
