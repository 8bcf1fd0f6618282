//! The runner contains what goes wrong: a failing, panicking or hanging
//! test, and a worker process that dies or stops answering.

use lease_lab::outcome::Outcome;
use lease_lab::runner::{self, RunOptions, WorkerCommand, WorkerEvent};
use lease_lab::suite::{self, Bench, Case, Checked, Failure, Tag};
use lease_lab::variant::Variant;
use std::time::{Duration, Instant};

fn passes(_: &Bench) -> Checked {
    Ok(())
}

fn fails(_: &Bench) -> Checked {
    Err(Failure {
        check: "a check".into(),
        expected: "this".into(),
        actual: "that".into(),
        state: None,
    })
}

fn panics(_: &Bench) -> Checked {
    panic!("the variant blew up")
}

fn hangs(_: &Bench) -> Checked {
    std::thread::sleep(Duration::from_secs(3600));
    Ok(())
}

fn uses_the_database(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    suite::expect_eq(
        "the job's fence",
        bench.row("j")?.map(|row| row.fence),
        Some(lease_lab::Fence(0)),
    )
}

static PASSES: Case = Case {
    name: "passes",
    step: 1,
    tag: Tag::Contract,
    run: passes,
};
static FAILS: Case = Case {
    name: "fails",
    step: 1,
    tag: Tag::Contract,
    run: fails,
};
static PANICS: Case = Case {
    name: "panics",
    step: 1,
    tag: Tag::Contract,
    run: panics,
};
static HANGS: Case = Case {
    name: "hangs",
    step: 1,
    tag: Tag::Contract,
    run: hangs,
};
static USES_THE_DATABASE: Case = Case {
    name: "uses_the_database",
    step: 1,
    tag: Tag::Contract,
    run: uses_the_database,
};

fn scratch() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary folder")
}

#[test]
fn a_passing_test_passes_on_a_fresh_database() {
    let folder = scratch();
    let run = runner::run_case(
        &USES_THE_DATABASE,
        Variant::reference().open(Duration::from_secs(10)),
        folder.path(),
        Duration::from_secs(10),
    );
    assert_eq!(run.outcome, Outcome::Pass);
    assert_eq!(run.test, "uses_the_database");
    let left: Vec<_> = std::fs::read_dir(folder.path()).unwrap().collect();
    assert!(left.is_empty(), "the test's database is removed afterwards");
}

#[test]
fn a_failing_check_is_a_fail_with_its_reason() {
    let folder = scratch();
    let run = runner::run_case(
        &FAILS,
        Variant::reference().open(Duration::from_secs(10)),
        folder.path(),
        Duration::from_secs(10),
    );
    assert_eq!(
        run.outcome,
        Outcome::Fail {
            check: "a check".into(),
            expected: "this".into(),
            actual: "that".into(),
            state: None,
        }
    );
    assert_eq!(
        run.outcome.reason().unwrap(),
        "a check: expected this, got that"
    );
}

#[test]
fn a_panic_is_a_crash_with_its_message() {
    let folder = scratch();
    let run = runner::run_case(
        &PANICS,
        Variant::reference().open(Duration::from_secs(10)),
        folder.path(),
        Duration::from_secs(10),
    );
    match run.outcome {
        Outcome::Crash { message } => assert!(message.contains("the variant blew up"), "{message}"),
        other => panic!("expected a crash, got {other:?}"),
    }
}

#[test]
fn a_hanging_test_is_a_timeout_and_does_not_hold_the_caller() {
    let folder = scratch();
    let started = Instant::now();
    let run = runner::run_case(
        &HANGS,
        Variant::reference().open(Duration::from_secs(10)),
        folder.path(),
        Duration::from_millis(200),
    );
    assert_eq!(
        run.outcome,
        Outcome::Timeout {
            limit_ms: 200,
            detail: None
        }
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn a_scratch_folder_that_cannot_be_used_is_reported() {
    let run = runner::run_case(
        &PASSES,
        Variant::reference().open(Duration::from_secs(10)),
        std::path::Path::new("/no/such/folder/for/lease-lab"),
        Duration::from_secs(1),
    );
    match run.outcome {
        Outcome::Crash { message } => assert!(message.contains("/no/such/folder"), "{message}"),
        other => panic!("expected a crash, got {other:?}"),
    }
}

#[test]
fn a_worker_reports_each_start_and_end_as_json_lines() {
    let folder = scratch();
    let options = RunOptions {
        timeout: Duration::from_secs(10),
        scratch: folder.path().to_path_buf(),
        jobs: 1,
        give_up_after_timeouts: None,
    };
    let mut out = Vec::new();
    runner::work(
        Variant::reference().open(Duration::from_secs(10)),
        &[&PASSES, &FAILS],
        &options,
        &mut out,
    )
    .unwrap();
    let events: Vec<WorkerEvent> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(events.len(), 4);
    assert!(matches!(&events[0], WorkerEvent::Start { test } if test == "passes"));
    assert!(matches!(&events[1], WorkerEvent::Done(run) if run.outcome == Outcome::Pass));
    assert!(matches!(&events[2], WorkerEvent::Start { test } if test == "fails"));
    assert!(matches!(&events[3], WorkerEvent::Done(run) if run.outcome.label() == "fail"));
}

/// A stand-in worker: a shell script that answers like `lab __worker`,
/// but dies or hangs when asked to run a test whose name says so.
fn scripted_worker() -> WorkerCommand {
    let script = r#"
        tests=""
        while [ $# -gt 0 ]; do
            case "$1" in --tests) tests="$2"; shift ;; esac
            shift
        done
        for test in $(echo "$tests" | tr ',' ' '); do
            echo "{\"event\":\"start\",\"test\":\"$test\"}"
            case "$test" in
                dies*) echo "the worker is going down" >&2; kill -9 $$ ;;
                stalls*) sleep 30 ;;
            esac
            echo "{\"event\":\"done\",\"test\":\"$test\",\"outcome\":\"pass\",\"micros\":1}"
        done
    "#;
    WorkerCommand {
        program: "sh".into(),
        args: vec!["-c".into(), script.into(), "worker".into()],
    }
}

static DIES: Case = Case {
    name: "dies_here",
    step: 1,
    tag: Tag::Contract,
    run: passes,
};
static STALLS: Case = Case {
    name: "stalls_here",
    step: 1,
    tag: Tag::Contract,
    run: passes,
};
static AFTER: Case = Case {
    name: "after",
    step: 2,
    tag: Tag::Contract,
    run: passes,
};

#[test]
fn a_worker_that_dies_costs_only_the_test_it_was_running() {
    let options = RunOptions {
        timeout: Duration::from_secs(5),
        scratch: std::env::temp_dir(),
        jobs: 1,
        give_up_after_timeouts: None,
    };
    let runs = runner::run_variant(
        &scripted_worker(),
        &Variant::reference(),
        &[&PASSES, &DIES, &AFTER],
        &options,
    );
    let names: Vec<&str> = runs.iter().map(|run| run.test.as_str()).collect();
    assert_eq!(names, ["passes", "dies_here", "after"]);
    assert_eq!(runs[0].outcome, Outcome::Pass);
    match &runs[1].outcome {
        Outcome::Crash { message } => {
            assert!(message.contains("killed by signal 9"), "{message}");
            assert!(message.contains("the worker is going down"), "{message}");
        }
        other => panic!("expected a crash, got {other:?}"),
    }
    assert_eq!(runs[2].outcome, Outcome::Pass, "a new worker carries on");
}

#[test]
fn a_worker_that_stops_answering_is_killed_and_its_test_timed_out() {
    let options = RunOptions {
        timeout: Duration::from_millis(300),
        scratch: std::env::temp_dir(),
        jobs: 1,
        give_up_after_timeouts: None,
    };
    let started = Instant::now();
    let runs = runner::run_variant(
        &scripted_worker(),
        &Variant::reference(),
        &[&STALLS, &AFTER],
        &options,
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
    assert!(
        matches!(runs[0].outcome, Outcome::Timeout { .. }),
        "{:?}",
        runs[0]
    );
    assert_eq!(runs[1].outcome, Outcome::Pass);
}

#[test]
fn a_worker_that_cannot_start_crashes_every_test_with_the_reason() {
    let command = WorkerCommand {
        program: "/no/such/program".into(),
        args: Vec::new(),
    };
    let options = RunOptions {
        timeout: Duration::from_secs(1),
        scratch: std::env::temp_dir(),
        jobs: 1,
        give_up_after_timeouts: None,
    };
    let runs = runner::run_variant(
        &command,
        &Variant::reference(),
        &[&PASSES, &AFTER],
        &options,
    );
    assert_eq!(runs.len(), 2);
    for run in runs {
        match run.outcome {
            Outcome::Crash { message } => {
                assert!(message.contains("cannot start a worker"), "{message}")
            }
            other => panic!("expected a crash, got {other:?}"),
        }
    }
}

#[test]
fn run_all_keeps_the_variants_in_the_order_given() {
    let variants: Vec<Variant> = Variant::all_compiled().into_iter().take(4).collect();
    let options = RunOptions {
        timeout: Duration::from_secs(5),
        scratch: std::env::temp_dir(),
        jobs: 3,
        give_up_after_timeouts: None,
    };
    let runs = runner::run_all(&scripted_worker(), &variants, &[&PASSES, &AFTER], &options);
    let ids: Vec<&str> = runs.iter().map(|run| run.variant.id.as_str()).collect();
    let expected: Vec<&str> = variants.iter().map(|variant| variant.id.as_str()).collect();
    assert_eq!(ids, expected);
    assert!(runs.iter().all(|run| run.runs.len() == 2));
}

#[test]
fn the_real_worker_runs_the_suite_against_a_mutant() {
    let command = WorkerCommand {
        program: env!("CARGO_BIN_EXE_lab").into(),
        args: vec!["__worker".into()],
    };
    let options = RunOptions::default();
    let mutant = Variant::find("06").expect("mutant 06 is compiled in");
    let case = suite::case("second_completion_is_refused_and_keeps_the_result").unwrap();
    let runs = runner::run_variant(&command, &mutant, &[case, &suite::CASES[0]], &options);
    assert_eq!(runs[0].outcome.label(), "fail");
    assert_eq!(runs[1].outcome, Outcome::Pass);
}

#[test]
fn the_default_scratch_folder_can_be_chosen_by_variable() {
    // Read in a child process: the variable must not leak into other tests.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_lab"))
        .args([
            "run",
            "reference",
            "--color",
            "never",
            "--timeout-ms",
            "10000",
        ])
        .env("LEASE_LAB_SCRATCH", "/no/such/scratch")
        .output()
        .unwrap();
    let shown = String::from_utf8(output.stdout).unwrap();
    assert!(
        shown.contains("cannot make a temporary folder in /no/such/scratch"),
        "{shown}"
    );
}
