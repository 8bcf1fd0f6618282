//! What a probe line's call replied, whether the line's expectation
//! accepts it, and how it reads in the probe language.

use super::line::{fence_text, fences_text, row_text, Expectation, ProbeLine};
use crate::error::{ErrorKind, Faulted, StoreError};
use crate::operation::{Answer, Operation};
use serde::ser::{Serialize, SerializeMap, Serializer};

/// What one call of a probe replied.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// The operation's answer.
    Answer(Answer),
    /// The call failed.
    Error {
        /// Which error.
        kind: ErrorKind,
        /// Its message, without the database path where the error has a detail of its own.
        message: String,
    },
    /// The call panicked: the implementation crashed.
    Crash {
        /// The panic's message.
        message: String,
    },
    /// The call gave no answer before the probe's time limit.
    Timeout {
        /// The limit, in milliseconds.
        limit_ms: u64,
    },
}

impl Expectation {
    /// Whether `reply` is what this expectation accepts.
    pub fn holds(&self, reply: &Reply) -> bool {
        let answer = match reply {
            Reply::Crash { .. } | Reply::Timeout { .. } => return false,
            Reply::Error { kind, .. } => {
                return match self {
                    Expectation::Error(None) => true,
                    Expectation::Error(Some(expected)) => expected == kind,
                    _ => false,
                }
            }
            Reply::Answer(answer) => answer,
        };
        match (self, answer) {
            (Expectation::Runs, _) => true,
            (Expectation::Ok, Answer::Done) => true,
            (Expectation::Bool(expected), Answer::Bool(actual)) => expected == actual,
            (Expectation::Fence(expected), Answer::Fence(actual)) => expected == actual,
            (Expectation::NoJob, Answer::Row(None)) => true,
            (Expectation::Row(fields), Answer::Row(Some(job))) => {
                fields.iter().all(|(field, value)| field.of(job) == *value)
            }
            (Expectation::Field(field, value), Answer::Row(Some(job))) => field.of(job) == *value,
            (Expectation::Fences(expected), Answer::Fences(actual)) => expected == actual,
            (Expectation::Winners { winners, owners }, Answer::Fences(actual)) => {
                actual.len() == *owners && actual.iter().flatten().count() == *winners
            }
            _ => false,
        }
    }
}

impl Reply {
    /// The reply of a call that returned.
    pub fn of(result: Result<Answer, StoreError>) -> Reply {
        match result {
            Ok(answer) => Reply::Answer(answer),
            Err(StoreError::Fault(Faulted { message, hang })) => Reply::of_fault(message, hang),
            Err(error) => Reply::Error {
                kind: error.kind(),
                message: error.detail(),
            },
        }
    }

    /// The reply of a program that failed to answer: a timeout when it
    /// hung, a crash saying what it did otherwise.
    pub fn of_fault(message: String, hang: Option<std::time::Duration>) -> Reply {
        match hang {
            Some(limit) => Reply::Timeout {
                limit_ms: u64::try_from(limit.as_millis()).unwrap_or(u64::MAX),
            },
            None => Reply::Crash { message },
        }
    }

    /// The reply of a call that panicked (a bug of a store compiled into
    /// the lab): a crash.
    pub fn of_panic(payload: &(dyn std::any::Any + Send)) -> Reply {
        Reply::Crash {
            message: crate::runner::panic_text(payload),
        }
    }

    /// Whether two replies say the same thing: errors of the same kind (the
    /// messages name different temporary files), and `claim_many` answers
    /// with the same fences in any order (which owner wins a race is not
    /// part of the contract).
    pub fn agrees_with(&self, other: &Reply) -> bool {
        match (self, other) {
            (Reply::Error { kind: a, .. }, Reply::Error { kind: b, .. }) => a == b,
            (Reply::Answer(Answer::Fences(a)), Reply::Answer(Answer::Fences(b))) => {
                let (mut a, mut b) = (a.clone(), b.clone());
                a.sort_unstable();
                b.sort_unstable();
                a == b
            }
            (Reply::Crash { .. }, Reply::Crash { .. }) => true,
            _ => self == other,
        }
    }
}

/// A reply as `{"answer": KIND, "value": ...}`: `ok` (no value), `bool`,
/// `fence` (a number or null), `row` (an object or null), `fences`,
/// `error` (`{kind, message}`), `crash` (`{message}`) or `timeout`
/// (`{limit_ms}`).
impl Serialize for Reply {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (tag, value) = match self {
            Reply::Answer(Answer::Done) => ("ok", None),
            Reply::Answer(answer @ Answer::Bool(_)) => ("bool", Some(answer.to_json())),
            Reply::Answer(answer @ Answer::Fence(_)) => ("fence", Some(answer.to_json())),
            Reply::Answer(answer @ Answer::Row(_)) => ("row", Some(answer.to_json())),
            Reply::Answer(answer @ Answer::Fences(_)) => ("fences", Some(answer.to_json())),
            Reply::Error { kind, message } => (
                "error",
                Some(serde_json::json!({"kind": kind, "message": message})),
            ),
            Reply::Crash { message } => ("crash", Some(serde_json::json!({"message": message}))),
            Reply::Timeout { limit_ms } => {
                ("timeout", Some(serde_json::json!({"limit_ms": limit_ms})))
            }
        };
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("answer", tag)?;
        if let Some(value) = value {
            map.serialize_entry("value", &value)?;
        }
        map.end()
    }
}

impl ProbeLine {
    /// A reply to this line's call, in the probe language where it can
    /// be: the field alone for `state JOB FIELD`.
    pub fn show(&self, reply: &Reply) -> String {
        match reply {
            Reply::Answer(answer) => match answer {
                Answer::Done => "ok".into(),
                Answer::Bool(flag) => flag.to_string(),
                Answer::Fence(fence) => fence_text(*fence),
                Answer::Row(None) => match (&self.operation, self.field) {
                    (Operation::State { .. }, Some(_)) => "no such job".into(),
                    _ => "none".into(),
                },
                Answer::Row(Some(job)) => match self.field {
                    Some(field) => field.of(job).to_string(),
                    None => row_text(job),
                },
                Answer::Fences(fences) => fences_text(fences),
            },
            Reply::Error { kind, message } => format!("error {} ({message})", kind.name()),
            Reply::Crash { message } => format!("a crash: {message}"),
            Reply::Timeout { limit_ms } => format!("no answer within {limit_ms} ms"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::{Fence, Job};
    use crate::probe::{parse, Field, Value};

    fn one(line: &str) -> ProbeLine {
        parse("t.probe", line).unwrap().lines[1].clone()
    }

    #[test]
    fn expectations_accept_only_their_replies() {
        let row = Job {
            id: "j".into(),
            owner: Some("A".into()),
            until: 10.0,
            fence: Fence(1),
            result: None,
            done: false,
        };
        let fences = |fences: Vec<Option<i64>>| {
            Reply::Answer(Answer::Fences(
                fences.into_iter().map(|f| f.map(Fence)).collect(),
            ))
        };
        let winners = Expectation::Winners {
            winners: 1,
            owners: 3,
        };
        let list = Expectation::Fences(vec![Some(Fence(1)), None]);
        assert!(list.holds(&fences(vec![Some(1), None])));
        assert!(!list.holds(&fences(vec![None, Some(1)])));
        assert!(!list.holds(&fences(vec![Some(1), None, None])));
        assert!(winners.holds(&fences(vec![None, Some(1), None])));
        assert!(!winners.holds(&fences(vec![Some(1)])));
        assert!(!winners.holds(&fences(vec![Some(1), Some(2), None])));
        let owner = Expectation::Row(vec![(Field::Owner, Value::Text(Some("A".into())))]);
        assert!(owner.holds(&Reply::Answer(Answer::Row(Some(row.clone())))));
        assert!(!owner.holds(&Reply::Answer(Answer::Row(None))));
        let error = |kind| Reply::Error {
            kind,
            message: String::new(),
        };
        assert!(!Expectation::Runs.holds(&error(ErrorKind::Sqlite)));
        assert!(!Expectation::Error(None).holds(&Reply::Crash {
            message: String::new()
        }));
        assert!(Expectation::Error(None).holds(&error(ErrorKind::Busy)));
        assert!(!Expectation::Error(Some(ErrorKind::Busy)).holds(&error(ErrorKind::Other)));
        assert!(!Expectation::Bool(true).holds(&error(ErrorKind::Busy)));
    }

    /// Two replies agree when they say the same: errors by their kind (the
    /// messages name different files), crashes whatever their message.
    #[test]
    fn replies_agree_on_what_they_say_not_on_their_messages() {
        let error = |kind, message: &str| Reply::Error {
            kind,
            message: message.into(),
        };
        let busy = error(ErrorKind::Busy, "/tmp/a.db is locked");
        assert!(busy.agrees_with(&error(ErrorKind::Busy, "/tmp/b.db is locked")));
        assert!(!busy.agrees_with(&error(ErrorKind::Other, "/tmp/a.db is locked")));
        let crash = |message: &str| Reply::Crash {
            message: message.into(),
        };
        assert!(crash("index out of bounds").agrees_with(&crash("attempt to subtract")));
        assert!(!crash("boom").agrees_with(&busy));
    }

    #[test]
    fn shows_replies_as_a_probe_would_write_them() {
        let line = one("state j -> none");
        let job = Job {
            id: "j".into(),
            result: Some("two words".into()),
            ..Job::default()
        };
        assert_eq!(
            line.show(&Reply::Answer(Answer::Row(Some(job.clone())))),
            r#"id=j owner=none until=0 fence=0 result="two words" done=false"#
        );
        assert_eq!(
            one("state j result -> none").show(&Reply::Answer(Answer::Row(Some(job)))),
            r#""two words""#
        );
        assert_eq!(
            one("state j owner -> A").show(&Reply::Answer(Answer::Row(None))),
            "no such job"
        );
        assert_eq!(
            line.show(&Reply::Answer(Answer::Fences(vec![Some(Fence(1)), None]))),
            "[1, none]"
        );
        let many: Vec<Option<Fence>> = (0..64).map(|i| (i < 2).then_some(Fence(i + 1))).collect();
        assert_eq!(
            line.show(&Reply::Answer(Answer::Fences(many))),
            "64 answers, 2 fences (1, 2)"
        );
    }

    #[test]
    fn race_replies_agree_in_any_order() {
        let fences = |fences: [Option<i64>; 3]| {
            Reply::Answer(Answer::Fences(
                fences.into_iter().map(|f| f.map(Fence)).collect(),
            ))
        };
        let a = fences([Some(1), None, None]);
        assert!(a.agrees_with(&fences([None, None, Some(1)])));
        assert!(!a.agrees_with(&fences([Some(1), Some(2), None])));
    }

    #[test]
    fn replies_serialise_with_their_kind_and_value() {
        let json = |reply: Reply| serde_json::to_value(reply).unwrap();
        assert_eq!(
            json(Reply::Answer(Answer::Done)),
            serde_json::json!({"answer": "ok"})
        );
        assert_eq!(
            json(Reply::Answer(Answer::Fence(Some(Fence(2))))),
            serde_json::json!({"answer": "fence", "value": 2})
        );
        assert_eq!(
            json(Reply::Error {
                kind: ErrorKind::InvalidArgument,
                message: "m".into()
            }),
            serde_json::json!({"answer": "error", "value": {"kind": "invalid-argument", "message": "m"}})
        );
        assert_eq!(
            json(Reply::Timeout { limit_ms: 5 }),
            serde_json::json!({"answer": "timeout", "value": {"limit_ms": 5}})
        );
    }
}
