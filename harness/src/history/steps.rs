//! A bisection's step as the history keeps it (`bisect_steps`): B against A the `attempt`-th time, for
//! one contestant, figure and set of bench options, with what the step read, so that a bisection that was
//! interrupted resumes from the steps it had taken.

use super::values::{Columns, Value};
use crate::model::verdict::{Metric, Verdict};

/// One step of a bisection.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredStep {
    pub contestant: String,
    pub metric: Metric,
    /// The bench options after `--`, as given.
    pub options: String,
    pub a_commit: String,
    pub b_commit: String,
    pub attempt: u32,
    /// The step's A/B run; absent where B could not be built or run.
    pub run_id: Option<String>,
    pub read: StepRead,
    pub recorded_utc: String,
}

/// What the step read.
#[derive(Debug, Clone, PartialEq)]
pub enum StepRead {
    /// The A/B run's verdict, B/A with its interval where it had them, its pairs and seconds.
    Judged { verdict: Verdict, ratio: Option<f64>, ci95: Option<(f64, f64)>, pairs: usize, seconds: f64 },
    /// Why B could not be built, started or verified.
    Broken(String),
}

/// A count as a stored integer; no count of a step comes near 2^63.
fn int(n: impl TryInto<i64>) -> Value<'static> {
    Value::Int(n.try_into().unwrap_or(i64::MAX))
}

impl StoredStep {
    /// The values of `statements::RECORD_STEP`.
    pub fn values(&self) -> Vec<Value<'_>> {
        use Value::*;
        let (verdict, ratio, ci95, pairs, seconds, broken) = match &self.read {
            StepRead::Judged { verdict, ratio, ci95, pairs, seconds } => (Some(verdict.word()), *ratio, *ci95, Some(*pairs), Some(*seconds), None),
            StepRead::Broken(why) => (None, None, None, None, None, Some(why.as_str())),
        };
        vec![
            Text(&self.contestant),
            Text(self.metric.key()),
            Text(&self.options),
            Text(&self.a_commit),
            Text(&self.b_commit),
            int(self.attempt),
            MaybeText(self.run_id.as_deref()),
            MaybeText(verdict),
            MaybeReal(ratio),
            MaybeReal(ci95.map(|c| c.0)),
            MaybeReal(ci95.map(|c| c.1)),
            MaybeInt(pairs.map(|p| i64::try_from(p).unwrap_or(i64::MAX))),
            MaybeReal(seconds),
            MaybeText(broken),
            Text(&self.recorded_utc),
        ]
    }

    /// A row of `statements::SELECT_STEPS`; None where its figure or verdict is one this serverbench does
    /// not know (a newer one wrote it).
    pub fn read<R: Columns>(row: &R) -> Result<Option<StoredStep>, R::Error> {
        let metric = row.text(1)?;
        let Some(metric) = Metric::ALL.into_iter().find(|m| m.key() == metric) else { return Ok(None) };
        let read = match (row.maybe_text(7)?, row.maybe_text(13)?) {
            (_, Some(why)) => StepRead::Broken(why),
            (Some(word), None) => {
                let Some(verdict) = Verdict::ALL.into_iter().find(|v| v.word() == word) else { return Ok(None) };
                let (low, high) = (row.maybe_real(9)?, row.maybe_real(10)?);
                StepRead::Judged {
                    verdict,
                    ratio: row.maybe_real(8)?,
                    ci95: low.zip(high),
                    pairs: usize::try_from(row.maybe_int(11)?.unwrap_or(0)).unwrap_or_default(),
                    seconds: row.maybe_real(12)?.unwrap_or(0.0),
                }
            }
            (None, None) => return Ok(None),
        };
        Ok(Some(StoredStep {
            contestant: row.text(0)?,
            metric,
            options: row.text(2)?,
            a_commit: row.text(3)?,
            b_commit: row.text(4)?,
            attempt: u32::try_from(row.int(5)?).unwrap_or_default(),
            run_id: row.maybe_text(6)?,
            read,
            recorded_utc: row.text(14)?,
        }))
    }
}
