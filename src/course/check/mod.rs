//! A check of a student's own implementation: the contract tests of
//! steps 1 to N, step by step, with the suite's `reference` tests (the
//! Rust store's own stricter promises) apart, and how a check is recorded
//! in the student's progress. One check-and-record serves `lab check`,
//! `lab watch` and the run after `lab step`. The steps run in order, and
//! the check stops at the first that hangs or crashes ([`halt`]).

pub mod halt;

use super::prediction::parse_selection;
use super::progress::{now_stamp, Progress, StepCheck, StepStatus};
use crate::child_process::StderrWindow;
use crate::external::ImplementationFault;
use crate::frame::Raised;
use crate::job_store::JobStore;
use crate::outcome::{Outcome as TestOutcome, TestRun};
use crate::runner::{self, check_lanes, RunOptions, VariantRun, WorkerCommand};
use crate::subject::{Subject, SubjectError};
use crate::suite::{self, Case};
use crate::terminal::cut;
use crate::variant::Variant;
use colored::Colorize;
pub use halt::{Halt, Stop};
use std::collections::BTreeMap;
use std::io::{self, IsTerminal, Write};
use std::sync::Arc;

/// One step of a check: its contract tests and what they gave.
#[derive(Debug, Clone)]
pub struct StepResult {
    /// The step, 1 to 8.
    pub step: u8,
    /// What its tests that ran made of it (see [`StepResult::unjudged`]).
    pub status: StepStatus,
    /// How many contract tests it has.
    pub tests: usize,
    /// The tests that ran and did not pass, with what happened.
    pub failures: Vec<(&'static str, TestOutcome)>,
    /// Its tests that were not run, each with why: the check stopped at a
    /// test the program ran out of time in ([`TestOutcome::not_run`]). A
    /// test not run earns nothing.
    pub not_run: Vec<(&'static str, String)>,
    /// What the program wrote on standard error during each failing test
    /// that wrote anything.
    pub stderr: BTreeMap<&'static str, StderrWindow>,
    /// The errors with frames the program answered during each failing
    /// test that answered any.
    pub raised: BTreeMap<&'static str, Vec<Raised>>,
    /// Why its tests did not all run to their end, when they did not: it
    /// hung or crashed, or an earlier step did.
    pub halt: Option<Halt>,
    /// The earlier step whose error every failure of this one only
    /// repeats ([`halt::repeats`]), when they do.
    pub repeats: Option<u8>,
    /// What its operation answered when asked on its own, when that was
    /// that it is not written (asked when its tests were not run, or only
    /// repeat an earlier step's error).
    pub unwritten: Option<String>,
}

/// What a check found: the contract tests of steps 1 to N, step by step,
/// and the reference tests of those steps apart.
#[derive(Debug, Clone)]
pub struct CheckReport {
    /// The steps, in order.
    pub steps: Vec<StepResult>,
    /// The reference tests that ran, in suite order, each with its
    /// outcome.
    pub beyond: Vec<(&'static str, TestOutcome)>,
    /// The name the program gave itself in its greeting, when it is a
    /// program: its own words, for tools (a JSON report), untrusted.
    pub greeting: Option<String>,
}

impl CheckReport {
    /// The report of a run of `cases_through(through)` against one
    /// implementation.
    pub fn of(run: &VariantRun, through: u8) -> CheckReport {
        let asked = run.variant.suite();
        let failed = |case: &&&'static Case| {
            run.outcome(case.name)
                .is_some_and(|outcome| outcome.catches() && outcome.not_run().is_none())
        };
        // A test with no outcome at all was not run either.
        let unrun = |case: &&'static Case| -> Option<(&'static str, String)> {
            match run.outcome(case.name) {
                Some(outcome) => outcome.not_run().map(|why| (case.name, why.to_string())),
                None => Some((case.name, "the check ended before it".into())),
            }
        };
        let steps = (1..=through)
            .map(|step| {
                let cases: Vec<&'static Case> = asked
                    .iter()
                    .copied()
                    .filter(|case| case.step == step && case.judges_programs())
                    .collect();
                let failures: Vec<(&'static str, TestOutcome)> = cases
                    .iter()
                    .filter(failed)
                    .map(|case| (case.name, run.outcome(case.name).cloned().expect("it ran")))
                    .collect();
                let status = if failures.is_empty() {
                    StepStatus::Passed
                } else if failures
                    .iter()
                    .all(|(_, outcome)| outcome.not_implemented().is_some())
                {
                    StepStatus::NotImplemented
                } else {
                    StepStatus::Failing
                };
                let failing =
                    |test: &TestRun| Some(failures.iter().find(|(name, _)| *name == test.test)?.0);
                let stderr = run
                    .runs
                    .iter()
                    .filter(|test| !test.stderr.is_empty())
                    .filter_map(|test| Some((failing(test)?, test.stderr.clone())))
                    .collect();
                let raised = run
                    .runs
                    .iter()
                    .filter(|test| !test.raised.is_empty())
                    .filter_map(|test| Some((failing(test)?, test.raised.clone())))
                    .collect();
                StepResult {
                    step,
                    status,
                    tests: cases.len(),
                    not_run: cases.iter().filter_map(unrun).collect(),
                    failures,
                    stderr,
                    raised,
                    halt: None,
                    repeats: None,
                    unwritten: None,
                }
            })
            .collect();
        let beyond = asked
            .iter()
            .filter(|case| case.step <= through && !case.judges_programs())
            .filter_map(|case| Some((case.name, run.outcome(case.name)?.clone())))
            .filter(|(_, outcome)| outcome.not_run().is_none())
            .collect();
        CheckReport {
            steps,
            beyond,
            greeting: None,
        }
    }

    /// The reference tests that ran and did not pass.
    pub fn beyond_failing(&self) -> Vec<&'static str> {
        self.beyond
            .iter()
            .filter(|(_, outcome)| outcome.catches())
            .map(|(name, _)| *name)
            .collect()
    }

    /// Whether every step checked passes.
    pub fn all_pass(&self) -> bool {
        self.steps.iter().all(StepResult::passed)
    }

    /// The contract tests that did not pass, in suite order.
    pub fn failing_tests(&self) -> Vec<String> {
        self.steps
            .iter()
            .flat_map(|step| step.failures.iter().map(|(name, _)| name.to_string()))
            .collect()
    }

    /// The first step with a test that ran and did not pass (a step whose
    /// tests were not run is not one).
    pub fn first_open(&self) -> Option<&StepResult> {
        self.steps
            .iter()
            .find(|step| step.status != StepStatus::Passed)
    }
}

impl StepResult {
    /// Whether the step is not judged at all: none of its tests that ran
    /// failed, but some were not run, so it neither passes nor fails.
    pub fn unjudged(&self) -> bool {
        self.failures.is_empty() && !self.not_run.is_empty()
    }

    /// Whether every one of its tests ran and passed.
    pub fn passed(&self) -> bool {
        self.status == StepStatus::Passed && self.not_run.is_empty()
    }

    /// For tests: step `step` of `tests` contract tests, all run, with
    /// `failures` (it passes when there are none), and nothing else known.
    #[cfg(test)]
    pub(crate) fn ran(step: u8, tests: usize, failures: Vec<(&'static str, TestOutcome)>) -> Self {
        StepResult {
            step,
            status: if failures.is_empty() {
                StepStatus::Passed
            } else {
                StepStatus::Failing
            },
            tests,
            failures,
            not_run: Vec::new(),
            stderr: BTreeMap::new(),
            raised: BTreeMap::new(),
            halt: None,
            repeats: None,
            unwritten: None,
        }
    }
}

/// After how many tests that ran out of time a check stops running the
/// rest: the first. A hang costs one time limit, and the tests after it
/// would say nothing new (a program that hangs at one call often hangs at
/// every call).
const GIVE_UP_AFTER_TIMEOUTS: usize = 1;

/// An implementation made ready for checks: a program started and its
/// greeting heard, kept running for the tests; a compiled store as it is.
pub struct Ready {
    /// The implementation.
    pub variant: Variant,
    /// The stores of the running program, each with a process of its own,
    /// that run the tests side by side; none for a compiled store, whose
    /// tests run in worker processes.
    lanes: Vec<Arc<dyn JobStore>>,
    /// The name the program gave itself, when it is a program.
    greeting: Option<String>,
}

impl Drop for Ready {
    /// Each process of the program is stopped as its store goes: its input
    /// closes and it is given a moment to exit. They go at once, so that
    /// the moments overlap.
    fn drop(&mut self) {
        let lanes = std::mem::take(&mut self.lanes);
        if lanes.len() > 1 {
            std::thread::scope(|scope| {
                for lane in lanes {
                    scope.spawn(move || drop(lane));
                }
            });
        }
    }
}

/// Starts a program to hear its greeting, before a check: one that cannot
/// start or greets wrongly fails the check at once, saying so, rather than
/// failing every test the same way. The program goes on running for the
/// check's tests, in `lanes` processes started at once (each one's start,
/// a launcher's included, overlaps the others'), each started once.
///
/// Errors: the first process's fault, else any other's.
pub fn hear_greeting(
    variant: &Variant,
    options: &RunOptions,
    lanes: usize,
) -> Result<Ready, ImplementationFault> {
    let limit = runner::call_limit(options.timeout);
    let stores: Vec<_> = (0..lanes.max(1))
        .map_while(|_| variant.open_program(limit))
        .collect();
    let heard: Vec<Result<String, ImplementationFault>> = std::thread::scope(|scope| {
        let greetings: Vec<_> = stores
            .iter()
            .map(|store| scope.spawn(|| store.name()))
            .collect();
        greetings
            .into_iter()
            .map(|greeting| greeting.join().expect("hearing a greeting does not panic"))
            .collect()
    });
    let names: Vec<String> = heard.into_iter().collect::<Result<_, _>>()?;
    Ok(Ready {
        greeting: names.into_iter().next(),
        variant: variant.clone(),
        lanes: stores
            .into_iter()
            .map(|store| store as Arc<dyn JobStore>)
            .collect(),
    })
}

/// Runs the tests of steps 1 to `through` (contract and reference) against
/// `ready`: a program from this process, a compiled store in a worker
/// process, as every suite run goes.
pub fn run_check(
    worker: &WorkerCommand,
    ready: &Ready,
    through: u8,
    options: &RunOptions,
) -> CheckReport {
    run_check_showing(worker, ready, through, options, &mut |_| {})
}

/// [`run_check`], handing each test's run to `on_run` as it ends, in suite
/// order (step by step), for a check that shows its progress.
pub fn run_check_showing(
    worker: &WorkerCommand,
    ready: &Ready,
    through: u8,
    options: &RunOptions,
    on_run: &mut dyn FnMut(&TestRun),
) -> CheckReport {
    let options = RunOptions {
        give_up_after_timeouts: Some(GIVE_UP_AFTER_TIMEOUTS),
        ..options.clone()
    };
    let mut runs = Vec::new();
    let mut stopped: Option<(u8, halt::Stop)> = None;
    for step in 1..=through {
        let tests: Vec<&'static Case> = ready
            .variant
            .suite()
            .into_iter()
            .filter(|case| case.step == step)
            .collect();
        if let Some((at, stop)) = &stopped {
            runs.extend(halt::not_run_after(&tests, *at, stop.hung));
            continue;
        }
        let ran = if ready.lanes.is_empty() {
            runner::run_variant_showing(worker, &ready.variant, &tests, &options, on_run)
        } else {
            runner::run_program(&ready.lanes, &tests, &options, on_run)
        };
        stopped = halt::stop_of(&ran, &tests).map(|stop| (step, stop));
        runs.extend(ran);
    }
    let run = VariantRun {
        variant: ready.variant.clone(),
        runs,
    };
    let mut report = CheckReport {
        greeting: ready.greeting.clone(),
        ..CheckReport::of(&run, through)
    };
    report.blame(stopped, &ready.variant, &options);
    report
}

impl CheckReport {
    /// Says what stopped the check and what only repeats an earlier error:
    /// the step that hung or crashed (`stopped`) holds the stop, each step
    /// after it the step that stopped it, and whether its own operation is
    /// written (asked on its own); a failing step whose failures all repeat
    /// an earlier step's error names that step, and whether it is written.
    fn blame(
        &mut self,
        stopped: Option<(u8, halt::Stop)>,
        variant: &Variant,
        options: &RunOptions,
    ) {
        let after = stopped.as_ref().map(|(step, stop)| (*step, stop.hung));
        if let Some((at, _)) = after {
            // What a stopped step's other tests made of it depends on when
            // the stop came: only the steps before it are told.
            self.beyond
                .retain(|(name, _)| suite::case(name).is_some_and(|case| case.step < at));
        }
        if let Some((at, stop)) = stopped {
            if let Some(step) = self.steps.iter_mut().find(|step| step.step == at) {
                step.halt = Some(Halt::Here(stop));
                step.status = StepStatus::Failing;
            }
        }
        for index in 0..self.steps.len() {
            let (earlier, rest) = self.steps.split_at_mut(index);
            let step = &mut rest[0];
            let halted_before = after.filter(|(at, _)| *at < step.step);
            if let Some((at, hung)) = halted_before {
                step.halt = Some(Halt::Earlier { step: at, hung });
            } else {
                step.repeats = halt::repeats(step, earlier);
            }
            if halted_before.is_some() || step.repeats.is_some() {
                step.unwritten = halt::not_written(variant, step.step, &options.scratch);
                if step.unwritten.is_some() && step.repeats.is_some() {
                    step.status = StepStatus::NotImplemented;
                }
            }
        }
    }
}

impl CheckReport {
    /// Records each step's result in `progress`, as the checks of its
    /// current implementation (see `Session::record_check`, which makes the
    /// checked one current first); a step whose tests were not run keeps
    /// what was recorded of it before.
    pub fn record(&self, progress: &mut Progress) {
        let at = now_stamp();
        for step in self.steps.iter().filter(|step| !step.unjudged()) {
            progress.checks.insert(
                step.step.to_string(),
                StepCheck {
                    at: at.clone(),
                    status: step.status,
                    failing: step
                        .failures
                        .iter()
                        .map(|(name, _)| name.to_string())
                        .collect(),
                },
            );
        }
    }
}
/// A `--predict` that cannot be used: the message says why and what to
/// give instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadPrediction(pub String);

/// Why a check could not be made.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// The implementation cannot be made ready (a project that does not
    /// build, files that cannot be written, a command line that means nothing).
    #[error(transparent)]
    Subject(#[from] SubjectError),
    /// The program started but did not greet as the protocol asks: what
    /// went wrong, with the lines of its standard error.
    #[error("{0}")]
    Fault(String),
    /// Writing the check's heading, or to the console, failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// The tests a `--predict` names, numbered as `lab tests` numbers them:
/// contract tests of steps 1 to `through`, since only those judge a
/// student's implementation.
///
/// Errors: the text names no such test, or a test beyond the worksheet;
/// the message says what to give instead.
pub fn predicted_tests(text: &str, through: u8) -> Result<Vec<&'static str>, BadPrediction> {
    let menu: Vec<&'static Case> = suite::cases_through(through).collect();
    let chosen =
        parse_selection(text, &menu).map_err(|problems| BadPrediction(problems.join("; ")))?;
    let beyond: Vec<&str> = chosen
        .iter()
        .copied()
        .filter(|name| suite::case(name).is_some_and(|case| !case.judges_programs()))
        .collect();
    if !beyond.is_empty() {
        return Err(BadPrediction(format!(
            "{} beyond the worksheet (the Rust store's own promises, marked * by `lab tests`), which do not judge your implementation: predict among the contract tests",
            if beyond.len() == 1 {
                format!("{} is a test", beyond[0])
            } else {
                format!("{} are tests", beyond.join(", "))
            }
        )));
    }
    Ok(chosen)
}

/// Prepares the implementation and runs the check: `heading` is shown
/// once the program greeted, and at a terminal the check's progress, step
/// by step, on one line that the report then takes the place of.
///
/// Answers the report, and the implementation as it ran, which stops the
/// program when it goes.
///
/// Errors: the implementation cannot be made ready; a program that does
/// not greet, with the lines of its standard error as it wrote them (a
/// traceback's caret in place), each cut to the terminal's width; the
/// heading cannot be written.
pub fn check_shown(
    checked: &Subject,
    through: u8,
    options: &RunOptions,
    worker: &WorkerCommand,
    show_progress: bool,
    heading: impl FnOnce() -> io::Result<()>,
) -> Result<(CheckReport, Ready), CheckError> {
    let variant = checked.reference()?;
    let ready = hear_greeting(&variant, options, check_lanes()).map_err(greeting_fault)?;
    heading()?;
    let mut progress = ProgressLine::at_terminal(through, show_progress, options.timeout);
    let report = run_check_showing(worker, &ready, through, options, &mut |run| {
        progress.ran(run)
    });
    progress.clear();
    Ok((report, ready))
}

/// The error of a program that did not greet: the fault's message, its
/// first line as it is (the command that shows it fills it to the width),
/// and each line of standard error it quotes cut to the width less the
/// two columns a message's later lines are indented by, so that a
/// traceback's caret stays under its column. Each line is made inert
/// ([`crate::inert::line`]) before it is cut: it quotes what the program
/// wrote (its greeting, its standard error).
pub fn greeting_fault(fault: ImplementationFault) -> CheckError {
    let width = crate::terminal::width().saturating_sub(2);
    let message = fault.to_string();
    let lines: Vec<String> = message
        .lines()
        .enumerate()
        .map(|(at, line)| {
            let line = crate::inert::line(line);
            if at == 0 {
                line.into_owned()
            } else {
                cut(&line, width)
            }
        })
        .collect();
    CheckError::Fault(lines.join("\n"))
}

/// A check's progress on one line rewritten in place, at a terminal only:
/// piped, a check writes its report and nothing else. The line says the
/// time limit of a test, so that a student whose program hangs knows how
/// long the screen will wait.
struct ProgressLine {
    /// How many contract tests each step has, and how many of them ran.
    steps: Vec<(usize, usize)>,
    /// A test's time limit, as the line says it.
    limit: String,
    shown: bool,
}

impl ProgressLine {
    fn at_terminal(through: u8, wanted: bool, limit: std::time::Duration) -> ProgressLine {
        let steps = if wanted && std::io::stdout().is_terminal() {
            (1..=through)
                .map(|step| {
                    (
                        suite::cases_through(through)
                            .filter(|case| case.step == step && case.judges_programs())
                            .count(),
                        0,
                    )
                })
                .collect()
        } else {
            Vec::new()
        };
        ProgressLine {
            steps,
            limit: crate::fault::seconds(limit),
            shown: false,
        }
    }

    fn ran(&mut self, run: &crate::outcome::TestRun) {
        // The line counts the tests the report counts: the contract
        // tests, not the Rust store's stricter ones that run beside them.
        let Some(step) = suite::case(&run.test)
            .filter(|case| case.judges_programs())
            .map(|case| usize::from(case.step))
        else {
            return;
        };
        let Some(counts) = self.steps.get_mut(step - 1) else {
            return;
        };
        counts.1 += 1;
        // The first step with a test still to run: a step whose tests have
        // all run hands over to the next at once, so that a hang in its
        // first test is not shown as the step before it.
        let Some((step, &(tests, ran))) = self
            .steps
            .iter()
            .enumerate()
            .find(|(_, (tests, ran))| ran < tests)
            .map(|(index, counts)| (index + 1, counts))
        else {
            return;
        };
        let line = format!(
            "  step {step} of {}: {ran} of {tests} tests run (a test that hangs stops after {})",
            self.steps.len(),
            self.limit
        );
        let line = cut(&line, crate::terminal::width());
        let _ = write!(std::io::stdout(), "\r\x1b[K{}", line.dimmed());
        let _ = std::io::stdout().flush();
        self.shown = true;
    }

    fn clear(&self) {
        if self.shown {
            let _ = write!(std::io::stdout(), "\r\x1b[K");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fault::FaultKind;

    /// A program that greets with an escape sequence and writes others on
    /// standard error: the error says so inert, each quoted line cut to
    /// the width as it is shown.
    #[test]
    fn a_greeting_fault_quotes_the_program_inert_and_cut() {
        let width = crate::terminal::width();
        let fault = ImplementationFault {
            implementation: "python3 s.py".into(),
            kind: FaultKind::WrongGreeting("\x1b]0;pwned\x07hello".into()),
            request: None,
            stderr: vec!["\x1b[1A\x1b[2K".repeat(width), "\u{202e}gnp.py".into()],
        };
        let CheckError::Fault(message) = greeting_fault(fault) else {
            panic!("a fault");
        };
        assert!(
            !message
                .chars()
                .any(|c| (c.is_control() && c != '\n') || c == '\u{202e}'),
            "{message:?}"
        );
        assert!(
            message.contains("it wrote `\\x1b]0;pwned\\x07hello`"),
            "{message}"
        );
        let lines: Vec<&str> = message.lines().collect();
        assert_eq!(lines.len(), 3, "{message}");
        assert!(lines[1].starts_with("    \\x1b[1A\\x1b[2K"), "{message}");
        assert_eq!(lines[1].chars().count(), width - 2, "cut to the width");
        assert_eq!(lines[2], "    \\u{202e}gnp.py");
    }
}
