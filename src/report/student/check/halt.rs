//! How a check that stopped says so: the step that hung or crashed, with
//! the operation and the line it hung at (never which of its tests met it
//! first, which may change from run to run), the steps after it not run or
//! not written, and a step whose failures only repeat an earlier step's
//! error, in one line.

use super::DETAIL_INDENT;
use crate::course::check::{Halt, StepResult, Stop};
use crate::fault::seconds;
use crate::frame::Frame;
use crate::inert;
use crate::outcome::Outcome as TestOutcome;
use crate::terminal::{cut, fill};
use colored::Colorize;
use std::fmt::Write as _;
use std::time::Duration;

/// The operation of each step, as a hang is blamed on it when the lab did
/// not see which call was left unanswered.
const OPERATIONS: [&str; 8] = crate::operation::NAMES;

/// The operation a stop is blamed on: the call left unanswered, else the
/// step's own operation.
pub fn operation(stop: &Stop, step: u8) -> String {
    stop.unanswered.as_ref().map_or_else(
        || OPERATIONS[usize::from(step.clamp(1, 8)) - 1].to_string(),
        |unanswered| unanswered.operation.clone(),
    )
}

/// Where the program was when it hung: the innermost frame of its own
/// code, when it could tell.
pub fn place(stop: &Stop) -> Option<&Frame> {
    stop.unanswered.as_ref()?.hung_in.last()
}

/// What a stop is, in one sentence: `claim gave no answer within 2 s; it
/// hung in claim, line 197 of store.py, at `pass``, or `in claim: python3
/// store.py exited with code 1 in the middle of the run`.
pub fn stop_sentence(stop: &Stop, step: u8) -> String {
    let operation = operation(stop, step);
    match &stop.outcome {
        TestOutcome::Timeout { limit_ms, .. } => {
            // The call's own wait, when the lab saw the call hang: the
            // same whichever way the test's end came.
            let waited = stop
                .unanswered
                .as_ref()
                .and_then(|unanswered| unanswered.waited_ms)
                .unwrap_or(*limit_ms);
            let limit = seconds(Duration::from_millis(waited));
            match place(stop) {
                Some(frame) => {
                    format!("{operation} gave no answer within {limit}; it hung {frame}")
                }
                None => format!("{operation} gave no answer within {limit}"),
            }
        }
        TestOutcome::Crash { message } => {
            // The first line, without the request (its database's path is
            // new at every run) nor the lines of standard error after it.
            let first = message.lines().next().unwrap_or_default();
            let first = first
                .split("; the request was")
                .next()
                .unwrap_or(first)
                .trim_end_matches(crate::fault::STDERR_INTRO);
            format!("in {operation}: {first}")
        }
        _ => format!("{operation} did not answer"),
    }
}

/// A stopped step's details, under its line: the stop in one sentence,
/// then the last lines the program wrote on standard error during the
/// test that met it (a traceback, a debugging print), as written, each
/// cut to the width.
pub fn stop_text(step: &StepResult, stop: &Stop, width: usize) -> String {
    let sentence = inert::line(&stop_sentence(stop, step.step)).into_owned();
    let mut out = format!("{}\n", fill(&sentence, width, DETAIL_INDENT, DETAIL_INDENT));
    let said = step.stderr.get(stop.test).map(|window| window.last.clone());
    let lines = said.unwrap_or_else(|| {
        let message = match &stop.outcome {
            TestOutcome::Crash { message } => Some(message),
            TestOutcome::Timeout { detail, .. } => detail.as_ref(),
            _ => None,
        };
        message
            .map(|message| message.lines().skip(1).map(String::from).collect())
            .unwrap_or_default()
    });
    for line in lines.iter().rev().take(STDERR_LINES).rev() {
        let line = inert::line(line);
        writeln!(out, "{}", cut(&format!("{DETAIL_INDENT}{line}"), width)).unwrap();
    }
    out
}

/// How many of the last lines of standard error a stop shows.
const STDERR_LINES: usize = 6;

/// A step's line's detail for a step that stopped the check or came
/// after it, or only repeats an earlier step's error; `None` for any
/// other step.
pub fn step_detail(step: &StepResult) -> Option<String> {
    match (&step.halt, step.repeats) {
        (Some(Halt::Here(_)), _) => Some(String::new()),
        (Some(Halt::Earlier { step: at, .. }), _) if step.unwritten.is_none() => Some(
            format!(": step {at} {}", step.halt.as_ref().map_or("", Halt::verb))
                .dimmed()
                .to_string(),
        ),
        (Some(Halt::Earlier { .. }), _) => Some(String::new()),
        (None, Some(_)) if step.unwritten.is_some() => Some(String::new()),
        (None, Some(at)) => Some(
            format!(
                ": {} of {} fail on step {at}'s error",
                step.failures.len(),
                step.tests
            )
            .to_string(),
        ),
        (None, None) => None,
    }
}

/// The label of a step that stopped the check or came after it, or whose
/// failures only repeat an earlier step's error when it is not written;
/// `None` for any other step (its status says it).
pub fn status_label(step: &StepResult) -> Option<String> {
    let label = match &step.halt {
        Some(halt @ Halt::Here(_)) => {
            return Some(format!("{:<11}", halt.verb()).red().bold().to_string())
        }
        Some(Halt::Earlier { .. }) if step.unwritten.is_none() => "not run    ".yellow(),
        Some(Halt::Earlier { .. }) => "not written".yellow(),
        None if step.repeats.is_some() && step.unwritten.is_some() => "not written".yellow(),
        None => return None,
    };
    Some(label.to_string())
}

/// Under a step whose failures all repeat an earlier step's error: one
/// line that says so (the error is shown at that step).
pub fn repeats_text(step: &StepResult, at: u8, width: usize) -> String {
    let line = match &step.unwritten {
        Some(_) => format!("its tests meet step {at}'s error first"),
        None => format!("each failure is step {at}'s error above, met again"),
    };
    format!(
        "{}\n",
        fill(&line, width, DETAIL_INDENT, DETAIL_INDENT).dimmed()
    )
}

/// What to do next when the check stopped at `step`: make the operation
/// answer, at the line it hung at, or stop crashing.
pub fn next_line(step: &StepResult, stop: &Stop) -> String {
    let operation = operation(stop, step.step);
    let at = place(stop)
        .map(|frame| format!(": it hung {frame}"))
        .unwrap_or_default();
    if stop.hung {
        format!(
            "Next: make {operation} answer (step {}){at}. The steps after it wait for it: they run once it answers. Then `lab check` again, or keep `lab watch` running.",
            step.step
        )
    } else {
        format!(
            "Next: {operation} (step {}) ends your program in the middle of a call: its last lines of standard error above say where. The steps after it wait for it. Then `lab check` again, or keep `lab watch` running.",
            step.step
        )
    }
}
