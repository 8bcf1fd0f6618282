//! The kill matrices that several tests of this binary read, each built
//! once per run of the binary, by the `lab` binary's workers, with the
//! default run options: every suite test against every variant of each
//! store (the Stryker report's tests and the coverage test), and the same
//! with the tests that cannot run a mutant's change skipped, as `lab
//! matrix` builds it (the coverage test and the analysis).

use lease_lab::matrix::Matrix;
use lease_lab::runner::{RunOptions, WorkerCommand};
use lease_lab::subject::Subject;
use lease_lab::suite::CASES;
use lease_lab::variant::Variant;
use std::sync::OnceLock;

/// The `lab` binary's workers, which run the variants.
pub(crate) fn workers() -> WorkerCommand {
    WorkerCommand {
        program: env!("CARGO_BIN_EXE_lab").into(),
        args: vec!["__worker".into()],
    }
}

/// The Rust store's compiled variants: the reference and its mutants.
pub(crate) fn rust_variants() -> Vec<Variant> {
    Variant::all_compiled()
}

/// The Python store's built-in variants.
pub(crate) fn python_variants() -> Vec<Variant> {
    Subject::Python
        .built_in_variants()
        .expect("the Python store's variants")
}

/// Every suite test against every variant of the Rust store.
pub(crate) fn matrix() -> &'static Matrix {
    static MATRIX: OnceLock<Matrix> = OnceLock::new();
    MATRIX.get_or_init(|| {
        Matrix::build(
            &workers(),
            &rust_variants(),
            CASES.iter().collect(),
            &RunOptions::default(),
        )
    })
}

/// Every suite test against every variant of the Python store.
pub(crate) fn python_matrix() -> &'static Matrix {
    static MATRIX: OnceLock<Matrix> = OnceLock::new();
    MATRIX.get_or_init(|| {
        Matrix::build(
            &workers(),
            &python_variants(),
            CASES.iter().collect(),
            &RunOptions::default(),
        )
    })
}

/// The Rust store's matrix as `lab matrix` builds it: each mutant run only
/// against the tests that call an operation its change reaches.
pub(crate) fn covered_matrix() -> &'static Matrix {
    static MATRIX: OnceLock<Matrix> = OnceLock::new();
    MATRIX.get_or_init(|| {
        Matrix::build_covered(
            &workers(),
            &rust_variants(),
            CASES.iter().collect(),
            &RunOptions::default(),
        )
    })
}

/// The Python store's matrix as `lab matrix --impl python` builds it.
pub(crate) fn python_covered_matrix() -> &'static Matrix {
    static MATRIX: OnceLock<Matrix> = OnceLock::new();
    MATRIX.get_or_init(|| {
        Matrix::build_covered(
            &workers(),
            &python_variants(),
            CASES.iter().collect(),
            &RunOptions::default(),
        )
    })
}
