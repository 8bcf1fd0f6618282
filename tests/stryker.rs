//! The Stryker report of the real kill matrix is valid against Stryker's own
//! schema (the npm package `mutation-testing-report-schema`, fetched with
//! `npm pack` and kept under the target folder), and means what a viewer
//! will take it to mean.

use lease_lab::matrix::Matrix;
use lease_lab::report::stryker;
use lease_lab::runner::{RunOptions, WorkerCommand};
use lease_lab::suite::CASES;
use lease_lab::variant::{self, Variant};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The schema's package, pinned to the major version whose reports are
/// schema version 2.
const SCHEMA_PACKAGE: &str = "mutation-testing-report-schema@3";

/// Where the package keeps its schema.
const SCHEMA_FILE: &str = "package/dist/src/mutation-testing-report-schema.json";

/// The schema, from the cache under the target folder, or fetched into it.
fn schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let folder = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("stryker-schema");
        let file = folder.join(SCHEMA_FILE);
        if !file.exists() {
            fetch_schema(&folder);
        }
        let text = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        serde_json::from_str(&text).expect("the schema is JSON")
    })
}

fn fetch_schema(folder: &Path) {
    std::fs::create_dir_all(folder).expect("the target folder is writable");
    let packed = Command::new("npm")
        .args(["pack", "--silent", SCHEMA_PACKAGE])
        .current_dir(folder)
        .output()
        .unwrap_or_else(|e| {
            panic!("this test needs npm to fetch Stryker's report schema ({SCHEMA_PACKAGE}), and npm cannot be run: {e}; install it (apt-get install -y npm)")
        });
    assert!(
        packed.status.success(),
        "npm pack {SCHEMA_PACKAGE} failed: {}",
        String::from_utf8_lossy(&packed.stderr)
    );
    let tarball = String::from_utf8_lossy(&packed.stdout)
        .lines()
        .last()
        .expect("npm pack names the tarball it wrote")
        .trim()
        .to_string();
    let extracted = Command::new("tar")
        .args(["xzf", &tarball, SCHEMA_FILE])
        .current_dir(folder)
        .status()
        .expect("tar runs");
    assert!(
        extracted.success(),
        "cannot extract {SCHEMA_FILE} from {tarball}"
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

/// Every suite test against every variant, run by the `lab` binary's workers.
fn matrix() -> &'static Matrix {
    static MATRIX: OnceLock<Matrix> = OnceLock::new();
    MATRIX.get_or_init(|| {
        let command = WorkerCommand {
            program: env!("CARGO_BIN_EXE_lab").into(),
            args: vec!["__worker".into()],
        };
        Matrix::build(
            &command,
            &Variant::all(),
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
            placed == variant::mutant(id).unwrap().source,
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
