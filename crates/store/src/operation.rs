//! A call of the store, described once: the operation with its arguments,
//! and what it answers.
//!
//! [`Operation`] is the single description of the eight operations. It
//! serialises to the JSON line of the lab's protocol
//! (`{"op":"claim","job_id":"j",...}`, see `labs/protocol.md`), clap
//! derives `lab db`'s subcommands from it, probe lines parse into it, and
//! every `JobStore` of the lab runs it through `call`.

use crate::job::{Fence, Job};
use serde::Serialize;
use serde_json::{json, Value};
use std::fmt;

/// A store operation with its arguments, without the database path (the
/// caller names the file, since the same operation runs against many).
#[derive(Debug, Clone, PartialEq, Serialize, clap::Subcommand)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Operation {
    /// Create the database and its jobs table if missing (idempotent).
    #[command(name = "init")]
    InitDb,
    /// Add a job; `true` if new, `false` if it existed (then unchanged).
    Enqueue {
        /// The job's id.
        #[arg(value_name = "JOB")]
        job_id: String,
    },
    /// The stored row as an object, or `null`.
    State {
        /// The job's id.
        #[arg(value_name = "JOB")]
        job_id: String,
    },
    /// Take an expired lease: the new fence, or `null`.
    Claim {
        /// The job's id.
        #[arg(value_name = "JOB")]
        job_id: String,
        /// The worker that claims.
        owner: String,
        /// The caller's clock, in seconds.
        #[arg(long, allow_negative_numbers = true)]
        now: f64,
        /// How long the lease lasts, in seconds.
        #[arg(long, allow_negative_numbers = true)]
        ttl: f64,
    },
    /// Extend the current lease: `true` or `false`.
    Renew {
        /// The job's id.
        #[arg(value_name = "JOB")]
        job_id: String,
        /// The worker that holds the lease.
        owner: String,
        /// The fence its claim returned.
        #[arg(allow_negative_numbers = true)]
        fence: Fence,
        /// The caller's clock, in seconds.
        #[arg(long, allow_negative_numbers = true)]
        now: f64,
        /// How long the renewed lease lasts from now, in seconds.
        #[arg(long, allow_negative_numbers = true)]
        ttl: f64,
    },
    /// Store the result of the current lease: `true` or `false`.
    Complete {
        /// The job's id.
        #[arg(value_name = "JOB")]
        job_id: String,
        /// The worker that holds the lease.
        owner: String,
        /// The fence its claim returned.
        #[arg(allow_negative_numbers = true)]
        fence: Fence,
        /// The caller's clock, in seconds.
        #[arg(long, allow_negative_numbers = true)]
        now: f64,
        /// The result to store.
        #[arg(long)]
        result: String,
    },
    /// Give the current lease back: `true` or `false`.
    Release {
        /// The job's id.
        #[arg(value_name = "JOB")]
        job_id: String,
        /// The worker that holds the lease.
        owner: String,
        /// The fence its claim returned.
        #[arg(allow_negative_numbers = true)]
        fence: Fence,
    },
    /// Race one claim per owner: an array of fences and nulls, in owner order.
    ClaimMany {
        /// The job's id.
        #[arg(value_name = "JOB")]
        job_id: String,
        /// The workers that claim at once.
        owners: Vec<String>,
        /// The caller's clock, in seconds.
        #[arg(long, allow_negative_numbers = true)]
        now: f64,
        /// How long the lease lasts, in seconds.
        #[arg(long, allow_negative_numbers = true)]
        ttl: f64,
    },
}

/// The eight operations' names, as the worksheet and the protocol write
/// them, in worksheet order: step N writes `NAMES[N - 1]`.
pub const NAMES: [&str; 8] = [
    "init_db",
    "enqueue",
    "state",
    "claim",
    "renew",
    "complete",
    "release",
    "claim_many",
];

impl Operation {
    /// The operation's name, as the worksheet and the protocol write it
    /// (`init_db`, `claim_many`).
    pub fn name(&self) -> &'static str {
        NAMES[usize::from(self.step()) - 1]
    }

    /// The job the operation is about; `None` for `init_db`.
    pub fn job_id(&self) -> Option<&str> {
        match self {
            Operation::InitDb => None,
            Operation::Enqueue { job_id }
            | Operation::State { job_id }
            | Operation::Claim { job_id, .. }
            | Operation::Renew { job_id, .. }
            | Operation::Complete { job_id, .. }
            | Operation::Release { job_id, .. }
            | Operation::ClaimMany { job_id, .. } => Some(job_id),
        }
    }

    /// The worksheet step that writes this operation (`init_db` 1, ...,
    /// `claim_many` 8).
    pub fn step(&self) -> u8 {
        match self {
            Operation::InitDb => 1,
            Operation::Enqueue { .. } => 2,
            Operation::State { .. } => 3,
            Operation::Claim { .. } => 4,
            Operation::Renew { .. } => 5,
            Operation::Complete { .. } => 6,
            Operation::Release { .. } => 7,
            Operation::ClaimMany { .. } => 8,
        }
    }

    /// The kind of answer this operation gives.
    pub fn answers(&self) -> AnswerKind {
        match self {
            Operation::InitDb => AnswerKind::Done,
            Operation::Enqueue { .. }
            | Operation::Renew { .. }
            | Operation::Complete { .. }
            | Operation::Release { .. } => AnswerKind::Bool,
            Operation::State { .. } => AnswerKind::Row,
            Operation::Claim { .. } => AnswerKind::Fence,
            Operation::ClaimMany { .. } => AnswerKind::Fences,
        }
    }
}

/// The call as the worksheet writes it, without the path:
/// `claim("j", "A", now=100, ttl=10)`.
impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.name();
        match self {
            Operation::InitDb => write!(f, "{name}()"),
            Operation::Enqueue { job_id } | Operation::State { job_id } => {
                write!(f, "{name}({job_id:?})")
            }
            Operation::Claim {
                job_id,
                owner,
                now,
                ttl,
            } => write!(f, "{name}({job_id:?}, {owner:?}, now={now}, ttl={ttl})"),
            Operation::Renew {
                job_id,
                owner,
                fence,
                now,
                ttl,
            } => write!(
                f,
                "{name}({job_id:?}, {owner:?}, fence={fence}, now={now}, ttl={ttl})"
            ),
            Operation::Complete {
                job_id,
                owner,
                fence,
                now,
                result,
            } => write!(
                f,
                "{name}({job_id:?}, {owner:?}, fence={fence}, now={now}, result={result:?})"
            ),
            Operation::Release {
                job_id,
                owner,
                fence,
            } => write!(f, "{name}({job_id:?}, {owner:?}, fence={fence})"),
            Operation::ClaimMany {
                job_id,
                owners,
                now,
                ttl,
            } => write!(
                f,
                "{name}({job_id:?}, {} owners, now={now}, ttl={ttl})",
                owners.len()
            ),
        }
    }
}

/// What an operation answered when it ran.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// `init_db` ran.
    Done,
    /// `enqueue`, `renew`, `complete` or `release`: whether it took effect.
    Bool(bool),
    /// `claim`: the new fence, or `None` when the lease could not be taken.
    Fence(Option<Fence>),
    /// `state`: the stored row, or `None` when no job has the id.
    Row(Option<Job>),
    /// `claim_many`: a fence or `None` per owner, in owner order.
    Fences(Vec<Option<Fence>>),
}

/// The kinds of [`Answer`], one per shape of answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerKind {
    /// [`Answer::Done`].
    Done,
    /// [`Answer::Bool`].
    Bool,
    /// [`Answer::Fence`].
    Fence,
    /// [`Answer::Row`].
    Row,
    /// [`Answer::Fences`].
    Fences,
}

impl AnswerKind {
    /// What an answer of this kind looks like in JSON, for messages.
    pub fn json_shape(self) -> &'static str {
        match self {
            AnswerKind::Done => "true",
            AnswerKind::Bool => "true or false",
            AnswerKind::Fence => "a fence (a whole number) or null",
            AnswerKind::Row => "null or an object with id, owner, until, fence, result and done",
            AnswerKind::Fences => "a list of fences and nulls, one per owner",
        }
    }
}

impl Answer {
    /// The answer as the protocol and `lab db` write it: `true` for
    /// `init_db`, a boolean, a fence or `null`, the row as an object in the
    /// schema's column order (`done` a boolean) or `null`, or a list.
    pub fn to_json(&self) -> Value {
        match self {
            Answer::Done => json!(true),
            Answer::Bool(flag) => json!(flag),
            Answer::Fence(fence) => json!(fence),
            Answer::Row(row) => json!(row),
            Answer::Fences(fences) => json!(fences),
        }
    }

    /// Reads the JSON answer to an operation whose answer is of `kind`;
    /// `Err` says what was expected. `done` may be a boolean or 0/1, and a
    /// fence or `until` any JSON number that has its value exactly.
    pub fn from_json(kind: AnswerKind, value: &Value) -> Result<Answer, BadAnswer> {
        let wrong = || Err(BadAnswer(format!("expected {}", kind.json_shape())));
        match kind {
            AnswerKind::Done => match value {
                Value::Bool(true) | Value::Null => Ok(Answer::Done),
                _ => wrong(),
            },
            AnswerKind::Bool => value.as_bool().map(Answer::Bool).map_or_else(wrong, Ok),
            AnswerKind::Fence => match fence_of(value) {
                Some(fence) => Ok(Answer::Fence(fence)),
                None => wrong(),
            },
            AnswerKind::Row => match value {
                Value::Null => Ok(Answer::Row(None)),
                // An empty object is an empty row (Python's `{}`): a wrong
                // answer the tests judge, not a broken protocol.
                Value::Object(fields) if fields.is_empty() => Ok(Answer::Row(Some(Job::default()))),
                Value::Object(_) => row_of(value)
                    .map(|row| Answer::Row(Some(row)))
                    .map_err(BadAnswer),
                _ => wrong(),
            },
            AnswerKind::Fences => {
                let Some(items) = value.as_array() else {
                    return wrong();
                };
                items
                    .iter()
                    .map(fence_of)
                    .collect::<Option<Vec<_>>>()
                    .map(Answer::Fences)
                    .map_or_else(wrong, Ok)
            }
        }
    }

    /// The kind of this answer.
    pub fn kind(&self) -> AnswerKind {
        match self {
            Answer::Done => AnswerKind::Done,
            Answer::Bool(_) => AnswerKind::Bool,
            Answer::Fence(_) => AnswerKind::Fence,
            Answer::Row(_) => AnswerKind::Row,
            Answer::Fences(_) => AnswerKind::Fences,
        }
    }
}

/// An answer that is not of the shape its operation's answers have: what
/// was expected, or what is wrong with the row.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadAnswer(pub String);

/// A fence or `null` in JSON; `None` for anything else. A fence written as
/// a float (`2.0`) is accepted when it is a whole number.
fn fence_of(value: &Value) -> Option<Option<Fence>> {
    match value {
        Value::Null => Some(None),
        Value::Number(number) => whole(number).map(|fence| Some(Fence(fence))),
        _ => None,
    }
}

fn whole(number: &serde_json::Number) -> Option<i64> {
    /// 2 to the 63rd, i64's bound, exactly representable as a float.
    const BOUND: f64 = 9_223_372_036_854_775_808.0;
    number.as_i64().or_else(|| {
        let float = number.as_f64()?;
        // The cast is exact: the value is whole and within i64's range.
        (float.fract() == 0.0 && (-BOUND..BOUND).contains(&float)).then_some(float as i64)
    })
}

/// A stored row as an object with the six columns, or why it is not one.
fn row_of(value: &Value) -> Result<Job, String> {
    let field = |name: &str| {
        value
            .get(name)
            .ok_or_else(|| format!("the row has no `{name}`"))
    };
    let text = |name: &str| -> Result<Option<String>, String> {
        match field(name)? {
            Value::Null => Ok(None),
            Value::String(text) => Ok(Some(text.clone())),
            other => Err(format!("the row's `{name}` is {other}, not a text or null")),
        }
    };
    let id = text("id")?.ok_or("the row's `id` is null")?;
    let until = field("until")?
        .as_f64()
        .ok_or("the row's `until` is not a number")?;
    let fence = match field("fence")? {
        Value::Number(number) => whole(number),
        _ => None,
    }
    .ok_or("the row's `fence` is not a whole number")?;
    let done = match field("done")? {
        Value::Bool(flag) => *flag,
        Value::Number(number) if number.as_i64() == Some(0) => false,
        Value::Number(number) if number.as_i64() == Some(1) => true,
        other => return Err(format!("the row's `done` is {other}, not a boolean or 0/1")),
    };
    Ok(Job {
        id,
        owner: text("owner")?,
        until,
        fence: Fence(fence),
        result: text("result")?,
        done,
    })
}

/// An answer with the answer's meaning, for messages: `fence 2`, `none`,
/// `true`, a row on one line, or a race summarised by its winners.
impl fmt::Display for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Answer::Done => write!(f, "done"),
            Answer::Bool(flag) => write!(f, "{flag}"),
            Answer::Fence(None) | Answer::Row(None) => write!(f, "none"),
            Answer::Fence(Some(fence)) => write!(f, "fence {fence}"),
            Answer::Row(Some(job)) => write!(f, "{}", row_text(job)),
            Answer::Fences(fences) => write!(f, "{}", fences_text(fences)),
        }
    }
}

/// A row on one line: `id "j", owner "A", until 110, fence 1, result none, not done`.
pub fn row_text(job: &Job) -> String {
    let text = |value: &Option<String>| value.as_ref().map_or("none".into(), |t| format!("{t:?}"));
    format!(
        "id {:?}, owner {}, until {}, fence {}, result {}, {}",
        job.id,
        text(&job.owner),
        job.until,
        job.fence,
        text(&job.result),
        if job.done { "done" } else { "not done" }
    )
}

/// `claim_many`'s answers in a few words: every answer when there are few,
/// else the winners (`2 winners: w03 got 5, w17 got 6; 30 got none`).
/// Owners are unnamed here; see [`race_text`] for the named form.
fn fences_text(fences: &[Option<Fence>]) -> String {
    if fences.len() <= 8 {
        let items: Vec<String> = fences
            .iter()
            .map(|fence| fence.map_or("none".to_string(), |f| f.to_string()))
            .collect();
        return format!("[{}]", items.join(", "));
    }
    let won: Vec<String> = fences.iter().flatten().map(Fence::to_string).collect();
    let none = fences.len() - won.len();
    match won.len() {
        0 => format!("{} answers, no fence", fences.len()),
        1 => format!("1 winner (fence {}); {none} got none", won[0]),
        n => format!("{n} winners (fences {}); {none} got none", won.join(", ")),
    }
}

/// A race of named owners summarised by its winners, the first few named:
/// `2 winners: queued-03 got 5, queued-17 got 6; 30 got none`.
pub fn race_text(owners: &[&str], answers: &[Option<Fence>]) -> String {
    const NAMED: usize = 4;
    let winners: Vec<String> = owners
        .iter()
        .zip(answers)
        .filter_map(|(owner, answer)| answer.map(|fence| format!("{owner} got {fence}")))
        .collect();
    let none = answers.len() - winners.len();
    let head = match winners.len() {
        0 => "no winner".to_string(),
        1 => format!("1 winner: {}", winners[0]),
        n if n <= NAMED => format!("{n} winners: {}", winners.join(", ")),
        n => format!(
            "{n} winners: {}, and {} more",
            winners[..NAMED].join(", "),
            n - NAMED
        ),
    };
    if none == 0 {
        head
    } else {
        format!("{head}; {none} got none")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim() -> Operation {
        Operation::Claim {
            job_id: "j".into(),
            owner: "A".into(),
            now: 100.0,
            ttl: 10.0,
        }
    }

    #[test]
    fn an_operation_serialises_to_the_protocols_request() {
        assert_eq!(
            serde_json::to_value(claim()).unwrap(),
            json!({"op": "claim", "job_id": "j", "owner": "A", "now": 100.0, "ttl": 10.0})
        );
        assert_eq!(
            serde_json::to_value(Operation::InitDb).unwrap(),
            json!({"op": "init_db"})
        );
        let many = Operation::ClaimMany {
            job_id: "j".into(),
            owners: vec!["A".into(), "B".into()],
            now: 1.0,
            ttl: 2.0,
        };
        assert_eq!(serde_json::to_value(&many).unwrap()["op"], "claim_many");
        assert_eq!(many.name(), "claim_many");
    }

    #[test]
    fn an_operation_reads_as_the_worksheet_writes_the_call() {
        assert_eq!(claim().to_string(), r#"claim("j", "A", now=100, ttl=10)"#);
        let complete = Operation::Complete {
            job_id: "j".into(),
            owner: "A".into(),
            fence: Fence(2),
            now: 1.5,
            result: "r".into(),
        };
        assert_eq!(
            complete.to_string(),
            r#"complete("j", "A", fence=2, now=1.5, result="r")"#
        );
    }

    #[test]
    fn answers_go_to_json_and_back() {
        let row = Job {
            id: "j".into(),
            owner: Some("A".into()),
            until: 110.0,
            fence: Fence(1),
            result: None,
            done: false,
        };
        for answer in [
            Answer::Done,
            Answer::Bool(false),
            Answer::Fence(Some(Fence(3))),
            Answer::Fence(None),
            Answer::Row(Some(row)),
            Answer::Row(None),
            Answer::Fences(vec![None, Some(Fence(1))]),
        ] {
            assert_eq!(
                Answer::from_json(answer.kind(), &answer.to_json()),
                Ok(answer.clone())
            );
        }
    }

    #[test]
    fn a_json_answer_of_the_wrong_shape_says_what_was_expected() {
        assert_eq!(
            Answer::from_json(AnswerKind::Fence, &json!("1")),
            Err(BadAnswer(
                "expected a fence (a whole number) or null".into()
            ))
        );
        assert_eq!(
            Answer::from_json(AnswerKind::Fence, &json!(2.0)),
            Ok(Answer::Fence(Some(Fence(2))))
        );
        assert!(Answer::from_json(AnswerKind::Fence, &json!(2.5)).is_err());
        assert!(Answer::from_json(AnswerKind::Bool, &json!(1)).is_err());
        assert!(Answer::from_json(AnswerKind::Fences, &json!([1, "x"])).is_err());
        let row =
            json!({"id": "j", "owner": null, "until": 0, "fence": 0, "result": null, "done": 1});
        assert_eq!(
            Answer::from_json(AnswerKind::Row, &row),
            Ok(Answer::Row(Some(Job {
                id: "j".into(),
                done: true,
                ..Job::default()
            })))
        );
        assert_eq!(
            Answer::from_json(AnswerKind::Row, &json!({})),
            Ok(Answer::Row(Some(Job::default()))),
            "an empty dict is an empty row"
        );
        let no_fence = json!({"id": "j", "owner": null, "until": 0, "result": null, "done": 0});
        assert_eq!(
            Answer::from_json(AnswerKind::Row, &no_fence),
            Err(BadAnswer("the row has no `fence`".into()))
        );
        let bad_done =
            json!({"id": "j", "owner": null, "until": 0, "fence": 0, "result": null, "done": 2});
        assert!(Answer::from_json(AnswerKind::Row, &bad_done).is_err());
    }

    #[test]
    fn answers_read_in_the_contracts_words() {
        assert_eq!(Answer::Fence(Some(Fence(2))).to_string(), "fence 2");
        assert_eq!(Answer::Fence(None).to_string(), "none");
        assert_eq!(Answer::Bool(true).to_string(), "true");
        let row = Job {
            id: "j".into(),
            owner: Some("A".into()),
            until: 110.0,
            fence: Fence(1),
            ..Job::default()
        };
        assert_eq!(
            Answer::Row(Some(row)).to_string(),
            r#"id "j", owner "A", until 110, fence 1, result none, not done"#
        );
        let many: Vec<Option<Fence>> = (0..32).map(|i| (i < 2).then_some(Fence(i + 5))).collect();
        assert_eq!(
            Answer::Fences(many).to_string(),
            "2 winners (fences 5, 6); 30 got none"
        );
        assert_eq!(
            race_text(&["a", "b", "c"], &[None, Some(Fence(5)), None]),
            "1 winner: b got 5; 2 got none"
        );
        assert_eq!(race_text(&["a"], &[None]), "no winner; 1 got none");
        assert_eq!(
            race_text(&["a", "b"], &[Some(Fence(1)), Some(Fence(2))]),
            "2 winners: a got 1, b got 2"
        );
        let owners = ["a", "b", "c", "d", "e", "f"];
        let all: Vec<Option<Fence>> = (1..=6).map(|n| Some(Fence(n))).collect();
        assert_eq!(
            race_text(&owners, &all),
            "6 winners: a got 1, b got 2, c got 3, d got 4, and 2 more"
        );
    }

    #[test]
    fn each_operation_belongs_to_its_worksheet_step() {
        let operations = [
            Operation::InitDb,
            Operation::Enqueue { job_id: "j".into() },
            Operation::State { job_id: "j".into() },
            Operation::Claim {
                job_id: "j".into(),
                owner: "A".into(),
                now: 1.0,
                ttl: 1.0,
            },
            Operation::Renew {
                job_id: "j".into(),
                owner: "A".into(),
                fence: Fence(1),
                now: 1.0,
                ttl: 1.0,
            },
            Operation::Complete {
                job_id: "j".into(),
                owner: "A".into(),
                fence: Fence(1),
                now: 1.0,
                result: "r".into(),
            },
            Operation::Release {
                job_id: "j".into(),
                owner: "A".into(),
                fence: Fence(1),
            },
            Operation::ClaimMany {
                job_id: "j".into(),
                owners: vec!["A".into()],
                now: 1.0,
                ttl: 1.0,
            },
        ];
        let steps: Vec<u8> = operations.iter().map(Operation::step).collect();
        assert_eq!(steps, [1, 2, 3, 4, 5, 6, 7, 8]);
        let names: Vec<&str> = operations.iter().map(Operation::name).collect();
        assert_eq!(names, NAMES);
        let serialised: Vec<String> = operations
            .iter()
            .map(|operation| serde_json::to_value(operation).unwrap()["op"].to_string())
            .collect();
        let quoted: Vec<String> = NAMES.iter().map(|name| format!("{name:?}")).collect();
        assert_eq!(serialised, quoted, "the protocol's op is the name");
    }

    #[test]
    fn a_fence_written_as_a_float_is_taken_only_when_whole_and_in_range() {
        let number = |value: f64| serde_json::Number::from_f64(value).unwrap();
        assert_eq!(whole(&number(2.0)), Some(2));
        assert_eq!(whole(&number(2.5)), None);
        assert_eq!(whole(&number(-9.0e18)), Some(-9_000_000_000_000_000_000));
        assert_eq!(whole(&number(-9_223_372_036_854_775_808.0)), Some(i64::MIN));
        assert_eq!(
            whole(&number(9_223_372_036_854_775_808.0)),
            None,
            "2^63 is past i64::MAX"
        );
        assert_eq!(whole(&number(1.0e19)), None);
    }
}
