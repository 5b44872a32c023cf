//! The shape of the harness's sources, checked: no two rooms (the folders of `harness/src`) use each other,
//! tests included, no folder holds a circle of files (file A uses file B ... uses file A), and no file is over `SHAPE_MAX_LINES` lines without its tests. A circle
//! makes a folder one piece that can only be read, changed and tested whole; a long file is read least.
//! In `run/`, which every benchmark goes through, no function is over `RUN_MAX_FN_LINES` lines either: a
//! long one there did three jobs at once. Every type of `run/` has all its `impl` blocks in one file, so
//! that a method is found where its type is, and the phases of a benchmark hold at most `PHASE_MAX_FIELDS`
//! fields each: the few they read. `run/` says what happens as typed events through `Ui::emit` and builds
//! no text for the person watching: `ui/text.rs` alone words the events.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The most lines a source file may have, its `#[cfg(test)] mod tests` block not counted.
const SHAPE_MAX_LINES: usize = 600;

#[test]
fn no_circle_of_files_in_a_folder() {
    let mut circles = Vec::new();
    for (folder, files) in shape_folders() {
        let graph = shape_graph(&folder, &files);
        circles.extend(shape_circles(&graph).into_iter().map(|c| format!("src/{}: {}", shape_module_path(&folder).join("/"), c.join(" -> "))));
    }
    assert!(circles.is_empty(), "files that use each other in a circle (break it by moving what both need into a file of its own):\n{}", circles.join("\n"));
}

/// The rooms of the harness (the folders of `harness/src`, docs/architecture.md) use each other one way
/// only, their tests included: a room's test that needs a room above it lives in that room, or builds what
/// it needs from its own room and those below.
#[test]
fn no_circle_between_rooms() {
    let graph = shape_rooms();
    assert!(graph.len() > 10, "the rooms were read: {:?}", graph.keys());
    let circles: Vec<String> = shape_circles(&graph).into_iter().map(|c| c.join(" -> ")).collect();
    assert!(circles.is_empty(), "rooms that use each other in a circle, tests included:\n{}", circles.join("\n"));
}

/// Room → the other rooms its files name as `crate::room`, in code and tests alike.
fn shape_rooms() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let rooms: BTreeSet<String> =
        std::fs::read_dir(&src).unwrap().flatten().filter(|e| e.path().is_dir()).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    let mut graph = BTreeMap::new();
    for (folder, files) in shape_folders() {
        let Some(room) = shape_module_path(&folder).first().cloned() else { continue };
        let uses: &mut BTreeSet<String> = graph.entry(room.clone()).or_default();
        for f in files {
            let code = shape_code(&std::fs::read_to_string(folder.join(format!("{f}.rs"))).unwrap());
            let mut rest = code.as_str();
            while let Some(at) = rest.find("crate::") {
                rest = &rest[at + "crate::".len()..];
                let heads = if let Some(group) = rest.strip_prefix('{') { shape_group_heads(group) } else { vec![shape_ident(rest)] };
                uses.extend(heads.into_iter().filter(|h| *h != room && rooms.contains(*h)).map(str::to_string));
            }
        }
    }
    graph
}

#[test]
fn no_file_over_600_lines_without_its_tests() {
    let mut long = Vec::new();
    for (folder, files) in shape_folders() {
        for name in files {
            let text = std::fs::read_to_string(folder.join(format!("{name}.rs"))).unwrap();
            let lines = shape_without_tests(&text).lines().count();
            if lines > SHAPE_MAX_LINES {
                long.push(format!("src/{}/{name}.rs: {lines} lines", shape_module_path(&folder).join("/")));
            }
        }
    }
    assert!(long.is_empty(), "files over {SHAPE_MAX_LINES} lines without their tests (split them by what they own):\n{}", long.join("\n"));
}

/// The most lines a function of `run/` may have, its tests not counted.
const RUN_MAX_FN_LINES: usize = 80;
/// The files of `run/` whose functions may be longer: the field-by-field conversions to the model, as long
/// as the model's types.
const RUN_LONG_FN_FILES: &[&str] = &["to_model"];

#[test]
fn no_function_in_run_over_80_lines() {
    let mut long = Vec::new();
    for (file, name, code) in shape_run_files() {
        if RUN_LONG_FN_FILES.contains(&name.as_str()) {
            continue;
        }
        for (function, line, lines) in shape_functions(&code) {
            if lines > RUN_MAX_FN_LINES {
                long.push(format!("{file}:{line}: fn {function}, {lines} lines"));
            }
        }
    }
    assert!(long.is_empty(), "functions of run/ over {RUN_MAX_FN_LINES} lines (split them by the jobs they do):\n{}", long.join("\n"));
}

/// Each file of `run/`: its path from the crate (`src/run/ab/measure.rs`), its name, and its code without
/// its tests, comments and strings (`shape_code`).
fn shape_run_files() -> Vec<(String, String, String)> {
    let mut found = Vec::new();
    for (folder, files) in shape_folders() {
        let module = shape_module_path(&folder);
        if module.first().map(String::as_str) != Some("run") {
            continue;
        }
        for name in files {
            let code = shape_code(&shape_without_tests(&std::fs::read_to_string(folder.join(format!("{name}.rs"))).unwrap()));
            found.push((format!("src/{}/{name}.rs", module.join("/")), name, code));
        }
    }
    found
}

#[test]
fn run_sends_events_and_holds_no_display_strings() {
    let mut worded = Vec::new();
    for (file, _, code) in shape_run_files() {
        worded.extend(shape_ui_text(&code).into_iter().map(|(line, what)| format!("{file}:{line}: {what}")));
    }
    assert!(
        worded.is_empty(),
        "text for the person watching built in run/ (send a typed event, `ui.emit(...)`, and word it in ui/text.rs):\n{}",
        worded.join("\n")
    );
}

/// Where `code` words what the Ui shows, with the line: a call of a Ui method other than `emit`
/// (`ui.line(...)`, `ui.status(...)`, the bar's), or a `format!` among the arguments of `emit(...)`.
fn shape_ui_text(code: &str) -> Vec<(usize, String)> {
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let ident_before = |at: usize| code[..at].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_');
    let mut found = Vec::new();
    for (at, _) in code.match_indices("ui.").filter(|&(at, _)| !ident_before(at)) {
        let method = shape_ident(&code[at + 3..]);
        if method != "emit" {
            found.push((line_of(at), format!("ui.{method}")));
        }
    }
    for (at, _) in code.match_indices(".emit(") {
        let mut depth = 0i32;
        let args: String = code[at + 6..]
            .chars()
            .take_while(|c| {
                depth += match c {
                    '(' => 1,
                    ')' => -1,
                    _ => 0,
                };
                depth >= 0
            })
            .collect();
        if args.contains("format!") {
            found.push((line_of(at), "format! in emit(...)".to_string()));
        }
    }
    found.sort();
    found
}

/// The finder of text built for the Ui, on code whose answers are known.
#[test]
fn the_ui_text_finder_finds_calls_and_formats_only() {
    let code = "ctx.ui.emit(Bar::Step);\nself.ctx.ui.line(&x);\nui.emit(RoundEvent::Failed { reason: &format!(\"{x}\") });\nlet gui = 1;\ngui.line(x);\nui.emit(f(a)); format!(\"{x}\");\nui.status(s)";
    assert_eq!(shape_ui_text(code), [(2, "ui.line".to_string()), (3, "format! in emit(...)".to_string()), (7, "ui.status".to_string())]);
}

/// The most fields a phase of a benchmark, or what the phases share, may hold.
const PHASE_MAX_FIELDS: usize = 5;
/// The phases of a benchmark and what they share, by file of `run/` and type.
const PHASES: &[(&str, &str)] = &[
    ("runner", "Context"),
    ("runner", "Record"),
    ("prepare", "Preparing"),
    ("measure", "Measuring"),
    ("probed", "Prober"),
    ("ab/measure", "PairRounds"),
];

#[test]
fn every_type_of_run_has_its_impl_blocks_in_one_file() {
    let mut files_of: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut declared: BTreeSet<String> = BTreeSet::new();
    for (folder, files) in shape_folders() {
        let module = shape_module_path(&folder);
        if module.first().map(String::as_str) != Some("run") {
            continue;
        }
        for name in files {
            let code = shape_code(&shape_without_tests(&std::fs::read_to_string(folder.join(format!("{name}.rs"))).unwrap()));
            let file = format!("src/{}/{name}.rs", module.join("/"));
            declared.extend(shape_declared_types(&code));
            for ty in shape_impl_types(&code) {
                files_of.entry(ty).or_default().insert(file.clone());
            }
        }
    }
    assert!(declared.contains("Measuring") && files_of.contains_key("Measuring"), "the finder sees run/'s types: {declared:?}");
    let spread: Vec<String> = files_of
        .iter()
        .filter(|(ty, files)| declared.contains(*ty) && files.len() > 1)
        .map(|(ty, files)| format!("{ty}: {}", files.iter().cloned().collect::<Vec<_>>().join(", ")))
        .collect();
    assert!(spread.is_empty(), "types of run/ whose impl blocks are in several files (give each phase a type of its own file):\n{}", spread.join("\n"));
}

#[test]
fn each_phase_of_a_benchmark_holds_at_most_5_fields() {
    let run = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/run");
    for (file, ty) in PHASES {
        let code = shape_code(&std::fs::read_to_string(run.join(format!("{file}.rs"))).unwrap());
        let fields = shape_struct_fields(&code, ty).unwrap_or_else(|| panic!("run/{file}.rs declares no struct {ty}"));
        assert!(fields <= PHASE_MAX_FIELDS, "run/{file}.rs: {ty} holds {fields} fields; a phase holds the few it reads (at most {PHASE_MAX_FIELDS})");
    }
}

/// The type and field finders, on code whose answers are known.
#[test]
fn the_type_finders_read_declarations_and_impl_headers() {
    let code = "pub(super) struct A<'a> {\n    x: &'a str,\n    pub y: Vec<(u8, u8)>,\n    z: HashMap<u8, u8>,\n}\nenum E { One, Two }\nimpl<'a> A<'a> {\n}\nimpl std::fmt::Display for crate::x::E {\n}\nimpl<T: Into<u8>> From<T> for A<'_> {}\n";
    assert_eq!(shape_declared_types(code), ["A", "E"]);
    assert_eq!(shape_impl_types(code), ["A", "E", "A"]);
    assert_eq!(shape_struct_fields(code, "A"), Some(3));
    assert_eq!(shape_struct_fields(code, "B"), None);
}

/// The function finder, on code whose functions are known.
#[test]
fn the_function_finder_measures_bodies_only() {
    let code = "pub(super) fn a(x: [u8; 4]) -> u8 {\n    let f = |y: u8| { y };\n    f(x[0])\n}\ntrait T {\n    fn decl(&self);\n}\nfn b<F: Fn(u8) -> u8>(f: F, g: fn(u8)) {\n}\n";
    assert_eq!(shape_functions(code), [("a".to_string(), 1, 4), ("b".to_string(), 8, 2)]);
}

/// The finder itself, on graphs whose circles are known.
#[test]
fn the_circle_finder_finds_circles_and_only_circles() {
    let graph = |edges: &[(&str, &str)]| {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in edges {
            g.entry(a.to_string()).or_default().insert(b.to_string());
            g.entry(b.to_string()).or_default();
        }
        g
    };
    assert!(shape_circles(&graph(&[("a", "b"), ("b", "c"), ("a", "c")])).is_empty(), "a diamond is no circle");
    assert_eq!(shape_circles(&graph(&[("a", "b"), ("b", "a")])), [["a", "b", "a"]]);
    assert_eq!(shape_circles(&graph(&[("x", "a"), ("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")])), [["a", "b", "c", "a"]]);
    assert_eq!(shape_circles(&graph(&[("a", "b"), ("b", "a"), ("c", "d"), ("d", "c")])).len(), 2, "two circles apart");
}

/// The paths between files that the graph reads, and those it must not.
#[test]
fn a_files_uses_are_read_from_its_code_only() {
    let files: BTreeSet<String> = ["config", "mix", "report", "mod"].iter().map(|s| s.to_string()).collect();
    let public = BTreeMap::from([("Skew".to_string(), "mix".to_string()), ("DEFAULT_SEED".to_string(), "config".to_string())]);
    let uses = |text: &str| shape_uses(text, "config", &["load".to_string()], &files, &public);
    assert_eq!(uses("use super::mix::Mix;"), ["mix"]);
    assert_eq!(uses("use super::{mix::{self, Mix}, report};"), ["mix", "report"]);
    assert_eq!(uses("let s = crate::load::Skew::parse(x);"), ["mix"], "a name the folder re-exports leads to its file");
    assert_eq!(uses("use crate::load::mix;"), ["mix"]);
    assert!(uses("// super::mix\nlet s = \"crate::load::mix\";").is_empty(), "comments and strings are not uses");
    assert!(uses("use crate::wire::mix;").is_empty(), "another folder's file of the same name");
    assert!(uses("use super::DEFAULT_SEED;").is_empty(), "a file's own item");
    assert!(uses("fn f() {}\n#[cfg(test)]\nmod tests {\n    use super::*;\n    use super::super::mix::X;\n}\n").is_empty(), "tests are left out");
}

/// Each folder of `harness/src` with the names of its files (`mod.rs` included, as `mod`).
fn shape_folders() -> Vec<(PathBuf, Vec<String>)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    let mut todo = vec![src];
    while let Some(dir) = todo.pop() {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path.file_stem().unwrap().to_string_lossy().into_owned());
            }
        }
        files.sort();
        out.push((dir, files));
    }
    out.sort();
    out
}

/// The module path of a folder under `src`: `["load", "backend"]` for src/load/backend.
fn shape_module_path(folder: &Path) -> Vec<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    folder.strip_prefix(&src).unwrap().components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect()
}

/// File → the files of the same folder it uses. `mod.rs` is the folder's face: it uses its files, but a
/// name reached through it leads to the file that defines the name.
fn shape_graph(folder: &Path, files: &[String]) -> BTreeMap<String, BTreeSet<String>> {
    let names: BTreeSet<String> = files.iter().cloned().collect();
    let module = shape_module_path(folder);
    let sources: BTreeMap<String, String> =
        files.iter().map(|f| (f.clone(), shape_code(&shape_without_tests(&std::fs::read_to_string(folder.join(format!("{f}.rs"))).unwrap())))).collect();
    // Names defined `pub` by exactly one file of the folder.
    let mut defined: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (file, code) in sources.iter().filter(|(f, _)| *f != "mod") {
        for name in shape_public_items(code) {
            defined.entry(name).or_default().push(file.clone());
        }
    }
    let public: BTreeMap<String, String> = defined.into_iter().filter(|(_, f)| f.len() == 1).map(|(n, f)| (n, f[0].clone())).collect();
    sources
        .iter()
        .filter(|(f, _)| *f != "mod")
        .map(|(file, code)| (file.clone(), shape_uses(code, file, &module, &names, &public).into_iter().collect()))
        .collect()
}

/// The other files of the folder that `code` (of file `this`) names: `super::x`, `crate::<module>::x`,
/// and a name the folder's `mod.rs` re-exports from file x.
fn shape_uses(code: &str, this: &str, module: &[String], files: &BTreeSet<String>, public: &BTreeMap<String, String>) -> Vec<String> {
    let code = shape_code(&shape_without_tests(code));
    let mut prefixes = vec!["super::".to_string()];
    if !module.is_empty() {
        prefixes.push(format!("crate::{}::", module.join("::")));
    }
    let mut found = BTreeSet::new();
    for prefix in &prefixes {
        let mut rest = code.as_str();
        while let Some(at) = rest.find(prefix.as_str()) {
            let before = rest[..at].chars().next_back();
            rest = &rest[at + prefix.len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue; // `super::super::` or part of a longer path
            }
            let heads: Vec<&str> = if let Some(group) = rest.strip_prefix('{') { shape_group_heads(group) } else { vec![shape_ident(rest)] };
            for head in heads {
                let file = if files.contains(head) && head != "mod" { Some(head) } else { public.get(head).map(String::as_str) };
                if let Some(file) = file.filter(|f| *f != this) {
                    found.insert(file.to_string());
                }
            }
        }
    }
    found.into_iter().collect()
}

/// The first name of each path in a `{a::b, c, d::{e}}` group (the text after `{`).
fn shape_group_heads(group: &str) -> Vec<&str> {
    let mut heads = Vec::new();
    let (mut depth, mut start) = (0usize, true);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => start = true,
            c if start && (c.is_alphanumeric() || c == '_') => {
                heads.push(shape_ident(&group[i..]));
                start = false;
            }
            _ => {}
        }
    }
    heads
}

fn shape_ident(text: &str) -> &str {
    let end = text.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(text.len());
    &text[..end]
}

/// The names a file declares `pub` (or `pub(crate)`, `pub(super)`) at any depth.
fn shape_public_items(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in code.lines() {
        let line = line.trim_start();
        let Some(rest) = line.strip_prefix("pub") else { continue };
        let rest = if rest.starts_with('(') { rest.split_once(')').map_or("", |(_, r)| r) } else { rest };
        let words: Vec<&str> = rest.split_whitespace().collect();
        let kinds = ["struct", "enum", "fn", "const", "static", "type", "trait", "mod", "union"];
        if let Some(i) = words.iter().position(|w| kinds.contains(w)) {
            if let Some(name) = words.get(i + 1).map(|w| shape_ident(w)).filter(|n| !n.is_empty()) {
                names.push(name.to_string());
            }
        }
    }
    names
}

/// The structs and enums `code` declares.
fn shape_declared_types(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in code.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if let Some(k) = words.iter().position(|w| *w == "struct" || *w == "enum") {
            if let Some(name) = words.get(k + 1) {
                found.push(shape_ident(name).to_string());
            }
        }
    }
    found
}

/// The type each `impl` block of `code` is for (the last segment of its path), in order.
fn shape_impl_types(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in code.lines().map(str::trim_start).filter(|l| l.starts_with("impl ") || l.starts_with("impl<")) {
        let header = line.split('{').next().unwrap_or_default();
        // The generics of `impl<...>` first, brackets counted.
        let mut rest = &header[4..];
        if rest.starts_with('<') {
            let mut depth = 0;
            let end = rest.char_indices().find(|&(_, c)| {
                depth += match c {
                    '<' => 1,
                    '>' => -1,
                    _ => 0,
                };
                depth == 0
            });
            rest = &rest[end.map_or(rest.len(), |(k, _)| k + 1)..];
        }
        let target = rest.rsplit(" for ").next().unwrap_or(rest).trim().trim_start_matches('&');
        let path = target.split(['<', ' ']).next().unwrap_or_default();
        found.push(path.rsplit("::").next().unwrap_or_default().to_string());
    }
    found
}

/// How many fields `struct name { ... }` in `code` holds; none when `code` declares no such struct.
fn shape_struct_fields(code: &str, name: &str) -> Option<usize> {
    let at = code.match_indices("struct ").map(|(k, _)| k + 7).find(|&k| shape_ident(&code[k..]) == name)?;
    let open = at + code[at..].find('{')?;
    let mut depth = 0i32;
    let mut fields = 0;
    let mut entry = String::new();
    for c in code[open + 1..].chars() {
        match c {
            '{' | '(' | '[' | '<' => depth += 1,
            '}' if depth == 0 => break,
            '}' | ')' | ']' | '>' => depth -= 1,
            ',' if depth == 0 => {
                fields += usize::from(!entry.trim().is_empty());
                entry.clear();
                continue;
            }
            _ => {}
        }
        entry.push(c);
    }
    Some(fields + usize::from(!entry.trim().is_empty()))
}

/// Every function with a body in `code` (comments and strings blanked): its name, the line its `fn` is on
/// (from 1) and its length in lines, from that line to the one that closes its body.
fn shape_functions(code: &str) -> Vec<(String, usize, usize)> {
    let bytes = code.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut found = Vec::new();
    let mut i = 0;
    while let Some(at) = code[i..].find("fn ").map(|p| p + i) {
        i = at + 3;
        if at > 0 && ident(bytes[at - 1]) {
            continue;
        }
        let name: String = code[i..].trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if name.is_empty() {
            continue;
        }
        // The body opens at the first `{` of the signature; a `;` outside brackets first ends a declaration.
        let mut depth = 0i32;
        let mut open = None;
        for (k, b) in bytes.iter().enumerate().skip(i) {
            match b {
                b'(' | b'[' => depth += 1,
                b')' | b']' => depth -= 1,
                b';' if depth == 0 => break,
                b'{' => {
                    open = Some(k);
                    break;
                }
                _ => {}
            }
        }
        let Some(open) = open else { continue };
        let mut braces = 0i32;
        let close = bytes[open..].iter().position(|b| {
            braces += match b {
                b'{' => 1,
                b'}' => -1,
                _ => 0,
            };
            braces == 0
        });
        let end = close.map_or(bytes.len() - 1, |c| open + c);
        found.push((name, line_of(at), line_of(end) - line_of(at) + 1));
    }
    found
}

/// The text without its `#[cfg(test)] mod tests { ... }` block.
fn shape_without_tests(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let Some(start) = lines.windows(2).position(|w| w[0].trim() == "#[cfg(test)]" && w[1].trim_start().starts_with("mod tests")) else {
        return text.to_string();
    };
    // The block ends where the braces opened from its `mod tests` line close, counted in code only.
    let code = shape_code(&lines[start..].join("\n"));
    let mut depth = 0i64;
    let mut end = lines.len();
    for (i, line) in code.lines().enumerate() {
        for c in line.chars() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
        }
        if i > 0 && depth == 0 && line.contains('}') {
            end = start + i + 1;
            break;
        }
    }
    lines[..start].iter().chain(&lines[end..]).map(|l| format!("{l}\n")).collect()
}

/// Rust source with comments, strings and character literals blanked (newlines kept), so that what is
/// left is code.
fn shape_code(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && !chars.get(i.wrapping_sub(1)).is_some_and(|p| p.is_alphanumeric() || *p == '_') {
            let hashes = chars[i + 1..].iter().take_while(|c| **c == '#').count();
            if chars.get(i + 1 + hashes) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            let close: String = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
            let body_start = i + 2 + hashes;
            let body: String = chars[body_start..].iter().collect();
            let len = body.find(&close).map_or(chars.len() - body_start, |b| body[..b].chars().count());
            out.extend(chars[i..(body_start + len + close.len()).min(chars.len())].iter().map(|c| blank(*c)));
            i = body_start + len + close.len();
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                let skip = if chars[i] == '\\' { 2 } else { 1 };
                out.extend(chars[i..(i + skip).min(chars.len())].iter().map(|c| blank(*c)));
                i += skip;
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' && (chars.get(i + 2) == Some(&'\'') || next == Some('\\')) {
            // A character literal; a lifetime (`'a`) has no closing quote.
            let end = chars[i + 1..].iter().position(|c| *c == '\'').map_or(chars.len(), |p| i + 1 + p + usize::from(next == Some('\\') && chars.get(i + 2) == Some(&'\'')));
            for _ in i..=end.min(chars.len() - 1) {
                out.push(' ');
            }
            i = end + 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The circles of a graph, one per strongly connected group of two files or more, each as a path from its
/// first file back to it.
fn shape_circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let mut circles = Vec::new();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for start in graph.keys() {
        if seen.contains(start) {
            continue;
        }
        // The files on a way from `start` back to it: the group of `start`.
        let reach = |from: &str, edges: &dyn Fn(&str) -> Vec<String>| {
            let mut found: BTreeSet<String> = BTreeSet::from([from.to_string()]);
            let mut todo = vec![from.to_string()];
            while let Some(n) = todo.pop() {
                for m in edges(&n) {
                    if found.insert(m.clone()) {
                        todo.push(m);
                    }
                }
            }
            found
        };
        let forward = reach(start, &|n| graph.get(n).map(|s| s.iter().cloned().collect()).unwrap_or_default());
        let backward = reach(start, &|n| graph.iter().filter(|(_, to)| to.contains(n)).map(|(f, _)| f.clone()).collect());
        let group: BTreeSet<String> = forward.intersection(&backward).cloned().collect();
        if group.len() < 2 {
            continue;
        }
        seen.extend(group.iter().cloned());
        circles.push(shape_path_back(graph, start, &group));
    }
    circles
}

/// A shortest path from `start` through `group` back to `start`.
fn shape_path_back(graph: &BTreeMap<String, BTreeSet<String>>, start: &str, group: &BTreeSet<String>) -> Vec<String> {
    let mut came_from: BTreeMap<String, String> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start.to_string()]);
    while let Some(n) = queue.pop_front() {
        for m in graph.get(&n).into_iter().flatten().filter(|m| group.contains(*m)) {
            if m == start {
                let mut chain = vec![n.clone()];
                while let Some(before) = came_from.get(chain.last().unwrap()).filter(|b| *b != start) {
                    chain.push(before.clone());
                }
                chain.reverse();
                return std::iter::once(start.to_string()).chain(chain.into_iter().filter(|c| c != start)).chain([start.to_string()]).collect();
            }
            if !came_from.contains_key(m) {
                came_from.insert(m.clone(), n.clone());
                queue.push_back(m.clone());
            }
        }
    }
    vec![start.to_string()]
}
