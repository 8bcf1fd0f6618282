//! The kill matrix as Markdown: a table of tests against variants, then
//! one line per mutant.

use super::cell_look;
use crate::matrix::Matrix;
use std::fmt::Write as _;

/// The matrix as a Markdown table: a row per test, a column per variant.
pub fn report(matrix: &Matrix) -> String {
    let mut out = String::from("| step | test |");
    for run in &matrix.runs {
        write!(out, " {} |", run.variant.id).unwrap();
    }
    out.push_str("\n|---:|---|");
    out.push_str(&":---:|".repeat(matrix.runs.len()));
    out.push('\n');
    for case in &matrix.tests {
        write!(out, "| {} | `{}` |", case.step, case.name).unwrap();
        for run in &matrix.runs {
            let cell = match cell_look(matrix, case, run).class {
                "ok" => "pass",
                "broken" => "**fails**",
                "killed" => "**killed**",
                "timeout" => "timeout",
                "crash" => "crash",
                "not-covered" => "not covered",
                "not-counted" => "fails, not counted",
                _ => "",
            };
            write!(out, " {cell} |").unwrap();
        }
        out.push('\n');
    }
    out.push_str("\n| mutant | step | status | killed by |\n|---|---:|---|---:|\n");
    for summary in matrix.summaries() {
        writeln!(
            out,
            "| {} | {} | {} | {} ({} of step {}) |",
            summary.id,
            summary.step,
            summary.status.label(),
            crate::report::tests_phrase(summary.killers.len()),
            summary.own_step_killers,
            summary.step
        )
        .unwrap();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::sample::{failed, small_matrix};
    use crate::outcome::Outcome;
    use crate::suite;

    #[test]
    fn the_matrix_markdown_has_a_row_per_test_and_a_column_per_variant() {
        let matrix = small_matrix(
            Outcome::Pass,
            [Outcome::Pass, failed()],
            [
                Outcome::Crash {
                    message: "x".into(),
                },
                Outcome::Timeout {
                    limit_ms: 1,
                    detail: None,
                },
            ],
        );
        let markdown = report(&matrix);
        let lines: Vec<&str> = markdown.lines().collect();
        assert_eq!(lines[0], "| step | test | reference | 04 | 01 |");
        assert_eq!(lines[1], "|---:|---|:---:|:---:|:---:|");
        assert_eq!(
            lines[2],
            format!("| 1 | `{}` | pass |  | crash |", suite::CASES[0].name)
        );
        assert_eq!(
            lines[3],
            "| 4 | `claim_at_exact_expiry_is_reassigned` | pass | **killed** | timeout |"
        );
        assert!(
            markdown.contains("| 04 | 4 | killed | 1 test (1 of step 4) |"),
            "{markdown}"
        );
        assert!(
            markdown.contains("| 01 | 1 | timeout | 2 tests (1 of step 1) |"),
            "{markdown}"
        );
    }

    #[test]
    fn a_failing_reference_is_not_called_a_kill() {
        let matrix = small_matrix(
            failed(),
            [Outcome::Pass, failed()],
            [failed(), Outcome::Pass],
        );
        let markdown = report(&matrix);
        assert!(
            markdown.lines().nth(2).unwrap().contains("| **fails** |"),
            "{markdown}"
        );
    }
}
