//! A run judged, and a failing run shrunk to a counterexample a student can
//! read: the fewest workers and calls that still break the property, with
//! the same seed ([`shrink()`]).

use super::history::Call;
use super::linearize::{self, Verdict};
use super::properties::{self, Violation};
use super::run::Record;

/// How many search steps the model check may take over a whole run before
/// it says "unknown": far more than a run of the lab's workers needs, and
/// few enough that a check ends within seconds.
pub const MODEL_BUDGET: usize = 2_000_000;

/// The most calls a counterexample's timeline shows.
pub const MOST_SHOWN: usize = 12;

/// A run and what was found in it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Judgement {
    /// The run.
    pub record: Record,
    /// The property checks' findings, in the order of the calls.
    pub violations: Vec<Violation>,
    /// The model check's verdict.
    pub model: Verdict,
    /// Whether fencing held: no finding that breaks it
    /// ([`properties::Property::breaks_fencing`]).
    pub fencing: Held,
    /// Whether the worksheet's whole contract held (nothing found).
    pub contract: Held,
}

/// A verdict on one promise: it held, or the run broke it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Held {
    /// Nothing in the run broke it.
    Held,
    /// The run broke it.
    Broken,
}

impl Held {
    fn unless(broken: bool) -> Held {
        if broken {
            Held::Broken
        } else {
            Held::Held
        }
    }
}

impl Judgement {
    /// Judges `record`.
    pub fn of(record: Record) -> Judgement {
        let violations = properties::check(&record);
        let model = linearize::check(&record.calls, MODEL_BUDGET);
        Judgement::with(record, violations, model)
    }

    /// The judgement of `record` with these findings: fencing broken when
    /// a finding breaks it, the contract when anything was found.
    pub fn with(record: Record, violations: Vec<Violation>, model: Verdict) -> Judgement {
        let fencing = Held::unless(
            violations
                .iter()
                .any(|violation| violation.property.breaks_fencing()),
        );
        let mut judged = Judgement {
            record,
            violations,
            model,
            fencing,
            contract: Held::Held,
        };
        judged.contract = Held::unless(judged.failed());
        judged
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

    /// What the first finding's calls and the workers' moments show, in one
    /// sentence, when the finding is a stale completion that came back from
    /// a stall: "w1 stalled holding fence 1; fence 2 was handed out to w1's
    /// next attempt; the stalled attempt came back, its clock still at
    /// 32.894, and its completion with fence 1 was accepted". `None` for
    /// any other finding, whose own sentence says it all.
    pub fn story(&self) -> Option<String> {
        let violation = self.violations.first()?;
        if violation.property != properties::Property::StaleCompletion {
            return None;
        }
        let (&[newer, late], calls) = (violation.calls.as_slice(), &self.record.calls) else {
            return None;
        };
        let (claim, completion) = (&calls[newer], &calls[late]);
        let crate::operation::Operation::Complete { job_id, fence, .. } = &completion.operation
        else {
            return None;
        };
        let granted = match &claim.returned {
            super::history::Returned::Answer(crate::operation::Answer::Fence(Some(granted))) => {
                *granted
            }
            _ => return None,
        };
        let of_this_lease = |noted: &&super::history::Noted| {
            noted.worker == completion.worker
                && noted.before <= late
                && noted.job() == Some(job_id.as_str())
        };
        let moments: Vec<&super::history::Noted> =
            self.record.moments.iter().filter(of_this_lease).collect();
        let stalled = moments.iter().rev().find(|noted| {
            matches!(&noted.moment, super::plan::Moment::Stalled { fence: f, .. } if f == fence)
        })?;
        let returned = moments.iter().rev().find(|noted| {
            noted.before > stalled.before
                && matches!(&noted.moment, super::plan::Moment::CameBack { fence: f, .. } if f == fence)
        })?;
        let writer = completion.worker_name();
        let to = if claim.worker == completion.worker {
            format!("{writer}'s next attempt")
        } else {
            claim.worker_name()
        };
        let clock = match &returned.moment {
            super::plan::Moment::CameBack {
                now, stale: true, ..
            } => format!(", its clock still at {}", super::timeline::number(*now)),
            _ => String::new(),
        };
        Some(format!(
            "{writer} stalled holding fence {fence}; fence {granted} was handed out to {to}; \
             the stalled attempt came back{clock}, and its completion with fence {fence} \
             was accepted"
        ))
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

    /// The calls to show for the first finding, at most [`MOST_SHOWN`]:
    /// when its job made more, the calls that show it, the claims that
    /// were handed a fence (the fence's history), and the latest others.
    pub fn shown(&self) -> Vec<usize> {
        let all = self.involved();
        if all.len() <= MOST_SHOWN {
            return all;
        }
        let calls = &self.record.calls;
        let culprits = self.culprits();
        let mut kept: std::collections::BTreeSet<usize> = all
            .iter()
            .copied()
            .filter(|index| culprits.contains(index))
            .collect();
        // A worker setting up again between the calls that show the
        // finding: a restart the student must see to follow the story.
        let (first, last) = (culprits.iter().min(), culprits.iter().max());
        if let (Some(&first), Some(&last)) = (first, last) {
            for &index in &all {
                if (first..=last).contains(&index)
                    && calls[index].operation.job_id().is_none()
                    && kept.len() < MOST_SHOWN
                {
                    kept.insert(index);
                }
            }
        }
        for &index in all.iter().rev() {
            let granted = matches!(
                (&calls[index].operation, &calls[index].returned),
                (
                    crate::operation::Operation::Claim { .. },
                    super::history::Returned::Answer(crate::operation::Answer::Fence(Some(_)))
                )
            );
            if granted && kept.len() < MOST_SHOWN {
                kept.insert(index);
            }
        }
        for &index in all.iter().rev() {
            if kept.len() >= MOST_SHOWN {
                break;
            }
            kept.insert(index);
        }
        kept.into_iter().collect()
    }

    /// How many calls of the finding's job [`Judgement::shown`] leaves out.
    pub fn not_shown(&self) -> usize {
        self.involved().len() - self.shown().len()
    }

    /// The last call the first finding needs: the last that shows it, or,
    /// for a lost job (found in the file at the end of the run), the run's
    /// last call. None without a finding.
    fn last_needed(&self) -> Option<usize> {
        let last = self.culprits().into_iter().max()?;
        let found_at_end = self
            .violations
            .first()
            .is_some_and(|violation| violation.property == properties::Property::JobLost);
        Some(if found_at_end {
            self.record.calls.len().saturating_sub(1).max(last)
        } else {
            last
        })
    }

    /// Every call of the first finding's job up to the last call that
    /// shows it, and those that ran at the same time as one that does;
    /// with them, the set-ups (`init_db`, which names no job) of the
    /// workers that made those calls, once the job's first call was made:
    /// a worker started again is part of the story. A lost job is found in
    /// the file at the end of the run, so its every call is shown: one of
    /// those after its enqueue took its row away.
    fn involved(&self) -> Vec<usize> {
        let calls = &self.record.calls;
        let last = self.last_needed().unwrap_or(calls.len().saturating_sub(1));
        let job = self.job();
        // And the calls sent after it that ran at the same time as one that
        // shows it: a race's other half.
        let until = self
            .culprits()
            .iter()
            .map(|index| calls[*index].ended.unwrap_or(u64::MAX))
            .max()
            .unwrap_or(0);
        let in_time = |index: &usize| *index <= last || calls[*index].began < until;
        let of_job: Vec<usize> = (0..calls.len())
            .filter(in_time)
            .filter(|index| job.is_none() || calls[*index].operation.job_id() == job)
            .collect();
        let (Some(&first), Some(_)) = (of_job.first(), job) else {
            return of_job;
        };
        let workers: std::collections::BTreeSet<usize> =
            of_job.iter().map(|index| calls[*index].worker).collect();
        (first..calls.len())
            .filter(in_time)
            .filter(|index| {
                let call = &calls[*index];
                call.operation.job_id() == job
                    || (call.operation.job_id().is_none() && workers.contains(&call.worker))
            })
            .collect()
    }

    /// The longest valid prefix in words: "the first 12 calls of this
    /// run", "the first call of this run", "none of this run's calls".
    pub fn valid_prefix_text(&self) -> String {
        match self.longest_valid_prefix() {
            0 => "none of this run's calls".into(),
            1 => "the first call of this run".into(),
            calls => format!("the first {calls} calls of this run"),
        }
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

    /// The model check's verdict, in a sentence. The call it cites, the
    /// first that no order places, is one of those the run's timeline
    /// shows ([`Judgement::shown`]); when it is not (the first finding is a
    /// property's, on another job or before it), the sentence cites none.
    pub fn model_text(&self) -> String {
        match &self.model {
            Verdict::Linearizable { steps, .. } => {
                format!("linearizable: an order of the calls explains every answer ({steps} search steps)")
            }
            Verdict::NotLinearizable {
                job_id,
                longest_prefix,
                first_unplaceable,
                expected,
                ..
            } => {
                let job = job_id.as_deref().unwrap_or("init_db");
                let shown = first_unplaceable.filter(|index| self.shown().contains(index));
                let call = shown.map_or_else(String::new, |index| {
                    let call = &self.record.calls[index];
                    let contrast = expected.as_ref().map_or_else(String::new, |expected| {
                        let row = row_text(expected.row.as_ref());
                        match &expected.answer {
                            // A state call's answer is the row itself.
                            Some(crate::operation::Answer::Row(_)) => {
                                format!(", where the contract answers {row}")
                            }
                            Some(answer) => format!(
                                ", where the contract answers {} to {row}",
                                super::timeline::answer_text(&super::history::Returned::Answer(
                                    answer.clone()
                                ))
                            ),
                            None => ", where the contract refuses its arguments".into(),
                        }
                    });
                    let answered = match &call.returned {
                        super::history::Returned::Answer(crate::operation::Answer::Row(row)) => {
                            row_text(row.as_ref())
                        }
                        returned => super::timeline::answer_text(returned),
                    };
                    let boundary = expected
                        .as_ref()
                        .and_then(|expected| at_the_last_instant(call, expected))
                        .unwrap_or_default();
                    format!(
                        "; call {}, {}'s {}, cannot be placed: it answered {answered}{contrast}{boundary}",
                        index + 1,
                        call.worker_name(),
                        super::timeline::call_text(&call.operation),
                    )
                });
                format!(
                    "not linearizable on {job} (no order of its calls, each taking effect at \
                     one instant while it ran, gives every answer): its first {longest_prefix} \
                     calls can be explained{call}"
                )
            }
            Verdict::Unknown { job_id, steps } => format!(
                "unknown: the search on {} stopped after {steps} steps (no wrong answer found)",
                job_id.as_deref().unwrap_or("init_db")
            ),
            Verdict::Malformed { call, problem } if self.shown().contains(call) => {
                format!(
                    "the history cannot be judged: call {} is {problem:?}",
                    call + 1
                )
            }
            Verdict::Malformed { problem, .. } => {
                format!("the history cannot be judged: a call is {problem:?}")
            }
        }
    }

    /// The calls, for the shown timeline.
    pub fn calls(&self) -> &[Call] {
        &self.record.calls
    }
}

/// The convention a call at a lease's last instant (`now == until`) shows,
/// in words, when its answer says the store kept the lease through that
/// instant: a claim refused, or a renew or completion accepted, where the
/// worksheet's lease has ended.
fn at_the_last_instant(call: &Call, expected: &linearize::Expectation) -> Option<&'static str> {
    use crate::operation::{Answer, Operation};
    let row = expected.row.as_ref()?;
    let now = match &call.operation {
        Operation::Claim { now, .. }
        | Operation::Renew { now, .. }
        | Operation::Complete { now, .. } => *now,
        _ => return None,
    };
    let super::history::Returned::Answer(answer) = &call.returned else {
        return None;
    };
    let kept = matches!(
        (&call.operation, answer),
        (Operation::Claim { .. }, Answer::Fence(None))
            | (
                Operation::Renew { .. } | Operation::Complete { .. },
                Answer::Bool(true)
            )
    );
    (kept && now == row.until && row.owner.is_some() && !row.done).then_some(
        ": at now == until this store keeps the lease through its last instant, one \
         instant longer than the worksheet",
    )
}

/// A stored row as a model-check finding names it: `the row owner w2,
/// fence 3, until 36.144, not done`, or `no row` for a job not enqueued.
fn row_text(row: Option<&crate::job::Job>) -> String {
    let Some(row) = row else {
        return "no row".into();
    };
    format!(
        "the row owner {}, fence {}, until {}, {}",
        row.owner.as_deref().unwrap_or("none"),
        row.fence,
        super::timeline::number(row.until),
        if row.done { "done" } else { "not done" }
    )
}

mod shrink;
pub use shrink::{shrink, through_failure, Shrunk};

#[cfg(test)]
mod tests;
