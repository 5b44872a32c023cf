//! The `file` scenario: the folder `SB_FILES` names, and the one file of it a request may ask for.

use std::path::{Path, PathBuf};
use std::{env, process};

/// The folder of the `file` scenario, from `SB_FILES`; a server asked for `file` without it exits
/// with status 2. Leaked once at start so that every connection can hold it as a `Copy` scenario.
pub fn folder_from_env() -> &'static Path {
    let Some(folder) = env::var_os("SB_FILES") else {
        eprintln!("the file scenario needs SB_FILES, the folder holding its files");
        process::exit(2);
    };
    Box::leak(PathBuf::from(folder).into_boxed_path())
}

/// The file a request target names: `/file/4k` is `<folder>/4k`; anything else is a 404, so that no
/// name (`..`, a `/`) ever reaches outside the folder.
pub fn named(folder: &Path, target: &[u8]) -> Option<PathBuf> {
    (target == b"/file/4k").then(|| folder.join("4k"))
}

/// The head of a `file` answer whose body is `length_bytes` long.
pub fn head(length_bytes: u64) -> String {
    format!("HTTP/1.1 200 OK\r\nContent-Length: {length_bytes}\r\n\r\n")
}
