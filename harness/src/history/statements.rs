//! The statements both stores run, one text for both: `$n` placeholders, which SQLite also reads as
//! parameters numbered in order of appearance, and `RETURNING`, which SQLite has since 3.35 (rusqlite's
//! bundled SQLite is newer). The values of each are the rows' `values()`, in this order.

/// The version a history is at; NULL when the table is empty.
pub const SELECT_VERSION: &str = "SELECT MAX(version) FROM schema_version";
pub const CLEAR_VERSION: &str = "DELETE FROM schema_version";
pub const SET_VERSION: &str = "INSERT INTO schema_version (version) VALUES ($1)";

/// A run's measurements and their figures go with it (ON DELETE CASCADE).
pub const DELETE_RUN: &str = "DELETE FROM runs WHERE run_id = $1";

pub const INSERT_RUN: &str = "INSERT INTO runs (run_id, started_utc, finished_utc, kind, command_line, catalog_commit, catalog_dirty,
                   interrupted, cross_cpu_per_ms, cpu_model, cores, kernel, memory_bytes, serverbench_version)
 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)";

/// Gives the measurement's id, for its figures.
pub const INSERT_MEASUREMENT: &str = "INSERT INTO measurements (run_id, contestant, control, scenario, mode, load, connections, pipeline, tool, status)
 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id";

pub const INSERT_FIGURE: &str =
    "INSERT INTO figures (measurement_id, metric, median, ci_low, ci_high, median_adjusted, rounds) VALUES ($1, $2, $3, $4, $5, $6, $7)";

/// Every figure of one metric (`$1`) of the catalog runs (not A/B runs), oldest run first; read by
/// `StoredFigure::read`.
pub const SELECT_FIGURES: &str =
    "SELECT r.run_id, r.started_utc, r.catalog_commit, r.catalog_dirty, m.contestant, m.control, m.scenario, m.load,
        m.connections, f.median, f.ci_low, f.ci_high, f.median_adjusted, m.pipeline, m.tool
 FROM figures f JOIN measurements m ON m.id = f.measurement_id JOIN runs r ON r.run_id = m.run_id
 WHERE f.metric = $1 AND r.kind = 'catalog' AND m.status = 'measured'
 ORDER BY r.started_utc, r.run_id, m.contestant";

pub const HAS_RUN: &str = "SELECT COUNT(*) FROM runs WHERE run_id = $1";

/// A bisection's step, replacing one recorded before under the same key (a step asked again).
pub const RECORD_STEP: &str = "INSERT INTO bisect_steps (contestant, metric, options, a_commit, b_commit, attempt, run_id, verdict, ratio, ci_low,
                          ci_high, pairs, seconds, broken, recorded_utc)
 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
 ON CONFLICT (contestant, metric, options, a_commit, b_commit, attempt) DO UPDATE SET
    run_id = excluded.run_id, verdict = excluded.verdict, ratio = excluded.ratio, ci_low = excluded.ci_low,
    ci_high = excluded.ci_high, pairs = excluded.pairs, seconds = excluded.seconds, broken = excluded.broken,
    recorded_utc = excluded.recorded_utc";

/// The steps recorded for one contestant (`$1`), figure (`$2`) and set of bench options (`$3`), in the
/// order they were recorded; read by `StoredStep::read`.
pub const SELECT_STEPS: &str = "SELECT contestant, metric, options, a_commit, b_commit, attempt, run_id, verdict, ratio, ci_low, ci_high, pairs,
        seconds, broken, recorded_utc
 FROM bisect_steps WHERE contestant = $1 AND metric = $2 AND options = $3
 ORDER BY recorded_utc, a_commit, b_commit, attempt";
