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
mod tests {
    use super::*;
    use crate::chaos::testing::{claim, complete, enqueue, record, row};

    fn properties(record: &Record) -> Vec<Property> {
        check(record)
            .iter()
            .map(|violation| violation.property)
            .collect()
    }

    /// The longest valid prefix is said in words, one call in the
    /// singular and none as none.
    #[test]
    fn the_longest_valid_prefix_is_said_in_words() {
        let calls = vec![
            enqueue(0),
            claim(0, 10, 1.0, Some(1)),
            claim(1, 20, 5.0, Some(2)),
        ];
        let judged = |breaking: Option<usize>| {
            crate::chaos::judge::Judgement::with(
                record(calls.clone(), vec![row("w2", 2, false)]),
                breaking
                    .map(|call| Violation {
                        property: Property::FenceTwice,
                        step: 4,
                        job: Some("j".into()),
                        calls: vec![call],
                        text: String::new(),
                    })
                    .into_iter()
                    .collect(),
                crate::chaos::linearize::check(&calls, 1000),
            )
        };
        assert_eq!(
            judged(Some(0)).valid_prefix_text(),
            "none of this run's calls"
        );
        assert_eq!(
            judged(Some(1)).valid_prefix_text(),
            "the first call of this run"
        );
        assert_eq!(
            judged(Some(2)).valid_prefix_text(),
            "the first 2 calls of this run"
        );
        assert_eq!(
            judged(None).valid_prefix_text(),
            "the first 3 calls of this run"
        );
    }

    #[test]
    fn a_sound_history_breaks_nothing() {
        let calls = vec![
            enqueue(0),
            claim(0, 10, 1.0, Some(1)),
            claim(1, 20, 5.0, Some(2)),
            complete(0, 30, 1, false),
            complete(1, 40, 2, true),
        ];
        assert_eq!(properties(&record(calls, vec![row("w2", 2, true)])), vec![]);
    }

    #[test]
    fn a_fence_handed_out_twice_is_found() {
        let calls = vec![
            enqueue(0),
            claim(0, 10, 1.0, Some(1)),
            claim(1, 20, 5.0, Some(1)),
        ];
        let found = check(&record(calls, vec![row("w2", 1, false)]));
        assert_eq!(found[0].property, Property::FenceTwice);
        assert_eq!(found[0].calls, vec![1, 2]);
    }

    #[test]
    fn a_fence_going_down_is_found() {
        let calls = vec![
            enqueue(0),
            claim(0, 10, 1.0, Some(3)),
            claim(1, 20, 5.0, Some(2)),
        ];
        assert_eq!(
            properties(&record(calls, vec![row("w2", 2, false)])),
            vec![Property::FenceDown]
        );
    }

    #[test]
    fn a_completion_with_a_fence_never_handed_to_its_worker_breaks_the_contract_not_fencing() {
        // w1 holds fence 1; w2, never handed it, completes with it.
        let calls = vec![
            enqueue(0),
            claim(0, 10, 1.0, Some(1)),
            complete(1, 30, 1, true),
        ];
        let mut stored = row("w2", 1, true);
        stored.owner = Some("w1".into());
        let found = check(&record(calls, vec![stored]));
        assert_eq!(found[0].property, Property::UnhandedFence);
        assert_eq!(
            found[0].text,
            "w2's completion with fence 1 was accepted, but no claim handed w2 that fence: \
             this store takes the token alone as the credential, whoever sends it"
        );
        assert!(!Property::UnhandedFence.breaks_fencing());
        for fencing in [
            Property::FenceTwice,
            Property::FenceDown,
            Property::StaleCompletion,
            Property::DoneChanged,
        ] {
            assert!(fencing.breaks_fencing(), "{fencing:?}");
        }
        for contract in [
            Property::WrongResult,
            Property::JobLost,
            Property::Integrity,
            Property::CallFailed,
            Property::NotLinearizable,
        ] {
            assert!(!contract.breaks_fencing(), "{contract:?}");
        }
    }

    /// A finding's headline fits one line of the text report's 80 columns
    /// on a job of the first hundred, and is filled to them on any.
    #[test]
    fn every_headline_fits_80_columns() {
        for property in [
            Property::FenceTwice,
            Property::FenceDown,
            Property::StaleCompletion,
            Property::UnhandedFence,
            Property::WrongResult,
            Property::DoneChanged,
            Property::JobLost,
            Property::Integrity,
            Property::CallFailed,
            Property::NotLinearizable,
        ] {
            let headline = |job: &str| {
                crate::terminal::fill(
                    &format!("✗ {} (step {}), on {job}", property.text(), property.step()),
                    80,
                    "",
                    "  ",
                )
            };
            assert_eq!(
                headline("job-99").lines().count(),
                1,
                "{}",
                headline("job-99")
            );
            let long = headline("job-123456");
            assert!(
                long.lines().all(|line| line.chars().count() <= 80),
                "{long}"
            );
        }
    }

    #[test]
    fn a_stale_completion_and_the_result_it_leaves_are_found() {
        let calls = vec![
            enqueue(0),
            claim(0, 10, 1.0, Some(1)),
            claim(1, 20, 5.0, Some(2)),
            complete(0, 30, 1, true),
        ];
        let mut stored = row("w1", 2, true);
        stored.result = Some("w1/1".into());
        let found = properties(&record(calls, vec![stored]));
        assert_eq!(found, vec![Property::StaleCompletion]);
        let calls = vec![
            enqueue(0),
            claim(0, 10, 1.0, Some(1)),
            complete(0, 30, 1, true),
        ];
        assert_eq!(
            properties(&record(calls, vec![row("w1", 1, false)])),
            vec![Property::WrongResult]
        );
    }

    #[test]
    fn a_done_job_changing_and_a_lost_job_are_found() {
        let calls = vec![
            enqueue(0),
            claim(0, 10, 1.0, Some(1)),
            complete(0, 20, 1, true),
            claim(1, 30, 9.0, Some(2)),
        ];
        let found = properties(&record(calls.clone(), vec![row("w1", 1, true)]));
        assert_eq!(found, vec![Property::DoneChanged]);
        assert_eq!(
            properties(&record(calls[..1].to_vec(), vec![])),
            vec![Property::JobLost]
        );
    }

    /// A lost job is found in the file at the end: the timeline shows its
    /// calls after the enqueue too, one of which took the row away, and
    /// a shrink keeps the calls through the run's end.
    #[test]
    fn a_lost_job_shows_every_call_on_it() {
        let calls = vec![
            enqueue(0),
            claim(0, 10, 1.0, Some(1)),
            complete(0, 20, 1, true),
            claim(1, 30, 9.0, None),
        ];
        let judged = crate::chaos::judge::Judgement::of(record(calls, vec![]));
        assert_eq!(judged.culprits(), vec![0]);
        assert_eq!(judged.shown(), vec![0, 1, 2, 3]);
        assert_eq!(judged.not_shown(), 0);
    }

    /// A claim whose worker was killed may have taken the fence the stored
    /// row shows: an unknown outcome is never counted on.
    #[test]
    fn an_unknown_call_explains_what_it_may_have_done() {
        let mut killed = complete(0, 30, 1, true);
        killed.returned = Returned::Unknown;
        killed.ended = None;
        let calls = vec![enqueue(0), claim(0, 10, 1.0, Some(1)), killed];
        assert_eq!(properties(&record(calls, vec![row("w1", 1, true)])), vec![]);
    }

    #[test]
    fn a_damaged_file_is_found() {
        let mut damaged = record(vec![], vec![]);
        damaged.integrity = "*** in database main ***".into();
        assert_eq!(properties(&damaged), vec![Property::Integrity]);
    }

    /// Every property, in the order of [`Property`].
    const PROPERTIES: [Property; 10] = [
        Property::FenceTwice,
        Property::FenceDown,
        Property::StaleCompletion,
        Property::UnhandedFence,
        Property::WrongResult,
        Property::DoneChanged,
        Property::JobLost,
        Property::Integrity,
        Property::CallFailed,
        Property::NotLinearizable,
    ];

    /// `call` as it is recorded when its worker is killed during it: no
    /// answer, no end.
    fn killed(mut call: Call) -> Call {
        call.returned = Returned::Unknown;
        call.ended = None;
        call
    }

    /// `worker`'s renewal of `j` with `fence` at `at`, answered `answer`.
    fn renew(worker: usize, at: u64, fence: i64, answer: bool) -> Call {
        crate::chaos::testing::call(
            worker,
            at,
            Operation::Renew {
                job_id: "j".into(),
                owner: crate::chaos::plan::owner(worker),
                fence: Fence(fence),
                now: 2.0,
                ttl: 2.0,
            },
            Returned::Answer(Answer::Bool(answer)),
        )
    }

    /// `worker`'s release of `j` with `fence` at `at`, answered `answer`.
    fn release(worker: usize, at: u64, fence: i64, answer: bool) -> Call {
        crate::chaos::testing::call(
            worker,
            at,
            Operation::Release {
                job_id: "j".into(),
                owner: crate::chaos::plan::owner(worker),
                fence: Fence(fence),
            },
            Returned::Answer(Answer::Bool(answer)),
        )
    }

    /// Each finding belongs to the worksheet step whose contract it breaks:
    /// the fences to claim (4), the completion's rules to complete (6), a
    /// lost job to enqueue (2), a damaged file and a failed call to the
    /// first (1), and answers no order explains to claim (4).
    #[test]
    fn each_property_belongs_to_the_step_whose_contract_it_breaks() {
        let steps: Vec<u8> = PROPERTIES.iter().map(|property| property.step()).collect();
        assert_eq!(steps, [4, 4, 6, 6, 6, 6, 2, 1, 1, 4]);
    }

    /// Each property is said in words of its own: no two findings read
    /// alike, and none is blank.
    #[test]
    fn each_property_is_said_in_words_of_its_own() {
        let texts: std::collections::BTreeSet<&str> =
            PROPERTIES.iter().map(|property| property.text()).collect();
        assert_eq!(texts.len(), PROPERTIES.len(), "{texts:?}");
        assert!(texts.iter().all(|text| !text.trim().is_empty()));
    }

    /// A fence handed out twice names who was handed it: one worker twice,
    /// or the two workers.
    #[test]
    fn a_fence_handed_out_twice_names_who_was_handed_it() {
        let twice = |second: usize| {
            let calls = vec![
                enqueue(0),
                claim(0, 10, 1.0, Some(1)),
                claim(second, 20, 5.0, Some(1)),
            ];
            check(&record(calls, vec![row("w1", 1, false)]))
        };
        assert_eq!(twice(1)[0].text, "w1 and w2 were both handed fence 1");
        assert_eq!(twice(0)[0].text, "w1 was handed fence 1 twice");
    }

    /// Two calls whose intervals only touch (one ended at the nanosecond the
    /// other began) may have run in either order, as the model check takes
    /// them: a lower fence handed to a claim that began as the higher one's
    /// ended has not gone down, a completion that began as a newer claim
    /// ended is not stale, and a claim that began as the completion ended
    /// has not changed a done job.
    #[test]
    fn calls_whose_intervals_only_touch_may_have_run_in_either_order() {
        // `claim(_, at, ..)` and `complete(_, at, ..)` end at `at + 1`.
        let lower = vec![
            enqueue(0),
            claim(0, 10, 1.0, Some(3)),
            claim(1, 11, 5.0, Some(2)),
        ];
        assert_eq!(
            properties(&record(lower.clone(), vec![row("w2", 2, false)])),
            vec![]
        );
        let mut after = lower;
        after[2].began = 12;
        assert_eq!(
            properties(&record(after, vec![row("w2", 2, false)])),
            vec![Property::FenceDown]
        );

        let late = |began| {
            vec![
                enqueue(0),
                claim(0, 10, 1.0, Some(1)),
                claim(1, 20, 5.0, Some(2)),
                complete(0, began, 1, true),
            ]
        };
        assert_eq!(
            properties(&record(late(21), vec![row("w1", 1, true)])),
            vec![]
        );
        assert_eq!(
            properties(&record(late(22), vec![row("w1", 1, true)])),
            vec![Property::StaleCompletion]
        );

        let claim_after_done = |began| {
            vec![
                enqueue(0),
                claim(0, 10, 1.0, Some(1)),
                complete(0, 20, 1, true),
                claim(1, began, 9.0, Some(2)),
            ]
        };
        assert_eq!(
            properties(&record(claim_after_done(21), vec![row("w1", 1, true)])),
            vec![]
        );
        assert_eq!(
            properties(&record(claim_after_done(22), vec![row("w1", 1, true)])),
            vec![Property::DoneChanged]
        );
    }

    /// Once the job is done, an accepted renewal or release changes it, as
    /// a claim handed a fence does; a refused one changes nothing.
    #[test]
    fn a_renewal_or_release_accepted_after_the_completion_changes_a_done_job() {
        for (late, changed) in [
            (renew(0, 30, 1, true), true),
            (release(0, 30, 1, true), true),
            (renew(0, 30, 1, false), false),
            (release(0, 30, 1, false), false),
        ] {
            let calls = vec![
                enqueue(0),
                claim(0, 10, 1.0, Some(1)),
                complete(0, 20, 1, true),
                late.clone(),
            ];
            let found = check(&record(calls, vec![row("w1", 1, true)]));
            let expected: Vec<Violation> = if changed {
                vec![Violation {
                    property: Property::DoneChanged,
                    step: 6,
                    job: Some("j".into()),
                    calls: vec![2, 3],
                    text: format!("{} of the done job was accepted", late.operation.name()),
                }]
            } else {
                Vec::new()
            };
            assert_eq!(found, expected, "{late:?}");
        }
    }

    /// A claim of unknown outcome may have handed its worker the fence that
    /// worker then completes with; another worker's unknown claim handed
    /// this one nothing.
    #[test]
    fn only_the_workers_own_unknown_claim_explains_its_unhanded_fence() {
        let completed_after = |claimer: usize| {
            let calls = vec![
                enqueue(0),
                killed(claim(claimer, 10, 1.0, None)),
                complete(0, 30, 1, true),
            ];
            properties(&record(calls, vec![row("w1", 1, true)]))
        };
        assert_eq!(completed_after(0), vec![]);
        assert_eq!(completed_after(1), vec![Property::UnhandedFence]);
    }

    /// A lost job's finding names the enqueue that added the job, not one
    /// answered `false` that found it there; and when the rows could not
    /// be read at the end, that is the finding, not a job lost.
    #[test]
    fn a_lost_job_is_named_by_the_enqueue_that_added_it_and_only_when_the_rows_were_read() {
        let refused = crate::chaos::testing::call(
            1,
            0,
            Operation::Enqueue { job_id: "j".into() },
            Returned::Answer(Answer::Bool(false)),
        );
        let found = check(&record(vec![refused, enqueue(1)], vec![]));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].property, Property::JobLost);
        assert_eq!(found[0].calls, vec![1]);
        assert_eq!(
            found[0].text,
            "the job was added, and the file no longer holds it"
        );

        let mut unread = record(vec![enqueue(0)], vec![]);
        unread.rows = Err("disk I/O error".into());
        assert_eq!(properties(&unread), vec![Property::Integrity]);
    }

    /// With no completion accepted, a stored row that is done, or that
    /// holds a result, is a wrong result, whichever of the two it shows;
    /// a completion of unknown outcome explains only a done row holding
    /// its own result.
    #[test]
    fn a_row_done_or_holding_a_result_with_no_completion_accepted_is_wrong() {
        let calls = vec![enqueue(0), claim(0, 10, 1.0, Some(1))];
        let mut done_only = row("w1", 1, true);
        done_only.result = None;
        let mut result_only = row("w1", 1, false);
        result_only.result = Some("w1/1".into());
        for stored in [done_only, result_only.clone()] {
            let found = check(&record(calls.clone(), vec![stored.clone()]));
            assert_eq!(found.len(), 1, "{stored:?}: {found:?}");
            assert_eq!(found[0].property, Property::WrongResult);
        }
        assert_eq!(
            check(&record(calls.clone(), vec![result_only]))[0].text,
            "the stored row holds result \"w1/1\" (done: false), but no completion was accepted"
        );

        let mut with_killed = calls;
        with_killed.push(killed(complete(0, 30, 1, true)));
        let mut other_result = row("w1", 1, true);
        other_result.result = Some("w2/7".into());
        let mut not_done = row("w1", 1, false);
        not_done.result = Some("w1/1".into());
        for stored in [other_result, not_done] {
            assert_eq!(
                properties(&record(with_killed.clone(), vec![stored.clone()])),
                vec![Property::WrongResult],
                "{stored:?}"
            );
        }
        assert_eq!(
            properties(&record(with_killed, vec![row("w1", 1, true)])),
            vec![]
        );
    }

    /// A stored row that is not done with the first accepted completion's
    /// result is a wrong result, which names that completion and the later
    /// accepted ones whose result the row holds (not a refused one).
    #[test]
    fn a_wrong_result_names_the_first_accepted_completion_and_the_one_stored() {
        let calls = vec![
            enqueue(0),
            claim(0, 10, 1.0, Some(1)),
            complete(0, 20, 1, true),
            claim(1, 30, 9.0, Some(2)),
            complete(1, 40, 2, true),
            complete(1, 50, 2, false),
        ];
        let found = check(&record(calls.clone(), vec![row("w2", 2, true)]));
        let wrong: Vec<&Violation> = found
            .iter()
            .filter(|violation| violation.property == Property::WrongResult)
            .collect();
        assert_eq!(wrong.len(), 1, "{found:?}");
        assert_eq!(wrong[0].calls, vec![2, 4]);
        assert_eq!(
            wrong[0].text,
            "the stored row is done with result \"w2/2\", not the first accepted completion's \"w1/1\""
        );
        // Done with another result than any completion's: still wrong.
        let mut other = row("w1", 1, true);
        other.result = Some("w9/9".into());
        assert_eq!(
            properties(&record(calls[..3].to_vec(), vec![other])),
            vec![Property::WrongResult]
        );
    }
}
