//! The `lab` command line: its clap types, one module per group of
//! commands, and what they share (errors with their exit codes, output
//! that ends quietly when the reader goes away, the progress file).
//!
//! Exit codes, for every command: 0 when the command did what it was asked
//! (for `lab db`, `false` and `null` are answers); 1 when it ran and found
//! something wrong (a mutant survived `lab matrix --check`, a probe did not
//! kill what it ran against, an operation failed); 2 for a usage error (an
//! unknown exercise, variant or test, an invalid argument, a probe that
//! does not parse).

pub mod db;
pub mod demo;
pub mod grade;
pub mod kill_matrix;
pub mod own_mutant;
pub mod prediction;
pub mod probe;
pub mod progress;
pub mod step;
pub mod study;

use clap::{Parser, Subcommand};
use lease_lab::exercise::{self, Exercise};
use lease_lab::runner::{self, RunOptions, WorkerArgs, WorkerCommand};
use lease_lab::terminal::ColorChoice;
use lease_lab::variant::Variant;
use std::fmt;
use std::io::{self, Write};
use std::path::PathBuf;
use std::time::Duration;

/// A teaching lab for fencing tokens: a SQLite job store with an ownership
/// lease and a fence that only grows, the contract suite that checks it, and
/// the broken versions (mutants) that suite must catch.
#[derive(Debug, Parser)]
#[command(name = "lab", version, about, long_about = None)]
pub struct Cli {
    /// When to colour the output (NO_COLOR is honoured under auto).
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, global = true)]
    pub color: ColorChoice,
    /// The progress file (default: $LEASE_LAB_PROGRESS, else lease-lab-progress.json here).
    #[arg(long, global = true)]
    pub progress: Option<PathBuf>,
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
    Hint(study::HintArgs),
    /// Forget the recorded progress: of one exercise, or of all.
    Reset(study::ResetArgs),
    /// Record the answers to the worksheet's closing questions.
    Reflect(study::ReflectArgs),
    /// The recorded predictions and scores.
    Progress(study::ProgressArgs),
    /// Run a probe: your prediction as store operations and expected answers.
    Probe(probe::Args),
    /// Write or check a mutant of your own.
    Mutant {
        /// What to do with it.
        #[command(subcommand)]
        action: own_mutant::Action,
    },
    /// Summarise many students' progress files, exercise by exercise.
    Grade(grade::Args),
    /// The worksheet's story on a real database: A stalls, B takes over, A's late write.
    Demo(demo::Args),
    /// The kill matrix: every suite test against every variant.
    Matrix(kill_matrix::MatrixArgs),
    /// The suite against one variant (`reference` or a mutant id), test by test.
    Run(kill_matrix::RunArgs),
    /// The suite's tests, by step; with --variants, the variants too.
    Tests(kill_matrix::TestsArgs),
    /// The store from the shell: one operation, its answer as JSON.
    Db(db::Args),
    /// Runs suite tests against one variant and reports each as a JSON line
    /// (used by the lab itself to isolate variants).
    #[command(name = "__worker", hide = true)]
    Worker(WorkerArgs),
}

impl Command {
    /// The command's name, as messages start: `lab step: ...`.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Step(_) => "step",
            Command::Hint(_) => "hint",
            Command::Reset(_) => "reset",
            Command::Reflect(_) => "reflect",
            Command::Progress(_) => "progress",
            Command::Probe(_) => "probe",
            Command::Mutant { .. } => "mutant",
            Command::Grade(_) => "grade",
            Command::Demo(_) => "demo",
            Command::Matrix(_) => "matrix",
            Command::Run(_) => "run",
            Command::Tests(_) => "tests",
            Command::Db(_) => "db",
            Command::Worker(_) => "__worker",
        }
    }
}

/// Why a command did not do what it was asked.
#[derive(Debug)]
pub enum CliError {
    /// The command was used wrongly: exit 2, with what to do instead.
    Usage(String),
    /// It ran into a failure, or found something wrong: exit 1.
    Failed(String),
    /// It found something wrong and has said so already: exit 1.
    Reported,
    /// The reader of its output went away (`lab ... | head`): exit 0, quietly.
    ClosedPipe,
}

impl CliError {
    /// The process's exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Usage(_) => 2,
            CliError::Failed(_) | CliError::Reported => 1,
            CliError::ClosedPipe => 0,
        }
    }

    /// The message to print, if any.
    pub fn message(&self) -> Option<&str> {
        match self {
            CliError::Usage(message) | CliError::Failed(message) => Some(message),
            CliError::Reported | CliError::ClosedPipe => None,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message().unwrap_or(""))
    }
}

/// Writing to standard output failed: a reader that went away ends the
/// command quietly, as it would end `cat`; anything else is a failure.
impl From<io::Error> for CliError {
    fn from(error: io::Error) -> CliError {
        if error.kind() == io::ErrorKind::BrokenPipe {
            CliError::ClosedPipe
        } else {
            CliError::Failed(format!("cannot write the output: {error}"))
        }
    }
}

/// What every command returns.
pub type Outcome = Result<(), CliError>;

/// How a command's report is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// Text for the terminal.
    Text,
    /// JSON for tools.
    Json,
}

/// Writes `text` to standard output and flushes it.
pub fn say(text: &str) -> Outcome {
    let mut stdout = io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()?;
    Ok(())
}

/// [`say`] with a line break after it.
pub fn say_line(text: &str) -> Outcome {
    say(&format!("{text}\n"))
}

/// What all commands share: where the student's progress is kept.
#[derive(Debug, Clone)]
pub struct Context {
    /// The progress file.
    pub progress: PathBuf,
}

impl Context {
    /// The context the global options give.
    pub fn new(cli: &Cli) -> Context {
        Context {
            progress: progress::location(cli.progress.as_deref()),
        }
    }
}

/// The exercise named on the command line, or a usage error listing them.
pub fn find_exercise(key: &str) -> Result<Exercise, CliError> {
    exercise::find(key).ok_or_else(|| {
        CliError::Usage(format!(
            "no exercise {key:?}; the exercises are: {}",
            exercise::keys()
        ))
    })
}

/// The variant named on the command line, or a usage error listing the ids.
pub fn find_variant(id: &str) -> Result<Variant, CliError> {
    // `correct` is what earlier versions called the reference.
    let id = if id == "correct" {
        lease_lab::variant::REFERENCE_ID
    } else {
        id
    };
    Variant::find(id).ok_or_else(|| {
        let ids: Vec<String> = Variant::all_compiled()
            .into_iter()
            .map(|variant| variant.id)
            .collect();
        CliError::Usage(format!(
            "no variant {id:?}; the variants are: {}",
            ids.join(", ")
        ))
    })
}

/// How to start the workers that run variants: this very binary.
pub fn worker_command() -> Result<WorkerCommand, CliError> {
    WorkerCommand::current_lab().map_err(|error| {
        CliError::Failed(format!(
            "cannot find the lab binary to start workers: {error}"
        ))
    })
}

/// How a suite run is carried out, as every command that runs one takes it.
#[derive(Debug, Clone, clap::Args)]
pub struct SuiteArgs {
    /// The longest one test may run, in milliseconds, before it counts as a timeout.
    #[arg(long, default_value_t = millis(runner::DEFAULT_TIMEOUT))]
    pub timeout_ms: u64,
    /// How many variants to run at once (default: twice the number of cores,
    /// since some tests wait on a lock while others work).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Where to put the tests' temporary databases.
    #[arg(long)]
    pub scratch: Option<PathBuf>,
}

/// A duration in whole milliseconds, for a default value.
pub fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

impl SuiteArgs {
    /// The run's options.
    pub fn options(&self) -> RunOptions {
        let defaults = RunOptions::default();
        RunOptions {
            timeout: Duration::from_millis(self.timeout_ms),
            scratch: self.scratch.clone().unwrap_or(defaults.scratch),
            jobs: self.jobs.unwrap_or(defaults.jobs).max(1),
        }
    }
}

/// The body of `lab __worker`.
pub fn worker(args: &WorkerArgs) -> Outcome {
    let mut stdout = io::stdout().lock();
    runner::serve(args, &mut stdout).map_err(|error| match error {
        runner::WorkerError::Usage(message) => CliError::Usage(message),
        runner::WorkerError::Io(error) => CliError::from(error),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn each_error_knows_its_exit_code() {
        assert_eq!(CliError::Usage("u".into()).exit_code(), 2);
        assert_eq!(CliError::Failed("f".into()).exit_code(), 1);
        assert_eq!(CliError::Reported.exit_code(), 1);
        assert_eq!(CliError::ClosedPipe.exit_code(), 0);
        assert_eq!(CliError::Reported.message(), None);
        let closed = CliError::from(io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(matches!(closed, CliError::ClosedPipe));
        let other = CliError::from(io::Error::other("disk full"));
        assert_eq!(other.message(), Some("cannot write the output: disk full"));
    }

    #[test]
    fn the_reference_is_found_by_its_old_name_too() {
        assert_eq!(find_variant("correct").unwrap().id, "reference");
        let error = find_variant("99").unwrap_err();
        assert!(
            error
                .to_string()
                .contains("the variants are: reference, 01"),
            "{error}"
        );
        assert_eq!(error.exit_code(), 2);
    }
}
