use super::*;
use crate::course::check::StepResult;
use crate::external::ImplCommand;
use crate::frame::{Frame, Raised};
use crate::suite;

fn run(test: &str, outcome: TestOutcome) -> TestRun {
    TestRun::new(test, outcome, Duration::ZERO)
}

fn timeout() -> TestOutcome {
    TestOutcome::Timeout {
        limit_ms: 2000,
        detail: None,
    }
}

fn crash(message: &str) -> TestOutcome {
    TestOutcome::Crash {
        message: message.into(),
    }
}

#[test]
fn a_hang_or_a_crash_stops_a_check_and_a_test_not_run_or_failed_does_not() {
    assert!(stops(&run("t", timeout())));
    assert!(stops(&run("t", crash("exited with code 1"))));
    assert!(!stops(&run(
        "t",
        crash(&format!("{NOT_RUN}a step before hangs"))
    )));
    assert!(!stops(&run("t", TestOutcome::Pass)));
    let failed = TestOutcome::Fail {
        check: "c".into(),
        expected: "e".into(),
        actual: "a".into(),
        state: None,
    };
    assert!(!stops(&run("t", failed)));
}

/// The stop is the first of the step's tests in suite order that hung or
/// crashed, whichever ended first: the same run after run.
#[test]
fn the_stop_is_the_first_test_in_suite_order_that_hung_or_crashed() {
    let tests: Vec<&'static Case> = suite::CASES.iter().filter(|case| case.step == 4).collect();
    let (first, second) = (tests[1].name, tests[3].name);
    let unanswered = Unanswered {
        operation: "claim".into(),
        hung: true,
        waited_ms: Some(1800),
        hung_in: Vec::new(),
    };
    let runs = vec![
        run(tests[0].name, TestOutcome::Pass),
        run(second, crash("exited")),
        run(first, timeout()).with_unanswered(Some(unanswered.clone())),
    ];
    let stop = stop_of(&runs, &tests).expect("a stop");
    assert_eq!(
        (stop.test, stop.hung, stop.unanswered),
        (first, true, Some(unanswered))
    );
    assert_eq!(stop_of(&runs[..1], &tests), None);
}

#[test]
fn the_steps_after_a_stop_are_not_run_and_say_which_step_stopped_them() {
    let tests: Vec<&'static Case> = suite::CASES.iter().filter(|case| case.step == 6).collect();
    let runs = not_run_after(&tests, 4, true);
    assert_eq!(runs.len(), tests.len());
    for run in &runs {
        assert_eq!(
            run.outcome.not_run(),
            Some("step 4 hangs: the check stopped there")
        );
    }
    assert_eq!(
        not_run_after(&tests, 2, false)[0].outcome.not_run(),
        Some("step 2 crashes: the check stopped there")
    );
    let stop = Stop {
        test: tests[0].name,
        hung: false,
        unanswered: None,
        outcome: crash("exited"),
    };
    assert_eq!(Halt::Here(stop).verb(), "crashes");
    assert_eq!(
        Halt::Earlier {
            step: 4,
            hung: true
        }
        .verb(),
        "hangs"
    );
}

#[test]
fn each_step_is_asked_its_own_operation() {
    for step in 1..=8u8 {
        let operation = operation_of(step).expect("an operation");
        assert_eq!(
            operation.name(),
            crate::operation::NAMES[usize::from(step) - 1]
        );
    }
    assert!(operation_of(0).is_none() && operation_of(9).is_none());
}

/// A program that answers `not-implemented` to anything is not written;
/// one that answers, or says nothing in time, is.
#[test]
fn a_step_asked_on_its_own_says_whether_it_is_written() {
    let scratch = tempfile::tempdir().unwrap();
    let program = |reply: &str| {
        let script = format!(
            "echo '{{\"protocol\":\"lease-lab\",\"version\":1,\"name\":\"s\"}}'; while read line; do {reply}; done"
        );
        Variant::program(
            "yours",
            ImplCommand {
                argv: vec!["sh".into(), "-c".into(), script],
                dir: None,
                env: Vec::new(),
            },
        )
    };
    let stub = program(
        r#"echo '{"error":"not-implemented","message":"step 5: renew is not written yet"}'"#,
    );
    assert_eq!(
        not_written(&stub, 5, scratch.path()).as_deref(),
        Some("step 5: renew is not written yet")
    );
    let written = program(r#"echo '{"ok":false}'"#);
    assert_eq!(not_written(&written, 5, scratch.path()), None);
    let silent = program("sleep 5");
    assert_eq!(not_written(&silent, 5, scratch.path()), None);
    assert_eq!(not_written(&Variant::reference(), 5, scratch.path()), None);
}

/// A step whose failures all meet an error an earlier step showed (the
/// same words, raised at the same place) repeats it; one with a failure
/// of its own does not.
#[test]
fn a_step_repeats_an_earlier_error_only_when_every_failure_meets_it() {
    let error = "error other: NameError: name 'jobid' is not defined";
    let raised_at = |line: u64| Raised {
        error: error.into(),
        frames: vec![Frame {
            file: "store.py".into(),
            line,
            function: Some("enqueue".into()),
            code: None,
        }],
    };
    let failing = |step: u8, tests: &[(&'static str, &str, u64)]| {
        let failures = tests
            .iter()
            .map(|(name, actual, _)| {
                (
                    *name,
                    TestOutcome::Fail {
                        check: "enqueue(\"j\")".into(),
                        expected: "an answer".into(),
                        actual: (*actual).into(),
                        state: None,
                    },
                )
            })
            .collect();
        StepResult {
            raised: tests
                .iter()
                .map(|(name, _, line)| (*name, vec![raised_at(*line)]))
                .collect(),
            ..StepResult::ran(step, tests.len(), failures)
        }
    };
    let two = failing(2, &[("a", error, 201)]);
    let three = failing(3, &[("b", error, 201), ("c", error, 201)]);
    assert_eq!(repeats(&three, std::slice::from_ref(&two)), Some(2));
    let elsewhere = failing(3, &[("b", error, 202)]);
    assert_eq!(repeats(&elsewhere, std::slice::from_ref(&two)), None);
    let own = failing(
        3,
        &[("b", error, 201), ("c", "error other: TypeError", 201)],
    );
    assert_eq!(repeats(&own, std::slice::from_ref(&two)), None);
    assert_eq!(repeats(&two, &[]), None);
}
