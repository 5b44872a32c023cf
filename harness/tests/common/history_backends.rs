//! The two databases a history test runs against: an SQLite file in a temporary folder, or a database of
//! its own on the PostgreSQL server the tests start (`postgres`). A test asks for one and reads what the
//! history wrote through the same SQL on either.

use std::path::PathBuf;

use serverbench::history::Location;

use super::postgres::{database_or_skip, Database};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A history for one test; its file or database goes with it.
pub struct TestHistory {
    pub location: Location,
    held: Held,
}

enum Held {
    File(tempfile::TempDir, PathBuf),
    Database(Database),
}

impl TestHistory {
    /// A fresh history of `backend` for `test`; None when the test is skipped (PostgreSQL cannot start).
    pub fn new(backend: Backend, test: &str) -> Option<TestHistory> {
        match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().unwrap();
                let path = dir.path().join("history.sqlite");
                Some(TestHistory { location: Location::File(path.clone()), held: Held::File(dir, path) })
            }
            Backend::Postgres => {
                let database = database_or_skip(test)?;
                Some(TestHistory { location: Location::Postgres(database.url()), held: Held::Database(database) })
            }
        }
    }

    /// The history as `--db` takes it.
    pub fn setting(&self) -> String {
        match &self.held {
            Held::File(_, path) => path.display().to_string(),
            Held::Database(database) => database.url(),
        }
    }

    /// The one integer `sql` selects.
    pub fn count(&self, sql: &str) -> i64 {
        match &self.held {
            Held::File(_, path) => rusqlite::Connection::open(path).unwrap().query_row(sql, [], |r| r.get(0)).unwrap(),
            Held::Database(database) => database.client().query_one(sql, &[]).unwrap().get(0),
        }
    }

    pub fn execute(&self, sql: &str) {
        match &self.held {
            Held::File(_, path) => {
                rusqlite::Connection::open(path).unwrap().execute_batch(sql).unwrap();
            }
            Held::Database(database) => database.client().batch_execute(sql).unwrap(),
        }
    }

    /// Whether the history holds a table of this name.
    pub fn has_table(&self, table: &str) -> bool {
        let sql = match &self.held {
            Held::File(..) => format!("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = '{table}'"),
            Held::Database(_) => format!("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = '{table}'"),
        };
        self.count(&sql) == 1
    }
}
