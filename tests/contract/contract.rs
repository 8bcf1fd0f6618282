//! The contract suite under `cargo test`, against the library's store: the
//! reference, or the mutant chosen with `--features mutant-ID`.
//!
//! One `#[test]` per suite test, with the suite's names, grouped by step.

use lease_lab::suite::{self, Bench};
use lease_lab::variant::ACTIVE;

fn run(name: &str) {
    let case = suite::case(name).expect("the test is in the suite's table");
    let dir = tempfile::tempdir().expect("a temporary folder");
    let bench = Bench::new(&ACTIVE, dir.path().join("jobs.db"));
    if let Err(failure) = (case.run)(&bench) {
        panic!("step {} contract broken: {failure}", case.step);
    }
}

macro_rules! contract_tests {
    ($($module:ident ($step:literal) [$($tag:ident $name:ident),* $(,)?]),* $(,)?) => {
        $(
            mod $module {
                $(
                    #[test]
                    fn $name() {
                        super::run(stringify!($name));
                    }
                )*
            }
        )*
    };
}

lease_lab::for_each_suite_step!(contract_tests);

/// A student writes the steps in order: a step's contract tests must pass
/// on an implementation that has written that step and the ones before it
/// and answers `not-implemented` for every later one, as the starters do.
/// (The tests set up states the later steps would reach, a lease held or a
/// job done, with plain SQL.)
mod written_in_order {
    use lease_lab::error::{ErrorKind, Result, StoreError};
    use lease_lab::job_store::JobStore;
    use lease_lab::operation::{Answer, Operation};
    use lease_lab::suite::{self, Bench, Tag};
    use lease_lab::variant::ACTIVE;
    use std::path::Path;

    /// The store with only steps 1 to `written` written.
    struct WrittenUpTo {
        written: u8,
    }

    impl JobStore for WrittenUpTo {
        fn call(&self, db: &Path, operation: &Operation) -> Result<Answer> {
            if operation.step() > self.written {
                return Err(StoreError::Reported {
                    kind: ErrorKind::NotImplemented,
                    message: format!(
                        "step {}: {} is not written yet",
                        operation.step(),
                        operation.name()
                    ),
                });
            }
            ACTIVE.call(db, operation)
        }
    }

    #[test]
    fn each_step_s_contract_tests_need_only_the_steps_up_to_it() {
        let mut needs_later = Vec::new();
        for case in suite::CASES.iter().filter(|case| case.tag == Tag::Contract) {
            let dir = tempfile::tempdir().expect("a temporary folder");
            let store = WrittenUpTo { written: case.step };
            let bench = Bench::new(&store, dir.path().join("jobs.db"));
            if let Err(failure) = (case.run)(&bench) {
                needs_later.push(format!("step {} {}: {failure}", case.step, case.name));
            }
        }
        assert!(needs_later.is_empty(), "{}", needs_later.join("\n"));
    }
}
