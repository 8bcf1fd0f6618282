//! `lab matrix`: the kill matrix, every suite test against every variant,
//! in every format, and with `--check` what is wrong with it.

use super::args::{worker_command, ImplArgs, SuiteArgs};
use super::exit::{say_or_write, CliError, Outcome};
use lease_lab::chaos::beside::beside;
use lease_lab::matrix::Matrix;
use lease_lab::mutant::MutantKind;
use lease_lab::report::format::{plan_reports, Destination, MatrixFormat};
use lease_lab::variant::Variant;
use std::path::Path;

/// `lab matrix`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
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

/// `lab matrix`: every test against every variant (of a kind) of the
/// implementation the rule chooses ([`ImplArgs::following`]: `--impl`,
/// else the current one in the progress file at `progress`), rendered,
/// and with `--check` what is wrong with it.
pub fn matrix(args: &Args, progress: &Path) -> Outcome {
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
