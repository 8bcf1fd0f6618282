//! The starting points of `lab new`: a student's own implementation in
//! Python (one file) or in Rust (a small cargo project), with the protocol
//! loop done and the eight operations left to write, each with the
//! worksheet's contract as its documentation.
//!
//! The Python starter is the lab's own Python store with the body of each
//! operation replaced by `raise NotImplementedError`, so that it can never
//! drift from the store the lab tests: same helpers, same protocol loop.

use crate::subject::PYTHON_SOURCE;

pub use crate::operation::NAMES as OPERATIONS;

/// What the starter's module documentation says instead of the store's.
const PYTHON_HEADER: &str = r#""""Your lease-lab job store in Python: an ownership lease plus a fencing token, on SQLite.

Write the eight functions below, in order, one worksheet step each; each
one's docstring is its contract. After each step run `lab check` (or keep
`lab watch` running): it runs the lab's contract tests of the steps so far
against this file and says which pass.

Each function takes the database path and opens its own connection for the
one call. Time is a number of seconds given by the caller (`now`), never
read from the machine: a lease is valid while now < until.

The helpers above the functions may be used as they are. Everything below
the line "The lab's protocol" runs the file as a program that `lab` talks
to (labs/protocol.md); it needs no change. print() goes to standard error,
where it cannot disturb the lab.
""""#;

/// The Python starter's text.
pub fn python() -> String {
    let mut out = String::from(PYTHON_HEADER);
    out.push('\n');
    let mut lines = skip_docstring(PYTHON_SOURCE.lines()).peekable();
    while let Some(line) = lines.next() {
        out.push_str(line);
        out.push('\n');
        let Some(step) = operation(line) else {
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
        let name = OPERATIONS[step - 1];
        out.push_str(&format!(
            "    raise NotImplementedError(\"step {step}: {name} is not written yet\")\n"
        ));
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

/// The step of the operation a line defines, if it defines one.
fn operation(line: &str) -> Option<usize> {
    let name = line.strip_prefix("def ")?.split('(').next()?;
    OPERATIONS
        .iter()
        .position(|operation| *operation == name)
        .map(|index| index + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_python_starter_keeps_contracts_helpers_and_protocol_and_drops_the_bodies() {
        let starter = python();
        assert!(starter.starts_with(r#""""Your lease-lab job store in Python"#));
        for (index, name) in OPERATIONS.iter().enumerate() {
            assert!(starter.contains(&format!("\ndef {name}(")), "{name}");
            assert!(
                starter.contains(&format!(
                    "raise NotImplementedError(\"step {}: {name} is not written yet\")",
                    index + 1
                )),
                "{name}"
            );
        }
        for gone in [
            "INSERT OR IGNORE",
            "conn.execute(\"BEGIN IMMEDIATE\")",
            "fence = fence + 1",
            "min(len(owners), MAX_CLAIM_THREADS)",
        ] {
            assert!(!starter.contains(gone), "the answer {gone:?} is left in");
        }
        for kept in [
            "def check_args(",
            "def connect(",
            "Step 4. Take an expired lease atomically.",
            "# --- The lab's protocol: nothing below needs changing ---",
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
}
