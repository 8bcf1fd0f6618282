//! The recorded history: every call a worker made, when it began and
//! ended, and what it returned.

use crate::error::ErrorKind;
use crate::operation::{Answer, Operation};
use serde::Serialize;

/// One call of the store by one worker, as recorded.
///
/// `began` and `ended` are nanoseconds on one clock shared by every worker
/// (the recorder's, not the `now` the operation carries: the model judges a
/// lease by the operation's own `now`, and real time only orders calls).
/// `began` is taken before the call is made and `ended` after it returned,
/// so the instant the call took effect lies between them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Call {
    /// Which worker made the call.
    pub worker: usize,
    /// The operation with its arguments.
    pub operation: Operation,
    /// When the call was made.
    pub began: u64,
    /// When it returned; `None` when the worker was killed during the call.
    /// Then `returned` must be [`Returned::Unknown`]: the call may or may
    /// not have taken effect, at any time after `began` (as Jepsen's
    /// indeterminate operations).
    pub ended: Option<u64>,
    /// What it returned.
    pub returned: Returned,
}

/// A moment of a worker's story, placed among the calls: it came after the
/// calls before index `before` in the history were sent, and before any
/// call from `before` on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Noted {
    /// Whose moment.
    pub worker: usize,
    /// The index of the first call sent after it.
    pub before: usize,
    /// When, in nanoseconds on the clock of the calls' `began`.
    pub at: u64,
    /// What happened.
    #[serde(flatten)]
    pub moment: super::plan::Moment,
}

impl Noted {
    /// The job it is about, if one (a kill, a restart or a cut-off call is
    /// the worker's).
    pub fn job(&self) -> Option<&str> {
        match &self.moment {
            super::plan::Moment::Stalled { job, .. }
            | super::plan::Moment::CameBack { job, .. } => Some(job),
            super::plan::Moment::Killed
            | super::plan::Moment::Restarted
            | super::plan::Moment::CutOff
            | super::plan::Moment::Partitioned => None,
        }
    }
}

/// What a call returned.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Returned {
    /// The store answered (the answer as the lab's protocol writes it).
    Answer(#[serde(serialize_with = "answer_as_json")] Answer),
    /// The store reported an error of this kind. What that says about the
    /// call's effect is [`error_may_have_taken_effect`]'s to decide.
    Error(ErrorKind),
    /// Nobody knows: the worker died or gave up waiting. The call may have
    /// taken effect at any time after it began, even after `ended`, or
    /// never; it is never required to have.
    Unknown,
}

/// Whether a call that failed with an error of `kind` may still have
/// changed the store, so that the checker must allow both.
///
/// The store's errors promise that nothing stored was changed by the failed
/// call ([`StoreError`](crate::error::StoreError)): a busy lock or an
/// SQLite failure rolls the transaction back. So every kind but one counts
/// as "had no effect", the strict choice: a store that did change a row and
/// then reported `busy` breaks its contract, and the checker says so.
/// [`ErrorKind::InvalidArgument`] is the contract's own refusal, which the
/// model checks against the arguments. The exception is
/// [`ErrorKind::Other`]: it is what an implementation over the lab's
/// protocol gives when the program crashed or hung mid-call, which may be
/// after its commit, so its outcome is unknown.
pub fn error_may_have_taken_effect(kind: ErrorKind) -> bool {
    matches!(kind, ErrorKind::Other)
}

/// An answer as its JSON (the protocol's form: `true`, a fence or `null`,
/// a row object, a list), since [`Answer`] has no serialisation of its own.
fn answer_as_json<S: serde::Serializer>(answer: &Answer, serializer: S) -> Result<S::Ok, S::Error> {
    answer.to_json().serialize(serializer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::Fence;
    use serde_json::json;

    #[test]
    fn a_call_serialises_with_its_answer_in_the_protocols_form() {
        let call = Call {
            worker: 2,
            operation: Operation::Claim {
                job_id: "j".into(),
                owner: "A".into(),
                now: 10.0,
                ttl: 5.0,
            },
            began: 100,
            ended: Some(250),
            returned: Returned::Answer(Answer::Fence(Some(Fence(3)))),
        };
        let value = serde_json::to_value(&call).expect("a call serialises");
        assert_eq!(
            value,
            json!({
                "worker": 2,
                "operation": {"op": "claim", "job_id": "j", "owner": "A", "now": 10.0, "ttl": 5.0},
                "began": 100,
                "ended": 250,
                "returned": {"answer": 3},
            })
        );
        let killed = Call {
            ended: None,
            returned: Returned::Unknown,
            ..call.clone()
        };
        let value = serde_json::to_value(&killed).expect("a call serialises");
        assert_eq!(value["ended"], json!(null));
        assert_eq!(value["returned"], json!("unknown"));
        let busy = Call {
            returned: Returned::Error(ErrorKind::Busy),
            ..call
        };
        let value = serde_json::to_value(&busy).expect("a call serialises");
        assert_eq!(value["returned"], json!({"error": "busy"}));
    }

    #[test]
    fn only_an_error_that_may_come_after_the_commit_leaves_the_effect_open() {
        let open: Vec<ErrorKind> = ErrorKind::ALL
            .into_iter()
            .filter(|kind| error_may_have_taken_effect(*kind))
            .collect();
        assert_eq!(open, [ErrorKind::Other]);
    }
}
