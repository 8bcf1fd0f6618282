//! `lab analyze`: what the kill matrix means, for an instructor.

use super::args::{worker_command, ImplArgs, SuiteArgs};
use super::exit::{say_or_write, Outcome};
use lease_lab::analysis::Analysis;
use lease_lab::matrix::Matrix;
use lease_lab::report::format::AnalysisFormat;
use std::path::{Path, PathBuf};

/// `lab analyze`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Output format.
    #[arg(long, value_enum, default_value_t = AnalysisFormat::Text)]
    format: AnalysisFormat,
    /// Write the report to this file instead of standard output.
    #[arg(long, short)]
    output: Option<PathBuf>,
    #[command(flatten)]
    implementation: ImplArgs,
    #[command(flatten)]
    run: SuiteArgs,
}

/// `lab analyze`: builds the kill matrix as `lab matrix` does (of the
/// implementation the rule chooses, [`ImplArgs::following`]; a mutant
/// runs the tests that can run its change), analyses it, and renders it.
pub fn analyze(args: &Args, progress: &Path) -> Outcome {
    args.implementation.on_sqlite_only("analyze")?;
    let worker = worker_command()?;
    let variants = args
        .implementation
        .following("analyze", progress)?
        .variants()?;
    let matrix = Matrix::of_suite(&worker, &variants, false, &args.run.options());
    let found = Analysis::of(&matrix);
    let rendered = args.format.render(&found, lease_lab::terminal::width());
    say_or_write("analyze", &rendered, args.output.as_deref())
}
