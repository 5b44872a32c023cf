//! The `file` scenario's file: its bytes (defined here and nowhere else) and the folder every server is
//! given in `SB_FILES`, written once per user and rewritten when it does not hold those bytes.

use std::path::PathBuf;

/// The one name a server serves under `/file/`.
pub const FILE_NAME: &str = "4k";
/// `GET /file/4k`: the path a client asks for.
pub const FILE_PATH: &str = "/file/4k";
/// The environment variable that names the folder holding `4k`.
pub const FILES_ENV: &str = "SB_FILES";

/// The characters of the file's 64 lines: line j is 63 times the j-th of them and a newline.
const LINE_CHARS: &[u8; 64] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!?";

/// The 4,096 bytes of `$SB_FILES/4k`: a line's character tells where a wrong offset came from.
pub static FILE_4K: [u8; 4096] = file_4k();

const fn file_4k() -> [u8; 4096] {
    let mut b = [0u8; 4096];
    let mut i = 0;
    while i < 4096 {
        b[i] = if i % 64 == 63 { b'\n' } else { LINE_CHARS[i / 64] };
        i += 1;
    }
    b
}

/// The answer of a micro contestant to `GET /file/4k`: a status line, one Content-Length, the file.
pub fn file_response() -> Vec<u8> {
    let mut r = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", FILE_4K.len()).into_bytes();
    r.extend_from_slice(&FILE_4K);
    r
}

/// The folder servers get in `SB_FILES`: `<temp>/serverbench-files-<uid>/`, holding `4k`. The file is
/// written through a temporary name and renamed, so a server never reads half of it.
pub fn files_dir() -> std::io::Result<PathBuf> {
    // SAFETY: getuid takes nothing and cannot fail.
    let uid = unsafe { libc::getuid() };
    let dir = std::env::temp_dir().join(format!("serverbench-files-{uid}"));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(FILE_NAME);
    if std::fs::read(&path).ok().as_deref() != Some(&FILE_4K[..]) {
        let part = dir.join(format!(".{FILE_NAME}.{}", std::process::id()));
        std::fs::write(&part, &FILE_4K[..])?;
        std::fs::rename(&part, &path)?;
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_64_lines_of_one_character_each() {
        let lines: Vec<&[u8]> = FILE_4K.split_inclusive(|b| *b == b'\n').collect();
        assert_eq!(lines.len(), 64);
        assert_eq!(lines[0], [&[b'0'; 63][..], b"\n"].concat());
        assert_eq!(lines[10][0], b'A');
        assert_eq!(lines[63], [&[b'?'; 63][..], b"\n"].concat());
        assert!(file_response().starts_with(b"HTTP/1.1 200 OK\r\nContent-Length: 4096\r\n\r\n000"));
    }

    #[test]
    fn the_folder_holds_the_file_and_is_repaired() {
        let dir = files_dir().unwrap();
        std::fs::write(dir.join(FILE_NAME), b"broken").unwrap();
        let again = files_dir().unwrap();
        assert_eq!(dir, again);
        assert_eq!(std::fs::read(again.join(FILE_NAME)).unwrap(), FILE_4K.to_vec());
    }
}
