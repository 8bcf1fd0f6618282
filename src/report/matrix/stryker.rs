//! The kill matrix as a Stryker mutation-testing report (schema version 2),
//! the format that the mutation-testing-elements viewer and other tools of
//! the Stryker family read.
//!
//! The mutated files are the reference stores the matrix's mutants change
//! (`crates/store/src/store.rs`, `src/store.py`), each with its whole source; each
//! mutant sits at the token its change replaces (see [`super::change`]),
//! so that mutants of one statement each have a place of their own and a
//! viewer can mark and open every one. The tests are the contract suite's,
//! one test file per step, each test's id its name. A mutant is covered by
//! the tests that call an operation its change reaches (see
//! [`crate::reach`]); the tests that caught it are the ones that count as
//! kills ([`Matrix::caught_by`]).

use super::{change, test_file, Position};
use crate::matrix::Matrix;
use crate::outcome::{MutantStatus, Outcome};
use crate::runner::VariantRun;
use crate::variant::Mutant;
use serde_json::{json, Map, Value};

/// The schema version this report follows.
pub const SCHEMA_VERSION: &str = "2";

/// The mutation score (detected mutants, in percent) at or above which a
/// viewer shows the report green. The lab expects every mutant to be
/// caught (`lab matrix --check` fails otherwise), so only 100 is green.
pub const HIGH_THRESHOLD: u8 = 100;

/// The score below which a viewer shows the report red.
pub const LOW_THRESHOLD: u8 = 80;

/// The contract suite's sources, by step, for the viewer's test view.
const SUITE_SOURCES: [&str; 8] = [
    include_str!("../../suite/step1.rs"),
    include_str!("../../suite/step2.rs"),
    include_str!("../../suite/step3.rs"),
    include_str!("../../suite/step4.rs"),
    include_str!("../../suite/step5.rs"),
    include_str!("../../suite/step6.rs"),
    include_str!("../../suite/step7.rs"),
    include_str!("../../suite/step8.rs"),
];

/// The matrix as a report valid against Stryker's mutation-testing-report
/// schema, version 2.
///
/// Statuses map as killed → `Killed`, survived → `Survived`, timeout →
/// `Timeout`, crashed → `RuntimeError`. `killedBy` lists the tests that
/// caught the mutant (failed, timed out or crashed on it), `coveredBy`
/// the tests that can run its change ([`Matrix::covering`]),
/// `testsCompleted` how many tests were run against it (those not covered
/// may not have been: see [`Matrix::build_covered`]), and `statusReason`
/// the first catch's failure message or, for a survivor, the mutant's
/// explanation. The
/// reference's own results go under `config.reference`, since the schema
/// has no place for them.
pub fn report(matrix: &Matrix) -> Value {
    let mut files = Map::new();
    for (run, mutant) in matrix.mutant_runs() {
        let file = files.entry(mutant.spec.file.clone()).or_insert_with(|| {
            json!({
                "language": language(&mutant.spec.file),
                "source": mutant.original,
                "mutants": [],
            })
        });
        file["mutants"]
            .as_array_mut()
            .expect("mutants is an array")
            .push(mutant_result(matrix, run, mutant));
    }
    json!({
        "schemaVersion": SCHEMA_VERSION,
        "thresholds": {"high": HIGH_THRESHOLD, "low": LOW_THRESHOLD},
        "files": files,
        "testFiles": test_files(matrix),
        "framework": {"name": "lease-lab", "version": env!("CARGO_PKG_VERSION")},
        "config": {"reference": reference_results(matrix)},
    })
}

/// The Stryker name of a mutant status.
pub fn status_name(status: MutantStatus) -> &'static str {
    match status {
        MutantStatus::Killed => "Killed",
        MutantStatus::Survived => "Survived",
        MutantStatus::Timeout => "Timeout",
        MutantStatus::Crashed => "RuntimeError",
    }
}

/// The language of a source file, as viewers name it for highlighting.
fn language(file: &str) -> &'static str {
    if file.ends_with(".py") {
        "python"
    } else {
        "rust"
    }
}

fn mutant_result(matrix: &Matrix, run: &VariantRun, whole: &Mutant) -> Value {
    let change = change(whole);
    let mutant = &whole.spec;
    // The matrix's one rule: for a program, a test beyond the worksheet,
    // or one its reference fails too, kills nothing.
    let killed_by = matrix.caught_by(run);
    let catches: Vec<(&str, &Outcome)> = killed_by
        .iter()
        .filter_map(|test| Some((*test, run.outcome(test)?)))
        .collect();
    let status = MutantStatus::of(catches.iter().map(|(_, outcome)| *outcome));
    let reason = catches
        .first()
        .and_then(|(test, outcome)| Some(format!("{test}: {}", outcome.reason()?)))
        .unwrap_or_else(|| mutant.explanation.trim().to_string());
    let micros: u64 = run.runs.iter().map(|test| test.micros).sum();
    let completed = run.runs.iter().filter(|test| !test.not_covered).count();
    json!({
        "id": mutant.id,
        // The viewer labels a mutant by its mutator's name alone (its id
        // and description stay in the JSON): the lab's id and title go in
        // it, so that 08 and 08b, or two marks on one line, are told apart.
        "mutatorName": format!(
            "{} {} ({} mutant, step {})",
            mutant.id,
            mutant.title,
            mutant.kind.name(),
            mutant.step
        ),
        "description": mutant.title,
        "replacement": change.replacement,
        "location": {"start": position(change.start), "end": position(change.end)},
        "status": status_name(status),
        "statusReason": reason,
        "killedBy": killed_by,
        "coveredBy": matrix.covering(run),
        "testsCompleted": completed,
        "duration": micros as f64 / 1000.0,
    })
}

fn position(position: Position) -> Value {
    json!({"line": position.line, "column": position.column})
}

/// One entry per step that has tests in the matrix: the step's file, its
/// source, and its tests with where each is defined.
fn test_files(matrix: &Matrix) -> Value {
    let mut files = Map::new();
    for case in &matrix.tests {
        let source = usize::from(case.step)
            .checked_sub(1)
            .and_then(|index| SUITE_SOURCES.get(index))
            .copied();
        let file = files.entry(test_file(case.step)).or_insert_with(|| {
            let mut file = json!({"tests": []});
            if let Some(source) = source {
                file["source"] = json!(source);
            }
            file
        });
        let mut test = json!({"id": case.name, "name": case.name});
        if let Some(start) = source.and_then(|source| definition(source, case.name)) {
            test["location"] = json!({"start": position(start)});
        }
        file["tests"]
            .as_array_mut()
            .expect("tests is an array")
            .push(test);
    }
    Value::Object(files)
}

/// Where `pub fn NAME(` is defined in a suite file: the name's position.
fn definition(source: &str, name: &str) -> Option<Position> {
    let signature = format!("pub fn {name}(");
    let at = source.find(&signature)? + "pub fn ".len();
    Some(super::position(source, at))
}

fn reference_results(matrix: &Matrix) -> Value {
    match matrix.reference() {
        None => json!({"ran": false}),
        Some(run) => {
            let failed: Vec<Value> = run
                .runs
                .iter()
                .filter_map(|test| {
                    Some(json!({"test": test.test, "reason": test.outcome.reason()?}))
                })
                .collect();
            json!({
                "ran": true,
                "tests": run.runs.len(),
                "passed": run.runs.len() - failed.len(),
                "failed": failed,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutant::MUTABLE_FILE;
    use crate::report::matrix::sample::matrix;
    use crate::suite::CASES;

    #[test]
    fn each_file_is_named_in_the_language_of_its_code() {
        assert_eq!(language("crates/store/src/store.rs"), "rust");
        assert_eq!(language("src/store.py"), "python");
    }
    use crate::variant::{self, REFERENCE_SOURCE};

    fn mutant<'a>(report: &'a Value, id: &str) -> &'a Value {
        report["files"][MUTABLE_FILE]["mutants"]
            .as_array()
            .expect("mutants is an array")
            .iter()
            .find(|mutant| mutant["id"] == id)
            .expect("the mutant is reported")
    }

    #[test]
    fn statuses_map_to_strykers_names() {
        let report = report(&matrix());
        let statuses: Vec<&str> = ["04", "05", "06", "07"]
            .iter()
            .map(|id| mutant(&report, id)["status"].as_str().unwrap())
            .collect();
        assert_eq!(statuses, ["Killed", "Timeout", "RuntimeError", "Survived"]);
    }

    #[test]
    fn a_kill_names_its_test_and_its_failure() {
        let report = report(&matrix());
        let killed = mutant(&report, "04");
        assert_eq!(
            killed["killedBy"],
            json!(["claim_at_exact_expiry_is_reassigned"])
        );
        assert_eq!(
            killed["statusReason"],
            "claim_at_exact_expiry_is_reassigned: claim(\"j\", \"B\", now=110, ttl=5): expected fence 2, got none <script>&"
        );
        // 04 changes claim, which claim_many calls: the tests of steps 4
        // and 8 call them, the others (renew, complete, release) do not.
        let covering: Vec<&str> = CASES
            .iter()
            .filter(|case| [4, 8].contains(&case.step))
            .map(|case| case.name)
            .collect();
        assert_eq!(killed["coveredBy"], json!(covering));
        let survivor = mutant(&report, "07");
        assert_eq!(survivor["killedBy"], json!([]));
        assert_eq!(
            survivor["statusReason"],
            variant::compiled_mutant("07").unwrap().explanation.trim()
        );
    }

    /// `killedBy` and the status follow the matrix's one rule: a test the
    /// reference fails too kills nothing.
    #[test]
    fn a_test_the_reference_fails_too_kills_nothing() {
        let mut matrix = matrix();
        let boundary = "claim_at_exact_expiry_is_reassigned";
        let on_mutant = matrix.runs[1].outcome(boundary).unwrap().clone();
        let reference = &mut matrix.runs[0];
        assert!(reference.variant.is_reference());
        for test in &mut reference.runs {
            if test.test == boundary {
                test.outcome = on_mutant.clone();
            }
        }
        let report = report(&matrix);
        let boundary_mutant = mutant(&report, "04");
        assert_eq!(boundary_mutant["killedBy"], json!([]));
        assert_eq!(boundary_mutant["status"], "Survived");
        assert_eq!(mutant(&report, "05")["status"], "Timeout");
    }

    #[test]
    fn a_mutant_sits_at_the_token_it_changes_with_its_new_text() {
        let report = report(&matrix());
        let boundary = mutant(&report, "04");
        let line = REFERENCE_SOURCE
            .lines()
            .position(|line| line.contains("if done || held_until > now {"))
            .unwrap()
            + 1;
        assert_eq!(boundary["location"]["start"]["line"], line);
        assert_eq!(boundary["location"]["end"]["line"], line);
        let column = REFERENCE_SOURCE
            .lines()
            .nth(line - 1)
            .unwrap()
            .find("> now")
            .unwrap()
            + 1;
        assert_eq!(boundary["location"]["start"]["column"], column);
        assert_eq!(boundary["location"]["end"]["column"], column + 1);
        assert_eq!(boundary["replacement"], ">=");
    }

    #[test]
    fn tests_are_grouped_by_step_file_with_their_definitions() {
        let report = report(&matrix());
        let files = report["testFiles"].as_object().unwrap();
        let names: Vec<&String> = files.keys().collect();
        assert_eq!(
            names,
            [
                "src/suite/step4.rs",
                "src/suite/step5.rs",
                "src/suite/step6.rs",
                "src/suite/step7.rs",
                "src/suite/step8.rs"
            ]
        );
        let first = &files["src/suite/step4.rs"]["tests"][0];
        assert_eq!(first["id"], "claim_of_a_new_job_returns_fence_1");
        let line = SUITE_SOURCES[3]
            .lines()
            .position(|line| line.contains("pub fn claim_of_a_new_job_returns_fence_1("))
            .unwrap()
            + 1;
        assert_eq!(
            first["location"]["start"],
            json!({"line": line, "column": 8})
        );
    }

    #[test]
    fn the_reference_results_go_under_config() {
        let report = report(&matrix());
        assert_eq!(report["config"]["reference"]["failed"], json!([]));
        assert_eq!(report["schemaVersion"], "2");
    }
}
