//! Probes: a student's prediction written as store operations and the
//! answers the student expects, which the lab runs against the reference
//! and against mutants.
//!
//! A probe is good when every line holds on the reference and some line
//! fails on the mutant: it names an input, error or stored state that tells
//! the two apart. A probe that fails on the reference reads the contract
//! wrongly, since the reference is the contract.
//!
//! # The probe language
//!
//! One operation per line, optionally followed by `->` and the expected
//! answer. `#` starts a comment (outside quotes); blank lines are ignored.
//!
//! ```text
//! # step 4: a lease that ends exactly now can be taken over
//! enqueue j1                        -> true
//! claim j1 A now=100 ttl=10         -> 1
//! claim j1 B now=110 ttl=5          -> 2    # the boundary
//! state j1 fence                    -> 2
//! state j1 -> owner=B until=115 done=false
//! claim j1 C now=112 ttl=0          -> error invalid-argument
//! enqueue j2
//! claim-many j2 w*64 now=100 ttl=10 -> one-winner
//! ```
//!
//! Every probe starts on a new database that `init_db` has already created,
//! as a worker's start-up would; `init` calls `init_db` again. The
//! operations mirror `lab db`:
//!
//! | line | answer |
//! |---|---|
//! | `init` | `ok` |
//! | `enqueue JOB` | `true` / `false` |
//! | `state JOB` | `none`, or `FIELD=VALUE ...` (only the fields listed are checked) |
//! | `state JOB FIELD` | the field's value (`none` for an empty owner or result) |
//! | `claim JOB OWNER now=N ttl=T` | a fence, or `none` |
//! | `renew JOB OWNER FENCE now=N ttl=T` | `true` / `false` |
//! | `complete JOB OWNER FENCE now=N result=TEXT` | `true` / `false` |
//! | `release JOB OWNER FENCE` | `true` / `false` |
//! | `claim-many JOB OWNER... now=N ttl=T [lock-ms=N]` | `[1, none, ...]`, `one-winner` or `winners=K` |
//!
//! The fields are `id`, `owner`, `until`, `fence`, `result` and `done`.
//! Any operation may instead expect `error` (any error) or `error KIND`,
//! KIND being one of [`ErrorKind::NAMES`]. A line without `->` must merely
//! not fail. Names and texts with spaces or special characters are written
//! in double quotes (`result="all done"`, `""` for an empty id); a quoted
//! `"none"` is the text, not the absence. In `claim-many`, an unquoted
//! owner `NAME*K` stands for the K owners `NAME1` to `NAMEK`. `null` is
//! accepted for `none`.
//!
//! `one-winner` and `winners=K` check that every owner got an answer and
//! that exactly one (or K) of them got a fence; a list checks every answer
//! in owner order. A race may not show a bug on every run; `claim-many`
//! takes an optional `lock-ms=N`, with which another client holds the
//! database's write lock for N milliseconds while the claims start, so that
//! they all queue behind it (as claims do behind any busy writer).

use crate::error::StoreError;
use crate::job::{Fence, Job};
pub use crate::operation::{Field, Operation};
use crate::variant::{CompiledMutant, JobStore, Variant, REFERENCE};
use colored::Colorize;
use serde::Serialize;
use std::fmt::{self, Write as _};
use std::io;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

/// The most owners one `NAME*K` may stand for: enough for any race the
/// store can run (it uses at most 64 threads), small enough that a typo
/// does not make a probe run for minutes.
pub const MAX_EXPANDED_OWNERS: usize = 1000;

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
    /// What the student expects it to answer.
    pub expectation: Expectation,
}

/// The value of one field of a stored row.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
    Fence(Option<i64>),
    /// `state JOB -> none`: no such job.
    NoJob,
    /// `state JOB -> FIELD=VALUE ...`: a row with these values.
    Row(Vec<(Field, Value)>),
    /// `state JOB FIELD -> VALUE`: a row whose field has this value.
    Field(Field, Value),
    /// `claim-many ... -> [..]`: exactly these answers, in owner order.
    Fences(Vec<Option<i64>>),
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

/// Which [`StoreError`] an operation failed with, as named in probes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKind {
    /// [`StoreError::InvalidArgument`].
    InvalidArgument,
    /// [`StoreError::MissingFolder`].
    MissingFolder,
    /// [`StoreError::NoDatabase`].
    NoDatabase,
    /// [`StoreError::IsADirectory`].
    IsADirectory,
    /// [`StoreError::NotADatabase`].
    NotADatabase,
    /// [`StoreError::NoJobsTable`].
    NoJobsTable,
    /// [`StoreError::IncompatibleSchema`].
    IncompatibleSchema,
    /// [`StoreError::ReadOnly`].
    ReadOnly,
    /// [`StoreError::Busy`].
    Busy,
    /// [`StoreError::Sqlite`].
    Sqlite,
}

/// What one call answered.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "answer", content = "value", rename_all = "kebab-case")]
pub enum Answer {
    /// `init_db` succeeded.
    Ok,
    /// `true` or `false`.
    Bool(bool),
    /// A fence or none.
    Fence(Option<i64>),
    /// The stored row, or none.
    Row(Option<Job>),
    /// `claim_many`'s answers, in owner order.
    Fences(Vec<Option<i64>>),
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

// ---------------------------------------------------------------------------
// Reading a probe
// ---------------------------------------------------------------------------

/// Reads and parses the probe file at `path`.
pub fn load(path: &Path) -> Result<Probe, ProbeError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|error| ProbeError::Unreadable {
        file: file.clone(),
        reason: error.to_string(),
    })?;
    parse(&file, &text)
}

/// Parses a probe's text; `file_name` is used in error messages only.
///
/// Errors: the first line that does not follow the probe language, as
/// `FILE:LINE: expected ..., but found ...`; a probe without any operation
/// is an error too, since it predicts nothing.
pub fn parse(file_name: &str, text: &str) -> Result<Probe, ProbeError> {
    let mut lines = vec![ProbeLine {
        number: 0,
        call: "init_db (implicit, before line 1)".into(),
        operation: Operation::Init,
        expectation: Expectation::Ok,
    }];
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let syntax = |(expected, found): (String, String)| ProbeError::Syntax {
            file: file_name.to_string(),
            line: number,
            expected,
            found,
        };
        let lexed = lex(line).map_err(syntax)?;
        if let Some(parsed) = parse_line(number, line, &lexed).map_err(syntax)? {
            lines.push(parsed);
        }
    }
    if lines.len() == 1 {
        return Err(ProbeError::Syntax {
            file: file_name.to_string(),
            line: text.lines().count().max(1),
            expected: "at least one operation (enqueue, state, claim, ...)".into(),
            found: "the end of the file".into(),
        });
    }
    Ok(Probe {
        file_name: file_name.to_string(),
        source: text.to_string(),
        lines,
    })
}

/// A piece of a probe line.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    /// An unquoted word: a name, a number or a keyword.
    Word(String),
    /// A double-quoted text, unescaped.
    Quoted(String),
    /// `->`.
    Arrow,
    /// `=`.
    Equals,
    /// `[`.
    Open,
    /// `]`.
    Close,
    /// `,`.
    Comma,
}

impl Token {
    fn describe(&self) -> String {
        match self {
            Token::Word(word) => format!("`{word}`"),
            Token::Quoted(text) => format!("{text:?}"),
            Token::Arrow => "`->`".into(),
            Token::Equals => "`=`".into(),
            Token::Open => "`[`".into(),
            Token::Close => "`]`".into(),
            Token::Comma => "`,`".into(),
        }
    }
}

/// What a parse step expected and what it found, for [`ProbeError::Syntax`].
type Mismatch = (String, String);

fn mismatch(expected: impl Into<String>, found: Option<&Token>) -> Mismatch {
    let found = found.map_or_else(|| "the end of the line".to_string(), Token::describe);
    (expected.into(), found)
}

/// A line split into tokens, and where its call's text ends.
struct Lexed {
    tokens: Vec<Token>,
    /// The byte offset of the first `->`, or else of the comment or the
    /// line's end: the call as written is the text before it.
    call_end: usize,
}

/// Splits a line into tokens, dropping a `#` comment.
fn lex(line: &str) -> Result<Lexed, Mismatch> {
    let mut tokens = Vec::new();
    let mut arrow_at = None;
    let mut chars = line.char_indices().peekable();
    let mut code_end = line.len();
    while let Some(&(at, c)) = chars.peek() {
        match c {
            '#' => {
                code_end = at;
                break;
            }
            c if c.is_whitespace() => {
                chars.next();
            }
            '"' => {
                chars.next();
                tokens.push(Token::Quoted(quoted(&mut chars)?));
            }
            '=' | '[' | ']' | ',' => {
                chars.next();
                tokens.push(match c {
                    '=' => Token::Equals,
                    '[' => Token::Open,
                    ']' => Token::Close,
                    _ => Token::Comma,
                });
            }
            '-' if line[at..].starts_with("->") => {
                chars.next();
                chars.next();
                arrow_at.get_or_insert(at);
                tokens.push(Token::Arrow);
            }
            _ => {
                let mut word = String::new();
                while let Some(&(at, c)) = chars.peek() {
                    let ends =
                        c.is_whitespace() || "#\"=[],".contains(c) || line[at..].starts_with("->");
                    if ends {
                        break;
                    }
                    word.push(c);
                    chars.next();
                }
                tokens.push(Token::Word(word));
            }
        }
    }
    Ok(Lexed {
        tokens,
        call_end: arrow_at.unwrap_or(code_end),
    })
}

/// The rest of a quoted text after its opening `"`, unescaping `\"`, `\\`,
/// `\n` and `\t`.
fn quoted(chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>) -> Result<String, Mismatch> {
    let mut text = String::new();
    loop {
        match chars.next().map(|(_, c)| c) {
            None => return Err(("a closing `\"`".into(), "the end of the line".into())),
            Some('"') => return Ok(text),
            Some('\\') => match chars.next().map(|(_, c)| c) {
                Some('"') => text.push('"'),
                Some('\\') => text.push('\\'),
                Some('n') => text.push('\n'),
                Some('t') => text.push('\t'),
                other => {
                    return Err((
                        "an escape `\\\"`, `\\\\`, `\\n` or `\\t`".into(),
                        other.map_or("the end of the line".into(), |c| format!("`\\{c}`")),
                    ))
                }
            },
            Some(c) => text.push(c),
        }
    }
}

const OPERATIONS: &str =
    "an operation (init, enqueue, state, claim, renew, complete, release, claim-many)";

/// Parses one line's tokens; `None` for a blank or comment line.
fn parse_line(number: usize, line: &str, lexed: &Lexed) -> Result<Option<ProbeLine>, Mismatch> {
    let tokens = &lexed.tokens;
    if tokens.is_empty() {
        return Ok(None);
    }
    let arrow = tokens.iter().position(|token| *token == Token::Arrow);
    let (call_tokens, expected_tokens) = match arrow {
        Some(at) => (&tokens[..at], Some(&tokens[at + 1..])),
        None => (&tokens[..], None),
    };
    let mut call = Cursor::new(call_tokens);
    let operation = parse_operation(&mut call)?;
    call.end("`->` or the end of the line")?;
    let expectation = match expected_tokens {
        None => Expectation::Runs,
        Some(tokens) => {
            let mut cursor = Cursor::new(tokens);
            let expectation = parse_expectation(&operation, &mut cursor)?;
            cursor.end("the end of the line")?;
            expectation
        }
    };
    Ok(Some(ProbeLine {
        number,
        call: line[..lexed.call_end].trim().to_string(),
        operation,
        expectation,
    }))
}

/// Reads tokens left to right.
struct Cursor<'a> {
    tokens: &'a [Token],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn new(tokens: &'a [Token]) -> Cursor<'a> {
        Cursor { tokens, at: 0 }
    }

    fn peek(&self) -> Option<&'a Token> {
        self.tokens.get(self.at)
    }

    fn next(&mut self) -> Option<&'a Token> {
        let token = self.tokens.get(self.at);
        self.at += 1;
        token
    }

    /// Whether the next tokens are `WORD =`: a named argument.
    fn at_named(&self) -> bool {
        matches!(self.tokens.get(self.at), Some(Token::Word(_)))
            && self.tokens.get(self.at + 1) == Some(&Token::Equals)
    }

    fn end(&mut self, expected: &str) -> Result<(), Mismatch> {
        match self.peek() {
            None => Ok(()),
            found => Err(mismatch(expected, found)),
        }
    }

    fn word(&mut self, expected: &str) -> Result<&'a str, Mismatch> {
        match self.peek() {
            Some(Token::Word(word)) => {
                self.at += 1;
                Ok(word)
            }
            found => Err(mismatch(expected, found)),
        }
    }

    /// A name or text: a word or a quoted text, but not a named argument.
    fn text(&mut self, expected: &str) -> Result<String, Mismatch> {
        let found = self.peek();
        let text = match found {
            Some(Token::Word(key)) if self.at_named() => {
                return Err((expected.into(), format!("`{key}=`")))
            }
            Some(Token::Word(text) | Token::Quoted(text)) => text.clone(),
            _ => return Err(mismatch(expected, found)),
        };
        self.at += 1;
        Ok(text)
    }

    /// A word read as a number of type `T` (a fence, or seconds).
    fn parsed<T: std::str::FromStr>(&mut self, expected: &str) -> Result<T, Mismatch> {
        let found = self.peek();
        let Some(Token::Word(word)) = found else {
            return Err(mismatch(expected, found));
        };
        let value = word.parse().map_err(|_| mismatch(expected, found))?;
        self.at += 1;
        Ok(value)
    }

    fn integer(&mut self, expected: &str) -> Result<i64, Mismatch> {
        self.parsed(expected)
    }

    fn number(&mut self, expected: &str) -> Result<f64, Mismatch> {
        self.parsed(expected)
    }

    /// `key=value` arguments in any order, each at most once, the first
    /// `required` of `keys` necessarily; `value` reads the value of the key
    /// at its index. Stops at the first token that is not `key=` once every
    /// required key is given.
    fn named<T>(
        &mut self,
        keys: &[&str],
        required: usize,
        mut value: impl FnMut(&mut Self, usize) -> Result<T, Mismatch>,
    ) -> Result<Vec<Option<T>>, Mismatch> {
        let mut values: Vec<Option<T>> = keys.iter().map(|_| None).collect();
        loop {
            let complete = values[..required].iter().all(Option::is_some);
            if complete && !self.at_named() {
                return Ok(values);
            }
            let unused: Vec<String> = keys
                .iter()
                .zip(&values)
                .filter(|(_, value)| value.is_none())
                .map(|(key, _)| format!("`{key}=`"))
                .collect();
            let found = self.peek();
            let key = self.word(&unused.join(" or "))?;
            let Some(index) = keys.iter().position(|known| *known == key) else {
                return Err(mismatch(unused.join(" or "), found));
            };
            if values[index].is_some() {
                return Err(("each argument once".into(), format!("`{key}=` twice")));
            }
            match self.next() {
                Some(Token::Equals) => {}
                other => return Err(mismatch(format!("`=` after `{key}`"), other)),
            }
            values[index] = Some(value(self, index)?);
        }
    }
}

fn parse_operation(cursor: &mut Cursor) -> Result<Operation, Mismatch> {
    let found = cursor.peek();
    let name = cursor.word(OPERATIONS)?;
    let operation = match name {
        "init" => Operation::Init,
        "enqueue" => Operation::Enqueue {
            job: cursor.text("a job id")?,
        },
        "state" => {
            let job = cursor.text("a job id")?;
            let found = cursor.peek();
            let field = match found {
                None => None,
                _ => Some(field(cursor.word(FIELDS)?, found)?),
            };
            Operation::State { job, field }
        }
        "claim" => {
            let job = cursor.text("a job id")?;
            let owner = cursor.text("an owner")?;
            let [now, ttl] = lease_times(cursor)?;
            Operation::Claim {
                job,
                owner,
                now,
                ttl,
            }
        }
        "renew" => {
            let job = cursor.text("a job id")?;
            let owner = cursor.text("an owner")?;
            let fence = cursor.integer("a fence (a whole number)")?;
            let [now, ttl] = lease_times(cursor)?;
            Operation::Renew {
                job,
                owner,
                fence,
                now,
                ttl,
            }
        }
        "complete" => {
            let job = cursor.text("a job id")?;
            let owner = cursor.text("an owner")?;
            let fence = cursor.integer("a fence (a whole number)")?;
            let mut now = 0.0;
            let mut result = String::new();
            cursor.named(&["now", "result"], 2, |cursor, index| {
                if index == 0 {
                    now = cursor.number("a number of seconds")?;
                } else {
                    result = cursor.text("a result text")?;
                }
                Ok(())
            })?;
            Operation::Complete {
                job,
                owner,
                fence,
                now,
                result,
            }
        }
        "release" => Operation::Release {
            job: cursor.text("a job id")?,
            owner: cursor.text("an owner")?,
            fence: cursor.integer("a fence (a whole number)")?,
        },
        "claim-many" => {
            let job = cursor.text("a job id")?;
            let mut owners = Vec::new();
            while cursor.peek().is_some() && !cursor.at_named() {
                owners.extend(owner_group(cursor)?);
            }
            let mut times = [0.0; 2];
            let mut hold_lock = None;
            cursor.named(&["now", "ttl", "lock-ms"], 2, |cursor, index| {
                if index < 2 {
                    times[index] = cursor.number("a number of seconds")?;
                } else {
                    let millis: u64 = cursor.parsed("a whole number of milliseconds")?;
                    hold_lock = Some(Duration::from_millis(millis));
                }
                Ok(())
            })?;
            Operation::ClaimMany {
                job,
                owners,
                now: times[0],
                ttl: times[1],
                hold_lock,
            }
        }
        _ => return Err(mismatch(OPERATIONS, found)),
    };
    Ok(operation)
}

/// `now=N ttl=T`, in either order.
fn lease_times(cursor: &mut Cursor) -> Result<[f64; 2], Mismatch> {
    let times = cursor.named(&["now", "ttl"], 2, |cursor, _| {
        cursor.number("a number of seconds")
    })?;
    Ok([0, 1].map(|index| times[index].expect("both keys are required")))
}

/// One owner of `claim-many`, or the owners `NAME1..NAMEK` of `NAME*K`.
fn owner_group(cursor: &mut Cursor) -> Result<Vec<String>, Mismatch> {
    let found = cursor.peek();
    if let Some(Token::Word(word)) = found {
        if let Some((name, count)) = word.rsplit_once('*') {
            let expected = format!("`NAME*K` with K from 1 to {MAX_EXPANDED_OWNERS}");
            let count: usize = count
                .parse()
                .ok()
                .filter(|count| (1..=MAX_EXPANDED_OWNERS).contains(count))
                .ok_or_else(|| mismatch(expected.clone(), found))?;
            if name.is_empty() {
                return Err(mismatch(expected, found));
            }
            cursor.next();
            return Ok((1..=count).map(|i| format!("{name}{i}")).collect());
        }
    }
    Ok(vec![cursor.text("an owner, or `now=`")?])
}

const FIELDS: &str = "a field (id, owner, until, fence, result, done)";

fn field(name: &str, found: Option<&Token>) -> Result<Field, Mismatch> {
    Ok(match name {
        "id" => Field::Id,
        "owner" => Field::Owner,
        "until" => Field::Until,
        "fence" => Field::Fence,
        "result" => Field::Result,
        "done" => Field::Done,
        _ => return Err(mismatch(FIELDS, found)),
    })
}

fn is_none_word(token: Option<&Token>) -> bool {
    matches!(token, Some(Token::Word(word)) if word == "none" || word == "null")
}

fn parse_expectation(operation: &Operation, cursor: &mut Cursor) -> Result<Expectation, Mismatch> {
    if matches!(cursor.peek(), Some(Token::Word(word)) if word == "error") {
        cursor.next();
        if cursor.peek().is_none() {
            return Ok(Expectation::Error(None));
        }
        let found = cursor.peek();
        let name = cursor.word(&error_kinds())?;
        return ErrorKind::from_name(name)
            .map(|kind| Expectation::Error(Some(kind)))
            .ok_or_else(|| mismatch(error_kinds(), found));
    }
    match operation {
        Operation::Init => keyword(cursor, "`ok` or `error`", |word| {
            (word == "ok").then_some(Expectation::Ok)
        }),
        Operation::Enqueue { .. }
        | Operation::Renew { .. }
        | Operation::Complete { .. }
        | Operation::Release { .. } => keyword(cursor, "`true`, `false` or `error`", |word| {
            word.parse().ok().map(Expectation::Bool)
        }),
        Operation::Claim { .. } => {
            fence_answer(cursor, "a fence, `none` or `error`").map(Expectation::Fence)
        }
        Operation::State { field: None, .. } => row_expectation(cursor),
        Operation::State {
            field: Some(field), ..
        } => Ok(Expectation::Field(*field, field_value(*field, cursor)?)),
        Operation::ClaimMany { owners, .. } => claims_expectation(cursor, owners.len()),
    }
}

fn error_kinds() -> String {
    format!("an error kind ({})", ErrorKind::NAMES.join(", "))
}

fn keyword(
    cursor: &mut Cursor,
    expected: &str,
    meaning: impl Fn(&str) -> Option<Expectation>,
) -> Result<Expectation, Mismatch> {
    let found = cursor.peek();
    let word = cursor.word(expected)?;
    meaning(word).ok_or_else(|| mismatch(expected, found))
}

fn fence_answer(cursor: &mut Cursor, expected: &str) -> Result<Option<i64>, Mismatch> {
    if is_none_word(cursor.peek()) {
        cursor.next();
        return Ok(None);
    }
    cursor.integer(expected).map(Some)
}

fn row_expectation(cursor: &mut Cursor) -> Result<Expectation, Mismatch> {
    const EXPECTED: &str = "`none`, `FIELD=VALUE ...` or `error`";
    if is_none_word(cursor.peek()) {
        cursor.next();
        return Ok(Expectation::NoJob);
    }
    if !cursor.at_named() {
        return Err(mismatch(EXPECTED, cursor.peek()));
    }
    let mut fields: Vec<(Field, Value)> = Vec::new();
    while cursor.peek().is_some() {
        let found = cursor.peek();
        let name = cursor.word("`FIELD=VALUE` or the end of the line")?;
        let field = field(name, found)?;
        if fields.iter().any(|(seen, _)| *seen == field) {
            return Err(("each field once".into(), format!("`{name}=` twice")));
        }
        match cursor.next() {
            Some(Token::Equals) => {}
            other => return Err(mismatch(format!("`=` after `{name}`"), other)),
        }
        fields.push((field, field_value(field, cursor)?));
    }
    Ok(Expectation::Row(fields))
}

fn field_value(field: Field, cursor: &mut Cursor) -> Result<Value, Mismatch> {
    match field {
        Field::Id => Ok(Value::Text(Some(cursor.text("a job id")?))),
        Field::Owner | Field::Result => {
            if is_none_word(cursor.peek()) {
                cursor.next();
                return Ok(Value::Text(None));
            }
            let what = if field == Field::Owner {
                "an owner or `none`"
            } else {
                "a result text or `none`"
            };
            Ok(Value::Text(Some(cursor.text(what)?)))
        }
        Field::Until => Ok(Value::Number(cursor.number("a number of seconds")?)),
        Field::Fence => Ok(Value::Integer(cursor.integer("a fence (a whole number)")?)),
        Field::Done => {
            let found = cursor.peek();
            let word = cursor.word("`true` or `false`")?;
            word.parse()
                .map(Value::Bool)
                .map_err(|_| mismatch("`true` or `false`", found))
        }
    }
}

fn claims_expectation(cursor: &mut Cursor, owners: usize) -> Result<Expectation, Mismatch> {
    const EXPECTED: &str = "`[FENCE-OR-none, ...]`, `one-winner`, `winners=K` or `error`";
    let found = cursor.peek();
    match found {
        Some(Token::Open) => {
            cursor.next();
            let mut fences = Vec::new();
            loop {
                if cursor.peek() == Some(&Token::Close) {
                    cursor.next();
                    return Ok(Expectation::Fences(fences));
                }
                fences.push(fence_answer(cursor, "a fence, `none` or `]`")?);
                if cursor.peek() == Some(&Token::Comma) {
                    cursor.next();
                }
            }
        }
        Some(Token::Word(word)) if word == "one-winner" => {
            cursor.next();
            Ok(Expectation::Winners { winners: 1, owners })
        }
        Some(Token::Word(word)) if word == "winners" => {
            cursor.next();
            match cursor.next() {
                Some(Token::Equals) => {}
                other => return Err(mismatch("`=` after `winners`", other)),
            }
            let winners = cursor.integer("a number of winners")?;
            let winners = usize::try_from(winners)
                .map_err(|_| ("a number of winners from 0".into(), winners.to_string()))?;
            Ok(Expectation::Winners { winners, owners })
        }
        _ => Err(mismatch(EXPECTED, found)),
    }
}

// ---------------------------------------------------------------------------
// Values and answers
// ---------------------------------------------------------------------------

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

fn fence_text(fence: Option<i64>) -> String {
    fence.map_or_else(|| "none".to_string(), |fence| fence.to_string())
}

/// Fences as a probe list, or, past eight, counted: a race of 64 owners
/// would not fit a line.
fn fences_text(fences: &[Option<i64>]) -> String {
    if fences.len() <= 8 {
        let items: Vec<String> = fences.iter().map(|fence| fence_text(*fence)).collect();
        return format!("[{}]", items.join(", "));
    }
    let won: Vec<String> = fences.iter().flatten().map(i64::to_string).collect();
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
    /// Whether `answer` is what this expectation accepts.
    pub fn holds(&self, answer: &Answer) -> bool {
        match (self, answer) {
            (_, Answer::Crash { .. } | Answer::Timeout { .. }) => false,
            (Expectation::Runs, answer) => !matches!(answer, Answer::Error { .. }),
            (Expectation::Error(None), Answer::Error { .. }) => true,
            (Expectation::Error(Some(kind)), Answer::Error { kind: actual, .. }) => kind == actual,
            (Expectation::Ok, Answer::Ok) => true,
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

impl ErrorKind {
    /// Every kind's name, as written after `error` in probes.
    pub const NAMES: [&'static str; 10] = [
        "invalid-argument",
        "missing-folder",
        "no-database",
        "is-a-directory",
        "not-a-database",
        "no-jobs-table",
        "incompatible-schema",
        "read-only",
        "busy",
        "sqlite",
    ];

    const ALL: [ErrorKind; 10] = [
        ErrorKind::InvalidArgument,
        ErrorKind::MissingFolder,
        ErrorKind::NoDatabase,
        ErrorKind::IsADirectory,
        ErrorKind::NotADatabase,
        ErrorKind::NoJobsTable,
        ErrorKind::IncompatibleSchema,
        ErrorKind::ReadOnly,
        ErrorKind::Busy,
        ErrorKind::Sqlite,
    ];

    /// The kind's name in probes.
    pub fn name(self) -> &'static str {
        let index = ErrorKind::ALL
            .iter()
            .position(|kind| *kind == self)
            .expect("ALL lists every kind");
        ErrorKind::NAMES[index]
    }

    /// The kind with this name, if any.
    pub fn from_name(name: &str) -> Option<ErrorKind> {
        ErrorKind::NAMES
            .iter()
            .position(|known| *known == name)
            .map(|index| ErrorKind::ALL[index])
    }

    /// The kind of a store error, and its message without the database's
    /// temporary path wherever the error carries a detail of its own.
    pub fn of(error: &StoreError) -> (ErrorKind, String) {
        match error {
            StoreError::InvalidArgument(message) => (ErrorKind::InvalidArgument, message.clone()),
            StoreError::MissingFolder { .. } => (ErrorKind::MissingFolder, error.to_string()),
            StoreError::NoDatabase { .. } => (ErrorKind::NoDatabase, error.to_string()),
            StoreError::IsADirectory { .. } => (ErrorKind::IsADirectory, error.to_string()),
            StoreError::NotADatabase { detail, .. } => (ErrorKind::NotADatabase, detail.clone()),
            StoreError::NoJobsTable { .. } => (ErrorKind::NoJobsTable, error.to_string()),
            StoreError::IncompatibleSchema { detail, .. } => {
                (ErrorKind::IncompatibleSchema, detail.clone())
            }
            StoreError::ReadOnly { detail, .. } => (ErrorKind::ReadOnly, detail.clone()),
            StoreError::Busy { waited, .. } => (
                ErrorKind::Busy,
                format!("stayed locked for {} ms", waited.as_millis()),
            ),
            StoreError::Sqlite { source, .. } => (ErrorKind::Sqlite, source.to_string()),
        }
    }
}

impl Answer {
    fn of<T>(result: Result<T, StoreError>, answer: impl FnOnce(T) -> Answer) -> Answer {
        match result {
            Ok(value) => answer(value),
            Err(error) => {
                let (kind, message) = ErrorKind::of(&error);
                Answer::Error { kind, message }
            }
        }
    }

    /// Whether two answers say the same thing: errors of the same kind (the
    /// messages name different temporary files), and `claim_many` answers
    /// with the same fences in any order (which owner wins a race is not
    /// part of the contract).
    pub fn agrees_with(&self, other: &Answer) -> bool {
        match (self, other) {
            (Answer::Error { kind: a, .. }, Answer::Error { kind: b, .. }) => a == b,
            (Answer::Fences(a), Answer::Fences(b)) => {
                let (mut a, mut b) = (a.clone(), b.clone());
                a.sort_unstable();
                b.sort_unstable();
                a == b
            }
            (Answer::Crash { .. }, Answer::Crash { .. }) => true,
            _ => self == other,
        }
    }
}

impl Operation {
    /// Runs the operation on `store` with the database `db`.
    pub fn call(&self, store: &dyn JobStore, db: &Path) -> Answer {
        let fence = |answer: Option<Fence>| Answer::Fence(answer.map(|fence| fence.0));
        match self {
            Operation::Init => Answer::of(store.init_db(db), |()| Answer::Ok),
            Operation::Enqueue { job } => Answer::of(store.enqueue(db, job), Answer::Bool),
            Operation::State { job, .. } => Answer::of(store.state(db, job), Answer::Row),
            Operation::Claim {
                job,
                owner,
                now,
                ttl,
            } => Answer::of(store.claim(db, job, owner, *now, *ttl), fence),
            Operation::Renew {
                job,
                owner,
                fence,
                now,
                ttl,
            } => Answer::of(
                store.renew(db, job, owner, Fence(*fence), *now, *ttl),
                Answer::Bool,
            ),
            Operation::Complete {
                job,
                owner,
                fence,
                now,
                result,
            } => Answer::of(
                store.complete(db, job, owner, Fence(*fence), *now, result),
                Answer::Bool,
            ),
            Operation::Release { job, owner, fence } => {
                Answer::of(store.release(db, job, owner, Fence(*fence)), Answer::Bool)
            }
            Operation::ClaimMany {
                job,
                owners,
                now,
                ttl,
                hold_lock,
            } => {
                let owners: Vec<&str> = owners.iter().map(String::as_str).collect();
                let race = || store.claim_many(db, job, &owners, *now, *ttl);
                let answers = match hold_lock {
                    None => race(),
                    Some(hold) => match behind_write_lock(db, *hold, race) {
                        Ok(answers) => answers,
                        Err(error) => {
                            return Answer::Crash {
                                message: format!(
                                    "the probe could not hold the write lock for lock-ms: {error}"
                                ),
                            }
                        }
                    },
                };
                Answer::of(answers, |answers| {
                    Answer::Fences(answers.into_iter().map(|a| a.map(|f| f.0)).collect())
                })
            }
        }
    }
}

/// Runs `action` while a separate plain connection holds the database's
/// write lock (`BEGIN IMMEDIATE`), releasing it after `hold` without
/// writing. Claims started meanwhile all wait for the lock, so each of them
/// looks at the job while no other claim has taken it yet: a claim that
/// reads the lease before taking the lock is then sure to be caught.
fn behind_write_lock<T: Send>(
    db: &Path,
    hold: Duration,
    action: impl FnOnce() -> T + Send,
) -> rusqlite::Result<T> {
    let holder = rusqlite::Connection::open(db)?;
    holder.execute_batch("BEGIN IMMEDIATE")?;
    thread::scope(|scope| {
        let releaser = scope.spawn(move || {
            thread::sleep(hold);
            holder.execute_batch("ROLLBACK")
        });
        let result = action();
        let released = releaser.join().expect("the lock holder does not panic");
        released.map(|()| result)
    })
}

impl ProbeLine {
    /// Where the line is, for messages: `line 4` or `before line 1`.
    pub fn place(&self) -> String {
        if self.number == 0 {
            "before line 1".into()
        } else {
            format!("line {}", self.number)
        }
    }

    /// An answer to this line's call, in the probe language where it can
    /// be: the field alone for `state JOB FIELD`.
    pub fn show(&self, answer: &Answer) -> String {
        match answer {
            Answer::Ok => "ok".into(),
            Answer::Bool(flag) => flag.to_string(),
            Answer::Fence(fence) => fence_text(*fence),
            Answer::Row(None) => match &self.operation {
                Operation::State { field: Some(_), .. } => "no such job".into(),
                _ => "none".into(),
            },
            Answer::Row(Some(job)) => match &self.operation {
                Operation::State {
                    field: Some(field), ..
                } => field.of(job).to_string(),
                _ => row_text(job),
            },
            Answer::Fences(fences) => fences_text(fences),
            Answer::Error { kind, message } => format!("error {} ({message})", kind.name()),
            Answer::Crash { message } => format!("a crash: {message}"),
            Answer::Timeout { limit_ms } => format!("no answer within {limit_ms} ms"),
        }
    }
}

impl Probe {
    /// Whether the probe races claims, so that one run may not show what
    /// another run does.
    pub fn races(&self) -> bool {
        self.lines
            .iter()
            .any(|line| matches!(line.operation, Operation::ClaimMany { .. }))
    }

    /// The line with this number (0 for the implicit `init_db`).
    pub fn line(&self, number: usize) -> Option<&ProbeLine> {
        self.lines.iter().find(|line| line.number == number)
    }
}

// ---------------------------------------------------------------------------
// Running a probe
// ---------------------------------------------------------------------------

/// One line's answer in a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LineRun {
    /// The line's number (0 for the implicit `init_db`).
    pub line: usize,
    /// What the call answered.
    pub answer: Answer,
    /// Whether the line's expectation accepted it.
    pub holds: bool,
}

/// A probe's run against one implementation: the lines in order, up to and
/// including the first that did not hold (a run stops there, since every
/// later answer would follow from a state the student did not predict).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProbeRun {
    /// The lines that ran.
    pub lines: Vec<LineRun>,
}

impl ProbeRun {
    /// The line that did not hold, if any.
    pub fn failure(&self) -> Option<&LineRun> {
        self.lines.iter().find(|line| !line.holds)
    }

    /// The answer of the line with this number, if it ran.
    pub fn answer(&self, line: usize) -> Option<&Answer> {
        self.lines
            .iter()
            .find(|run| run.line == line)
            .map(|run| &run.answer)
    }
}

/// Runs `probe` against `store` on a new database in a new folder under
/// `scratch`, on a thread of its own.
///
/// A panic in the store is the answer [`Answer::Crash`], and a probe still
/// running after `timeout` gets [`Answer::Timeout`] for the line it was on
/// (its thread is left behind, and so is its folder, which it may still use).
///
/// Errors: only when the folder or the thread cannot be made.
pub fn run(
    probe: &Probe,
    store: &'static dyn JobStore,
    scratch: &Path,
    timeout: Duration,
) -> io::Result<ProbeRun> {
    let folder = tempfile::Builder::new()
        .prefix("lease-lab-probe-")
        .tempdir_in(scratch)?;
    let db = folder.path().join("jobs.db");
    let lines = probe.lines.clone();
    let (sender, receiver) = mpsc::channel();
    thread::Builder::new()
        .name(format!("probe {}", probe.file_name))
        .spawn(move || {
            for line in &lines {
                let answer =
                    panic::catch_unwind(AssertUnwindSafe(|| line.operation.call(store, &db)))
                        .unwrap_or_else(|payload| Answer::Crash {
                            message: crate::runner::panic_text(payload.as_ref()),
                        });
                let holds = line.expectation.holds(&answer);
                let sent = sender.send(LineRun {
                    line: line.number,
                    answer,
                    holds,
                });
                if sent.is_err() || !holds {
                    return;
                }
            }
        })?;
    let deadline = Instant::now() + timeout;
    let mut runs: Vec<LineRun> = Vec::new();
    loop {
        match receiver.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(line) => runs.push(line),
            Err(RecvTimeoutError::Disconnected) => break,
            Err(RecvTimeoutError::Timeout) => {
                runs.push(LineRun {
                    line: probe.lines[runs.len()].number,
                    answer: Answer::Timeout {
                        limit_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
                    },
                    holds: false,
                });
                let _ = folder.keep();
                break;
            }
        }
    }
    Ok(ProbeRun { lines: runs })
}

// ---------------------------------------------------------------------------
// Judging
// ---------------------------------------------------------------------------

/// One line on which the reference and a mutant answered differently.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Difference {
    /// The line's number (0 for the implicit `init_db`).
    pub line: usize,
    /// The reference's answer.
    pub reference: Answer,
    /// The mutant's answer.
    pub mutant: Answer,
}

/// What a probe's runs on the reference and on a mutant say about it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum Verdict {
    /// Every line holds on the reference and one fails on the mutant: the
    /// prediction is right and kills the mutant. `line` is the first line
    /// that failed on the mutant.
    GoodPrediction(Difference),
    /// A line fails on the reference: the probe reads the contract wrongly.
    WrongReading {
        /// The first line that failed on the reference.
        line: usize,
        /// What the reference answered there.
        reference: Answer,
    },
    /// Every line holds on both: the probe does not tell them apart.
    /// `unchecked` is the first line whose answers differed although its
    /// expectation accepted both, if any: a hint at a sharper expectation.
    NotDistinguishing {
        /// The first difference the expectations let through.
        unchecked: Option<Difference>,
    },
}

impl Verdict {
    /// `good prediction`, `wrong reading` or `not distinguishing`.
    pub fn label(&self) -> &'static str {
        match self {
            Verdict::GoodPrediction(_) => "good prediction",
            Verdict::WrongReading { .. } => "wrong reading",
            Verdict::NotDistinguishing { .. } => "not distinguishing",
        }
    }

    /// Whether the probe kills the mutant.
    pub fn kills(&self) -> bool {
        matches!(self, Verdict::GoodPrediction(_))
    }

    /// What the verdict means, in sentences that quote the probe's lines,
    /// with the expected and actual answers below.
    pub fn explain(&self, probe: &Probe, mutant_id: &str) -> String {
        let quote = |number: usize| {
            probe.line(number).map_or_else(
                || format!("line {number}"),
                |line| format!("{} `{}`", line.place(), line.call),
            )
        };
        let answers = |number: usize, reference: &Answer, mutant: Option<&Answer>| {
            let Some(line) = probe.line(number) else {
                return String::new();
            };
            let mut rows = vec![
                ("expected:".to_string(), line.expectation.to_string()),
                ("reference:".to_string(), line.show(reference)),
            ];
            if let Some(mutant) = mutant {
                rows.push((format!("mutant {mutant_id}:"), line.show(mutant)));
            }
            let width = rows.iter().map(|(label, _)| label.len()).max().unwrap_or(0);
            rows.iter()
                .map(|(label, value)| format!("\n  {label:<width$} {value}"))
                .collect()
        };
        match self {
            Verdict::GoodPrediction(difference) => format!(
                "{} tells mutant {mutant_id} from the reference:{}",
                quote(difference.line),
                answers(difference.line, &difference.reference, Some(&difference.mutant)),
            ),
            Verdict::WrongReading { line, reference } => format!(
                "{} fails on the reference implementation, which is the contract: the probe reads the contract wrongly.{}",
                quote(*line),
                answers(*line, reference, None),
            ),
            Verdict::NotDistinguishing { unchecked: None } => format!(
                "every line holds on mutant {mutant_id} as on the reference: the probe does not tell them apart."
            ),
            Verdict::NotDistinguishing {
                unchecked: Some(difference),
            } => format!(
                "every line holds on mutant {mutant_id} as on the reference, but {} answered differently and its expectation accepts both:{}\n  Expect the reference's answer there, and the probe kills the mutant.",
                quote(difference.line),
                answers(difference.line, &difference.reference, Some(&difference.mutant)),
            ),
        }
    }
}

/// Judges a probe by its run on the reference and its run on a mutant.
pub fn judge(reference: &ProbeRun, mutant: &ProbeRun) -> Verdict {
    if let Some(failed) = reference.failure() {
        return Verdict::WrongReading {
            line: failed.line,
            reference: failed.answer.clone(),
        };
    }
    let difference = |line: &LineRun| Difference {
        line: line.line,
        reference: reference
            .answer(line.line)
            .cloned()
            .expect("a passing run answers every line"),
        mutant: line.answer.clone(),
    };
    if let Some(failed) = mutant.failure() {
        return Verdict::GoodPrediction(difference(failed));
    }
    let unchecked = mutant
        .lines
        .iter()
        .find(|line| {
            reference
                .answer(line.line)
                .is_some_and(|answer| !answer.agrees_with(&line.answer))
        })
        .map(difference);
    Verdict::NotDistinguishing { unchecked }
}

/// How [`check`] runs a probe.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    /// Where the probes' temporary databases go.
    pub scratch: PathBuf,
    /// The longest one run of the probe may take.
    pub timeout: Duration,
    /// How many times a probe that races claims runs against each variant
    /// before it counts as passing there (a race may not show on the first
    /// run). Probes without `claim-many` run once: they are deterministic.
    pub attempts: u32,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            scratch: crate::runner::default_scratch(),
            timeout: Duration::from_secs(10),
            attempts: 1,
        }
    }
}

/// One mutant's part of a [`ProbeCheck`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MutantCheck {
    /// The mutant's id.
    pub id: &'static str,
    /// How many runs it took: the one that failed, or every attempt.
    pub attempts: u32,
    /// The run judged: the first failing one, or the last.
    pub run: ProbeRun,
    /// The verdict.
    pub verdict: Verdict,
}

/// A probe checked against the reference and some mutants.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProbeCheck {
    /// The probe's file name.
    pub probe: String,
    /// The reference's run: the first failing one, or the last.
    pub reference: ProbeRun,
    /// The verdict on every mutant, in the order given; empty when the
    /// probe fails on the reference, since then it predicts nothing.
    pub mutants: Vec<MutantCheck>,
}

impl ProbeCheck {
    /// The line that failed on the reference, if the probe reads the contract wrongly.
    pub fn wrong_reading(&self) -> Option<Verdict> {
        self.reference
            .failure()
            .map(|failed| Verdict::WrongReading {
                line: failed.line,
                reference: failed.answer.clone(),
            })
    }

    /// The ids of the mutants the probe kills.
    pub fn killed(&self) -> Vec<&'static str> {
        self.mutants
            .iter()
            .filter(|mutant| mutant.verdict.kills())
            .map(|mutant| mutant.id)
            .collect()
    }

    /// Whether the probe holds on the reference and kills every mutant checked.
    pub fn kills_all(&self) -> bool {
        self.wrong_reading().is_none() && self.mutants.iter().all(|m| m.verdict.kills())
    }
}

/// Runs `probe` on `store` up to `attempts` times, stopping at the first
/// run with a failing line; returns that run (or the last) and the count.
fn run_until_failure(
    probe: &Probe,
    store: &'static dyn JobStore,
    options: &CheckOptions,
) -> io::Result<(ProbeRun, u32)> {
    let attempts = if probe.races() {
        options.attempts.max(1)
    } else {
        1
    };
    let mut attempt = 1;
    loop {
        let run = run(probe, store, &options.scratch, options.timeout)?;
        if run.failure().is_some() || attempt == attempts {
            return Ok((run, attempt));
        }
        attempt += 1;
    }
}

/// Runs `probe` against the reference and then against each of `mutants`,
/// and judges it on each.
///
/// When the probe fails on the reference, the mutants are not run: a wrong
/// reading of the contract predicts nothing about them.
///
/// Errors: only when a temporary folder or thread cannot be made.
pub fn check(
    probe: &Probe,
    mutants: &[&'static CompiledMutant],
    options: &CheckOptions,
) -> io::Result<ProbeCheck> {
    let (reference, _) = run_until_failure(probe, &REFERENCE, options)?;
    let mut checks = Vec::new();
    if reference.failure().is_none() {
        for mutant in mutants {
            let store = Variant::Mutant(mutant).operations();
            let (run, attempts) = run_until_failure(probe, store, options)?;
            checks.push(MutantCheck {
                id: mutant.id,
                attempts,
                verdict: judge(&reference, &run),
                run,
            });
        }
    }
    Ok(ProbeCheck {
        probe: probe.file_name.clone(),
        reference,
        mutants: checks,
    })
}

/// The check as text for the terminal: the reference's verdict, then one
/// paragraph per mutant; coloured when colour is on.
pub fn check_text(probe: &Probe, check: &ProbeCheck) -> String {
    let mut out = String::new();
    writeln!(out, "{}", format!("probe {}", probe.file_name).bold()).unwrap();
    if let Some(verdict) = check.wrong_reading() {
        writeln!(
            out,
            "{} {}",
            "wrong reading:".red().bold(),
            verdict.explain(probe, "")
        )
        .unwrap();
        return out;
    }
    writeln!(
        out,
        "{} all {} lines hold",
        "reference:".green().bold(),
        probe.lines.len() - 1
    )
    .unwrap();
    for mutant in &check.mutants {
        let label = if mutant.verdict.kills() {
            format!("mutant {} killed:", mutant.id).green().bold()
        } else {
            format!("mutant {} survives:", mutant.id).yellow().bold()
        };
        let tries = if mutant.attempts > 1 {
            format!(" (after {} runs)", mutant.attempts)
        } else {
            String::new()
        };
        writeln!(
            out,
            "{label}{tries} {}",
            mutant.verdict.explain(probe, mutant.id)
        )
        .unwrap();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(line: &str) -> ProbeLine {
        let probe = parse("t.probe", line).unwrap_or_else(|e| panic!("{e}"));
        probe.lines[1].clone()
    }

    fn error(text: &str) -> String {
        parse("t.probe", text).unwrap_err().to_string()
    }

    #[test]
    fn reads_every_operation() {
        assert_eq!(one("init").operation, Operation::Init);
        assert_eq!(
            one("state j1 fence -> 2").operation,
            Operation::State {
                job: "j1".into(),
                field: Some(Field::Fence)
            }
        );
        assert_eq!(
            one("renew j A 3 ttl=5 now=-1").operation,
            Operation::Renew {
                job: "j".into(),
                owner: "A".into(),
                fence: 3,
                now: -1.0,
                ttl: 5.0
            }
        );
        assert_eq!(
            one(r#"complete j A 1 now=2 result="all \"done\"""#).operation,
            Operation::Complete {
                job: "j".into(),
                owner: "A".into(),
                fence: 1,
                now: 2.0,
                result: "all \"done\"".into()
            }
        );
        assert_eq!(
            one("release j A 1").operation,
            Operation::Release {
                job: "j".into(),
                owner: "A".into(),
                fence: 1
            }
        );
    }

    #[test]
    fn expands_owner_ranges_only_when_unquoted() {
        let Operation::ClaimMany { owners, .. } =
            one(r#"claim-many j w*3 "x*2" B now=0 ttl=1"#).operation
        else {
            panic!("a claim-many line");
        };
        assert_eq!(owners, ["w1", "w2", "w3", "x*2", "B"]);
    }

    #[test]
    fn reads_every_kind_of_expectation() {
        assert_eq!(one("init -> ok").expectation, Expectation::Ok);
        assert_eq!(one("enqueue j").expectation, Expectation::Runs);
        assert_eq!(
            one("claim j A now=0 ttl=1 -> null").expectation,
            Expectation::Fence(None)
        );
        assert_eq!(
            one("state j -> owner=none until=1.5 done=true").expectation,
            Expectation::Row(vec![
                (Field::Owner, Value::Text(None)),
                (Field::Until, Value::Number(1.5)),
                (Field::Done, Value::Bool(true)),
            ])
        );
        assert_eq!(
            one(r#"state j result -> "none""#).expectation,
            Expectation::Field(Field::Result, Value::Text(Some("none".into())))
        );
        assert_eq!(
            one("claim-many j A B now=0 ttl=1 -> [1 none]").expectation,
            Expectation::Fences(vec![Some(1), None])
        );
        assert_eq!(
            one("claim-many j A*4 now=0 ttl=1 -> one-winner").expectation,
            Expectation::Winners {
                winners: 1,
                owners: 4
            }
        );
        assert_eq!(
            one("claim j A now=0 ttl=0 -> error invalid-argument # ttl must be > 0").expectation,
            Expectation::Error(Some(ErrorKind::InvalidArgument))
        );
    }

    #[test]
    fn keeps_the_call_as_written() {
        assert_eq!(
            one("claim j1 A now=0 ttl=10   -> 1   # first").call,
            "claim j1 A now=0 ttl=10"
        );
    }

    #[test]
    fn names_what_it_expected_and_found() {
        assert_eq!(
            error("enqueue j\nclaim j A now=0 -> 1"),
            "t.probe:2: expected `ttl=`, but found the end of the line"
        );
        assert_eq!(
            error("claim j now=0 ttl=1"),
            "t.probe:1: expected an owner, but found `now=`"
        );
        assert_eq!(
            error("enqueue j -> yes"),
            "t.probe:1: expected `true`, `false` or `error`, but found `yes`"
        );
        assert_eq!(
            error("grab j"),
            format!("t.probe:1: expected {OPERATIONS}, but found `grab`")
        );
        assert_eq!(
            error("enqueue \"j"),
            "t.probe:1: expected a closing `\"`, but found the end of the line"
        );
        assert_eq!(
            error("claim j A now=0 now=1 ttl=1"),
            "t.probe:1: expected each argument once, but found `now=` twice"
        );
        assert_eq!(
            error("state j colour -> 1"),
            format!("t.probe:1: expected {FIELDS}, but found `colour`")
        );
        assert_eq!(
            error("claim j A now=0 ttl=1 -> error oops"),
            format!("t.probe:1: expected {}, but found `oops`", error_kinds())
        );
        assert_eq!(
            error("claim-many j w*0 now=0 ttl=1"),
            "t.probe:1: expected `NAME*K` with K from 1 to 1000, but found `w*0`"
        );
        assert_eq!(
            error("# nothing but a comment\n"),
            "t.probe:1: expected at least one operation (enqueue, state, claim, ...), but found the end of the file"
        );
    }

    #[test]
    fn expectations_accept_only_their_answers() {
        let row = Job {
            id: "j".into(),
            owner: Some("A".into()),
            until: 10.0,
            fence: Fence(1),
            result: None,
            done: false,
        };
        let winners = Expectation::Winners {
            winners: 1,
            owners: 3,
        };
        assert!(winners.holds(&Answer::Fences(vec![None, Some(1), None])));
        assert!(!winners.holds(&Answer::Fences(vec![Some(1)])));
        assert!(!winners.holds(&Answer::Fences(vec![Some(1), Some(2), None])));
        let owner = Expectation::Row(vec![(Field::Owner, Value::Text(Some("A".into())))]);
        assert!(owner.holds(&Answer::Row(Some(row.clone()))));
        assert!(!owner.holds(&Answer::Row(None)));
        assert!(!Expectation::Runs.holds(&Answer::Error {
            kind: ErrorKind::Sqlite,
            message: String::new()
        }));
        assert!(!Expectation::Error(None).holds(&Answer::Crash {
            message: String::new()
        }));
        assert!(Expectation::Error(None).holds(&Answer::Error {
            kind: ErrorKind::Busy,
            message: String::new()
        }));
    }

    #[test]
    fn shows_answers_as_a_probe_would_write_them() {
        let line = one("state j -> none");
        let job = Job {
            id: "j".into(),
            result: Some("two words".into()),
            ..Job::default()
        };
        assert_eq!(
            line.show(&Answer::Row(Some(job))),
            r#"id=j owner=none until=0 fence=0 result="two words" done=false"#
        );
        assert_eq!(
            one("state j owner -> A").show(&Answer::Row(None)),
            "no such job"
        );
        assert_eq!(line.show(&Answer::Fences(vec![Some(1), None])), "[1, none]");
        let many: Vec<Option<i64>> = (0..64).map(|i| (i < 2).then_some(i + 1)).collect();
        assert_eq!(
            line.show(&Answer::Fences(many)),
            "64 answers, 2 fences (1, 2)"
        );
    }

    #[test]
    fn race_answers_agree_in_any_order() {
        let a = Answer::Fences(vec![Some(1), None, None]);
        let b = Answer::Fences(vec![None, None, Some(1)]);
        let c = Answer::Fences(vec![Some(1), Some(2), None]);
        assert!(a.agrees_with(&b));
        assert!(!a.agrees_with(&c));
    }

    #[test]
    fn every_error_kind_has_a_name_and_back() {
        for kind in ErrorKind::ALL {
            assert_eq!(ErrorKind::from_name(kind.name()), Some(kind));
        }
    }
}
