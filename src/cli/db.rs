//! `lab db`: the store's eight operations from the shell, answering JSON.

use super::args::ImplArgs;
use super::outcome::{say_line, CliError, Outcome};
use lease_lab::error::StoreError;
use lease_lab::operation::Operation;
use lease_lab::runner::DEFAULT_TIMEOUT;
use lease_lab::variant::REFERENCE_ID;
use std::path::PathBuf;

/// `lab db`'s arguments: the file, the variant, and the operation with its
/// own arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The database file.
    #[arg(long, global = true, default_value = "lease-lab.db")]
    db: PathBuf,
    /// Drive a mutant instead of the reference store.
    #[arg(long, global = true, default_value = REFERENCE_ID)]
    variant: String,
    #[command(flatten)]
    implementation: ImplArgs,
    /// The operation.
    #[command(subcommand)]
    operation: Operation,
}

/// Runs the operation and prints its answer as JSON: `true`/`false`, a
/// fence or `null`, the row as an object (`done` a boolean) or `null`, or
/// an array of fences and `null`s.
///
/// Exit codes: 0 whenever the operation ran (a `false` or `null` is an
/// answer), 2 for an invalid argument, 1 for any other error the store
/// answered, 3 when the program behind the store did not answer at all.
pub fn run(args: Args) -> Outcome {
    let store = args
        .implementation
        .variant(&args.variant)?
        .open(DEFAULT_TIMEOUT);
    match store.call(&args.db, &args.operation) {
        Ok(answer) => say_line(&answer.to_json().to_string()),
        Err(error @ StoreError::InvalidArgument(_)) => Err(CliError::Usage(error.to_string())),
        // The program behind the store did not answer at all.
        Err(error @ StoreError::Fault(_)) => Err(CliError::Failed(error.to_string())),
        Err(error) => Err(CliError::Found(error.to_string())),
    }
}
