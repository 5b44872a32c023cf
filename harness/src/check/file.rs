//! `file`: the 4,096 bytes of `$SB_FILES/4k` with one Content-Length (micro contestants: exactly
//! `wire::file_response`), answered again and in order when pipelined; another name is a 404, and a path
//! that leaves the folder is never answered with a file.

use crate::wire::client::{show, Conn, Response};
use crate::wire::request::get;
use crate::wire::{file_response, FILE_4K, FILE_PATH};

use super::case::{Failed, Options, Target};

/// Reads one answer to `GET /file/4k` and holds it to the contract.
pub fn read_file(c: &mut Conn, micro: bool) -> Result<Response, Failed> {
    let r = c.read_response()?;
    if r.status != 200 {
        return Err(format!("expected status 200, got {}", r.brief()).into());
    }
    if r.body != FILE_4K {
        let at = r.body.iter().zip(FILE_4K.iter()).position(|(a, b)| a != b).unwrap_or(r.body.len().min(FILE_4K.len()));
        return Err(format!("the body ({} bytes) differs from the 4,096-byte file from byte {at}: {}", r.body.len(), show(&r.body[at.min(r.body.len())..], 40)).into());
    }
    if r.chunked || r.header("content-length") != Some("4096") {
        return Err(format!("expected one Content-Length: 4096, got {}", show(&r.raw[..r.raw.len() - r.body.len()], 200)).into());
    }
    if micro && r.raw != file_response() {
        let head = &r.raw[..r.raw.len() - r.body.len()];
        return Err(format!("a micro contestant must answer with exactly the head `HTTP/1.1 200 OK\\r\\nContent-Length: 4096\\r\\n\\r\\n`, got {}", show(head, 200)).into());
    }
    Ok(r)
}

/// Twice on one connection, then three pipelined in one write.
pub fn file_response_check(t: &Target, o: &Options) -> Result<String, Failed> {
    let mut c = Conn::open(t.addr, o.answer_timeout)?;
    for i in 1..=2 {
        c.send(&get(FILE_PATH))?;
        read_file(&mut c, t.micro).map_err(|e| Failed(format!("GET {FILE_PATH} ({i} on one connection): {e}")))?;
    }
    c.send(&[get(FILE_PATH), get(FILE_PATH), get(FILE_PATH)].concat())?;
    for i in 1..=3 {
        read_file(&mut c, t.micro).map_err(|e| Failed(format!("three pipelined GET {FILE_PATH}, answer {i}: {e}")))?;
    }
    Ok("the 4,096 bytes with Content-Length: 4096, twice on one connection and three pipelined".into())
}

/// `/file/<other name>` is a 404; `/file/../<anything>` is refused (400 or 404, never the file or
/// another 200); then the file again.
pub fn file_not_found(t: &Target, o: &Options) -> Result<String, Failed> {
    for (path, allowed) in [("/file/sb-no-such-file", &[404u16][..]), ("/file/../../etc/hostname", &[400, 403, 404][..])] {
        let mut c = Conn::open(t.addr, o.answer_timeout)?;
        c.send(&get(path))?;
        let r = c.read_response().map_err(|e| Failed(format!("GET {path}: {e}")))?;
        if !allowed.contains(&r.status) {
            return Err(format!("GET {path}: expected {allowed:?}, got {}", r.brief()).into());
        }
    }
    let mut c = Conn::open(t.addr, o.answer_timeout)?;
    c.send(&get(FILE_PATH))?;
    read_file(&mut c, t.micro).map_err(|e| Failed(format!("GET {FILE_PATH} after the refusals: {e}")))?;
    Ok("/file/sb-no-such-file answered 404, /file/../../etc/hostname refused, then the file".into())
}
