//! `lab hint`: the next hint of an exercise, one more each time (or all
//! of them), remembered in the progress file.

use super::args::find_exercise;
use super::exit::{say, say_line, Outcome};
use colored::Colorize;
use lease_lab::report::student::progress::{hints_text, wrapped};
use lease_lab::subject::Subject;
use lease_lab::tutor::step::StepChoice;
use std::path::Path;

/// `lab hint`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
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

/// `lab hint [N]`: one more hint each time (or all of them), remembered;
/// without N, of the next exercise, the one `lab` alone names.
pub fn hint(args: &Args, progress_path: &Path) -> Outcome {
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
