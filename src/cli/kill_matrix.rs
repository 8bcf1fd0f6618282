//! The instructor's commands: the kill matrix in every format, the suite
//! against one variant, and the lists of tests and variants.

use super::args::{worker_command, ImplArgs, SuiteArgs};
use super::exit::{say, say_or_write, CliError, Outcome};
use lease_lab::chaos::beside::beside;
use lease_lab::matrix::Matrix;
use lease_lab::mutant::MutantKind;
use lease_lab::report;
use lease_lab::report::format::{plan_reports, Destination, MatrixFormat};
use lease_lab::runner::{self, WorkerArgs};
use lease_lab::variant::Variant;
use std::path::Path;

/// `lab matrix`'s arguments.
#[derive(Debug, clap::Args)]
pub struct MatrixArgs {
    /// Output format [default: text].
    #[arg(long, value_enum)]
    format: Option<MatrixFormat>,
    /// Exit 1 when a mutant survives, the reference fails a test, or a
    /// mutant is caught by no test of its own step.
    #[arg(long)]
    check: bool,
    /// Only the reference and the mutants of this kind.
    #[arg(long, value_parser = kind_names())]
    kind: Option<MutantKind>,
    /// Run every test against every mutant, those that call none of the
    /// operations its change reaches too (by default they are not run,
    /// and shown as not covered: they cannot catch it).
    #[arg(long)]
    every_test: bool,
    /// Also judge every variant by a chaos run (8 workers, 2000 calls, seed
    /// 1, every fault: `chaos::plan::Settings::beside_the_matrix`), and say
    /// which mutants only the tests, or only chaos, catch (with --format
    /// text or json).
    #[arg(long)]
    chaos: bool,
    /// Write the --format report to FILE instead of standard output; or,
    /// as FORMAT=FILE (repeatable), also a report of FORMAT to FILE, all
    /// from one run: `--output json=m.json --output html=m.html`.
    #[arg(long, short, value_name = "[FORMAT=]FILE")]
    output: Vec<String>,
    /// For stryker-html: Stryker's viewer, the folder of the npm package
    /// mutation-testing-elements (or its dist/mutation-test-elements.js).
    #[arg(long, value_name = "PATH")]
    viewer: Option<std::path::PathBuf>,
    #[command(flatten)]
    implementation: ImplArgs,
    #[command(flatten)]
    run: SuiteArgs,
}

/// `--kind`'s values: the kinds' names.
fn kind_names() -> impl clap::builder::TypedValueParser<Value = MutantKind> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(MutantKind::ALL.map(MutantKind::name))
        .map(|name: String| MutantKind::named(&name).expect("one of the kinds' names"))
}

/// `lab run`'s arguments.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// `reference` or a mutant id, as `lab tests --variants` lists them.
    variant: String,
    #[command(flatten)]
    implementation: ImplArgs,
    #[command(flatten)]
    run: SuiteArgs,
}

/// `lab tests`'s arguments.
#[derive(Debug, clap::Args)]
pub struct TestsArgs {
    /// List the variants of the implementation `--impl` names (its
    /// reference and every mutant, your own mutants included) instead.
    #[arg(long)]
    variants: bool,
    #[command(flatten)]
    implementation: ImplArgs,
}

/// `lab matrix`: every test against every variant (of a kind) of the
/// implementation the rule chooses ([`ImplArgs::following`]: `--impl`,
/// else the current one in the progress file at `progress`), rendered,
/// and with `--check` what is wrong with it.
pub fn matrix(args: &MatrixArgs, progress: &Path) -> Outcome {
    let planned = plan_reports(
        args.format,
        &args.output,
        args.chaos,
        args.viewer.as_deref(),
    )
    .map_err(|clash| CliError::Usage(clash.0))?;
    let worker = worker_command()?;
    let implementation = args.implementation.following("matrix", progress)?;
    let variants = Variant::of_kind(implementation.variants()?, args.kind);
    let options = args.run.options();
    let matrix = Matrix::of_suite(&worker, &variants, args.every_test, &options);
    let chaos = if args.chaos {
        Some(beside(&matrix, &variants, &worker, &options.scratch)?)
    } else {
        None
    };
    for (format, destination) in &planned.reports {
        let rendered = format
            .render(
                &matrix,
                chaos.as_ref(),
                planned.viewer.as_ref(),
                lease_lab::terminal::width(),
            )
            .map_err(|clash| CliError::Usage(clash.0))?;
        match destination {
            Destination::Stdout => say_or_write("matrix", &rendered, None)?,
            Destination::File(path) => say_or_write("matrix", &rendered, Some(path))?,
        }
    }
    if args.check {
        let mut problems = matrix.problems();
        if let Some((_, verdicts, _)) = &chaos {
            problems.extend(lease_lab::chaos::beside::problems(verdicts));
        }
        if !problems.is_empty() {
            for problem in &problems {
                // A problem may quote what a program wrote.
                eprintln!("lab matrix --check: {}", lease_lab::inert::lines(problem));
            }
            return Err(CliError::Reported);
        }
        eprintln!("lab matrix --check: ok: {}", matrix.check_passed());
    }
    Ok(())
}

/// `lab run ID`: the suite against one variant of the implementation the
/// rule chooses ([`ImplArgs::following`]), test by test.
pub fn run(args: &RunArgs, progress: &Path) -> Outcome {
    let variant = args
        .implementation
        .following("run", progress)?
        .variant(&args.variant)?;
    let worker = worker_command()?;
    let tests = variant.suite();
    let matrix = Matrix::build(&worker, &[variant], tests, &args.run.options());
    say(&report::text::run(&matrix, &matrix.runs[0]))?;
    // A mutant is meant to fail tests; an implementation that is not one
    // fails the run when a test that judges it does not pass.
    if matrix.runs[0].variant.is_reference() && !matrix.problems().is_empty() {
        return Err(CliError::Reported);
    }
    Ok(())
}

/// `lab tests [--variants]`: the tests, or the variants of the
/// implementation the rule chooses ([`ImplArgs::following`]).
pub fn tests(args: &TestsArgs, progress: &Path) -> Outcome {
    if args.variants {
        say(&report::text::variants_text(
            &args
                .implementation
                .following("tests", progress)?
                .variants()?,
            lease_lab::terminal::width(),
        ))
    } else {
        say(&report::text::tests_text(lease_lab::terminal::width()))
    }
}

/// The body of `lab __worker`.
pub fn worker(args: &WorkerArgs) -> Outcome {
    let mut stdout = std::io::stdout().lock();
    runner::serve(args, &mut stdout).map_err(CliError::from)
}
