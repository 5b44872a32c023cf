//! `serverbench history import DIR...`: the runs of run folders (a folder holding the run file) and of
//! results folders (a folder whose folders hold it), each recorded as a benchmark records it.

use std::path::{Path, PathBuf};

use super::{History, HistoryError};
use crate::model::RunResult;

/// What an import did.
#[derive(Debug, Default)]
pub struct Imported {
    /// The ids of the runs recorded, in the order read.
    pub recorded: Vec<String>,
    /// Each folder that could not be read, with why.
    pub unreadable: Vec<(PathBuf, String)>,
}

/// The run folders of `dirs`: each that holds `run_file` itself, else its folders that hold one; a
/// folder with neither is kept as it is, for the reader to say why it is not a run.
pub fn run_folders(dirs: &[PathBuf], run_file: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for dir in dirs {
        if dir.join(run_file).is_file() {
            found.push(dir.clone());
            continue;
        }
        let mut inside: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|entries| entries.flatten().map(|e| e.path()).filter(|p| p.join(run_file).is_file()).collect())
            .unwrap_or_default();
        inside.sort();
        if inside.is_empty() {
            found.push(dir.clone());
        }
        found.extend(inside);
    }
    found
}

/// Reads each folder with `read` and records its run. A folder that cannot be read is listed and
/// skipped; a history that cannot be written ends the import.
pub fn import(history: &mut History, folders: &[PathBuf], read: &dyn Fn(&Path) -> anyhow::Result<RunResult>) -> Result<Imported, HistoryError> {
    let mut imported = Imported::default();
    for folder in folders {
        match read(folder) {
            Ok(run) => {
                history.record(&run)?;
                imported.recorded.push(run.run_id);
            }
            Err(e) => imported.unreadable.push((folder.clone(), format!("{e:#}"))),
        }
    }
    Ok(imported)
}
