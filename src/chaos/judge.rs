//! A run judged, and a failing run shrunk to a counterexample a student can
//! read: the fewest workers and calls that still break the property, with
//! the same seed.

use super::history::Call;
use super::linearize::{self, Verdict};
use super::plan::Settings;
use super::properties::{self, Violation};
use super::run::{run, Record, Workers};
use std::path::Path;

/// How many search steps the model check may take over a whole run before
/// it says "unknown": far more than a run of the lab's workers needs, and
/// few enough that a check ends within seconds.
pub const MODEL_BUDGET: usize = 2_000_000;

/// The most runs a shrink makes.
const MOST_SHRINK_RUNS: usize = 40;

/// A run and what was found in it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Judgement {
    /// The run.
    pub record: Record,
    /// The property checks' findings, in the order of the calls.
    pub violations: Vec<Violation>,
    /// The model check's verdict.
    pub model: Verdict,
}

impl Judgement {
    /// Judges `record`.
    pub fn of(record: Record) -> Judgement {
        let violations = properties::check(&record);
        let model = linearize::check(&record.calls, MODEL_BUDGET);
        Judgement {
            record,
            violations,
            model,
        }
    }

    /// Whether the run broke the contract: a property, or no order of the
    /// calls explains the answers. A model check cut off is not a failure
    /// (and not a pass: see [`Judgement::model_text`]).
    pub fn failed(&self) -> bool {
        !self.violations.is_empty()
            || matches!(
                self.model,
                Verdict::NotLinearizable { .. } | Verdict::Malformed { .. }
            )
    }

    /// The job the first finding is about.
    pub fn job(&self) -> Option<&str> {
        match self.violations.first() {
            Some(violation) => violation.job.as_deref(),
            None => match &self.model {
                Verdict::NotLinearizable { job_id, .. } => job_id.as_deref(),
                _ => None,
            },
        }
    }

    /// The first finding, in words, with the step whose contract it
    /// breaks: `a fence handed out twice (step 4)`.
    pub fn finding_text(&self) -> String {
        match self.violations.first() {
            Some(violation) => format!("{} (step {})", violation.property.text(), violation.step),
            None => {
                let step = self
                    .culprits()
                    .first()
                    .map_or(4, |call| self.record.calls[*call].operation.step());
                format!(
                    "{} (step {step})",
                    super::properties::Property::NotLinearizable.text()
                )
            }
        }
    }

    /// The calls that show the first finding.
    pub fn culprits(&self) -> Vec<usize> {
        match (self.violations.first(), &self.model) {
            (Some(violation), _) => violation.calls.clone(),
            (
                None,
                Verdict::NotLinearizable {
                    first_unplaceable: Some(call),
                    ..
                },
            ) => vec![*call],
            _ => Vec::new(),
        }
    }

    /// The calls to show for the first finding: every call of its job up
    /// to the last call that shows it.
    pub fn shown(&self) -> Vec<usize> {
        let calls = &self.record.calls;
        let last = self
            .culprits()
            .into_iter()
            .max()
            .unwrap_or(calls.len().saturating_sub(1));
        let job = self.job();
        (0..calls.len().min(last + 1))
            .filter(|index| job.is_none() || calls[*index].operation.job_id() == job)
            .collect()
    }

    /// How many calls, from the first in the order sent, still break
    /// nothing: the longest valid prefix of the run.
    pub fn longest_valid_prefix(&self) -> usize {
        let by_properties = self
            .violations
            .iter()
            .filter_map(|violation| violation.calls.iter().max())
            .min()
            .copied();
        let by_model = match &self.model {
            Verdict::NotLinearizable {
                first_unplaceable: Some(call),
                ..
            } => Some(*call),
            _ => None,
        };
        match (by_properties, by_model) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => self.record.calls.len(),
        }
    }

    /// The model check's verdict, in a sentence.
    pub fn model_text(&self) -> String {
        match &self.model {
            Verdict::Linearizable { steps, .. } => {
                format!("linearizable: an order of the calls explains every answer ({steps} search steps)")
            }
            Verdict::NotLinearizable {
                job_id,
                longest_prefix,
                first_unplaceable,
                ..
            } => {
                let job = job_id.as_deref().unwrap_or("init_db");
                let call = first_unplaceable.map_or_else(String::new, |call| {
                    format!("; call {} cannot be placed", call + 1)
                });
                format!(
                    "not linearizable on {job}: its first {longest_prefix} calls can be explained{call}"
                )
            }
            Verdict::Unknown { job_id, steps } => format!(
                "unknown: the search on {} stopped after {steps} steps (no wrong answer found)",
                job_id.as_deref().unwrap_or("init_db")
            ),
            Verdict::Malformed { call, problem } => {
                format!(
                    "the history cannot be judged: call {} is {problem:?}",
                    call + 1
                )
            }
        }
    }

    /// The calls, for the shown timeline.
    pub fn calls(&self) -> &[Call] {
        &self.record.calls
    }
}

/// A failing run, shrunk.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Shrunk {
    /// The smallest failing run found.
    pub judged: Judgement,
    /// How many runs the shrink made.
    pub runs: usize,
}

/// Shrinks `failing`: first to the fewest workers that still fail (with as
/// many calls), then to the fewest calls, each candidate run twice before
/// it is given up (the order of one round's calls is the operating
/// system's). Every run has the same seed.
///
/// Errors: a run that could not be made.
pub fn shrink(workers: &Workers, failing: &Judgement, scratch: &Path) -> Result<Shrunk, String> {
    let mut best = failing.clone();
    let mut runs = 0;
    let attempt = |settings: Settings, runs: &mut usize| -> Result<Option<Judgement>, String> {
        for _ in 0..2 {
            if *runs >= MOST_SHRINK_RUNS {
                return Ok(None);
            }
            *runs += 1;
            let judged = Judgement::of(run(workers, &settings, scratch)?);
            if judged.failed() {
                return Ok(Some(judged));
            }
        }
        Ok(None)
    };
    let through_failure = |judged: &Judgement| {
        judged
            .culprits()
            .into_iter()
            .max()
            .map_or(judged.record.calls.len(), |last| last + 1)
    };
    for fewer in 1..best.record.settings.workers {
        let settings = Settings {
            workers: fewer,
            operations: through_failure(&best),
            ..best.record.settings.clone()
        };
        if let Some(judged) = attempt(settings, &mut runs)? {
            best = judged;
            break;
        }
    }
    let (mut low, mut high) = (1, through_failure(&best));
    while low < high {
        let middle = low + (high - low) / 2;
        let settings = Settings {
            operations: middle,
            ..best.record.settings.clone()
        };
        match attempt(settings, &mut runs)? {
            Some(judged) => {
                high = through_failure(&judged).min(middle);
                best = judged;
            }
            None => low = middle + 1,
        }
        if runs >= MOST_SHRINK_RUNS {
            break;
        }
    }
    Ok(Shrunk { judged: best, runs })
}
