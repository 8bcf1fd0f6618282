//! `lab mutant new` and `lab mutant check`: a mutant of one's own, written
//! from a template and checked. What they do is the library's
//! ([`lease_lab::course::own_mutant`]); this module parses, calls and
//! prints, and runs a checked mutant against the suite with the variants
//! of [`lease_lab::subject::own_mutants`], which finds a mutant of one's
//! own in the mutants folder when `lab` runs.

use super::args::{worker_command, SuiteArgs};
use super::exit::{say_line, CliError, Outcome};
use lease_lab::course::chosen::{Chosen, How};
use lease_lab::course::own_mutant::{new_file, validate, NewFileError};
use lease_lab::matrix::Matrix;
use lease_lab::mutant::{MUTABLE_FILE, PYTHON_STORE};
use lease_lab::report;
use lease_lab::subject::own_mutants::{python_variant, rust_variant};
use lease_lab::subject::Subject;
use lease_lab::terminal::fill_lines;
use std::path::{Path, PathBuf};

/// What `lab mutant` does.
#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Write a template mutant file for a step, with a fragment of that step's code.
    New {
        /// The step (1 to 8) whose code to break.
        #[arg(long)]
        step: u8,
        /// The folder of mutant files (made if missing).
        #[arg(long, default_value = "mutants")]
        dir: PathBuf,
        /// Whose code: `rust` (crates/store/src/store.rs) or `python` (src/store.py);
        /// default: the store in the language of your current
        /// implementation (Python for a .py file), else `rust`.
        #[arg(long = "impl", value_name = "IMPL", value_parser = Subject::parse)]
        implementation: Option<Subject>,
    },
    /// Check a mutant file (it parses, its fragment occurs once, it changes
    /// code), build it if it is one of the Rust store, and say which tests kill it.
    Check {
        /// The mutant file.
        file: PathBuf,
        /// Only the checks of the file itself: no build, no run.
        #[arg(long)]
        no_build: bool,
        #[command(flatten)]
        run: SuiteArgs,
    },
}

/// `lab mutant new` or `lab mutant check`. A new mutant breaks the store
/// the one rule chooses ([`Chosen::of`]: `--impl`, else the current
/// implementation in the progress file at `progress`, else Rust), in its
/// language ([`Subject::exercise_store`]).
pub fn run(action: Action, progress: &Path) -> Outcome {
    match action {
        Action::New {
            step,
            dir,
            implementation,
        } => {
            let chosen = Chosen::of(
                implementation.as_ref(),
                super::session(progress)?.progress(),
            );
            let store = chosen.subject.exercise_store();
            let path = new_file(&dir, step, &store).map_err(new_error)?;
            let why = match (chosen.how, &store) {
                (How::Named, _) => "as --impl names it".to_string(),
                (How::Current, Subject::Python) => format!(
                    "in the language of {}; --impl rust for the Rust store's",
                    chosen.named()
                ),
                (How::Current, _) => format!(
                    "in the language of {}; --impl python for the Python store's",
                    chosen.named()
                ),
                (How::NothingRecorded, _) => "--impl python for the Python store's".into(),
            };
            let (name, file) = match store {
                Subject::Python => ("Python", PYTHON_STORE),
                _ => ("Rust", MUTABLE_FILE),
            };
            let said = format!(
                "wrote {}, a mutant of the lab's {name} store, {file} ({why})",
                path.display()
            );
            let then = format!(
                "edit its fragment, replacement, title and explanation, then: lab mutant check {}",
                path.display()
            );
            say_line(&filled(&format!("{said}\n{then}")))
        }
        Action::Check {
            file,
            no_build,
            run,
        } => check(&file, no_build, &run),
    }
}

/// `text`, each line made inert (it names the student's files) and filled
/// to the terminal's width.
fn filled(text: &str) -> String {
    fill_lines(&lease_lab::inert::lines(text), lease_lab::terminal::width())
}

/// A step without a template or a folder without a free id is a usage
/// error (exit 2); a folder or file that cannot be written, a failure.
fn new_error(error: NewFileError) -> CliError {
    match error {
        NewFileError::Template(_) | NewFileError::IdsTaken { .. } => {
            CliError::Usage(error.to_string())
        }
        NewFileError::Write { .. } => CliError::Failed(error.to_string()),
    }
}

fn check(file: &Path, no_build: bool, run: &SuiteArgs) -> Outcome {
    let validated = validate(file).map_err(|error| CliError::Found(error.to_string()))?;
    let store = Subject::of_spec(&validated.spec);
    let said = format!(
        "{}, a mutant of the lab's {} store: the fragment occurs once and the change is real",
        file.display(),
        match store {
            Subject::Python => "Python",
            _ => "Rust",
        }
    );
    say_line(&filled(&said))?;
    for note in &validated.notes {
        say_line(&format!("  {note}"))?;
    }
    if no_build {
        return Ok(());
    }
    let spec = validated.spec;
    let id = spec.id.clone();
    let subject = Subject::of_spec(&spec);
    let mutant = if subject == Subject::Python {
        python_variant(spec)?
    } else {
        let variant = rust_variant(spec)?;
        say_line("it compiles")?;
        variant
    };
    let reference = subject.reference().map_err(|error| {
        CliError::Failed(format!(
            "cannot prepare the reference to compare with: {error}"
        ))
    })?;
    say_line(&format!(
        "running the {} tests against the reference and {id}...",
        reference.suite().len()
    ))?;
    let matrix = Matrix::of_suite(
        &worker_command()?,
        &[reference, mutant],
        true,
        &run.options(),
    );
    match report::matrix::own_mutant_verdict(&matrix, &id, &store.name()) {
        Some(Ok(caught)) => say_line(&filled(&caught)),
        Some(Err(advice)) => {
            say_line(&advice)?;
            Err(CliError::Reported)
        }
        None => Err(CliError::Failed("the mutant did not run".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each way `lab mutant new` fails keeps its message and exit code.
    #[test]
    fn a_new_file_that_is_not_written_is_a_usage_error_or_a_failure() {
        let folder = tempfile::tempdir().unwrap();
        let no_step = new_error(new_file(folder.path(), 9, &Subject::Rust).unwrap_err());
        assert_eq!(no_step.exit_code(), 2);
        assert_eq!(
            no_step.message(),
            Some("there is no step 9: the worksheet has steps 1 to 8")
        );
        for letter in 'a'..='z' {
            std::fs::write(folder.path().join(format!("o05{letter}-x.toml")), "").unwrap();
        }
        let taken = new_error(new_file(folder.path(), 5, &Subject::Rust).unwrap_err());
        assert_eq!(taken.exit_code(), 2);
        assert!(
            taken
                .message()
                .unwrap()
                .starts_with("every id from o05a to o05z is taken in "),
            "{taken}"
        );
        let blocked = folder.path().join("blocked");
        std::fs::write(&blocked, "a file, not a folder").unwrap();
        let unwritable = new_error(new_file(&blocked, 5, &Subject::Rust).unwrap_err());
        assert_eq!(unwritable.exit_code(), 3);
        assert!(
            unwritable.message().unwrap().starts_with(&format!(
                "cannot write a mutant file in {}: ",
                blocked.display()
            )),
            "{unwritable}"
        );
    }
}
