//! The Stryker report of the real kill matrix is valid against Stryker's own
//! schema and means what a viewer will take it to mean.
//!
//! The schema is the pinned copy in `tests/data/` (see its README there), so
//! these tests need no network. One ignored test checks that the copy still
//! equals the current release of the package it came from; CI runs it.

use crate::matrices::{matrix, python_matrix};
use lease_lab::outcome::Outcome;
use lease_lab::report::matrix::stryker;
use lease_lab::suite::CASES;
use lease_lab::variant;
use serde_json::{json, Value};
use std::process::Command;

/// The package the schema ships in, and the version of the pinned copy.
const SCHEMA_PACKAGE: &str = "mutation-testing-report-schema";
const SCHEMA_VERSION: &str = "3.8.4";

/// The pinned copy of the schema (report schema version 2).
const PINNED_SCHEMA: &str = include_str!("../data/mutation-testing-report-schema-3.8.4.json");

/// Where the package keeps its schema.
const SCHEMA_FILE: &str = "package/dist/src/mutation-testing-report-schema.json";

/// Runs `npm` with `args` in `folder` and returns its standard output.
pub(crate) fn npm(args: &[&str], folder: &std::path::Path) -> String {
    let output = Command::new("npm")
        .args(args)
        .current_dir(folder)
        .output()
        .unwrap_or_else(|e| panic!("this test needs npm (apt-get install -y npm): {e}"));
    assert!(
        output.status.success(),
        "npm {} failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// The pinned copy is the package's current release, byte for byte: when
/// the package moves on, update the copy (and its version) deliberately.
#[test]
#[ignore = "needs npm and the package registry; .ci/run runs it"]
fn the_pinned_schema_is_the_current_release_of_the_package() {
    let folder = tempfile::tempdir().expect("a temporary folder");
    let latest = npm(&["view", SCHEMA_PACKAGE, "version"], folder.path());
    assert_eq!(
        latest, SCHEMA_VERSION,
        "{SCHEMA_PACKAGE} {latest} is out: compare its schema with the pinned {SCHEMA_VERSION} and update tests/data"
    );
    let tarball = npm(
        &["pack", "--silent", &format!("{SCHEMA_PACKAGE}@{latest}")],
        folder.path(),
    );
    let tarball = tarball.lines().last().expect("npm pack names its tarball");
    let extracted = Command::new("tar")
        .args(["xzf", tarball, SCHEMA_FILE])
        .current_dir(folder.path())
        .status()
        .expect("tar runs");
    assert!(
        extracted.success(),
        "cannot extract {SCHEMA_FILE} from {tarball}"
    );
    let released = std::fs::read_to_string(folder.path().join(SCHEMA_FILE)).expect("the schema");
    assert!(
        released == PINNED_SCHEMA,
        "the released schema differs from tests/data/mutation-testing-report-schema-{SCHEMA_VERSION}.json"
    );
}

/// The byte offset of a 1-based (line, UTF-16 column) position in `text`.
fn offset(text: &str, position: &Value) -> usize {
    let line = position["line"].as_u64().unwrap() as usize;
    let column = position["column"].as_u64().unwrap() as usize;
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line - 1)
        .map(str::len)
        .sum();
    let mut units = 1;
    let mut bytes = 0;
    for c in text[line_start..].chars() {
        if units >= column {
            break;
        }
        units += c.len_utf16();
        bytes += c.len_utf8();
    }
    line_start + bytes
}

/// A viewer shows a mutant by putting its replacement at its location in
/// the file's source; that must give exactly the source the lab ran, for
/// the Rust store and the Python store alike.
#[test]
fn each_mutant_placed_in_the_source_gives_the_code_that_ran() {
    for (matrix, file) in [
        (matrix(), "crates/store/src/store.rs"),
        (python_matrix(), "src/store.py"),
    ] {
        let report = stryker::report(matrix);
        let source = report["files"][file]["source"].as_str().unwrap();
        let mutants = report["files"][file]["mutants"].as_array().unwrap();
        assert_eq!(mutants.len(), matrix.runs.len() - 1);
        for (_, mutant) in matrix.mutant_runs() {
            let id = &mutant.spec.id;
            let reported = reported_mutant(&report, file, id);
            // The viewer labels a mutant by its mutator's name alone.
            let label = reported["mutatorName"].as_str().unwrap();
            assert!(
                label.starts_with(&format!("{id} {} (", mutant.spec.title)),
                "{label}"
            );
            let start = offset(source, &reported["location"]["start"]);
            let end = offset(source, &reported["location"]["end"]);
            let placed = format!(
                "{}{}{}",
                &source[..start],
                reported["replacement"].as_str().unwrap(),
                &source[end..]
            );
            assert!(
                placed == mutant.source,
                "mutant {id} does not sit at its location"
            );
        }
    }
    assert_eq!(matrix().runs.len() - 1, variant::MUTANTS.len());
}

#[test]
fn statuses_and_killers_are_the_matrix_s_and_name_known_tests() {
    let matrix = matrix();
    let report = stryker::report(matrix);
    let test_ids: Vec<&str> = report["testFiles"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|file| file["tests"].as_array().unwrap())
        .map(|test| test["id"].as_str().unwrap())
        .collect();
    assert_eq!(test_ids.len(), CASES.len());
    let mutants = report["files"]["crates/store/src/store.rs"]["mutants"]
        .as_array()
        .unwrap();
    for summary in matrix.summaries() {
        let reported = mutants
            .iter()
            .find(|mutant| mutant["id"] == summary.id)
            .expect("every mutant is reported");
        assert_eq!(reported["status"], stryker::status_name(summary.status));
        assert_eq!(reported["killedBy"], json!(summary.killers));
        for test in reported["killedBy"]
            .as_array()
            .unwrap()
            .iter()
            .chain(reported["coveredBy"].as_array().unwrap())
        {
            assert!(test_ids.contains(&test.as_str().unwrap()), "{test}");
        }
    }
}

/// The Python store's report: every `killedBy` names only tests
/// of the worksheet's contract, the only ones that judge a program (the Rust
/// store's stricter tests fail on the Python reference too and kill nothing).
#[test]
fn the_python_stores_report_names_only_contract_tests_as_killers() {
    use lease_lab::suite::Tag;
    let matrix = python_matrix();
    let report = stryker::report(matrix);
    let mutants = report["files"]["src/store.py"]["mutants"]
        .as_array()
        .expect("the Python store's mutants");
    assert_eq!(mutants.len(), matrix.runs.len() - 1);
    for mutant in mutants {
        let killers = mutant["killedBy"].as_array().unwrap();
        assert!(
            !killers.is_empty(),
            "{} is killed: {mutant:#}",
            mutant["id"]
        );
        for killer in killers {
            let case = lease_lab::suite::case(killer.as_str().unwrap()).unwrap();
            assert_eq!(case.tag, Tag::Contract, "{}: {killer}", mutant["id"]);
        }
    }
}

/// `killedBy` is the matrix's rule for a kill: a test that fails on the
/// Python reference too, or one beyond the worksheet, fails on its mutants
/// as well but kills none of them.
#[test]
fn the_python_stores_killers_leave_out_the_tests_that_do_not_count() {
    let matrix = python_matrix();
    let reference = matrix.reference().expect("the Python reference ran");
    let beyond = matrix.beyond_the_worksheet();
    assert!(
        !beyond.is_empty(),
        "the Python store fails a test of the Rust store's own"
    );
    let report = stryker::report(matrix);
    let mut left_out = 0;
    for (run, mutant) in matrix.mutant_runs() {
        let reported = reported_mutant(&report, "src/store.py", &mutant.spec.id);
        let killers: Vec<&str> = reported["killedBy"]
            .as_array()
            .unwrap()
            .iter()
            .map(|test| test.as_str().unwrap())
            .collect();
        assert_eq!(killers, matrix.caught_by(run), "{}", mutant.spec.id);
        for killer in &killers {
            assert!(!beyond.contains(killer), "{}: {killer}", mutant.spec.id);
            assert_eq!(reference.outcome(killer), Some(&Outcome::Pass), "{killer}");
        }
        left_out += run
            .runs
            .iter()
            .filter(|test| test.outcome.catches() && !killers.contains(&test.test.as_str()))
            .count();
    }
    assert!(left_out > 0, "some mutant fails a test that does not count");
}

/// A reported mutant of `file` by id.
fn reported_mutant<'a>(report: &'a Value, file: &str, id: &str) -> &'a Value {
    report["files"][file]["mutants"]
        .as_array()
        .expect("the file's mutants")
        .iter()
        .find(|mutant| mutant["id"] == id)
        .unwrap_or_else(|| panic!("mutant {id} is reported"))
}

/// `coveredBy` is the tests that can run the mutated operation: those whose
/// run against the reference called an operation the mutant's change
/// reaches, never every test; and a test that kills a mutant covers it.
#[test]
fn covered_by_names_the_tests_that_call_an_operation_the_change_reaches() {
    let matrix = matrix();
    let reference = matrix.reference().expect("the reference ran");
    let report = stryker::report(matrix);
    for (run, mutant) in matrix.mutant_runs() {
        let reported = reported_mutant(&report, "crates/store/src/store.rs", &mutant.spec.id);
        let reaches = mutant
            .reaches
            .as_ref()
            .expect("a compiled mutant's reach is known");
        let calling: Vec<&str> = matrix
            .tests
            .iter()
            .map(|case| case.name)
            .filter(|name| {
                let called = &reference
                    .test_run(name)
                    .expect("the reference ran it")
                    .operations;
                called
                    .iter()
                    .any(|called| reaches.contains(&called.as_str()))
            })
            .collect();
        assert_eq!(reported["coveredBy"], json!(calling), "{}", mutant.spec.id);
        for killer in matrix.caught_by(run) {
            assert!(calling.contains(&killer), "{}: {killer}", mutant.spec.id);
        }
    }
    let renew = reported_mutant(&report, "crates/store/src/store.rs", "05")["coveredBy"]
        .as_array()
        .unwrap()
        .len();
    assert!(
        renew > 0 && renew < CASES.len() / 2,
        "05 changes renew alone: {renew} tests"
    );
}

/// Where a reported mutant sits, as (start line, start column, end line,
/// end column).
fn location(mutant: &Value) -> [u64; 4] {
    let place = &mutant["location"];
    [
        &place["start"]["line"],
        &place["start"]["column"],
        &place["end"]["line"],
        &place["end"]["column"],
    ]
    .map(|number| number.as_u64().expect("a location is numbers"))
}

/// Each mutant sits at its own place, so that clicking one in a viewer
/// opens that one: the renew statement alone holds seven.
#[test]
fn every_mutant_of_each_store_has_a_location_of_its_own() {
    for (matrix, file) in [
        (matrix(), "crates/store/src/store.rs"),
        (python_matrix(), "src/store.py"),
    ] {
        let report = stryker::report(matrix);
        let mutants = report["files"][file]["mutants"].as_array().unwrap();
        let mut seen = std::collections::BTreeMap::new();
        for mutant in mutants {
            if let Some(other) = seen.insert(location(mutant), &mutant["id"]) {
                panic!("{} and {other} share {:?}", mutant["id"], location(mutant));
            }
        }
        assert_eq!(seen.len(), matrix.runs.len() - 1, "{file}");
    }
}

/// The lines of `source` that `mutant`'s location spans, as the viewer
/// shows them: as they are, and with the replacement in place.
fn viewer_lines(source: &str, mutant: &Value) -> (String, String) {
    let [start_line, _, end_line, _] = location(mutant);
    let line_start = |line: u64| -> usize {
        source
            .split_inclusive('\n')
            .take(line as usize - 1)
            .map(str::len)
            .sum()
    };
    let (first, after) = (line_start(start_line), line_start(end_line + 1));
    let start = offset(source, &mutant["location"]["start"]);
    let end = offset(source, &mutant["location"]["end"]);
    let mutated = format!(
        "{}{}{}",
        &source[first..start],
        mutant["replacement"].as_str().unwrap(),
        &source[end..after]
    );
    (source[first..after].to_string(), mutated)
}

/// Whether the viewer (mutation-testing-elements 3.x) can mark the change
/// in a mutant's lines. It compares the lines as they are with the mutated
/// ones, character by character from both ends, and opens its highlight at
/// the first differing character of the mutated lines and closes it at the
/// last; it passes over line breaks without a mark, so a change whose first
/// difference is a line break gets a highlight that closes without ever
/// opening, and the viewer fails ("Cannot find corresponding opening tag").
/// This is that comparison, as the viewer's source does it.
fn viewer_can_mark(original: &str, mutated: &str) -> bool {
    let old: Vec<char> = original.trim_end().chars().collect();
    let new: Vec<char> = mutated.trim_end().chars().collect();
    let mut first = 0;
    while first < new.len() && old.get(first) == new.get(first) {
        first += 1;
    }
    let shift = old.len() as isize - new.len() as isize;
    let mut last = new.len() as isize - 1;
    let old_at = |at: isize| usize::try_from(at + shift).ok().and_then(|at| old.get(at));
    while last > first as isize && old_at(last) == new.get(last as usize) {
        last -= 1;
    }
    if last == first as isize && first > 0 && !new[first - 1].is_whitespace() {
        first -= 1;
    }
    let close = (last + 1) as usize;
    let marked = |at: usize| new.get(at).is_some_and(|c| *c != '\n' && *c != '\r');
    !marked(close) || marked(first)
}

#[test]
fn the_viewer_can_mark_every_mutant_s_change_and_not_a_line_added_at_a_line_end() {
    for (matrix, file) in [
        (matrix(), "crates/store/src/store.rs"),
        (python_matrix(), "src/store.py"),
    ] {
        let report = stryker::report(matrix);
        let source = report["files"][file]["source"].as_str().unwrap();
        for mutant in report["files"][file]["mutants"].as_array().unwrap() {
            let (original, mutated) = viewer_lines(source, mutant);
            assert!(
                viewer_can_mark(&original, &mutated),
                "{}: {original:?} -> {mutated:?}",
                mutant["id"]
            );
        }
    }
    // A line added at the end of the location's line: what the report
    // said of mutant 08 before.
    assert!(!viewer_can_mark(
        "    let a = 1;\n",
        "    let a = 1;\n    return;\n"
    ));
    assert!(viewer_can_mark("    b();\n", "    return;\n    b();\n"));
}

/// The reports as a schema validator reads them (the `page-checks`
/// feature).
#[cfg(feature = "page-checks")]
mod pages {
    use super::*;
    use std::sync::OnceLock;

    fn schema() -> &'static Value {
        static SCHEMA: OnceLock<Value> = OnceLock::new();
        SCHEMA
            .get_or_init(|| serde_json::from_str(PINNED_SCHEMA).expect("the pinned schema is JSON"))
    }

    /// The error messages of `report` against the schema; empty when valid.
    fn schema_errors(report: &Value) -> Vec<String> {
        let validator = jsonschema::validator_for(schema()).expect("the schema compiles");
        validator
            .iter_errors(report)
            .map(|error| format!("{}: {error}", error.instance_path))
            .collect()
    }

    /// Each store's report is valid against the pinned schema.
    #[test]
    fn the_report_of_each_kill_matrix_is_valid_against_strykers_schema() {
        for matrix in [matrix(), python_matrix()] {
            let report = stryker::report(matrix);
            assert_eq!(schema_errors(&report), Vec::<String>::new());
        }
    }

    /// The schema can fail: a status it does not know, a field it needs gone.
    #[test]
    fn the_validator_rejects_what_the_schema_forbids() {
        let mut report = stryker::report(matrix());
        report["files"]["crates/store/src/store.rs"]["mutants"][0]["status"] = json!("Crashed");
        report.as_object_mut().unwrap().remove("thresholds");
        let errors = schema_errors(&report);
        assert!(
            errors.iter().any(|e| e.contains("/mutants/0/status")),
            "{errors:?}"
        );
        assert!(
            errors.iter().any(|e| e.contains("thresholds")),
            "{errors:?}"
        );
    }
}
