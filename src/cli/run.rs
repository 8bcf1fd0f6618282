//! `lab run`: the suite against one variant, test by test.

use super::args::{worker_command, ImplArgs, SuiteArgs};
use super::exit::{say, CliError, Outcome};
use lease_lab::matrix::Matrix;
use lease_lab::report;
use std::path::Path;

/// `lab run`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// `reference` or a mutant id, as `lab tests --variants` lists them.
    variant: String,
    #[command(flatten)]
    implementation: ImplArgs,
    #[command(flatten)]
    run: SuiteArgs,
}

/// `lab run ID`: the suite against one variant of the implementation the
/// rule chooses ([`ImplArgs::following`]), test by test.
pub fn run(args: &Args, progress: &Path) -> Outcome {
    let variant = args
        .implementation
        .following("run", progress)?
        .variant(&args.variant)?;
    let worker = worker_command()?;
    let tests = variant.suite();
    let matrix = Matrix::build(&worker, &[variant], tests, &args.run.options());
    say(&report::matrix::text::run(&matrix, &matrix.runs[0]))?;
    // A mutant is meant to fail tests; an implementation that is not one
    // fails the run when a test that judges it does not pass.
    if matrix.runs[0].variant.is_reference() && !matrix.problems().is_empty() {
        return Err(CliError::Reported);
    }
    Ok(())
}
