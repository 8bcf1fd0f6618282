//! Verdicts that never depend on luck: every cell of the kill matrix, and
//! every test's verdict on the racing mutants 08b (the Rust store) and
//! py08b (the Python store), is the same run after run.
//!
//! The racing tests queue their claims behind a held write lock until all
//! of them wait (see `src/race.rs`), so a check-then-act claim is caught on
//! every run, not on some.

use crate::common::run_bounded;
use serde_json::Value;
use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

/// Every cell of one run of the matrix: (variant, test) → outcome.
type Cells = BTreeMap<(String, String), String>;

/// The longest one run of the whole matrix may take: a bound that only
/// proves it ends (a run takes seconds).
const ONE_RUN: Duration = Duration::from_secs(600);

/// The standard output of `lab ARGS --color never`, run here, which must
/// succeed.
fn lab(args: &[&str]) -> String {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lab"));
    command
        .args(args)
        .args(["--color", "never"])
        .env_remove("NO_COLOR");
    let ran = run_bounded(&mut command, ONE_RUN);
    ran.assert_success();
    ran.stdout
}

fn matrix_cells() -> Cells {
    let matrix: Value = serde_json::from_str(&lab(&["matrix", "--format", "json"])).unwrap();
    let mut cells = Cells::new();
    for variant in matrix["variants"].as_array().unwrap() {
        let id = variant["id"].as_str().unwrap().to_string();
        for (test, outcome) in variant["outcomes"].as_object().unwrap() {
            cells.insert((id.clone(), test.clone()), outcome.as_str().unwrap().into());
        }
    }
    cells
}

/// The verdict lines of `lab run ARGS` (a racing mutant): each test with
/// pass, FAIL, TIME or CRASH.
fn race_verdicts(args: &[&str]) -> Vec<String> {
    lab(&[&["run"], args].concat())
        .lines()
        .filter(|line| {
            let word = line.split_whitespace().next().unwrap_or("");
            ["pass", "FAIL", "TIME", "CRASH"].contains(&word)
        })
        .map(|line| line.trim().to_string())
        .collect()
}

const RUNS: usize = 20;

#[test]
#[ignore = "runs lab run 08b, lab run py08b and the whole kill matrix 20 times each (a few minutes); .ci/run runs it"]
fn twenty_runs_give_the_same_outcome_in_every_cell() {
    for race in [&["08b"][..], &["py08b", "--impl", "python"]] {
        let first = race_verdicts(race);
        assert!(
            first.iter().filter(|line| line.starts_with("FAIL")).count() >= 4,
            "{race:?} is caught by the racing tests: {first:#?}"
        );
        for run in 2..=RUNS {
            assert_eq!(
                race_verdicts(race),
                first,
                "lab run {race:?}, run {run} of {RUNS}"
            );
        }
    }
    let first = matrix_cells();
    assert!(first.len() > 2000, "{} cells", first.len());
    for run in 2..=RUNS {
        let cells = matrix_cells();
        let changed: Vec<_> = cells
            .iter()
            .filter(|(cell, outcome)| first.get(*cell) != Some(outcome))
            .collect();
        assert!(
            changed.is_empty(),
            "run {run} of {RUNS} differs from the first in {} cells: {changed:?}",
            changed.len()
        );
        assert_eq!(cells.len(), first.len());
    }
}
