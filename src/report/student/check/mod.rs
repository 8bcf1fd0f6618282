//! A check of a student's own implementation as terminal text: each step
//! passed, failing (with the call, the contract's answer and the
//! implementation's, for the first failures) or not written, the reference
//! tests apart, and what to do next.
//!
//! What the program wrote (its answers, its errors' messages and frames,
//! its standard error, a stub's words) is shown made inert
//! ([`crate::inert`]), and cut or filled to the width as it is shown.

use crate::child_process::StderrWindow;
use crate::course::check::{CheckReport, Halt, StepResult};
use crate::course::progress::StepStatus;
use crate::course::starter::OPERATIONS;
use crate::exercise;
use crate::fault::STDERR_INTRO;
use crate::frame::{Frame, Raised};
use crate::inert;
use crate::outcome::Outcome as TestOutcome;
use crate::terminal::{cut, failure_text, fill};
use colored::Colorize;
use std::fmt::Write as _;

mod halt;

/// How a check shows a step's status; a step whose tests were not run
/// (see [`StepResult::unjudged`]) is `not run`.
fn status_label(step: &StepResult) -> String {
    if let Some(label) = halt::status_label(step) {
        return label;
    }
    if step.unjudged() {
        return "not run    ".yellow().to_string();
    }
    match step.status {
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
                "status": if step.unjudged() {
                    serde_json::json!("not-run")
                } else {
                    serde_json::json!(step.status)
                },
                "not_run": step.not_run.len(),
                "tests": step.tests,
                "passed": step.tests - step.failures.len() - step.not_run.len(),
                "failures": failures,
            })
        })
        .collect();
    let ran: std::collections::BTreeSet<&str> =
        report.beyond.iter().map(|(test, _)| *test).collect();
    let tests: Vec<serde_json::Value> = crate::suite::cases_through(through)
        .filter(|case| case.judges_programs() || ran.contains(case.name))
        .map(|case| {
            let unrun = report
                .steps
                .iter()
                .flat_map(|step| &step.not_run)
                .find(|(test, _)| *test == case.name);
            let outcome = outcome_of(case.name);
            let (label, reason) = match unrun {
                // A test not run is no pass: it says why it did not run.
                Some((_, why)) => ("not-run", Some(format!("not run: {why}"))),
                None => (outcome.label(), outcome.reason()),
            };
            serde_json::json!({
                "name": case.name,
                "step": case.step,
                "contract": case.judges_programs(),
                "outcome": label,
                "reason": reason,
            })
        })
        .collect();
    serde_json::json!({
        "implementation": implementation,
        "greeting": report.greeting,
        "through": through,
        "all_pass": report.all_pass(),
        "steps_passed": report
            .steps
            .iter()
            .filter(|step| step.passed())
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
    // After a stop, or an error that later steps only meet again, the
    // first step not written says so in full; the others in their line.
    let mut told_unwritten = false;
    for step in &report.steps {
        out.push_str(&step_line(step, width));
        if let Some(Halt::Here(stop)) = &step.halt {
            out.push_str(&halt::stop_text(step, stop, width));
            continue;
        }
        let waiting = step.halt.is_some() || step.repeats.is_some();
        if let Some(said) = step.unwritten.as_deref().filter(|_| waiting) {
            if !told_unwritten {
                out.push_str(&stub_text(said, width));
                if let Some(at) = step.repeats {
                    out.push_str(&halt::repeats_text(step, at, width));
                }
                told_unwritten = true;
            }
            continue;
        }
        if let Some(at) = step.repeats {
            out.push_str(&halt::repeats_text(step, at, width));
            continue;
        }
        if step.unjudged() {
            continue;
        }
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
    if let Some(Halt::Here(stop)) = &open.halt {
        let title = format!(
            "Step {} {}:",
            open.step,
            open.halt.as_ref().map_or("", Halt::verb)
        );
        write!(out, "\n{}\n", title.bold()).unwrap();
        out.push_str(&halt::stop_text(open, stop, width));
        return out;
    }
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
            let raised = open.raised.get(name).map(Vec::as_slice);
            out.push_str(&failure_text_of(
                name,
                outcome,
                stderr.as_ref(),
                raised,
                width,
            ))
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
        _ if halt::step_detail(step).is_some() => halt::step_detail(step).unwrap_or_default(),
        _ if step.unjudged() => format!(": {} of {} tests not run", step.not_run.len(), step.tests)
            .dimmed()
            .to_string(),
        StepStatus::Passed => format!(" ({} tests)", step.tests).dimmed().to_string(),
        StepStatus::Failing if !step.not_run.is_empty() => format!(
            ": {} of {} fail, {} not run",
            step.failures.len(),
            step.tests,
            step.not_run.len()
        ),
        StepStatus::Failing => {
            format!(": {} of {} fail", step.failures.len(), step.tests)
        }
        StepStatus::NotImplemented => String::new(),
    };
    let line = format!(
        "  step {}  {}  {title}{detail}",
        step.step,
        status_label(step)
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
    let line = inert::line(&line);
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
                Some(reason) => format!("fails  {name}: {}", inert::lines(&reason)),
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
    // An error the program raised is shown once: the failures after the
    // first that only meet it again are named in one line.
    let mut errors_shown: Vec<&str> = Vec::new();
    let mut shown: Vec<&str> = Vec::new();
    let mut same: Vec<&str> = Vec::new();
    for (name, outcome) in broken.into_iter().chain(failed) {
        let raised_error = match outcome {
            TestOutcome::Fail { actual, .. } if step.raised.contains_key(name) => {
                Some(actual.as_str())
            }
            _ => None,
        };
        if raised_error.is_some_and(|error| errors_shown.contains(&error)) {
            same.push(name);
            continue;
        }
        if shown.len() == SHOWN_FAILURES {
            continue;
        }
        errors_shown.extend(raised_error);
        shown.push(name);
        out.push_str(&failure_text_of(
            name,
            outcome,
            step.stderr.get(name),
            step.raised.get(name).map(Vec::as_slice),
            width,
        ));
    }
    if !same.is_empty() {
        let line = format!("also failing on the same error: {}", same.join(", "));
        out.push_str(&fill(&line, width, "      ", "        "));
        out.push('\n');
    }
    let rest: Vec<&str> = step
        .failures
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| !shown.contains(name) && !same.contains(name))
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
/// whatever test wrote them; a test that wrote none shows those. A
/// failure whose answer was an error the program raised shows where in
/// its code (`raised`, see [`raised_text`]).
fn failure_text_of(
    name: &str,
    outcome: &TestOutcome,
    stderr: Option<&StderrWindow>,
    raised: Option<&[Raised]>,
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
        } => {
            out.push_str(&failure_text(
                check,
                expected,
                actual,
                state.as_ref().map(ToString::to_string).as_deref(),
                FAILURE_INDENT,
                width,
            ));
            out.push_str(&raised_text(actual, raised.unwrap_or_default(), width));
        }
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
            let first = inert::line(first);
            let said = match outcome {
                TestOutcome::Crash { .. } => format!("crashed: {first}"),
                _ => format!("timed out: {first}"),
            };
            writeln!(out, "{}", fill(&said, width, &pad, &pad)).unwrap();
            if own.is_none() {
                for line in lines {
                    let line = inert::line(line);
                    writeln!(out, "{}", cut(&format!("{pad}{line}"), width)).unwrap();
                }
            }
        }
        other => {
            let reason = other.reason().unwrap_or_default();
            writeln!(out, "{}", fill(&inert::lines(&reason), width, &pad, &pad)).unwrap();
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
        let line = inert::line(line);
        writeln!(out, "{}", cut(&format!("{pad}  {line}"), width)).unwrap();
    }
    out
}

/// Where the error a failure quotes as its `actual` was raised, when the
/// program said so (the last error it answered with that text, and its
/// frames): the innermost frame first, `raised in FUNCTION, line N of
/// FILE:`, then each caller, `called from ...`, each with its source line
/// under it, cut to the width (its spacing is code's).
fn raised_text(actual: &str, raised: &[Raised], width: usize) -> String {
    let Some(raised) = raised.iter().rev().find(|raised| raised.error == actual) else {
        return String::new();
    };
    let pad = " ".repeat(FAILURE_INDENT);
    let mut out = String::new();
    for (at, frame) in raised.frames.iter().rev().enumerate() {
        let how = if at == 0 { "raised" } else { "called from" };
        let place = Frame {
            code: None,
            ..frame.clone()
        };
        let line = format!("{how} {}:", inert::line(&place.to_string()));
        writeln!(out, "{}", fill(&line, width, &pad, &pad).dimmed()).unwrap();
        // The whole line, never cut (the culprit may be its last word):
        // filled at its spaces, and cut only where a word is wider than
        // the line.
        if let Some(code) = &frame.code {
            let code = inert::line(code);
            let filled = fill(&code, width, &format!("{pad}    "), &format!("{pad}      "));
            for line in filled.lines() {
                writeln!(out, "{}", cut(line, width)).unwrap();
            }
        }
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
        Some(open @ StepResult {
            halt: Some(Halt::Here(stop)),
            ..
        }) => halt::next_line(open, stop),
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
        None if !report.all_pass() => "Next: the check stopped at a test beyond the worksheet that ran out of time (`lab check --all` shows it); make that call answer, then `lab check` again.".to_string(),
        None if through < 8 => format!(
            "Steps 1 to {through} pass. Next: step {}, `lab check --step {}` (or `lab check` for all eight).",
            through + 1,
            through + 1
        ),
        None => format!("All eight steps pass. Next: `lab chaos --impl {impl_arg}` runs your store under 8 workers that stall, get killed mid-call and disagree about the time, and judges every answer. Then the worksheet's last instruction: break your code on purpose (a boundary comparison, the cleanup code), predict which tests fail, and let the lab score it: `lab check --predict TEST,TEST --why \"...\"`."),
    };
    // The line names the student's files and may quote a stub's words.
    let line = inert::line(&line);
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
mod tests;

/// A prediction of the tests a change of one's own breaks, beside what
/// failed; when nothing failed, the two things that can mean.
pub fn own_prediction_text(
    score: &crate::course::prediction::Score,
    nothing_failed: bool,
    width: usize,
) -> String {
    let mut text = crate::course::prediction::comparison(
        score,
        crate::course::prediction::Broken::YourChange,
        width,
    );
    if nothing_failed {
        text.push_str(&format!(
            "\n{}\n",
            fill(
                "No test fails: either your change does what the code did before (an equivalent change), or the suite misses it. Which input, error or stored state would show it? That test is missing.",
                width,
                "",
                ""
            )
        ));
    }
    text
}
