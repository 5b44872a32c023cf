//! A new run's pending record per selected contestant.

use crate::catalog::Contestant;
use crate::model::{ContestantRecord, ContestantStatus};

pub(super) fn record(c: &Contestant) -> ContestantRecord {
    ContestantRecord {
        name: c.name.clone(),
        display: c.display.clone(),
        language: c.language.clone(),
        framework: c.framework.clone(),
        category: c.category.clone(),
        model: c.model.clone(),
        io: c.io.clone(),
        style: c.style.clone(),
        status: ContestantStatus::Pending,
        reason: None,
        version: None,
        build_log: None,
        build_cached: false,
        build_s: 0.0,
        server_logs: Vec::new(),
        warnings: Vec::new(),
        control: false,
    }
}
