//! The Stryker report of the real kill matrix is valid against Stryker's own
//! schema and means what a viewer will take it to mean.
//!
//! The schema is the pinned copy in `tests/data/` (see its README there), so
//! these tests need no network. One ignored test checks that the copy still
//! equals the current release of the package it came from; CI runs it.

use lease_lab::matrix::Matrix;
use lease_lab::report::stryker;
use lease_lab::runner::{RunOptions, WorkerCommand};
use lease_lab::suite::CASES;
use lease_lab::variant::{self, Variant};
use serde_json::{json, Value};
use std::process::Command;
use std::sync::OnceLock;

/// The package the schema ships in, and the version of the pinned copy.
const SCHEMA_PACKAGE: &str = "mutation-testing-report-schema";
const SCHEMA_VERSION: &str = "3.8.4";

/// The pinned copy of the schema (report schema version 2).
const PINNED_SCHEMA: &str = include_str!("../data/mutation-testing-report-schema-3.8.4.json");

/// Where the package keeps its schema.
const SCHEMA_FILE: &str = "package/dist/src/mutation-testing-report-schema.json";

fn schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| serde_json::from_str(PINNED_SCHEMA).expect("the pinned schema is JSON"))
}

/// Runs `npm` with `args` in `folder` and returns its standard output.
fn npm(args: &[&str], folder: &std::path::Path) -> String {
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

/// The error messages of `report` against the schema; empty when valid.
fn schema_errors(report: &Value) -> Vec<String> {
    let validator = jsonschema::validator_for(schema()).expect("the schema compiles");
    validator
        .iter_errors(report)
        .map(|error| format!("{}: {error}", error.instance_path))
        .collect()
}

/// The `lab` binary's workers, which run the variants.
fn workers() -> WorkerCommand {
    WorkerCommand {
        program: env!("CARGO_BIN_EXE_lab").into(),
        args: vec!["__worker".into()],
    }
}

/// Every suite test against every variant, run by the `lab` binary's workers.
fn matrix() -> &'static Matrix {
    static MATRIX: OnceLock<Matrix> = OnceLock::new();
    MATRIX.get_or_init(|| {
        Matrix::build(
            &workers(),
            &Variant::all_compiled(),
            CASES.iter().collect(),
            &RunOptions::default(),
        )
    })
}

#[test]
fn the_report_of_the_kill_matrix_is_valid_against_strykers_schema() {
    let report = stryker::report(matrix());
    assert_eq!(schema_errors(&report), Vec::<String>::new());
}

#[test]
fn the_validator_rejects_what_the_schema_forbids() {
    let mut report = stryker::report(matrix());
    report["files"]["src/store.rs"]["mutants"][0]["status"] = json!("Crashed");
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
/// the file's source; that must give exactly the source the lab compiled.
#[test]
fn each_mutant_placed_in_the_source_gives_the_code_that_ran() {
    let report = stryker::report(matrix());
    let file = &report["files"]["src/store.rs"];
    let source = file["source"].as_str().unwrap();
    let mutants = file["mutants"].as_array().unwrap();
    assert_eq!(mutants.len(), variant::MUTANTS.len());
    for reported in mutants {
        let id = reported["id"].as_str().unwrap();
        let start = offset(source, &reported["location"]["start"]);
        let end = offset(source, &reported["location"]["end"]);
        let placed = format!(
            "{}{}{}",
            &source[..start],
            reported["replacement"].as_str().unwrap(),
            &source[end..]
        );
        assert!(
            placed == variant::compiled_mutant(id).unwrap().source,
            "mutant {id} does not sit at its location"
        );
    }
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
    let mutants = report["files"]["src/store.rs"]["mutants"]
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

/// The Python store's report: valid, and every `killedBy` names only tests
/// of the worksheet's contract, the only ones that judge a program (the Rust
/// store's stricter tests fail on the Python reference too and kill nothing).
#[test]
fn the_python_stores_report_names_only_contract_tests_as_killers() {
    use lease_lab::subject::Subject;
    use lease_lab::suite::Tag;
    let variants = Subject::Python.built_in_variants().unwrap();
    let matrix = Matrix::build(
        &workers(),
        &variants,
        CASES.iter().collect(),
        &RunOptions::default(),
    );
    let report = stryker::report(&matrix);
    assert_eq!(schema_errors(&report), Vec::<String>::new());
    let mutants = report["files"]["src/store.py"]["mutants"]
        .as_array()
        .expect("the Python store's mutants");
    assert_eq!(mutants.len(), variants.len() - 1);
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
