//! The history database's tables (docs/history.md) as SQL text, in versioned migrations: a store applies
//! those newer than its `schema_version` in order, so a file written by an older serverbench is brought up
//! to date and one of a newer version is refused. A migration once released is never edited, only
//! followed by another.

/// One step of the schema: the statements that take a file from `version - 1` to `version`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migration {
    pub version: u32,
    pub sql: &'static str,
}

/// The table that holds the version a file is at, one row.
pub const VERSION_TABLE: &str = "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)";

/// Every migration, oldest first; the last one's version is the schema this serverbench writes.
pub const MIGRATIONS: &[Migration] = &[Migration { version: 1, sql: VERSION_1 }];

/// The version a store brings its file to.
pub fn current_version() -> u32 {
    MIGRATIONS.last().map_or(0, |m| m.version)
}

/// Runs, their configurations and each configuration's figures. A run's rows are replaced as a whole
/// whenever it is recorded again (its `save` after every pass, or an import).
const VERSION_1: &str = "
CREATE TABLE runs (
    run_id TEXT PRIMARY KEY,
    started_utc TEXT NOT NULL,
    finished_utc TEXT,
    -- catalog (the contestants of a catalog) or ab (two versions of one, bench --baseline / --ab)
    kind TEXT NOT NULL CHECK (kind IN ('catalog', 'ab')),
    command_line TEXT NOT NULL,
    -- the catalog's commit and whether its tree differed from it; NULL where the run did not record them
    catalog_commit TEXT,
    catalog_dirty INTEGER,
    interrupted INTEGER NOT NULL,
    -- the median cross-CPU rate over the run's rounds (round trips per ms), the machine's regime
    cross_cpu_per_ms REAL,
    cpu_model TEXT NOT NULL,
    cores INTEGER NOT NULL,
    kernel TEXT NOT NULL,
    memory_bytes INTEGER NOT NULL,
    serverbench_version TEXT NOT NULL
);
CREATE TABLE measurements (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    contestant TEXT NOT NULL,
    -- the run's control (harness/control), measured to tell the machine's change from a server's
    control INTEGER NOT NULL,
    scenario TEXT NOT NULL,
    mode TEXT NOT NULL,
    -- the load as the reports name it: throughput, rate 20000/s, throughput, 2 workers
    load TEXT NOT NULL,
    connections INTEGER NOT NULL,
    pipeline INTEGER NOT NULL,
    -- the load's tool: builtin, wrk, h2load, hey or ab
    tool TEXT NOT NULL,
    status TEXT NOT NULL
);
CREATE INDEX measurements_by_run ON measurements (run_id);
CREATE INDEX measurements_by_configuration ON measurements (scenario, load, connections, pipeline, tool, contestant);
CREATE TABLE figures (
    measurement_id INTEGER NOT NULL REFERENCES measurements (id) ON DELETE CASCADE,
    -- requests_per_s, p99 (ns) or cpu_per_request (server CPU us), as run.json's machine_model names them
    metric TEXT NOT NULL,
    -- over the rounds that count, as measured: the median and its 95% interval (NULL below 6 rounds)
    median REAL NOT NULL,
    ci_low REAL,
    ci_high REAL,
    -- the median at the machine model's reference state; NULL where the model adjusted no round
    median_adjusted REAL,
    rounds INTEGER NOT NULL,
    PRIMARY KEY (measurement_id, metric)
);
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_count_up_from_one_without_gaps() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.version as usize, i + 1);
            assert!(!m.sql.trim().is_empty());
        }
        assert_eq!(current_version(), MIGRATIONS.len() as u32);
    }
}
