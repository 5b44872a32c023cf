//! The configurations of run A that run B lost: absent from B, failed in B, or answering with errors in B
//! where A had none. None of them has a verdict (B has no rounds to set against A's, or its rounds are
//! not the same work), so each trips every gate: a regression nobody measured is still one.

use super::Key;
use crate::model::{Measurement, MeasurementStatus, RunResult};

/// Why a configuration of A counts as lost in B.
#[derive(Debug, Clone, PartialEq)]
pub enum Why {
    /// B has no measurement of it.
    Missing,
    /// B's measurement failed or was interrupted, with B's reason where it gave one.
    Failed(Option<String>),
    /// B's measured rounds had errors where A's had none.
    NewErrors { b: u64 },
}

impl Why {
    /// Its word in `compare --json`.
    pub fn word(&self) -> &'static str {
        match self {
            Why::Missing => "missing",
            Why::Failed(_) => "failed",
            Why::NewErrors { .. } => "errors",
        }
    }

    /// What happened, in words: "absent from B", "failed in B: build failed", "1,204 errors in B, none in A".
    pub fn text(&self) -> String {
        match self {
            Why::Missing => "absent from B".into(),
            Why::Failed(None) => "failed in B".into(),
            Why::Failed(Some(reason)) => format!("failed in B: {}", reason.lines().next().unwrap_or_default()),
            Why::NewErrors { b } => format!("{b} errors in B's measured rounds, none in A's"),
        }
    }
}

/// One lost configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Lost {
    pub key: Key,
    pub why: Why,
}

/// Errors over a measurement's measured rounds.
fn errors(m: &Measurement) -> u64 {
    m.measured_rounds().map(|r| r.load.errors.total()).sum()
}

/// A's measured configurations (`measured_a`) that B lost, in A's order.
pub fn lost(measured_a: &[(Key, &Measurement)], b: &RunResult) -> Vec<Lost> {
    measured_a
        .iter()
        .filter_map(|(key, ma)| {
            let in_b: Vec<&Measurement> = b.measurements.iter().filter(|m| Key::of(m) == *key).collect();
            let measured_b = in_b.iter().find(|m| m.measured_rounds().next().is_some());
            let why = match (in_b.first(), measured_b) {
                (None, _) => Why::Missing,
                (Some(m), None) => Why::Failed(m.reason.clone()),
                (_, Some(m)) if matches!(m.status, MeasurementStatus::Failed | MeasurementStatus::Interrupted) => Why::Failed(m.reason.clone()),
                (_, Some(m)) if errors(m) > 0 && errors(ma) == 0 => Why::NewErrors { b: errors(m) },
                _ => return None,
            };
            Some(Lost { key: key.clone(), why })
        })
        .collect()
}
