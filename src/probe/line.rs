//! What a probe is: its lines, each a call with what the student expects
//! it to answer, and how expectations and values read in the probe
//! language.

use crate::error::ErrorKind;
use crate::job::{Fence, Job};
use crate::operation::Operation;
use std::fmt;

/// The most owners one `claim-many` line may name, one by one or as
/// `NAME*K`: enough for any race the store can run (it uses at most 16
/// threads), small enough that a typo does not make a probe run for
/// minutes.
pub const MAX_OWNERS: usize = 1000;

/// A parsed probe: its lines, in file order, after the implicit `init_db`.
#[derive(Debug, Clone, PartialEq)]
pub struct Probe {
    /// The file name it was read from, for messages.
    pub file_name: String,
    /// The text as written.
    pub source: String,
    /// The lines to run. The first is the implicit `init_db` (number 0),
    /// then every line with an operation, in file order.
    pub lines: Vec<ProbeLine>,
}

/// One line of a probe: a call and what it should answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeLine {
    /// The line's number in the file, from 1; 0 for the implicit `init_db`.
    pub number: usize,
    /// The call as written, without the expectation and the comment.
    pub call: String,
    /// The store operation to run.
    pub operation: Operation,
    /// `state JOB FIELD`: the one field the line looks at.
    pub field: Option<Field>,
    /// What the student expects it to answer.
    pub expectation: Expectation,
}

/// Why a probe cannot be run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeError {
    /// The file cannot be read.
    Unreadable {
        /// The file.
        file: String,
        /// What the system said.
        reason: String,
    },
    /// A line does not follow the probe language.
    Syntax {
        /// The file.
        file: String,
        /// The line, from 1.
        line: usize,
        /// What the lab expected there.
        expected: String,
        /// What it found instead.
        found: String,
    },
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProbeError::Unreadable { file, reason } => {
                write!(f, "{file}: cannot read it: {reason}")
            }
            ProbeError::Syntax {
                file,
                line,
                expected,
                found,
            } => write!(f, "{file}:{line}: expected {expected}, but found {found}"),
        }
    }
}

impl std::error::Error for ProbeError {}

impl ProbeLine {
    /// Where the line is, for messages: `line 4` or `before line 1`.
    pub fn place(&self) -> String {
        if self.number == 0 {
            "before line 1".into()
        } else {
            format!("line {}", self.number)
        }
    }
}

impl Probe {
    /// The line with this number (0 for the implicit `init_db`).
    pub fn line(&self, number: usize) -> Option<&ProbeLine> {
        self.lines.iter().find(|line| line.number == number)
    }
}

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

pub(super) fn fence_text(fence: Option<Fence>) -> String {
    fence.map_or_else(|| "none".to_string(), |fence| fence.to_string())
}

/// Fences as a probe list, or, past eight, counted: a race of 64 owners
/// would not fit a line.
pub(super) fn fences_text(fences: &[Option<Fence>]) -> String {
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

pub(super) fn row_text(job: &Job) -> String {
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
