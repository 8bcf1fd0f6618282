//! The student's own commands around the exercises: the overview (`lab`
//! alone), hints, reset, the closing reflection, and the recorded progress.

use super::args::find_exercise;
use super::exit::{say, say_line, Outcome};
use colored::Colorize;
use lease_lab::report::format::ReportFormat;
use lease_lab::report::progress::{hints_text, overview_text, progress_text, wrapped};
use lease_lab::subject::Subject;
use lease_lab::tutor::step::{Console, StepChoice};
use lease_lab::tutor::study::{self, Answers, Forget};
use std::path::Path;

/// `lab hint`'s arguments.
#[derive(Debug, clap::Args)]
pub struct HintArgs {
    /// The exercise: 1 to 8, or 8b (default: the next one, as `lab` shows
    /// it).
    exercise: Option<String>,
    /// Show every hint at once.
    #[arg(long)]
    all: bool,
    /// Whose exercise, which decides the language of its hints: `rust` or
    /// `python`; without it, that of your current implementation, else
    /// `rust`.
    #[arg(long = "impl", value_name = "IMPL", value_parser = Subject::parse)]
    implementation: Option<Subject>,
}

/// `lab progress`'s arguments.
#[derive(Debug, clap::Args)]
pub struct ProgressArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    format: ReportFormat,
}

/// `lab` alone: every exercise with the student's progress, and what to do next.
pub fn overview(progress_path: &Path) -> Outcome {
    let mut session = super::session(progress_path)?;
    if session.progress().student.is_none() {
        Console::with_terminal(|console| study::ask_student(&mut session, console))?;
    }
    say(&overview_text(
        session.progress(),
        progress_path,
        lease_lab::terminal::width(),
    ))
}

/// `lab hint [N]`: one more hint each time (or all of them), remembered;
/// without N, of the next exercise, the one `lab` alone names.
pub fn hint(args: &HintArgs, progress_path: &Path) -> Outcome {
    let mut session = super::session(progress_path)?;
    let exercise = match &args.exercise {
        Some(key) => find_exercise(key)?,
        None => match session.progress().next_exercise() {
            Some(next) => next,
            None => {
                return say_line(&wrapped(
                    &format!(
                        "Every exercise has an attempt, so there is no next one: lab hint N gives the hints of exercise N ({}).",
                        lease_lab::exercise::keys()
                    ),
                    lease_lab::terminal::width(),
                    "",
                    "",
                ))
            }
        },
    };
    // The exercises are the same rows in both languages: only the wording
    // of the text follows the student's (no store is made ready to run).
    let lab = exercise
        .lab_in(StepChoice::of(args.implementation.as_ref(), session.progress()).language());
    let shown = session.show_hint(&exercise.key, lab.hints.len(), args.all);
    session.save()?;
    let named = match &args.exercise {
        Some(_) => String::new(),
        None => format!(
            "{}\n\n",
            format!("Exercise {}: {}", exercise.key, exercise.label()).bold()
        ),
    };
    say(&format!(
        "{named}{}",
        hints_text(
            &lab.hints,
            shown,
            &exercise.key,
            lease_lab::terminal::text_width(),
        )
    ))
}

/// `lab reset [N]` ([`study::reset`]).
pub fn reset(args: &Forget, progress_path: &Path) -> Outcome {
    let mut session = super::session(progress_path)?;
    Ok(Console::with_terminal(|console| {
        study::reset(args, &mut session, console)
    })?)
}

/// `lab reflect` ([`study::reflect`]).
pub fn reflect(args: &Answers, progress_path: &Path) -> Outcome {
    let mut session = super::session(progress_path)?;
    Ok(Console::with_terminal(|console| {
        study::reflect(args, &mut session, console)
    })?)
}

/// `lab progress`: the recorded predictions and scores.
pub fn progress(args: &ProgressArgs, progress_path: &Path) -> Outcome {
    let session = super::session(progress_path)?;
    let progress = session.progress();
    match args.format {
        ReportFormat::Json => {
            say_line(&serde_json::to_string_pretty(progress).expect("progress is JSON"))
        }
        ReportFormat::Text => say(&progress_text(progress, lease_lab::terminal::width())),
    }
}
