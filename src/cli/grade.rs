//! `lab grade`: a class's progress files graded, a row per student with
//! every score recomputed against today's kill matrix; the class per
//! exercise; the misconceptions; and with `--impl-dir` a check of every
//! student's own implementation.

use super::args::{worker_command, SuiteArgs};
use super::outcome::{say, say_line, CliError, Outcome};
use lease_lab::course::class_check::{self, Isolation};
use lease_lab::course::grade::{grade, killers, ClassGrade, FileStatus, StudentFile, Unreadable};
use lease_lab::course::progress;
use lease_lab::report::format::{GradeFormat, GradeView};
use lease_lab::report::grade as render;
use lease_lab::sandbox::Sandbox;
use std::path::PathBuf;

/// `lab grade`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The students' progress files.
    #[arg(required_unless_present = "impl_dir")]
    files: Vec<PathBuf>,
    /// Output format (markdown with --misconceptions only; html is the
    /// class page, with every view).
    #[arg(long, value_enum, default_value_t = GradeFormat::Text)]
    format: GradeFormat,
    /// Instead of a row per student: per exercise, the tests the class
    /// named that did not catch the mutant, with how many students named
    /// each and why; then the closing reflections.
    #[arg(long, conflicts_with = "per_exercise")]
    misconceptions: bool,
    /// Instead of a row per student: a row per exercise, the first attempts
    /// beside the latest and the item statistics (difficulty,
    /// discrimination, the mean attempts and hints).
    #[arg(long)]
    per_exercise: bool,
    /// A folder of the students' implementations (each entry a .py file or
    /// a Rust project's folder): each one is checked as `lab check` does,
    /// several at once, and its steps passed reported.
    #[arg(long, value_name = "DIR")]
    impl_dir: Option<PathBuf>,
    /// With --impl-dir --format gradescope: the folder to write each
    /// submission's Gradescope results.json into, as
    /// DIR/STUDENT/results.json.
    #[arg(long, value_name = "DIR", requires = "impl_dir")]
    results_dir: Option<PathBuf>,
    /// With --impl-dir: the longest one student's check may take, in seconds.
    #[arg(long, default_value_t = 60, requires = "impl_dir",
          value_parser = clap::value_parser!(u64).range(1..))]
    time_limit_s: u64,
    /// With --impl-dir: run each submission as you, with your files and
    /// network, instead of in a sandbox of its own (for code you trust, or
    /// where no sandbox can be made).
    #[arg(long, requires = "impl_dir")]
    no_sandbox: bool,
    #[command(flatten)]
    run: SuiteArgs,
}

/// `lab __sandbox`'s arguments.
#[derive(Debug, clap::Args)]
pub struct SandboxArgs {
    /// The sandbox, as JSON.
    #[arg(long)]
    sandbox: String,
    /// The program to run in it, and its arguments.
    #[arg(last = true, required = true)]
    program: Vec<std::ffi::OsString>,
}

/// `lab __sandbox`: makes the sandbox and runs the program in it, ending
/// with the program's exit code.
pub fn sandbox(args: &SandboxArgs) -> Outcome {
    let sandbox = Sandbox::from_arg(&args.sandbox)
        .map_err(|error| CliError::Usage(format!("--sandbox is not a sandbox: {error}")))?;
    let code = sandbox
        .run(&args.program)
        .map_err(|error| CliError::Failed(format!("the sandbox could not be made: {error}")))?;
    std::process::exit(code)
}

/// `lab grade`: reads every file (an unreadable one is a warning naming
/// it and why, and is skipped), grades the class and prints it.
///
/// Exit code 3 ([`CliError::Failed`]) when a file was skipped: the report
/// is complete for the others.
pub fn run(args: &Args) -> Outcome {
    let view = view(args)?;
    let (class, skipped) = read_class(&args.files);
    let skipped_names: Vec<String> = skipped.iter().map(|file| file.file.clone()).collect();
    if let Some(dir) = &args.impl_dir {
        check_implementations(dir, args)?;
    }
    if !class.is_empty() || args.impl_dir.is_none() {
        let killers = killers(&class, &worker_command()?, &args.run.options());
        let graded = grade(&class, skipped, &killers);
        warn_about_files(&graded);
        let width = lease_lab::terminal::width();
        let rendered = args
            .format
            .render(&graded, view, width)
            .expect("the pairs the lab does not write were refused above");
        say(&rendered)?;
    }
    if skipped_names.is_empty() {
        Ok(())
    } else {
        Err(CliError::Failed(format!(
            "{} skipped (see the warnings above); the other files were graded",
            skipped_names.join(", ")
        )))
    }
}

/// The view the arguments ask for, once their format and options are
/// known to go together: every pair [`GradeFormat::render`] cannot write
/// is refused here, before anything is read or run, saying what to give
/// instead.
///
/// Errors: [`CliError::Usage`] for a format and options that do not go
/// together.
fn view(args: &Args) -> Result<GradeView, CliError> {
    let view = if args.misconceptions {
        GradeView::Misconceptions
    } else if args.per_exercise {
        GradeView::PerExercise
    } else {
        GradeView::Students
    };
    if args.format == GradeFormat::Markdown && !args.misconceptions {
        return Err(CliError::Usage(
            "--format markdown writes the misconceptions: add --misconceptions, or choose text, json, csv or html".into(),
        ));
    }
    if args.format == GradeFormat::Csv && args.misconceptions {
        return Err(CliError::Usage(
            "--misconceptions has no CSV: choose text, json, markdown or html (the class page)"
                .into(),
        ));
    }
    if args.format == GradeFormat::Gradescope
        && (args.impl_dir.is_none() || args.results_dir.is_none() || !args.files.is_empty())
    {
        return Err(CliError::Usage(
            "--format gradescope writes a results.json per submission: give --impl-dir DIR and --results-dir OUT, and no progress files".into(),
        ));
    }
    if args.results_dir.is_some() && args.format != GradeFormat::Gradescope {
        return Err(CliError::Usage(
            "--results-dir is where --format gradescope writes: add --format gradescope".into(),
        ));
    }
    if args.impl_dir.is_some() {
        if matches!(args.format, GradeFormat::Markdown | GradeFormat::Html)
            || args.misconceptions
            || args.per_exercise
        {
            return Err(CliError::Usage(
                "--impl-dir reports as text, json or csv, without --misconceptions or --per-exercise".into(),
            ));
        }
        if args.format != GradeFormat::Text && !args.files.is_empty() {
            return Err(CliError::Usage(
                "with --impl-dir, --format json or csv reports the implementations alone: grade the progress files in a run of their own".into(),
            ));
        }
    }
    Ok(view)
}

/// The progress files read, in the order given, and those that could not
/// be, each with why in words (a warning on standard error names it as
/// it is skipped).
fn read_class(files: &[PathBuf]) -> (Vec<StudentFile>, Vec<Unreadable>) {
    let mut skipped: Vec<Unreadable> = Vec::new();
    let mut class = Vec::new();
    for file in files {
        match progress::read_for_grading(file) {
            Ok(progress) => class.push(StudentFile {
                file: file.display().to_string(),
                progress,
            }),
            Err(error) => {
                let reason = match error.kind() {
                    std::io::ErrorKind::NotFound => "there is no such file".to_string(),
                    std::io::ErrorKind::InvalidData => error.to_string(),
                    _ => format!("it cannot be read ({error})"),
                };
                eprintln!("lab grade: warning: {} skipped: {reason}", file.display());
                skipped.push(Unreadable {
                    file: file.display().to_string(),
                    reason,
                });
            }
        }
    }
    (class, skipped)
}

/// On standard error, what became of each file not graded as a row of its
/// own: given twice, merged into another student's row, or kept apart.
fn warn_about_files(graded: &ClassGrade) {
    for given in &graded.files {
        let row = |row: &usize| &graded.students[*row];
        match &given.status {
            FileStatus::GivenTwice => eprintln!(
                "lab grade: warning: {} is given twice: graded once",
                given.file
            ),
            FileStatus::MergedInto { row: at } => eprintln!(
                "lab grade: {} is {}'s too: merged into the row of {}",
                given.file,
                row(at).student,
                row(at).file
            ),
            FileStatus::NotMerged { why, .. } => {
                eprintln!("lab grade: warning: {}: {why}; graded apart", given.file)
            }
            FileStatus::Graded { .. } | FileStatus::Unreadable { .. } => {}
        }
    }
}

/// `--impl-dir`: every student's implementation checked, several at once
/// (as many as there are cores), each within the time limit; a row each.
fn check_implementations(dir: &std::path::Path, args: &Args) -> Outcome {
    let entries = class_check::entries(dir).map_err(|error| {
        CliError::Failed(format!("cannot read the folder {}: {error}", dir.display()))
    })?;
    let lab = std::env::current_exe().map_err(|error| {
        CliError::Failed(format!("cannot find the lab binary to run checks: {error}"))
    })?;
    let scratch = tempfile::tempdir()
        .map_err(|error| CliError::Failed(format!("cannot make a scratch folder: {error}")))?;
    let isolation = if args.no_sandbox {
        eprintln!(
            "{}",
            lease_lab::terminal::fill(
                "lab grade: warning: --no-sandbox: every submission runs as you, and can read and write your files and use the network; grade this way only code you trust",
                lease_lab::terminal::width(),
                "",
                "  ",
            )
        );
        Isolation::Unisolated
    } else {
        let isolation =
            Isolation::for_class(dir, &lab, scratch.path(), args.results_dir.as_deref());
        isolation.probe(&lab).map_err(CliError::Failed)?;
        isolation
    };
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let checks = class_check::check_all(
        &lab,
        &entries,
        std::time::Duration::from_secs(args.time_limit_s),
        cores,
        scratch.path(),
        args.results_dir.as_deref(),
        &isolation,
    )
    .map_err(|error| {
        CliError::Failed(format!(
            "cannot write Gradescope's results into {}: {error}",
            args.results_dir
                .as_deref()
                .unwrap_or(std::path::Path::new("."))
                .display()
        ))
    })?;
    match args.format {
        GradeFormat::Json => {
            say_line(&serde_json::to_string_pretty(&checks).expect("checks are JSON"))?
        }
        GradeFormat::Csv => say(&render::checks_csv(&checks))?,
        format => {
            say(&render::checks_text(&checks, lease_lab::terminal::width()))?;
            if let (GradeFormat::Gradescope, Some(folder)) = (format, &args.results_dir) {
                let written = format!(
                    "Gradescope's results.json of each of the {} submissions: {}/STUDENT/results.json",
                    checks.len(),
                    folder.display()
                );
                let width = lease_lab::terminal::width();
                say_line(&format!(
                    "\n{}",
                    lease_lab::terminal::fill(&written, width, "", "  ")
                ))?;
            }
        }
    }
    if !args.files.is_empty() && args.format == GradeFormat::Text {
        say("\n")?;
    }
    Ok(())
}
