//! The fencing property, checked from a run's history and the file it
//! left: each way it can break, named, with the calls that show it.
//!
//! A call whose worker was killed during it has an unknown outcome: it may
//! or may not have landed, and no check counts on either. These checks
//! read answers as they came; the contract model's linearizability check
//! (see [`super::linearize`]) judges the history as a whole beside them.

use super::history::{Call, Returned};
use super::run::Record;
use crate::job::{Fence, Job};
use crate::operation::{Answer, Operation};
use std::collections::BTreeMap;

/// One way the fencing property breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Property {
    /// Two claims of one job were handed the same fence.
    FenceTwice,
    /// A claim was handed a fence below one handed out before it began.
    FenceDown,
    /// A completion was accepted with a fence that had been superseded: a
    /// newer claim had been handed a higher fence before it began.
    StaleCompletion,
    /// A completion was accepted with a fence no claim handed its worker
    /// (a store whose token alone is the credential, whoever sends it).
    UnhandedFence,
    /// The stored result is not the accepted completion's.
    WrongResult,
    /// A done job changed afterwards.
    DoneChanged,
    /// An enqueued job is gone.
    JobLost,
    /// The file fails SQLite's integrity check, or cannot be read.
    Integrity,
    /// A call failed with an error: under this load (a few workers, short
    /// transactions, valid arguments) every call must be answered.
    CallFailed,
    /// The answers cannot come from any order of the calls under the
    /// worksheet's contract (the model check).
    NotLinearizable,
}

impl Property {
    /// What it says, in a few words.
    pub fn text(self) -> &'static str {
        match self {
            Property::FenceTwice => "a fence handed out twice",
            Property::FenceDown => "a fence that went down",
            Property::StaleCompletion => {
                "a completion accepted from a worker not holding the lease"
            }
            Property::UnhandedFence => "a completion with a fence never handed to its worker",
            Property::WrongResult => "a stored result that is not the accepted completion's",
            Property::DoneChanged => "a done job that changed",
            Property::JobLost => "a job lost",
            Property::Integrity => "a damaged file",
            Property::CallFailed => "a call that failed",
            Property::NotLinearizable => "answers no order of the calls explains",
        }
    }

    /// Whether it breaks fencing itself, the lesson's property: a stale
    /// write accepted, a fence handed out twice or going down, a done job
    /// changed. Every other finding breaks the worksheet's contract (its
    /// conventions: when a lease ends, what the token is checked with)
    /// while the fence may still hold.
    pub fn breaks_fencing(self) -> bool {
        matches!(
            self,
            Property::FenceTwice
                | Property::FenceDown
                | Property::StaleCompletion
                | Property::DoneChanged
        )
    }

    /// The worksheet step whose contract it breaks.
    pub fn step(self) -> u8 {
        match self {
            Property::FenceTwice | Property::FenceDown => 4,
            Property::StaleCompletion
            | Property::UnhandedFence
            | Property::WrongResult
            | Property::DoneChanged => 6,
            Property::JobLost => 2,
            Property::Integrity | Property::CallFailed => 1,
            Property::NotLinearizable => 4,
        }
    }
}

/// A property broken, by which calls.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Violation {
    /// What broke.
    pub property: Property,
    /// The worksheet step whose contract it breaks: the property's, or for
    /// a failed call the step of its operation.
    pub step: u8,
    /// The job it broke on, if one.
    pub job: Option<String>,
    /// The calls that show it, as indices into the history.
    pub calls: Vec<usize>,
    /// What happened, in a sentence.
    pub text: String,
}

/// Every violation the history and the final file show, in the order of
/// the calls that show them.
pub fn check(record: &Record) -> Vec<Violation> {
    let mut found = Vec::new();
    // (A server keeps its own pages: there is no file to check.)
    if record.integrity != "ok" && record.integrity != super::run::ON_A_SERVER {
        found.push(Violation {
            property: Property::Integrity,
            step: Property::Integrity.step(),
            job: None,
            calls: Vec::new(),
            text: format!("PRAGMA integrity_check says: {}", record.integrity),
        });
    }
    let rows: BTreeMap<&str, &Job> = match &record.rows {
        Ok(rows) => rows.iter().map(|row| (row.id.as_str(), row)).collect(),
        Err(why) => {
            found.push(Violation {
                property: Property::Integrity,
                step: Property::Integrity.step(),
                job: None,
                calls: Vec::new(),
                text: format!("the jobs could not be read at the end: {why}"),
            });
            BTreeMap::new()
        }
    };
    for (index, call) in record.calls.iter().enumerate() {
        if let Returned::Error(kind) = &call.returned {
            found.push(Violation {
                property: Property::CallFailed,
                step: call.operation.step(),
                job: call.operation.job_id().map(str::to_string),
                calls: vec![index],
                text: format!(
                    "{}'s {} failed with a {} error",
                    call.worker_name(),
                    call.operation.name(),
                    kind.name()
                ),
            });
        }
    }
    let mut by_job: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (index, call) in record.calls.iter().enumerate() {
        if let Some(job) = call.operation.job_id() {
            by_job.entry(job).or_default().push(index);
        }
    }
    for (job, indices) in &by_job {
        let calls = &record.calls;
        let job_calls = JobCalls { calls, indices };
        let row = rows.get(job).copied();
        found.extend(job_calls.fences(job));
        found.extend(job_calls.completions(job, row, record.rows.is_ok()));
        found.extend(job_calls.enqueued(job, row, record));
    }
    found.sort_by_key(|violation| violation.calls.last().copied().unwrap_or(usize::MAX));
    found
}

/// The calls of one job.
struct JobCalls<'a> {
    calls: &'a [Call],
    indices: &'a [usize],
}

/// A stored text as a student reads it: quoted, or `none`.
fn quoted(text: Option<&str>) -> String {
    text.map_or_else(|| "none".to_string(), |text| format!("{text:?}"))
}

/// When a call returned; an unknown one never did.
fn end(call: &Call) -> u64 {
    call.ended.unwrap_or(u64::MAX)
}

fn answer(call: &Call) -> Option<&Answer> {
    match &call.returned {
        Returned::Answer(answer) => Some(answer),
        _ => None,
    }
}

/// The fence a claim was handed.
fn granted(call: &Call) -> Option<Fence> {
    match (&call.operation, answer(call)) {
        (Operation::Claim { .. }, Some(Answer::Fence(Some(fence)))) => Some(*fence),
        _ => None,
    }
}

/// Whether the call was answered `true`.
fn accepted(call: &Call) -> bool {
    matches!(answer(call), Some(Answer::Bool(true)))
}

fn owner_of(operation: &Operation) -> Option<&str> {
    match operation {
        Operation::Claim { owner, .. }
        | Operation::Renew { owner, .. }
        | Operation::Complete { owner, .. }
        | Operation::Release { owner, .. } => Some(owner),
        _ => None,
    }
}

impl JobCalls<'_> {
    fn each(&self) -> impl Iterator<Item = (usize, &Call)> + '_ {
        self.indices
            .iter()
            .map(|index| (*index, &self.calls[*index]))
    }

    fn grants(&self) -> Vec<(usize, &Call, Fence)> {
        self.each()
            .filter_map(|(index, call)| granted(call).map(|fence| (index, call, fence)))
            .collect()
    }

    /// Fences handed out twice, and fences below one handed out before.
    fn fences(&self, job: &str) -> Vec<Violation> {
        let grants = self.grants();
        let mut found = Vec::new();
        for (position, (a, first, fa)) in grants.iter().enumerate() {
            for (b, second, fb) in &grants[position + 1..] {
                if fa == fb {
                    let text = if first.worker == second.worker {
                        format!("{} was handed fence {fa} twice", first.worker_name())
                    } else {
                        format!(
                            "{} and {} were both handed fence {fa}",
                            first.worker_name(),
                            second.worker_name()
                        )
                    };
                    found.push(Violation {
                        property: Property::FenceTwice,
                        step: Property::FenceTwice.step(),
                        job: Some(job.into()),
                        calls: vec![*a, *b],
                        text,
                    });
                } else if end(first) < second.began && fb < fa {
                    found.push(Violation {
                        property: Property::FenceDown,
                        step: Property::FenceDown.step(),
                        job: Some(job.into()),
                        calls: vec![*a, *b],
                        text: format!(
                            "{} was handed fence {fb} after {} had been handed {fa}",
                            second.worker_name(),
                            first.worker_name()
                        ),
                    });
                }
            }
        }
        found
    }

    /// Accepted completions: from the current holder only, at most one,
    /// nothing accepted after it, and the stored row is its.
    fn completions(&self, job: &str, row: Option<&Job>, rows_read: bool) -> Vec<Violation> {
        let completes: Vec<(usize, &Call)> = self
            .each()
            .filter(|(_, call)| matches!(call.operation, Operation::Complete { .. }))
            .collect();
        let (mut found, first_done) = self.accepted_completions(job, &completes);
        if let Some(done) = first_done {
            found.extend(self.changed_after(job, done));
        }
        if !rows_read {
            return found;
        }
        found.extend(stored_result(job, row, &completes, first_done));
        found
    }

    /// The violations among the accepted ones of `completes` (stale, or a
    /// second one), and the first accepted, if one was.
    fn accepted_completions<'c>(
        &self,
        job: &str,
        completes: &[(usize, &'c Call)],
    ) -> (Vec<Violation>, Option<(usize, &'c Call)>) {
        let grants = self.grants();
        let mut found = Vec::new();
        let mut first_done: Option<(usize, &Call)> = None;
        for (index, call) in completes.iter().copied().filter(|(_, call)| accepted(call)) {
            let Operation::Complete { owner, fence, .. } = &call.operation else {
                continue;
            };
            found.extend(self.stale_completion(job, &grants, index, call));
            match first_done {
                None => first_done = Some((index, call)),
                Some((done, _)) => found.push(Violation {
                    property: Property::DoneChanged,
                    step: Property::DoneChanged.step(),
                    job: Some(job.into()),
                    calls: vec![done, index],
                    text: format!("a second completion was accepted, {owner}'s with fence {fence}"),
                }),
            }
        }
        (found, first_done)
    }

    /// The violation of the accepted completion `call` (at `index`) when
    /// it did not come from the current holder: a claim among `grants` had
    /// handed out a newer fence before it began, or no claim handed its
    /// owner its fence (and none of the owner's claims has an unknown
    /// outcome). `None` when it did.
    fn stale_completion(
        &self,
        job: &str,
        grants: &[(usize, &Call, Fence)],
        index: usize,
        call: &Call,
    ) -> Option<Violation> {
        let Operation::Complete { owner, fence, .. } = &call.operation else {
            return None;
        };
        let handed = grants
            .iter()
            .any(|(_, claim, f)| f == fence && owner_of(&claim.operation) == Some(owner));
        let unknown_claim_by_owner = self.each().any(|(_, claim)| {
            matches!(&claim.operation, Operation::Claim { owner: o, .. } if o == owner)
                && claim.returned == Returned::Unknown
        });
        if let Some((newer, claim, f)) = grants
            .iter()
            .find(|(_, claim, f)| f > fence && end(claim) < call.began)
        {
            Some(Violation {
                property: Property::StaleCompletion,
                step: Property::StaleCompletion.step(),
                job: Some(job.into()),
                calls: vec![*newer, index],
                text: format!(
                    "{owner}'s completion with fence {fence} was accepted after {} had been handed fence {f}",
                    claim.worker_name()
                ),
            })
        } else if !handed && !unknown_claim_by_owner {
            Some(Violation {
                property: Property::UnhandedFence,
                step: Property::UnhandedFence.step(),
                job: Some(job.into()),
                calls: vec![index],
                text: format!(
                    "{owner}'s completion with fence {fence} was accepted, but no claim handed {owner} that fence: this store takes the token alone as the credential, whoever sends it"
                ),
            })
        } else {
            None
        }
    }

    /// The calls that changed the job after its first accepted completion
    /// `(done, completion)` returned: a claim handed a fence, an accepted
    /// renew or release.
    fn changed_after(&self, job: &str, (done, completion): (usize, &Call)) -> Vec<Violation> {
        let mut found = Vec::new();
        for (index, call) in self.each() {
            let changed = call.began > end(completion)
                && match &call.operation {
                    Operation::Claim { .. } => granted(call).is_some(),
                    Operation::Renew { .. } | Operation::Release { .. } => accepted(call),
                    _ => false,
                };
            if changed {
                found.push(Violation {
                    property: Property::DoneChanged,
                    step: Property::DoneChanged.step(),
                    job: Some(job.into()),
                    calls: vec![done, index],
                    text: format!("{} of the done job was accepted", call.operation.name()),
                });
            }
        }
        found
    }

    /// A job that was added is still there at the end.
    fn enqueued(&self, job: &str, row: Option<&Job>, record: &Record) -> Vec<Violation> {
        let rows_read = record.rows.is_ok();
        let added = self.each().find(|(_, call)| {
            matches!(call.operation, Operation::Enqueue { .. }) && accepted(call)
        });
        match (added, row) {
            (Some((index, _)), None) if rows_read => vec![Violation {
                property: Property::JobLost,
                step: Property::JobLost.step(),
                job: Some(job.into()),
                calls: vec![index],
                text: format!(
                    "the job was added, and {} no longer holds it",
                    record.keeper_name()
                ),
            }],
            _ => Vec::new(),
        }
    }
}

/// The result a completion stores; `None` for any other call.
fn result_of(call: &Call) -> Option<String> {
    match &call.operation {
        Operation::Complete { result, .. } => Some(result.clone()),
        _ => None,
    }
}

/// The violation of the stored `row` of `job`, read at the end, when it
/// is not what its completions (`completes`, the first accepted
/// `first_done`) left: none or one.
fn stored_result(
    job: &str,
    row: Option<&Job>,
    completes: &[(usize, &Call)],
    first_done: Option<(usize, &Call)>,
) -> Option<Violation> {
    match (first_done, row) {
        (Some(done), Some(row)) => not_the_accepted_result(job, row, completes, done),
        (None, Some(row)) if row.done || row.result.is_some() => {
            // A completion whose outcome is unknown may have stored it.
            let explained = completes
                .iter()
                .map(|(_, call)| *call)
                .filter(|call| call.returned == Returned::Unknown)
                .any(|call| row.done && row.result == result_of(call));
            (!explained).then(|| Violation {
                property: Property::WrongResult,
                step: Property::WrongResult.step(),
                job: Some(job.into()),
                calls: Vec::new(),
                text: format!(
                    "the stored row holds result {} (done: {}), but no completion was accepted",
                    quoted(row.result.as_deref()),
                    row.done
                ),
            })
        }
        _ => None,
    }
}

/// The violation of the stored `row` when it is not done with the result
/// of the first accepted completion `(index, completion)`, with the later
/// accepted ones of `completes` whose result it holds; `None` when it is.
fn not_the_accepted_result(
    job: &str,
    row: &Job,
    completes: &[(usize, &Call)],
    (index, completion): (usize, &Call),
) -> Option<Violation> {
    let expected = result_of(completion);
    if row.done && row.result == expected {
        return None;
    }
    // The later completion whose result was stored, if one.
    let mut calls = vec![index];
    calls.extend(
        completes
            .iter()
            .filter(|(other, call)| {
                *other != index && accepted(call) && result_of(call) == row.result
            })
            .map(|(other, _)| *other),
    );
    Some(Violation {
        property: Property::WrongResult,
        step: Property::WrongResult.step(),
        job: Some(job.into()),
        calls,
        text: format!(
            "the stored row is {} with result {}, not the first accepted completion's {}",
            if row.done { "done" } else { "not done" },
            quoted(row.result.as_deref()),
            quoted(expected.as_deref())
        ),
    })
}

impl Call {
    /// The worker's owner name.
    pub fn worker_name(&self) -> String {
        super::plan::owner(self.worker)
    }
}

#[cfg(test)]
mod tests;
