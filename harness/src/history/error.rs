//! What can go wrong with a history, in the words a person reads: which history (a file, or a PostgreSQL
//! database named without its password), and what the database said.

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("the history is off; name one with --db PATH or postgres://...")]
    Off,
    #[error("cannot open the history '{place}': {source}")]
    Open { place: String, source: DatabaseError },
    #[error("the history '{place}' is at schema version {found}, newer than this serverbench's {known}; use a newer serverbench or another history")]
    Newer { place: String, found: u32, known: u32 },
    #[error("cannot bring the history '{place}' to schema version {version}: {source}")]
    Migrate { place: String, version: u32, source: DatabaseError },
    #[error("cannot record run {run_id} in the history '{place}': {source}")]
    Write { place: String, run_id: String, source: DatabaseError },
    #[error("cannot record a bisection step in the history '{place}': {source}")]
    WriteStep { place: String, source: DatabaseError },
    #[error("cannot read the history '{place}': {source}")]
    Read { place: String, source: DatabaseError },
}

/// What the database itself said.
#[derive(Debug, thiserror::Error)]
pub enum DatabaseError {
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    #[error(transparent)]
    Postgres(#[from] postgres::Error),
}
