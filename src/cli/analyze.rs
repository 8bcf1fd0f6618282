//! `lab analyze`: what the kill matrix means, for an instructor.

use super::args::{worker_command, ImplArgs, SuiteArgs};
use super::outcome::{say_or_write, Outcome};
use lease_lab::analysis::Analysis;
use lease_lab::matrix::Matrix;
use lease_lab::report::analysis;
use lease_lab::suite;
use std::path::PathBuf;

/// `lab analyze`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Write the report to this file instead of standard output.
    #[arg(long, short)]
    output: Option<PathBuf>,
    #[command(flatten)]
    implementation: ImplArgs,
    #[command(flatten)]
    run: SuiteArgs,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Format {
    /// Text for the terminal.
    Text,
    /// JSON for tools.
    Json,
    /// Markdown.
    Markdown,
    /// One self-contained HTML page, with the subsumption graph.
    Html,
}

/// `lab analyze`: builds the kill matrix as `lab matrix` does (a mutant
/// runs the tests that can run its change), analyses it, and renders it.
pub fn analyze(args: &Args) -> Outcome {
    let worker = worker_command()?;
    let variants = args.implementation.variants()?;
    let matrix = Matrix::build_covered(
        &worker,
        &variants,
        suite::CASES.iter().collect(),
        &args.run.options(),
    );
    let found = Analysis::of(&matrix);
    let rendered = match args.format {
        Format::Text => analysis::text(&found, lease_lab::terminal::width()),
        Format::Json => {
            serde_json::to_string_pretty(&analysis::json(&found)).expect("a report is JSON") + "\n"
        }
        Format::Markdown => analysis::markdown(&found),
        Format::Html => analysis::html::page(&found),
    };
    say_or_write("analyze", &rendered, args.output.as_deref())
}
