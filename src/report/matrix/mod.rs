//! The kill matrix's reports: terminal text ([`text`]), JSON ([`json`]),
//! Markdown ([`markdown`]), a Stryker mutation-testing report
//! ([`stryker`]), that report in Stryker's own viewer ([`stryker_page`])
//! and a self-contained HTML page ([`html`]).
//!
//! This module holds what they share: how an outcome looks ([`look`]),
//! where each mutant's change sits in its reference source, which file
//! each suite test lives in, and what to say about a survivor.

pub mod html;
pub mod json;
pub mod markdown;
pub mod stryker;
pub mod stryker_page;
pub mod text;

use crate::exercise::probe_file;
use crate::matrix::{Matrix, Verdict};
use crate::outcome::{MutantStatus, Outcome};
use crate::runner::VariantRun;
use crate::suite::Case;
use crate::variant::Mutant;
use colored::{Color, ColoredString, Colorize};

/// How one cell of the matrix looks, in every rendering: a test's outcome
/// against the reference or against a mutant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Look {
    /// The one-character mark of the cell.
    pub glyph: &'static str,
    /// Its class in HTML, and its name in legends.
    pub class: &'static str,
    /// What it means, for legends.
    pub meaning: &'static str,
    /// Its colour in a terminal, if any; shown bold when it calls for attention.
    color: Option<(Color, bool)>,
}

impl Look {
    /// `text` in this look's terminal colour (when colour is on).
    pub fn paint(&self, text: &str) -> ColoredString {
        match self.color {
            None => text.dimmed(),
            Some((color, false)) => text.color(color),
            Some((color, true)) => text.color(color).bold(),
        }
    }
}

/// Every look, in the order legends list them. The glyphs are ASCII, one
/// byte to a column, so the grid is as wide in any terminal and to any tool
/// that measures it.
pub const LOOKS: [Look; 9] = [
    Look {
        glyph: "+",
        class: "ok",
        meaning: "the reference passes",
        color: Some((Color::Green, false)),
    },
    Look {
        glyph: "!",
        class: "broken",
        meaning: "the reference fails",
        color: Some((Color::Red, true)),
    },
    Look {
        glyph: "x",
        class: "killed",
        meaning: "the test fails on the mutant: it kills it",
        color: Some((Color::Yellow, true)),
    },
    Look {
        glyph: ".",
        class: "survives",
        meaning: "the test passes on the mutant",
        color: None,
    },
    Look {
        glyph: "T",
        class: "timeout",
        meaning: "no answer in time",
        color: Some((Color::Magenta, true)),
    },
    Look {
        glyph: "C",
        class: "crash",
        meaning: "crashed",
        color: Some((Color::Magenta, true)),
    },
    Look {
        glyph: "-",
        class: "not-covered",
        meaning: "not covered: the test calls no operation the mutant changes, so it was not run (it answers as on the reference)",
        color: None,
    },
    Look {
        glyph: " ",
        class: "not-run",
        meaning: "not run",
        color: None,
    },
    Look {
        glyph: "o",
        class: "not-counted",
        meaning: "the test fails but does not count: a promise of the Rust store's own, which the worksheet does not make, or a test the reference fails too",
        color: None,
    },
];

/// How the cell of `case` in `run`'s column looks, by the matrix's one
/// rule ([`Matrix::verdict`]): a failure that does not count (a promise of
/// the Rust store's own against a program, or a test the reference fails
/// too) is drawn as such, never as a kill; a test not run against the
/// mutant because it cannot run its change is drawn as not covered.
pub fn cell_look(matrix: &Matrix, case: &Case, run: &VariantRun) -> Look {
    let Some(test_run) = run.test_run(case.name) else {
        return NOT_RUN;
    };
    if test_run.not_covered {
        return NOT_COVERED;
    }
    match matrix.verdict(case, run) {
        Some(verdict) => verdict_look(&test_run.outcome, verdict, run.variant.is_reference()),
        None => NOT_RUN,
    }
}

/// How a test's outcome looks, by what it counts for ([`Matrix::verdict`]):
/// a failure that does not count is dimmed, never painted as a kill or a
/// broken reference. The one colouring of an outcome, for the grids, the
/// run of one variant and the step screen.
pub fn verdict_look(outcome: &Outcome, verdict: Verdict, reference: bool) -> Look {
    match verdict {
        Verdict::NotCounted(_) => NOT_COUNTED,
        _ => look(Some(outcome), reference),
    }
}

/// The looks a key or legend of `matrix`'s grid explains: every look but
/// that of a test not run, and that of a failure not counted only where
/// the grid shows one.
pub fn key_looks(matrix: &Matrix) -> Vec<Look> {
    let shows_not_counted = matrix.runs.iter().any(|run| {
        matrix
            .tests
            .iter()
            .any(|case| cell_look(matrix, case, run) == NOT_COUNTED)
    });
    LOOKS
        .iter()
        .copied()
        .filter(|look| *look != NOT_RUN && (*look != NOT_COUNTED || shows_not_counted))
        .collect()
}

/// The look of a cell not covered (see [`cell_look`]).
pub const NOT_COVERED: Look = LOOKS[6];

/// The look of a test that did not run.
pub const NOT_RUN: Look = LOOKS[7];

/// The look of a failure that does not count (see [`cell_look`]).
pub const NOT_COUNTED: Look = LOOKS[8];

/// What a cell not covered says, in a report's details: why the test did
/// not run, and the operations the mutant's change reaches.
pub fn not_covered_reason(mutant: Option<&Mutant>) -> String {
    let reaches = mutant
        .and_then(|mutant| mutant.reaches.as_ref())
        .map_or_else(String::new, |reaches| format!(" ({})", reaches.join(", ")));
    format!("not covered: the test calls none of the operations the mutant's change reaches{reaches}, so it was not run; it answers as on the reference")
}

/// How an outcome looks in the column of the reference (`reference`) or
/// of a mutant; `None` is a test that did not run.
pub fn look(outcome: Option<&Outcome>, reference: bool) -> Look {
    let index = match outcome {
        Some(Outcome::Pass) if reference => 0,
        Some(Outcome::Fail { .. }) if reference => 1,
        Some(Outcome::Fail { .. }) => 2,
        Some(Outcome::Pass) => 3,
        Some(Outcome::Timeout { .. }) => 4,
        Some(Outcome::Crash { .. }) => 5,
        None => 7,
    };
    LOOKS[index]
}

/// How a mutant's status looks: in the colour of its kills, and a
/// survivor in the colour of a broken reference, since both need fixing.
pub fn status_look(status: MutantStatus) -> Look {
    match status {
        MutantStatus::Killed => LOOKS[2],
        MutantStatus::Timeout => LOOKS[4],
        MutantStatus::Crashed => LOOKS[5],
        MutantStatus::Survived => LOOKS[1],
    }
}

/// What the lab says about a mutant that every test passes on, or `None`
/// when the suite caught it (or the matrix has no such mutant).
///
/// A survivor means one of two things, and only a probe can tell which:
/// the suite has a gap, or the mutant is equivalent to the reference.
pub fn survivor_advice(matrix: &Matrix, id: &str) -> Option<String> {
    let summary = matrix
        .summaries()
        .into_iter()
        .find(|summary| summary.id == id)?;
    if summary.status != MutantStatus::Survived {
        return None;
    }
    let example = probe_file(summary.step).map_or_else(String::new, |probe| {
        format!(" Start from labs/probes/{probe}.")
    });
    Some(format!(
        "Mutant {id} survives: all {tests} tests pass on it. Either the suite has a gap (some input, error or stored state shows the change, but no test looks at it) or the mutant is equivalent to the reference (no call can tell the two apart, so no test should fail). Write a probe that kills it: a probe that passes on the reference and fails on {id} proves it is not equivalent, and shows the test the suite is missing. Run it with `lab probe FILE --variant {id}`.{example}",
        tests = matrix.tests.len(),
    ))
}

/// What `lab mutant check` says of a mutant of one's own once run, the
/// two lines after it: caught (`Ok`: its status, the tests that catch it,
/// how many of its own step, and where it shows next: `lab matrix --impl
/// STORE`, `store` being `rust` or `python`), or survived (`Err`:
/// [`survivor_advice`]); `None` when the matrix has no such mutant.
pub fn own_mutant_verdict(
    matrix: &Matrix,
    id: &str,
    store: &str,
) -> Option<Result<String, String>> {
    let summary = matrix
        .summaries()
        .into_iter()
        .find(|summary| summary.id == id)?;
    if let Some(advice) = survivor_advice(matrix, id) {
        return Some(Err(advice));
    }
    Some(Ok(format!(
        "{id} is {}: {} {} ({} of step {}): {}\n`lab matrix --impl {store}` shows it beside every other mutant, as long as the file stays in mutants/",
        summary.status.label(),
        summary.killers.len(),
        if summary.killers.len() == 1 {
            "test catches it"
        } else {
            "tests catch it"
        },
        summary.own_step_killers,
        summary.step,
        summary.killers.join(", ")
    )))
}

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
/// puts there: the smallest span where the two differ, widened to whole
/// tokens, so that mutants of one long line (an SQL statement) each sit
/// at their own token.
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

/// The change `mutant` makes to its reference source.
///
/// The fragment and its replacement lose the text they share at either
/// end; what is left is widened to whole tokens (`>` to `>=`, not an
/// inserted `=`). An insertion that begins with a line break (a line added
/// after the fragment) is moved past that break and the indentation after
/// it, so that it begins with the inserted code, as a diff shows it: a
/// viewer that compares the mutant's lines with the reference's marks the
/// change from its first differing character, and cannot mark one that
/// starts at a line break.
///
/// # Panics
///
/// If the mutant's fragment does not occur in its original source: the
/// mutated source was made by replacing that very fragment in that very
/// text, so this cannot happen for a [`Mutant`].
pub fn change(mutant: &Mutant) -> Change {
    let (source, spec) = (mutant.original.as_ref(), &mutant.spec);
    let offset = source.find(&spec.fragment).unwrap_or_else(|| {
        panic!(
            "mutant {}'s fragment is not in the reference source it was made from",
            spec.id
        )
    });
    let span = Span::between(&spec.fragment, &spec.replacement)
        .widened_to_tokens(&spec.fragment, &spec.replacement);
    let (mut start, mut end) = (offset + span.start, offset + span.end);
    let mut replacement = spec.replacement[span.start..span.new_end].to_string();
    // An insertion is the same change one character on when that
    // character also starts it; spacing is all it moves past.
    if start == end && replacement.starts_with('\n') {
        while let (Some(first), Some(next)) =
            (replacement.chars().next(), source[end..].chars().next())
        {
            if first != next || !first.is_whitespace() {
                break;
            }
            replacement = format!("{}{first}", &replacement[first.len_utf8()..]);
            start += first.len_utf8();
            end = start;
        }
    }
    Change {
        start: position(source, start),
        end: position(source, end),
        original: source[start..end].to_string(),
        replacement,
    }
}

/// Where a fragment and its replacement differ: `fragment[start..end]`
/// became `replacement[start..new_end]`; before and after, the two agree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start: usize,
    end: usize,
    new_end: usize,
}

impl Span {
    /// The smallest such span: the two texts less their common prefix and
    /// the common suffix of what is left.
    fn between(fragment: &str, replacement: &str) -> Span {
        let prefix: usize = fragment
            .chars()
            .zip(replacement.chars())
            .take_while(|(a, b)| a == b)
            .map(|(a, _)| a.len_utf8())
            .sum();
        let suffix: usize = fragment[prefix..]
            .chars()
            .rev()
            .zip(replacement[prefix..].chars().rev())
            .take_while(|(a, b)| a == b)
            .map(|(a, _)| a.len_utf8())
            .sum();
        Span {
            start: prefix,
            end: fragment.len() - suffix,
            new_end: replacement.len() - suffix,
        }
    }

    /// The span grown over the shared characters on either side that
    /// belong to the same token as the changed text next to them.
    fn widened_to_tokens(mut self, fragment: &str, replacement: &str) -> Span {
        let inside = |text: &str| (text.chars().next(), text.chars().next_back());
        loop {
            let (old_first, old_last) = inside(&fragment[self.start..self.end]);
            let (new_first, new_last) = inside(&replacement[self.start..self.new_end]);
            let before = fragment[..self.start].chars().next_back();
            let after = fragment[self.end..].chars().next();
            if let Some(c) = before.filter(|&c| joins(c, old_first) || joins(c, new_first)) {
                self.start -= c.len_utf8();
            } else if let Some(c) = after.filter(|&c| joins(c, old_last) || joins(c, new_last)) {
                self.end += c.len_utf8();
                self.new_end += c.len_utf8();
            } else {
                return self;
            }
        }
    }
}

/// The kind of token a character can be part of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TokenKind {
    /// A name, number or SQL parameter (`:now`).
    Word,
    /// An operator such as `>=`, `!=` or `+=`.
    Operator,
}

fn token_kind(c: char) -> Option<TokenKind> {
    if c.is_alphanumeric() || c == '_' || c == ':' {
        Some(TokenKind::Word)
    } else if "<>=!+-*/%&|^".contains(c) {
        Some(TokenKind::Operator)
    } else {
        None
    }
}

/// Whether `c` and the changed character `changed` beside it belong to
/// one token.
fn joins(c: char, changed: Option<char>) -> bool {
    token_kind(c).is_some() && changed.and_then(token_kind) == token_kind(c)
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
    format!("src/suite/step{step}.rs")
}

/// A kill matrix made by hand, for the reports' tests.
#[cfg(test)]
pub(crate) mod sample {
    use crate::matrix::Matrix;
    use crate::outcome::{Outcome, TestRun};
    use crate::runner::VariantRun;
    use crate::suite::CASES;
    use crate::variant::{Variant, REFERENCE_ID};
    use std::time::Duration;

    /// The tests of steps 4 to 8 against the reference, which passes them
    /// all, and four mutants: 04 fails the boundary test (with a message
    /// full of characters HTML must escape), 05 times out on one test, 06
    /// crashes on one, and 07 survives. Each test calls `init_db` and the
    /// operation of its step.
    pub(crate) fn matrix() -> Matrix {
        let tests: Vec<_> = CASES.iter().filter(|case| case.step >= 4).collect();
        let outcome = |id: &str, test: &str| match (id, test) {
            ("04", "claim_at_exact_expiry_is_reassigned") => Outcome::Fail {
                check: "claim(\"j\", \"B\", now=110, ttl=5)".into(),
                expected: "fence 2".into(),
                actual: "none <script>&".into(),
                state: None,
            },
            ("05", "renew_at_exact_expiry_is_refused") => Outcome::Timeout {
                limit_ms: 10,
                detail: None,
            },
            ("06", "second_completion_is_refused_and_keeps_the_result") => Outcome::Crash {
                message: "panicked: boom".into(),
            },
            _ => Outcome::Pass,
        };
        let runs = [REFERENCE_ID, "04", "05", "06", "07"]
            .iter()
            .map(|id| VariantRun {
                variant: Variant::find(id).expect("a variant of this build"),
                runs: tests
                    .iter()
                    .map(|case| {
                        let step = crate::operation::NAMES[usize::from(case.step) - 1];
                        TestRun::new(case.name, outcome(id, case.name), Duration::from_millis(2))
                            .with_operations(vec!["init_db".into(), step.into()])
                    })
                    .collect(),
            })
            .collect();
        Matrix { tests, runs }
    }
}

#[cfg(test)]
mod tests;
