//! House rules of the harness's own source that neither the compiler nor clippy checks: errors are typed.

use std::path::{Path, PathBuf};

/// Files of harness/src that still return a `Result<_, String>`. The list may only shrink: an entry
/// whose file has none left fails the test too, so that it is taken off.
const STRING_ERRORS_LEFT: &[&str] = &[];

/// Errors are typed (docs/architecture.md): a `Result` whose error is a bare `String` carries no type a
/// caller could name, so outside `#[cfg(test)]` modules none may appear but in the files listed above.
#[test]
fn no_result_with_a_string_error() {
    // The scanner itself: it finds the error type at any depth and in any spelling of the path, and
    // passes over one-parameter aliases, other error types, comments, strings and test modules.
    let sample = r##"
fn a() -> Result<u8, String> { todo!() }
fn b() -> Result<Result<(bool, i32), std::string::String>, Failed> { todo!() }
fn c() -> anyhow::Result<String> { todo!() }
fn d() -> Result<Vec<(u8, String)>, Failed> { todo!() }
fn e() -> io::Result<Option<String>> { todo!() }
fn f() -> MyResult<u8, String> { todo!() }
// fn g() -> Result<u8, String>
fn h() -> &'static str { "Result<u8, String>" }
fn i() -> Result<fn(u8) -> u8, String> { let _ = '"'; todo!() }
#[cfg(test)]
mod tests {
    fn j() -> Result<u8, String> { todo!() }
}
fn k() -> Result<HashMap<u8, Vec<u8>>, String> { todo!() }
"##;
    let lines: Vec<usize> = string_errors(sample).into_iter().map(|(line, _)| line).collect();
    assert_eq!(lines, [2, 3, 10, 15], "what the scanner finds in its sample");

    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    let mut left_with_some = Vec::new();
    for path in rust_files(&src) {
        let name = path.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
        let text = std::fs::read_to_string(&path).unwrap();
        let hits = string_errors(&text);
        if STRING_ERRORS_LEFT.contains(&name.as_str()) {
            if !hits.is_empty() {
                left_with_some.push(name);
            }
            continue;
        }
        found.extend(hits.into_iter().map(|(line, text)| format!("harness/src/{name}:{line}: {text}")));
    }
    assert!(
        found.is_empty(),
        "a Result with a String error; give it a typed error made with thiserror (docs/architecture.md):\n{}",
        found.join("\n")
    );
    let done: Vec<_> = STRING_ERRORS_LEFT.iter().filter(|f| !left_with_some.iter().any(|l| l == *f)).collect();
    assert!(done.is_empty(), "these files have no Result<_, String> left: take them off STRING_ERRORS_LEFT: {done:?}");
}

/// Every .rs file under `dir`, in a stable order.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

/// The `Result<_, String>`s of a Rust source outside comments, string literals and `#[cfg(test)]`
/// modules: the line (from 1) and the text of each.
fn string_errors(source: &str) -> Vec<(usize, String)> {
    let code = blank_comments_and_strings(source);
    let skipped = test_modules(&code);
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find("Result").map(|i| i + from) {
        from = at + "Result".len();
        let whole_word = at == 0 || !is_ident(bytes[at - 1]);
        let rest = code[from..].trim_start();
        if !whole_word || !rest.starts_with('<') || skipped.iter().any(|r| r.contains(&at)) {
            continue;
        }
        let open = code.len() - rest.len();
        let Some(params) = generic_params(&code[open + 1..]) else { continue };
        let last = params.last().map(|p| p.trim()).unwrap_or_default();
        if params.len() >= 2 && (last == "String" || last.ends_with("::String")) {
            let line = code[..at].matches('\n').count() + 1;
            let text = source.lines().nth(line - 1).unwrap_or_default().trim().to_string();
            out.push((line, text));
        }
    }
    out
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The top-level parameters of a generic list whose `<` was just passed, up to its `>`.
fn generic_params(after_open: &str) -> Option<Vec<&str>> {
    let bytes = after_open.as_bytes();
    let (mut depth, mut start, mut params) = (0i32, 0, Vec::new());
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'<' | b'(' | b'[' => depth += 1,
            // The arrow of a fn type closes nothing.
            b'>' if i > 0 && bytes[i - 1] == b'-' => {}
            b'>' | b')' | b']' if depth > 0 => depth -= 1,
            b'>' => {
                params.push(&after_open[start..i]);
                return Some(params);
            }
            b',' if depth == 0 => {
                params.push(&after_open[start..i]);
                start = i + 1;
            }
            b'{' | b';' => return None,
            _ => {}
        }
    }
    None
}

/// The byte ranges of the `#[cfg(test)]` modules declared inline.
fn test_modules(code: &str) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find("#[cfg(test)]").map(|i| i + from) {
        from = at + 1;
        let rest = code[at + "#[cfg(test)]".len()..].trim_start();
        let rest = rest.strip_prefix("pub ").unwrap_or(rest).trim_start();
        let Some(decl) = rest.strip_prefix("mod ") else { continue };
        let Some(brace) = decl.find(['{', ';']).filter(|&i| decl.as_bytes()[i] == b'{') else { continue };
        let open = code.len() - decl.len() + brace;
        let mut depth = 0;
        for (i, b) in code.bytes().enumerate().skip(open) {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        out.push(at..i + 1);
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// `source` with every comment and the inside of every string and char literal turned into spaces
/// (newlines kept, so that lines keep their numbers).
fn blank_comments_and_strings(source: &str) -> String {
    let b = source.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, range: std::ops::Range<usize>| {
        for c in &mut out[range] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        let starts_word = i == 0 || !is_ident(b[i - 1]);
        if b[i..].starts_with(b"//") {
            let end = b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |p| i + p);
            blank(&mut out, i..end);
            i = end;
        } else if b[i..].starts_with(b"/*") {
            let end = source[i + 2..].find("*/").map_or(b.len(), |p| i + 2 + p + 2);
            blank(&mut out, i..end);
            i = end;
        } else if starts_word && (b[i] == b'r' || b[i..].starts_with(b"br")) && raw_string_hashes(&b[i..]).is_some() {
            let prefix = if b[i] == b'r' { 1 } else { 2 };
            let hashes = raw_string_hashes(&b[i..]).unwrap();
            let body = i + prefix + hashes + 1;
            let close = format!("\"{}", "#".repeat(hashes));
            let end = source[body..].find(&close).map_or(b.len(), |p| body + p + close.len());
            blank(&mut out, body..end.saturating_sub(close.len()).max(body));
            i = end;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i + 1..j.min(b.len()));
            i = j + 1;
        } else if b[i] == b'\'' {
            // A char literal ('x', '\n', '\u{..}') rather than a lifetime ('a).
            let end = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..].iter().position(|&c| c == b'\'').map(|p| i + 2 + p)
            } else {
                source[i + 1..].chars().next().map(|c| i + 1 + c.len_utf8()).filter(|&e| b.get(e) == Some(&b'\''))
            };
            match end {
                Some(e) => {
                    blank(&mut out, i + 1..e);
                    i = e + 1;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// How many `#` a raw string literal starting here (`r"`, `r#"`, `br"` ...) has; None when none starts.
fn raw_string_hashes(at: &[u8]) -> Option<usize> {
    let after_r = if at.starts_with(b"br") { &at[2..] } else { at.strip_prefix(b"r")? };
    let hashes = after_r.iter().take_while(|&&c| c == b'#').count();
    (after_r.get(hashes) == Some(&b'"')).then_some(hashes)
}
