//! `lab`: the lease-lab command line. A thin layer over the library: it
//! parses arguments, calls the library, prints, and picks the exit code.

use clap::{Parser, Subcommand, ValueEnum};
use lease_lab::db_command;
use lease_lab::display::{self, ColorChoice};
use lease_lab::exercise::{self, Exercise};
use lease_lab::matrix::Matrix;
use lease_lab::mutant::MutantKind;
use lease_lab::operation::Operation;
use lease_lab::progress;
use lease_lab::runner::{self, RunOptions, WorkerCommand};
use lease_lab::suite::{self, Case};
use lease_lab::tour::{self, Console, Given};
use lease_lab::variant::{self, Variant};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Prints to standard output. A reader that went away (`lab ... | head`)
/// ends the program quietly, as it would end `cat`, instead of a panic.
macro_rules! say_raw {
    ($($arg:tt)*) => {
        emit(format_args!($($arg)*))
    };
}

/// [`say_raw!`] with a new line.
macro_rules! say {
    ($($arg:tt)*) => {
        emit(format_args!("{}\n", format_args!($($arg)*)))
    };
}

fn emit(text: std::fmt::Arguments) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if let Err(error) = stdout.write_fmt(text).and_then(|()| stdout.flush()) {
        if error.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("lab: cannot write to standard output: {error}");
        std::process::exit(1);
    }
}

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
        /// A probe file as the prediction: store operations with the answers you expect.
        #[arg(long)]
        probe: Option<PathBuf>,
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
    /// Run a probe: your prediction as store operations and expected answers.
    Probe {
        /// The probe file.
        file: PathBuf,
        /// The mutant(s) it should kill (default: every mutant, for information).
        #[arg(long)]
        variant: Vec<String>,
        /// How often a probe that races claims is run before it counts as passing.
        #[arg(long, default_value_t = 1)]
        attempts: u32,
        /// The longest one run may take, in milliseconds.
        #[arg(long, default_value_t = 10_000)]
        timeout_ms: u64,
        /// Output format.
        #[arg(long, value_enum, default_value_t = ProgressFormat::Text)]
        format: ProgressFormat,
    },
    /// Write or check a mutant of your own.
    Mutant {
        #[command(subcommand)]
        action: MutantCommand,
    },
    /// Summarise many students' progress files, exercise by exercise.
    Grade {
        /// The progress files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
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
        /// Write the report to this file instead of standard output.
        #[arg(long, short)]
        output: Option<PathBuf>,
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

#[derive(Debug, Subcommand)]
enum MutantCommand {
    /// Write a template mutant file for a step, with a fragment of that step's code.
    New {
        /// The step (1 to 8) whose code to break.
        #[arg(long)]
        step: u8,
        /// The folder of mutant files.
        #[arg(long, default_value = "mutants")]
        dir: PathBuf,
    },
    /// Check a mutant file: it parses, its fragment occurs once, it changes code, and the crate builds with it.
    Check {
        /// The mutant file.
        file: PathBuf,
        /// Skip the build (the other checks take no time).
        #[arg(long)]
        no_build: bool,
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
    /// Stryker's mutation-testing-report schema, version 2.
    Stryker,
    /// One self-contained HTML page.
    Html,
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

impl From<DbCommand> for Operation {
    fn from(command: DbCommand) -> Operation {
        match command {
            DbCommand::Init => Operation::Init,
            DbCommand::Enqueue { job } => Operation::Enqueue { job },
            DbCommand::State { job } => Operation::State { job, field: None },
            DbCommand::Claim {
                job,
                owner,
                now,
                ttl,
            } => Operation::Claim {
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
            } => Operation::Renew {
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
            } => Operation::Complete {
                job,
                owner,
                fence,
                now,
                result,
            },
            DbCommand::Release { job, owner, fence } => Operation::Release { job, owner, fence },
            DbCommand::ClaimMany {
                job,
                owners,
                now,
                ttl,
            } => Operation::ClaimMany {
                job,
                owners,
                now,
                ttl,
                hold_lock: None,
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
    match load_progress(progress_path) {
        Ok(progress) => {
            say_raw!("{}", display::overview_text(&progress, progress_path));
            ExitCode::SUCCESS
        }
        Err(code) => code,
    }
}

/// Loads the progress file, telling the user if an unreadable one was set
/// aside; a file that cannot be read at all is reported and is an error.
fn load_progress(path: &std::path::Path) -> Result<progress::Progress, ExitCode> {
    match progress::load(path) {
        Ok(loaded) => {
            if let Some((aside, reason)) = &loaded.set_aside {
                eprintln!(
                    "lab: warning: {} could not be read ({reason}); it was moved to {}",
                    path.display(),
                    aside.display()
                );
            }
            Ok(loaded.progress)
        }
        Err(error) => {
            eprintln!(
                "lab: cannot read the progress file {}: {error}",
                path.display()
            );
            Err(ExitCode::FAILURE)
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
            probe,
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
            let probe = match probe.as_deref().map(lease_lab::probe::load).transpose() {
                Ok(probe) => probe,
                Err(error) => {
                    eprintln!("lab step: {error}");
                    return ExitCode::from(2);
                }
            };
            let given = Given {
                predict,
                why,
                probe,
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
                say_raw!("{}", display::hints_text(&lab.hints, shown, exercise.key));
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
                    say!("Forgot exercise {key}.");
                }
                None => {
                    *progress = progress::Progress::default();
                    say!("Forgot every exercise and the reflection.");
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
                say!("Recorded your reflection.");
            })
        }
        Command::Progress { format } => match load_progress(progress_path) {
            Ok(progress) => {
                match format {
                    ProgressFormat::Json => say!(
                        "{}",
                        serde_json::to_string_pretty(&progress).expect("progress is JSON")
                    ),
                    ProgressFormat::Text => say_raw!("{}", display::progress_text(&progress)),
                }
                ExitCode::SUCCESS
            }
            Err(code) => code,
        },
        Command::Probe {
            file,
            variant,
            attempts,
            timeout_ms,
            format,
        } => run_probe(&file, &variant, attempts, timeout_ms, format),
        Command::Mutant { action } => match action {
            MutantCommand::New { step, dir } => {
                match lease_lab::student_mutant::new_file(&dir, step) {
                    Ok(path) => {
                        say!(
                        "wrote {}\nedit its fragment, replacement, title and explanation, then: lab mutant check {}",
                        path.display(),
                        path.display()
                    );
                        ExitCode::SUCCESS
                    }
                    Err(error) => {
                        eprintln!("lab mutant new: {error}");
                        let usage = error.kind() == std::io::ErrorKind::InvalidInput;
                        ExitCode::from(if usage { 2 } else { 1 })
                    }
                }
            }
            MutantCommand::Check { file, no_build } => check_mutant(&file, no_build),
        },
        Command::Grade { files, format } => {
            let mut class = Vec::new();
            for file in &files {
                match progress::load_untouched(file) {
                    Ok(progress) => class.push(progress),
                    Err(error) => {
                        eprintln!("lab grade: {}: {error}", file.display());
                        return ExitCode::FAILURE;
                    }
                }
            }
            let grade = lease_lab::grade::grade(&class);
            match format {
                ProgressFormat::Text => say_raw!("{}", lease_lab::grade::grade_text(&grade)),
                ProgressFormat::Json => {
                    say!("{}", serde_json::to_string_pretty(&grade).expect("JSON"))
                }
            }
            ExitCode::SUCCESS
        }
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
                    say_raw!("{}", display::demo_text(&story, variant));
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
                Ok(answer) => say!("{answer}"),
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
            output,
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
            let report = match format {
                MatrixFormat::Text => {
                    let mut text = display::matrix_text(&matrix);
                    for summary in matrix.summaries() {
                        if let Some(advice) =
                            lease_lab::student_mutant::survivor_advice(&matrix, summary.id)
                        {
                            text.push_str(&format!("\n{advice}\n"));
                        }
                    }
                    text
                }
                MatrixFormat::Json => {
                    serde_json::to_string_pretty(&matrix.to_json()).expect("JSON") + "\n"
                }
                MatrixFormat::Markdown => matrix.to_markdown(),
                MatrixFormat::Stryker => {
                    serde_json::to_string_pretty(&lease_lab::report::stryker::report(&matrix))
                        .expect("JSON")
                        + "\n"
                }
                MatrixFormat::Html => lease_lab::report::html::page(&matrix),
            };
            match &output {
                None => say_raw!("{report}"),
                Some(path) => {
                    if let Err(error) = std::fs::write(path, &report) {
                        eprintln!("lab matrix: cannot write {}: {error}", path.display());
                        return ExitCode::FAILURE;
                    }
                    eprintln!("lab matrix: wrote {}", path.display());
                }
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
            say_raw!("{}", display::run_text(&matrix.runs[0], &matrix.tests));
            ExitCode::SUCCESS
        }
        Command::Tests { variants } => {
            if variants {
                say_raw!("{}", display::variants_text());
            } else {
                say_raw!("{}", display::tests_text());
            }
            ExitCode::SUCCESS
        }
    }
}

/// Loads the progress file, lets `change` edit it, and saves it.
fn with_progress(path: &std::path::Path, change: impl FnOnce(&mut progress::Progress)) -> ExitCode {
    let mut progress = match load_progress(path) {
        Ok(progress) => progress,
        Err(code) => return code,
    };
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

fn run_probe(
    file: &std::path::Path,
    ids: &[String],
    attempts: u32,
    timeout_ms: u64,
    format: ProgressFormat,
) -> ExitCode {
    let probe = match lease_lab::probe::load(file) {
        Ok(probe) => probe,
        Err(error) => {
            eprintln!("lab probe: {error}");
            return ExitCode::from(2);
        }
    };
    let mut mutants = Vec::new();
    for id in ids {
        match variant::mutant(id) {
            Some(mutant) => mutants.push(mutant),
            None => {
                let known: Vec<&str> = variant::MUTANTS.iter().map(|m| m.id).collect();
                eprintln!(
                    "lab probe: no mutant {id:?}; the mutants are: {}",
                    known.join(", ")
                );
                return ExitCode::from(2);
            }
        }
    }
    let chosen = !mutants.is_empty();
    if !chosen {
        mutants = variant::MUTANTS.iter().collect();
    }
    // A crashing mutant is a verdict here, reported in the output.
    std::panic::set_hook(Box::new(|_| {}));
    let options = lease_lab::probe::CheckOptions {
        timeout: Duration::from_millis(timeout_ms),
        attempts,
        ..lease_lab::probe::CheckOptions::default()
    };
    let check = match lease_lab::probe::check(&probe, &mutants, &options) {
        Ok(check) => check,
        Err(error) => {
            eprintln!("lab probe: {error}");
            return ExitCode::FAILURE;
        }
    };
    match format {
        ProgressFormat::Text => say_raw!("{}", lease_lab::probe::check_text(&probe, &check)),
        ProgressFormat::Json => say!("{}", serde_json::to_string_pretty(&check).expect("JSON")),
    }
    let holds = check.wrong_reading().is_none();
    if holds && (!chosen || check.kills_all()) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn check_mutant(file: &std::path::Path, no_build: bool) -> ExitCode {
    let validated = match lease_lab::student_mutant::validate(file) {
        Ok(validated) => validated,
        Err(error) => {
            eprintln!("lab mutant check: {error}");
            return ExitCode::FAILURE;
        }
    };
    say!(
        "{}: the fragment occurs once and the change is real",
        file.display()
    );
    for note in &validated.notes {
        say!("  {note}");
    }
    if no_build {
        return ExitCode::SUCCESS;
    }
    let folder = file.canonicalize().ok().and_then(|path| {
        path.ancestors()
            .skip(1)
            .find(|dir| dir.join("Cargo.toml").is_file())
            .map(std::path::Path::to_path_buf)
    });
    let Some(folder) = folder else {
        eprintln!(
            "lab mutant check: no Cargo.toml above {}: put the file in the crate's mutants/ folder",
            file.display()
        );
        return ExitCode::FAILURE;
    };
    say!(
        "building the lab with it (cargo build --release in {})...",
        folder.display()
    );
    match lease_lab::student_mutant::build(&folder) {
        Ok(()) => {
            say!("it builds: run `cargo run --release -- matrix` to see which tests kill it");
            ExitCode::SUCCESS
        }
        Err(failure) => {
            eprintln!("lab mutant check: {failure}");
            ExitCode::FAILURE
        }
    }
}
