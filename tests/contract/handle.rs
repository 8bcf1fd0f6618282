//! The contract suite against the kept-connection handle ([`Store`] through
//! [`HandleStore`]): every test of `contract.rs` beside it, with the same
//! names, grouped by step, so the handle is held to exactly the path
//! functions' contract.
//!
//! [`Store`]: lease_lab::Store

use lease_lab::handle::HandleStore;
use lease_lab::suite::{self, Bench};

fn run(name: &str) {
    let case = suite::case(name).expect("the test is in the suite's table");
    let dir = tempfile::tempdir().expect("a temporary folder");
    // A fresh adapter per test: no handle survives from another test's file.
    let store = HandleStore::new();
    let bench = Bench::new(&store, dir.path().join("jobs.db"));
    if let Err(failure) = (case.run)(&bench) {
        panic!(
            "step {} contract broken on the handle: {failure}",
            case.step
        );
    }
}

macro_rules! handle_tests {
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

lease_lab::for_each_suite_step!(handle_tests);

/// The adapter really keeps its connection: after the first call, deleting
/// the file's directory entry does not stop the handle (it still holds the
/// open file), while the path function, which opens the path anew, reports
/// that the database is gone. Without this, the suite above could pass on
/// an adapter that quietly called the path functions.
#[test]
fn the_adapter_keeps_one_connection_per_path() {
    use lease_lab::job_store::JobStore;
    let dir = tempfile::tempdir().expect("a temporary folder");
    let db = dir.path().join("jobs.db");
    let store = HandleStore::new();
    store.init_db(&db).expect("init_db");
    assert!(store.enqueue(&db, "j").expect("enqueue through the handle"));
    std::fs::remove_file(&db).expect("unlink the database file");
    assert!(
        store
            .state(&db, "j")
            .expect("state on the kept handle")
            .is_some(),
        "the kept handle should still read the unlinked file"
    );
    assert!(
        matches!(
            lease_lab::state(&db, "j"),
            Err(lease_lab::StoreError::NoDatabase { .. })
        ),
        "the path function opens the path again and finds no file"
    );
}
