//! A check run step by step, stopping at the first step that hangs or
//! crashes: what a hang or a crash is blamed on is then always the same
//! step, the same operation and the same line, run after run (the tests of
//! all steps at once would meet a hang in `claim` first in whichever test
//! happened to start first, step 8's as often as step 4's). The steps after
//! it are not run; each says whether it is written, by asking its own
//! operation once on its own. And a failure that only repeats an error an
//! earlier step showed is told apart, so that the error is shown once.

use super::{StepResult, StepStatus};
use crate::frame::Unanswered;
use crate::job::Fence;
use crate::job_store::JobStore;
use crate::operation::Operation;
use crate::outcome::{Outcome as TestOutcome, TestRun, NOT_RUN};
use crate::suite::Case;
use crate::variant::Variant;
use std::path::Path;
use std::time::Duration;

/// Why a step's tests did not all run to their end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Halt {
    /// A test of this step hung or crashed: the check stopped here.
    Here(Stop),
    /// The check stopped at an earlier step: this one was not run.
    Earlier {
        /// The step that stopped it.
        step: u8,
        /// Whether that step hung (else it crashed).
        hung: bool,
    },
}

/// Where a check stopped: the test, whether it hung (else the program
/// crashed: it ended, or broke the protocol), the call it left unanswered
/// when the lab knows it, and the test's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stop {
    /// The test that hung or crashed.
    pub test: &'static str,
    /// Whether it hung.
    pub hung: bool,
    /// The call left unanswered, and where it hung.
    pub unanswered: Option<Unanswered>,
    /// What the test's outcome said.
    pub outcome: TestOutcome,
}

impl Halt {
    /// `hangs` or `crashes`, as a step's line says it.
    pub fn verb(&self) -> &'static str {
        let hung = match self {
            Halt::Here(stop) => stop.hung,
            Halt::Earlier { hung, .. } => *hung,
        };
        if hung {
            "hangs"
        } else {
            "crashes"
        }
    }
}

/// Whether a test's run stops a check: it ran out of time, or the program
/// crashed in it (a test the lab stopped, not run, does not).
pub fn stops(run: &TestRun) -> bool {
    match &run.outcome {
        TestOutcome::Timeout { .. } => true,
        TestOutcome::Crash { .. } => run.outcome.not_run().is_none(),
        _ => false,
    }
}

/// The stop a run of a step's tests came to, if it did: the first of its
/// tests in suite order that hung or crashed.
pub fn stop_of(runs: &[TestRun], tests: &[&'static Case]) -> Option<Stop> {
    tests.iter().find_map(|case| {
        let run = runs.iter().find(|run| run.test == case.name)?;
        stops(run).then(|| Stop {
            test: case.name,
            hung: matches!(run.outcome, TestOutcome::Timeout { .. }),
            unanswered: run.unanswered.clone(),
            outcome: run.outcome.clone(),
        })
    })
}

/// The runs of `tests`, none of them run, since step `step` stopped the
/// check (`hung`, or crashed).
pub fn not_run_after(tests: &[&'static Case], step: u8, hung: bool) -> Vec<TestRun> {
    let how = if hung { "hangs" } else { "crashes" };
    tests
        .iter()
        .map(|case| {
            TestRun::new(
                case.name,
                TestOutcome::Crash {
                    message: format!("{NOT_RUN}step {step} {how}: the check stopped there"),
                },
                Duration::ZERO,
            )
        })
        .collect()
}

/// How long the operation of a step not run may take to say whether it is
/// written: a stub answers at once.
const ASKED_ALONE: Duration = Duration::from_millis(750);

/// What the operation of `step` answers when asked on its own, once, by a
/// fresh run of the program (on a database that does not exist, in
/// `scratch`), when it answers that it is not written: its words. `None`
/// when it answers anything else, or nothing in time, or the
/// implementation is no program.
pub fn not_written(variant: &Variant, step: u8, scratch: &Path) -> Option<String> {
    let store = variant.open_program(ASKED_ALONE)?;
    let folder = tempfile::Builder::new()
        .prefix("lease-lab-")
        .tempdir_in(scratch)
        .ok()?;
    let db = folder.path().join("jobs.db");
    let answered = store.call(&db, &operation_of(step)?);
    store.abandon();
    match answered {
        Err(error) if error.kind() == crate::error::ErrorKind::NotImplemented => {
            Some(error.detail())
        }
        _ => None,
    }
}

/// A call of `step`'s own operation, with plain arguments.
fn operation_of(step: u8) -> Option<Operation> {
    let job = || "j".to_string();
    Some(match step {
        1 => Operation::InitDb,
        2 => Operation::Enqueue { job_id: job() },
        3 => Operation::State { job_id: job() },
        4 => Operation::Claim {
            job_id: job(),
            owner: "A".into(),
            now: 100.0,
            ttl: 10.0,
        },
        5 => Operation::Renew {
            job_id: job(),
            owner: "A".into(),
            fence: Fence(1),
            now: 100.0,
            ttl: 10.0,
        },
        6 => Operation::Complete {
            job_id: job(),
            owner: "A".into(),
            fence: Fence(1),
            now: 100.0,
            result: "r".into(),
        },
        7 => Operation::Release {
            job_id: job(),
            owner: "A".into(),
            fence: Fence(1),
        },
        8 => Operation::ClaimMany {
            job_id: job(),
            owners: vec!["A".into()],
            now: 100.0,
            ttl: 10.0,
        },
        _ => return None,
    })
}

/// The earlier step whose error every failure of `step` only repeats: each
/// failed on an error the program raised, the same error (its words and
/// the innermost place it was raised) as a failure of that earlier step
/// shows. `None` when any failure is its own.
pub fn repeats(step: &StepResult, earlier: &[StepResult]) -> Option<u8> {
    if step.failures.is_empty() || step.status != StepStatus::Failing {
        return None;
    }
    let mut first = None;
    for (name, outcome) in &step.failures {
        let error = raised_error(step, name, outcome)?;
        let shown = earlier.iter().find(|before| {
            before.repeats.is_none()
                && before.failures.iter().any(|(name, outcome)| {
                    raised_error(before, name, outcome) == Some(error.clone())
                })
        })?;
        first = Some(first.map_or(shown.step, |step: u8| step.min(shown.step)));
    }
    first
}

/// The error a failed test of `step` answered, with where it was raised
/// (innermost frame), when the program raised it: what makes two failures
/// the same error.
fn raised_error(
    step: &StepResult,
    name: &str,
    outcome: &TestOutcome,
) -> Option<(String, Option<crate::frame::Frame>)> {
    let TestOutcome::Fail { actual, .. } = outcome else {
        return None;
    };
    let raised = step.raised.get(name)?;
    let found = raised.iter().rev().find(|raised| &raised.error == actual)?;
    Some((actual.clone(), found.frames.last().cloned()))
}

#[cfg(test)]
mod tests;
