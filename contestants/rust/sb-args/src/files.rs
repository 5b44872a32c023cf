//! The `file` scenario: the folder `SB_FILES` names, the one file of it a request may ask for, and
//! (for the raw contestants) the requests of a connection in the order they arrived.

use std::path::{Path, PathBuf};
use std::{env, process};

use crate::requests::{parse_head, Head};

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

/// What a raw contestant does for one `file` request.
#[derive(Debug, PartialEq, Eq)]
pub enum Request {
    /// `GET /file/4k`: send [`head`] and the file, read from disk now.
    File(PathBuf),
    /// Another `GET /file/<name>` (or any other path): `requests::NOT_FOUND`, the connection stays open.
    NotFound,
    /// A malformed request: `requests::BAD_REQUEST`, then the connection closes.
    Bad,
}

/// The `file` requests of one connection: what has been read and not yet answered. Pipelined
/// requests come out one at a time, in order, so that each file is sent before the next is looked at;
/// the runtimes differ only in how they read, open and send.
pub struct Pipeline {
    folder: &'static Path,
    input: Vec<u8>,
}

impl Pipeline {
    pub fn new(folder: &'static Path) -> Pipeline {
        Pipeline { folder, input: Vec::with_capacity(4096) }
    }

    /// Adds bytes just read from the connection.
    pub fn push(&mut self, data: &[u8]) {
        self.input.extend_from_slice(data);
    }

    /// The next whole request read so far, or `None` until more has arrived.
    pub fn next(&mut self) -> Option<Request> {
        let (request, used) = match parse_head(&self.input) {
            Head::Partial => return None,
            Head::Bad => (Request::Bad, self.input.len()),
            Head::Get { target, len } => (named(self.folder, target).map_or(Request::NotFound, Request::File), len),
        };
        self.input.drain(..used);
        Some(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipelined_and_split_requests_come_out_in_order() {
        let mut pipeline = Pipeline::new(Path::new("/srv"));
        pipeline.push(b"GET /file/4k HTTP/1.1\r\nHost: bench\r\n\r\nGET /file/../4k HTTP/1.1\r\n\r\nGET /file/4k HTTP/1.1\r\nHo");
        assert_eq!(pipeline.next(), Some(Request::File(PathBuf::from("/srv/4k"))));
        assert_eq!(pipeline.next(), Some(Request::NotFound));
        assert_eq!(pipeline.next(), None);
        pipeline.push(b"st: bench\r\n\r\nPOST /file/4k HTTP/1.1\r\n\r\n");
        assert_eq!(pipeline.next(), Some(Request::File(PathBuf::from("/srv/4k"))));
        assert_eq!(pipeline.next(), Some(Request::Bad));
        assert_eq!(pipeline.next(), None);
    }
}
