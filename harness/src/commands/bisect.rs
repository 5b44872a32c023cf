//! `serverbench bisect NAME --good REV --bad REV`: the commits between the ends that change NAME's inputs
//! (`bisect::between`), searched by A/B steps (`bisect::bisect`). Each step builds both revisions in
//! worktrees of their own under `<out>/.bisect-worktrees/` (removed at the end, interrupted or not) and runs
//! `bench --ab` on the contestant's two folders, recorded like any run, in the history too. Each step is
//! printed as it ends and recorded in the history (`bisect_steps`); a bisection of the same contestant,
//! figure and bench options reads the steps recorded there instead of running them again, so that an
//! interrupted one resumes where it stopped. Then the culprit, or the range it could narrow to, and the
//! total time.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context as _;

use crate::bisect::{self, Between, Bisection, Commit, Outcome, Reading, Step};
use crate::catalog::build::BuildInputs;
use crate::catalog::Catalog;
use crate::cli::bench::BenchArgs;
use crate::cli::bisect::BisectArgs;
use crate::history::{Recorder, StepRead, StoredStep};
use crate::model::ab::Bands;
use crate::model::verdict::Metric;
use crate::model::RunResult;
use crate::os::git::git;
use crate::run::ab::sides::Worktree;
use crate::ui::Ui;

use super::{interrupt_flag, repo_root, save_run, Interrupted};

pub fn run(args: BisectArgs, ui: &Ui) -> anyhow::Result<()> {
    let started = Instant::now();
    let root = repo_root();
    let catalog_root = args.contestants.clone().unwrap_or_else(|| root.join("contestants"));
    let catalog = Catalog::discover(&catalog_root)?;
    let contestant = catalog
        .contestants
        .iter()
        .find(|c| c.name == args.name)
        .with_context(|| format!("no contestant named '{}' in {}; see `serverbench list`", args.name, catalog_root.display()))?;
    let repo = git_top(&catalog.root)?;
    let relative = |p: &Path| -> anyhow::Result<PathBuf> {
        let p = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        Ok(p.strip_prefix(&repo).with_context(|| format!("{} is outside the git repository {}", p.display(), repo.display()))?.to_path_buf())
    };
    let dir = relative(&contestant.dir)?;
    let inputs = BuildInputs::of(contestant, &catalog);
    let top = relative(&inputs.top)?;
    let others = inputs.others.iter().map(|d| relative(d)).collect::<anyhow::Result<Vec<_>>>()?;
    let others: Vec<&Path> = others.iter().map(PathBuf::as_path).collect();
    let between = bisect::between(&repo, &args.good, &args.bad, &[top.as_path()], &others)?;
    say_range(ui, &args.name, &between);

    let out = args.out.clone().unwrap_or_else(|| root.join("results"));
    let worktrees = Worktrees { repo: repo.clone(), area: out.join(".bisect-worktrees").join(format!("{}-{}", between.good.short(), between.bad.short())), made: Default::default() };
    let stop = interrupt_flag()?;
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut history = Recorder::new(crate::history::Location::of(&out));
    let options = args.bench.join(" ");
    let recorded = history.steps(&args.name, args.metric, &options).unwrap_or_else(|e| {
        ui.warn(&format!("warning: {e}; the bisection starts without the steps recorded there"));
        Vec::new()
    });
    let mut judge = |a: &Commit, b: &Commit, attempt: u32, bands: Option<Bands>| -> anyhow::Result<Reading> {
        anyhow::ensure!(!stop.load(std::sync::atomic::Ordering::Relaxed), Interrupted(out.clone()));
        if let Some(step) = recorded.iter().rev().find(|s| s.a_commit == a.hash && s.b_commit == b.hash && s.attempt == attempt) {
            let reading = reading_of(&step.read);
            let run = step.run_id.as_deref().map_or(String::new(), |id| format!(", run {id}"));
            ui.line(&format!("{} (from the history{run})", step_line(&Step { a: a.clone(), b: b.clone(), attempt, reading: reading.clone() }, args.metric)));
            return Ok(reading);
        }
        let (dir_a, dir_b) = (worktrees.at(a)?.join(&dir), worktrees.at(b)?.join(&dir));
        let t = Instant::now();
        let (reading, run_id) = match step_run(&args, &root, &out, (&dir_a, &dir_b), (attempt, bands), &stop, &mut history, ui) {
            Ok(run) if run.interrupted => anyhow::bail!(Interrupted(out.clone())),
            Ok(run) => (reading(&run, args.metric, t.elapsed().as_secs_f64()), Some(run.run_id)),
            // The ends' step: either end that cannot be built or run leaves nothing to bisect. Later, A (the
            // good end) has run before, so a failure is B's: that commit is skipped.
            Err(e) if b.hash == between.bad.hash => return Err(e.context("the A/B run of the two ends")),
            Err(e) => (Reading::Broken(format!("{e:#}")), None),
        };
        let step = Step { a: a.clone(), b: b.clone(), attempt, reading: reading.clone() };
        ui.line(&step_line(&step, args.metric));
        if let Some(warning) = history.record_step(&stored(&args.name, args.metric, &options, &step, run_id)) {
            ui.warn(&warning);
        }
        Ok(reading)
    };
    let found = bisect::bisect(&between.good, &between.inputs, args.attempts, &mut judge);
    drop(worktrees);
    let found = found?;
    println!("{}", conclusion(&args.name, args.metric, &found, started.elapsed().as_secs_f64()));
    Ok(())
}

/// One step's A/B run: `bench --ab A B` with the bisection's bench options, more pairs on a later attempt,
/// the search's bands where it gives them and the options name none, and pairs until the bisected figure
/// is decided.
#[allow(clippy::too_many_arguments)]
fn step_run(
    args: &BisectArgs,
    root: &Path,
    out: &Path,
    (a, b): (&Path, &Path),
    (attempt, bands): (u32, Option<Bands>),
    stop: &std::sync::Arc<std::sync::atomic::AtomicBool>,
    history: &mut Recorder,
    ui: &Ui,
) -> anyhow::Result<RunResult> {
    let bench = step_args(args, (a, b), out, (attempt, bands))?;
    let opts = bench.options(root, std::env::args().collect())?;
    let catalog = Catalog::discover(&opts.catalog_root)?;
    let (id, dir) = crate::run::create_run_dir(&opts.out_dir)?;
    let mut save = |r: &RunResult| save_run(r, &dir, history, ui);
    crate::run::bench(&opts, &catalog, &id, &dir, ui, stop, None, &mut save).with_context(|| format!("the A/B run in {}", dir.display()))
}

/// A step's `bench` arguments: `NAME --ab A B -o OUT` with the options after `--`, `attempt` times the
/// pairs, the search's bands where it gives them and the options name none, and pairs until the bisected
/// figure is decided (the A/B run's own rule waits for req/s) unless the options name the figures.
fn step_args(args: &BisectArgs, (a, b): (&Path, &Path), out: &Path, (attempt, bands): (u32, Option<Bands>)) -> anyhow::Result<BenchArgs> {
    let (a, b, out) = (a.display().to_string(), b.display().to_string(), out.display().to_string());
    // The contestant by name: a folder may hold variants of it (c-epoll's holds c-epoll-edge too).
    let mut words: Vec<&str> = vec![&args.name, "--ab", &a, &b, "-o", &out];
    words.extend(args.bench.iter().map(String::as_str));
    let mut bench = BenchArgs::parse(&words).map_err(|e| anyhow::anyhow!("the options after --: {e}"))?;
    let most = bench.max_rounds.unwrap_or(crate::run::options::DEFAULT_MAX_PAIRS);
    bench.max_rounds = Some(most * attempt);
    if let Some(bands) = bands.filter(|_| bench.ab.same_band.is_none() && bench.ab.change_band.is_none()) {
        (bench.ab.same_band, bench.ab.change_band) = (Some(bands.same_pct), Some(bands.change_pct));
    }
    if bench.ab.fail_on.is_none() {
        bench.ab.fail_on = Some(crate::compare::FailOn { unclear: false, metrics: vec![args.metric] });
    }
    Ok(bench)
}

/// The step's verdict on `metric`, with B/A and its interval, its pairs and seconds.
fn reading(run: &RunResult, metric: Metric, seconds: f64) -> Reading {
    let estimates = run.ab_estimates();
    let Some(e) = estimates.iter().find(|e| e.metric == metric) else {
        return Reading::Broken(format!("the A/B run measured no {}", metric.name()));
    };
    let ratio = e.ratio.map(|r| {
        let (lo, hi) = r.ci95.unwrap_or((f64::NAN, f64::NAN));
        (r.ratio, lo, hi)
    });
    Reading::Judged { verdict: e.verdict, ratio, pairs: e.pairs, seconds }
}

/// A step as the history keeps it.
fn stored(name: &str, metric: Metric, options: &str, step: &Step, run_id: Option<String>) -> StoredStep {
    let read = match &step.reading {
        Reading::Judged { verdict, ratio, pairs, seconds } => StepRead::Judged {
            verdict: *verdict,
            ratio: ratio.map(|r| r.0),
            ci95: ratio.map(|r| (r.1, r.2)).filter(|(lo, hi)| lo.is_finite() && hi.is_finite()),
            pairs: *pairs,
            seconds: *seconds,
        },
        Reading::Broken(why) => StepRead::Broken(why.clone()),
    };
    StoredStep {
        contestant: name.to_string(),
        metric,
        options: options.to_string(),
        a_commit: step.a.hash.clone(),
        b_commit: step.b.hash.clone(),
        attempt: step.attempt,
        run_id,
        read,
        recorded_utc: crate::run::environment::utc_timestamp(std::time::SystemTime::now()),
    }
}

/// The reading of a step the history keeps.
fn reading_of(read: &StepRead) -> Reading {
    match read {
        StepRead::Judged { verdict, ratio, ci95, pairs, seconds } => Reading::Judged {
            verdict: *verdict,
            ratio: ratio.map(|r| (r, ci95.map_or(f64::NAN, |c| c.0), ci95.map_or(f64::NAN, |c| c.1))),
            pairs: *pairs,
            seconds: *seconds,
        },
        StepRead::Broken(why) => Reading::Broken(why.clone()),
    }
}

fn say_range(ui: &Ui, name: &str, b: &Between) {
    ui.line(&format!(
        "bisecting {name} from {} ({}) to {} ({}): {} commit(s) change its inputs, {} do not (passed over)",
        b.good.short(),
        b.good.subject,
        b.bad.short(),
        b.bad.subject,
        b.inputs.len(),
        b.others.len()
    ));
}

/// "step 2: 1a2b3c4d5e (add x) against good 0f0f0f0f0f: req/s B/A 0.9512 [0.9401, 0.9630] worse, 24 pairs, 31 s".
pub fn step_line(s: &Step, metric: Metric) -> String {
    let what = match &s.reading {
        Reading::Judged { verdict, ratio, pairs, seconds } => {
            let ratio = ratio.map_or("no estimate".to_string(), |(r, lo, hi)| format!("B/A {r:.4} [{lo:.4}, {hi:.4}]"));
            format!("{} {ratio} {}, {pairs} pairs, {seconds:.0} s", metric.name(), verdict.word())
        }
        Reading::Broken(why) => format!("skipped: {why}"),
    };
    let attempt = if s.attempt > 1 { format!(" (attempt {})", s.attempt) } else { String::new() };
    format!("{} ({}) against {}{attempt}: {what}", s.b.short(), s.b.subject, s.a.short())
}

/// The end: the culprit with its effect, or the range, the steps and the total time.
pub fn conclusion(name: &str, metric: Metric, b: &Bisection, seconds: f64) -> String {
    let effect = |c: &Commit| {
        b.steps.iter().rev().find(|s| s.b == *c).map_or(String::new(), |s| match &s.reading {
            Reading::Judged { ratio: Some((r, lo, hi)), verdict, .. } => format!(": {} B/A {r:.4} [{lo:.4}, {hi:.4}] {}", metric.name(), verdict.word()),
            _ => String::new(),
        })
    };
    let skipped = if b.skipped.is_empty() {
        String::new()
    } else {
        format!("; skipped (could not be built or run): {}", b.skipped.iter().map(Commit::short).collect::<Vec<_>>().join(", "))
    };
    let what = match &b.outcome {
        Outcome::NoDifference => format!("no difference: the ends read the same on {} for {name}", metric.name()),
        Outcome::EndsUnclear => format!("the ends could not be told apart on {} for {name}: nothing to bisect", metric.name()),
        Outcome::Culprit(c) => format!("culprit: {} {}{}", c.hash, c.subject, effect(c)),
        Outcome::Range { after, upto } => format!("the culprit is after {} and at or before {} ({}); the commits between could not be judged", after.short(), upto.short(), upto.subject),
    };
    let m = seconds.round() as u64;
    format!("{what}{skipped}; {} step(s), {} min {:02} s", b.steps.len(), m / 60, m % 60)
}

/// The worktrees of the revisions a bisection builds, each made on first use (`run::ab::sides::Worktree`)
/// in a folder of its own under `area`, and removed with it.
struct Worktrees {
    repo: PathBuf,
    area: PathBuf,
    made: RefCell<Vec<(String, Worktree)>>,
}

impl Worktrees {
    /// The checkout of `c`'s commit.
    fn at(&self, c: &Commit) -> anyhow::Result<PathBuf> {
        let mut made = self.made.borrow_mut();
        if let Some((_, tree)) = made.iter().find(|(hash, _)| *hash == c.hash) {
            return Ok(tree.checkout.clone());
        }
        let folder = self.area.join(c.short());
        if folder.exists() {
            // Left by a bisection that was killed: its folder and git's record of it go first.
            let _ = std::fs::remove_dir_all(&folder);
            let _ = git(&self.repo, &["worktree", "prune"]);
        }
        let tree = Worktree::add(&self.repo, &folder, &c.hash)?;
        let checkout = tree.checkout.clone();
        made.push((c.hash.clone(), tree));
        Ok(checkout)
    }
}

impl Drop for Worktrees {
    /// Each worktree goes with its folder; then the bisection's folder, and `.bisect-worktrees` when empty.
    fn drop(&mut self) {
        self.made.get_mut().clear();
        let _ = std::fs::remove_dir(&self.area);
        let _ = self.area.parent().map(std::fs::remove_dir);
    }
}

fn git_top(dir: &Path) -> anyhow::Result<PathBuf> {
    let top = git(dir, &["rev-parse", "--show-toplevel"]).with_context(|| format!("{} is not in a git repository: bisect walks its commits", dir.display()))?;
    Ok(PathBuf::from(top).canonicalize()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bisecting(metric: Metric, bench: &[&str]) -> BisectArgs {
        let bench = bench.iter().map(|w| w.to_string()).collect();
        BisectArgs { name: "c-epoll".into(), good: "v1".into(), bad: "v2".into(), metric, attempts: 2, contestants: None, out: None, bench }
    }

    fn step(args: &BisectArgs, attempt: u32, bands: Option<Bands>) -> BenchArgs {
        step_args(args, (Path::new("/a"), Path::new("/b")), Path::new("/out"), (attempt, bands)).unwrap()
    }

    #[test]
    fn a_step_decides_the_bisected_figure_within_the_search_s_bands() {
        let args = bisecting(Metric::CpuPerRequest, &[]);
        let first = step(&args, 1, Some(Bands::one(3.0)));
        let fail_on = first.ab.fail_on.as_ref().expect("the step's pairs wait for the bisected figure");
        assert_eq!((fail_on.metrics.as_slice(), fail_on.unclear), ([Metric::CpuPerRequest].as_slice(), false));
        assert_eq!((first.ab.same_band, first.ab.change_band), (Some(3.0), Some(3.0)));
        assert_eq!(first.max_rounds, Some(crate::run::options::DEFAULT_MAX_PAIRS));
        assert_eq!(step(&args, 2, None).max_rounds, Some(2 * crate::run::options::DEFAULT_MAX_PAIRS), "a second attempt, twice the pairs");
        assert_eq!(step(&args, 1, None).ab.same_band, None, "the ends: the A/B run's own bands");
    }

    #[test]
    fn options_after_the_double_dash_are_kept() {
        let given = step(&bisecting(Metric::CpuPerRequest, &["--same-band", "5%", "--fail-on", "worse:rps", "--max-rounds", "10"]), 2, Some(Bands::one(3.0)));
        assert_eq!(given.ab.same_band, Some(5.0));
        assert_eq!(given.ab.change_band, None, "bands given are kept whole: the search's are not mixed in");
        assert_eq!(given.ab.fail_on.unwrap().metrics, [Metric::RequestsPerS]);
        assert_eq!(given.max_rounds, Some(20));
    }
}
