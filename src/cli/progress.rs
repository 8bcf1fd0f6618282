//! `lab progress`: the recorded predictions and scores, the student's
//! implementations, the totals and what is next.

use super::exit::{say, say_line, Outcome};
use lease_lab::report::format::ReportFormat;
use lease_lab::report::student::progress::progress_text;
use std::path::Path;

/// `lab progress`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    format: ReportFormat,
}

/// `lab progress`: the recorded predictions and scores.
pub fn progress(args: &Args, progress_path: &Path) -> Outcome {
    let session = super::session(progress_path)?;
    let progress = session.progress();
    match args.format {
        ReportFormat::Json => {
            say_line(&serde_json::to_string_pretty(progress).expect("progress is JSON"))
        }
        ReportFormat::Text => say(&progress_text(progress, lease_lab::terminal::width())),
    }
}
