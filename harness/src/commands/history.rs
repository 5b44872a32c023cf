//! `serverbench history`: each figure over the recorded runs with its change points, as text or JSON, and
//! its gate; `serverbench history import DIR...`: runs recorded from their folders.

use anyhow::Context as _;

use crate::cli::history::{DbArg, HistoryAction, HistoryArgs, ImportArgs, ShowArgs};
use crate::compare::Regressed;
use crate::history::series::{self, Cause, Series};
use crate::history::{import, History, Location, ENV_VAR};
use crate::model::verdict::Metric;
use crate::report::format;
use crate::report::table::{Align, Table};

pub fn run(args: HistoryArgs) -> anyhow::Result<()> {
    match args.action {
        Some(HistoryAction::Import(a)) => import_runs(a),
        None => show(args.show),
    }
}

/// `--db` (a file or a PostgreSQL URL), else where a benchmark of the repository's results folder records.
fn location(db: &DbArg) -> anyhow::Result<Location> {
    let results = super::repo_root().join("results");
    let location = match &db.db {
        Some(setting) => Location::from_setting(Some(setting.clone()), &results),
        None => Location::of(&results),
    };
    anyhow::ensure!(location != Location::Off, "the history is off ({ENV_VAR}=off); name one with --db PATH or --db postgres://...");
    Ok(location)
}

fn import_runs(args: ImportArgs) -> anyhow::Result<()> {
    let location = location(&args.db)?;
    let mut history = History::open(&location)?;
    let folders = import::run_folders(&args.dirs, crate::report::json::FILE_NAME);
    let imported = import::import(&mut history, &folders, &crate::report::load)?;
    for (folder, why) in &imported.unreadable {
        eprintln!("serverbench: could not read {}: {why}", folder.display());
    }
    println!("imported {} run(s) into {}", imported.recorded.len(), location.place());
    anyhow::ensure!(!imported.recorded.is_empty(), "no run could be read from {} folder(s)", folders.len());
    Ok(())
}

fn show(args: ShowArgs) -> anyhow::Result<()> {
    let location = location(&args.db)?;
    if let Location::File(path) = &location {
        anyhow::ensure!(path.is_file(), "no history at {}; a benchmark records one, or `serverbench history import DIR` does", path.display());
    }
    let settings = args.settings();
    anyhow::ensure!(settings.max_p > 0.0 && settings.max_p < 1.0, "--max-p must be between 0 and 1, e.g. 0.001");
    anyhow::ensure!(settings.min_segment >= 2, "--min-segment must be at least 2: a side of one run has no spread to test");
    let mut history = History::open(&location)?;
    let mut all = series::group(history.figures(args.metric)?);
    series::analyse(&mut all, settings);
    let shown: Vec<&Series> = all.iter().filter(|s| args.contestant.as_ref().is_none_or(|c| *c == s.contestant)).collect();
    if args.json {
        let json = serde_json::json!({"history": location.place(), "metric": args.metric.flag(), "max_p": settings.max_p, "min_segment": settings.min_segment, "series": shown});
        println!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        print!("{}", text(&shown, args.metric));
    }
    if let Some(out) = &args.html {
        std::fs::write(out, super::history_page::render(&shown, args.metric)).with_context(|| format!("cannot write '{}'", out.display()))?;
        eprintln!("serverbench: wrote {}", out.display());
    }
    if args.fail_on.is_none() {
        return Ok(());
    }
    let list: Vec<String> = shown
        .iter()
        .flat_map(|s| s.recent_own_changes(settings.min_segment).map(move |c| (s, c)))
        .map(|(s, c)| format!("{} · {}: {} ×{:.3} at run {}", s.contestant, s.configuration.label(), args.metric.name(), c.ratio, c.run_id))
        .collect();
    if list.is_empty() {
        return Ok(());
    }
    Err(Regressed { spec: "change".into(), list }.into())
}

/// Each series as a table of its runs, then its change points.
fn text(shown: &[&Series], metric: Metric) -> String {
    if shown.is_empty() {
        return "The history holds no run of these series.\n".into();
    }
    let figure = |v: f64| match metric {
        Metric::RequestsPerS => format::int(v),
        Metric::P99 => format!("{} ms", format::ms(v)),
        Metric::CpuPerRequest => format!("{} µs", format::one(v)),
    };
    let mut out = String::new();
    for s in shown {
        let control = if s.control { " (control)" } else { "" };
        out.push_str(&format!("## {}{control} · {} · {}\n\n", s.contestant, s.configuration.label(), metric.name()));
        let mut t = Table::new(&[("Run", Align::Left), ("Time", Align::Left), ("Commit", Align::Left), ("Median", Align::Right), ("95% interval", Align::Right), ("Adjusted", Align::Right), ("Change", Align::Left)]);
        for (i, p) in s.points.iter().enumerate() {
            let commit = match (&p.commit, p.dirty) {
                (Some(c), Some(true)) => format!("{} (dirty)", short(c)),
                (Some(c), _) => short(c).to_string(),
                (None, _) => "not recorded".into(),
            };
            let change = s.change_points.iter().find(|c| c.index == i).map(|c| format!("×{:.3} {}", c.ratio, cause(c.cause))).unwrap_or_default();
            let interval = p.ci95.map(|(l, h)| format!("{}–{}", figure(l), figure(h))).unwrap_or_else(|| "-".into());
            t.row(vec![p.run_id.clone(), p.started_utc.clone(), commit, figure(p.median), interval, p.median_adjusted.map(figure).unwrap_or_else(|| "-".into()), change]);
        }
        out.push_str(&t.markdown());
        out.push('\n');
        for c in &s.change_points {
            out.push_str(&format!(
                "- change at run {}: ×{:.3} (95% interval {:.3}–{:.3}), p {:.2e}, {}\n",
                c.run_id, c.ratio, c.ratio_ci95.0, c.ratio_ci95.1, c.p, cause(c.cause)
            ));
        }
        if s.change_points.is_empty() {
            out.push_str("- no change point\n");
        }
        out.push('\n');
    }
    out
}

fn cause(c: Cause) -> &'static str {
    match c {
        Cause::Machine => "machine",
        Cause::Server => "the server's own",
    }
}

/// A commit's short form, as git prints it.
fn short(commit: &str) -> &str {
    commit.get(..7).unwrap_or(commit)
}
