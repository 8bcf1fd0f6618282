//! Reports of the kill matrix that other tools and people open: a
//! Stryker mutation-testing report ([`stryker`]) and a self-contained HTML
//! page ([`html`]).
//!
//! This module holds what both need: where each mutant's change sits in
//! the reference source, and which file each suite test lives in.

pub mod html;
pub mod stryker;

use crate::variant::{CompiledMutant, REFERENCE_SOURCE};

/// A place in a text file: 1-based line and column, the column counted in
/// UTF-16 code units as JavaScript viewers count them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// The line, from 1.
    pub line: usize,
    /// The column, from 1.
    pub column: usize,
}

/// The part of the reference source that a mutant replaces, and what it
/// puts there, without the spacing the two share at either end (a
/// fragment often carries its line breaks and indentation for context).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Where the replaced text starts (inclusive).
    pub start: Position,
    /// Where it ends (exclusive).
    pub end: Position,
    /// The reference's text in that range.
    pub original: String,
    /// The mutant's text for it.
    pub replacement: String,
}

/// The change `mutant` makes to the reference source.
///
/// # Panics
///
/// If the mutant's fragment does not occur in [`REFERENCE_SOURCE`]: the
/// build compiled it by replacing that very fragment in that very file, so
/// this cannot happen for a mutant of this binary.
pub fn change(mutant: &CompiledMutant) -> Change {
    let offset = REFERENCE_SOURCE.find(mutant.fragment).unwrap_or_else(|| {
        panic!(
            "mutant {}'s fragment is not in the reference source it was built from",
            mutant.id
        )
    });
    let lead = shared_spacing(mutant.fragment.chars(), mutant.replacement.chars());
    let trail = shared_spacing(
        mutant.fragment.chars().rev(),
        mutant.replacement.chars().rev(),
    )
    .min(mutant.fragment.len() - lead)
    .min(mutant.replacement.len() - lead);
    let start = offset + lead;
    let end = offset + mutant.fragment.len() - trail;
    Change {
        start: position(REFERENCE_SOURCE, start),
        end: position(REFERENCE_SOURCE, end),
        original: REFERENCE_SOURCE[start..end].to_string(),
        replacement: mutant.replacement[lead..mutant.replacement.len() - trail].to_string(),
    }
}

/// The length in bytes of the whitespace that both texts start with.
fn shared_spacing(a: impl Iterator<Item = char>, b: impl Iterator<Item = char>) -> usize {
    a.zip(b)
        .take_while(|(x, y)| x == y && x.is_whitespace())
        .map(|(x, _)| x.len_utf8())
        .sum()
}

/// The position of byte `offset` of `text`.
pub fn position(text: &str, offset: usize) -> Position {
    let before = &text[..offset];
    let line_start = before.rfind('\n').map_or(0, |at| at + 1);
    Position {
        line: before.matches('\n').count() + 1,
        column: before[line_start..].encode_utf16().count() + 1,
    }
}

/// The file of the contract suite that holds the tests of `step`.
pub fn test_file(step: u8) -> String {
    format!("tests/suite/step{step}.rs")
}

/// A kill matrix made by hand, for the reports' tests.
#[cfg(test)]
pub(crate) mod sample {
    use crate::matrix::Matrix;
    use crate::outcome::{Outcome, TestRun};
    use crate::runner::VariantRun;
    use crate::suite::CASES;
    use crate::variant::Variant;
    use std::time::Duration;

    /// The tests of steps 4 to 8 against the reference, which passes them
    /// all, and four mutants: 04 fails the boundary test (with a message
    /// full of characters HTML must escape), 05 times out on one test, 06
    /// crashes on one, and 07 survives.
    pub(crate) fn matrix() -> Matrix {
        let tests: Vec<_> = CASES.iter().filter(|case| case.step >= 4).collect();
        let outcome = |id: &str, test: &str| match (id, test) {
            ("04", "claim_at_exact_expiry_is_reassigned") => Outcome::Fail {
                check: "claim(\"j\", \"B\", now=110, ttl=5)".into(),
                expected: "Some(\n    Fence(2),\n)".into(),
                actual: "None <script>&".into(),
            },
            ("05", "renew_at_exact_expiry_is_refused") => Outcome::Timeout { limit_ms: 10 },
            ("06", "second_completion_is_refused_and_keeps_the_result") => Outcome::Crash {
                message: "panicked: boom".into(),
            },
            _ => Outcome::Pass,
        };
        let runs = ["correct", "04", "05", "06", "07"]
            .iter()
            .map(|id| VariantRun {
                variant: Variant::find(id).expect("a variant of this build"),
                runs: tests
                    .iter()
                    .map(|case| {
                        TestRun::new(case.name, outcome(id, case.name), Duration::from_millis(2))
                    })
                    .collect(),
            })
            .collect();
        Matrix { tests, runs }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variant::MUTANTS;

    #[test]
    fn positions_count_lines_and_utf16_columns_from_one() {
        let text = "ab\nµx\n";
        assert_eq!(position(text, 0), Position { line: 1, column: 1 });
        assert_eq!(position(text, 3), Position { line: 2, column: 1 });
        // µ is two bytes in UTF-8 and one unit in UTF-16.
        assert_eq!(position(text, 5), Position { line: 2, column: 2 });
        assert_eq!(position(text, text.len()), Position { line: 3, column: 1 });
    }

    /// The byte offset of `position` in `text`: the inverse of [`position`].
    fn offset(text: &str, position: Position) -> usize {
        let line_start: usize = text
            .split_inclusive('\n')
            .take(position.line - 1)
            .map(str::len)
            .sum();
        let mut units = 0;
        let column_bytes: usize = text[line_start..]
            .chars()
            .take_while(|c| {
                units += c.len_utf16();
                units < position.column
            })
            .map(char::len_utf8)
            .sum();
        line_start + column_bytes
    }

    #[test]
    fn every_change_is_the_fragment_at_its_place_less_shared_spacing() {
        for mutant in MUTANTS {
            let change = change(mutant);
            let (start, end) = (
                offset(REFERENCE_SOURCE, change.start),
                offset(REFERENCE_SOURCE, change.end),
            );
            assert_eq!(
                REFERENCE_SOURCE[start..end],
                change.original,
                "mutant {}",
                mutant.id
            );
            assert!(mutant.fragment.contains(change.original.as_str()));
            assert!(mutant.replacement.contains(change.replacement.as_str()));
            assert_ne!(change.original, change.replacement, "mutant {}", mutant.id);
        }
    }

    #[test]
    fn a_fragment_with_line_breaks_for_context_loses_them() {
        let mutant = crate::variant::mutant("08b").expect("mutant 08b exists");
        let change = change(mutant);
        assert!(
            change.original.starts_with("let tx"),
            "{:?}",
            change.original
        );
        assert!(change.original.ends_with(';'), "{:?}", change.original);
        assert!(change.replacement.starts_with("let lease"));
        assert_eq!(change.end.line, change.start.line + 1);
    }
}
