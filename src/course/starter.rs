//! The starting points of `lab new`: a student's own implementation in
//! Python (one file) or in Rust (a small cargo project), with the protocol
//! loop done and the eight operations left to write, each with the
//! worksheet's contract as its documentation.
//!
//! The Python starter is the lab's own Python store with the body of each
//! function in [`PYTHON_STUBS`] replaced by `raise NotImplementedError`
//! naming its step, so that it can never drift from the store the lab
//! tests: same helpers, same protocol loop. What is given and what the
//! student writes follows one rule: the protocol belongs to the starter,
//! the worksheet's rules to the student.
//!
//! - Given: the protocol loop and the error mapping (the exception classes
//!   that name the protocol's error kinds, and the answer each exception
//!   and SQLite error code gets), so that every error kind the contract
//!   uses can be raised; and the plumbing of every call that no worksheet
//!   step teaches: `connect` (the path's checks, the busy timeout,
//!   autocommit, `synchronous=FULL`) and the busy-timeout and thread-limit
//!   constants.
//! - Written by the student: the argument checks (`check_args`: the
//!   `ValueError` for `ttl <= 0`, the empty id), the schema (`check_schema`,
//!   which `connect` calls, and the `CREATE TABLE` of `init_db`), and every
//!   SQL statement, all in the stubs' bodies. A stub answers "not written"
//!   through the protocol, so that as generated every step, its
//!   invalid-argument tests included, is not written, and none passes.
//!
//! A helper's stub names the step of its first caller (`check_schema`
//! step 1, `check_args` step 2): the step whose tests first need it.

use crate::lab_text::Language;
use crate::subject::own::write_once;
use crate::subject::{rust_project, Implementation, PYTHON_SOURCE};
use std::path::{Path, PathBuf};

pub use crate::operation::NAMES as OPERATIONS;

/// The functions of the Python store whose bodies the starter leaves to
/// the student, each with the step its stub names, in the file's order.
pub const PYTHON_STUBS: [(&str, u8); 10] = [
    ("check_args", 2),
    ("check_schema", 1),
    ("init_db", 1),
    ("enqueue", 2),
    ("state", 3),
    ("claim", 4),
    ("renew", 5),
    ("complete", 6),
    ("release", 7),
    ("claim_many", 8),
];

/// The line a stub of the Python starter is: what it answers names its
/// step and its function.
pub fn python_stub(name: &str, step: u8) -> String {
    format!("    raise NotImplementedError(\"step {step}: {name} is not written yet\")")
}

/// What the starter's module documentation says instead of the store's.
const PYTHON_HEADER: &str = r#""""Your job store in Python, on SQLite: an ownership lease plus a fencing token.

Write the eight functions below, in order, one worksheet step each, and the
two checks they rely on: check_schema (step 1) and check_args (step 2). Each
one's docstring is its contract; each still raises NotImplementedError, which
the lab reports as "not written". After each step run `lab check` (or keep
`lab watch` running): it runs the lab's contract tests of the steps so far
against this file and says which pass.

Each function takes the database path and opens its own connection for the
one call with connect(path). Time is a number of seconds given by the caller
(`now`), never read from the machine: a lease is valid while now < until.

Given, and needing no change: connect and the constants (the plumbing of
every call, which no worksheet step is about), the error classes (raise them,
or a ValueError for an invalid argument: the lab sees each as its kind), and
everything below the line "The lab's protocol", which runs the file as a
program that `lab` talks to (labs/protocol.md). print() goes to standard
error, where it cannot disturb the lab.
""""#;

/// The Python starter's text.
pub fn python() -> String {
    let mut out = String::from(PYTHON_HEADER);
    out.push('\n');
    let mut lines = skip_docstring(PYTHON_SOURCE.lines()).peekable();
    while let Some(line) = lines.next() {
        out.push_str(line);
        out.push('\n');
        let Some((name, step)) = stub(line) else {
            continue;
        };
        // The docstring stays: it is the contract.
        let mut opening = true;
        for line in lines.by_ref() {
            out.push_str(line);
            out.push('\n');
            let text = line.trim();
            let rest = if opening {
                text.get(3..).unwrap_or("")
            } else {
                text
            };
            opening = false;
            if rest.ends_with(QUOTES) {
                break;
            }
        }
        out.push_str(&python_stub(name, step));
        out.push('\n');
        // The body goes, up to the next statement at the file's top level.
        while lines
            .peek()
            .is_some_and(|next| next.is_empty() || next.starts_with(char::is_whitespace))
        {
            if lines.next().is_some_and(str::is_empty) {
                out.push('\n');
            }
        }
    }
    out
}

/// A docstring's quotes.
const QUOTES: &str = "\"\"\"";

/// The lines after the module's docstring (which opens the file and spans
/// several lines).
fn skip_docstring<'a>(mut lines: impl Iterator<Item = &'a str>) -> impl Iterator<Item = &'a str> {
    let _opening = lines.next();
    for line in lines.by_ref() {
        if line.trim_end().ends_with(QUOTES) {
            break;
        }
    }
    lines
}

/// The stub a line defines, with its step, if it defines one.
fn stub(line: &str) -> Option<(&'static str, u8)> {
    let name = line.strip_prefix("def ")?.split('(').next()?;
    PYTHON_STUBS.into_iter().find(|(stub, _)| *stub == name)
}

/// Why a starter was not written.
#[derive(Debug, thiserror::Error)]
pub enum StarterError {
    /// The folder or a file in it cannot be written.
    #[error("cannot write the starter in {}: {error}", dir.display())]
    Unwritable {
        /// The folder.
        dir: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// What was written cannot be named as an implementation.
    #[error(transparent)]
    Invalid(#[from] crate::subject::InvalidImpl),
}

/// Writes a starter in `language` into `dir` (made if missing; a file
/// already there is never overwritten), and returns the implementation
/// to record for `lab check` and `lab watch`, and the file where step 1 is
/// written: a Python starter is `dir/store.py`, a Rust one a cargo project
/// whose operations are in `src/store.rs`.
///
/// Errors: the folder or a file cannot be written; the message names the
/// folder.
pub fn write_starter(
    language: Language,
    dir: &Path,
) -> Result<(Implementation, PathBuf), StarterError> {
    let unwritable = |error: std::io::Error| StarterError::Unwritable {
        dir: dir.to_path_buf(),
        error,
    };
    match language {
        Language::Python => {
            std::fs::create_dir_all(dir).map_err(unwritable)?;
            let file = dir.join("store.py");
            write_once(&file, &python()).map_err(unwritable)?;
            let implementation = Implementation::parse(&file.display().to_string())?;
            Ok((implementation, file))
        }
        Language::Rust => {
            rust_project::write(dir, rust_project::STUBS).map_err(unwritable)?;
            let implementation = Implementation::parse(&dir.display().to_string())?;
            Ok((implementation, dir.join("src").join("store.rs")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The part of the starter above its protocol loop: the student's file.
    fn above_the_protocol(starter: &str) -> &str {
        let line = "# --- The lab's protocol: nothing below needs changing ---";
        let (above, _) = starter.split_once(line).expect("the protocol's line");
        above
    }

    #[test]
    fn the_python_starter_stubs_every_rule_and_keeps_contracts_plumbing_and_protocol() {
        let starter = python();
        assert!(starter.starts_with(r#""""Your job store in Python, on SQLite"#));
        for name in &OPERATIONS {
            assert!(
                PYTHON_STUBS.iter().any(|(stub, _)| stub == name),
                "{name} is a stub"
            );
        }
        for (name, step) in PYTHON_STUBS {
            assert!(starter.contains(&format!("\ndef {name}(")), "{name}");
            let stub = python_stub(name, step);
            assert_eq!(starter.matches(&stub).count(), 1, "{stub}");
        }
        assert_eq!(
            starter.matches("raise NotImplementedError(").count(),
            PYTHON_STUBS.len(),
            "a stub each, and no other"
        );
        let student = above_the_protocol(&starter);
        // Every SQL statement is the student's: the one left is connect's.
        let statements: Vec<&str> = student
            .match_indices("conn.execute(")
            .map(|(at, _)| student[at..].lines().next().unwrap_or(""))
            .collect();
        assert_eq!(statements, ["conn.execute(\"PRAGMA synchronous=FULL\")"]);
        // Every argument check is the student's: the one left is the path's.
        let refusals: Vec<&str> = student
            .match_indices("raise ValueError(")
            .map(|(at, _)| student[at..].lines().next().unwrap_or(""))
            .collect();
        assert_eq!(
            refusals,
            ["raise ValueError(\"the database path must not be empty: \""]
        );
        for gone in [
            "INSERT OR IGNORE",
            "CREATE TABLE IF NOT EXISTS",
            "(\"until\", \"REAL\", 1, \"0\", 0)",
            "raise IncompatibleSchema(",
            "ttl <= 0:",
            "min(len(owners), MAX_CLAIM_THREADS)",
        ] {
            assert!(!starter.contains(gone), "the answer {gone:?} is left in");
        }
        for kept in [
            "Step 4. Take an expired lease atomically.",
            "The argument checks of every operation but init_db.",
            "def connect(",
            "raise NoJobsTable(",
            "class IncompatibleSchema(StoreError, sqlite3.DatabaseError):",
            "reply = {\"error\": error.kind, \"message\": str(error)}",
            "reply[\"waited_ms\"]",
            "\"concurrent\": True",
        ] {
            assert!(starter.contains(kept), "{kept:?} is missing");
        }
        assert_eq!(
            starter.matches("\n\n\n\n").count(),
            0,
            "no runs of blank lines"
        );
    }

    /// The starter is the student's file: no line of it is wider than a
    /// terminal of 80 columns.
    #[test]
    fn no_line_of_the_python_starter_is_over_80_columns() {
        let starter = python();
        let wide: Vec<(usize, &str)> = starter
            .lines()
            .enumerate()
            .filter(|(_, line)| line.chars().count() > 80)
            .map(|(at, line)| (at + 1, line))
            .collect();
        assert!(wide.is_empty(), "lines over 80 columns: {wide:#?}");
    }

    #[test]
    fn only_the_stubs_definitions_are_stubs() {
        assert_eq!(
            stub("def check_args(job_id, owner=None):"),
            Some(("check_args", 2))
        );
        assert_eq!(stub("def claim_many(path):"), Some(("claim_many", 8)));
        assert_eq!(stub("def connect(path, create=False):"), None);
        assert_eq!(stub("    def init_db(path):"), None);
        assert_eq!(stub("# def init_db(path):"), None);
    }
}
