//! pairs.csv, written for an A/B run only: one row per pair of rounds, in the order run, with both rounds'
//! req/s, p99 (ns) and server CPU per request (µs) and B/A of each; `counts` says whether the pair is in
//! the estimates (neither round disturbed). `started_s` is when each round began, seconds into the run's
//! measuring.

use super::csv::line;
use super::Exporter;
use crate::model::ab::{value, Side};
use crate::model::verdict::Metric;
use crate::model::ranks::Places;
use crate::model::RunResult;

pub const FILE_NAME: &str = "pairs.csv";

pub struct PairsCsv;

const COLUMNS: &[&str] = &[
    "run_id", "pair", "first", "a_contestant", "b_contestant", "a_round", "b_round", "counts", "a_rps", "b_rps", "rps_ratio",
    "a_p99_ns", "b_p99_ns", "p99_ratio", "a_cpu_us_per_request", "b_cpu_us_per_request", "cpu_ratio", "a_started_s", "b_started_s",
];

impl Exporter for PairsCsv {
    fn file_name(&self) -> &'static str {
        FILE_NAME
    }

    fn applies(&self, run: &RunResult) -> bool {
        run.ab.is_some()
    }

    fn serialize_ranked(&self, run: &RunResult, _places: &[Places]) -> anyhow::Result<Vec<u8>> {
        let mut out = line(COLUMNS.iter().map(|c| c.to_string()));
        let Some(ab) = &run.ab else { return Ok(out.into_bytes()) };
        let num = |v: Option<f64>| v.filter(|v| v.is_finite()).map(|v| format!("{v:.4}").trim_end_matches('0').trim_end_matches('.').to_string()).unwrap_or_default();
        for f in ab.figures(&run.measurements) {
            let mut cells = vec![
                run.run_id.clone(),
                f.pair.index.to_string(),
                if f.pair.first == Side::A { "a" } else { "b" }.to_string(),
                ab.a.name.clone(),
                ab.b.name.clone(),
                f.pair.a_round.to_string(),
                f.pair.b_round.to_string(),
                f.counts().to_string(),
            ];
            for metric in Metric::ALL {
                cells.extend([num(value(metric, f.a)), num(value(metric, f.b)), num(f.ratio(metric))]);
            }
            cells.extend([num(f.a.machine.started_s), num(f.b.machine.started_s)]);
            out.push_str(&line(cells.into_iter()));
        }
        Ok(out.into_bytes())
    }
}
