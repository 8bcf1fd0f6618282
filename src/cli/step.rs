//! `lab step N`: parses the exercise and the prediction, and takes the
//! exercise on this terminal ([`lease_lab::tutor::step`]); saves the
//! attempt and says how it went.

use super::args::{worker_command, SuiteArgs};
use super::exit::{CliError, Outcome};
use lease_lab::matrix::Matrix;
use lease_lab::probe;
use lease_lab::subject::Subject;
use lease_lab::suite::Case;
use lease_lab::tutor::step::{take, Console, GivenPrediction, StepChoice, StepError};
use lease_lab::variant::Variant;
use std::path::{Path, PathBuf};

/// `lab step`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The exercise: 1 to 8, or 8b.
    exercise: String,
    /// The tests you predict will catch the mutant: numbers or names, comma-separated.
    #[arg(long)]
    predict: Option<String>,
    /// What input, error or stored state will reveal the difference.
    #[arg(long)]
    why: Option<String>,
    /// A probe file as the prediction: store operations with the answers you expect.
    #[arg(long)]
    probe: Option<PathBuf>,
    /// The first closing question (asked after the last exercise, 8b): why
    /// the earlier steps' tests are kept.
    #[arg(long)]
    why_kept: Option<String>,
    /// The second closing question: one operational condition the lab does
    /// not guarantee.
    #[arg(long)]
    not_guaranteed: Option<String>,
    /// Whose mutants: `rust` (the built-in store's) or `python` (the
    /// worksheet's own fragments, applied to the Python store). Anything
    /// else is your own implementation (a .py file, a Rust project, a
    /// command line), whose tests of steps 1 to N run after the verdicts;
    /// without it, your current implementation (`lab new`'s, or the last
    /// `lab check --impl`'s) runs, its language choosing the mutants.
    #[arg(long = "impl", value_name = "IMPL", value_parser = Subject::parse)]
    implementation: Option<Subject>,
    #[command(flatten)]
    run: SuiteArgs,
}

/// `lab step N`: the exercise from start to end, on this terminal.
pub fn run(args: Args, progress_path: &Path) -> Outcome {
    let mut session = super::session(progress_path)?;
    let chosen = StepChoice::of(args.implementation.as_ref(), session.progress());
    let exercise = chosen.exercise(&args.exercise).map_err(step_error)?;
    let worker = worker_command()?;
    let probe = args
        .probe
        .as_deref()
        .map(probe::load)
        .transpose()
        .map_err(|error| CliError::Usage(error.to_string()))?;
    let prediction = GivenPrediction {
        predict: args.predict,
        why: args.why,
        probe,
        reflection: args.why_kept.zip(args.not_guaranteed),
    };
    let options = args.run.options();
    let suite_runner = |variants: &[Variant], tests: Vec<&'static Case>| {
        Matrix::build(&worker, variants, tests, &options)
    };
    let taken = Console::with_terminal(|console| {
        take(
            &exercise,
            prediction,
            console,
            &suite_runner,
            &options,
            &mut session,
            (&chosen, &worker),
        )
    })
    .map_err(step_error)?;
    // Once, whatever the run of the student's own implementation gave:
    // the attempt is kept even when that run could not be made.
    session.save()?;
    taken.yours.map_err(CliError::from)
}

/// Why the step did not go through, as the command ends: a usage error,
/// unless the console or the store's files failed.
fn step_error(error: StepError) -> CliError {
    match error {
        StepError::Io(error) => CliError::from(error),
        error @ (StepError::NotReady(_) | StepError::Progress(_)) => {
            CliError::Failed(error.to_string())
        }
        error => CliError::Usage(error.to_string()),
    }
}
