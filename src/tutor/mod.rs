//! The tutor: the commands a student works through at the console. Each one
//! changes the student's records through the course's [`crate::course::session`]
//! and shows [`crate::report`]'s screens as it goes, so it sits above both: the
//! course keeps the rules and the records, the report draws them, and neither
//! needs the other's console.
//!
//! - [`check`]: `lab check`, the student's implementation checked, recorded and
//!   shown; which implementation `lab check` and `lab watch` run;
//! - [`step`]: the step-through of `lab step N`, and the console it asks at;
//! - [`study`]: the changes at the console beyond the steps: the student's
//!   name, reset, the closing reflection;
//! - [`watch`]: `lab watch`'s rounds, a check on every save.

pub mod check;
pub mod step;
pub mod study;
pub mod watch;

use std::io::{self, Write};

/// Writes `text` to standard output and flushes it.
fn say(text: &str) -> io::Result<()> {
    let mut stdout = io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()
}
