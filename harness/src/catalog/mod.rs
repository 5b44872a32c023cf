//! The contestant catalog: discovery of `contestants/**/contestant.toml`, validation, selection,
//! dependency checks and cached builds.

pub mod build;
pub mod manifest;
pub mod requires;
pub mod template;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::Serialize;

pub use manifest::ManifestError;

/// One runnable server: a manifest, or one of its variants, with every field validated.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Contestant {
    /// Unique; a variant's name is `<family>-<variant>`.
    pub name: String,
    /// The manifest's own name, shared by its variants.
    pub family: String,
    pub variant: Option<String>,
    pub display: String,
    pub language: String,
    pub framework: String,
    pub category: String,
    pub model: String,
    pub io: String,
    /// How the code serving a connection is written (`manifest::STYLES`); None where the manifest says nothing.
    pub style: Option<String>,
    pub scenarios: Vec<String>,
    pub requires: Vec<String>,
    pub apt: Vec<String>,
    pub build: Option<String>,
    pub run: String,
    pub version: Option<String>,
    pub env: BTreeMap<String, String>,
    /// Kinds of machine (`manifest::MACHINES`) it cannot be built on, with the reason for each.
    pub unsupported: BTreeMap<String, String>,
    /// Scenarios it does not answer (not in `scenarios`), with the reason for each.
    pub unsupported_scenarios: BTreeMap<String, String>,
    /// Conformance checks (`manifest::CHECKS`) it is not held to, with the reason for each: `check` skips
    /// them with that reason (`NOT_HELD_PREFIX`) instead of running them.
    pub unsupported_checks: BTreeMap<String, String>,
    /// Absolute folder of the contestant (the `{dir}` placeholder; the cwd of its commands).
    pub dir: PathBuf,
    pub manifest: PathBuf,
}

impl Contestant {
    /// Micro contestants answer `hello` byte for byte; platform ones may add headers.
    pub fn is_micro(&self) -> bool {
        self.category == "micro"
    }
    pub fn supports(&self, scenario: &str) -> bool {
        self.scenarios.iter().any(|s| s == scenario)
    }
    /// Why it cannot be built on this kind of machine, when its manifest says so; such a contestant is
    /// the only kind that may be absent from a run that requires all of them (`build --require-all`).
    pub fn unsupported_here(&self) -> Option<String> {
        let machine = std::env::consts::ARCH;
        self.unsupported.get(machine).map(|why| format!("{UNSUPPORTED_PREFIX} {machine}: {why}"))
    }
    /// Why it is not held to a conformance check, when its manifest says so (the reason of the skip).
    pub fn not_held_to(&self, check: &str) -> Option<String> {
        self.unsupported_checks.get(check).map(|why| format!("{NOT_HELD_PREFIX}: {why}"))
    }
}

/// How the reason of a contestant whose manifest says it cannot be built here begins (in `list`, and in
/// run.json and check.json, where scripts/test.sh looks for it).
pub const UNSUPPORTED_PREFIX: &str = "its manifest says it cannot be built on";

/// How the reason of a check skipped because the manifest says the contestant is not held to it begins
/// (in `check`'s lines and check.json, where scripts/conformance.py looks for it).
pub const NOT_HELD_PREFIX: &str = "its manifest says it is not held to this check";

/// Every manifest under a root, parsed. Broken manifests are kept as errors; the rest stay usable.
#[derive(Debug, Clone)]
pub struct Catalog {
    pub root: PathBuf,
    pub contestants: Vec<Contestant>,
    pub errors: Vec<ManifestError>,
    /// The folder of every manifest found, valid or not (a build of one ignores the others' files).
    pub manifest_dirs: Vec<PathBuf>,
}

/// Folders never searched for manifests: build outputs and dependency caches.
pub const SKIPPED_DIRS: &[&str] = &["build", "target", "node_modules", ".venv", "__pycache__", "_build"];

impl Catalog {
    pub fn discover(root: &Path) -> anyhow::Result<Catalog> {
        let root = std::fs::canonicalize(root)
            .with_context(|| format!("contestant folder '{}' not found; pass --contestants DIR", root.display()))?;
        let mut manifests = Vec::new();
        find_manifests(&root, &mut manifests)?;
        manifests.sort();
        let shown_from = root.parent().unwrap_or(&root).to_path_buf();
        let mut catalog = Catalog { root, contestants: Vec::new(), errors: Vec::new(), manifest_dirs: Vec::new() };
        let mut seen: HashMap<String, String> = HashMap::new();
        for path in manifests {
            let dir = path.parent().expect("a manifest has a folder").to_path_buf();
            catalog.manifest_dirs.push(dir.clone());
            let file = path.strip_prefix(&shown_from).unwrap_or(&path).display().to_string();
            let text = match std::fs::read_to_string(&path) {
                Ok(t) => t,
                Err(e) => {
                    catalog.errors.push(ManifestError { file, message: format!("cannot be read: {e}") });
                    continue;
                }
            };
            match manifest::parse(&file, &dir, &text) {
                Ok(found) => {
                    for c in found {
                        if let Some(other) = seen.get(&c.name) {
                            catalog.errors.push(ManifestError {
                                file: file.clone(),
                                message: format!("contestant name \"{}\" is already used by {other}; names must be unique", c.name),
                            });
                        } else {
                            seen.insert(c.name.clone(), file.clone());
                            catalog.contestants.push(c);
                        }
                    }
                }
                Err(errors) => catalog.errors.extend(errors),
            }
        }
        Ok(catalog)
    }

    /// The contestants a selection names, in catalog order. A term that matches nothing is an error that
    /// lists what exists.
    pub fn select(&self, sel: &Selection) -> anyhow::Result<Vec<&Contestant>> {
        for term in &sel.terms {
            if !self.contestants.iter().any(|c| term_matches(c, term)) {
                let names: Vec<&str> = self.contestants.iter().map(|c| c.name.as_str()).collect();
                let broken: Vec<&str> = self.errors.iter().map(|e| e.file.as_str()).collect();
                let broken = if broken.is_empty() {
                    String::new()
                } else {
                    format!("; manifests with errors (see `serverbench list`): {}", broken.join(", "))
                };
                anyhow::bail!(
                    "no contestant matches '{term}' (a term matches a name, a language, framework, category, model or io); contestants: {}{broken}",
                    if names.is_empty() { "none".to_string() } else { names.join(", ") }
                );
            }
        }
        let any = |wanted: &[String], value: &str| wanted.is_empty() || wanted.iter().any(|w| w == value);
        Ok(self
            .contestants
            .iter()
            .filter(|c| sel.terms.is_empty() || sel.terms.iter().any(|t| term_matches(c, t)))
            .filter(|c| any(&sel.language, &c.language))
            .filter(|c| any(&sel.category, &c.category))
            .filter(|c| any(&sel.model, &c.model))
            .filter(|c| any(&sel.io, &c.io))
            .filter(|c| any(&sel.framework, &c.framework))
            .collect())
    }
}

/// Which contestants to use: free terms (any of them) and field filters (all of them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    pub terms: Vec<String>,
    pub language: Vec<String>,
    pub category: Vec<String>,
    pub model: Vec<String>,
    pub io: Vec<String>,
    pub framework: Vec<String>,
}

fn term_matches(c: &Contestant, term: &str) -> bool {
    [&c.name, &c.family, &c.language, &c.framework, &c.category, &c.model, &c.io].iter().any(|v| *v == term)
}

fn find_manifests(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("cannot list '{}'", dir.display()))?;
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let kind = entry.file_type()?;
        if kind.is_dir() {
            if !name.starts_with('.') && !SKIPPED_DIRS.contains(&name.as_ref()) {
                find_manifests(&entry.path(), out)?;
            }
        } else if name == "contestant.toml" {
            out.push(entry.path());
        }
    }
    Ok(())
}
