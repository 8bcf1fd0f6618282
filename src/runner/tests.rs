use super::*;
use crate::error::Faulted;
use crate::external::{FaultKind, ImplementationFault};
use crate::job_store::JobStore;
use crate::suite::{self, Case};
use std::path::Path;
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::Duration;

#[test]
fn each_event_is_one_json_line() {
    let mut out = Vec::new();
    emit(&mut out, &WorkerEvent::Start { test: "t".into() }).unwrap();
    emit(
        &mut out,
        &WorkerEvent::Done(Box::new(TestRun::new("t", Outcome::Pass, Duration::ZERO))),
    )
    .unwrap();
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert_eq!(lines[0], r#"{"event":"start","test":"t"}"#);
    let done: WorkerEvent = serde_json::from_str(lines[1]).unwrap();
    assert!(matches!(done, WorkerEvent::Done(run) if run.outcome == Outcome::Pass));
}

/// Runs `run_variant` on a thread of its own; its answer, or a panic if
/// it does not end within 20 s (it takes milliseconds).
fn run_variant_bounded(command: WorkerCommand, tests: &'static [Case]) -> Vec<TestRun> {
    let (done, ended) = mpsc::channel();
    thread::spawn(move || {
        let tests: Vec<&'static Case> = tests.iter().collect();
        let options = RunOptions {
            timeout: Duration::from_secs(1),
            scratch: std::env::temp_dir(),
            jobs: 1,
            give_up_after_timeouts: None,
        };
        let _ = done.send(run_variant(
            &command,
            &Variant::reference(),
            &tests,
            &options,
        ));
    });
    ended
        .recv_timeout(Duration::from_secs(20))
        .expect("run_variant ends")
}

#[test]
fn a_variant_whose_worker_cannot_start_ends_with_every_test_a_crash() {
    let command = WorkerCommand {
        program: "/no/such/program".into(),
        args: Vec::new(),
    };
    let runs = run_variant_bounded(command, &suite::CASES[..3]);
    let names: Vec<&str> = runs.iter().map(|run| run.test.as_str()).collect();
    let expected: Vec<&str> = suite::CASES[..3].iter().map(|case| case.name).collect();
    assert_eq!(names, expected);
    assert!(
        runs.iter()
            .all(|run| matches!(run.outcome, Outcome::Crash { .. })),
        "{runs:?}"
    );
}

#[test]
fn a_variant_ends_once_its_worker_has_run_every_test() {
    let script = r#"while [ $# -gt 0 ]; do
        case "$1" in --tests) tests="$2"; shift ;; esac
        shift
    done
    for test in $(echo "$tests" | tr ',' ' '); do
        echo "{\"event\":\"start\",\"test\":\"$test\"}"
        echo "{\"event\":\"done\",\"test\":\"$test\",\"outcome\":\"pass\",\"micros\":1}"
    done"#;
    let command = WorkerCommand {
        program: "sh".into(),
        args: vec!["-c".into(), script.into(), "worker".into()],
    };
    let runs = run_variant_bounded(command, &suite::CASES[..2]);
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert!(
        runs.iter().all(|run| run.outcome == Outcome::Pass),
        "{runs:?}"
    );
}

/// The reference store, counting its calls; or, with `stall`, one
/// that sleeps that long at every call.
struct Counting {
    calls: std::sync::atomic::AtomicUsize,
    stall: Option<Duration>,
}

impl JobStore for Counting {
    fn call(
        &self,
        db: &Path,
        operation: &crate::operation::Operation,
    ) -> crate::Result<crate::operation::Answer> {
        self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if let Some(stall) = self.stall {
            thread::sleep(stall);
        }
        crate::variant::Variant::reference()
            .open(DEFAULT_TIMEOUT)
            .call(db, operation)
    }
}

fn counting(stall: Option<Duration>) -> Arc<Counting> {
    Arc::new(Counting {
        calls: Default::default(),
        stall,
    })
}

/// Two lanes share the tests, and the runs come back in suite order.
#[test]
fn lanes_share_the_tests_and_the_runs_come_in_order() {
    let lanes = [counting(None), counting(None)];
    let stores: Vec<Arc<dyn JobStore>> = lanes
        .iter()
        .map(|lane| Arc::clone(lane) as Arc<dyn JobStore>)
        .collect();
    let tests: Vec<&'static Case> = suite::CASES[..12].iter().collect();
    let options = RunOptions {
        scratch: std::env::temp_dir(),
        ..RunOptions::default()
    };
    let mut shown = Vec::new();
    let runs = run_program(&stores, &tests, &options, &mut |run| {
        shown.push(run.test.clone())
    });
    let names: Vec<&str> = tests.iter().map(|case| case.name).collect();
    assert_eq!(shown, names, "handed on in suite order");
    let ran: Vec<&str> = runs.iter().map(|run| run.test.as_str()).collect();
    assert_eq!(ran, names);
    assert!(
        runs.iter().all(|run| run.outcome == Outcome::Pass),
        "{runs:?}"
    );
    for lane in &lanes {
        assert!(
            lane.calls.load(std::sync::atomic::Ordering::SeqCst) > 0,
            "each lane ran tests"
        );
    }
}

/// After the allowed timeouts, counted over all lanes, no more tests
/// run: each is a crash that says why.
#[test]
fn lanes_give_up_together_after_the_allowed_timeouts() {
    let stores: Vec<Arc<dyn JobStore>> = (0..2)
        .map(|_| counting(Some(Duration::from_millis(400))) as Arc<dyn JobStore>)
        .collect();
    let tests: Vec<&'static Case> = suite::CASES[..6].iter().collect();
    let options = RunOptions {
        timeout: Duration::from_millis(100),
        scratch: std::env::temp_dir(),
        jobs: 1,
        give_up_after_timeouts: Some(2),
    };
    let runs = run_program(&stores, &tests, &options, &mut |_| {});
    let timeouts = runs
        .iter()
        .filter(|run| matches!(run.outcome, Outcome::Timeout { .. }))
        .count();
    assert!((2..=3).contains(&timeouts), "{runs:?}");
    let given_up: Vec<&TestRun> = runs
        .iter()
        .filter(|run| matches!(&run.outcome, Outcome::Crash { message } if message.starts_with("not run")))
        .collect();
    assert_eq!(given_up.len(), 6 - timeouts, "{runs:?}");
}

/// A check gives up after the first timeout: a test another lane was
/// running meanwhile, which ran out of time too, is not run, as is every
/// test after; none of them is a crash of its own.
#[test]
fn after_the_first_timeout_every_other_test_is_not_run() {
    let stores: Vec<Arc<dyn JobStore>> = (0..2)
        .map(|_| counting(Some(Duration::from_millis(400))) as Arc<dyn JobStore>)
        .collect();
    let tests: Vec<&'static Case> = suite::CASES[..6].iter().collect();
    let options = RunOptions {
        timeout: Duration::from_millis(100),
        scratch: std::env::temp_dir(),
        jobs: 1,
        give_up_after_timeouts: Some(1),
    };
    let runs = run_program(&stores, &tests, &options, &mut |_| {});
    let timeouts: Vec<&TestRun> = runs
        .iter()
        .filter(|run| matches!(run.outcome, Outcome::Timeout { .. }))
        .collect();
    assert_eq!(timeouts.len(), 1, "{runs:?}");
    let not_run: Vec<&str> = runs
        .iter()
        .filter_map(|run| run.outcome.not_run())
        .collect();
    assert_eq!(not_run.len(), 5, "{runs:?}");
    let first = &timeouts[0].test;
    assert!(
        not_run.iter().all(|why| why.contains(first.as_str())),
        "{not_run:?}"
    );
}

#[test]
fn four_workers_run_per_core() {
    let cores = thread::available_parallelism().map_or(2, usize::from);
    assert_eq!(default_jobs(), 4 * cores);
}

#[test]
fn a_call_gives_up_a_tenth_before_the_test_at_most_half_a_second_before() {
    assert_eq!(
        call_limit(Duration::from_secs(1)),
        Duration::from_millis(900)
    );
    assert_eq!(
        call_limit(Duration::from_secs(10)),
        Duration::from_millis(9500)
    );
    // The explanation of a hang gets a tenth more, at least a second (a
    // program's dumps of its stacks come in it).
    assert_eq!(grace(Duration::from_secs(1)), Duration::from_secs(1));
    assert_eq!(grace(Duration::from_secs(30)), Duration::from_secs(3));
}

#[test]
fn only_a_late_hang_of_a_program_explains_a_timeout() {
    let fault = |kind: FaultKind| ImplementationFault {
        implementation: "./mine".into(),
        kind,
        request: Some("{\"op\":\"init_db\"}".into()),
        stderr: Vec::new(),
    };
    let late = |fault: ImplementationFault| {
        Ok(outcome_of_fault(&Faulted {
            message: fault.to_string(),
            hang: fault.hang(),
        }))
    };
    let hang = hang_explained(late(fault(FaultKind::Hang(
        Duration::from_millis(900),
        Vec::new(),
    ))));
    assert!(
        hang.as_deref()
            .is_some_and(|text| text.contains("gave no answer within 900 ms")),
        "{hang:?}"
    );
    let not_json = late(fault(FaultKind::NotJson("x".into())));
    assert!(matches!(&not_json, Ok(Outcome::Crash { message }) if message.contains("./mine")));
    assert_eq!(hang_explained(not_json), None);
    assert_eq!(
        hang_explained(Ok(Outcome::Timeout {
            limit_ms: 5,
            detail: None
        })),
        None
    );
    assert_eq!(hang_explained(Ok(Outcome::Pass)), None);
    assert_eq!(hang_explained(Err(mpsc::RecvTimeoutError::Timeout)), None);
}
