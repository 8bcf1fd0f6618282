//! A check as Gradescope's autograder reads it: the `results.json` its
//! autograder harness expects (Gradescope's "autograder specifications"):
//! a top-level score and visibility, and a test per contract test with its
//! score, its maximum, its status, and what to tell the student.

use crate::course::check::CheckReport;
use crate::suite;
use serde_json::{json, Value};

/// A contract test's points: each is worth one.
const POINTS: f64 = 1.0;

/// `report`, a check of `implementation` through step `through`, as
/// Gradescope's `results.json`: a test per contract test of those steps
/// (`step N: name`, numbered `N.k`), one point each when it passes, with
/// the failure (the call, expected and actual) and the program's standard
/// error in its output; the points added up as the score. Everything is
/// shown to the student at once (`visible`): the suite is the worksheet's
/// contract, nothing in it is secret.
pub fn results(report: &CheckReport, implementation: &str, through: u8) -> Value {
    let mut tests = Vec::new();
    for step in &report.steps {
        let cases = suite::CASES
            .iter()
            .filter(|case| case.step == step.step && case.judges_programs());
        for (index, case) in cases.enumerate() {
            let failure = step.failures.iter().find(|(name, _)| *name == case.name);
            let output = match failure {
                None => String::new(),
                Some((_, outcome)) => {
                    let mut text = outcome.reason().unwrap_or_else(|| outcome.label().into());
                    if let Some(window) = step.stderr.get(case.name) {
                        text.push_str("\n\nYour program's standard error during the test:\n");
                        text.push_str(&window.last.join("\n"));
                    }
                    text
                }
            };
            tests.push(json!({
                "name": format!("step {}: {}", step.step, case.name),
                "number": format!("{}.{}", step.step, index + 1),
                "score": if failure.is_none() { POINTS } else { 0.0 },
                "max_score": POINTS,
                "status": if failure.is_none() { "passed" } else { "failed" },
                "output": output,
                "output_format": "text",
                "tags": [format!("step {}", step.step)],
                "visibility": "visible",
            }));
        }
    }
    let score: f64 = tests.iter().filter_map(|test| test["score"].as_f64()).sum();
    let passed = report
        .steps
        .iter()
        .filter(|step| step.failures.is_empty())
        .count();
    json!({
        "score": score,
        "output": format!(
            "{implementation} against the contract tests of {}: {passed} of {} steps pass.",
            super::steps_through(through),
            report.steps.len()
        ),
        "output_format": "text",
        "visibility": "visible",
        "stdout_visibility": "visible",
        "tests": tests,
    })
}
