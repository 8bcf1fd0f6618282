//! How a suite test fails: a [`Failure`] that says what was checked, what
//! the contract expects and what the implementation did, the checks that
//! make one (`expect_*`), and how answers and stored rows are shown in it.

use crate::error::StoreError;
use crate::job::{Fence, Job};
use std::fmt;

/// Why a test failed: the check that did not hold, what the contract
/// expects, and what the implementation did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// What was checked, e.g. `claim("j", "B", now=110, ttl=5)`.
    pub check: String,
    /// The contract's answer; spread over lines when long, so rows diff line by line.
    pub expected: String,
    /// What came back.
    pub actual: String,
    /// When the test reads stored rows: what they hold against what the
    /// contract expects, on one line ([`row_diff`]).
    pub state: Option<RowState>,
}

/// What the stored rows hold against what the contract expects, on one
/// line ([`row_diff`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RowState {
    /// The check was of the rows: how they differ from the contract's.
    Differs(String),
    /// The check was of an answer, to a call the contract refuses: the
    /// rows it left behind, against the rows before it.
    LeftBehind(String),
    /// The check was of an answer that depends on the stored row (a lease
    /// at its boundary): the row the call met, as it was before the call,
    /// on one line (several rows, one a line).
    Met {
        /// The row.
        row: String,
        /// Whether the call, one the contract refuses, left it as it was.
        unchanged: bool,
    },
}

impl fmt::Display for RowState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RowState::Differs(diff) if diff.is_empty() => f.write_str("no difference"),
            RowState::Differs(diff) => f.write_str(diff),
            RowState::LeftBehind(diff) if diff.is_empty() => f.write_str("unchanged by the call"),
            RowState::LeftBehind(diff) => write!(f, "{diff}, left behind by the call"),
            RowState::Met { row, unchanged } => {
                let left = if *unchanged { " and left it" } else { "" };
                write!(f, "{row}, as the call met it{left}")
            }
        }
    }
}

impl Failure {
    /// The failure, with the stored state it found.
    pub fn with_state(self, state: RowState) -> Failure {
        Failure {
            state: Some(state),
            ..self
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}\n  expected: {}\n  actual:   {}",
            self.check,
            self.expected.replace('\n', "\n            "),
            self.actual.replace('\n', "\n            ")
        )?;
        match &self.state {
            Some(state) => write!(f, "\n  stored:   {state}"),
            None => Ok(()),
        }
    }
}

/// The outcome of one suite test: `Ok` when every check held.
pub type Checked = Result<(), Failure>;

/// The answer of one store call, or the failure of a call that should not fail.
pub type Answered<T> = Result<T, Failure>;

/// A value as the contract writes it, for failure messages: `true`,
/// `fence 2`, `none`, a stored row on one line, one row per line.
pub trait Shown {
    /// The value in the contract's words.
    fn shown(&self) -> String;
}

/// What `init_db` answers when it succeeds.
impl Shown for () {
    fn shown(&self) -> String {
        "success".into()
    }
}

impl Shown for bool {
    fn shown(&self) -> String {
        self.to_string()
    }
}

impl Shown for usize {
    fn shown(&self) -> String {
        self.to_string()
    }
}

impl Shown for String {
    fn shown(&self) -> String {
        format!("{self:?}")
    }
}

impl Shown for Fence {
    fn shown(&self) -> String {
        format!("fence {self}")
    }
}

impl Shown for Job {
    fn shown(&self) -> String {
        crate::operation::row_text(self)
    }
}

impl<T: Shown> Shown for Option<T> {
    fn shown(&self) -> String {
        self.as_ref()
            .map_or_else(|| "none".to_string(), Shown::shown)
    }
}

/// A list on one line when it is short, else one item per line (stored
/// rows are), so that a failure's expected and actual diff line by line.
impl<T: Shown> Shown for Vec<T> {
    fn shown(&self) -> String {
        if self.is_empty() {
            return "nothing".into();
        }
        let items: Vec<String> = self.iter().map(Shown::shown).collect();
        let line = format!("[{}]", items.join(", "));
        if line.len() <= 60 && !line.contains('\n') {
            line
        } else {
            items.join("\n")
        }
    }
}

impl<T: Shown> Shown for Result<T, String> {
    fn shown(&self) -> String {
        match self {
            Ok(value) => value.shown(),
            Err(error) => format!("error: {error}"),
        }
    }
}

impl<A: Shown, B: Shown> Shown for (A, B) {
    fn shown(&self) -> String {
        format!("{}, {}", self.0.shown(), self.1.shown())
    }
}

/// Checks that `actual` equals `expected`.
pub fn expect_eq<T: Shown + PartialEq>(
    check: impl Into<String>,
    actual: T,
    expected: T,
) -> Checked {
    if actual == expected {
        Ok(())
    } else {
        Err(Failure {
            check: check.into(),
            expected: expected.shown(),
            actual: actual.shown(),
            state: None,
        })
    }
}

/// Checks that a call was refused as an invalid argument (the worksheet's `ValueError`).
pub fn expect_invalid<T: Shown>(
    check: impl Into<String>,
    result: Result<T, StoreError>,
) -> Checked {
    match result {
        Err(StoreError::InvalidArgument(_)) => Ok(()),
        other => Err(Failure {
            check: check.into(),
            expected: "error invalid-argument".into(),
            actual: describe(&other),
            state: None,
        }),
    }
}

/// Checks that a call failed with an error that `matches` accepts.
pub fn expect_error<T: Shown>(
    check: impl Into<String>,
    result: Result<T, StoreError>,
    expected: &str,
    matches: impl Fn(&StoreError) -> bool,
) -> Checked {
    match &result {
        Err(error) if matches(error) => Ok(()),
        _ => Err(Failure {
            check: check.into(),
            expected: expected.into(),
            actual: describe(&result),
            state: None,
        }),
    }
}

/// Checks a condition that has no single expected value; `actual` says
/// what was found, in the contract's words.
pub fn expect_that(
    check: impl Into<String>,
    holds: bool,
    expected: &str,
    actual: String,
) -> Checked {
    if holds {
        Ok(())
    } else {
        Err(Failure {
            check: check.into(),
            expected: expected.into(),
            actual,
            state: None,
        })
    }
}

/// Checks that the stored rows are `expected`; a failure says, on one
/// line, how they differ ([`row_diff`]).
pub fn expect_rows(check: impl Into<String>, actual: Vec<Job>, expected: Vec<Job>) -> Checked {
    // The difference is worked out only for a failure: the suite checks
    // rows in every test of every variant.
    if actual == expected {
        return Ok(());
    }
    let state = RowState::Differs(row_diff(&expected, &actual));
    expect_eq(check, actual, expected).map_err(|failure| failure.with_state(state))
}

/// How the stored rows `actual` differ from the `expected` ones, on one
/// line, field by field, the contract's value first:
/// `"j": owner "A" -> none, fence 1 -> 0`; a row that should not be there
/// is `"x" added`, one that is missing `"j" missing`; empty when they are
/// the same.
pub fn row_diff(expected: &[Job], actual: &[Job]) -> String {
    let quoted =
        |value: &Option<String>| value.as_ref().map_or("none".into(), |t| format!("{t:?}"));
    let mut parts = Vec::new();
    for want in expected {
        let Some(got) = actual.iter().find(|job| job.id == want.id) else {
            parts.push(format!("{:?} missing", want.id));
            continue;
        };
        let fields = [
            ("owner", quoted(&want.owner), quoted(&got.owner)),
            ("until", want.until.to_string(), got.until.to_string()),
            ("fence", want.fence.to_string(), got.fence.to_string()),
            ("result", quoted(&want.result), quoted(&got.result)),
            ("done", want.done.to_string(), got.done.to_string()),
        ];
        let changed: Vec<String> = fields
            .iter()
            .filter(|(_, want, got)| want != got)
            .map(|(name, want, got)| format!("{name} {want} -> {got}"))
            .collect();
        if !changed.is_empty() {
            parts.push(format!("{:?}: {}", want.id, changed.join(", ")));
        }
    }
    for got in actual {
        if !expected.iter().any(|job| job.id == got.id) {
            parts.push(format!("{:?} added", got.id));
        }
    }
    parts.join("; ")
}

/// An answer or an error as the contract writes them: the value, or
/// `error KIND: what went wrong` (without the test's temporary path).
pub fn describe<T: Shown>(result: &Result<T, StoreError>) -> String {
    match result {
        Ok(value) => value.shown(),
        Err(error) => error_text(error),
    }
}

/// `error KIND: what went wrong`.
pub fn error_text(error: &StoreError) -> String {
    format!("error {}: {}", error.kind().name(), error.detail())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::bench::{completed, fresh, held};

    #[test]
    fn a_row_diff_names_each_changed_field_the_contract_s_value_first() {
        let claimed = held("j", "A", 1, 110.0);
        assert_eq!(
            row_diff(std::slice::from_ref(&claimed), &[fresh("j")]),
            "\"j\": owner \"A\" -> none, until 110 -> 0, fence 1 -> 0"
        );
        assert_eq!(
            row_diff(
                &[completed("j", "B", 2, 125.0, "b")],
                &[completed("j", "B", 2, 125.0, "again")]
            ),
            "\"j\": result \"b\" -> \"again\""
        );
        assert_eq!(
            row_diff(
                &[claimed.clone(), fresh("k")],
                &[claimed.clone(), fresh("x")]
            ),
            "\"k\" missing; \"x\" added"
        );
        assert_eq!(
            row_diff(
                std::slice::from_ref(&claimed),
                std::slice::from_ref(&claimed)
            ),
            ""
        );
        let done = Job {
            done: true,
            ..fresh("j")
        };
        assert_eq!(
            row_diff(&[fresh("j")], &[done]),
            "\"j\": done false -> true"
        );
    }

    #[test]
    fn a_failure_shows_the_stored_rows_on_a_line_of_their_own() {
        let failure = Failure {
            check: "complete again".into(),
            expected: "false".into(),
            actual: "true".into(),
            state: None,
        }
        .with_state(RowState::LeftBehind(
            "\"j\": result \"b\" -> \"again\"".into(),
        ));
        assert_eq!(
            failure.to_string(),
            "complete again\n  expected: false\n  actual:   true\n  stored:   \"j\": result \"b\" -> \"again\", left behind by the call"
        );
        assert_eq!(
            RowState::LeftBehind(String::new()).to_string(),
            "unchanged by the call"
        );
        assert_eq!(
            RowState::Differs(String::new()).to_string(),
            "no difference"
        );
    }
}
