//! Exporters: run.json, summary.md, summary.csv, report.html and, for an A/B run, pairs.csv, each behind one small trait that turns the
//! result model into bytes. They only read the model; the files are written whole (temp file, then rename), so a
//! reader never sees half a file and an interrupted run keeps the last complete one.

mod answer;
pub mod csv;
pub mod format;
pub mod hosts;
pub mod html;
mod html_answer;
mod html_latency;
mod html_pairs;
mod html_profiles;
pub mod html_page;
mod html_rows;
mod html_throughput;
mod html_timeline;
pub mod json;
mod machine;
pub mod markdown;
pub mod pairs;
pub mod pairs_csv;
mod profiles;
pub mod steadiness;
pub mod svg;
pub mod table;

use std::path::{Path, PathBuf};

use crate::model::ranks::{self, Places};
use crate::model::RunResult;

/// Turns a run into one file's bytes.
pub trait Exporter {
    /// The file name inside the run folder.
    fn file_name(&self) -> &'static str;
    /// Whether the run has this file (pairs.csv: A/B runs only).
    fn applies(&self, _run: &RunResult) -> bool {
        true
    }
    /// The file, from the run and the places of its measurements (`model::ranks::places`, by index in
    /// `run.measurements`): a save ranks the run once for all its files.
    fn serialize_ranked(&self, run: &RunResult, places: &[Places]) -> anyhow::Result<Vec<u8>>;
    /// The file of a run whose folder is `dir` (report.html draws the profiles' stacks kept there).
    fn serialize_in(&self, run: &RunResult, places: &[Places], _dir: &Path) -> anyhow::Result<Vec<u8>> {
        self.serialize_ranked(run, places)
    }
    /// The file on its own.
    fn serialize(&self, run: &RunResult) -> anyhow::Result<Vec<u8>> {
        self.serialize_ranked(run, &ranks::places(run))
    }
}

/// Every exporter, run.json first.
pub fn exporters() -> Vec<Box<dyn Exporter>> {
    vec![Box::new(json::Json), Box::new(markdown::Markdown), Box::new(csv::Csv), Box::new(html::Html), Box::new(pairs_csv::PairsCsv)]
}

/// Writes every export into `dir`; returns the paths written.
pub fn write_all(run: &RunResult, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let places = ranks::places(run);
    exporters().iter().filter(|e| e.applies(run)).map(|e| write_atomically(&dir.join(e.file_name()), &e.serialize_in(run, &places, dir)?)).collect()
}

fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<PathBuf> {
    use anyhow::Context as _;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    std::fs::write(&tmp, bytes).with_context(|| format!("cannot write '{}'", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot rename '{}' to '{}'", tmp.display(), path.display()))?;
    Ok(path.to_path_buf())
}

/// Reads a run back from its run.json, with the machine model refitted from its rounds
/// (`model::machine_model`), so that a run stored before the model reads as a new one.
pub fn load(run_dir: &Path) -> anyhow::Result<RunResult> {
    use anyhow::Context as _;
    let path = run_dir.join(json::FILE_NAME);
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read '{}'; give the folder of a run (results/<run-id>)", path.display()))?;
    let mut run: RunResult = serde_json::from_str(&text).with_context(|| format!("'{}' is not a serverbench run.json", path.display()))?;
    anyhow::ensure!(
        run.schema == crate::model::SCHEMA,
        "'{}' has schema {}, this serverbench reads schema {}",
        path.display(),
        run.schema,
        crate::model::SCHEMA
    );
    crate::model::machine_model::refit(&mut run);
    Ok(run)
}
