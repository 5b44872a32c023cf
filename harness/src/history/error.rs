//! What can go wrong with a history, in the words a person reads: which file, and what the database said.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("cannot open the history '{}': {source}", path.display())]
    Open { path: PathBuf, source: rusqlite::Error },
    #[error("the history '{}' is at schema version {found}, newer than this serverbench's {known}; use a newer serverbench or another file", path.display())]
    Newer { path: PathBuf, found: u32, known: u32 },
    #[error("cannot bring the history '{}' to schema version {version}: {source}", path.display())]
    Migrate { path: PathBuf, version: u32, source: rusqlite::Error },
    #[error("cannot record run {run_id} in the history '{}': {source}", path.display())]
    Write { path: PathBuf, run_id: String, source: rusqlite::Error },
    #[error("cannot read the history '{}': {source}", path.display())]
    Read { path: PathBuf, source: rusqlite::Error },
}
