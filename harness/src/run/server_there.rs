//! `--server-host` and `--server-checkout`, checked: what a run with its servers on another machine needs,
//! and where the catalog is there. The checkout is not copied: the same project must be at
//! `--server-checkout` there (by default the same absolute path as here), and the catalog at the same
//! place inside it (a catalog outside the checkout at the same absolute path).

use std::path::{Path, PathBuf};

use super::options::{BenchChoices, Tool};

/// The choices a server host rules out.
pub(super) fn check(c: &BenchChoices) -> anyhow::Result<()> {
    anyhow::ensure!(
        c.server_address.is_some_and(|a| !a.is_loopback()),
        "--server-host needs --server-address: the server host's address that the load reaches (the servers listen on it there)"
    );
    anyhow::ensure!(
        c.tool == Tool::Builtin,
        "--server-host: a round's server figures are read there at the edges the built-in load generator marks: use --tool builtin"
    );
    anyhow::ensure!(!c.check, "--check runs its suite against servers on this machine: run `serverbench check` on the server host instead");
    if let Some(p) = &c.server_checkout {
        anyhow::ensure!(p.is_absolute(), "--server-checkout {} must be an absolute path on the server host", p.display());
    }
    Ok(())
}

/// The checkout there and the catalog's path in it.
pub(super) fn paths(c: &BenchChoices) -> (PathBuf, PathBuf) {
    let here = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let root = here(&c.repo_root);
    let checkout = c.server_checkout.clone().unwrap_or_else(|| root.clone());
    (checkout.clone(), catalog_there(&here(&c.catalog_root), &root, &checkout))
}

fn catalog_there(catalog: &Path, root: &Path, checkout: &Path) -> PathBuf {
    match catalog.strip_prefix(root) {
        Ok(inside) => checkout.join(inside),
        Err(_) => catalog.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalog_keeps_its_place_in_the_checkout() {
        let there = |catalog: &str| catalog_there(Path::new(catalog), Path::new("/home/me/serverbench"), Path::new("/srv/sb"));
        assert_eq!(there("/home/me/serverbench/contestants"), Path::new("/srv/sb/contestants"));
        assert_eq!(there("/tmp/catalog"), Path::new("/tmp/catalog"));
    }
}
