//! `lab reset`: forgets the recorded progress, of one exercise or of all.

use super::exit::Outcome;
use lease_lab::tutor::step::Console;
use lease_lab::tutor::study::{self, Forget};
use std::path::Path;

/// `lab reset [N]` ([`study::reset`]).
pub fn reset(args: &Forget, progress_path: &Path) -> Outcome {
    let mut session = super::session(progress_path)?;
    Ok(Console::with_terminal(|console| {
        study::reset(args, &mut session, console)
    })?)
}
