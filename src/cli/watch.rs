//! `lab watch`: the student's own implementation checked as `lab check`
//! checks it, now and again on every save.

use super::args::{worker_command, SuiteArgs, WhichArgs};
use super::exit::{CliError, Outcome};
use lease_lab::tutor::check::checked;
use lease_lab::tutor::watch::watch as course_watch;
use std::path::Path;

/// `lab watch`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    which: WhichArgs,
    #[command(flatten)]
    run: SuiteArgs,
}

/// `lab watch`: a check now, and again after each save of the
/// implementation's files, until interrupted.
pub fn watch(args: &Args, progress_path: &Path) -> Outcome {
    let mut session = super::session(progress_path)?;
    let (chosen, named) = checked(args.which.implementation.as_ref(), &mut session)?;
    session.save()?;
    let through = args.which.step.unwrap_or(8);
    let worker = worker_command()?;
    course_watch(
        &chosen.subject,
        named.trim_end_matches(','),
        through,
        &args.run.options(),
        &worker,
        progress_path,
    )
    .map_err(CliError::from)
}
