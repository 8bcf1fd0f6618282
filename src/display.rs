//! How the lab looks in a terminal: colours, the matrix grid, diffs.
//!
//! Presentation only: what is shown is decided elsewhere.

use crate::matrix::Matrix;
use crate::outcome::{MutantStatus, Outcome};
use colored::Colorize;
use similar::{ChangeTag, TextDiff};
use std::fmt::Write as _;
use std::io::IsTerminal;

/// When to colour the output, as given to `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour when stdout is a terminal and `NO_COLOR` is not set.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// Whether to colour, given the choice, `NO_COLOR` and whether stdout is a terminal.
pub fn use_color(choice: ColorChoice, no_color: bool, terminal: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => terminal && !no_color,
    }
}

/// Applies the colour choice to everything printed afterwards.
pub fn apply_color(choice: ColorChoice) {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|value| !value.is_empty());
    let on = use_color(choice, no_color, std::io::stdout().is_terminal());
    colored::control::set_override(on);
}

/// A unified diff of `old` against `new` with `context` lines around each
/// change, coloured when colour is on.
pub fn unified_diff(
    old: &str,
    new: &str,
    old_name: &str,
    new_name: &str,
    context: usize,
) -> String {
    let diff = TextDiff::from_lines(old, new);
    let mut out = String::new();
    writeln!(out, "{}", format!("--- {old_name}").bold()).unwrap();
    writeln!(out, "{}", format!("+++ {new_name}").bold()).unwrap();
    for group in diff.grouped_ops(context) {
        let (first, last) = (
            group.first().expect("a group has ops"),
            group.last().expect("a group has ops"),
        );
        let old_range = first.old_range().start..last.old_range().end;
        let new_range = first.new_range().start..last.new_range().end;
        writeln!(
            out,
            "{}",
            format!(
                "@@ -{},{} +{},{} @@",
                old_range.start + 1,
                old_range.len(),
                new_range.start + 1,
                new_range.len()
            )
            .cyan()
        )
        .unwrap();
        for op in &group {
            for change in diff.iter_changes(op) {
                let text = change.value().trim_end_matches('\n');
                let line = match change.tag() {
                    ChangeTag::Delete => format!("-{text}").red().to_string(),
                    ChangeTag::Insert => format!("+{text}").green().to_string(),
                    ChangeTag::Equal => format!(" {text}"),
                };
                writeln!(out, "{line}").unwrap();
            }
        }
    }
    out
}

/// The one-character cell of the grid for an outcome.
fn cell(outcome: Option<&Outcome>, reference: bool) -> String {
    match outcome {
        None => " ".into(),
        Some(Outcome::Pass) if reference => "✓".green().to_string(),
        Some(Outcome::Pass) => "·".dimmed().to_string(),
        Some(Outcome::Fail { .. }) if reference => "✗".red().bold().to_string(),
        Some(Outcome::Fail { .. }) => "x".yellow().bold().to_string(),
        Some(Outcome::Timeout { .. }) => "T".magenta().bold().to_string(),
        Some(Outcome::Crash { .. }) => "C".magenta().bold().to_string(),
    }
}

/// The matrix as a grid: tests by step down the side, variants across
/// (the reference, then the worksheet's mutants, then the others), and a
/// summary of each mutant below.
pub fn matrix_text(matrix: &Matrix) -> String {
    let name_width = 56;
    let ids: Vec<&str> = matrix.runs.iter().map(|run| run.variant.id()).collect();
    let tall = ids.iter().map(|id| id.chars().count()).max().unwrap_or(0);
    let mut out = String::new();
    let groups = column_groups(matrix);
    for row in 0..tall {
        let mut line = format!("{:width$}", "", width = name_width + 2);
        for (index, run) in matrix.runs.iter().enumerate() {
            if groups.contains(&index) {
                line.push_str("  ");
            }
            let id = if run.variant.mutant().is_none() {
                "ok"
            } else {
                run.variant.id()
            };
            // Ids are written downwards, aligned at the bottom.
            let offset = tall - id.chars().count().min(tall);
            line.push(if row >= offset {
                id.chars().nth(row - offset).unwrap_or(' ')
            } else {
                ' '
            });
        }
        writeln!(out, "{}", line.trim_end().bold()).unwrap();
    }
    let mut step = 0;
    for case in &matrix.tests {
        if case.step != step {
            step = case.step;
            writeln!(out, "{}", format!("step {step}").bold()).unwrap();
        }
        let mut name: String = case.name.chars().take(name_width).collect();
        if case.name.chars().count() > name_width {
            name.pop();
            name.push('…');
        }
        let mut line = format!("  {name:name_width$}");
        for (index, run) in matrix.runs.iter().enumerate() {
            if groups.contains(&index) {
                line.push_str("  ");
            }
            line.push_str(&cell(
                run.outcome(case.name),
                run.variant.mutant().is_none(),
            ));
        }
        writeln!(out, "{line}").unwrap();
    }
    writeln!(
        out,
        "\n{}  ✓ reference passes   x mutant killed   · mutant survives the test   T timeout   C crash\n",
        "key:".bold()
    )
    .unwrap();
    for summary in matrix.summaries() {
        let mutant = crate::variant::mutant(summary.id).expect("summaries are of compiled mutants");
        let status = match summary.status {
            MutantStatus::Survived => "SURVIVED".red().bold().to_string(),
            MutantStatus::Killed => "killed".green().to_string(),
            other => other.label().yellow().to_string(),
        };
        writeln!(
            out,
            "{:>5}  step {}  {:<8}  {:>2} tests ({} of its step)  {}",
            summary.id,
            summary.step,
            status,
            summary.killers.len(),
            summary.own_step_killers,
            mutant.title
        )
        .unwrap();
    }
    let idle = matrix.idle_tests();
    if !idle.is_empty() {
        writeln!(
            out,
            "\n{} {}",
            "tests that kill no mutant:".bold(),
            idle.join(", ")
        )
        .unwrap();
    }
    out
}

/// Where a new group of columns starts: after the reference, and where the
/// mutants' kind changes.
fn column_groups(matrix: &Matrix) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut previous = None;
    for (index, run) in matrix.runs.iter().enumerate() {
        let kind = run.variant.mutant().map(|mutant| mutant.kind);
        if index > 0 && kind != previous {
            starts.push(index);
        }
        previous = kind;
    }
    starts
}

/// One variant's run, test by test, grouped by step, with the reason of
/// every test that did not pass.
pub fn run_text(run: &crate::runner::VariantRun, tests: &[&'static crate::suite::Case]) -> String {
    let mut out = String::new();
    let title = match run.variant.mutant() {
        None => "the reference implementation".to_string(),
        Some(mutant) => format!(
            "mutant {} (step {}): {}",
            mutant.id, mutant.step, mutant.title
        ),
    };
    writeln!(out, "{}", title.bold()).unwrap();
    let mut step = 0;
    let (mut passed, mut caught) = (0, 0);
    for case in tests {
        if case.step != step {
            step = case.step;
            writeln!(out, "{}", format!("step {step}").bold()).unwrap();
        }
        let Some(outcome) = run.outcome(case.name) else {
            continue;
        };
        let mark = match outcome {
            Outcome::Pass => "pass".green().to_string(),
            Outcome::Fail { .. } => "FAIL".red().bold().to_string(),
            Outcome::Timeout { .. } => "TIME".magenta().bold().to_string(),
            Outcome::Crash { .. } => "CRASH".magenta().bold().to_string(),
        };
        writeln!(out, "  {mark:>5}  {}", case.name).unwrap();
        match outcome {
            Outcome::Pass => passed += 1,
            Outcome::Fail {
                check,
                expected,
                actual,
            } => {
                caught += 1;
                write!(out, "{}", failure_text(check, expected, actual, 9)).unwrap();
            }
            other => {
                caught += 1;
                writeln!(out, "         {}", other.reason().unwrap_or_default()).unwrap();
            }
        }
    }
    writeln!(out, "\n{passed} passed, {caught} failed").unwrap();
    out
}

/// A failed check: what was checked, then expected against actual, as a
/// line diff when the values span several lines (stored rows do).
pub fn failure_text(check: &str, expected: &str, actual: &str, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let mut out = format!("{pad}{} {check}\n", "check:".bold());
    if expected.contains('\n') || actual.contains('\n') {
        let diff = TextDiff::from_lines(expected, actual);
        writeln!(out, "{pad}{}", "- expected  + actual".dimmed()).unwrap();
        for change in diff.iter_all_changes() {
            let text = change.value().trim_end_matches('\n');
            let line = match change.tag() {
                ChangeTag::Delete => format!("-{text}").red().to_string(),
                ChangeTag::Insert => format!("+{text}").green().to_string(),
                ChangeTag::Equal => format!(" {text}").dimmed().to_string(),
            };
            writeln!(out, "{pad}{line}").unwrap();
        }
    } else {
        writeln!(out, "{pad}{} {expected}", "expected:".bold()).unwrap();
        writeln!(out, "{pad}{} {actual}", "actual:  ".bold()).unwrap();
    }
    out
}

/// The suite's tests, by step.
pub fn tests_text() -> String {
    let mut out = String::new();
    let mut step = 0;
    for (number, case) in crate::suite::CASES.iter().enumerate() {
        if case.step != step {
            step = case.step;
            let title = crate::exercise::step_title(step);
            writeln!(out, "{}", format!("step {step}: {title}").bold()).unwrap();
        }
        writeln!(out, "  {:>3}  {}", number + 1, case.name).unwrap();
    }
    out
}

/// The variants: the reference and every mutant, with step, kind and title.
pub fn variants_text() -> String {
    let mut out = format!(
        "{:>7}  {}\n",
        crate::variant::REFERENCE_ID,
        "the reference implementation"
    );
    for mutant in crate::variant::MUTANTS {
        writeln!(
            out,
            "{:>7}  step {}  {:<9}  {}",
            mutant.id,
            mutant.step,
            mutant.kind.name(),
            mutant.title
        )
        .unwrap();
    }
    out
}

/// `lab` with no arguments: every exercise with the student's progress,
/// and what to do next.
pub fn overview_text(
    progress: &crate::progress::Progress,
    progress_path: &std::path::Path,
) -> String {
    let mut out = format!(
        "{}\n\nEach exercise shows a deliberately broken fragment of the store. Predict which\ntests catch it, then run them and compare.\n\n",
        "lease-lab: a lease alone does not stop a stalled worker; a fence checked at the moment of writing does."
            .bold()
    );
    for exercise in crate::exercise::exercises() {
        let status = match progress.latest(exercise.key) {
            None => "not started".dimmed().to_string(),
            Some(attempt) if attempt.predicted.is_empty() && attempt.probe.is_some() => format!(
                "{} (probe: {})",
                "done".green(),
                attempt
                    .probe
                    .as_ref()
                    .map_or("", |probe| probe.verdict.as_str())
            ),
            Some(attempt) => {
                let attempts = progress
                    .exercises
                    .get(exercise.key)
                    .map_or(0, |e| e.attempts.len());
                format!(
                    "{} (score {}%, {} attempt{})",
                    "done".green(),
                    attempt.score.percent,
                    attempts,
                    if attempts == 1 { "" } else { "s" }
                )
            }
        };
        writeln!(
            out,
            "  {:>3}  {:<56} {}",
            exercise.key,
            exercise.label(),
            status
        )
        .unwrap();
    }
    match crate::tour::next_exercise(progress) {
        Some(next) => writeln!(
            out,
            "\nNext: {}   (hints: lab hint {})",
            format!("lab step {}", next.key).bold(),
            next.key
        ),
        None if progress.reflection.is_none() => writeln!(
            out,
            "\nEvery exercise is done. Last: {}",
            "lab reflect --why-kept \"...\" --not-guaranteed \"...\"".bold()
        ),
        None => writeln!(
            out,
            "\n{}",
            "Every exercise and the reflection are done.".green().bold()
        ),
    }
    .unwrap();
    writeln!(
        out,
        "Progress: {}   Other commands: lab demo, lab matrix, lab tests, lab --help",
        progress_path.display()
    )
    .unwrap();
    out
}

/// The demo's story as a timeline.
pub fn demo_text(story: &crate::demo::Story, variant: crate::variant::Variant) -> String {
    let mut out = match variant.mutant() {
        None => format!("{}\n\n", "The story on the reference store".bold()),
        Some(mutant) => format!(
            "{}\n\n",
            format!("The story on mutant {}: {}", mutant.id, mutant.title).bold()
        ),
    };
    for event in &story.events {
        let answer = match event.answer.as_str() {
            "refused" => "refused".red().bold().to_string(),
            "accepted" => "accepted".green().to_string(),
            other => other.to_string(),
        };
        let arrow = if event.answer.is_empty() {
            String::new()
        } else {
            format!("  -> {answer}")
        };
        writeln!(
            out,
            "  t={:<5} {:<2} {}{}",
            event.time, event.actor, event.action, arrow
        )
        .unwrap();
    }
    if let Some(row) = &story.final_row {
        writeln!(
            out,
            "\n  final row: owner {}, fence {}, done {}, result {}",
            row.owner.as_deref().unwrap_or("none"),
            row.fence,
            row.done,
            row.result
                .as_deref()
                .map_or("none".to_string(), |r| format!("{r:?}"))
        )
        .unwrap();
    }
    if story.stale_write_landed {
        writeln!(
            out,
            "\n{}",
            "The stale write LANDED: A, whose lease was taken over, overwrote B's result."
                .red()
                .bold()
        )
        .unwrap();
    } else {
        writeln!(
            out,
            "\n{}",
            "A's stale write was refused; B's result stands."
                .green()
                .bold()
        )
        .unwrap();
        if variant.mutant().is_none() {
            writeln!(
                out,
                "Now try it on a store that trusts the lease alone: lab demo --variant h06h"
            )
            .unwrap();
        }
    }
    out
}

/// The first `shown` hints of an exercise, and whether more remain.
pub fn hints_text(hints: &[String], shown: usize, key: &str) -> String {
    let mut out = String::new();
    for (number, hint) in hints.iter().take(shown).enumerate() {
        writeln!(out, "{}\n{}\n", format!("Hint {}", number + 1).bold(), hint).unwrap();
    }
    if shown < hints.len() {
        writeln!(
            out,
            "({} more: run `lab hint {key}` again)",
            hints.len() - shown
        )
        .unwrap();
    } else {
        writeln!(out, "(that was the last hint)").unwrap();
    }
    out
}

/// The recorded predictions and scores, exercise by exercise.
pub fn progress_text(progress: &crate::progress::Progress) -> String {
    let mut out = String::new();
    if progress.exercises.is_empty() {
        out.push_str("No prediction recorded yet: start with `lab step 1`.\n");
    }
    for exercise in crate::exercise::exercises() {
        let Some(record) = progress.exercises.get(exercise.key) else {
            continue;
        };
        writeln!(
            out,
            "{}",
            format!("exercise {} (mutant {})", exercise.key, exercise.mutant.id).bold()
        )
        .unwrap();
        for attempt in &record.attempts {
            writeln!(
                out,
                "  {}  score {:>3}%  predicted: {}  caught by: {}",
                attempt.at,
                attempt.score.percent,
                if attempt.predicted.is_empty() {
                    "-".into()
                } else {
                    attempt.predicted.join(", ")
                },
                if attempt.caught_by.is_empty() {
                    "-".into()
                } else {
                    attempt.caught_by.join(", ")
                }
            )
            .unwrap();
        }
    }
    if let Some(reflection) = &progress.reflection {
        writeln!(
            out,
            "{}\n  why the tests are kept: {}\n  not guaranteed: {}",
            "reflection".bold(),
            reflection.why_tests_are_kept,
            reflection.not_guaranteed
        )
        .unwrap();
    }
    out
}
