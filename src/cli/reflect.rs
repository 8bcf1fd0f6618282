//! `lab reflect`: records the answers to the worksheet's closing
//! questions.

use super::exit::Outcome;
use lease_lab::tutor::step::Console;
use lease_lab::tutor::study::{self, Answers};
use std::path::Path;

/// `lab reflect` ([`study::reflect`]).
pub fn reflect(args: &Answers, progress_path: &Path) -> Outcome {
    let mut session = super::session(progress_path)?;
    Ok(Console::with_terminal(|console| {
        study::reflect(args, &mut session, console)
    })?)
}
