//! A check of a student's own implementation as terminal text: each step
//! passed, failing (with the call, the contract's answer and the
//! implementation's, for the first failures) or not written, the reference
//! tests apart, and what to do next.

use crate::course::check::{CheckReport, StepResult};
use crate::course::progress::StepStatus;
use crate::course::starter::OPERATIONS;
use crate::exercise;
use crate::outcome::Outcome as TestOutcome;
use crate::terminal::{failure_text, fill};
use colored::Colorize;
use std::fmt::Write as _;

/// How a check shows a step's status.
fn status_label(status: StepStatus) -> String {
    match status {
        StepStatus::Passed => "passed     ".green().to_string(),
        StepStatus::Failing => "failing    ".red().bold().to_string(),
        StepStatus::NotImplemented => "not written".yellow().to_string(),
    }
}

/// How many failures of one step a check shows in full.
const SHOWN_FAILURES: usize = 2;

/// The check step by step: each step passed, failing (with the call, the
/// expected answer and what came back, for the first failures) or not
/// written, then the reference tests apart.
pub fn check_text(report: &CheckReport, width: usize) -> String {
    let mut out = String::new();
    // A stub's answer is shown once: the steps after it that fail on the
    // same stub wait for it.
    let mut last_said = "";
    for step in &report.steps {
        let title = exercise::step_title(step.step);
        let detail = match step.status {
            StepStatus::Passed => format!(" ({} tests)", step.tests).dimmed().to_string(),
            StepStatus::Failing => {
                format!(": {} of {} tests fail", step.failures.len(), step.tests)
            }
            StepStatus::NotImplemented => String::new(),
        };
        writeln!(
            out,
            "  step {}  {}  {title}{detail}",
            step.step,
            status_label(step.status)
        )
        .unwrap();
        match step.status {
            StepStatus::Passed => {}
            StepStatus::NotImplemented => {
                let said = step.failures[0].1.not_implemented().unwrap_or_default();
                if said != last_said {
                    let line = format!(
                        "it answers: {}",
                        if said.is_empty() {
                            "not implemented"
                        } else {
                            said
                        }
                    );
                    writeln!(
                        out,
                        "{}",
                        fill(
                            &line,
                            width,
                            "                       ",
                            "                       "
                        )
                        .dimmed()
                    )
                    .unwrap();
                    last_said = said;
                }
            }
            StepStatus::Failing => out.push_str(&failures_text(step, width)),
        }
    }
    let (ran, failing) = &report.beyond;
    if *ran > 0 {
        // Which of them do not hold is worth reading once the contract does.
        let which = if failing.is_empty() || !report.all_pass() {
            String::new()
        } else {
            format!("; not: {}", failing.join(", "))
        };
        let line = format!(
            "Beyond the worksheet (the Rust store's own stricter promises, not counted): {} of {ran} hold{which}.",
            ran - failing.len(),
        );
        write!(out, "\n{}\n", fill(&line, width, "", "  ").dimmed()).unwrap();
    }
    out
}

/// The first failures of a failing step, in full, and the names of the rest.
fn failures_text(step: &StepResult, width: usize) -> String {
    let mut out = String::new();
    let shown = step
        .failures
        .iter()
        .filter(|(_, outcome)| outcome.not_implemented().is_none())
        .take(SHOWN_FAILURES);
    for (name, outcome) in shown {
        writeln!(out, "      {}", name.bold()).unwrap();
        match outcome {
            TestOutcome::Fail {
                check,
                expected,
                actual,
                state,
            } => out.push_str(&failure_text(
                check,
                expected,
                actual,
                state.as_ref().map(ToString::to_string).as_deref(),
                8,
                width,
            )),
            other => {
                let reason = other.reason().unwrap_or_default();
                out.push_str(&fill(&reason, width, "        ", "        "));
                out.push('\n');
            }
        }
    }
    let rest: Vec<&str> = step
        .failures
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| !out.contains(name))
        .collect();
    if !rest.is_empty() {
        let line = format!("also failing: {}", rest.join(", "));
        out.push_str(&fill(&line, width, "      ", "        "));
        out.push('\n');
    }
    out
}

/// What to do next after a check.
pub fn next_text(report: &CheckReport, source: &str, through: u8) -> String {
    let line = match report.first_open() {
        Some(open) if open.status == StepStatus::NotImplemented => {
            // The stub that answered names its own step: a step's tests
            // may call the operations of later steps (step 1's call
            // `enqueue` and `claim` to see that init_db keeps the fence).
            let said = open.failures[0].1.not_implemented();
            let stub = said.and_then(stub_step);
            let step = stub.unwrap_or(open.step);
            // A stub of a helper (the Python starter's check_args) names
            // itself; an operation's stub may say what to do instead.
            let name = said
                .and_then(stub_name)
                .unwrap_or(OPERATIONS[usize::from(step) - 1]);
            let also = match stub {
                Some(stub) if stub != open.step => {
                    format!("; step {}'s tests need it too", open.step)
                }
                _ => String::new(),
            };
            format!(
                "Next: write step {step}, {name} (its contract is its documentation in {source}){also}. Then `lab check` again, or keep `lab watch` running."
            )
        }
        Some(open) => format!(
            "Next: make step {} pass: the failures above give the call, the contract's answer and yours. Every earlier step's tests stay in force, as the worksheet insists.",
            open.step
        ),
        None if through < 8 => format!(
            "Steps 1 to {through} pass. Next: step {}, `lab check --step {}` (or `lab check` for all eight).",
            through + 1,
            through + 1
        ),
        None => "All eight steps pass. The worksheet's last instruction: break your code on purpose (a boundary comparison, the cleanup code), predict which tests fail, and let the lab score it: `lab check --predict TEST,TEST --why \"...\"`.".to_string(),
    };
    format!(
        "\n{}\n",
        fill(&line, crate::terminal::text_width(), "", "").bold()
    )
}

/// The step a stub's answer names: the starters' stubs answer `step N: ...`.
fn stub_step(message: &str) -> Option<u8> {
    let number: String = message
        .strip_prefix("step ")?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    number.parse().ok().filter(|step| (1..=8).contains(step))
}

/// The function a stub's answer names, when it says `step N: NAME is not
/// written yet` (as the Python starter's stubs do) and NAME is one word.
fn stub_name(message: &str) -> Option<&str> {
    let (_, rest) = message.split_once(": ")?;
    let (name, _) = rest.split_once(" is not written yet")?;
    Some(name).filter(|name| !name.is_empty() && !name.contains(' '))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::TestRun;
    use crate::runner::VariantRun;
    use crate::suite::{self, Tag};
    use crate::variant::Variant;
    use std::time::Duration;

    fn run_with(outcomes: &[(&str, TestOutcome)]) -> VariantRun {
        VariantRun {
            variant: Variant::reference(),
            runs: suite::cases_through(8)
                .map(|case| {
                    let outcome = outcomes
                        .iter()
                        .find(|(name, _)| *name == case.name)
                        .map_or(TestOutcome::Pass, |(_, outcome)| outcome.clone());
                    TestRun::new(case.name, outcome, Duration::ZERO)
                })
                .collect(),
        }
    }

    /// The name of the `n`-th test (from 0) of `step` with `tag`.
    fn nth_of(step: u8, tag: Tag, n: usize) -> &'static str {
        suite::CASES
            .iter()
            .filter(|case| case.step == step && case.tag == tag)
            .nth(n)
            .expect("a test of that step")
            .name
    }

    fn first_of(step: u8, tag: Tag) -> &'static str {
        nth_of(step, tag, 0)
    }

    fn stub(step: u8) -> TestOutcome {
        TestOutcome::Fail {
            check: "a call".into(),
            expected: "an answer (the call is valid)".into(),
            actual: format!("error not-implemented: step {step} is not written yet"),
            state: None,
        }
    }

    #[test]
    fn each_step_is_passed_failing_or_not_written_and_reference_tests_are_apart() {
        let wrong = TestOutcome::Fail {
            check: "enqueue(\"j\") again".into(),
            expected: "false".into(),
            actual: "true".into(),
            state: None,
        };
        let run = run_with(&[
            (first_of(2, Tag::Contract), wrong),
            (first_of(4, Tag::Contract), stub(4)),
            (
                first_of(1, Tag::Reference),
                TestOutcome::Crash {
                    message: "x".into(),
                },
            ),
        ]);
        let report = CheckReport::of(&run, 5);
        let statuses: Vec<StepStatus> = report.steps.iter().map(|step| step.status).collect();
        use StepStatus::*;
        assert_eq!(statuses, [Passed, Failing, Passed, NotImplemented, Passed]);
        assert!(!report.all_pass());
        assert_eq!(
            report.failing_tests(),
            [first_of(2, Tag::Contract), first_of(4, Tag::Contract)]
        );
        assert_eq!(report.beyond.1, [first_of(1, Tag::Reference)]);
        colored::control::set_override(false);
        let text = check_text(&report, 100);
        assert!(text.contains("  step 2  failing"), "{text}");
        assert!(text.contains("expected: false"), "{text}");
        assert!(
            text.contains("it answers: step 4 is not written yet"),
            "{text}"
        );
        assert!(text.contains("not counted"), "{text}");
        let next = next_text(&report, "store.py", 5);
        assert!(next.contains("make step 2 pass"), "{next}");
    }

    /// A failing step shows its first two failures in full and names the
    /// rest; the reference tests that do not hold are named once the
    /// contract holds, and not mentioned when none ran.
    #[test]
    fn a_check_shows_two_failures_in_full_and_names_the_rest() {
        colored::control::set_override(false);
        let crash = || TestOutcome::Crash {
            message: "it broke".into(),
        };
        let [a, b, c] = [0, 1, 2].map(|n| nth_of(4, Tag::Contract, n));
        let report = CheckReport::of(&run_with(&[(a, crash()), (b, crash()), (c, crash())]), 4);
        let text = check_text(&report, 200);
        assert!(text.contains(&format!("also failing: {c}\n")), "{text}");
        assert!(!text.contains(&format!("also failing: {a}")), "{text}");
        let one = CheckReport::of(&run_with(&[(a, crash())]), 4);
        assert!(!check_text(&one, 200).contains("also failing"));

        let reference = first_of(1, Tag::Reference);
        let failing = run_with(&[(a, crash()), (reference, crash())]);
        let text = check_text(&CheckReport::of(&failing, 4), 200);
        assert!(text.contains("Beyond the worksheet"), "{text}");
        assert!(!text.contains("; not: "), "the contract first: {text}");
        let holding = CheckReport::of(&run_with(&[(reference, crash())]), 4);
        let text = check_text(&holding, 200);
        let ran = holding.beyond.0;
        assert!(
            text.contains(&format!("{} of {ran} hold; not: {reference}.", ran - 1)),
            "{text}"
        );
        let none_failing = check_text(&CheckReport::of(&run_with(&[]), 4), 200);
        assert!(
            none_failing.contains(&format!("{ran} of {ran} hold.")),
            "{none_failing}"
        );
        let none_ran = CheckReport {
            beyond: (0, Vec::new()),
            ..holding
        };
        assert!(!check_text(&none_ran, 200).contains("Beyond the worksheet"));
    }

    #[test]
    fn the_advice_follows_the_first_open_step() {
        colored::control::set_override(false);
        let stubs = run_with(
            &suite::CASES
                .iter()
                .filter(|case| case.tag == Tag::Contract)
                .map(|case| (case.name, stub(case.step)))
                .collect::<Vec<_>>(),
        );
        let report = CheckReport::of(&stubs, 8);
        assert!(report
            .steps
            .iter()
            .all(|step| step.status == StepStatus::NotImplemented));
        let next = next_text(&report, "store.py", 8);
        assert!(next.contains("write step 1, init_db"), "{next}");
        assert!(!next.contains("tests need it too"), "{next}");
        let waiting = run_with(
            &suite::CASES
                .iter()
                .filter(|case| case.tag == Tag::Contract)
                .map(|case| (case.name, stub(case.step.max(2))))
                .collect::<Vec<_>>(),
        );
        let next = next_text(&CheckReport::of(&waiting, 8), "store.py", 8);
        assert!(next.contains("write step 2, enqueue"), "{next}");
        assert!(next.contains("step 1's tests need it too"), "{next}");
        let helper = run_with(
            &suite::CASES
                .iter()
                .filter(|case| case.tag == Tag::Contract && case.step >= 2)
                .map(|case| {
                    let said = "step 2: check_args is not written yet";
                    (
                        case.name,
                        TestOutcome::Fail {
                            check: "enqueue(\"j\")".into(),
                            expected: "true".into(),
                            actual: format!("error not-implemented: {said}"),
                            state: None,
                        },
                    )
                })
                .collect::<Vec<_>>(),
        );
        let next = next_text(&CheckReport::of(&helper, 8), "store.py", 8);
        assert!(next.contains("write step 2, check_args (its"), "{next}");
        assert_eq!(
            stub_name("step 2: check_args is not written yet"),
            Some("check_args")
        );
        assert_eq!(stub_name("step 1: create the jobs table"), None);
        assert_eq!(stub_name("step 1:  is not written yet"), None);
        assert_eq!(stub_name("step 1: the table is not written yet"), None);
        assert_eq!(stub_name("step 1 init_db is not written yet"), None);
        assert_eq!(stub_step("step 12: no"), None);
        assert_eq!(stub_step("not written yet"), None);
        let passing = CheckReport::of(&run_with(&[]), 3);
        assert!(passing.all_pass());
        assert!(next_text(&passing, "store.py", 3).contains("lab check --step 4"));
        let all = CheckReport::of(&run_with(&[]), 8);
        assert!(next_text(&all, "store.py", 8).contains("lab check --predict"));
    }
}
