//! Placeholders in manifest commands: `{dir}`, `{scenario}`, `{host}`, `{port}`, `{workers}`.

use std::path::Path;

/// Every placeholder a manifest may use.
pub const PLACEHOLDERS: &[&str] = &["dir", "scenario", "host", "port", "workers"];

/// The values a launch fills in. Build and version commands know only `{dir}`.
#[derive(Debug, Clone)]
pub struct Vars<'a> {
    pub dir: &'a Path,
    pub scenario: &'a str,
    pub host: &'a str,
    pub port: u16,
    pub workers: usize,
}

/// The placeholder names used in `text`, in order of appearance. A placeholder is `{name}` with a
/// lowercase name, not preceded by `$` (so the shell's `${HOME}` is left alone).
pub fn placeholders_in(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while let Some(open) = text[i..].find('{').map(|o| o + i) {
        let after = &text[open + 1..];
        let len = after.bytes().take_while(|b| b.is_ascii_lowercase() || *b == b'_').count();
        let preceded_by_dollar = open > 0 && bytes[open - 1] == b'$';
        if len > 0 && after.as_bytes().get(len) == Some(&b'}') && !preceded_by_dollar {
            found.push(&after[..len]);
        }
        i = open + 1;
    }
    found
}

/// Replaces the placeholders. With `shell`, `{dir}` is quoted for `sh` when it holds unusual characters.
pub fn expand(text: &str, vars: &Vars, shell: bool) -> String {
    let dir = vars.dir.to_string_lossy();
    let dir = if shell { shell_quote(&dir) } else { dir.into_owned() };
    let mut out = String::with_capacity(text.len() + dir.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let name_len = after.find('}').unwrap_or(usize::MAX);
        let value = (!out.ends_with('$') && name_len != usize::MAX)
            .then(|| match &after[..name_len] {
                "dir" => Some(dir.clone()),
                "scenario" => Some(vars.scenario.to_string()),
                "host" => Some(vars.host.to_string()),
                "port" => Some(vars.port.to_string()),
                "workers" => Some(vars.workers.to_string()),
                _ => None,
            })
            .flatten();
        match value {
            Some(v) => {
                out.push_str(&v);
                rest = &after[name_len + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `text` unchanged when it is safe as one shell word, otherwise single-quoted.
pub fn shell_quote(text: &str) -> String {
    let safe = !text.is_empty()
        && text.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+:,@%=".contains(c));
    if safe { text.to_string() } else { format!("'{}'", text.replace('\'', r"'\''")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(dir: &Path) -> Vars<'_> {
        Vars { dir, scenario: "hello", host: "127.0.0.1", port: 8080, workers: 2 }
    }

    #[test]
    fn finds_placeholders_but_not_shell_variables() {
        assert_eq!(placeholders_in("{dir}/s {scenario} ${HOME} ${dir} {x y} {prot}"), vec!["dir", "scenario", "prot"]);
    }

    #[test]
    fn expands_every_placeholder() {
        let d = Path::new("/c/x");
        assert_eq!(
            expand("{dir}/server {scenario} {host} {port} {workers} ${HOME} {other}", &vars(d), true),
            "/c/x/server hello 127.0.0.1 8080 2 ${HOME} {other}"
        );
    }

    #[test]
    fn quotes_an_unusual_dir_for_the_shell_only() {
        let d = Path::new("/tmp/a b'c");
        assert_eq!(expand("{dir}/s", &vars(d), true), r"'/tmp/a b'\''c'/s");
        assert_eq!(expand("{dir}/s", &vars(d), false), "/tmp/a b'c/s");
    }
}
