//! The history database's tables (docs/history.md) as SQL text, in versioned migrations: a store applies
//! those newer than its `schema_version` in order, so a history written by an older serverbench is brought
//! up to date and one of a newer version is refused. Each migration holds its text for SQLite and for
//! PostgreSQL side by side, the same tables and columns in each dialect's types. A migration once released
//! is never edited, only followed by another.

/// The two databases a history can be kept in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

/// One step of the schema: the statements that take a history from `version - 1` to `version`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migration {
    pub version: u32,
    /// SQLite's text: a column's type is its affinity, and `INTEGER PRIMARY KEY` is the row id.
    pub sqlite: &'static str,
    /// PostgreSQL's: `REAL` would be four bytes there and `INTEGER` too, so figures are `DOUBLE PRECISION`,
    /// counts `BIGINT`, flags `BOOLEAN`, and the measurement's id an identity column.
    pub postgres: &'static str,
}

impl Migration {
    pub fn sql(&self, dialect: Dialect) -> &'static str {
        match dialect {
            Dialect::Sqlite => self.sqlite,
            Dialect::Postgres => self.postgres,
        }
    }
}

/// The table that holds the version a history is at, one row (the same text in both dialects).
pub const VERSION_TABLE: &str = "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)";

/// Every migration, oldest first; the last one's version is the schema this serverbench writes.
pub const MIGRATIONS: &[Migration] = &[
    Migration { version: 1, sqlite: VERSION_1_SQLITE, postgres: VERSION_1_POSTGRES },
    Migration { version: 2, sqlite: VERSION_2_SQLITE, postgres: VERSION_2_POSTGRES },
];

/// The version a store brings its history to.
pub fn current_version() -> u32 {
    MIGRATIONS.last().map_or(0, |m| m.version)
}

/// Runs, their configurations and each configuration's figures. A run's rows are replaced as a whole
/// whenever it is recorded again (its `save` after every pass, or an import).
const VERSION_1_SQLITE: &str = "
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

/// Version 1 in PostgreSQL's types; the comments are SQLite's text's.
const VERSION_1_POSTGRES: &str = "
CREATE TABLE runs (
    run_id TEXT PRIMARY KEY,
    started_utc TEXT NOT NULL,
    finished_utc TEXT,
    kind TEXT NOT NULL CHECK (kind IN ('catalog', 'ab')),
    command_line TEXT NOT NULL,
    catalog_commit TEXT,
    catalog_dirty BOOLEAN,
    interrupted BOOLEAN NOT NULL,
    cross_cpu_per_ms DOUBLE PRECISION,
    cpu_model TEXT NOT NULL,
    cores BIGINT NOT NULL,
    kernel TEXT NOT NULL,
    memory_bytes BIGINT NOT NULL,
    serverbench_version TEXT NOT NULL
);
CREATE TABLE measurements (
    id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    contestant TEXT NOT NULL,
    control BOOLEAN NOT NULL,
    scenario TEXT NOT NULL,
    mode TEXT NOT NULL,
    load TEXT NOT NULL,
    connections BIGINT NOT NULL,
    pipeline BIGINT NOT NULL,
    tool TEXT NOT NULL,
    status TEXT NOT NULL
);
CREATE INDEX measurements_by_run ON measurements (run_id);
CREATE INDEX measurements_by_configuration ON measurements (scenario, load, connections, pipeline, tool, contestant);
CREATE TABLE figures (
    measurement_id BIGINT NOT NULL REFERENCES measurements (id) ON DELETE CASCADE,
    metric TEXT NOT NULL,
    median DOUBLE PRECISION NOT NULL,
    ci_low DOUBLE PRECISION,
    ci_high DOUBLE PRECISION,
    median_adjusted DOUBLE PRECISION,
    rounds BIGINT NOT NULL,
    PRIMARY KEY (measurement_id, metric)
);
";

/// The steps of bisections (`serverbench bisect`), so that an interrupted one resumes where it stopped:
/// one row per step, B against A the `attempt`-th time, for one contestant, figure and set of bench options.
const VERSION_2_SQLITE: &str = "
CREATE TABLE bisect_steps (
    contestant TEXT NOT NULL,
    -- requests_per_s, p99 or cpu_per_request, as figures.metric names them
    metric TEXT NOT NULL,
    -- the bench options after `--`, as given; a step is reused only under the same ones
    options TEXT NOT NULL,
    -- the full hashes of A (the good end) and B
    a_commit TEXT NOT NULL,
    b_commit TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    -- the A/B run of the step (a run of this history); NULL where B could not be built or run
    run_id TEXT,
    -- better, worse, same, unclear, machine or untested; NULL where B could not be built or run
    verdict TEXT,
    -- B/A with its 95% interval, where the run gave one
    ratio REAL,
    ci_low REAL,
    ci_high REAL,
    pairs INTEGER,
    seconds REAL,
    -- why B could not be built, started or verified
    broken TEXT,
    recorded_utc TEXT NOT NULL,
    PRIMARY KEY (contestant, metric, options, a_commit, b_commit, attempt)
);
";

/// Version 2 in PostgreSQL's types; the comments are SQLite's text's.
const VERSION_2_POSTGRES: &str = "
CREATE TABLE bisect_steps (
    contestant TEXT NOT NULL,
    metric TEXT NOT NULL,
    options TEXT NOT NULL,
    a_commit TEXT NOT NULL,
    b_commit TEXT NOT NULL,
    attempt BIGINT NOT NULL,
    run_id TEXT,
    verdict TEXT,
    ratio DOUBLE PRECISION,
    ci_low DOUBLE PRECISION,
    ci_high DOUBLE PRECISION,
    pairs BIGINT,
    seconds DOUBLE PRECISION,
    broken TEXT,
    recorded_utc TEXT NOT NULL,
    PRIMARY KEY (contestant, metric, options, a_commit, b_commit, attempt)
);
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_count_up_from_one_without_gaps() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.version as usize, i + 1);
            assert!(!m.sqlite.trim().is_empty() && !m.postgres.trim().is_empty());
        }
        assert_eq!(current_version(), MIGRATIONS.len() as u32);
    }

    /// (table, column) of each `CREATE TABLE` of `sql`, in order.
    fn columns(sql: &str) -> Vec<(String, String)> {
        let mut table = None;
        let mut found = Vec::new();
        for line in sql.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with("--")) {
            if let Some(name) = line.strip_prefix("CREATE TABLE ") {
                table = name.split_whitespace().next().map(str::to_string);
            } else if line.starts_with(')') {
                table = None;
            } else if let (Some(t), Some(column)) = (&table, line.split_whitespace().next()) {
                found.push((t.clone(), column.to_string()));
            }
        }
        found
    }

    #[test]
    fn both_dialects_make_the_same_tables_and_columns() {
        for m in MIGRATIONS {
            let sqlite = columns(m.sqlite);
            assert!(sqlite.len() > 10, "{sqlite:?}");
            assert_eq!(sqlite, columns(m.postgres), "version {}", m.version);
            let indexes = |sql: &str| sql.lines().filter(|l| l.starts_with("CREATE INDEX")).map(str::to_string).collect::<Vec<_>>();
            assert_eq!(indexes(m.sqlite), indexes(m.postgres), "version {}", m.version);
        }
    }
}
