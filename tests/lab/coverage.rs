//! The kill matrix's skipping is sound: a mutant run only against the
//! tests that call an operation its change reaches is caught by the same
//! tests, and given the same status, as when every test runs against it.
//!
//! Both matrices of each store are the ones the other tests of this binary
//! read (`crate::matrices`), each built once.

use crate::matrices::{covered_matrix, matrix, python_covered_matrix, python_matrix};
use lease_lab::matrix::{Matrix, Verdict};
use lease_lab::suite::CASES;

/// Every cell's verdict (caught or not) and every mutant's status agree
/// between the matrix with skipping, `covered`, and the one with every
/// test, `every`, of the same variants, and the skipped cells are the
/// reference's runs, marked as not covered.
fn same_verdicts(every: &Matrix, covered: &Matrix) {
    assert_eq!(every.not_covered(), 0);
    assert!(
        covered.not_covered() > covered.runs.len() * CASES.len() / 4,
        "most tests call few operations: {} cells skipped",
        covered.not_covered()
    );
    let reference = covered.reference().expect("the reference ran");
    assert_eq!(every.runs.len(), covered.runs.len(), "the same variants");
    for (all, some) in every.runs.iter().zip(&covered.runs) {
        assert_eq!(all.variant, some.variant);
        assert_eq!(
            all.runs.len(),
            some.runs.len(),
            "{}: one cell per test",
            all.variant.id
        );
        for case in CASES {
            let caught = |matrix: &Matrix, run| matrix.verdict(case, run) == Some(Verdict::Fail);
            assert_eq!(
                caught(every, all),
                caught(covered, some),
                "{} × {}: {:?} with every test, {:?} with skipping",
                all.variant.id,
                case.name,
                all.outcome(case.name),
                some.outcome(case.name)
            );
            let cell = some.test_run(case.name).unwrap();
            if cell.not_covered {
                assert_eq!(
                    Some(&cell.outcome),
                    reference.outcome(case.name),
                    "{} × {}",
                    all.variant.id,
                    case.name
                );
                assert!(!covered.covering(some).contains(&case.name));
            }
        }
    }
    assert_eq!(every.summaries(), covered.summaries());
    assert_eq!(every.problems(), covered.problems());
}

#[test]
fn skipping_the_tests_that_cannot_run_a_rust_mutant_changes_no_verdict() {
    same_verdicts(matrix(), covered_matrix());
}

#[test]
fn skipping_the_tests_that_cannot_run_a_python_mutant_changes_no_verdict() {
    same_verdicts(python_matrix(), python_covered_matrix());
}
