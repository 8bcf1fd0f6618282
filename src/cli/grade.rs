//! `lab grade`: many students' progress files summarised per exercise, so
//! an instructor sees which observations a class found and which it missed.

use super::outcome::{say, say_line, CliError, Outcome, ReportFormat};
use lease_lab::course::grade::{grade, ClassGrade};
use lease_lab::course::progress;
use std::path::PathBuf;

/// `lab grade`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The progress files.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    format: ReportFormat,
}

/// `lab grade`: reads every file (any unreadable one is an error, and is
/// left as it is) and prints the class summary.
pub fn run(args: &Args) -> Outcome {
    let mut class = Vec::new();
    for file in &args.files {
        let progress = progress::read_for_grading(file)
            .map_err(|error| CliError::Failed(format!("{}: {error}", file.display())))?;
        class.push(progress);
    }
    let grade = grade(&class);
    match args.format {
        ReportFormat::Text => say(&grade_text(&grade)),
        ReportFormat::Json => {
            say_line(&serde_json::to_string_pretty(&grade).expect("a grade is JSON"))
        }
    }
}

/// The class summary as a table for the terminal.
pub fn grade_text(grade: &ClassGrade) -> String {
    let mut out = format!(
        "{} students, {} answered the closing reflection\n\n{:>8}  {:>9}  {:>17}  {:>12}  {:>10}  most common wrong guess\n",
        grade.students, grade.reflected, "exercise", "attempted", "named a killer", "probe killed", "mean score"
    );
    for entry in &grade.exercises {
        let wrong = entry
            .most_common_wrong_guess
            .as_ref()
            .map_or("-".to_string(), |(test, count)| format!("{test} ({count})"));
        let mean = if entry.attempted == 0 {
            "-".to_string()
        } else {
            format!("{}%", entry.mean_score)
        };
        out.push_str(&format!(
            "{:>8}  {:>9}  {:>17}  {:>12}  {:>10}  {wrong}\n",
            entry.exercise, entry.attempted, entry.predicted_a_killer, entry.probe_killed, mean
        ));
    }
    out
}
