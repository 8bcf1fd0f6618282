//! The kill matrix as terminal text: a grid of tests against variants,
//! one variant's run test by test, and the summary of each mutant.

use super::{look, status_look, LOOKS};
use crate::matrix::Matrix;
use crate::outcome::Outcome;
use crate::runner::VariantRun;
use crate::suite::Case;
use crate::terminal::failure_text;
use colored::Colorize;
use std::fmt::Write as _;

/// The matrix as a grid: tests by step down the side, variants across
/// (the reference, then the worksheet's mutants, then the others), and a
/// summary of each mutant below.
pub fn matrix(matrix: &Matrix) -> String {
    let name_width = 56;
    let ids: Vec<&str> = matrix
        .runs
        .iter()
        .map(|run| run.variant.id.as_str())
        .collect();
    let tall = ids.iter().map(|id| id.chars().count()).max().unwrap_or(0);
    let mut out = String::new();
    let groups = column_groups(matrix);
    for row in 0..tall {
        let mut line = format!("{:width$}", "", width = name_width + 2);
        for (index, id) in ids.iter().enumerate() {
            if groups.contains(&index) {
                line.push_str("  ");
            }
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
            let look = look(run.outcome(case.name), run.variant.is_reference());
            line.push_str(&look.paint(look.glyph).to_string());
        }
        writeln!(out, "{line}").unwrap();
    }
    let key: Vec<String> = LOOKS
        .iter()
        .filter(|look| look.glyph != " ")
        .map(|look| format!("{} {}", look.glyph, look.meaning))
        .collect();
    writeln!(out, "\n{}  {}\n", "key:".bold(), key.join("   ")).unwrap();
    for (summary, (_, mutant)) in matrix.summaries().iter().zip(matrix.mutant_runs()) {
        let status = status_look(summary.status).paint(summary.status.label());
        writeln!(
            out,
            "{:>5}  step {}  {:<8}  {:>2} tests ({} of its step)  {}",
            summary.id,
            summary.step,
            status,
            summary.killers.len(),
            summary.own_step_killers,
            mutant.spec.title
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
        let kind = run.variant.mutant.as_ref().map(|mutant| mutant.spec.kind);
        if index > 0 && kind != previous {
            starts.push(index);
        }
        previous = kind;
    }
    starts
}

/// One variant's run, test by test, grouped by step, with the reason of
/// every test that did not pass.
pub fn run(run: &VariantRun, tests: &[&'static Case]) -> String {
    let mut out = String::new();
    let title = match run.variant.mutant.as_deref() {
        None => "the reference implementation".to_string(),
        Some(mutant) => format!(
            "mutant {} (step {}): {}",
            mutant.spec.id, mutant.spec.step, mutant.spec.title
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
                write!(
                    out,
                    "{}",
                    failure_text(check, expected, actual, 9, crate::terminal::text_width())
                )
                .unwrap();
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
