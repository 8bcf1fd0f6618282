//! What happened when a test ran against a variant, and what that means for
//! a mutant.

use crate::child_process::StderrWindow;
use crate::suite::{Failure, RowState};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// How the message of a test that was not run begins (see
/// [`Outcome::not_run`]).
pub const NOT_RUN: &str = "not run: ";

/// The outcome of one suite test against one variant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "lowercase")]
pub enum Outcome {
    /// Every check held.
    Pass,
    /// A check did not hold: the contract is broken, and this says where.
    Fail {
        /// What was checked.
        check: String,
        /// What the contract expects.
        expected: String,
        /// What the variant did.
        actual: String,
        /// When the test read the stored rows: how they differ from the
        /// contract's, or what a refused call left behind.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        state: Option<RowState>,
    },
    /// The test did not finish within the time limit.
    Timeout {
        /// The limit it ran out of, in milliseconds.
        limit_ms: u64,
        /// What was waited for, when the lab knows: the request a program
        /// left unanswered and the last lines of its standard error.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
    /// The test panicked or its process died: the variant crashed.
    Crash {
        /// The panic message or how the process ended.
        message: String,
    },
}

impl Outcome {
    /// The outcome of a test that returned.
    pub fn from_checked(checked: Result<(), Failure>) -> Outcome {
        match checked {
            Ok(()) => Outcome::Pass,
            Err(failure) => Outcome::Fail {
                check: failure.check,
                expected: failure.expected,
                actual: failure.actual,
                state: failure.state,
            },
        }
    }

    /// `pass`, `fail`, `timeout` or `crash`.
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail { .. } => "fail",
            Outcome::Timeout { .. } => "timeout",
            Outcome::Crash { .. } => "crash",
        }
    }

    /// What the implementation said when a call answered that it is not
    /// written yet (the `not-implemented` error of the lab's protocol,
    /// which the starters answer from their stubs), if that is why the
    /// test failed.
    pub fn not_implemented(&self) -> Option<&str> {
        match self {
            Outcome::Fail { actual, .. } => actual
                .strip_prefix("error not-implemented")
                .map(|message| message.trim_start_matches(':').trim()),
            _ => None,
        }
    }

    /// Why the test was not run, if it was not: a check stops at the first
    /// test a program runs out of time in (see
    /// [`crate::runner::RunOptions::give_up_after_timeouts`]), and the tests
    /// it did not run, or stopped in the middle, say so in a crash whose
    /// message begins with [`NOT_RUN`].
    pub fn not_run(&self) -> Option<&str> {
        match self {
            Outcome::Crash { message } => message.strip_prefix(NOT_RUN),
            _ => None,
        }
    }

    /// Whether the test noticed something wrong (any outcome but a pass).
    pub fn catches(&self) -> bool {
        !matches!(self, Outcome::Pass)
    }

    /// One line saying why the test did not pass, for reports.
    pub fn reason(&self) -> Option<String> {
        match self {
            Outcome::Pass => None,
            Outcome::Fail {
                check,
                state: Some(RowState::Differs(diff)),
                ..
            } if !diff.is_empty() => Some(format!("{check}: {diff}")),
            Outcome::Fail {
                check,
                expected,
                actual,
                state,
            } => Some(format!(
                "{check}: expected {}, got {}{}",
                one_line(expected),
                one_line(actual),
                state
                    .as_ref()
                    .map_or(String::new(), |state| format!("; stored: {state}"))
            )),
            Outcome::Timeout {
                limit_ms,
                detail: None,
            } => Some(format!("did not finish within {limit_ms} ms")),
            Outcome::Timeout {
                detail: Some(detail),
                ..
            } => Some(format!("timed out: {}", flat(detail))),
            Outcome::Crash { message } => Some(format!("crashed: {}", flat(message))),
        }
    }
}

/// A value spread over lines (stored rows, one per line) on one line, the
/// lines joined by `; `.
fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

/// A message of several lines (a program's fault, with the lines of its
/// standard error under the first) on one line: its first line, then the
/// others joined by ` | `.
fn flat(message: &str) -> String {
    match message.split_once('\n') {
        None => message.to_string(),
        Some((first, rest)) => {
            let lines: Vec<&str> = rest.lines().map(str::trim).collect();
            format!("{first} {}", lines.join(" | "))
        }
    }
}

/// One test's outcome against one variant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestRun {
    /// The suite test's name.
    pub test: String,
    /// What happened.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// How long it took, in microseconds.
    pub micros: u64,
    /// The last lines an implementation in another program wrote on its
    /// standard error during the test.
    #[serde(default, skip_serializing_if = "StderrWindow::is_empty")]
    pub stderr: StderrWindow,
    /// The errors with frames (see [`crate::frame::Raised`]) that an
    /// implementation in another program answered during the test.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub raised: Vec<crate::frame::Raised>,
    /// The call the implementation left unanswered during the test (it
    /// hung, or ended in the middle of it), when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unanswered: Option<crate::frame::Unanswered>,
    /// The operations the test called on the store, by name, each once,
    /// in [`NAMES`](crate::operation::NAMES) order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub operations: Vec<String>,
    /// The test was not run against this variant: it calls none of the
    /// operations the mutant's change reaches, so it runs no mutated code,
    /// and its outcome is the reference's (see [`TestRun::not_covered`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub not_covered: bool,
}

impl TestRun {
    /// A run of `test` that ended with `outcome` after `elapsed`.
    pub fn new(test: &str, outcome: Outcome, elapsed: Duration) -> TestRun {
        TestRun {
            test: test.to_string(),
            outcome,
            micros: u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX),
            stderr: StderrWindow::default(),
            raised: Vec::new(),
            unanswered: None,
            operations: Vec::new(),
            not_covered: false,
        }
    }

    /// The cell of a variant the test was not run against, because it
    /// calls none of the operations the variant's change reaches: the
    /// outcome of `reference`, the test's run against the reference, taken
    /// over, in no time.
    pub fn not_covered(reference: &TestRun) -> TestRun {
        TestRun {
            micros: 0,
            stderr: StderrWindow::default(),
            raised: Vec::new(),
            not_covered: true,
            ..reference.clone()
        }
    }

    /// The run, with the operations the test called.
    pub fn with_operations(self, operations: Vec<String>) -> TestRun {
        TestRun { operations, ..self }
    }

    /// The run, with what the program wrote on standard error during it.
    pub fn with_stderr(self, stderr: StderrWindow) -> TestRun {
        TestRun { stderr, ..self }
    }

    /// The run, with the errors with frames the program answered during it.
    pub fn with_raised(self, raised: Vec<crate::frame::Raised>) -> TestRun {
        TestRun { raised, ..self }
    }

    /// The run, with the call the program left unanswered during it.
    pub fn with_unanswered(self, unanswered: Option<crate::frame::Unanswered>) -> TestRun {
        TestRun { unanswered, ..self }
    }
}

/// What the suite made of a mutant, in cargo-mutants' and Stryker's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MutantStatus {
    /// At least one test failed on it.
    Killed,
    /// No test failed, but at least one ran out of time.
    Timeout,
    /// No test failed or timed out, but at least one crashed.
    Crashed,
    /// Every test passed: the suite did not notice the change.
    Survived,
}

impl MutantStatus {
    /// The status that a set of outcomes gives a mutant.
    pub fn of<'a>(outcomes: impl IntoIterator<Item = &'a Outcome>) -> MutantStatus {
        let (mut failed, mut timed_out, mut crashed) = (false, false, false);
        for outcome in outcomes {
            match outcome {
                Outcome::Pass => {}
                Outcome::Fail { .. } => failed = true,
                Outcome::Timeout { .. } => timed_out = true,
                Outcome::Crash { .. } => crashed = true,
            }
        }
        if failed {
            MutantStatus::Killed
        } else if timed_out {
            MutantStatus::Timeout
        } else if crashed {
            MutantStatus::Crashed
        } else {
            MutantStatus::Survived
        }
    }

    /// Whether the suite noticed the mutant at all.
    pub fn detected(self) -> bool {
        self != MutantStatus::Survived
    }

    /// The status as a word.
    pub fn label(self) -> &'static str {
        match self {
            MutantStatus::Killed => "killed",
            MutantStatus::Timeout => "timeout",
            MutantStatus::Crashed => "crashed",
            MutantStatus::Survived => "survived",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn outcomes_have_labels_and_reasons() {
        let fail = Outcome::Fail {
            check: "c".into(),
            expected: "row j: owner A\n  row k: owner B\n".into(),
            actual: "none".into(),
            state: None,
        };
        assert_eq!(fail.label(), "fail");
        assert_eq!(
            fail.reason().unwrap(),
            "c: expected row j: owner A; row k: owner B, got none"
        );
        assert_eq!(Outcome::Pass.label(), "pass");
        assert_eq!(Outcome::Pass.reason(), None);
        assert!(!Outcome::Pass.catches());
        let timeout = Outcome::Timeout {
            limit_ms: 5,
            detail: None,
        };
        assert_eq!(
            (timeout.label(), timeout.reason().unwrap()),
            ("timeout", "did not finish within 5 ms".to_string())
        );
        let crash = Outcome::Crash {
            message: "boom".into(),
        };
        assert_eq!(
            (crash.label(), crash.reason().unwrap()),
            ("crash", "crashed: boom".to_string())
        );
        let traced = Outcome::Crash {
            message: "it ended; its standard error ended with:\n    File x\n      ^".into(),
        };
        assert_eq!(
            traced.reason().unwrap(),
            "crashed: it ended; its standard error ended with: File x | ^"
        );
        assert!(fail.catches() && timeout.catches() && crash.catches());
        let run = TestRun::new("t", Outcome::Pass, Duration::from_micros(1500));
        assert_eq!(run.micros, 1500);
        let written = StderrWindow {
            last: vec!["trace".into()],
            earlier: 2,
        };
        assert_eq!(run.clone().with_stderr(written.clone()).stderr, written);
        assert_eq!(
            serde_json::to_value(&run).unwrap(),
            json!({"test": "t", "outcome": "pass", "micros": 1500})
        );
        let called = run.with_operations(vec!["init_db".into(), "claim".into()]);
        let json = serde_json::to_value(&called).unwrap();
        assert_eq!(json["operations"], json!(["init_db", "claim"]));
        assert_eq!(serde_json::from_value::<TestRun>(json).unwrap(), called);
        // What the reference's program wrote is not what the variant wrote:
        // a cell taken over from the reference carries no standard error.
        let traced = called.clone().with_stderr(written);
        let skipped = TestRun::not_covered(&traced);
        assert!(skipped.not_covered && !called.not_covered);
        assert_eq!(
            (skipped.micros, &skipped.outcome, &skipped.operations),
            (0, &called.outcome, &called.operations)
        );
        assert!(skipped.stderr.is_empty(), "{:?}", skipped.stderr);
        let json = serde_json::to_value(&skipped).unwrap();
        assert_eq!(json["not_covered"], json!(true));
        assert_eq!(serde_json::from_value::<TestRun>(json).unwrap(), skipped);
    }

    /// A failure that read the stored rows gives them in its reason: a
    /// row check as its one-line difference alone, an answer's check with
    /// the rows the call left behind after it; a test's JSON carries them.
    #[test]
    fn a_reason_shows_the_stored_rows_a_test_read() {
        let fail = |state: Option<RowState>| Outcome::Fail {
            check: "c".into(),
            expected: "false".into(),
            actual: "true".into(),
            state,
        };
        let differs = fail(Some(RowState::Differs("\"j\": fence 1 -> 0".into())));
        assert_eq!(differs.reason().unwrap(), "c: \"j\": fence 1 -> 0");
        let left = fail(Some(RowState::LeftBehind("\"j\": fence 1 -> 0".into())));
        assert_eq!(
            left.reason().unwrap(),
            "c: expected false, got true; stored: \"j\": fence 1 -> 0, left behind by the call"
        );
        let unchanged = fail(Some(RowState::LeftBehind(String::new())));
        assert_eq!(
            unchanged.reason().unwrap(),
            "c: expected false, got true; stored: unchanged by the call"
        );
        let no_difference = fail(Some(RowState::Differs(String::new())));
        assert_eq!(
            no_difference.reason().unwrap(),
            "c: expected false, got true; stored: no difference"
        );
        let run = TestRun::new("t", left, Duration::from_micros(2));
        let json = serde_json::to_value(&run).unwrap();
        assert_eq!(
            json["state"],
            json!({"left_behind": "\"j\": fence 1 -> 0"}),
            "{json}"
        );
        assert_eq!(serde_json::from_value::<TestRun>(json).unwrap(), run);
        let without = serde_json::to_value(TestRun::new("t", fail(None), Duration::ZERO)).unwrap();
        assert!(without.get("state").is_none(), "{without}");
    }

    #[test]
    fn a_mutant_status_follows_its_strongest_outcome() {
        let fail = Outcome::Fail {
            check: String::new(),
            expected: String::new(),
            actual: String::new(),
            state: None,
        };
        let timeout = Outcome::Timeout {
            limit_ms: 1,
            detail: None,
        };
        let crash = Outcome::Crash {
            message: String::new(),
        };
        assert_eq!(
            MutantStatus::of([&Outcome::Pass, &crash, &timeout, &fail]),
            MutantStatus::Killed
        );
        assert_eq!(
            MutantStatus::of([&Outcome::Pass, &crash, &timeout]),
            MutantStatus::Timeout
        );
        assert_eq!(
            MutantStatus::of([&crash, &Outcome::Pass]),
            MutantStatus::Crashed
        );
        assert_eq!(MutantStatus::of([&Outcome::Pass]), MutantStatus::Survived);
        assert_eq!(MutantStatus::of([]), MutantStatus::Survived);
        assert!(
            MutantStatus::Killed.detected()
                && MutantStatus::Timeout.detected()
                && MutantStatus::Crashed.detected()
        );
        assert!(!MutantStatus::Survived.detected());
        let labels: Vec<&str> = [
            MutantStatus::Killed,
            MutantStatus::Timeout,
            MutantStatus::Crashed,
            MutantStatus::Survived,
        ]
        .iter()
        .map(|status| status.label())
        .collect();
        assert_eq!(labels, ["killed", "timeout", "crashed", "survived"]);
    }

    #[test]
    fn a_run_taken_over_for_an_uncovered_variant_keeps_only_the_outcome() {
        let raised = vec![crate::frame::Raised {
            error: "NameError".into(),
            frames: Vec::new(),
        }];
        let reference = TestRun {
            unanswered: None,
            test: "t".into(),
            outcome: Outcome::Pass,
            micros: 7,
            stderr: crate::child_process::StderrWindow {
                last: vec!["a line".into()],
                earlier: 0,
            },
            raised: Vec::new(),
            operations: vec!["claim".into()],
            not_covered: false,
        }
        .with_raised(raised.clone());
        assert_eq!(reference.raised, raised);
        let taken = TestRun::not_covered(&reference);
        assert!(taken.not_covered);
        assert_eq!((taken.micros, taken.raised.len()), (0, 0));
        assert!(taken.stderr.is_empty());
        assert_eq!(taken.operations, ["claim"]);
        assert_eq!(taken.outcome, Outcome::Pass);
    }
}
