//! `lab` alone: every exercise with the student's progress, and what to
//! do next.

use super::exit::{say, Outcome};
use lease_lab::report::student::progress::overview_text;
use lease_lab::tutor::step::Console;
use lease_lab::tutor::study;
use std::path::Path;

/// `lab` alone: every exercise with the student's progress, and what to do next.
pub fn overview(progress_path: &Path) -> Outcome {
    let mut session = super::session(progress_path)?;
    if session.progress().student.is_none() {
        Console::with_terminal(|console| study::ask_student(&mut session, console))?;
    }
    say(&overview_text(
        session.progress(),
        progress_path,
        lease_lab::terminal::width(),
    ))
}
