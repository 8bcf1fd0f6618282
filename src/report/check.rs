//! A check of a student's own implementation as terminal text: each step
//! passed, failing (with the call, the contract's answer and the
//! implementation's, for the first failures) or not written, the reference
//! tests apart, and what to do next.

use crate::child_process::StderrWindow;
use crate::course::check::{CheckReport, StepResult};
use crate::course::progress::StepStatus;
use crate::course::starter::OPERATIONS;
use crate::exercise;
use crate::fault::STDERR_INTRO;
use crate::outcome::Outcome as TestOutcome;
use crate::terminal::{cut, failure_text, fill};
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

/// The check as JSON, for tools: the implementation and how far it was
/// checked; each step with its status, its contract tests, how many
/// passed, and each failure with its outcome and reason (and what the
/// program wrote on standard error meanwhile); then every test that ran,
/// contract and reference, with its outcome.
pub fn check_json(report: &CheckReport, implementation: &str, through: u8) -> serde_json::Value {
    let outcome_of = |name: &str| -> TestOutcome {
        report
            .steps
            .iter()
            .flat_map(|step| &step.failures)
            .chain(&report.beyond)
            .find(|(test, _)| *test == name)
            .map_or(TestOutcome::Pass, |(_, outcome)| outcome.clone())
    };
    let steps: Vec<serde_json::Value> = report
        .steps
        .iter()
        .map(|step| {
            let failures: Vec<serde_json::Value> = step
                .failures
                .iter()
                .map(|(test, outcome)| {
                    serde_json::json!({
                        "test": test,
                        "result": outcome,
                        "reason": outcome.reason(),
                        "stderr": step.stderr.get(test).map(|window| &window.last),
                    })
                })
                .collect();
            serde_json::json!({
                "step": step.step,
                "title": exercise::step_title(step.step),
                "status": step.status,
                "tests": step.tests,
                "passed": step.tests - step.failures.len(),
                "failures": failures,
            })
        })
        .collect();
    let ran: std::collections::BTreeSet<&str> =
        report.beyond.iter().map(|(test, _)| *test).collect();
    let tests: Vec<serde_json::Value> = crate::suite::cases_through(through)
        .filter(|case| case.judges_programs() || ran.contains(case.name))
        .map(|case| {
            let outcome = outcome_of(case.name);
            serde_json::json!({
                "name": case.name,
                "step": case.step,
                "contract": case.judges_programs(),
                "outcome": outcome.label(),
                "reason": outcome.reason(),
            })
        })
        .collect();
    serde_json::json!({
        "implementation": implementation,
        "through": through,
        "all_pass": report.all_pass(),
        "steps_passed": report
            .steps
            .iter()
            .filter(|step| step.status == StepStatus::Passed)
            .count(),
        "steps": steps,
        "tests": tests,
    })
}

/// How many failures of one step a check shows in full.
const SHOWN_FAILURES: usize = 2;

/// Where a failing step's details start: under the step's title.
const DETAIL_INDENT: &str = "                       ";

/// The check step by step: each step passed, failing (with the call, the
/// expected answer and what came back, for the first failures, and what
/// the program wrote on standard error meanwhile) or not written, then the
/// reference tests apart: counted in one line, or listed with `all`.
pub fn check_text(report: &CheckReport, width: usize, all: bool) -> String {
    let mut out = String::new();
    // A stub's answer is shown once: the steps after it that fail on the
    // same stub wait for it.
    let mut last_said = "";
    for step in &report.steps {
        out.push_str(&step_line(step, width));
        match step.status {
            StepStatus::Passed => {}
            StepStatus::NotImplemented => {
                let said = step.failures[0].1.not_implemented().unwrap_or_default();
                if said != last_said {
                    out.push_str(&stub_text(said, width));
                    last_said = said;
                }
            }
            StepStatus::Failing => out.push_str(&failures_text(step, width)),
        }
    }
    out.push_str(&beyond_text(report, width, all));
    out
}

/// How many of the last lines of standard error `lab watch` shows under
/// the first failure, so that a run fits a screen of 24 rows.
const WATCH_STDERR_LINES: usize = 3;

/// A check as `lab watch` shows it: one line per step, then the first
/// failure in full (with the last `WATCH_STDERR_LINES` lines the program
/// wrote on standard error during it).
pub fn watch_text(report: &CheckReport, width: usize) -> String {
    let mut out: String = report
        .steps
        .iter()
        .map(|step| step_line(step, width))
        .collect();
    let Some(open) = report.first_open() else {
        return out;
    };
    let title = format!("First failure, step {}:", open.step);
    write!(out, "\n{}\n", title.bold()).unwrap();
    match open
        .failures
        .iter()
        .find(|(_, outcome)| outcome.not_implemented().is_none())
    {
        Some((name, outcome)) => {
            let stderr = open
                .stderr
                .get(name)
                .map(|window| StderrWindow::default().then(window.clone(), WATCH_STDERR_LINES));
            out.push_str(&failure_text_of(name, outcome, stderr.as_ref(), width))
        }
        None => {
            let said = open.failures[0].1.not_implemented().unwrap_or_default();
            writeln!(out, "      {}", open.failures[0].0.bold()).unwrap();
            out.push_str(&stub_text(said, width));
        }
    }
    out
}

/// A step's line: its number, status and title, and how many of its
/// tests pass or fail.
fn step_line(step: &StepResult, width: usize) -> String {
    let title = exercise::step_title(step.step);
    let detail = match step.status {
        StepStatus::Passed => format!(" ({} tests)", step.tests).dimmed().to_string(),
        StepStatus::Failing => {
            format!(": {} of {} fail", step.failures.len(), step.tests)
        }
        StepStatus::NotImplemented => String::new(),
    };
    let line = format!(
        "  step {}  {}  {title}{detail}",
        step.step,
        status_label(step.status)
    );
    format!("{}\n", fill(&line, width, "", DETAIL_INDENT))
}

/// What a stub answered, under its step.
fn stub_text(said: &str, width: usize) -> String {
    let line = format!(
        "it answers: {}",
        if said.is_empty() {
            "not implemented"
        } else {
            said
        }
    );
    format!(
        "{}\n",
        fill(&line, width, DETAIL_INDENT, DETAIL_INDENT).dimmed()
    )
}

/// The reference tests: how many hold, in one line; with `all`, each of
/// them, and why one does not hold.
fn beyond_text(report: &CheckReport, width: usize, all: bool) -> String {
    let ran = report.beyond.len();
    if ran == 0 {
        return String::new();
    }
    let failing = report.beyond_failing();
    let more = if all {
        ":"
    } else {
        " (`lab check --all` lists them)."
    };
    let line = format!(
        "Beyond the worksheet, not counted: {} of {ran} of the Rust store's stricter promises hold{more}",
        ran - failing.len(),
    );
    let mut out = format!("\n{}\n", fill(&line, width, "", "  ").dimmed());
    if all {
        for (name, outcome) in &report.beyond {
            let line = match outcome.reason() {
                None => format!("holds  {name}"),
                Some(reason) => format!("fails  {name}: {reason}"),
            };
            writeln!(out, "{}", fill(&line, width, "  ", "         ")).unwrap();
        }
    }
    out
}

/// The first failures of a failing step, in full, and the names of the rest.
/// A crash or a hang comes first: what the program did (broke the protocol,
/// ended, stopped answering) explains the failures around it, and which
/// test meets it first depends on which process of the program ran it.
fn failures_text(step: &StepResult, width: usize) -> String {
    let mut out = String::new();
    let (broken, failed): (Vec<_>, Vec<_>) = step
        .failures
        .iter()
        .filter(|(_, outcome)| outcome.not_implemented().is_none())
        .partition(|(_, outcome)| {
            matches!(
                outcome,
                TestOutcome::Crash { .. } | TestOutcome::Timeout { .. }
            )
        });
    let shown = broken.into_iter().chain(failed).take(SHOWN_FAILURES);
    for (name, outcome) in shown {
        out.push_str(&failure_text_of(
            name,
            outcome,
            step.stderr.get(name),
            width,
        ));
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

/// How many columns a failure's lines are indented.
const FAILURE_INDENT: usize = 8;

/// One failure in full: the test's name, the call with the contract's
/// answer and the program's (or how it crashed or hung), then the last
/// lines the program wrote on standard error during the test, as written
/// (a traceback's caret in place), each cut to the width. Those replace
/// the lines a crash's message quotes, which are the program's last
/// whatever test wrote them; a test that wrote none shows those.
fn failure_text_of(
    name: &str,
    outcome: &TestOutcome,
    stderr: Option<&StderrWindow>,
    width: usize,
) -> String {
    let pad = " ".repeat(FAILURE_INDENT);
    let mut out = format!("      {}\n", name.bold());
    let own = stderr.filter(|window| !window.last.is_empty());
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
            FAILURE_INDENT,
            width,
        )),
        TestOutcome::Timeout {
            detail: Some(message),
            ..
        }
        | TestOutcome::Crash { message } => {
            let mut lines = message.lines();
            let first = lines.next().unwrap_or_default();
            // The test's own lines, when it has any, replace the last lines
            // of the program that the message quotes.
            let first = match own {
                Some(_) => first.strip_suffix(STDERR_INTRO).unwrap_or(first),
                None => first,
            };
            let said = match outcome {
                TestOutcome::Crash { .. } => format!("crashed: {first}"),
                _ => format!("timed out: {first}"),
            };
            writeln!(out, "{}", fill(&said, width, &pad, &pad)).unwrap();
            if own.is_none() {
                for line in lines {
                    writeln!(out, "{}", cut(&format!("{pad}{line}"), width)).unwrap();
                }
            }
        }
        other => {
            let reason = other.reason().unwrap_or_default();
            writeln!(out, "{}", fill(&reason, width, &pad, &pad)).unwrap();
        }
    }
    let Some(stderr) = own else {
        return out;
    };
    let heading = match stderr.earlier {
        0 => "it wrote on standard error:".to_string(),
        earlier => format!(
            "it wrote on standard error ({earlier} earlier {} left out):",
            if earlier == 1 { "line" } else { "lines" }
        ),
    };
    writeln!(out, "{}", fill(&heading, width, &pad, &pad).dimmed()).unwrap();
    for line in &stderr.last {
        writeln!(out, "{}", cut(&format!("{pad}  {line}"), width)).unwrap();
    }
    out
}

/// How many racing claims won, when a failure says several did (step 8's
/// `N winners: ...`).
fn several_winners(outcome: &TestOutcome) -> Option<usize> {
    let TestOutcome::Fail { actual, .. } = outcome else {
        return None;
    };
    let (count, rest) = actual.split_once(' ')?;
    let count: usize = count.parse().ok()?;
    (count > 1 && rest.starts_with("winners")).then_some(count)
}

/// What to do next after a check.
/// (`impl_arg` is how `--impl` names the implementation, for the last
/// step: `lab chaos`.)
pub fn next_text(report: &CheckReport, source: &str, through: u8, impl_arg: &str) -> String {
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
        Some(open) => match open
            .failures
            .iter()
            .find_map(|(_, outcome)| several_winners(outcome))
        {
            Some(winners) => format!(
                "Next: {winners} claims won one job. The race is in claim: its read and its write are not under one write lock, as step 4's contract asks (one BEGIN IMMEDIATE)."
            ),
            None => format!(
                "Next: make step {} pass: each failure above gives the call, the contract's answer and yours. Every earlier step's tests stay in force, as the worksheet insists.",
                open.step
            ),
        },
        None if through < 8 => format!(
            "Steps 1 to {through} pass. Next: step {}, `lab check --step {}` (or `lab check` for all eight).",
            through + 1,
            through + 1
        ),
        None => format!("All eight steps pass. Next: `lab chaos --impl {impl_arg}` runs your store under 8 workers that stall, get killed mid-call and disagree about the time, and judges every answer. Then the worksheet's last instruction: break your code on purpose (a boundary comparison, the cleanup code), predict which tests fail, and let the lab score it: `lab check --predict TEST,TEST --why \"...\"`."),
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
        assert_eq!(report.beyond_failing(), [first_of(1, Tag::Reference)]);
        colored::control::set_override(false);
        let text = check_text(&report, 100, false);
        assert!(text.contains("  step 2  failing"), "{text}");
        assert!(text.contains("expected: false"), "{text}");
        assert!(
            text.contains("it answers: step 4 is not written yet"),
            "{text}"
        );
        assert!(text.contains("not counted"), "{text}");
        let next = next_text(&report, "store.py", 5, "store.py");
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
        let text = check_text(&report, 200, false);
        assert!(text.contains(&format!("also failing: {c}\n")), "{text}");
        assert!(!text.contains(&format!("also failing: {a}")), "{text}");
        let one = CheckReport::of(&run_with(&[(a, crash())]), 4);
        assert!(!check_text(&one, 200, false).contains("also failing"));

        // A crash is shown before the plain failures that came first.
        let wrong = || TestOutcome::Fail {
            check: "claim".into(),
            expected: "1".into(),
            actual: "2".into(),
            state: None,
        };
        let mixed = CheckReport::of(&run_with(&[(a, wrong()), (b, wrong()), (c, crash())]), 4);
        let text = check_text(&mixed, 200, false);
        assert!(text.contains(&format!("also failing: {b}\n")), "{text}");
        let (crash_at, wrong_at) = (text.find("it broke"), text.find("expected: 1"));
        assert!(
            crash_at.is_some() && wrong_at.is_some() && crash_at < wrong_at,
            "{text}"
        );

        let reference = first_of(1, Tag::Reference);
        let failing = run_with(&[(a, crash()), (reference, crash())]);
        let text = check_text(&CheckReport::of(&failing, 4), 200, false);
        let ran = CheckReport::of(&failing, 4).beyond.len();
        assert!(
            text.contains(&format!(
                "{} of {ran} of the Rust store's stricter promises hold (`lab check --all` lists them)",
                ran - 1
            )),
            "{text}"
        );
        assert!(!text.contains(reference), "named only with --all: {text}");
        let holding = CheckReport::of(&run_with(&[(reference, crash())]), 4);
        let text = check_text(&holding, 200, false);
        assert!(!text.contains(reference), "named only with --all: {text}");
        let all = check_text(&holding, 200, true);
        assert!(
            all.contains(&format!(
                "promises hold:\n  fails  {reference}: crashed: it broke\n"
            )),
            "{all}"
        );
        let holds = &holding.beyond[1].0;
        assert!(all.contains(&format!("\n  holds  {holds}\n")), "{all}");
        let none_failing = check_text(&CheckReport::of(&run_with(&[]), 4), 200, false);
        assert!(
            none_failing.contains(&format!("{ran} of {ran} of the")),
            "{none_failing}"
        );
        let none_ran = CheckReport {
            beyond: Vec::new(),
            ..holding
        };
        assert!(!check_text(&none_ran, 200, true).contains("Beyond the worksheet"));
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
        let next = next_text(&report, "store.py", 8, "store.py");
        assert!(next.contains("write step 1, init_db"), "{next}");
        assert!(!next.contains("tests need it too"), "{next}");
        let waiting = run_with(
            &suite::CASES
                .iter()
                .filter(|case| case.tag == Tag::Contract)
                .map(|case| (case.name, stub(case.step.max(2))))
                .collect::<Vec<_>>(),
        );
        let next = next_text(&CheckReport::of(&waiting, 8), "store.py", 8, "store.py");
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
        let next = next_text(&CheckReport::of(&helper, 8), "store.py", 8, "store.py");
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
        assert!(next_text(&passing, "store.py", 3, "store.py").contains("lab check --step 4"));
        let all = CheckReport::of(&run_with(&[]), 8);
        assert!(next_text(&all, "store.py", 8, "store.py").contains("lab check --predict"));
    }

    fn window(last: &[&str], earlier: usize) -> StderrWindow {
        StderrWindow {
            last: last.iter().map(|line| line.to_string()).collect(),
            earlier,
        }
    }

    /// What the program wrote during a failing test is shown under it, cut
    /// to the width; a crash keeps its traceback's lines as written, and
    /// what it quotes already is not shown twice.
    #[test]
    fn a_failure_shows_the_program_s_standard_error_and_a_crash_its_lines() {
        colored::control::set_override(false);
        let wrong = TestOutcome::Fail {
            check: "claim".into(),
            expected: "fence 2".into(),
            actual: "none".into(),
            state: None,
        };
        let shown = failure_text_of("t", &wrong, Some(&window(&["seen 1", "seen 2"], 3)), 80);
        assert!(
            shown.ends_with("        it wrote on standard error (3 earlier lines left out):\n          seen 1\n          seen 2\n"),
            "{shown}"
        );
        let one = failure_text_of("t", &wrong, Some(&window(&["x"], 1)), 80);
        assert!(one.contains("(1 earlier line left out)"), "{one}");
        let none = failure_text_of("t", &wrong, Some(&window(&["x"], 0)), 80);
        assert!(
            none.contains("it wrote on standard error:\n          x\n"),
            "{none}"
        );
        assert!(!failure_text_of("t", &wrong, None, 80).contains("standard error"));
        let long = "y".repeat(100);
        let cut_line = failure_text_of("t", &wrong, Some(&window(&[&long], 0)), 60);
        assert!(
            cut_line.lines().all(|line| line.chars().count() <= 60),
            "{cut_line}"
        );

        let crash = TestOutcome::Crash {
            message: format!(
                "python3 s.py exited with code 1{STDERR_INTRO}\n    another test's line"
            ),
        };
        let traceback = ["File \"s.py\", line 3", "  def f()", "         ^"];
        let shown = failure_text_of("t", &crash, Some(&window(&traceback, 0)), 80);
        assert_eq!(
            shown,
            "      t\n        crashed: python3 s.py exited with code 1\n        it wrote on standard error:\n          File \"s.py\", line 3\n            def f()\n                   ^\n",
            "the caret stays under its column; the lines the message quotes are the test's own"
        );
        let quiet = failure_text_of("t", &crash, Some(&window(&[], 0)), 80);
        assert_eq!(
            quiet,
            format!("      t\n        crashed: python3 s.py exited with code 1{STDERR_INTRO}\n            another test's line\n"),
            "without lines of its own, the program's last"
        );
        let hang = TestOutcome::Timeout {
            limit_ms: 900,
            detail: Some("it gave no answer".into()),
        };
        assert!(failure_text_of("t", &hang, None, 80)
            .contains("        timed out: it gave no answer\n"));
    }

    /// Step 8's race tests report `N winners`: with several, the advice
    /// sends the student back to claim and step 4's contract.
    #[test]
    fn several_winners_send_the_student_back_to_claim() {
        colored::control::set_override(false);
        let race = |actual: &str| TestOutcome::Fail {
            check: "the owners that got a fence from claim_many on \"j\"".into(),
            expected: "exactly one owner with a fence".into(),
            actual: actual.into(),
            state: None,
        };
        assert_eq!(
            several_winners(&race("16 winners: w00 got 1, and 15 more")),
            Some(16)
        );
        assert_eq!(several_winners(&race("1 winners: w00 got 1")), None);
        assert_eq!(several_winners(&race("2 owners: none")), None);
        assert_eq!(several_winners(&race("no winner")), None);
        assert_eq!(several_winners(&TestOutcome::Pass), None);
        let test = first_of(8, Tag::Contract);
        let report = CheckReport::of(&run_with(&[(test, race("4 winners: A got 1, B got 2"))]), 8);
        let next = next_text(&report, "store.py", 8, "store.py");
        assert!(next.contains("4 claims won one job"), "{next}");
        assert!(
            next.contains("The race is in claim: its read and its write"),
            "{next}"
        );
        assert!(next.contains("step 4's contract"), "{next}");
        assert!(next.contains("BEGIN IMMEDIATE"), "{next}");
        let other = CheckReport::of(&run_with(&[(test, race("none"))]), 8);
        assert!(next_text(&other, "store.py", 8, "store.py").contains("make step 8 pass"));
    }

    /// A step keeps what the program wrote during each of its failing
    /// tests that wrote anything; a passing test's lines are not kept.
    #[test]
    fn a_step_keeps_the_standard_error_of_its_failing_tests() {
        let [a, b, c] = [0, 1, 2].map(|n| nth_of(3, Tag::Contract, n));
        let wrong = TestOutcome::Crash {
            message: "x".into(),
        };
        let mut run = run_with(&[(a, wrong.clone()), (b, wrong)]);
        for test in &mut run.runs {
            if test.test == a || test.test == c {
                test.stderr = window(&[test.test.as_str()], 0);
            }
        }
        let report = CheckReport::of(&run, 3);
        let kept: Vec<(&str, &StderrWindow)> = report.steps[2]
            .stderr
            .iter()
            .map(|(name, window)| (*name, window))
            .collect();
        assert_eq!(kept, [(a, &window(&[a], 0))]);
    }

    /// `lab watch` shows a line per step, then the first failure in full:
    /// a stub's answer when the first open step is not written.
    #[test]
    fn a_watched_check_is_a_line_per_step_then_the_first_failure() {
        colored::control::set_override(false);
        let wrong = TestOutcome::Fail {
            check: "enqueue again".into(),
            expected: "false".into(),
            actual: "true".into(),
            state: None,
        };
        let [a, b] = [0, 1].map(|n| nth_of(2, Tag::Contract, n));
        let report = CheckReport::of(&run_with(&[(a, wrong.clone()), (b, wrong)]), 3);
        let text = watch_text(&report, 80);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("  step 1  passed"), "{text}");
        assert!(lines[1].starts_with("  step 2  failing"), "{text}");
        assert!(lines[2].starts_with("  step 3  passed"), "{text}");
        assert_eq!(
            lines[3..6],
            ["", "First failure, step 2:", &format!("      {a}")],
            "{text}"
        );
        assert!(text.contains("expected: false"), "{text}");
        assert!(!text.contains(b), "only the first failure: {text}");
        let printed = run_with(&[(a, stub(2))]);
        let mut printed = CheckReport::of(&printed, 3);
        printed.steps[1].failures[0].1 = TestOutcome::Crash {
            message: "it ended".into(),
        };
        printed.steps[1]
            .stderr
            .insert(a, window(&["1", "2", "3", "4", "5"], 2));
        let text = watch_text(&printed, 80);
        assert!(
            text.ends_with("(4 earlier lines left out):\n          3\n          4\n          5\n"),
            "{text}"
        );
        let stubbed = CheckReport::of(&run_with(&[(a, stub(2))]), 3);
        let text = watch_text(&stubbed, 80);
        assert!(
            text.contains(&format!("First failure, step 2:\n      {a}\n")),
            "{text}"
        );
        assert!(
            text.contains("it answers: step 2 is not written yet"),
            "{text}"
        );
        let passing = CheckReport::of(&run_with(&[]), 3);
        assert_eq!(watch_text(&passing, 80).lines().count(), 3);
    }

    #[test]
    fn a_step_s_line_fits_the_width() {
        colored::control::set_override(false);
        let crash = TestOutcome::Crash {
            message: "x".into(),
        };
        let report = CheckReport::of(&run_with(&[(first_of(8, Tag::Contract), crash)]), 8);
        let line = step_line(&report.steps[7], 70);
        assert!(line.lines().count() == 2, "{line}");
        assert!(
            line.lines().all(|line| line.chars().count() <= 70),
            "{line}"
        );
        assert!(
            line.lines().nth(1).unwrap().starts_with(DETAIL_INDENT),
            "{line}"
        );
    }
}
