//! The kill matrix as terminal text: a grid of tests against variants,
//! one variant's run test by test, and the summary of each mutant.

use super::{cell_look, key_looks, status_look, verdict_look};
use crate::exercise::step_title;
use crate::matrix::{Matrix, Verdict};
use crate::outcome::Outcome;
use crate::report::tests_phrase;
use crate::runner::VariantRun;
use crate::suite;
use crate::terminal::{failure_text, fill, reflow};
use crate::variant::Variant;
use colored::Colorize;
use std::fmt::Write as _;

/// The matrix as a grid for a terminal `width` columns wide: tests by
/// step down the side (names shortened to fit, with their numbers in the
/// suite), variants across (the reference, then the worksheet's mutants,
/// then the others), a key, a summary of each mutant, and the tests that
/// kill none. When the variants are too many for one grid, they go in
/// bands, one grid below the other, each with the reference first.
pub fn matrix(matrix: &Matrix, width: usize) -> String {
    let bands = bands(matrix, width.saturating_sub(SHORTEST_NAME + 8));
    let grid_width = bands
        .iter()
        .map(|band| band_width(matrix, band))
        .max()
        .unwrap_or(0);
    let name_width = width
        .saturating_sub(grid_width + 8)
        .clamp(SHORTEST_NAME, 62);
    let mut out = String::new();
    for (number, band) in bands.iter().enumerate() {
        if number > 0 {
            writeln!(out).unwrap();
        }
        grid(&mut out, matrix, band, name_width);
    }
    let key: Vec<String> = key_looks(matrix)
        .iter()
        .map(|look| format!("{} {}", look.glyph, look.meaning))
        .collect();
    let key = format!("the first column is the reference; {}", key.join(", "));
    write!(out, "\n{}\n\n", fill(&key, width, "key: ", "     ")).unwrap();
    let summaries = matrix.summaries();
    // Ids right-aligned in at least five columns (`h04a`, `py08b`), more
    // for longer ones (the store on PostgreSQL's `pgf06a`).
    let id_width = summaries
        .iter()
        .map(|summary| summary.id.len())
        .max()
        .unwrap_or(0)
        .max(5);
    let indent = " ".repeat(id_width + 2);
    for (summary, (_, mutant)) in summaries.iter().zip(matrix.mutant_runs()) {
        let label = summary.status.label();
        let line = format!(
            "{:>id_width$}  step {}  {label:<8}  {:>8} ({} of its step)  {}",
            summary.id,
            summary.step,
            tests_phrase(summary.killers.len()),
            summary.own_step_killers,
            mutant.spec.title
        );
        let filled = fill(&line, width, "", &indent);
        // Coloured after filling, so that colour codes do not count as width.
        let painted = status_look(summary.status).paint(label).to_string();
        writeln!(out, "{}", filled.replacen(label, &painted, 1)).unwrap();
    }
    let beyond = matrix.beyond_the_worksheet();
    if !beyond.is_empty() {
        let text = format!(
            "beyond the worksheet (the Rust store's own promises, which this reference does not keep and which do not count): {}",
            beyond.join(", ")
        );
        write!(out, "\n{}\n", fill(&text, width, "", "  ")).unwrap();
    }
    let idle = matrix.idle_tests();
    if !idle.is_empty() {
        let text = format!("tests that kill no mutant: {}", idle.join(", "));
        write!(out, "\n{}\n", fill(&text, width, "", "  ")).unwrap();
    }
    out
}

/// A test name cut to `width` characters, its end replaced by `...`.
fn shortened(name: &str, width: usize) -> String {
    if name.chars().count() <= width {
        return format!("{name:width$}");
    }
    let mut short: String = name.chars().take(width.saturating_sub(3)).collect();
    short.push_str("...");
    short
}

/// The narrowest a test's name is shortened to beside the grid.
const SHORTEST_NAME: usize = 20;

/// One grid of the matrix: the ids of the variants of `band` (indices of
/// `matrix.runs`) written downwards, then a row per test, by step.
fn grid(out: &mut String, matrix: &Matrix, band: &[usize], name_width: usize) {
    let ids: Vec<&str> = band
        .iter()
        .map(|index| matrix.runs[*index].variant.id.as_str())
        .collect();
    let tall = ids.iter().map(|id| id.chars().count()).max().unwrap_or(0);
    let starts = group_starts(matrix, band);
    for row in 0..tall {
        let mut line = format!("{:width$}", "", width = name_width + 7);
        for (at, id) in ids.iter().enumerate() {
            if starts.contains(&at) {
                line.push_str("  ");
            }
            // Ids are written downwards, aligned at the bottom.
            let offset = tall - id.chars().count();
            line.push(
                id.chars()
                    .nth(row.wrapping_sub(offset))
                    .filter(|_| row >= offset)
                    .unwrap_or(' '),
            );
        }
        writeln!(out, "{}", line.trim_end().bold()).unwrap();
    }
    let mut step = 0;
    for (number, case) in matrix.tests.iter().enumerate() {
        if case.step != step {
            step = case.step;
            writeln!(out, "{}", format!("step {step}").bold()).unwrap();
        }
        let mut line = format!("  {:>3} {} ", number + 1, shortened(case.name, name_width));
        for (at, index) in band.iter().enumerate() {
            if starts.contains(&at) {
                line.push_str("  ");
            }
            let look = cell_look(matrix, case, &matrix.runs[*index]);
            line.push_str(&look.paint(look.glyph).to_string());
        }
        writeln!(out, "{line}").unwrap();
    }
}

/// The positions in `band` where a new group of columns starts: where the
/// variant's kind (the reference, worksheet, hardening, ...) changes.
fn group_starts(matrix: &Matrix, band: &[usize]) -> Vec<usize> {
    let kind = |index: usize| {
        matrix.runs[index]
            .variant
            .mutant
            .as_ref()
            .map(|mutant| mutant.spec.kind)
    };
    (1..band.len())
        .filter(|at| kind(band[*at]) != kind(band[at - 1]))
        .collect()
}

/// How many columns the grid of `band` takes: a column a variant, and two
/// before each group.
fn band_width(matrix: &Matrix, band: &[usize]) -> usize {
    band.len() + 2 * group_starts(matrix, band).len()
}

/// The variants in bands no wider than `room` columns (but of one mutant at
/// least), in order, each band the reference's column and then the next
/// mutants; one band when they all fit.
fn bands(matrix: &Matrix, room: usize) -> Vec<Vec<usize>> {
    let mut bands = Vec::new();
    let mut band = vec![0];
    for index in 1..matrix.runs.len() {
        band.push(index);
        if band.len() > 2 && band_width(matrix, &band) > room {
            band.pop();
            bands.push(std::mem::replace(&mut band, vec![0, index]));
        }
    }
    if !matrix.runs.is_empty() {
        bands.push(band);
    }
    bands
}

/// One variant's run of `matrix`, test by test, grouped by step, with the
/// reason of every test that did not pass. The counts follow the matrix's
/// one rule ([`Matrix::verdict`]): a test that does not judge the variant
/// (beyond the worksheet, for a program) is shown but not counted.
pub fn run(matrix: &Matrix, run: &VariantRun) -> String {
    let mut out = String::new();
    let title = match (run.variant.mutant.as_deref(), run.variant.command()) {
        (None, Some(command)) if !run.variant.is_lab_reference() => {
            format!("{}: {}", run.variant.id, command.display())
        }
        (None, _) => "the reference implementation".to_string(),
        (Some(mutant), _) => format!(
            "mutant {} (step {}): {}",
            mutant.spec.id, mutant.spec.step, mutant.spec.title
        ),
    };
    writeln!(out, "{}", title.bold()).unwrap();
    let mut step = 0;
    let (mut passed, mut failed, mut not_counted) = (0, 0, 0);
    for case in &matrix.tests {
        if case.step != step {
            step = case.step;
            writeln!(out, "{}", format!("step {step}").bold()).unwrap();
        }
        let (Some(outcome), Some(verdict)) = (run.outcome(case.name), matrix.verdict(case, run))
        else {
            continue;
        };
        let word = match (outcome, verdict) {
            (_, Verdict::NotCounted(_)) => "fail*",
            (Outcome::Pass, _) => "pass",
            (Outcome::Fail { .. }, _) => "FAIL",
            (Outcome::Timeout { .. }, _) => "TIME",
            (Outcome::Crash { .. }, _) => "CRASH",
        };
        // A run of one variant is read as a reference is: a failure that
        // counts is the implementation's, painted as a broken reference.
        let mark = verdict_look(outcome, verdict, true)
            .paint(&format!("{word:>5}"))
            .to_string();
        writeln!(out, "  {mark:>5}  {}", case.name).unwrap();
        match (outcome, verdict) {
            (_, Verdict::Pass) => passed += 1,
            (_, Verdict::NotCounted(_)) => not_counted += 1,
            (
                Outcome::Fail {
                    check,
                    expected,
                    actual,
                    state,
                },
                _,
            ) => {
                failed += 1;
                write!(
                    out,
                    "{}",
                    failure_text(
                        check,
                        expected,
                        actual,
                        state.as_ref().map(ToString::to_string).as_deref(),
                        9,
                        crate::terminal::text_width()
                    )
                )
                .unwrap();
            }
            (other, _) => {
                failed += 1;
                // A crash's reason quotes what the program wrote.
                let reason = other.reason().unwrap_or_default();
                writeln!(out, "         {}", crate::inert::lines(&reason)).unwrap();
            }
        }
    }
    let mut counts = format!("{passed} passed, {failed} failed");
    if not_counted > 0 {
        write!(
            counts,
            "; {not_counted} beyond the worksheet (fail*) not counted: they check the Rust store's own promises, which a program need not keep"
        )
        .unwrap();
    }
    writeln!(out, "\n{}", reflow(&counts, crate::terminal::text_width())).unwrap();
    out
}

/// The suite's tests, by step; those of the Rust store's own promises
/// marked as beyond the worksheet.
pub fn tests_text(width: usize) -> String {
    let mut out = format!(
        "{}\n",
        crate::terminal::fill(
            "The contract suite by step (* beyond the worksheet: the Rust store's own stricter promises)",
            width,
            "",
            ""
        )
        .dimmed()
    );
    let mut step = 0;
    for (number, case) in suite::CASES.iter().enumerate() {
        if case.step != step {
            step = case.step;
            let title = step_title(step);
            writeln!(out, "{}", format!("step {step}: {title}").bold()).unwrap();
        }
        let mark = if case.judges_programs() { " " } else { "*" };
        writeln!(out, "  {:>3}{mark} {}", number + 1, case.name).unwrap();
    }
    out
}

/// The variants, as `lab run` takes their ids: the reference (or a
/// program of one's own), then every mutant with its step, kind and title.
/// A title too long for the line goes on under itself.
pub fn variants_text(variants: &[Variant], width: usize) -> String {
    let mut out = String::new();
    for variant in variants {
        match (&variant.mutant, variant.command()) {
            (Some(mutant), _) => writeln!(
                out,
                "{}",
                crate::terminal::fill(
                    &format!(
                        "{:>9}  step {}  {:<9}  {}",
                        variant.id,
                        mutant.spec.step,
                        mutant.spec.kind.name(),
                        mutant.spec.title
                    ),
                    width,
                    "",
                    &" ".repeat(30)
                )
            ),
            (None, Some(command)) if !variant.is_lab_reference() => {
                writeln!(out, "{:>9}  {}", variant.id, command.display())
            }
            (None, _) => writeln!(out, "{:>9}  the reference implementation", variant.id),
        }
        .unwrap();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::matrix::sample;

    #[test]
    fn the_grid_fits_80_columns_and_starts_with_its_header() {
        colored::control::set_override(false);
        let text = matrix(&sample::matrix(), 80);
        for line in text.lines() {
            assert!(
                line.chars().count() <= 80,
                "{} columns: {line}",
                line.chars().count()
            );
        }
        assert!(!text.starts_with('\n') && !text.lines().next().unwrap().trim().is_empty());
        let header: Vec<&str> = text.lines().take(9).collect();
        let reference: String = header
            .iter()
            .filter_map(|line| line.chars().nth(header[8].find('e').unwrap()))
            .collect();
        assert_eq!(
            reference, "reference",
            "the reference is called reference: {header:?}"
        );
        let idle = text
            .split("tests that kill no mutant:")
            .nth(1)
            .expect("the sample has tests that kill no mutant");
        assert!(idle.lines().count() > 1, "a long list is wrapped");
    }

    /// A program's run counts only the tests that judge it: a test beyond
    /// the worksheet that it fails is marked and set apart.
    #[test]
    fn a_programs_run_sets_the_tests_beyond_the_worksheet_apart() {
        use crate::external::ImplCommand;
        use crate::outcome::TestRun;
        use crate::suite::{self, Tag};
        use crate::variant::Variant;
        use std::time::Duration;
        colored::control::set_override(false);
        let contract = suite::case("claim_at_exact_expiry_is_reassigned").unwrap();
        let promise = suite::CASES
            .iter()
            .find(|case| case.tag == Tag::Reference && case.step == 4)
            .unwrap();
        let passing = suite::case("claim_of_a_new_job_returns_fence_1").unwrap();
        let failed = || Outcome::Fail {
            check: "c".into(),
            expected: "e".into(),
            actual: "a".into(),
            state: None,
        };
        let program = Variant::program("yours", ImplCommand::parse("python3 s.py").unwrap());
        let matrix = Matrix {
            tests: vec![passing, contract, promise],
            runs: vec![VariantRun {
                variant: program,
                runs: vec![
                    TestRun::new(passing.name, Outcome::Pass, Duration::ZERO),
                    TestRun::new(contract.name, failed(), Duration::ZERO),
                    TestRun::new(promise.name, failed(), Duration::ZERO),
                ],
            }],
        };
        let shown = run(&matrix, &matrix.runs[0]);
        assert!(
            shown.contains(&format!("FAIL  {}", contract.name)),
            "{shown}"
        );
        assert!(
            shown.contains(&format!("fail*  {}", promise.name)),
            "{shown}"
        );
        assert!(
            shown.contains("1 passed, 1 failed; 1 beyond the worksheet (fail*) not counted"),
            "{shown}"
        );
    }

    #[test]
    fn long_test_names_are_shortened_with_an_ellipsis() {
        assert_eq!(shortened("claim_at_exact_expiry", 8), "claim...");
        assert_eq!(shortened("short", 8), "short   ");
    }
}
