//! run.json: the result model as it is (schema 1, histograms as base64 HdrHistogram V2), plus a derived
//! `summary` per measurement for readers (with its `places` in its table: the range of ranks by req/s and by
//! CPU per request), and for an A/B run `ab_summary`: B/A of each figure with its interval and verdict;
//! `serverbench report` ignores the summaries and recomputes them.

use super::Exporter;
use crate::model::ranks::Places;
use crate::model::RunResult;

pub const FILE_NAME: &str = "run.json";

pub struct Json;

impl Exporter for Json {
    fn file_name(&self) -> &'static str {
        FILE_NAME
    }

    fn serialize_ranked(&self, run: &RunResult, places: &[Places]) -> anyhow::Result<Vec<u8>> {
        let mut value = serde_json::to_value(run)?;
        if let Some(list) = value.get_mut("measurements").and_then(|m| m.as_array_mut()) {
            for ((json, m), places) in list.iter_mut().zip(&run.measurements).zip(places) {
                if let Some(obj) = json.as_object_mut() {
                    let mut summary = serde_json::to_value(m.summary())?;
                    if let Some(fields) = summary.as_object_mut() {
                        fields.insert("places".into(), serde_json::to_value(places)?);
                    }
                    obj.insert("summary".into(), summary);
                }
            }
        }
        if let (Some(ab), Some(obj)) = (&run.ab, value.as_object_mut()) {
            obj.insert("ab_summary".into(), super::pairs::json_summary(ab, run));
        }
        let mut bytes = serde_json::to_vec_pretty(&value)?;
        bytes.push(b'\n');
        Ok(bytes)
    }
}
