//! A check as Gradescope's autograder reads it: the `results.json` its
//! autograder harness expects (Gradescope's "autograder specifications"):
//! a top-level score and visibility, and a test per contract test with its
//! score, its maximum, its status, and what to tell the student.

use crate::course::check::CheckReport;
use crate::course::class_check::{CheckResult, ImplCheck};
use crate::suite;
use serde_json::{json, Value};

/// A contract test's points: each is worth one.
const POINTS: f64 = 1.0;

/// One contract test of a check, as an autograder reports it (Gradescope's
/// and PrairieLearn's alike).
#[derive(Debug, Clone, PartialEq)]
pub struct GradedTest {
    /// Its step.
    pub step: u8,
    /// Its place among the step's contract tests, from 1.
    pub number: usize,
    /// The test's name.
    pub name: &'static str,
    /// Whether it ran and passed.
    pub passed: bool,
    /// What to tell the student of a failure: the call, the expected and
    /// actual answers, and the program's standard error during the test;
    /// empty for a pass.
    pub output: String,
}

/// Every contract test of the steps `report` checked, in order, with what
/// to tell the student about each.
pub fn graded_tests(report: &CheckReport) -> Vec<GradedTest> {
    let mut tests = Vec::new();
    for step in &report.steps {
        let cases = suite::CASES
            .iter()
            .filter(|case| case.step == step.step && case.judges_programs());
        for (index, case) in cases.enumerate() {
            let failure = step.failures.iter().find(|(name, _)| *name == case.name);
            let unrun = step.not_run.iter().find(|(name, _)| *name == case.name);
            let output = match (failure, unrun) {
                (None, None) => String::new(),
                // A test that did not run earns nothing: it says why.
                (None, Some((_, why))) => format!("not run: {why}"),
                (Some((_, outcome)), _) => {
                    let mut text = outcome.reason().unwrap_or_else(|| outcome.label().into());
                    if let Some(window) = step.stderr.get(case.name) {
                        text.push_str("\n\nYour program's standard error during the test:\n");
                        text.push_str(&window.last.join("\n"));
                    }
                    text
                }
            };
            tests.push(GradedTest {
                step: step.step,
                number: index + 1,
                name: case.name,
                passed: failure.is_none() && unrun.is_none(),
                output,
            });
        }
    }
    tests
}

/// The line that sums a check up: `IMPL against the contract tests of
/// steps 1 to N: K of N steps pass.`
pub fn summary(report: &CheckReport, implementation: &str, through: u8) -> String {
    // A step passes when every one of its tests ran and passed: a step
    // not run passes nothing.
    let passed = report.steps.iter().filter(|step| step.passed()).count();
    format!(
        "{implementation} against the contract tests of {}: {passed} of {} steps pass.",
        crate::report::steps_through(through),
        report.steps.len()
    )
}

/// `report`, a check of `implementation` through step `through`, as
/// Gradescope's `results.json`: a test per contract test of those steps
/// (`step N: name`, numbered `N.k`), one point each when it passes, with
/// the failure (the call, expected and actual) and the program's standard
/// error in its output; the points added up as the score. Everything is
/// shown to the student at once (`visible`): the suite is the worksheet's
/// contract, nothing in it is secret.
pub fn results(report: &CheckReport, implementation: &str, through: u8) -> Value {
    let tests: Vec<Value> = graded_tests(report)
        .into_iter()
        .map(|test| {
            json!({
                "name": format!("step {}: {}", test.step, test.name),
                "number": format!("{}.{}", test.step, test.number),
                "score": if test.passed { POINTS } else { 0.0 },
                "max_score": POINTS,
                "status": if test.passed { "passed" } else { "failed" },
                "output": test.output,
                "output_format": "text",
                "tags": [format!("step {}", test.step)],
                "visibility": "visible",
            })
        })
        .collect();
    let score: f64 = tests.iter().filter_map(|test| test["score"].as_f64()).sum();
    json!({
        "score": score,
        "output": summary(report, implementation, through),
        "output_format": "text",
        "visibility": "visible",
        "stdout_visibility": "visible",
        "tests": tests,
    })
}

/// Gradescope's `results.json` for a submission the lab could not check
/// (it did not end within its time limit, or did not start): no test, a
/// score of 0, and `why` shown to the student. (With no test, Gradescope
/// scores the submission out of the assignment's total, which the
/// instructors' guide says to set to the number of contract tests.)
pub fn not_checked(why: &str) -> Value {
    json!({
        "score": 0.0,
        "output": why,
        "output_format": "text",
        "visibility": "visible",
        "stdout_visibility": "visible",
        "tests": [],
    })
}

/// Writes each student's Gradescope `results.json` into `folder`:
/// `folder/STUDENT/results.json`, or `folder/ENTRY/results.json` for a
/// student with two entries (`ada.py` and a project folder `ada`), so that
/// neither is lost. A check that ran writes its own report; one that timed
/// out or could not start is scored 0, saying why.
///
/// Errors: a folder or a file cannot be written.
pub fn write_class(folder: &std::path::Path, checks: &[ImplCheck]) -> std::io::Result<()> {
    for check in checks {
        let results = match (&check.result, &check.report) {
            (CheckResult::Checked { .. }, Some(report)) => report.clone(),
            (CheckResult::Checked { .. }, None) => json_bytes(&not_checked(&format!(
                "{}: the check ran, but its report could not be read.",
                check.entry
            ))),
            (CheckResult::TimedOut { limit_s }, _) => json_bytes(&not_checked(&format!(
                "{}: the check did not end within the time limit of {limit_s} s and was stopped.",
                check.entry
            ))),
            (CheckResult::CouldNotStart { reason }, _) => json_bytes(&not_checked(&format!(
                "{}: could not start: {reason}",
                check.entry
            ))),
        };
        let shared = checks
            .iter()
            .filter(|other| other.student == check.student)
            .count()
            > 1;
        let into = if shared {
            folder.join(
                std::path::Path::new(&check.entry)
                    .file_name()
                    .unwrap_or_default(),
            )
        } else {
            folder.join(&check.student)
        };
        std::fs::create_dir_all(&into)?;
        std::fs::write(into.join("results.json"), results)?;
    }
    Ok(())
}

/// `value` as pretty JSON.
fn json_bytes(value: &Value) -> Vec<u8> {
    serde_json::to_vec_pretty(value).expect("JSON")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::child_process::StderrWindow;
    use crate::course::check::StepResult;
    use crate::outcome::Outcome;

    /// The contract tests of `step` that judge programs, by name.
    fn judging(step: u8) -> Vec<&'static str> {
        suite::CASES
            .iter()
            .filter(|case| case.step == step && case.judges_programs())
            .map(|case| case.name)
            .collect()
    }

    #[test]
    fn each_contract_test_is_a_result_with_its_points_and_its_failure() {
        let (one, two) = (judging(1), judging(2));
        let failing = two[1];
        let failure = Outcome::Fail {
            check: "enqueue(\"j\")".into(),
            expected: "true".into(),
            actual: "false".into(),
            state: None,
        };
        let step = |step, failures, tests| StepResult::ran(step, tests, failures);
        let mut second = step(2, vec![(failing, failure)], two.len());
        second.stderr.insert(
            failing,
            StderrWindow {
                last: vec!["my enqueue: j".into()],
                earlier: 0,
            },
        );
        let report = CheckReport {
            steps: vec![step(1, Vec::new(), one.len()), second],
            beyond: Vec::new(),
            greeting: None,
        };
        let results = results(&report, "store.py", 2);
        let tests = results["tests"].as_array().unwrap();
        assert_eq!(tests.len(), one.len() + two.len());
        assert_eq!(results["score"].as_f64(), Some((tests.len() - 1) as f64));
        assert_eq!(tests[0]["name"], format!("step 1: {}", one[0]));
        assert_eq!(tests[0]["number"], "1.1");
        assert_eq!(tests[0]["status"], "passed");
        assert_eq!(tests[0]["output"], "");
        let failed = &tests[one.len() + 1];
        assert_eq!(failed["name"], format!("step 2: {failing}"));
        assert_eq!(failed["number"], "2.2");
        assert_eq!(
            (failed["score"].as_f64(), failed["max_score"].as_f64()),
            (Some(0.0), Some(1.0))
        );
        assert_eq!(failed["status"], "failed");
        let output = failed["output"].as_str().unwrap();
        assert!(output.contains("enqueue(\"j\")"), "{output}");
        assert!(
            output.ends_with("standard error during the test:\nmy enqueue: j"),
            "{output}"
        );
        assert_eq!(
            results["output"],
            "store.py against the contract tests of steps 1 to 2: 1 of 2 steps pass."
        );
    }

    #[test]
    fn a_submission_not_checked_scores_0_and_says_why() {
        let results = not_checked("ada.py: could not start");
        assert_eq!(results["score"].as_f64(), Some(0.0));
        assert_eq!(results["output"], "ada.py: could not start");
        assert_eq!(results["tests"], serde_json::json!([]));
        assert_eq!(results["visibility"], "visible");
    }

    /// A class's results: a check that ran writes its own report; one
    /// that timed out, could not start, or left no report is scored 0,
    /// saying why; a student with two entries has a folder per entry.
    #[test]
    fn a_class_s_results_are_written_one_folder_per_student() {
        let check = |student: &str, entry: &str, result, report: Option<&str>| ImplCheck {
            student: student.into(),
            entry: entry.into(),
            result,
            limit: None,
            report: report.map(|text| text.as_bytes().to_vec()),
        };
        let ran = CheckResult::Checked {
            steps_passed: 1,
            through: 8,
            open_steps: vec![2],
        };
        let checks = [
            check("ada", "class/ada.py", ran.clone(), Some("{\"score\": 1}")),
            check(
                "ada",
                "class/ada",
                CheckResult::TimedOut { limit_s: 5 },
                None,
            ),
            check(
                "bob",
                "class/bob.py",
                CheckResult::CouldNotStart {
                    reason: "no store".into(),
                },
                None,
            ),
            check("cy", "class/cy.py", ran, None),
        ];
        let folder = tempfile::tempdir().expect("a folder");
        write_class(folder.path(), &checks).expect("written");
        let read = |path: &str| {
            std::fs::read_to_string(folder.path().join(path).join("results.json"))
                .unwrap_or_else(|error| panic!("{path}: {error}"))
        };
        assert_eq!(read("ada.py"), "{\"score\": 1}");
        let output = |path: &str| {
            let results: Value = serde_json::from_str(&read(path)).expect("JSON");
            assert_eq!(results["score"].as_f64(), Some(0.0), "{path}");
            results["output"].as_str().expect("output").to_string()
        };
        assert_eq!(
            output("ada"),
            "class/ada: the check did not end within the time limit of 5 s and was stopped."
        );
        assert_eq!(output("bob"), "class/bob.py: could not start: no store");
        assert_eq!(
            output("cy"),
            "class/cy.py: the check ran, but its report could not be read."
        );
        let mut written: Vec<String> = std::fs::read_dir(folder.path())
            .expect("the folder")
            .map(|entry| {
                entry
                    .expect("an entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        written.sort();
        assert_eq!(written, ["ada", "ada.py", "bob", "cy"]);

        // A folder that cannot be made is an error.
        let file = folder.path().join("a-file");
        std::fs::write(&file, "").expect("a file");
        assert!(write_class(&file, &checks).is_err());
    }
}
