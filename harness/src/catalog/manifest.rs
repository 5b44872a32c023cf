//! `contestant.toml`: parsing and validation into contestants (one per variant), with errors that name the
//! file, the field and what is allowed.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde::Serialize;
use toml::{Table, Value};

use super::template::{placeholders_in, PLACEHOLDERS};
use super::Contestant;
use crate::wire::Scenario;

pub const LANGUAGES: &[&str] = &["c", "cpp", "rust", "go", "java", "javascript", "python", "erlang", "d", "config"];
pub const CATEGORIES: &[&str] = &["micro", "platform"];
pub const MODELS: &[&str] = &[
    "thread-per-connection",
    "thread-pool",
    "process-per-connection",
    "process-pool",
    "per-core",
    "work-sharing",
    "work-stealing",
    "prefork",
    "single-loop",
];
pub const IOS: &[&str] = &["blocking", "epoll", "io_uring", "runtime"];
/// How the code that serves one connection is written (the third source document's "Concurrency Model"):
/// a thread or process that blocks (`thread`), a coroutine with its own stack that the runtime switches
/// (`stackful`: goroutines, virtual threads, fibers), a compiled state machine awaited by a runtime
/// (`stackless`: Rust's async, Python's asyncio), or callbacks that an event loop calls (`callback`).
pub const STYLES: &[&str] = &["thread", "stackful", "stackless", "callback"];
pub const SCENARIOS: &[&str] = Scenario::NAMES;
/// The conformance checks a manifest may say it is not held to (`unsupported_checks`): every check of
/// `serverbench check` by its stable name (the check suite's own list is tested against this one).
pub const CHECKS: &[&str] = &[
    "hello-response",
    "plaintext-response",
    "plaintext-date",
    "plaintext-404",
    "plaintext-pipeline",
    "json-sequence",
    "work-response",
    "work-busy",
    "counter-response",
    "counter-concurrent",
    "file-response",
    "file-404",
    "tcp-nodelay",
    "echo-1mib",
    "idle-open",
    "timeout-active",
    "timeout-idle",
    "timeout-silent",
    "timeout-no-reader",
    "bad-random-64k",
    "bad-cut-request",
    "bad-reset",
    "bad-half-close",
    "bad-huge-headers",
    "bad-drop-5000",
    "client-curl",
    "client-wrk",
    "client-h2load",
    "client-ab",
    "scale",
];
/// The kinds of machine a manifest may say it cannot be built on (`unsupported`): CPU architectures,
/// spelled as Rust names them (`std::env::consts::ARCH`), which is how the harness knows its own.
pub const MACHINES: &[&str] = &["x86_64", "aarch64", "arm", "x86", "riscv64", "powerpc64", "s390x", "loongarch64"];

/// Every field, in the order errors are reported, with a hint shown when it is missing.
const FIELDS: &[(&str, &str)] = &[
    ("name", r#"a unique kebab-case name, e.g. "c-epoll""#),
    ("display", r#"a human-readable name, e.g. "raw epoll (level)""#),
    ("language", "the language of the source"),
    ("framework", r#"the library or runtime, e.g. "epoll" or "tokio""#),
    ("category", "micro (a raw runtime) or platform (a framework with its own HTTP stack)"),
    ("model", "how work is spread over threads"),
    ("io", "how sockets are driven"),
    ("style", "how the code serving a connection is written: thread, stackful, stackless or callback"),
    ("scenarios", r#"the scenarios the server answers, e.g. ["hello", "echo"]"#),
    ("requires", r#"commands that must exist, e.g. ["cc", "make"]"#),
    ("apt", "Debian packages installed when missing"),
    ("build", r#"the build command, e.g. "make -C {dir}""#),
    ("run", r#"the command that starts the server, e.g. "{dir}/build/server {scenario} {host} {port} {workers}""#),
    ("version", r#"a command printing the toolchain version, e.g. "cc --version | head -n1""#),
    ("env", r#"environment of the server, e.g. { GOMAXPROCS = "{workers}" }"#),
    ("unsupported", r#"kinds of machine it cannot be built on, each with the reason, e.g. { riscv64 = "no riscv64 build of the library" }"#),
    ("unsupported_scenarios", r#"scenarios it does not answer, each with the reason, e.g. { counter = "its cluster processes share no memory" }"#),
    ("unsupported_checks", r#"conformance checks it is not held to, each with the reason, e.g. { scale = "a pool of 16 threads serves 16 connections at a time" }"#),
    ("variants", "[variants.NAME] tables overriding fields; NAME is appended to the name"),
];
/// The hint of a field of `FIELDS`.
fn hint(field: &str) -> &'static str {
    FIELDS.iter().find(|(f, _)| *f == field).map_or("", |(_, h)| h)
}

const REQUIRED: &[&str] = &["name", "language", "framework", "category", "model", "io", "scenarios", "run"];

/// One problem in one manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ManifestError {
    /// The manifest's path relative to the folder above the catalog root (e.g. `contestants/c/x/contestant.toml`).
    pub file: String,
    pub message: String,
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file, self.message)
    }
}

impl std::error::Error for ManifestError {}

/// Parses one manifest. `file` is the path shown in errors; `dir` the absolute folder of the contestant.
/// All problems of the file are returned together, so one edit can fix them all.
pub fn parse(file: &str, dir: &Path, text: &str) -> Result<Vec<Contestant>, Vec<ManifestError>> {
    let mut check = Check { file, errors: Vec::new() };
    let table: Table = match text.parse() {
        Ok(t) => t,
        Err(e) => {
            check.error(format!("not valid TOML: {}", e.to_string().trim_end()));
            return Err(check.errors);
        }
    };
    let base = check.contestant(&table, &|key: &str| key.to_string(), None, dir);
    let variants = check.variants(&table);
    let Some(base) = base else { return Err(check.errors) };
    let mut out = vec![base.clone()];
    for (variant, overrides) in variants {
        let mut merged = table.clone();
        merged.remove("variants");
        merged.extend(overrides.iter().map(|(k, v)| (k.clone(), v.clone())));
        let path = |key: &str| {
            if overrides.contains_key(key) { format!("variants.{variant}.{key}") } else { key.to_string() }
        };
        if let Some(mut c) = check.contestant(&merged, &path, Some(&variant), dir) {
            c.name = format!("{}-{variant}", base.name);
            c.variant = Some(variant.clone());
            out.push(c);
        }
    }
    if check.errors.is_empty() { Ok(out) } else { Err(check.errors) }
}

/// Collects the errors of one file.
struct Check<'a> {
    file: &'a str,
    errors: Vec<ManifestError>,
}

impl Check<'_> {
    fn error(&mut self, message: String) {
        self.errors.push(ManifestError { file: self.file.to_string(), message });
    }

    /// Validates a whole table (the base manifest, or a variant merged over it). `path` names a key as the
    /// user wrote it (a variant's own keys as `variants.NAME.key`).
    fn contestant(
        &mut self,
        t: &Table,
        path: &dyn Fn(&str) -> String,
        variant: Option<&str>,
        dir: &Path,
    ) -> Option<Contestant> {
        let before = self.errors.len();
        for key in t.keys() {
            let known = FIELDS.iter().any(|(f, _)| f == key);
            if !known {
                let names: Vec<&str> = FIELDS.iter().map(|(f, _)| *f).collect();
                self.error(format!(
                    "unknown field `{}`{}; allowed fields: {}",
                    path(key),
                    did_you_mean(key, &names),
                    names.join(", ")
                ));
            } else if variant.is_some() && path(key) != *key && key == "name" {
                self.error(format!("field `{}` cannot be set: a variant's name is <name>-<variant>", path(key)));
            } else if variant.is_some() && path(key) != *key && key == "variants" {
                self.error(format!("field `{}` cannot be set: variants do not nest", path(key)));
            }
        }
        for key in REQUIRED {
            if !t.contains_key(*key) {
                let hint = hint(key);
                let allowed = match *key {
                    "language" => LANGUAGES,
                    "category" => CATEGORIES,
                    "model" => MODELS,
                    "io" => IOS,
                    "scenarios" => SCENARIOS,
                    _ => &[],
                };
                let allowed =
                    if allowed.is_empty() { String::new() } else { format!("; allowed values: {}", allowed.join(", ")) };
                self.error(format!("missing field `{key}`: {hint}{allowed}"));
            }
        }

        let name = self.string(t, "name", path);
        if let Some(n) = &name {
            if !is_kebab(n) {
                self.error(format!(
                    "field `{}` is \"{n}\"; it must be kebab-case: lowercase letters and digits (an inner '_' allowed) in words joined by single '-' (e.g. \"c-epoll\", \"c-io_uring\")",
                    path("name")
                ));
            }
        }
        let display = self.string(t, "display", path);
        let language = self.one_of(t, "language", LANGUAGES, path);
        let framework = self.string(t, "framework", path);
        if framework.as_deref() == Some("") {
            self.error(format!("field `{}` is empty; {}", path("framework"), hint("framework")));
        }
        let category = self.one_of(t, "category", CATEGORIES, path);
        let model = self.one_of(t, "model", MODELS, path);
        let io = self.one_of(t, "io", IOS, path);
        let style = t.contains_key("style").then(|| self.one_of(t, "style", STYLES, path));
        let scenarios = self.scenarios(t, path);
        let requires = self.strings(t, "requires", path).unwrap_or_default();
        let apt = self.strings(t, "apt", path).unwrap_or_default();
        for pkg in &apt {
            if !is_debian_package(pkg) {
                self.error(format!(
                    "field `{}` has \"{pkg}\", which is not a Debian package name (lowercase letters, digits, '+', '-', '.')",
                    path("apt")
                ));
            }
        }
        let build = self.command(t, "build", &["dir"], path);
        let run = self.command(t, "run", PLACEHOLDERS, path);
        if run.as_deref().is_some_and(|r| r.trim().is_empty()) {
            self.error(format!("field `{}` is empty; {}", path("run"), hint("run")));
        }
        let version = self.command(t, "version", &["dir"], path);
        let env = self.env(t, path);
        let unsupported = self.unsupported(t, path);
        let unsupported_scenarios = self.unsupported_scenarios(t, path, scenarios.as_deref().unwrap_or_default());
        let unsupported_checks = self.unsupported_checks(t, path);
        if let (Some(run), Some(env)) = (&run, &env) {
            let mentions_port = |s: &str| placeholders_in(s).contains(&"port");
            if !mentions_port(run) && !env.values().any(|v| mentions_port(v)) {
                self.error(format!(
                    "field `{}` does not use {{port}} (nor does `env`): the server could not be told where to listen",
                    path("run")
                ));
            }
        }

        if self.errors.len() > before {
            return None;
        }
        let name = name?;
        Some(Contestant {
            family: name.clone(),
            display: display.unwrap_or_else(|| name.clone()),
            name,
            variant: None,
            language: language?,
            framework: framework?,
            category: category?,
            model: model?,
            io: io?,
            style: style.flatten(),
            scenarios: scenarios?,
            requires,
            apt,
            build,
            run: run?,
            version,
            env: env?,
            unsupported: unsupported?,
            unsupported_scenarios: unsupported_scenarios?,
            unsupported_checks: unsupported_checks?,
            dir: dir.to_path_buf(),
            manifest: dir.join("contestant.toml"),
        })
    }

    /// The `[variants.NAME]` tables, checked for shape; their fields are checked when merged.
    fn variants(&mut self, t: &Table) -> Vec<(String, Table)> {
        let Some(v) = t.get("variants") else { return Vec::new() };
        let Some(v) = v.as_table() else {
            self.error(format!("field `variants` must be a table of tables ([variants.NAME]), not {}", kind(v)));
            return Vec::new();
        };
        let mut out = Vec::new();
        for (name, body) in v {
            if !is_kebab(name) {
                self.error(format!(
                    "variant name `variants.{name}` must be kebab-case (lowercase letters, digits, single '-'): it becomes part of the contestant's name"
                ));
            }
            match body.as_table() {
                Some(body) => out.push((name.clone(), body.clone())),
                None => self.error(format!("field `variants.{name}` must be a table, not {}", kind(body))),
            }
        }
        out
    }

    fn string(&mut self, t: &Table, key: &str, path: &dyn Fn(&str) -> String) -> Option<String> {
        match t.get(key)? {
            Value::String(s) => Some(s.clone()),
            other => {
                self.error(format!("field `{}` must be a string, not {}", path(key), kind(other)));
                None
            }
        }
    }

    fn strings(&mut self, t: &Table, key: &str, path: &dyn Fn(&str) -> String) -> Option<Vec<String>> {
        let value = t.get(key)?;
        let Some(array) = value.as_array() else {
            self.error(format!("field `{}` must be an array of strings, not {}", path(key), kind(value)));
            return None;
        };
        if let Some((i, bad)) = array.iter().enumerate().find(|(_, v)| !v.is_str()) {
            self.error(format!(
                "field `{}` must be an array of strings; item {} is {}",
                path(key),
                i + 1,
                kind(bad)
            ));
            return None;
        }
        Some(array.iter().filter_map(|v| v.as_str().map(String::from)).collect())
    }

    fn one_of(&mut self, t: &Table, key: &str, allowed: &[&str], path: &dyn Fn(&str) -> String) -> Option<String> {
        let v = self.string(t, key, path)?;
        if allowed.contains(&v.as_str()) {
            return Some(v);
        }
        self.error(format!(
            "field `{}` is \"{v}\"{}; allowed values: {}",
            path(key),
            did_you_mean(&v, allowed),
            allowed.join(", ")
        ));
        None
    }

    fn scenarios(&mut self, t: &Table, path: &dyn Fn(&str) -> String) -> Option<Vec<String>> {
        let list = self.strings(t, "scenarios", path)?;
        if list.is_empty() {
            self.error(format!("field `{}` is empty; list at least one of: {}", path("scenarios"), SCENARIOS.join(", ")));
            return None;
        }
        let mut ok = true;
        for (i, s) in list.iter().enumerate() {
            if !SCENARIOS.contains(&s.as_str()) {
                self.error(format!(
                    "field `{}` has \"{s}\"{}; allowed values: {}",
                    path("scenarios"),
                    did_you_mean(s, SCENARIOS),
                    SCENARIOS.join(", ")
                ));
                ok = false;
            } else if list[..i].contains(s) {
                self.error(format!("field `{}` lists \"{s}\" twice", path("scenarios")));
                ok = false;
            }
        }
        ok.then_some(list)
    }

    /// A command string whose placeholders must be among `allowed`.
    fn command(&mut self, t: &Table, key: &str, allowed: &[&str], path: &dyn Fn(&str) -> String) -> Option<String> {
        let cmd = self.string(t, key, path)?;
        self.placeholders(&cmd, &path(key), allowed);
        Some(cmd)
    }

    fn placeholders(&mut self, text: &str, field: &str, allowed: &[&str]) {
        for p in placeholders_in(text) {
            if allowed.contains(&p) {
                continue;
            }
            let list = allowed.iter().map(|a| format!("{{{a}}}")).collect::<Vec<_>>().join(" ");
            if PLACEHOLDERS.contains(&p) {
                self.error(format!(
                    "field `{field}` uses {{{p}}}, which is known only when the server starts; allowed here: {list}"
                ));
            } else {
                let near = did_you_mean(p, allowed).replace(" `", " `{").replace("`?", "}`?");
                self.error(format!("field `{field}` uses unknown placeholder {{{p}}}{near}; allowed placeholders: {list}"));
            }
        }
    }

    fn env(&mut self, t: &Table, path: &dyn Fn(&str) -> String) -> Option<BTreeMap<String, String>> {
        let Some(value) = t.get("env") else { return Some(BTreeMap::new()) };
        let Some(table) = value.as_table() else {
            self.error(format!("field `{}` must be a table of strings, not {}", path("env"), kind(value)));
            return None;
        };
        let mut out = BTreeMap::new();
        let mut ok = true;
        for (k, v) in table {
            let field = format!("{}.{k}", path("env"));
            if !is_env_name(k) {
                self.error(format!("field `{field}`: not an environment variable name (letters, digits, '_', not starting with a digit)"));
                ok = false;
            }
            match v.as_str() {
                Some(s) => {
                    self.placeholders(s, &field, PLACEHOLDERS);
                    out.insert(k.clone(), s.to_string());
                }
                None => {
                    self.error(format!("field `{field}` must be a string, not {}", kind(v)));
                    ok = false;
                }
            }
        }
        ok.then_some(out)
    }

    /// `unsupported_scenarios = { <scenario> = "<reason>" }`: known scenarios it does not list in
    /// `scenarios`, each with the reason a reader sees in place of its figures.
    fn unsupported_scenarios(&mut self, t: &Table, path: &dyn Fn(&str) -> String, listed: &[String]) -> Option<BTreeMap<String, String>> {
        let (out, ok) = self.reasons(t, path, "unsupported_scenarios", ("scenario", "counter"), SCENARIOS, "say why the scenario is not answered");
        let listed: Vec<&String> = out.keys().filter(|s| listed.contains(s)).collect();
        for scenario in &listed {
            self.error(format!(
                "field `{}` names \"{scenario}\", which `{}` lists: it is one or the other",
                path("unsupported_scenarios"),
                path("scenarios")
            ));
        }
        (ok && listed.is_empty()).then_some(out)
    }

    /// `unsupported_checks = { <check> = "<reason>" }`: known checks (`CHECKS`) the approach cannot pass by
    /// design, each with the reason `serverbench check` gives when it skips them.
    fn unsupported_checks(&mut self, t: &Table, path: &dyn Fn(&str) -> String) -> Option<BTreeMap<String, String>> {
        let (out, ok) = self.reasons(t, path, "unsupported_checks", ("check", "scale"), CHECKS, "say why the check cannot pass");
        ok.then_some(out)
    }

    /// `unsupported = { <machine> = "<reason>" }`: only known machine kinds, each with a reason, because the
    /// reason is all a reader (and CI) gets in place of the contestant.
    fn unsupported(&mut self, t: &Table, path: &dyn Fn(&str) -> String) -> Option<BTreeMap<String, String>> {
        let (out, ok) = self.reasons(t, path, "unsupported", ("machine", "riscv64"), MACHINES, "say why it cannot be built there");
        ok.then_some(out)
    }

    /// A table `key = { <name> = "<reason>" }` whose names are among `allowed` (`what`: what a name is, and
    /// one for the example) and whose reasons are not empty (`empty` says what to write instead). The
    /// reasons that could be read, and whether all was well.
    fn reasons(
        &mut self,
        t: &Table,
        path: &dyn Fn(&str) -> String,
        key: &str,
        (what, example): (&str, &str),
        allowed: &[&str],
        empty: &str,
    ) -> (BTreeMap<String, String>, bool) {
        let Some(value) = t.get(key) else { return (BTreeMap::new(), true) };
        let field = path(key);
        let Some(table) = value.as_table() else {
            self.error(format!("field `{field}` must be a table of reasons by {what}, e.g. {{ {example} = \"why\" }}, not {}", kind(value)));
            return (BTreeMap::new(), false);
        };
        let mut out = BTreeMap::new();
        let mut ok = true;
        for (name, why) in table {
            if !allowed.contains(&name.as_str()) {
                self.error(format!("field `{field}` names the {what} \"{name}\"{}; allowed values: {}", did_you_mean(name, allowed), allowed.join(", ")));
                ok = false;
            }
            match why.as_str().map(str::trim) {
                Some("") => {
                    self.error(format!("field `{field}.{name}` is empty; {empty}"));
                    ok = false;
                }
                Some(why) => {
                    out.insert(name.clone(), why.to_string());
                }
                None => {
                    self.error(format!("field `{field}.{name}` must be a string (the reason), not {}", kind(why)));
                    ok = false;
                }
            }
        }
        (out, ok)
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "a string",
        Value::Integer(_) => "an integer",
        Value::Float(_) => "a float",
        Value::Boolean(_) => "a boolean",
        Value::Datetime(_) => "a date",
        Value::Array(_) => "an array",
        Value::Table(_) => "a table",
    }
}

/// Lowercase ASCII words of letters and digits joined by single hyphens. A word may keep an inner
/// underscore where the library spells itself so (`c-io_uring`, `erlang-gen_tcp`).
pub fn is_kebab(s: &str) -> bool {
    !s.is_empty()
        && s.split('-').all(|w| {
            !w.is_empty()
                && !w.starts_with('_')
                && !w.ends_with('_')
                && !w.contains("__")
                && w.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        })
}

fn is_debian_package(s: &str) -> bool {
    s.len() >= 2
        && s.as_bytes()[0].is_ascii_alphanumeric()
        && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"+-.".contains(&b))
}

fn is_env_name(s: &str) -> bool {
    !s.is_empty()
        && !s.as_bytes()[0].is_ascii_digit()
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// ` (did you mean `x`?)` when one allowed word is within two edits of `word`.
fn did_you_mean(word: &str, allowed: &[&str]) -> String {
    allowed
        .iter()
        .map(|a| (edit_distance(word, a), *a))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, a)| format!(" (did you mean `{a}`?)"))
        .unwrap_or_default()
}

/// Levenshtein distance.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (row[j + 1] + 1).min(row[j] + 1).min(diag + usize::from(ca != *cb));
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
name = "c-epoll"
display = "raw epoll (level)"
language = "c"
framework = "epoll"
category = "micro"
model = "per-core"
io = "epoll"
scenarios = ["hello", "hello-timeout", "echo"]
requires = ["cc"]
apt = []
build = "make -C {dir}"
run = "{dir}/build/server {scenario} {host} {port} {workers}"
version = "cc --version | head -n1"
env = { SB_X = "{workers}" }

[variants.edge]
display = "raw epoll (edge)"
run = "{dir}/build/server --edge {scenario} {host} {port} {workers}"
"#;

    #[test]
    fn a_good_manifest_yields_the_base_and_its_variants() {
        let cs = parse("m.toml", Path::new("/c"), GOOD).unwrap();
        let names: Vec<_> = cs.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["c-epoll", "c-epoll-edge"]);
        assert_eq!(cs[1].family, "c-epoll");
        assert_eq!(cs[1].variant.as_deref(), Some("edge"));
        assert_eq!(cs[1].display, "raw epoll (edge)");
        assert!(cs[1].run.contains("--edge"));
        assert_eq!(cs[1].framework, "epoll");
        assert_eq!(cs[0].env["SB_X"], "{workers}");
    }

    #[test]
    fn unsupported_machines_are_known_and_give_a_reason() {
        let with = |extra: &str| parse("m.toml", Path::new("/c"), &format!("{GOOD}\n[variants.uring]\n{extra}"));
        let cs = with("unsupported = { riscv64 = \"no riscv64 build\" }").unwrap();
        assert!(cs[0].unsupported.is_empty());
        assert_eq!(cs[2].unsupported["riscv64"], "no riscv64 build");
        let errors = with("unsupported = { amd64 = \"x\", s390x = \" \", arm = 1 }").unwrap_err();
        let errors: Vec<String> = errors.iter().map(|e| e.message.clone()).collect();
        assert_eq!(
            errors,
            [
                "field `variants.uring.unsupported` names the machine \"amd64\"; allowed values: x86_64, aarch64, arm, x86, riscv64, powerpc64, s390x, loongarch64",
                "field `variants.uring.unsupported.arm` must be a string (the reason), not an integer",
                "field `variants.uring.unsupported.s390x` is empty; say why it cannot be built there",
            ]
        );
        let errors = with("unsupported = [\"riscv64\"]").unwrap_err();
        assert!(errors[0].message.contains("must be a table of reasons by machine"), "{errors:?}");
    }

    #[test]
    fn unsupported_scenarios_are_known_unlisted_and_give_a_reason() {
        let with = |extra: &str| parse("m.toml", Path::new("/c"), &format!("{GOOD}\n[variants.uring]\n{extra}"));
        let cs = with("unsupported_scenarios = { counter = \"processes share no memory\" }").unwrap();
        assert!(cs[0].unsupported_scenarios.is_empty());
        assert_eq!(cs[2].unsupported_scenarios["counter"], "processes share no memory");
        let errors = with("unsupported_scenarios = { counters = \"x\", hello = \"y\", work = \" \" }").unwrap_err();
        let errors: Vec<String> = errors.iter().map(|e| e.message.clone()).collect();
        assert_eq!(errors.len(), 3, "{errors:?}");
        let has = |words: &str| errors.iter().any(|e| e.contains(words));
        assert!(has("field `variants.uring.unsupported_scenarios` names the scenario \"counters\" (did you mean `counter`?); allowed values: hello, hello-timeout, plaintext, json, echo, work, counter"), "{errors:?}");
        assert!(has("names \"hello\", which `scenarios` lists: it is one or the other"), "{errors:?}");
        assert!(has("`variants.uring.unsupported_scenarios.work` is empty; say why the scenario is not answered"), "{errors:?}");
    }

    #[test]
    fn unsupported_checks_are_known_and_give_a_reason() {
        let with = |extra: &str| parse("m.toml", Path::new("/c"), &format!("{GOOD}\n[variants.pool]\n{extra}"));
        let cs = with("unsupported_checks = { scale = \"16 threads hold 16 connections\" }").unwrap();
        assert!(cs[0].unsupported_checks.is_empty());
        assert_eq!(cs[2].unsupported_checks["scale"], "16 threads hold 16 connections");
        let errors = with("unsupported_checks = { scales = \"x\", bad-drop-5000 = \"\" }").unwrap_err();
        let errors: Vec<String> = errors.iter().map(|e| e.message.clone()).collect();
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors[0].contains("`variants.pool.unsupported_checks.bad-drop-5000` is empty; say why the check cannot pass"), "{errors:?}");
        assert!(errors[1].starts_with("field `variants.pool.unsupported_checks` names the check \"scales\" (did you mean `scale`?); allowed values: hello-response, "), "{errors:?}");
        assert!(errors[1].ends_with("client-ab, scale"), "{errors:?}");
    }

    #[test]
    fn kebab_case() {
        assert!(is_kebab("c-epoll") && is_kebab("go-net2") && is_kebab("x"));
        assert!(is_kebab("c-io_uring") && is_kebab("erlang-gen_tcp"));
        assert!(!is_kebab("C-epoll") && !is_kebab("c--epoll") && !is_kebab("-c") && !is_kebab("c-_epoll") && !is_kebab("c-io__uring"));
    }

    #[test]
    fn edit_distance_counts_edits() {
        assert_eq!(edit_distance("buidl", "build"), 2);
        assert_eq!(edit_distance("iouring", "io_uring"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
