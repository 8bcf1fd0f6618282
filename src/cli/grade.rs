//! `lab grade`: a class's progress files graded, a row per student with
//! every score recomputed against today's kill matrix; the class per
//! exercise; the misconceptions; and with `--impl-dir` a check of every
//! student's own implementation.

use super::args::{worker_command, SuiteArgs};
use super::exit::{say, CliError, Outcome};
use lease_lab::course::class_check::{self, Judging};
use lease_lab::course::grade::{grade, killers, read_class};
use lease_lab::report::class::grade as render;
use lease_lab::report::format::{GradeAsked, GradeFormat};
use lease_lab::sandbox;
use lease_lab::subject::rust_project;
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
    /// where no sandbox can be made: the sandbox is bubblewrap's).
    #[arg(long, requires = "impl_dir")]
    no_sandbox: bool,
    #[command(flatten)]
    run: SuiteArgs,
}

/// `lab grade`: reads every file (an unreadable one is a warning naming
/// it and why, and is skipped), grades the class and prints it.
///
/// Exit code 3 ([`CliError::Failed`]) when a file was skipped: the report
/// is complete for the others.
pub fn run(args: &Args) -> Outcome {
    let view = args
        .format
        .view(GradeAsked {
            misconceptions: args.misconceptions,
            per_exercise: args.per_exercise,
            impl_dir: args.impl_dir.is_some(),
            results_dir: args.results_dir.is_some(),
            files: !args.files.is_empty(),
        })
        .map_err(CliError::Usage)?;
    let (class, skipped) = read_class(&args.files);
    for file in &skipped {
        eprintln!("lab grade: {}", render::skipped_warning(file));
    }
    let skipped_names: Vec<String> = skipped
        .iter()
        .map(|file| lease_lab::inert::line(&file.file).into_owned())
        .collect();
    if let Some(dir) = &args.impl_dir {
        check_implementations(dir, args)?;
    }
    if !class.is_empty() || args.impl_dir.is_none() {
        let killers = killers(&class, &worker_command()?, &args.run.options());
        let graded = grade(&class, skipped, &killers);
        for warning in render::file_warnings(&graded) {
            eprintln!("lab grade: {warning}");
        }
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

/// `--impl-dir`: every student's implementation checked, several at once
/// (as many as there are cores), each within the time limit, its
/// programs in sandboxes of their own unless `--no-sandbox`; a row each.
fn check_implementations(dir: &std::path::Path, args: &Args) -> Outcome {
    let entries = class_check::entries(dir).map_err(|error| {
        CliError::Failed(format!("cannot read the folder {}: {error}", dir.display()))
    })?;
    let lab = std::env::current_exe().map_err(|error| {
        CliError::Failed(format!("cannot find the lab binary to run checks: {error}"))
    })?;
    let scratch = tempfile::Builder::new()
        .prefix("lease-lab-grade-")
        .tempdir()
        .map_err(|error| CliError::Failed(format!("cannot make a scratch folder: {error}")))?;
    let width = lease_lab::terminal::width();
    if args.no_sandbox {
        eprintln!(
            "{}",
            lease_lab::terminal::fill(
                "lab grade: warning: --no-sandbox: every submission runs as you, and can read and write your files, use the network and forge its grade; grade this way only code you trust",
                width,
                "",
                "  ",
            )
        );
    } else {
        sandbox::probe().map_err(|error| {
            CliError::Failed(format!(
                "cannot sandbox the submissions: {error}; or pass --no-sandbox to run every submission as you, with your files and network"
            ))
        })?;
        let projects = entries
            .iter()
            .any(|entry| entry.refusal.is_none() && entry.path.is_dir());
        if projects {
            // Built once, before any check's time limit starts: each check
            // copies them.
            rust_project::prebuilt_dependencies(|folder| {
                eprintln!(
                    "{}",
                    lease_lab::terminal::fill(
                        &format!("lab grade: building the Rust starter's dependencies once, outside the sandboxes, in {} (about a minute)...", folder.display()),
                        width,
                        "",
                        "  ",
                    )
                );
            })
            .map_err(|failure| CliError::Failed(failure.message))?;
        }
    }
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let judging = Judging {
        lab,
        limit: std::time::Duration::from_secs(args.time_limit_s),
        jobs: cores,
        gradescope: args.results_dir.is_some(),
        sandboxed: !args.no_sandbox,
        check_args: vec!["--timeout-ms".into(), args.run.timeout_ms.to_string()],
    };
    let checks = class_check::check_all(&judging, &entries, scratch.path());
    if let Some(folder) = args.results_dir.as_deref() {
        lease_lab::report::class::gradescope::write_class(folder, &checks).map_err(|error| {
            CliError::Failed(format!(
                "cannot write Gradescope's results into {}: {error}",
                folder.display()
            ))
        })?;
    }
    say(&render::checks_report(
        &checks,
        args.format,
        args.results_dir.as_deref(),
        width,
    ))?;
    if !args.files.is_empty() && args.format == GradeFormat::Text {
        say("\n")?;
    }
    Ok(())
}
