//! `bench`'s options of an A/B run (docs/ab.md), flattened into its arguments: the two versions
//! (`--baseline REV`, `--ab DIR_A DIR_B`), `--fail-on`, the bands its verdicts are read against, the
//! default an A/B run gives `--max-rounds` (which counts pairs there), and their checks into
//! `run::options::AbOptions`.

use std::path::{Path, PathBuf};

use clap::Args;

use crate::model::ab::{Bands, DEFAULT_CHANGE_PCT, DEFAULT_SAME_PCT};
use crate::run::options::{AbOptions, AbSource, DEFAULT_MAX_PAIRS, DEFAULT_MAX_ROUNDS};

#[derive(Debug, Clone, Default, Args)]
pub struct AbArgs {
    /// A/B run: NAME as the catalog was at this git revision (A, NAME@REV, built in a worktree of its own)
    /// against NAME in the working tree (B), in pairs of rounds until B/A is clear (docs/ab.md)
    #[arg(long, value_name = "REV", conflicts_with = "ab")]
    pub baseline: Option<String>,
    /// A/B run of two contestant folders, each with its contestant.toml: A (NAME@<its folder>) against B
    #[arg(long, num_args = 2, value_names = ["DIR_A", "DIR_B"])]
    pub ab: Option<Vec<PathBuf>>,
    /// In an A/B run: exit with status 3 when B is worse, as `compare --fail-on`: `worse` (any of req/s, p99,
    /// CPU per request), `worse+unclear` (also when one was not shown to hold), or either with `:rps,p99,cpu`
    /// (those named); the pairs go on until every figure named is decided
    #[arg(long = "fail-on", value_name = "worse[+unclear][:METRICS]")]
    pub fail_on: Option<crate::compare::FailOn>,
    /// In an A/B run: B/A whose whole 95% interval lies beyond ±this is better or worse [default: 1%]
    #[arg(long = "change-band", value_parser = super::parse_percent, value_name = "PCT")]
    pub change_band: Option<f64>,
    /// In an A/B run: B/A whose whole 95% interval lies within ±this is the same [default: 2%]
    #[arg(long = "same-band", value_parser = super::parse_percent, value_name = "PCT")]
    pub same_band: Option<f64>,
}

impl AbArgs {
    /// An A/B run: two versions of one contestant.
    pub fn is_ab(&self) -> bool {
        self.baseline.is_some() || self.ab.is_some()
    }

    /// `--max-rounds` with `--rounds auto` unless given: pairs in an A/B run.
    pub fn max_rounds_auto(&self) -> u32 {
        if self.is_ab() { DEFAULT_MAX_PAIRS } else { DEFAULT_MAX_ROUNDS }
    }

    /// The fewest `--max-rounds` that `--rounds auto` can work with, and why.
    pub fn fewest_auto(&self) -> (usize, &'static str) {
        if self.is_ab() {
            (crate::model::ab::MIN_PAIRS, "the fewest pairs an A/B run may stop at")
        } else {
            (crate::stats::rounds::MIN_FOR_CI, "the fewest rounds with a 95% interval")
        }
    }

    /// The A/B run asked for, checked: one configuration (`one_configuration`; one contestant is checked
    /// when the catalog is read), a revision that names a commit, folders with a manifest, servers here.
    /// An A/B run has no control: the pairing cancels what the machine does to both versions.
    pub fn options(&self, catalog_root: &Path, one_configuration: bool, server_host: bool) -> anyhow::Result<Option<AbOptions>> {
        let source = match (&self.baseline, &self.ab) {
            (None, None) if self.fail_on.is_some() => anyhow::bail!(
                "--fail-on applies to an A/B run (--baseline REV or --ab DIR_A DIR_B); to gate two runs, use `serverbench compare A B --fail-on`"
            ),
            (None, None) if self.change_band.is_some() || self.same_band.is_some() => {
                anyhow::bail!("--change-band and --same-band apply to an A/B run (--baseline REV or --ab DIR_A DIR_B); `serverbench compare` takes --noise")
            }
            (None, None) => return Ok(None),
            (Some(rev), _) => AbSource::Baseline(crate::run::ab::sides::resolve_revision(catalog_root, rev)?),
            (None, Some(dirs)) => {
                if let Some((side, dir)) = ["A", "B"].iter().zip(dirs).find(|(_, d)| !d.join("contestant.toml").is_file()) {
                    anyhow::bail!("--ab: {side}'s folder {} holds no contestant.toml", dir.display());
                }
                AbSource::Folders(dirs[0].clone(), dirs[1].clone())
            }
        };
        anyhow::ensure!(
            one_configuration,
            "an A/B run measures one configuration: give one --scenario, one -c, at most one --workers count, --rate as a number, no --search"
        );
        anyhow::ensure!(!server_host, "an A/B run builds its versions here: --server-host is not supported with --baseline or --ab");
        let bands = Bands { change_pct: self.change_band.unwrap_or(DEFAULT_CHANGE_PCT), same_pct: self.same_band.unwrap_or(DEFAULT_SAME_PCT) };
        anyhow::ensure!(
            bands.change_pct > 0.0 && bands.same_pct > 0.0,
            "--change-band and --same-band are percentages above 0, such as 1% and 2%"
        );
        Ok(Some(AbOptions { source, bands, fail_on: self.fail_on.clone() }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::bench::BenchArgs;
    use crate::run::options::Rounds;

    #[test]
    fn an_ab_run_takes_one_configuration_and_its_own_defaults() {
        // --baseline resolves its revision in the repository: a source archive has none to resolve.
        let Some(root) = crate::testing::checkout_or_skip("cli::ab::tests::an_ab_run_takes_one_configuration_and_its_own_defaults") else { return };
        let parse = |args: &[&str]| BenchArgs::parse(args).unwrap().options(root, Vec::new());
        let o = parse(&["c-epoll", "--baseline", "HEAD"]).unwrap_or_else(|e| panic!("--baseline HEAD in a checkout: {e:#}"));
        assert_eq!((o.max_rounds, o.control), (DEFAULT_MAX_PAIRS, false));
        assert!(matches!(o.rounds, Rounds::Auto { .. }));
        assert_eq!(o.ab.as_ref().unwrap().bands, Bands { change_pct: DEFAULT_CHANGE_PCT, same_pct: DEFAULT_SAME_PCT });
        let narrow = parse(&["c-epoll", "--baseline", "HEAD", "--same-band", "1%", "--change-band", "0.5"]).unwrap();
        assert_eq!(narrow.ab.unwrap().bands, Bands { change_pct: 0.5, same_pct: 1.0 });
        assert!(matches!(&o.ab.as_ref().unwrap().source, AbSource::Baseline(r) if r.rev == "HEAD" && r.commit.len() == 40));
        assert_eq!(o.record().ab.unwrap().baseline.as_deref(), Some("HEAD"));
        assert_eq!(parse(&["c-epoll", "--baseline", "HEAD", "--rounds", "8"]).unwrap().max_rounds, 16);
        let refused = |args: &[&str]| parse(args).unwrap_err().to_string();
        assert!(refused(&["c-epoll", "--baseline", "HEAD", "-c", "8,64"]).contains("an A/B run measures one configuration"));
        assert!(refused(&["c-epoll", "--baseline", "HEAD", "--scenario", "hello,echo"]).contains("one --scenario"));
        assert!(refused(&["c-epoll", "--baseline", "HEAD", "--max-rounds", "8"]).contains("at least 10"));
        assert!(refused(&["c-epoll", "--baseline", "no-such-rev-xyz"]).contains("no such commit"));
        assert!(refused(&["c-epoll", "--fail-on", "worse"]).contains("--fail-on applies to an A/B run"));
        assert!(refused(&["c-epoll", "--same-band", "2%"]).contains("apply to an A/B run"));
        assert!(refused(&["c-epoll", "--baseline", "HEAD", "--same-band", "0"]).contains("above 0"));
        assert!(refused(&["c-epoll", "--baseline", "HEAD", "--target-ci", "1%"]).contains("stops when its verdict is decided"));
        assert!(refused(&["--ab", "/nonexistent-a", "/nonexistent-b"]).contains("A's folder /nonexistent-a holds no contestant.toml"));
        assert!(BenchArgs::parse(&["--baseline", "HEAD", "--ab", "a", "b"]).is_err(), "one or the other");
        assert!(BenchArgs::parse(&["--baseline", "HEAD", "--fail-on", "better"]).is_err());
    }
}
