//! What a worker (`serverbench load --worker`) writes on its stdout, one JSON object a line, and the
//! orchestrating harness reads through ssh: the edges of its measured window, then its report or why it
//! has none.

use serde::{Deserialize, Serialize};

use crate::load::LoadReport;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum WorkerLine {
    /// The measured window opened (`open: true`) or closed, at this wall-clock instant of the worker's
    /// host (Unix seconds).
    Window { open: bool, unix_s: f64 },
    /// Everything the worker measured: the same report a local run returns.
    Report { report: Box<LoadReport> },
    /// The load could not run; no report follows.
    Failed { error: String },
}

impl WorkerLine {
    /// The line as written: JSON and a newline.
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("a worker line serializes") + "\n"
    }
}

/// Seconds since the Unix epoch, from the wall clock.
pub fn unix_now() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}
