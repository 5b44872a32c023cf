//! The two versions of an A/B run and where they come from. A baseline at a git revision is the whole
//! catalog at that revision, checked out in a detached worktree of its own under the results folder: the
//! files contestants share above their own folder (Rust's workspace and its target/, Go's module, sb.h and
//! common.mk, Java's build) are then the revision's, and its builds and build stamps are apart from the
//! working tree's. The worktree goes when the run ends, however it ends. Two folders (`--ab`) are taken as
//! they are.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::catalog::{Catalog, Contestant};
use crate::model::ab::{AbSide, Side};
use crate::os::git::git;

use crate::run::options::{AbSource, BenchOptions, Revision};

/// The revision `rev` of the repository that holds `catalog_root`; an error that says what is wrong when
/// there is no repository or no such commit.
pub fn resolve_revision(catalog_root: &Path, rev: &str) -> anyhow::Result<Revision> {
    let catalog = std::fs::canonicalize(catalog_root).with_context(|| format!("contestant folder '{}' not found", catalog_root.display()))?;
    let toplevel = git(&catalog, &["rev-parse", "--show-toplevel"])
        .map_err(|e| anyhow::anyhow!("--baseline {rev} needs the catalog in a git repository, and {} is in none: {e}", catalog.display()))?;
    let toplevel = std::fs::canonicalize(&toplevel).unwrap_or_else(|_| PathBuf::from(&toplevel));
    let commit = git(&toplevel, &["rev-parse", "--verify", "--quiet", "--end-of-options", &format!("{rev}^{{commit}}")])
        .map_err(|_| anyhow::anyhow!("--baseline {rev}: no such commit in the repository at {} (give a branch, a tag, a hash or HEAD~N)", toplevel.display()))?;
    let catalog_in_repo = catalog.strip_prefix(&toplevel).unwrap_or(Path::new("")).to_path_buf();
    Ok(Revision { rev: rev.to_string(), commit, toplevel, catalog_in_repo })
}

/// A detached worktree of a repository at one commit, in a folder of its own; removed with that folder
/// (and whatever builds left in it) when dropped.
#[derive(Debug)]
pub struct Worktree {
    repo: PathBuf,
    /// The folder that holds the checkout and nothing else of the user's.
    area: PathBuf,
    pub checkout: PathBuf,
}

impl Worktree {
    /// `git worktree add --detach <area>/checkout <commit>`.
    pub fn add(repo: &Path, area: &Path, commit: &str) -> anyhow::Result<Worktree> {
        std::fs::create_dir_all(area).with_context(|| format!("cannot create {}", area.display()))?;
        let checkout = area.join("checkout");
        // From here on a failure still removes the folder.
        let tree = Worktree { repo: repo.to_path_buf(), area: area.to_path_buf(), checkout };
        let path = tree.checkout.to_string_lossy().to_string();
        git(repo, &["worktree", "add", "--detach", "--quiet", &path, commit]).with_context(|| format!("cannot check commit {commit} out"))?;
        Ok(tree)
    }
}

impl Drop for Worktree {
    fn drop(&mut self) {
        let path = self.checkout.to_string_lossy().to_string();
        if self.checkout.exists() && git(&self.repo, &["worktree", "remove", "--force", "--force", &path]).is_err() {
            // Removed by hand, git's record of it goes with a prune (which only drops worktrees whose
            // folders are gone).
            let _ = std::fs::remove_dir_all(&self.checkout);
            let _ = git(&self.repo, &["worktree", "prune"]);
        }
        let _ = std::fs::remove_dir_all(&self.area);
    }
}

/// One version: its contestant (named as every table names it), the catalog its build reads shared
/// files from, where its build stamps go, and what run.json says of it.
#[derive(Debug)]
pub struct Version {
    pub contestant: Contestant,
    pub catalog: Catalog,
    pub stamps: PathBuf,
    pub record: AbSide,
}

/// Both versions, and the baseline's worktree while the run lasts.
#[derive(Debug)]
pub struct Sides {
    pub a: Version,
    pub b: Version,
    /// Dropped last: the baseline's checkout and stamps.
    _worktree: Option<Worktree>,
}

impl Sides {
    pub fn side(&self, side: Side) -> &Version {
        match side {
            Side::A => &self.a,
            Side::B => &self.b,
        }
    }

    /// The two versions `opts.ab` names. `catalog` is the working tree's (`--contestants`, or the
    /// repository's); a baseline is checked out under `area`, which the run owns.
    pub fn resolve(opts: &BenchOptions, catalog: &Catalog, area: &Path) -> anyhow::Result<Sides> {
        let ab = opts.ab.as_ref().ok_or_else(|| anyhow::anyhow!("not an A/B run"))?;
        let stamps = crate::launch::stamp_dir(&opts.out_dir);
        match &ab.source {
            AbSource::Baseline(rev) => {
                let b = one(named(catalog.select(&opts.selection)?, opts), "the working tree's catalog")?.clone();
                let tree = Worktree::add(&rev.toplevel, area, &rev.commit)?;
                let root = tree.checkout.join(&rev.catalog_in_repo);
                let at_rev = Catalog::discover(&root).with_context(|| format!("the catalog at {} ({})", rev.rev, root.display()))?;
                let mut a = at_rev.contestants.iter().find(|c| c.name == b.name).cloned().ok_or_else(|| {
                    let names: Vec<&str> = at_rev.contestants.iter().map(|c| c.name.as_str()).collect();
                    anyhow::anyhow!("A (baseline): {} does not exist at {} (commit {}); contestants there: {}", b.name, rev.rev, short(&rev.commit), names.join(", "))
                })?;
                a.name = format!("{}@{}", b.name, short(&rev.rev));
                let record = |c: &Contestant, from: String, commit: Option<String>| AbSide { name: c.name.clone(), from, commit, dir: c.dir.display().to_string() };
                Ok(Sides {
                    a: Version {
                        record: record(&a, format!("git revision {} (commit {})", rev.rev, short(&rev.commit)), Some(rev.commit.clone())),
                        contestant: a,
                        catalog: at_rev,
                        stamps: area.join("stamps"),
                    },
                    b: Version { record: record(&b, "the working tree".into(), None), contestant: b, catalog: catalog.clone(), stamps },
                    _worktree: Some(tree),
                })
            }
            AbSource::Folders(dir_a, dir_b) => {
                let (mut a, catalog_a) = in_folder(dir_a, opts, catalog, Side::A)?;
                let (b, catalog_b) = in_folder(dir_b, opts, catalog, Side::B)?;
                if a.name == b.name {
                    let folder = |c: &Contestant| c.dir.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
                    let label = if folder(&a) == folder(&b) || folder(&a).is_empty() { "a".to_string() } else { folder(&a) };
                    a.name = format!("{}@{label}", b.name);
                }
                let record = |c: &Contestant| AbSide { name: c.name.clone(), from: format!("folder {}", c.dir.display()), commit: None, dir: c.dir.display().to_string() };
                Ok(Sides {
                    a: Version { record: record(&a), contestant: a, catalog: catalog_a, stamps: stamps.clone() },
                    b: Version { record: record(&b), contestant: b, catalog: catalog_b, stamps },
                    _worktree: None,
                })
            }
        }
    }
}

/// The contestant whose manifest is in `dir` (the selection's, when the manifest has variants), and the
/// catalog its build reads shared files from: the run's catalog when the folder is inside it, else the
/// folder alone.
fn in_folder(dir: &Path, opts: &BenchOptions, catalog: &Catalog, side: Side) -> anyhow::Result<(Contestant, Catalog)> {
    let which = format!("{} ({})", side.letter(), dir.display());
    let dir = std::fs::canonicalize(dir).with_context(|| format!("{which}: no such folder"))?;
    let here = Catalog::discover(&dir)?;
    let own: Vec<&Contestant> = here.contestants.iter().filter(|c| c.dir == dir).collect();
    if let (true, Some(e)) = (own.is_empty(), here.errors.first()) {
        anyhow::bail!("{which}: its manifest is broken: {e}");
    }
    let wanted: Vec<&Contestant> = if opts.selection.terms.is_empty() {
        own
    } else {
        let selected = here.select(&opts.selection).with_context(|| which.clone())?;
        own.into_iter().filter(|c| selected.iter().any(|s| s.name == c.name)).collect()
    };
    let c = one(named(wanted, opts), &which)?.clone();
    let fingerprinted = if dir.starts_with(&catalog.root) { catalog.clone() } else { here };
    Ok((c, fingerprinted))
}

/// Of the contestants a selection matched, the one a term names exactly when there is one (`c-epoll`
/// also matches its variants `c-epoll-edge` and `c-epoll-prefork` by their family); else all of them.
fn named<'c>(matched: Vec<&'c Contestant>, opts: &BenchOptions) -> Vec<&'c Contestant> {
    let exact: Vec<&Contestant> = matched.iter().copied().filter(|c| opts.selection.terms.contains(&c.name)).collect();
    if exact.len() == 1 {
        exact
    } else {
        matched
    }
}

/// The one contestant of a list, or why there is not one.
fn one<'c>(list: Vec<&'c Contestant>, from: &str) -> anyhow::Result<&'c Contestant> {
    match list.as_slice() {
        [c] => Ok(c),
        [] => anyhow::bail!("{from}: no contestant there matches the selection"),
        many => anyhow::bail!(
            "an A/B run measures one contestant, and the selection matches {} in {from} ({}): name one, such as `serverbench bench {} --baseline HEAD`",
            many.len(),
            many.iter().take(8).map(|c| c.name.as_str()).collect::<Vec<_>>().join(", "),
            many[0].name
        ),
    }
}

/// A revision as names show it: as given, a full hash cut to 10 characters.
pub fn short(rev: &str) -> String {
    if rev.len() == 40 && rev.chars().all(|c| c.is_ascii_hexdigit()) {
        rev[..10].to_string()
    } else {
        rev.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Selection;
    use crate::model::ab::Bands;
    use crate::run::options::AbOptions;

    #[test]
    fn a_revision_names_its_commit_and_the_catalogs_place() {
        let Some(root) = crate::testing::checkout_or_skip("run::ab::sides::tests::a_revision_names_its_commit_and_the_catalogs_place") else { return };
        let r = resolve_revision(&root.join("contestants"), "HEAD").unwrap();
        assert_eq!(r.commit.len(), 40);
        assert_eq!(r.catalog_in_repo, Path::new("contestants"));
        let e = resolve_revision(&root.join("contestants"), "no-such-branch-xyz").unwrap_err().to_string();
        assert!(e.contains("--baseline no-such-branch-xyz: no such commit"), "{e}");
        let outside = tempfile::tempdir().unwrap();
        let e = resolve_revision(outside.path(), "HEAD").unwrap_err().to_string();
        assert!(e.contains("needs the catalog in a git repository"), "{e}");
        assert_eq!(short(&r.commit), r.commit[..10]);
        assert_eq!(short("HEAD~1"), "HEAD~1");
    }

    /// A manifest of the control as `name`, with variants `edge` and `slow`, in `dir`.
    fn contestant_in(dir: &Path, name: &str) {
        std::fs::create_dir_all(dir).unwrap();
        let manifest = format!(
            "name = \"{name}\"\nlanguage = \"c\"\nframework = \"epoll\"\ncategory = \"micro\"\nmodel = \"single-loop\"\nio = \"epoll\"\n\
             scenarios = [\"hello\"]\nrun = \"{{dir}}/server {{scenario}} {{host}} {{port}}\"\n[variants.edge]\nrun = \"{{dir}}/server --edge {{port}}\"\n"
        );
        std::fs::write(dir.join("contestant.toml"), manifest).unwrap();
    }

    /// The sides of `--ab A B` with `terms` selecting the contestant.
    fn sides(terms: &[&str], (a, b): (&Path, &Path), catalog: &Path) -> anyhow::Result<Sides> {
        let ab = AbOptions { source: AbSource::Folders(a.to_path_buf(), b.to_path_buf()), bands: Bands::default(), fail_on: None };
        let selection = Selection { terms: terms.iter().map(|t| t.to_string()).collect(), ..Selection::default() };
        let opts = BenchOptions { selection, control: false, ab: Some(ab), ..BenchOptions::for_tests() };
        Sides::resolve(&opts, &Catalog::discover(catalog)?, &catalog.join("area"))
    }

    #[test]
    fn two_folders_are_named_apart_and_a_name_picks_one_of_their_variants() {
        let tmp = tempfile::tempdir().unwrap();
        let (old, new) = (tmp.path().join("old"), tmp.path().join("cat/new"));
        contestant_in(&old, "ref");
        contestant_in(&new, "ref");
        let (o, n) = (old.as_path(), new.as_path());
        let catalog = tmp.path().join("cat");
        let s = sides(&["ref"], (o, n), &catalog).unwrap();
        assert_eq!((s.a.contestant.name.as_str(), s.b.contestant.name.as_str()), ("ref@old", "ref"));
        assert_eq!(s.a.record.from, format!("folder {}", std::fs::canonicalize(&old).unwrap().display()));
        // B inside the run's catalog builds against it; A outside, against its own folder.
        assert_eq!((s.a.catalog.root.clone(), s.b.catalog.root.clone()), (std::fs::canonicalize(&old).unwrap(), std::fs::canonicalize(&catalog).unwrap()));
        let s = sides(&["ref-edge"], (o, n), &catalog).unwrap();
        assert_eq!((s.a.contestant.name.as_str(), s.b.contestant.name.as_str()), ("ref-edge@old", "ref-edge"));
        // The family's name matches both variants: the one named exactly is taken.
        let e = sides(&[], (o, n), &catalog).unwrap_err().to_string();
        assert!(e.contains("an A/B run measures one contestant, and the selection matches 2") && e.contains("ref, ref-edge"), "{e}");
        let same = sides(&["ref"], (o, o), &catalog).unwrap();
        assert_eq!(same.a.contestant.name, "ref@a", "one folder twice: A is NAME@a");
    }
}
