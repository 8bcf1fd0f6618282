use super::*;
use crate::chaos::history::Returned;
use crate::chaos::plan::Faults;
use crate::operation::Operation;
use crate::subject::Subject;

/// The Python store's workers: a program as itself, which a unit test
/// can start (the compiled stores' workers are the `lab` binary).
fn python_workers() -> Workers {
    let variant = Subject::Python.reference().expect("the Python store");
    let unused = WorkerCommand {
        program: PathBuf::from("the-lab-binary-is-not-used"),
        args: Vec::new(),
    };
    Workers::of(&variant, &unused)
}

/// A run that cannot be made says why, naming what was wrong: a
/// scratch folder that is not there, power cuts asked of a program.
#[test]
fn a_run_that_cannot_be_made_says_why() {
    let workers = python_workers();
    let settings = Settings {
        workers: 1,
        operations: 10,
        seed: 1,
        faults: Faults::none(),
    };
    let missing = Path::new("/no/such/scratch/folder");
    let error = run(&workers, &settings, missing).expect_err("no folder");
    assert!(matches!(error, RunError::Folder { .. }), "{error:?}");
    assert!(
        error
            .to_string()
            .starts_with("cannot make a folder in /no/such/scratch/folder: "),
        "{error}"
    );
    let power = Settings {
        faults: Faults {
            power: true,
            ..Faults::none()
        },
        ..settings
    };
    let scratch = tempfile::tempdir().expect("a folder");
    let error = run(&workers, &power, scratch.path()).expect_err("a program has no disk model");
    assert!(
        matches!(error, RunError::PowerNeedsTheDiskModel),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("leave power out for a program"),
        "{error}"
    );
}

/// A run told to stop is asked after 32 calls, then after twice as
/// many, between rounds; stopped, its record says how many calls it
/// made, and a run of the same settings with that many calls makes the
/// same calls with the same answers.
#[test]
fn a_run_stopped_after_n_calls_is_the_run_of_n_calls() {
    let workers = python_workers();
    let scratch = tempfile::tempdir().expect("a folder");
    let settings = Settings {
        workers: 1,
        operations: 400,
        seed: 5,
        faults: Faults {
            stalls: true,
            restarts: true,
            skew: 2.0,
            ..Faults::none()
        },
    };
    let mut asked = Vec::new();
    let mut stop = |so_far: &Record| {
        asked.push(so_far.calls.len());
        assert_eq!(so_far.settings.operations, so_far.calls.len());
        so_far.calls.len() >= 100
    };
    let stopped = run_until(
        &workers,
        &settings,
        scratch.path(),
        Some(&mut stop),
        None,
        &Watch::hidden(),
    )
    .expect("the run is made");
    assert_eq!(asked.len(), 3, "asked after {asked:?} calls");
    assert!((32..64).contains(&asked[0]), "{asked:?}");
    assert!((64..128).contains(&asked[1]), "{asked:?}");
    assert!(asked[2] >= 128, "{asked:?}");
    let made = stopped.calls.len();
    assert_eq!(made, asked[2]);
    assert_eq!(stopped.settings.operations, made);
    assert!(stopped.rows.is_ok(), "{:?}", stopped.rows);

    let whole = run(
        &workers,
        &Settings {
            operations: made,
            ..settings
        },
        scratch.path(),
    )
    .expect("the run is made");
    let course = |record: &Record| -> Vec<(usize, Operation, Returned)> {
        record
            .calls
            .iter()
            .map(|call| (call.worker, call.operation.clone(), call.returned.clone()))
            .collect()
    };
    assert_eq!(course(&whole), course(&stopped));
    assert_eq!(whole.rows, stopped.rows);
}

/// A run never told to stop goes to its end.
#[test]
fn a_run_that_is_not_stopped_makes_every_call() {
    let scratch = tempfile::tempdir().expect("a folder");
    let settings = Settings {
        workers: 2,
        operations: 120,
        seed: 1,
        faults: Faults::none(),
    };
    let mut asked = 0;
    let mut never = |_: &Record| {
        asked += 1;
        false
    };
    let record = run_until(
        &python_workers(),
        &settings,
        scratch.path(),
        Some(&mut never),
        None,
        &Watch::hidden(),
    )
    .expect("the run is made");
    assert_eq!(record.calls.len(), 120);
    assert_eq!(record.settings.operations, 120);
    assert_eq!(asked, 2, "asked after 32 and 64 calls, not after 120");
}
