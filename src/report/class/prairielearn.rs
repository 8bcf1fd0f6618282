//! A check as PrairieLearn's external grader reports it: the
//! `results.json` its grading container writes (PrairieLearn's "External
//! Grading", grading results): a score between 0 and 1, a message, and a
//! test per contract test with its points, its maximum and what to tell
//! the student, which its `<pl-external-grader-results>` element draws.

use super::gradescope::{graded_tests, summary};
use crate::course::check::CheckReport;
use serde_json::{json, Value};

/// `report`, a check of `implementation` through step `through`, as
/// PrairieLearn's `results.json`: the same tests as Gradescope's (one
/// point each, [`graded_tests`]), the share of points earned as the score.
pub fn results(report: &CheckReport, implementation: &str, through: u8) -> Value {
    let graded = graded_tests(report);
    let earned = graded.iter().filter(|test| test.passed).count();
    let tests: Vec<Value> = graded
        .iter()
        .map(|test| {
            json!({
                "name": format!("step {}: {}", test.step, test.name),
                "description": format!("step {}, contract test {}", test.step, test.number),
                "points": u8::from(test.passed),
                "max_points": 1,
                "message": if test.passed { "passed" } else { "failed" },
                "output": test.output,
            })
        })
        .collect();
    // Exact in binary for every whole share; 0 for a check of no test.
    let score = if graded.is_empty() {
        0.0
    } else {
        earned as f64 / graded.len() as f64
    };
    json!({
        "gradable": true,
        "score": score,
        "message": summary(report, implementation, through),
        "output": "",
        "tests": tests,
    })
}

/// PrairieLearn's `results.json` for a submission the lab could not check
/// (a program that does not start, a project that does not build, a
/// check past its time limit): not gradable, as PrairieLearn's external
/// grading asks of a submission that could not be graded, with `why` as
/// the message shown to the student and a score of 0.
pub fn not_gradable(why: &str) -> Value {
    json!({
        "gradable": false,
        "score": 0.0,
        "message": why,
        "output": "",
        "tests": [],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::course::check::StepResult;
    use crate::outcome::Outcome;
    use crate::suite;

    #[test]
    fn the_score_is_the_share_of_contract_tests_passed() {
        let names: Vec<&'static str> = suite::CASES
            .iter()
            .filter(|case| case.step == 1 && case.judges_programs())
            .map(|case| case.name)
            .collect();
        let failure = Outcome::Fail {
            check: "init_db(path)".into(),
            expected: "ok".into(),
            actual: "error".into(),
            state: None,
        };
        let report = CheckReport {
            steps: vec![StepResult::ran(1, names.len(), vec![(names[0], failure)])],
            beyond: Vec::new(),
            greeting: None,
        };
        let results = results(&report, "store.py", 1);
        let tests = results["tests"].as_array().unwrap();
        assert_eq!(tests.len(), names.len());
        let expected = (names.len() - 1) as f64 / names.len() as f64;
        assert_eq!(results["score"].as_f64(), Some(expected));
        assert_eq!(results["gradable"], true);
        assert_eq!(tests[0]["name"], format!("step 1: {}", names[0]));
        assert_eq!(
            (tests[0]["points"].as_u64(), tests[0]["max_points"].as_u64()),
            (Some(0), Some(1))
        );
        assert_eq!(tests[0]["message"], "failed");
        assert!(tests[0]["output"]
            .as_str()
            .unwrap()
            .contains("init_db(path)"));
        assert_eq!(tests[1]["points"], 1);
        assert_eq!(tests[1]["description"], "step 1, contract test 2");
        assert_eq!(
            results["message"],
            "store.py against the contract tests of step 1: 0 of 1 steps pass."
        );
        let empty = CheckReport {
            steps: Vec::new(),
            beyond: Vec::new(),
            greeting: None,
        };
        assert_eq!(super::results(&empty, "x", 1)["score"].as_f64(), Some(0.0));
    }
}
