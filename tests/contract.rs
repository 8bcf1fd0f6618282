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
