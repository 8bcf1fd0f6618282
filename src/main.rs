//! `lab`: the lease-lab command line. A thin layer over the library: it
//! parses arguments, calls the library, prints, and picks the exit code.

use clap::{Parser, Subcommand, ValueEnum};
use lease_lab::db_command::{self, DbOperation};
use lease_lab::display::{self, ColorChoice};
use lease_lab::matrix::Matrix;
use lease_lab::runner::{self, RunOptions, WorkerCommand};
use lease_lab::suite::{self, Case};
use lease_lab::variant::{self, Variant};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// A teaching lab for fencing tokens: a SQLite job store with an ownership
/// lease and a fence that only grows, the contract suite that checks it, and
/// the broken versions (mutants) that suite must catch.
#[derive(Debug, Parser)]
#[command(name = "lab", version, about, long_about = None)]
struct Cli {
    /// When to colour the output (NO_COLOR is honoured under auto).
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, global = true)]
    color: ColorChoice,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The kill matrix: every suite test against every variant.
    Matrix {
        /// Output format.
        #[arg(long, value_enum, default_value_t = MatrixFormat::Text)]
        format: MatrixFormat,
        /// Exit 1 when a mutant survives, the reference fails a test, or a
        /// mutant is caught by no test of its own step.
        #[arg(long)]
        check: bool,
        #[command(flatten)]
        run: RunArgs,
    },
    /// The suite against one variant (`correct` or a mutant id), test by test.
    Run {
        /// `correct` or a mutant id, as `lab tests --variants` lists them.
        variant: String,
        #[command(flatten)]
        run: RunArgs,
    },
    /// The suite's tests, by step; with --variants, the variants too.
    Tests {
        /// List the variants (the reference and every mutant) instead.
        #[arg(long)]
        variants: bool,
    },
    /// The store from the shell: one operation, its answer as JSON.
    Db {
        /// The database file.
        #[arg(long, global = true, default_value = "lease-lab.db")]
        db: PathBuf,
        /// Drive a mutant instead of the reference store.
        #[arg(long, global = true, default_value = variant::REFERENCE_ID)]
        variant: String,
        #[command(subcommand)]
        operation: DbCommand,
    },
    /// Runs suite tests against one variant and reports each as a JSON line
    /// (used by the lab itself to isolate variants).
    #[command(name = "__worker", hide = true)]
    Worker {
        #[arg(long)]
        variant: String,
        #[arg(long, value_delimiter = ',')]
        tests: Vec<String>,
        #[arg(long)]
        timeout_ms: u64,
        #[arg(long)]
        scratch: PathBuf,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum MatrixFormat {
    Text,
    Json,
    Markdown,
}

#[derive(Debug, clap::Args)]
struct RunArgs {
    /// The longest one test may run, in milliseconds, before it counts as a timeout.
    #[arg(long, default_value_t = 10_000)]
    timeout_ms: u64,
    /// How many variants to run at once (default: the number of cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Where to put the tests' temporary databases.
    #[arg(long)]
    scratch: Option<PathBuf>,
}

impl RunArgs {
    fn options(&self) -> RunOptions {
        let defaults = RunOptions::default();
        RunOptions {
            timeout: Duration::from_millis(self.timeout_ms),
            scratch: self.scratch.clone().unwrap_or(defaults.scratch),
            jobs: self.jobs.unwrap_or(defaults.jobs).max(1),
        }
    }
}

#[derive(Debug, Subcommand)]
enum DbCommand {
    /// Create the database and its jobs table if missing (idempotent).
    Init,
    /// Add a job; `true` if new, `false` if it existed (then unchanged).
    Enqueue { job: String },
    /// The stored row as an object, or `null`.
    State { job: String },
    /// Take an expired lease: the new fence, or `null`.
    Claim {
        job: String,
        owner: String,
        #[arg(long, allow_negative_numbers = true)]
        now: f64,
        #[arg(long, allow_negative_numbers = true)]
        ttl: f64,
    },
    /// Extend the current lease: `true` or `false`.
    Renew {
        job: String,
        owner: String,
        #[arg(allow_negative_numbers = true)]
        fence: i64,
        #[arg(long, allow_negative_numbers = true)]
        now: f64,
        #[arg(long, allow_negative_numbers = true)]
        ttl: f64,
    },
    /// Store the result of the current lease: `true` or `false`.
    Complete {
        job: String,
        owner: String,
        #[arg(allow_negative_numbers = true)]
        fence: i64,
        #[arg(long, allow_negative_numbers = true)]
        now: f64,
        #[arg(long)]
        result: String,
    },
    /// Give the current lease back: `true` or `false`.
    Release {
        job: String,
        owner: String,
        #[arg(allow_negative_numbers = true)]
        fence: i64,
    },
    /// Race one claim per owner: an array of fences and nulls, in owner order.
    ClaimMany {
        job: String,
        owners: Vec<String>,
        #[arg(long, allow_negative_numbers = true)]
        now: f64,
        #[arg(long, allow_negative_numbers = true)]
        ttl: f64,
    },
}

impl From<DbCommand> for DbOperation {
    fn from(command: DbCommand) -> DbOperation {
        match command {
            DbCommand::Init => DbOperation::Init,
            DbCommand::Enqueue { job } => DbOperation::Enqueue { job },
            DbCommand::State { job } => DbOperation::State { job },
            DbCommand::Claim {
                job,
                owner,
                now,
                ttl,
            } => DbOperation::Claim {
                job,
                owner,
                now,
                ttl,
            },
            DbCommand::Renew {
                job,
                owner,
                fence,
                now,
                ttl,
            } => DbOperation::Renew {
                job,
                owner,
                fence,
                now,
                ttl,
            },
            DbCommand::Complete {
                job,
                owner,
                fence,
                now,
                result,
            } => DbOperation::Complete {
                job,
                owner,
                fence,
                now,
                result,
            },
            DbCommand::Release { job, owner, fence } => DbOperation::Release { job, owner, fence },
            DbCommand::ClaimMany {
                job,
                owners,
                now,
                ttl,
            } => DbOperation::ClaimMany {
                job,
                owners,
                now,
                ttl,
            },
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    display::apply_color(cli.color);
    match cli.command {
        None => {
            println!("lab: see `lab --help`");
            ExitCode::SUCCESS
        }
        Some(command) => run(command),
    }
}

/// The variant named on the command line, or a usage error listing the ids.
fn find_variant(id: &str) -> Result<Variant, String> {
    Variant::find(id).ok_or_else(|| {
        let ids: Vec<&str> = Variant::all().iter().map(Variant::id).collect();
        format!("no variant {id:?}; the variants are: {}", ids.join(", "))
    })
}

fn worker_command() -> Result<WorkerCommand, ExitCode> {
    WorkerCommand::current_lab().map_err(|error| {
        eprintln!("lab: cannot find the lab binary to start workers: {error}");
        ExitCode::FAILURE
    })
}

fn run(command: Command) -> ExitCode {
    match command {
        Command::Db {
            db,
            variant,
            operation,
        } => {
            let store = match find_variant(&variant) {
                Ok(variant) => variant.operations(),
                Err(message) => {
                    eprintln!("lab db: {message}");
                    return ExitCode::from(2);
                }
            };
            let outcome = db_command::run(store, &db, &operation.into());
            match &outcome {
                Ok(answer) => println!("{answer}"),
                Err(error) => eprintln!("lab db: {error}"),
            }
            ExitCode::from(u8::try_from(db_command::exit_code(&outcome)).unwrap_or(1))
        }
        Command::Worker {
            variant,
            tests,
            timeout_ms,
            scratch,
        } => {
            let Ok(variant) = find_variant(&variant) else {
                eprintln!("lab __worker: no variant {variant:?}");
                return ExitCode::from(2);
            };
            let cases: Option<Vec<&'static Case>> =
                tests.iter().map(|name| suite::case(name)).collect();
            let Some(cases) = cases else {
                eprintln!("lab __worker: unknown test in {tests:?}");
                return ExitCode::from(2);
            };
            let options = RunOptions {
                timeout: Duration::from_millis(timeout_ms),
                scratch,
                jobs: 1,
            };
            let mut stdout = std::io::stdout().lock();
            match runner::work(variant, &cases, &options, &mut stdout) {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => {
                    eprintln!("lab __worker: {error}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Matrix { format, check, run } => {
            let Ok(command) = worker_command() else {
                return ExitCode::FAILURE;
            };
            let tests: Vec<&'static Case> = suite::CASES.iter().collect();
            let matrix = Matrix::build(&command, &Variant::all(), tests, &run.options());
            match format {
                MatrixFormat::Text => print!("{}", display::matrix_text(&matrix)),
                MatrixFormat::Json => println!(
                    "{}",
                    serde_json::to_string_pretty(&matrix.to_json()).expect("JSON")
                ),
                MatrixFormat::Markdown => print!("{}", matrix.to_markdown()),
            }
            let problems = matrix.problems();
            if check && !problems.is_empty() {
                for problem in &problems {
                    eprintln!("lab matrix --check: {problem}");
                }
                return ExitCode::FAILURE;
            }
            if check {
                eprintln!(
                    "lab matrix --check: ok: the reference passes all {} tests and every one of the {} mutants is caught by a test of its own step",
                    matrix.tests.len(),
                    matrix.runs.len() - 1
                );
            }
            ExitCode::SUCCESS
        }
        Command::Run { variant, run } => {
            let variant = match find_variant(&variant) {
                Ok(variant) => variant,
                Err(message) => {
                    eprintln!("lab run: {message}");
                    return ExitCode::from(2);
                }
            };
            let Ok(command) = worker_command() else {
                return ExitCode::FAILURE;
            };
            let tests: Vec<&'static Case> = suite::CASES.iter().collect();
            let matrix = Matrix::build(&command, &[variant], tests, &run.options());
            print!("{}", display::run_text(&matrix.runs[0], &matrix.tests));
            ExitCode::SUCCESS
        }
        Command::Tests { variants } => {
            if variants {
                print!("{}", display::variants_text());
            } else {
                print!("{}", display::tests_text());
            }
            ExitCode::SUCCESS
        }
    }
}
