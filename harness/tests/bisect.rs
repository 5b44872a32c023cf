//! Bisection to the commit: on a git repository made here (a catalog of `reference`, the run's control, and
//! of another contestant, with eight commits after the good one, of which one adds a busy-wait per request
//! of about 5%), the commits that change `reference`'s inputs are walked by A/B steps. On the fake machine
//! of tests/ab.rs, with each step's B/A set by whether a revision has the busy-wait, it names that commit in
//! every one of 20 tries, in at most five steps; a range without the change ends at its first step. Then
//! once end to end on this machine, with a busy-wait large enough to read in a few pairs.

mod common;

use std::path::{Path, PathBuf};

use common::fake_vm::{FakeVm, ROUND_NOISE};
use common::reference_repo::{control_source, git, reference_manifest, repo_at};
use common::{serverbench, text};
use serverbench::bisect::{self, Bisection, Commit, Outcome, Reading};
use serverbench::model::ab::Bands;
use serverbench::model::verdict::Metric;
use serverbench::run::ab::{run_pairs, PairPlan};
use serverbench::run::options::{Rounds, DEFAULT_MAX_PAIRS};

/// The busy-wait per request that makes `reference` about 5% slower on the 2-CPU VM (its hello costs about
/// 6 µs of server CPU).
const SLOW: &str = "env = { SB_CONTROL_SPIN_NS = \"300\" }";

/// A repository with `reference` committed (the good end), then eight commits: six change `reference`'s
/// inputs (its source, its manifest, a file of its language folder), two do not (the README, another
/// contestant's folder). The fifth adds `slow` to the manifest. Its folder, the good commit and the commit
/// that slows it.
fn repository(tmp: &Path, slow: &str) -> (PathBuf, String, String) {
    let (repo, good) = repo_at(tmp, &control_source(), &reference_manifest(""));
    let other = repo.join("c/other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("contestant.toml"), reference_manifest("").replace("\"reference\"", "\"other\"")).unwrap();
    std::fs::write(other.join("control.c"), control_source()).unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "another contestant"]);
    let source = repo.join("c/reference/control.c");
    let manifest = repo.join("c/reference/contestant.toml");
    let mut culprit = String::new();
    for (i, what) in ["source", "readme", "shared", "source", "slow", "other", "source", "manifest"].iter().enumerate() {
        match *what {
            "source" => std::fs::write(&source, format!("{}\n/* change {i} */\n", std::fs::read_to_string(&source).unwrap())).unwrap(),
            "readme" => std::fs::write(repo.join("README.md"), format!("change {i}\n")).unwrap(),
            "shared" => std::fs::write(repo.join("c/common.mk"), format!("# change {i}\n")).unwrap(),
            "slow" => std::fs::write(&manifest, reference_manifest(slow)).unwrap(),
            "other" => std::fs::write(other.join("control.c"), format!("/* change {i} */\n{}", control_source())).unwrap(),
            _ => std::fs::write(&manifest, format!("{}# change {i}\n", std::fs::read_to_string(&manifest).unwrap())).unwrap(),
        }
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-q", "-m", &format!("{what} {i}")]);
        if *what == "slow" {
            culprit = git(&repo, &["rev-parse", "HEAD"]);
        }
    }
    (repo, good, culprit)
}

/// The commits between the ends for `reference`, with its inputs as `bisect` takes them: the language
/// folder `c`, less the other contestant's folder.
fn between(repo: &Path, good: &str, bad: &str) -> bisect::Between {
    bisect::between(repo, good, bad, &[Path::new("c")], &[Path::new("c/other")]).unwrap()
}

/// A bisection on the fake machine (seed `seed`): each step's B/A is 0.95 where B has the busy-wait and A
/// does not, 1 where both or neither do.
fn on_the_fake_machine(repo: &Path, b: &bisect::Between, seed: u64) -> Bisection {
    with_slowdown(repo, b, seed, 0.95)
}

/// As `on_the_fake_machine`, with B/A `slowdown` where B has the busy-wait and A does not.
fn with_slowdown(repo: &Path, b: &bisect::Between, seed: u64, slowdown: f64) -> Bisection {
    let slow = |c: &Commit| git(repo, &["show", &format!("{}:c/reference/contestant.toml", c.hash)]).contains("SB_CONTROL_SPIN_NS");
    let mut step = 0;
    let mut judge = |a: &Commit, bc: &Commit, attempt: u32, bands: Option<Bands>| -> anyhow::Result<Reading> {
        let bands = bands.unwrap_or_default();
        step += 1;
        let factor = if slow(bc) == slow(a) { 1.0 } else if slow(bc) { slowdown } else { 1.0 / slowdown };
        let plan = PairPlan { rounds: Rounds::Auto { target_ci_pct: 3.0 }, max_pairs: DEFAULT_MAX_PAIRS * attempt, bands, decide: vec![Metric::RequestsPerS] };
        let out = run_pairs(&plan, &mut FakeVm::new(seed * 100 + step, factor, ROUND_NOISE))?;
        let e = out.estimate(Metric::RequestsPerS, bands);
        let ratio = e.ratio.map(|r| (r.ratio, r.ci95.map_or(f64::NAN, |c| c.0), r.ci95.map_or(f64::NAN, |c| c.1)));
        Ok(Reading::Judged { verdict: e.verdict, ratio, pairs: e.pairs, seconds: out.pairs.len() as f64 * 1.3 })
    };
    bisect::bisect(&b.good, &b.inputs, 2, &mut judge).unwrap()
}

#[test]
fn the_commits_that_change_a_contestants_inputs_are_walked_and_the_others_passed_over() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, good, _) = repository(tmp.path(), SLOW);
    let b = between(&repo, &good, "HEAD");
    let subjects = |cs: &[Commit]| cs.iter().map(|c| c.subject.clone()).collect::<Vec<_>>();
    assert_eq!(subjects(&b.inputs), ["source 0", "shared 2", "source 3", "slow 4", "source 6", "manifest 7"]);
    assert_eq!(subjects(&b.others), ["another contestant", "readme 1", "other 5"]);
    let refused = bisect::between(&repo, "HEAD", &good, &[Path::new("c")], &[]).unwrap_err().to_string();
    assert!(refused.contains("is not an ancestor of --bad"), "{refused}");
    let unknown = bisect::between(&repo, "no-such-rev", "HEAD", &[Path::new("c")], &[]).unwrap_err().to_string();
    assert!(unknown.contains("'no-such-rev' names no commit"), "{unknown}");
}

#[test]
fn the_commit_that_slows_the_server_is_named_in_every_try_on_the_fake_machine() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, good, culprit) = repository(tmp.path(), SLOW);
    let b = between(&repo, &good, "HEAD");
    for seed in 1..=20 {
        let found = on_the_fake_machine(&repo, &b, seed);
        let lines: Vec<String> = found.steps.iter().map(|s| serverbench::commands::bisect::step_line(s, Metric::RequestsPerS)).collect();
        eprintln!("try {seed}: {}\n  {}", serverbench::commands::bisect::conclusion("reference", Metric::RequestsPerS, &found, 0.0), lines.join("\n  "));
        assert!(matches!(&found.outcome, Outcome::Culprit(c) if c.hash == culprit), "try {seed}: {:?}\n{}", found.outcome, lines.join("\n"));
        assert!(found.steps.len() <= 5, "try {seed}: {} steps", found.steps.len());
    }
}

/// A change of 3%, as this VM read the busy-wait on some days: the culprit is named in 18 of 20 tries or
/// more, and another commit in at most one (each step's interval is a 95% one: a false call among four or
/// five steps is about that rare).
#[test]
fn a_small_change_is_named_and_seldom_pinned_on_another_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, good, culprit) = repository(tmp.path(), SLOW);
    let b = between(&repo, &good, "HEAD");
    let outcomes: Vec<Outcome> = (1..=20).map(|seed| with_slowdown(&repo, &b, 2000 + seed, 0.97).outcome).collect();
    let wrong: Vec<&Outcome> = outcomes.iter().filter(|o| matches!(o, Outcome::Culprit(c) if c.hash != culprit)).collect();
    assert!(wrong.len() <= 1, "{wrong:?}");
    let named = outcomes.iter().filter(|o| matches!(o, Outcome::Culprit(c) if c.hash == culprit)).count();
    assert!(named >= 18, "{outcomes:?}");
    eprintln!("a 3% change: the culprit named in {named} of 20 tries; the others: {:?}", outcomes.iter().filter(|o| !matches!(o, Outcome::Culprit(_))).collect::<Vec<_>>());
}

#[test]
fn a_range_that_does_not_change_the_figure_ends_at_its_first_step() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, _, culprit) = repository(tmp.path(), SLOW);
    // From the slow commit on, every revision has the busy-wait: nothing between the ends changes req/s.
    let b = between(&repo, &culprit, "HEAD");
    let outcomes: Vec<(Outcome, usize)> = (1..=20).map(|seed| {
        let found = on_the_fake_machine(&repo, &b, 1000 + seed);
        (found.outcome, found.steps.len())
    }).collect();
    // The first step is the ends' A/B run, asked again with more pairs where it read `unclear`.
    let none = outcomes.iter().filter(|(o, steps)| *o == Outcome::NoDifference && *steps <= 2).count();
    assert!(none >= 18, "{outcomes:?}");
    assert!(outcomes.iter().all(|(o, _)| matches!(o, Outcome::NoDifference | Outcome::EndsUnclear)), "no culprit: {outcomes:?}");
}

/// End to end on this machine: the ends, then the one commit between them that changes `reference`'s
/// inputs, a busy-wait of 20 µs per request (several times its cost, read in a few pairs); the README's
/// commit is passed over. The worktrees are gone at the end.
#[test]
fn bisect_names_the_commit_end_to_end_and_removes_its_worktrees() {
    let _alone = common::one_bench_at_a_time();
    let tmp = tempfile::tempdir().unwrap();
    let (repo, good) = repo_at(tmp.path(), &control_source(), &reference_manifest(""));
    std::fs::write(repo.join("README.md"), "a README\n").unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "a README"]);
    std::fs::write(repo.join("c/reference/contestant.toml"), reference_manifest("env = { SB_CONTROL_SPIN_NS = \"20000\" }")).unwrap();
    git(&repo, &["commit", "-q", "-am", "spin 20 us per request"]);
    let culprit = git(&repo, &["rev-parse", "HEAD"]);
    let out = tmp.path().join("results");
    // A step that steal disturbed is asked again (up to three times), once a stretch of steal has passed.
    let bisect = |more: &[&str]| {
        common::steal::wait_for_quiet(std::time::Duration::from_secs(120));
        serverbench()
            .args(["bisect", "reference", "--good", &good, "--bad", "HEAD", "--attempts", "3", "--contestants", repo.to_str().unwrap(), "-o", out.to_str().unwrap()])
            .args(["--", "-d", "200ms", "--warmup", "0", "--syscall-counts", "off"])
            .args(more)
            .output()
            .unwrap()
    };
    let o = bisect(&[]);
    let (stdout, stderr) = (text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let last = stdout.lines().last().unwrap_or_default();
    assert!(last.starts_with(&format!("culprit: {culprit} spin 20 us per request: req/s B/A ")) && last.contains(" worse; "), "{last}\n{stderr}");
    let list = git(&repo, &["worktree", "list", "--porcelain"]);
    assert_eq!(list.lines().filter(|l| l.starts_with("worktree ")).count(), 1, "{list}");
    assert!(!out.join(".bisect-worktrees").exists(), "the worktrees' folder is removed");
    // The step's A/B run is a run folder of its own.
    let runs = || std::fs::read_dir(&out).unwrap().flatten().filter(|e| e.path().join("run.json").is_file()).count();
    let first = runs();
    assert!((1..=3).contains(&first), "{first} A/B runs");
    // Asked again, the bisection reads its step from the history (as one interrupted resumes): the same
    // culprit and effect, and no A/B run.
    let again = bisect(&[]);
    let (stdout_again, stderr_again) = (text(&again.stdout), text(&again.stderr));
    assert!(again.status.success(), "stdout:\n{stdout_again}\nstderr:\n{stderr_again}");
    let effect = |line: &str| line.split("; ").next().unwrap_or_default().to_string();
    assert_eq!(effect(stdout_again.lines().last().unwrap_or_default()), effect(last), "{stderr_again}");
    assert!(stderr_again.contains("(from the history, run "), "{stderr_again}");
    assert_eq!(runs(), first, "no A/B run the second time");
    // Other bench options are another bisection: its steps are not those. A worktree's folder left by a
    // bisection that was killed is made again.
    let stale = out.join(".bisect-worktrees").join(format!("{}-{}", &good[..10], &culprit[..10])).join(&good[..10]).join("checkout");
    std::fs::create_dir_all(&stale).unwrap();
    std::fs::write(stale.join("left-over"), "").unwrap();
    let other = bisect(&["-c", "8"]);
    assert!(other.status.success() && !text(&other.stderr).contains("from the history"), "{}", text(&other.stderr));
    assert!(runs() > first);
    assert!(!out.join(".bisect-worktrees").exists(), "the worktrees' folder is removed");
}
