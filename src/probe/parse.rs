//! Reading a probe: the probe language's lines into operations and
//! expectations, with errors that name the line and what was expected.

use super::line::{Expectation, Field, Probe, ProbeError, ProbeLine, Value, MAX_OWNERS};
use crate::error::ErrorKind;
use crate::job::Fence;
use crate::operation::Operation;
use std::path::Path;

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
        operation: Operation::InitDb,
        field: None,
        expectation: Expectation::Ok,
    }];
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let syntax = |Mismatch { expected, found }| ProbeError::Syntax {
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
struct Mismatch {
    expected: String,
    found: String,
}

impl Mismatch {
    fn new(expected: impl Into<String>, found: impl Into<String>) -> Mismatch {
        Mismatch {
            expected: expected.into(),
            found: found.into(),
        }
    }
}

/// What a parse step expected, and the token it found instead (`None`:
/// the end of the line).
fn mismatch(expected: impl Into<String>, found: Option<&Token>) -> Mismatch {
    let found = found.map_or_else(|| "the end of the line".to_string(), Token::describe);
    Mismatch::new(expected, found)
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
            None => return Err(Mismatch::new("a closing `\"`", "the end of the line")),
            Some('"') => return Ok(text),
            Some('\\') => match chars.next().map(|(_, c)| c) {
                Some('"') => text.push('"'),
                Some('\\') => text.push('\\'),
                Some('n') => text.push('\n'),
                Some('t') => text.push('\t'),
                other => {
                    return Err(Mismatch::new(
                        "an escape `\\\"`, `\\\\`, `\\n` or `\\t`",
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
    let parsed = parse_operation(&mut call)?;
    call.end("`->` or the end of the line")?;
    let expectation = match expected_tokens {
        None => Expectation::Runs,
        Some(tokens) => {
            let mut cursor = Cursor::new(tokens);
            let expectation = parse_expectation(&parsed, &mut cursor)?;
            cursor.end("the end of the line")?;
            expectation
        }
    };
    Ok(Some(ProbeLine {
        number,
        call: line[..lexed.call_end].trim().to_string(),
        operation: parsed.operation,
        field: parsed.field,
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
                return Err(Mismatch::new(expected, format!("`{key}=`")))
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

    fn fence(&mut self) -> Result<Fence, Mismatch> {
        self.integer("a fence (a whole number)").map(Fence)
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
                return Err(Mismatch::new(
                    "each argument once",
                    format!("`{key}=` twice"),
                ));
            }
            match self.next() {
                Some(Token::Equals) => {}
                other => return Err(mismatch(format!("`=` after `{key}`"), other)),
            }
            values[index] = Some(value(self, index)?);
        }
    }
}

/// A line's call: the operation, and what the probe language adds to it.
struct ParsedCall {
    operation: Operation,
    field: Option<Field>,
}

fn parse_operation(cursor: &mut Cursor) -> Result<ParsedCall, Mismatch> {
    let found = cursor.peek();
    let name = cursor.word(OPERATIONS)?;
    let mut field_looked_at = None;
    let operation = match name {
        "init" => Operation::InitDb,
        "enqueue" => Operation::Enqueue {
            job_id: cursor.text("a job id")?,
        },
        "state" => {
            let job_id = cursor.text("a job id")?;
            let found = cursor.peek();
            if found.is_some() {
                field_looked_at = Some(field(cursor.word(FIELDS)?, found)?);
            }
            Operation::State { job_id }
        }
        "claim" => {
            let job_id = cursor.text("a job id")?;
            let owner = cursor.text("an owner")?;
            let [now, ttl] = lease_times(cursor)?;
            Operation::Claim {
                job_id,
                owner,
                now,
                ttl,
            }
        }
        "renew" => {
            let job_id = cursor.text("a job id")?;
            let owner = cursor.text("an owner")?;
            let fence = cursor.fence()?;
            let [now, ttl] = lease_times(cursor)?;
            Operation::Renew {
                job_id,
                owner,
                fence,
                now,
                ttl,
            }
        }
        "complete" => complete_call(cursor)?,
        "release" => Operation::Release {
            job_id: cursor.text("a job id")?,
            owner: cursor.text("an owner")?,
            fence: cursor.fence()?,
        },
        "claim-many" => claim_many_call(cursor)?,
        _ => return Err(mismatch(OPERATIONS, found)),
    };
    Ok(ParsedCall {
        operation,
        field: field_looked_at,
    })
}

/// The arguments of `complete JOB OWNER FENCE now=N result=TEXT`.
fn complete_call(cursor: &mut Cursor) -> Result<Operation, Mismatch> {
    let job_id = cursor.text("a job id")?;
    let owner = cursor.text("an owner")?;
    let fence = cursor.fence()?;
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
    Ok(Operation::Complete {
        job_id,
        owner,
        fence,
        now,
        result,
    })
}

/// The arguments of `claim-many JOB OWNER... now=N ttl=T`.
fn claim_many_call(cursor: &mut Cursor) -> Result<Operation, Mismatch> {
    let job_id = cursor.text("a job id")?;
    let mut owners = Vec::new();
    while let Some(token) = cursor.peek().filter(|_| !cursor.at_named()) {
        cursor.next();
        owners.extend(owner_group(token)?);
        if owners.len() > MAX_OWNERS {
            let found = token.describe();
            return Err(Mismatch::new(
                format!("at most {MAX_OWNERS} owners on one line"),
                format!("{found}, which makes {}", owners.len()),
            ));
        }
    }
    let [now, ttl] = lease_times(cursor)?;
    Ok(Operation::ClaimMany {
        job_id,
        owners,
        now,
        ttl,
    })
}

/// `now=N ttl=T`, in either order.
fn lease_times(cursor: &mut Cursor) -> Result<[f64; 2], Mismatch> {
    let times = cursor.named(&["now", "ttl"], 2, |cursor, _| {
        cursor.number("a number of seconds")
    })?;
    Ok([0, 1].map(|index| times[index].expect("both keys are required")))
}

/// The owners one token of `claim-many` names: itself, or for an unquoted
/// `NAME*K` the owners `NAME1` to `NAMEK`.
fn owner_group(token: &Token) -> Result<Vec<String>, Mismatch> {
    match token {
        Token::Word(word) => match word.rsplit_once('*') {
            Some((name, count)) => {
                let expected = format!("`NAME*K` with K from 1 to {MAX_OWNERS}");
                let count: usize = count
                    .parse()
                    .ok()
                    .filter(|count| (1..=MAX_OWNERS).contains(count))
                    .ok_or_else(|| mismatch(expected.clone(), Some(token)))?;
                if name.is_empty() {
                    return Err(mismatch(expected, Some(token)));
                }
                Ok((1..=count).map(|i| format!("{name}{i}")).collect())
            }
            None => Ok(vec![word.clone()]),
        },
        Token::Quoted(text) => Ok(vec![text.clone()]),
        other => Err(mismatch("an owner, or `now=`", Some(other))),
    }
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

fn parse_expectation(call: &ParsedCall, cursor: &mut Cursor) -> Result<Expectation, Mismatch> {
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
    match &call.operation {
        Operation::InitDb => keyword(cursor, "`ok` or `error`", |word| {
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
        Operation::State { .. } => match call.field {
            None => row_expectation(cursor),
            Some(field) => Ok(Expectation::Field(field, field_value(field, cursor)?)),
        },
        Operation::ClaimMany { owners, .. } => claims_expectation(cursor, owners.len()),
    }
}

fn error_kinds() -> String {
    let names: Vec<&str> = ErrorKind::ALL.iter().map(|kind| kind.name()).collect();
    format!("an error kind ({})", names.join(", "))
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

fn fence_answer(cursor: &mut Cursor, expected: &str) -> Result<Option<Fence>, Mismatch> {
    if is_none_word(cursor.peek()) {
        cursor.next();
        return Ok(None);
    }
    cursor.integer(expected).map(|fence| Some(Fence(fence)))
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
            return Err(Mismatch::new("each field once", format!("`{name}=` twice")));
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
            // One answer per owner: a list of another length could never
            // hold, so it is refused here, where the line can be fixed.
            let mut fences = Vec::new();
            loop {
                let found = cursor.peek();
                if found == Some(&Token::Close) {
                    if fences.len() < owners {
                        return Err(Mismatch::new(
                            format!("{owners} answers, one per owner"),
                            format!("`]` after {}", fences.len()),
                        ));
                    }
                    cursor.next();
                    return Ok(Expectation::Fences(fences));
                }
                if fences.len() == owners {
                    let expected = format!("`]` after {owners} answers, one per owner");
                    return Err(mismatch(expected, found));
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
                .map_err(|_| Mismatch::new("a number of winners from 0", winners.to_string()))?;
            Ok(Expectation::Winners { winners, owners })
        }
        _ => Err(mismatch(EXPECTED, found)),
    }
}

#[cfg(test)]
mod tests;
