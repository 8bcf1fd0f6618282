//! `lab db`: the store's eight operations from the shell, answering JSON.

use super::args::{EngineArg, ImplArgs};
use super::exit::{say_line, CliError, Outcome};
use lease_lab::error::StoreError;
use lease_lab::operation::Operation;
use lease_lab::runner::DEFAULT_TIMEOUT;
use lease_lab::subject::Subject;
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
    if args.implementation.engine == EngineArg::Postgres {
        return on_postgres(&args);
    }
    let store = args
        .implementation
        .variant(&args.variant)?
        .open(DEFAULT_TIMEOUT);
    answered(store.call(&args.db, &args.operation))
}

/// The store's answer printed, or its error with its exit code.
fn answered(answer: Result<lease_lab::operation::Answer, StoreError>) -> Outcome {
    match answer {
        Ok(answer) => say_line(&answer.to_json().to_string()),
        Err(error @ StoreError::InvalidArgument(_)) => Err(CliError::Usage(error.to_string())),
        // The program behind the store did not answer at all.
        Err(error @ StoreError::Fault(_)) => Err(CliError::Failed(error.to_string())),
        Err(error) => Err(CliError::Found(error.to_string())),
    }
}

/// The operation on the PostgreSQL store at the server given: the lab's
/// own store only (a mutant or a program runs on SQLite), and never a
/// throwaway cluster, which would be gone, with the job, when the command
/// ends.
fn on_postgres(args: &Args) -> Outcome {
    if args.variant != REFERENCE_ID || args.implementation.subject != Subject::Rust {
        return Err(CliError::Usage(
            "--engine postgres runs the lab's own store; leave out --variant and --impl".into(),
        ));
    }
    let Some(dsn) = lease_lab::pg_server::given(args.implementation.dsn.as_deref()) else {
        return Err(CliError::Usage(format!(
            "--engine postgres needs a server: give --dsn URL or set {} (a throwaway \
             cluster would be gone, with your jobs, when the command ends)",
            lease_lab::pg_server::DSN_VARIABLE
        )));
    };
    // A server it cannot reach is a command that could not run (exit 3),
    // as with every other command on PostgreSQL, not a finding.
    let store = lease_lab::store_postgres::Postgres::connect(&dsn)
        .map_err(|error| CliError::Failed(error.to_string()))?;
    answered(lease_lab::pg_server::call(&store, &args.operation))
}
