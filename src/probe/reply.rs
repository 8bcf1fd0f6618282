//! What a probe line expects and what its call replied: the values of a
//! row's fields, expectations, replies, and how each reads in the probe
//! language.

use super::ProbeLine;
use crate::error::{ErrorKind, StoreError};
use crate::job::{Fence, Job};
use crate::operation::{Answer, Operation};
use serde::ser::{Serialize, SerializeMap, Serializer};
use std::fmt;

/// A column of the `jobs` table, as named in probes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Field {
    /// `id`.
    Id,
    /// `owner`.
    Owner,
    /// `until`.
    Until,
    /// `fence`.
    Fence,
    /// `result`.
    Result,
    /// `done`.
    Done,
}

/// The value of one field of a stored row.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum Value {
    /// A text column; `None` is SQL NULL.
    Text(Option<String>),
    /// `until`.
    Number(f64),
    /// `fence`.
    Integer(i64),
    /// `done`.
    Bool(bool),
}

/// What a line expects its call to answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Expectation {
    /// No `->`: any answer but an error.
    Runs,
    /// `ok`: `init_db` succeeded.
    Ok,
    /// `true` or `false`.
    Bool(bool),
    /// A fence, or `none`.
    Fence(Option<Fence>),
    /// `state JOB -> none`: no such job.
    NoJob,
    /// `state JOB -> FIELD=VALUE ...`: a row with these values.
    Row(Vec<(Field, Value)>),
    /// `state JOB FIELD -> VALUE`: a row whose field has this value.
    Field(Field, Value),
    /// `claim-many ... -> [..]`: exactly these answers, in owner order.
    Fences(Vec<Option<Fence>>),
    /// `claim-many ... -> winners=K` (`one-winner` is K = 1): an answer per
    /// owner, `winners` of them fences.
    Winners {
        /// How many owners should get a fence.
        winners: usize,
        /// How many owners the line names.
        owners: usize,
    },
    /// `error` (any kind) or `error KIND`.
    Error(Option<ErrorKind>),
}

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

impl Field {
    /// The field's name in probes and in the `jobs` table.
    pub fn name(self) -> &'static str {
        match self {
            Field::Id => "id",
            Field::Owner => "owner",
            Field::Until => "until",
            Field::Fence => "fence",
            Field::Result => "result",
            Field::Done => "done",
        }
    }

    /// The field's value in a stored row.
    pub fn of(self, job: &Job) -> Value {
        match self {
            Field::Id => Value::Text(Some(job.id.clone())),
            Field::Owner => Value::Text(job.owner.clone()),
            Field::Until => Value::Number(job.until),
            Field::Fence => Value::Integer(job.fence.0),
            Field::Result => Value::Text(job.result.clone()),
            Field::Done => Value::Bool(job.done),
        }
    }
}

const ALL_FIELDS: [Field; 6] = [
    Field::Id,
    Field::Owner,
    Field::Until,
    Field::Fence,
    Field::Result,
    Field::Done,
];

/// A text as a probe writes it: bare when it reads back as the same text,
/// quoted otherwise.
fn probe_text(text: &str) -> String {
    let bare = !text.is_empty()
        && !text.contains(|c: char| c.is_whitespace() || "#\"=[],*".contains(c))
        && !text.contains("->")
        && text != "none"
        && text != "null";
    if bare {
        text.to_string()
    } else {
        let escaped = text
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\n', "\\n")
            .replace('\t', "\\t");
        format!("\"{escaped}\"")
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Text(None) => write!(f, "none"),
            Value::Text(Some(text)) => write!(f, "{}", probe_text(text)),
            Value::Number(number) => write!(f, "{number}"),
            Value::Integer(number) => write!(f, "{number}"),
            Value::Bool(flag) => write!(f, "{flag}"),
        }
    }
}

fn fence_text(fence: Option<Fence>) -> String {
    fence.map_or_else(|| "none".to_string(), |fence| fence.to_string())
}

/// Fences as a probe list, or, past eight, counted: a race of 64 owners
/// would not fit a line.
fn fences_text(fences: &[Option<Fence>]) -> String {
    if fences.len() <= 8 {
        let items: Vec<String> = fences.iter().map(|fence| fence_text(*fence)).collect();
        return format!("[{}]", items.join(", "));
    }
    let won: Vec<String> = fences.iter().flatten().map(Fence::to_string).collect();
    match won.len() {
        0 => format!("{} answers, no fence", fences.len()),
        1 => format!("{} answers, 1 fence ({})", fences.len(), won[0]),
        n => format!("{} answers, {n} fences ({})", fences.len(), won.join(", ")),
    }
}

fn row_text(job: &Job) -> String {
    ALL_FIELDS
        .iter()
        .map(|field| format!("{}={}", field.name(), field.of(job)))
        .collect::<Vec<_>>()
        .join(" ")
}

impl fmt::Display for Expectation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expectation::Runs => write!(f, "any answer but an error"),
            Expectation::Ok => write!(f, "ok"),
            Expectation::Bool(flag) => write!(f, "{flag}"),
            Expectation::Fence(fence) => write!(f, "{}", fence_text(*fence)),
            Expectation::NoJob => write!(f, "none"),
            Expectation::Row(fields) => {
                let pairs: Vec<String> = fields
                    .iter()
                    .map(|(field, value)| format!("{}={value}", field.name()))
                    .collect();
                write!(f, "{}", pairs.join(" "))
            }
            Expectation::Field(_, value) => write!(f, "{value}"),
            Expectation::Fences(fences) => write!(f, "{}", fences_text(fences)),
            Expectation::Winners { winners: 1, .. } => write!(f, "one-winner"),
            Expectation::Winners { winners, .. } => write!(f, "winners={winners}"),
            Expectation::Error(None) => write!(f, "error"),
            Expectation::Error(Some(kind)) => write!(f, "error {}", kind.name()),
        }
    }
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
            Err(error) => Reply::Error {
                kind: error.kind(),
                message: error.detail(),
            },
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
        let mut map = serializer.serialize_map(Some(1 + usize::from(value.is_some())))?;
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
    use crate::probe::parse;

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
