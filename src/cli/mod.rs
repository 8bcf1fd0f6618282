//! The `lab` command line: its clap types, one module per command, and
//! what they share (errors with their exit codes, output that ends quietly
//! when the reader goes away, the progress file).
//!
//! The exit codes are decided in [`exit`], and only there.

pub mod analyze;
pub mod args;
pub mod chaos;
pub mod check;
pub mod db;
pub mod demo;
pub mod exit;
pub mod grade;
pub mod hint;
pub mod matrix;
pub mod mutant;
pub mod new;
pub mod overview;
pub mod probe;
pub mod progress;
pub mod reflect;
pub mod reset;
pub mod run;
pub mod step;
pub mod test_list;
pub mod watch;
pub mod worker;

use clap::{Parser, Subcommand};
use exit::CliError;
use lease_lab::course::progress::{ProgressError, StudentChange};
use lease_lab::course::session::Session;
use lease_lab::runner::WorkerArgs;
use lease_lab::terminal::ColorChoice;
use std::path::{Path, PathBuf};

/// A teaching lab for fencing tokens: a SQLite job store with an ownership
/// lease and a fence that only grows, the contract suite that checks it, and
/// the broken versions (mutants) that suite must catch.
#[derive(Debug, Parser)]
#[command(
    name = "lab",
    version,
    about,
    long_about = None,
    after_help = exit::EXIT_CODES_HELP,
    term_width = lease_lab::terminal::width()
)]
pub struct Cli {
    /// When to colour the output (NO_COLOR is honoured under auto).
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, global = true)]
    pub color: ColorChoice,
    /// The progress file (default: $LEASE_LAB_PROGRESS, else
    /// lease-lab-progress.json here or in the nearest folder above that has
    /// one).
    #[arg(long, global = true)]
    pub progress: Option<PathBuf>,
    /// Your name, as your instructor knows you: recorded in the progress
    /// file (once; giving another name changes it).
    #[arg(long, global = true, value_name = "NAME")]
    pub student: Option<String>,
    /// What to do; without it, the exercises and what to do next.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// An exercise: the broken fragment, your prediction, the run, the comparison.
    Step(step::Args),
    /// The next hint for an exercise (each call shows one more).
    Hint(hint::Args),
    /// Forget the recorded progress: of one exercise, or of all.
    Reset(lease_lab::tutor::study::Forget),
    /// Record the answers to the worksheet's closing questions.
    Reflect(lease_lab::tutor::study::Answers),
    /// The recorded predictions and scores, your implementations, the totals and what is next.
    Progress(progress::Args),
    /// Run a probe: your prediction as store operations and expected answers.
    Probe(probe::Args),
    /// Write your own implementation: a starter in Python or Rust, which becomes your current one.
    New(new::Args),
    /// Run the contract tests of steps 1 to N against your implementation, step by step.
    Check(check::Args),
    /// Check your implementation again each time you save it.
    Watch(watch::Args),
    /// Write or check a mutant of your own.
    Mutant {
        /// What to do with it.
        #[command(subcommand)]
        action: mutant::Action,
    },
    /// Grade a class from its progress files: a row per student, scores recomputed; or check their programs.
    Grade(grade::Args),
    /// The worksheet's story on a real database (A stalls, B takes over, A's late write), or the one that shows a mutant's break.
    Demo(demo::Args),
    /// Many workers, stalls, kills and skewed clocks against one database, judged from the history.
    Chaos(chaos::Args),
    /// The kill matrix: every suite test against every variant.
    Matrix(matrix::Args),
    /// What the kill matrix means: idle and redundant tests, subsumed mutants, a minimum test set.
    Analyze(analyze::Args),
    /// The suite against one variant (`reference` or a mutant id), test by test.
    Run(run::Args),
    /// The suite's tests, by step; with --variants, the variants too.
    Tests(test_list::Args),
    /// The store from the shell: one operation, its answer as JSON.
    Db(db::Args),
    /// Runs suite tests against one variant and reports each as a JSON line
    /// (used by the lab itself to isolate variants).
    #[command(name = "__worker", hide = true)]
    Worker(WorkerArgs),
    /// Serves one of the lab's compiled stores over the lab's protocol on
    /// standard input and output (used by `lab chaos` for its workers).
    #[command(name = "__serve", hide = true)]
    Serve(lease_lab::serve::ServeArgs),
}

impl Command {
    /// Whether it may start a PostgreSQL cluster or make network
    /// namespaces (with `--engine postgres`), which an interrupt must
    /// remove ([`lease_lab::pg_server::leftovers`]).
    pub fn may_start_a_server(&self) -> bool {
        matches!(
            self,
            Command::Chaos(_)
                | Command::Demo(_)
                | Command::Matrix(_)
                | Command::Run(_)
                | Command::Tests(_)
        )
    }

    /// Whether the command is the student's, reading or recording their
    /// progress: those take `--student`.
    pub fn records_progress(&self) -> bool {
        matches!(
            self,
            Command::Step(_)
                | Command::Hint(_)
                | Command::Reset(_)
                | Command::Reflect(_)
                | Command::Progress(_)
                | Command::New(_)
                | Command::Check(_)
                | Command::Watch(_)
        )
    }
}

/// Opens the student's progress for one command (see [`Session`]), saying
/// on standard error when an unreadable file was set aside.
pub fn session(path: &Path) -> Result<Session, CliError> {
    Ok(Session::open_saying(path)?)
}

/// Records `name` as the student's (`--student`), saying so when it
/// replaces another name; nothing is written when it is the same.
///
/// Errors: an empty name (a usage error; nothing is changed).
pub fn record_student(path: &Path, name: &str) -> Result<(), CliError> {
    let mut session = session(path)?;
    let change = session
        .record_student(name)
        .map_err(|error| CliError::Usage(error.to_string()))?;
    if let StudentChange::Replaced { previous } = &change {
        eprintln!(
            "lab: the student recorded in {} was {previous:?}; it is now {:?}, as --student says",
            path.display(),
            name.trim()
        );
    }
    Ok(session.save()?)
}

/// A check of an implementation that could not be made, as the command
/// ends: what `--impl` names cannot run, or the program did not greet.
impl From<lease_lab::course::check::CheckError> for CliError {
    fn from(error: lease_lab::course::check::CheckError) -> CliError {
        use lease_lab::course::check::CheckError;
        match error {
            CheckError::Subject(error) => CliError::from(error),
            CheckError::Fault(message) => CliError::Found(message),
            CheckError::Io(error) => CliError::from(error),
        }
    }
}

/// A `lab check` that stopped before its end: the check could not be
/// made, the progress file cannot be written, or the output failed.
impl From<lease_lab::tutor::check::CheckStopped> for CliError {
    fn from(error: lease_lab::tutor::check::CheckStopped) -> CliError {
        use lease_lab::tutor::check::CheckStopped;
        match error {
            CheckStopped::Check(error) => CliError::from(error),
            CheckStopped::Progress(error) => CliError::from(error),
            CheckStopped::Io(error) => CliError::from(error),
        }
    }
}

/// The progress file that could not be used is the command's failure.
/// A chaos run that could not be made is a failure of the run, not a
/// finding about the store.
impl From<lease_lab::chaos::run::RunError> for CliError {
    fn from(error: lease_lab::chaos::run::RunError) -> CliError {
        CliError::Failed(error.to_string())
    }
}

/// A command whose work is the library's that stopped: used wrongly, could
/// not do its work, or its input or output failed.
impl From<lease_lab::command::CommandError> for CliError {
    fn from(error: lease_lab::command::CommandError) -> CliError {
        use lease_lab::command::CommandError;
        match error {
            CommandError::Usage(message) => CliError::Usage(message),
            CommandError::Failed(message) => CliError::Failed(message),
            CommandError::Io(error) => CliError::from(error),
        }
    }
}

impl From<ProgressError> for CliError {
    fn from(error: ProgressError) -> CliError {
        CliError::Failed(error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }
}
