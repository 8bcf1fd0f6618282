//! `lab`: the lease-lab command line. A thin layer over the library: it
//! parses arguments, calls the library, prints, and picks the exit code.

use clap::{Parser, Subcommand, ValueEnum};
use lease_lab::db_command::{self, DbOperation};
use lease_lab::display::{self, ColorChoice};
use lease_lab::exercise::{self, Exercise};
use lease_lab::matrix::Matrix;
use lease_lab::mutant::MutantKind;
use lease_lab::progress;
use lease_lab::runner::{self, RunOptions, WorkerCommand};
use lease_lab::suite::{self, Case};
use lease_lab::tour::{self, Console, Given};
use lease_lab::variant::{self, Variant};
use std::io::IsTerminal;
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
    /// The progress file (default: $LEASE_LAB_PROGRESS, else lease-lab-progress.json here).
    #[arg(long, global = true)]
    progress: Option<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// An exercise: the broken fragment, your prediction, the run, the comparison.
    Step {
        /// The exercise: 1 to 8, or 8b.
        exercise: String,
        /// The tests you predict will catch the mutant: numbers or names, comma-separated.
        #[arg(long)]
        predict: Option<String>,
        /// What input, error or stored state will reveal the difference.
        #[arg(long)]
        why: Option<String>,
        /// After step 8: why the earlier steps' tests are kept.
        #[arg(long)]
        why_kept: Option<String>,
        /// After step 8: one operational condition the lab does not guarantee.
        #[arg(long)]
        not_guaranteed: Option<String>,
        #[command(flatten)]
        run: RunArgs,
    },
    /// The next hint for an exercise (each call shows one more).
    Hint {
        /// The exercise: 1 to 8, or 8b.
        exercise: String,
        /// Show every hint at once.
        #[arg(long)]
        all: bool,
    },
    /// Forget the recorded progress: of one exercise, or of all.
    Reset {
        /// The exercise to forget; all of them when omitted.
        exercise: Option<String>,
    },
    /// Record the answers to the worksheet's closing questions.
    Reflect {
        /// Why the earlier steps' tests are kept at every later step.
        #[arg(long)]
        why_kept: String,
        /// One operational condition the lab does not guarantee.
        #[arg(long)]
        not_guaranteed: String,
    },
    /// The recorded predictions and scores.
    Progress {
        /// Output format.
        #[arg(long, value_enum, default_value_t = ProgressFormat::Text)]
        format: ProgressFormat,
    },
    /// The worksheet's story on a real database: A stalls, B takes over, A's late write.
    Demo {
        /// Replay it on a mutant instead of the reference (e.g. h06h).
        #[arg(long, default_value = variant::REFERENCE_ID)]
        variant: String,
        /// Keep the database at this path (default: a temporary one).
        #[arg(long)]
        db: Option<PathBuf>,
    },
    /// The kill matrix: every suite test against every variant.
    Matrix {
        /// Output format.
        #[arg(long, value_enum, default_value_t = MatrixFormat::Text)]
        format: MatrixFormat,
        /// Exit 1 when a mutant survives, the reference fails a test, or a
        /// mutant is caught by no test of its own step.
        #[arg(long)]
        check: bool,
        /// Only the reference and the mutants of this kind.
        #[arg(long, value_enum)]
        kind: Option<KindFilter>,
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
enum ProgressFormat {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum KindFilter {
    Worksheet,
    Hardening,
    Own,
}

impl KindFilter {
    fn kind(self) -> MutantKind {
        match self {
            KindFilter::Worksheet => MutantKind::Worksheet,
            KindFilter::Hardening => MutantKind::Hardening,
            KindFilter::Own => MutantKind::Own,
        }
    }
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
    let progress_path = progress::location(cli.progress.as_deref());
    match cli.command {
        None => overview(&progress_path),
        Some(command) => run(command, &progress_path),
    }
}

fn overview(progress_path: &std::path::Path) -> ExitCode {
    match progress::load(progress_path) {
        Ok(loaded) => {
            if let Some((aside, reason)) = &loaded.set_aside {
                eprintln!(
                    "lab: warning: {} could not be read ({reason}); it was moved to {}",
                    progress_path.display(),
                    aside.display()
                );
            }
            print!(
                "{}",
                display::overview_text(&loaded.progress, progress_path)
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!(
                "lab: cannot read the progress file {}: {error}",
                progress_path.display()
            );
            ExitCode::FAILURE
        }
    }
}

/// The exercise named on the command line, or a usage error listing them.
fn find_exercise(key: &str) -> Result<Exercise, String> {
    exercise::find(key).ok_or_else(|| {
        let keys: Vec<&str> = exercise::exercises().iter().map(|e| e.key).collect();
        format!(
            "no exercise {key:?}; the exercises are: {}",
            keys.join(", ")
        )
    })
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

fn run(command: Command, progress_path: &std::path::Path) -> ExitCode {
    match command {
        Command::Step {
            exercise,
            predict,
            why,
            why_kept,
            not_guaranteed,
            run,
        } => {
            let exercise = match find_exercise(&exercise) {
                Ok(exercise) => exercise,
                Err(message) => {
                    eprintln!("lab step: {message}");
                    return ExitCode::from(2);
                }
            };
            let Ok(worker) = worker_command() else {
                return ExitCode::FAILURE;
            };
            let given = Given {
                predict,
                why,
                probe: None,
                reflection: why_kept.zip(not_guaranteed),
            };
            let stdin = std::io::stdin();
            let interactive = stdin.is_terminal();
            let mut input = stdin.lock();
            let mut output = std::io::stdout().lock();
            let mut console = Console {
                input: &mut input,
                interactive,
                output: &mut output,
            };
            match tour::run(
                exercise,
                given,
                &mut console,
                &worker,
                &run.options(),
                progress_path,
            ) {
                Ok(_) => ExitCode::SUCCESS,
                Err(
                    error @ (tour::TourError::NoPrediction | tour::TourError::BadPrediction(_)),
                ) => {
                    eprintln!("lab step: {error}");
                    ExitCode::from(2)
                }
                Err(error) => {
                    eprintln!("lab step: {error}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Hint { exercise, all } => {
            let exercise = match find_exercise(&exercise) {
                Ok(exercise) => exercise,
                Err(message) => {
                    eprintln!("lab hint: {message}");
                    return ExitCode::from(2);
                }
            };
            let Some(lab) = exercise::lab(exercise.step()) else {
                eprintln!("lab hint: step {} has no text in labs/", exercise.step());
                return ExitCode::FAILURE;
            };
            with_progress(progress_path, |progress| {
                let record = progress.exercise(exercise.key);
                let shown = if all {
                    lab.hints.len()
                } else {
                    (record.hints_seen + 1).min(lab.hints.len())
                };
                record.hints_seen = record.hints_seen.max(shown);
                print!("{}", display::hints_text(&lab.hints, shown, exercise.key));
            })
        }
        Command::Reset { exercise } => {
            let key = match exercise.as_deref().map(find_exercise).transpose() {
                Ok(found) => found.map(|exercise| exercise.key),
                Err(message) => {
                    eprintln!("lab reset: {message}");
                    return ExitCode::from(2);
                }
            };
            with_progress(progress_path, |progress| match key {
                Some(key) => {
                    progress.exercises.remove(key);
                    println!("Forgot exercise {key}.");
                }
                None => {
                    *progress = progress::Progress::default();
                    println!("Forgot every exercise and the reflection.");
                }
            })
        }
        Command::Reflect {
            why_kept,
            not_guaranteed,
        } => {
            if why_kept.trim().is_empty() || not_guaranteed.trim().is_empty() {
                eprintln!("lab reflect: give both answers, --why-kept and --not-guaranteed, as non-empty text");
                return ExitCode::from(2);
            }
            with_progress(progress_path, |progress| {
                progress.reflection = Some(progress::Reflection {
                    at: progress::now_stamp(),
                    why_tests_are_kept: why_kept.clone(),
                    not_guaranteed: not_guaranteed.clone(),
                });
                println!("Recorded your reflection.");
            })
        }
        Command::Progress { format } => match progress::load(progress_path) {
            Ok(loaded) => {
                match format {
                    ProgressFormat::Json => println!(
                        "{}",
                        serde_json::to_string_pretty(&loaded.progress).expect("progress is JSON")
                    ),
                    ProgressFormat::Text => print!("{}", display::progress_text(&loaded.progress)),
                }
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!(
                    "lab progress: cannot read {}: {error}",
                    progress_path.display()
                );
                ExitCode::FAILURE
            }
        },
        Command::Demo { variant, db } => {
            let variant = match find_variant(&variant) {
                Ok(variant) => variant,
                Err(message) => {
                    eprintln!("lab demo: {message}");
                    return ExitCode::from(2);
                }
            };
            let folder = match tempfile::tempdir() {
                Ok(folder) => folder,
                Err(error) => {
                    eprintln!("lab demo: cannot make a temporary folder: {error}");
                    return ExitCode::FAILURE;
                }
            };
            let path = db.unwrap_or_else(|| folder.path().join("demo.db"));
            match lease_lab::demo::play(variant.operations(), &path) {
                Ok(story) => {
                    print!("{}", display::demo_text(&story, variant));
                    ExitCode::SUCCESS
                }
                Err(error) => {
                    eprintln!("lab demo: {error}");
                    ExitCode::FAILURE
                }
            }
        }
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
        Command::Matrix {
            format,
            check,
            kind,
            run,
        } => {
            let Ok(command) = worker_command() else {
                return ExitCode::FAILURE;
            };
            let tests: Vec<&'static Case> = suite::CASES.iter().collect();
            let variants: Vec<Variant> = Variant::all()
                .into_iter()
                .filter(|variant| match (kind, variant.mutant()) {
                    (Some(kind), Some(mutant)) => mutant.kind == kind.kind(),
                    _ => true,
                })
                .collect();
            let matrix = Matrix::build(&command, &variants, tests, &run.options());
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

/// Loads the progress file, lets `change` edit it, and saves it.
fn with_progress(path: &std::path::Path, change: impl FnOnce(&mut progress::Progress)) -> ExitCode {
    let loaded = match progress::load(path) {
        Ok(loaded) => loaded,
        Err(error) => {
            eprintln!(
                "lab: cannot read the progress file {}: {error}",
                path.display()
            );
            return ExitCode::FAILURE;
        }
    };
    if let Some((aside, reason)) = &loaded.set_aside {
        eprintln!(
            "lab: warning: {} could not be read ({reason}); it was moved to {}",
            path.display(),
            aside.display()
        );
    }
    let mut progress = loaded.progress;
    change(&mut progress);
    match progress::save(path, &progress) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!(
                "lab: cannot write the progress file {}: {error}",
                path.display()
            );
            ExitCode::FAILURE
        }
    }
}
