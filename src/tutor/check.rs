//! `lab check`: the student's own implementation, checked by the lab's
//! suite: the contract tests of steps 1 to N run against it, and it says,
//! step by step, what passes, what fails and what is not written yet; the
//! check, or the student's prediction of what a break of their own code
//! makes fail, is recorded in their [`Session`]. Which implementation is
//! checked is chosen here for `lab watch` too ([`checked`]).
//!
//! The checks are cumulative, as the worksheet insists: the tests of every
//! earlier step stay in force at each later one. The suite's `reference`
//! tests (the Rust store's own stricter promises) run too and are shown
//! apart, beyond the worksheet; they never count against the student.

use super::say;
use crate::command::CommandError;
use crate::course::check::{check_shown, CheckError, CheckReport};
use crate::course::chosen::{Chosen, How};
use crate::course::confined;
use crate::course::prediction::Score;
use crate::course::progress::{self, Became, OwnPrediction, ProgressError};
use crate::course::session::Session;
use crate::report::format::CheckFormat;
use crate::report::student::check::{check_text, next_text, own_prediction_text};
use crate::runner::{RunOptions, WorkerCommand};
use crate::subject::Subject;
use crate::terminal::fill;
use colored::Colorize;
use std::io::{self, Write};

/// What `lab check` and `lab watch` say when there is nothing to check.
pub const NOTHING_TO_CHECK: &str = "there is no implementation to check yet: start one with `lab new --lang python DIR` (or --lang rust), or name yours with --impl FILE-FOLDER-OR-COMMAND";

/// What `lab check` and `lab watch` run, by the one rule ([`Chosen::of`]),
/// and how their headings name it (a program of the student's set off by
/// commas). A program of the student's that
/// `--impl` names becomes their current implementation (the session
/// changed, for the caller to save); with nothing named or recorded there
/// is nothing to check, and the error says how to start.
pub fn checked(
    given: Option<&Subject>,
    session: &mut Session,
) -> Result<(Chosen, String), CommandError> {
    let chosen = Chosen::of(given, session.progress());
    if chosen.how == How::NothingRecorded {
        return Err(CommandError::Usage(NOTHING_TO_CHECK.into()));
    }
    // Set off by commas where it names the student's: `Checking your
    // current implementation, FILE, against ...`.
    let named = match (chosen.own(), chosen.how) {
        (Some(own), How::Named) if session.make_current(own) != Became::AlreadyCurrent => {
            format!("{}, now your current implementation,", own.describe())
        }
        (Some(own), _) => format!("your current implementation, {},", own.describe()),
        (None, _) => chosen.named(),
    };
    Ok((chosen, named))
}

/// One `lab check`: what it checks, what runs, and how it is shown.
pub struct Checking<'a> {
    /// The implementation [`checked`] chose: a program of the student's
    /// is recorded, the lab's stores are not.
    pub checked: &'a Subject,
    /// How the heading names it, as [`checked`] says.
    pub named: &'a str,
    /// What runs: `checked` itself, or in a sandbox's room a copy of it
    /// confined there ([`confined::prepare`]).
    pub run: &'a Subject,
    /// How the suite runs.
    pub options: &'a RunOptions,
    /// What starts the workers.
    pub worker: &'a WorkerCommand,
    /// The last step whose tests run.
    pub through: u8,
    /// The report's format: text as the check runs, or one for tools.
    pub format: CheckFormat,
    /// Whether the text lists the tests beyond the worksheet one by one.
    pub all: bool,
    /// The student's prediction of a break of their own code, if given
    /// (text only).
    pub prediction: Option<BreakPrediction>,
}

/// After breaking their code on purpose, the tests the student predicts
/// will now fail (`--predict`), and why (`--why`).
pub struct BreakPrediction {
    /// The tests, by name ([`crate::course::check::predicted_tests`]).
    pub tests: Vec<&'static str>,
    /// What input, error or stored state will show the break.
    pub why: String,
}

/// Why `lab check` stopped before its end.
#[derive(Debug, thiserror::Error)]
pub enum CheckStopped {
    /// The check could not be made: the implementation cannot be made
    /// ready, or it did not greet.
    #[error(transparent)]
    Check(#[from] CheckError),
    /// The progress file cannot be written.
    #[error(transparent)]
    Progress(#[from] ProgressError),
    /// Writing the output failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// `lab check`: runs `checking.run` against the contract tests of steps
/// 1 to `checking.through`, under a heading that names it, and shows the
/// report: as text, step by step, then what to do next, or beside the
/// student's prediction; or in a format for tools. A check of the
/// student's own implementation is recorded in `session` and saved (with
/// a prediction, the prediction instead).
///
/// Answers the report, whose [`CheckReport::all_pass`] says how the
/// command ends.
///
/// Errors: the check could not be made, the progress file cannot be
/// written, or the output failed.
pub fn check(session: &mut Session, checking: &Checking) -> Result<CheckReport, CheckStopped> {
    let Checking {
        checked,
        named,
        run,
        options,
        worker,
        through,
        format,
        all,
        prediction,
    } = checking;
    let (through, format) = (*through, *format);
    let width = crate::terminal::text_width();
    // The heading names the student's file or command.
    let heading = format!(
        "Checking {named} against the contract tests of steps 1 to {through}...",
        named = crate::inert::line(named)
    );
    let json = format != CheckFormat::Text;
    // The program is stopped once the report is out (`_running` goes last).
    let (report, _running) = check_shown(run, through, options, worker, !json, || {
        if json {
            return Ok(());
        }
        let mut stdout = std::io::stdout().lock();
        write!(stdout, "{}\n\n", fill(&heading, width, "", "  ").bold())?;
        stdout.flush()
    })?;
    if let Some(line) = confined::memory_line() {
        eprintln!("lab check: {line}");
    }
    if json {
        if let Subject::Own(own) = checked {
            session.record_check(&report, own);
            session.save()?;
        }
        let rendered = format
            .render(&report, &checked.describe(), through)
            .expect("a format for tools");
        say(&format!("{rendered}\n"))?;
        return Ok(report);
    }
    say(&check_text(&report, width, *all))?;
    let failing = report.failing_tests();
    if let Some(prediction) = prediction {
        let predicted: Vec<String> = prediction
            .tests
            .iter()
            .map(|name| name.to_string())
            .collect();
        let score = Score::of(&predicted, &failing);
        say(&own_prediction_text(
            &score,
            failing.is_empty(),
            crate::terminal::text_width(),
        ))?;
        if let Subject::Own(_) = checked {
            session.record_own_prediction(OwnPrediction {
                at: progress::now_stamp(),
                through,
                predicted,
                why: prediction.why.clone(),
                failed: failing.clone(),
                score,
            });
            session.save()?;
            let recorded = format!("\nRecorded in {}.\n", session.path().display());
            say(&crate::inert::lines(&recorded))?;
        }
    } else {
        if let Subject::Own(own) = checked {
            session.record_check(&report, own);
            session.save()?;
        }
        say(&next_text(
            &report,
            &checked.source(),
            through,
            &checked.impl_arg(),
        ))?;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subject::Implementation;

    /// `--impl rust` and `--impl python` check the lab's own stores, any
    /// other text the student's, which becomes current; without `--impl`,
    /// the current one, and with none recorded, an error that says how to
    /// start one. Each heading names what runs.
    #[test]
    fn the_checked_implementation_is_the_one_named_else_the_current_one() {
        let folder = tempfile::tempdir().unwrap();
        let mut session = Session::open(&folder.path().join("progress.json")).unwrap();
        let (lab, named) =
            checked(Some(&Subject::parse(" python ").unwrap()), &mut session).unwrap();
        assert_eq!(
            (lab.subject, named.as_str()),
            (Subject::Python, "the lab's Python store")
        );
        let (rust, named) = checked(Some(&Subject::Rust), &mut session).unwrap();
        assert_eq!(
            (rust.subject, named.as_str()),
            (Subject::Rust, "the lab's Rust store")
        );
        let Err(error) = checked(None, &mut session) else {
            panic!("nothing to check");
        };
        let error = error.to_string();
        assert!(error.contains("lab new --lang python DIR"), "{error}");
        assert!(
            session.progress().implementation.is_none(),
            "a lab store is not recorded"
        );

        let own = Implementation::parse("./my-store --fast").unwrap();
        let (named_own, named) = checked(Some(&Subject::Own(own.clone())), &mut session).unwrap();
        assert_eq!(named_own.own(), Some(&own));
        assert_eq!(named, "./my-store --fast, now your current implementation,");
        assert_eq!(session.progress().implementation.as_ref(), Some(&own));
        let (current, named) = checked(None, &mut session).unwrap();
        assert_eq!(current.subject, Subject::Own(own.clone()));
        assert_eq!(named, "your current implementation, ./my-store --fast,");
        let (_, named) = checked(Some(&Subject::Own(own.clone())), &mut session).unwrap();
        assert_eq!(named, "your current implementation, ./my-store --fast,");
        let (rust, _) = checked(Some(&Subject::Rust), &mut session).unwrap();
        assert_eq!(
            rust.subject,
            Subject::Rust,
            "a store named is checked, not the current one"
        );
        assert_eq!(session.progress().implementation.as_ref(), Some(&own));
    }
}
