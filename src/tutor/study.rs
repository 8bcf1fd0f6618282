//! The changes a student makes to their progress at the console, beyond
//! the steps: who they are, forgetting (one exercise or everything), and
//! the closing reflection. Each asks at a terminal only; off one, what is
//! missing is a usage error that names the option to give, and nothing
//! changes.

use super::step::{closing_examples, Console};
use crate::command::CommandError;
use crate::course::progress::CLOSING_QUESTIONS;
use crate::course::session::Session;
use crate::exercise;
use crate::report::student::progress::{reflection_text, wrapped};
use crate::terminal::plural;
use colored::Colorize;
use std::io;

/// What `lab reset` forgets, and whether it may without asking.
#[derive(Debug, Clone, clap::Args)]
pub struct Forget {
    /// The exercise to forget; everything recorded when omitted.
    pub exercise: Option<String>,
    /// Forget without asking (needed when not at a terminal).
    #[arg(long)]
    pub yes: bool,
}

/// The answers to the closing questions given as options (`lab reflect`).
#[derive(Debug, Clone, clap::Args)]
pub struct Answers {
    /// Why the earlier steps' tests are kept at every later step (asked
    /// at a terminal when left out).
    #[arg(long)]
    pub why_kept: Option<String>,
    /// One operational condition the lab does not guarantee (asked at a
    /// terminal when left out).
    #[arg(long)]
    pub not_guaranteed: Option<String>,
}

/// Asks once, at a terminal only, who the student is, and records the
/// answer; an empty answer records nothing (it is asked again next time).
/// Never asks when standard input is not a terminal.
pub fn ask_student(session: &mut Session, console: &mut Console) -> Result<(), CommandError> {
    if !console.interactive {
        return Ok(());
    }
    let failed = |error: io::Error| CommandError::Failed(format!("cannot write or read: {error}"));
    let answer = console
        .ask("Your name, as your instructor knows you (Enter to skip):")
        .map_err(failed)?;
    let Some(name) = answer.filter(|name| !name.trim().is_empty()) else {
        return Ok(());
    };
    session
        .record_student(&name)
        .map_err(|error| CommandError::Usage(error.to_string()))?;
    session.save()?;
    writeln!(
        console.output,
        "Recorded: {} (to change it: lab --student NEW-NAME).\n",
        crate::inert::line(name.trim())
    )
    .map_err(failed)
}

/// `lab reset [N]` on an open session, asking at `console`: forgets one
/// exercise, or everything recorded, saying exactly what; either is asked
/// first at a terminal, and needs `yes` off one (a usage error, and
/// nothing changes, without it).
pub fn reset(
    args: &Forget,
    session: &mut Session,
    console: &mut Console,
) -> Result<(), CommandError> {
    let failed = |error: io::Error| CommandError::Failed(format!("cannot write or read: {error}"));
    let path = session.path().display().to_string();
    if let Some(key) = &args.exercise {
        let key = exercise::find_or_list(key)
            .map_err(CommandError::Usage)?
            .key;
        let Some(record) = session.progress().exercises.get(&key) else {
            return writeln!(console.output, "Exercise {key} had nothing recorded.")
                .map_err(failed);
        };
        let what = format!(
            "exercise {key}: {} and {} seen",
            plural(record.attempts.len(), "attempt"),
            plural(record.hints_seen, "hint")
        );
        if !confirmed(args, console, &what, &format!("Forget {what}? [y/N]"))? {
            return writeln!(console.output, "Nothing was forgotten.").map_err(failed);
        }
        session.forget_exercise(&key);
        session.save()?;
        return writeln!(console.output, "Forgot {what}.").map_err(failed);
    }
    let items = session.recorded_items();
    if items.is_empty() {
        return writeln!(
            console.output,
            "Nothing to forget: {path} records no progress."
        )
        .map_err(failed);
    }
    let list: String = items
        .iter()
        .map(|item| wrapped(item, console.width, "  - ", "    "))
        .collect();
    let what = format!("everything {path} records ({})", items.join("; "));
    if !args.yes && console.interactive {
        write!(
            console.output,
            "lab reset forgets everything {path} records:\n{list}"
        )
        .map_err(failed)?;
    }
    if !confirmed(args, console, &what, "Forget all of it? [y/N]")? {
        return writeln!(console.output, "Nothing was forgotten.").map_err(failed);
    }
    session.forget_all();
    session.save()?;
    write!(console.output, "Forgot:\n{list}").map_err(failed)
}

/// Whether `lab reset` may forget `what`: `--yes` says so; at a terminal
/// the student is asked `question` (only `y` or `yes` forgets); off one,
/// without `--yes`, it is a usage error and nothing changes.
fn confirmed(
    args: &Forget,
    console: &mut Console,
    what: &str,
    question: &str,
) -> Result<bool, CommandError> {
    if args.yes {
        return Ok(true);
    }
    if !console.interactive {
        return Err(CommandError::Usage(format!(
            "lab reset forgets {what}; nothing was changed: add --yes to forget it, or run it at a terminal to be asked"
        )));
    }
    let answer = console
        .ask(question)
        .map_err(|error| CommandError::Failed(format!("cannot write or read: {error}")))?;
    Ok(matches!(
        answer.as_deref().map(str::trim),
        Some("y" | "Y" | "yes")
    ))
}

/// `lab reflect` on an open session, asking at `console`: records the
/// answers to the worksheet's closing questions, given or (at a terminal)
/// asked. The earlier answers, if any, are shown first: at a terminal,
/// Enter at a question keeps its earlier answer; off one, the answers
/// given replace them.
pub fn reflect(
    args: &Answers,
    session: &mut Session,
    console: &mut Console,
) -> Result<(), CommandError> {
    let failed = |error: io::Error| CommandError::Failed(format!("cannot write or read: {error}"));
    let earlier = session.progress().reflection.clone();
    let asks = console.interactive && (args.why_kept.is_none() || args.not_guaranteed.is_none());
    if let Some(earlier) = &earlier {
        let how = if asks {
            "which Enter keeps"
        } else {
            "which these replace"
        };
        // The time is as the progress file holds it, which anyone can edit.
        let heading = wrapped(
            &format!("Your earlier answers ({}), {how}:", earlier.at),
            console.width,
            "",
            "  ",
        );
        write!(
            console.output,
            "{}{}",
            heading.bold(),
            reflection_text(earlier, console.width)
        )
        .map_err(failed)?;
    }
    // At a terminal an empty answer is asked again, or keeps the earlier
    // one; off one, or when the input ends, what is missing is said with
    // what was given, so that nothing typed is lost.
    let mut answer = |given: &Option<String>, question: &str, kept: Option<&String>| {
        match (given, kept) {
            (Some(text), _) => Ok(Some(text.clone())),
            (None, _) if !console.interactive => Ok(None),
            (None, Some(kept)) => console.ask(question).map(|typed| {
                typed.map(|typed| {
                    if typed.is_empty() {
                        kept.clone()
                    } else {
                        typed
                    }
                })
            }),
            (None, None) => console.ask_answer(question),
        }
        .map_err(failed)
    };
    let [why_kept_question, not_guaranteed_question] = CLOSING_QUESTIONS;
    let why_kept = answer(
        &args.why_kept,
        why_kept_question,
        earlier.as_ref().map(|earlier| &earlier.why_tests_are_kept),
    )?;
    let not_guaranteed = match &why_kept {
        Some(_) => answer(
            &args.not_guaranteed,
            not_guaranteed_question,
            earlier.as_ref().map(|earlier| &earlier.not_guaranteed),
        )?,
        None => args.not_guaranteed.clone(),
    };
    let recorded = match (&why_kept, &not_guaranteed) {
        (Some(kept), Some(not_guaranteed)) => session.record_reflection(kept, not_guaranteed).ok(),
        _ => None,
    };
    if recorded.is_none() {
        return Err(CommandError::Usage(unanswered(
            why_kept.as_deref(),
            not_guaranteed.as_deref(),
            console.interactive,
        )));
    }
    session.save()?;
    write!(
        console.output,
        "Recorded your reflection.\n{}",
        closing_examples(console.width)
    )
    .map_err(failed)
}

/// Why `lab reflect` recorded nothing, and the command that records the
/// answers: with those given (or typed before the input ended) filled in.
/// Off a terminal (`interactive` false), that a terminal asks for them.
fn unanswered(why_kept: Option<&str>, not_guaranteed: Option<&str>, interactive: bool) -> String {
    let quoted = |answer: Option<&str>| match answer.map(str::trim) {
        Some(answer) if !answer.is_empty() => format!("{answer:?}"),
        _ => "\"...\"".to_string(),
    };
    format!(
        "both closing questions need an answer, and nothing was recorded: lab reflect --why-kept {} --not-guaranteed {}{}",
        quoted(why_kept),
        quoted(not_guaranteed),
        if interactive {
            ""
        } else {
            " (at a terminal, lab reflect asks for them)"
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::course::prediction::Score;
    use crate::course::progress::{self, Progress, Reflection, StepStatus};
    use std::path::Path;

    /// `run` on a console that types `typed`: its outcome and what it
    /// showed.
    fn typing(
        typed: &str,
        interactive: bool,
        run: impl FnOnce(&mut Console) -> Result<(), CommandError>,
    ) -> (Result<(), CommandError>, String) {
        let mut input = std::io::Cursor::new(typed.as_bytes().to_vec());
        let mut output = Vec::new();
        let outcome = run(&mut Console {
            input: &mut input,
            interactive,
            output: &mut output,
            width: 100,
            columns: 100,
        });
        (outcome, String::from_utf8(output).unwrap())
    }

    /// The command `lab reflect` suggests when it records nothing keeps
    /// each answer given, and marks a missing or blank one to fill in.
    #[test]
    fn the_command_to_record_keeps_what_was_answered() {
        let said = unanswered(Some(" they pin the rules "), None, true);
        assert!(
            said.ends_with("--why-kept \"they pin the rules\" --not-guaranteed \"...\""),
            "at a terminal, no word of being at one: {said}"
        );
        let said = unanswered(Some("   "), Some("clocks"), false);
        assert!(
            said.ends_with(
                "--why-kept \"...\" --not-guaranteed \"clocks\" (at a terminal, lab reflect asks for them)"
            ),
            "{said}"
        );
    }

    /// The overview asks for the name at a terminal only, records it
    /// trimmed, and records nothing for an empty answer.
    #[test]
    fn the_overview_asks_the_name_once_at_a_terminal() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("progress.json");
        let mut session = Session::open(&path).unwrap();
        let (outcome, shown) = typing("Ada\n", false, |console| ask_student(&mut session, console));
        assert!(outcome.is_ok() && shown.is_empty(), "{shown}");
        assert!(!path.exists(), "off a terminal nothing is asked or written");
        let (outcome, _) = typing("   \n", true, |console| ask_student(&mut session, console));
        assert!(outcome.is_ok());
        assert_eq!(session.progress().student, None);
        let (outcome, shown) = typing("  Ada Lovelace \n", true, |console| {
            ask_student(&mut session, console)
        });
        assert!(outcome.is_ok());
        assert!(
            shown.starts_with("Your name, as your instructor knows you"),
            "{shown}"
        );
        assert!(
            shown.contains("Recorded: Ada Lovelace (to change it: lab --student NEW-NAME)."),
            "{shown}"
        );
        let saved = Session::open(&path).unwrap();
        assert_eq!(saved.progress().student.as_deref(), Some("Ada Lovelace"));
    }

    /// A full reset forgets the progress, not who the student is.
    #[test]
    fn a_full_reset_keeps_the_students_name() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("progress.json");
        let mut session = Session::open(&path).unwrap();
        session.record_student("Ada").unwrap();
        session.saw_hints("4", 1);
        session.save().unwrap();
        let args = Forget {
            exercise: None,
            yes: true,
        };
        let (outcome, _) = reset_typing(args, "", false, &mut session);
        assert!(outcome.is_ok());
        let saved = Session::open(&path).unwrap();
        assert_eq!(saved.progress().student.as_deref(), Some("Ada"));
        assert!(saved.progress().exercises.is_empty());
    }

    fn reset_typing(
        args: Forget,
        typed: &str,
        interactive: bool,
        session: &mut Session,
    ) -> (Result<(), CommandError>, String) {
        typing(typed, interactive, |console| reset(&args, session, console))
    }

    /// `lab reset` of everything, with `--yes` or without.
    fn everything(yes: bool) -> Forget {
        Forget {
            exercise: None,
            yes,
        }
    }

    /// `lab reset 04`, with `--yes` or without.
    fn exercise_04(yes: bool) -> Forget {
        Forget {
            exercise: Some("04".into()),
            yes,
        }
    }

    /// What the test of reset records first: exercises 4 (2 hints seen)
    /// and 8b, the closing answers and an implementation. Answers the
    /// progress as recorded.
    fn record_exercises_answers_and_implementation(session: &mut Session) -> Progress {
        use crate::course::progress::ExerciseProgress;
        let mut progress = session.progress().clone();
        progress.exercises.insert(
            "4".into(),
            ExerciseProgress {
                hints_seen: 2,
                attempts: Vec::new(),
            },
        );
        progress
            .exercises
            .insert("8b".into(), ExerciseProgress::default());
        progress.reflection = Some(Reflection {
            at: "then".into(),
            why_tests_are_kept: "a".into(),
            not_guaranteed: "b".into(),
        });
        progress.implementation = Some(crate::subject::Implementation::Command {
            line: "./mine".into(),
        });
        written_and_opened_again(session, &progress);
        progress
    }

    /// `progress` written to `session`'s file, as the commands before
    /// would have left it, and the session opened on it again.
    fn written_and_opened_again(session: &mut Session, progress: &Progress) {
        let path = session.path().to_path_buf();
        progress::save(&path, progress).unwrap();
        *session = Session::open(&path).unwrap();
    }

    /// What the test of reset records last: `implementation`, its check of
    /// steps 1 and 2, and a prediction about breaks of its own.
    fn record_checks_and_a_prediction(
        session: &mut Session,
        implementation: Option<crate::subject::Implementation>,
    ) {
        let mut progress = session.progress().clone();
        progress.implementation = implementation;
        for step in ["1", "2"] {
            progress.checks.insert(
                step.into(),
                crate::course::progress::StepCheck {
                    at: "then".into(),
                    status: StepStatus::Passed,
                    failing: Vec::new(),
                },
            );
        }
        progress
            .own_predictions
            .push(crate::course::progress::OwnPrediction {
                at: "then".into(),
                through: 2,
                predicted: Vec::new(),
                why: String::new(),
                failed: Vec::new(),
                score: Score::of(&[], &[]),
            });
        written_and_opened_again(session, &progress);
    }

    /// Forgetting everything that `recorded` (saved at `path`) holds needs
    /// `--yes` off a terminal and a `y` at one: otherwise it names what
    /// it would forget and forgets nothing.
    fn everything_is_kept_without_yes_or_a_y(
        path: &Path,
        session: &mut Session,
        recorded: &Progress,
    ) {
        let list = "  - exercises 4, 8b (0 attempts, and the hints seen)\n  - your answers to the closing questions\n  - your implementation, ./mine (its files stay)\n";
        let on_file = || progress::load(path).unwrap().progress;
        let (outcome, shown) = reset_typing(everything(false), "y\n", false, session);
        match outcome {
            Err(CommandError::Usage(message)) => assert!(
                message.contains("(exercises 4, 8b (0 attempts, and the hints seen); your answers to the closing questions; your implementation, ./mine (its files stay)); nothing was changed: add --yes"),
                "{message}"
            ),
            other => panic!("off a terminal without --yes: {other:?}"),
        }
        assert_eq!(shown, "");
        assert_eq!(&on_file(), recorded);

        let (outcome, shown) = reset_typing(everything(false), "n\n", true, session);
        assert!(outcome.is_ok());
        assert_eq!(
            shown,
            format!(
                "lab reset forgets everything {} records:\n{list}Forget all of it? [y/N] Nothing was forgotten.\n",
                path.display()
            )
        );
        assert_eq!(&on_file(), recorded);
    }

    /// One exercise of `recorded` (saved at `path`) is asked about too,
    /// and needs `--yes` off a terminal; a yes forgets it alone, and once
    /// forgotten there is nothing to forget.
    fn one_exercise_is_asked_about_too(path: &Path, session: &mut Session, recorded: &Progress) {
        let on_file = || progress::load(path).unwrap().progress;
        let (outcome, shown) = reset_typing(exercise_04(false), "y\n", false, session);
        match outcome {
            Err(CommandError::Usage(message)) => assert!(
                message.contains("forgets exercise 4: 0 attempts and 2 hints seen; nothing was changed: add --yes"),
                "{message}"
            ),
            other => panic!("off a terminal without --yes: {other:?}"),
        }
        assert_eq!((shown.as_str(), on_file()), ("", recorded.clone()));
        let (outcome, shown) = reset_typing(exercise_04(false), "\n", true, session);
        assert!(outcome.is_ok());
        assert_eq!(
            shown,
            "Forget exercise 4: 0 attempts and 2 hints seen? [y/N] Nothing was forgotten.\n"
        );
        assert_eq!(&on_file(), recorded, "Enter keeps it");
        let (outcome, shown) = reset_typing(exercise_04(false), "yes\n", true, session);
        assert!(outcome.is_ok());
        assert_eq!(
            shown,
            "Forget exercise 4: 0 attempts and 2 hints seen? [y/N] Forgot exercise 4: 0 attempts and 2 hints seen.\n"
        );
        assert!(!on_file().exercises.contains_key("4"));
        let (_, shown) = reset_typing(
            Forget {
                exercise: Some("4".into()),
                yes: false,
            },
            "",
            false,
            session,
        );
        assert_eq!(shown, "Exercise 4 had nothing recorded.\n");
    }

    /// Forgetting everything names what is recorded, asks at a terminal
    /// (only `y` forgets), needs `--yes` off one, and changes nothing
    /// otherwise; so does forgetting one exercise.
    #[test]
    fn reset_names_what_it_forgets_and_asks_before_forgetting_everything() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("progress.json");
        let mut session = Session::open(&path).unwrap();
        let (outcome, shown) = reset_typing(everything(false), "", false, &mut session);
        assert!(outcome.is_ok());
        assert_eq!(
            shown,
            format!(
                "Nothing to forget: {} records no progress.\n",
                path.display()
            )
        );
        let recorded = record_exercises_answers_and_implementation(&mut session);
        session.save().unwrap();
        let on_file = || progress::load(&path).unwrap().progress;

        everything_is_kept_without_yes_or_a_y(&path, &mut session, &recorded);
        one_exercise_is_asked_about_too(&path, &mut session, &recorded);

        let (outcome, shown) = reset_typing(everything(false), " y \n", true, &mut session);
        assert!(outcome.is_ok());
        assert!(shown.ends_with("[y/N] Forgot:\n  - exercises 8b (0 attempts, and the hints seen)\n  - your answers to the closing questions\n  - your implementation, ./mine (its files stay)\n"), "{shown}");
        assert_eq!(on_file(), Progress::default());

        record_checks_and_a_prediction(&mut session, recorded.implementation.clone());
        session.save().unwrap();
        let (outcome, shown) = reset_typing(everything(true), "", false, &mut session);
        assert!(outcome.is_ok());
        assert_eq!(
            shown,
            "Forgot:\n  - your implementation, ./mine (its files stay), and its last check of 2 steps\n  - 1 prediction about breaks of your own\n"
        );
        assert_eq!(on_file(), Progress::default());
    }

    fn reflect_typing(
        args: Answers,
        typed: &str,
        interactive: bool,
        session: &mut Session,
    ) -> (Result<(), CommandError>, String) {
        typing(typed, interactive, |console| {
            reflect(&args, session, console)
        })
    }

    /// At a terminal the questions not given are asked; the earlier
    /// answers are shown before they are replaced; off a terminal, a
    /// missing answer is a usage error that records nothing.
    #[test]
    fn reflect_asks_what_is_not_given_and_shows_the_answers_it_replaces() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("progress.json");
        let mut session = Session::open(&path).unwrap();
        let (outcome, shown) = reflect_typing(
            Answers {
                why_kept: Some("they guard the earlier steps".into()),
                not_guaranteed: None,
            },
            "clocks that jump\n",
            true,
            &mut session,
        );
        assert!(outcome.is_ok(), "{shown}");
        assert!(
            shown.starts_with("Name one operational condition this lab does not guarantee:"),
            "only the missing question is asked: {shown}"
        );
        assert!(!shown.contains("Why are the earlier"), "{shown}");
        assert!(shown.contains("Recorded your reflection."), "{shown}");
        let saved = progress::load(&path).unwrap().progress.reflection.unwrap();
        assert_eq!(saved.why_tests_are_kept, "they guard the earlier steps");
        assert_eq!(saved.not_guaranteed, "clocks that jump");

        let (outcome, shown) = reflect_typing(
            Answers {
                why_kept: None,
                not_guaranteed: None,
            },
            "regressions\nfsync lies\n",
            true,
            &mut session,
        );
        assert!(outcome.is_ok(), "{shown}");
        assert!(
            shown.starts_with(&format!(
                "Your earlier answers ({}), which Enter keeps:\n  why the tests are kept: they guard the earlier steps\n  not guaranteed: clocks that jump\nWhy are the earlier steps' tests kept at every later step?",
                saved.at
            )),
            "{shown}"
        );
        let replaced = progress::load(&path).unwrap().progress.reflection.unwrap();
        assert_eq!(replaced.why_tests_are_kept, "regressions");
        assert_eq!(replaced.not_guaranteed, "fsync lies");

        let (outcome, _) = reflect_typing(
            Answers {
                why_kept: Some("x".into()),
                not_guaranteed: None,
            },
            "typed but not asked\n",
            false,
            &mut session,
        );
        assert!(matches!(outcome, Err(CommandError::Usage(_))));
        let kept = progress::load(&path).unwrap().progress.reflection.unwrap();
        assert_eq!(kept, replaced, "a refused reflection records nothing");

        let (outcome, shown) = reflect_typing(
            Answers {
                why_kept: Some("y".into()),
                not_guaranteed: Some("z".into()),
            },
            "",
            false,
            &mut session,
        );
        assert!(outcome.is_ok(), "{shown}");
        assert!(
            shown.starts_with(&format!(
                "Your earlier answers ({}), which these replace:\n",
                replaced.at
            )),
            "off a terminal, the answers given replace them: {shown}"
        );
    }

    /// At a terminal, Enter at a question keeps its earlier answer, and the
    /// other can still be changed; the example answers come once, under
    /// one heading.
    #[test]
    fn reflect_keeps_an_earlier_answer_on_enter() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("progress.json");
        let mut session = Session::open(&path).unwrap();
        session
            .record_reflection("they guard the earlier steps", "clocks that jump")
            .unwrap();
        let none = || Answers {
            why_kept: None,
            not_guaranteed: None,
        };
        let (outcome, shown) = reflect_typing(none(), "\nfsync lies\n", true, &mut session);
        assert!(outcome.is_ok(), "{shown}");
        assert!(!shown.contains("an answer is needed"), "{shown}");
        let saved = progress::load(&path).unwrap().progress.reflection.unwrap();
        assert_eq!(
            (
                saved.why_tests_are_kept.as_str(),
                saved.not_guaranteed.as_str()
            ),
            ("they guard the earlier steps", "fsync lies")
        );
        let (outcome, shown) = reflect_typing(none(), "\n\n", true, &mut session);
        assert!(outcome.is_ok(), "{shown}");
        let kept = progress::load(&path).unwrap().progress.reflection.unwrap();
        assert_eq!(
            (kept.why_tests_are_kept, kept.not_guaranteed),
            (saved.why_tests_are_kept, saved.not_guaranteed),
            "Enter twice keeps both"
        );
        let examples = crate::exercise::closing_examples();
        let first_line = examples.lines().next().unwrap_or_default();
        assert_eq!(
            shown.matches(first_line).count(),
            1,
            "the examples once: {shown}"
        );
        assert!(
            !first_line.to_lowercase().contains("set beside"),
            "the examples' heading is the screen's, not theirs again: {shown}"
        );
    }

    /// What a student did: Enter on the first question, then both answers.
    /// The empty answer is asked again and both are recorded; when the
    /// input ends before the second, nothing is recorded and the error
    /// gives back what was typed, in the command that records it.
    #[test]
    fn reflect_asks_an_empty_answer_again_and_never_loses_one() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("progress.json");
        let mut session = Session::open(&path).unwrap();
        let none = || Answers {
            why_kept: None,
            not_guaranteed: None,
        };
        let (outcome, shown) =
            reflect_typing(none(), "\nregressions\nskewed clocks\n", true, &mut session);
        assert!(outcome.is_ok(), "{shown}");
        assert_eq!(
            shown
                .matches("Why are the earlier steps' tests kept")
                .count(),
            2,
            "{shown}"
        );
        assert!(shown.contains("an answer is needed"), "{shown}");
        let saved = progress::load(&path).unwrap().progress.reflection.unwrap();
        assert_eq!(
            (
                saved.why_tests_are_kept.as_str(),
                saved.not_guaranteed.as_str()
            ),
            ("regressions", "skewed clocks")
        );

        let (outcome, shown) = reflect_typing(none(), "kept for regressions\n", true, &mut session);
        let Err(CommandError::Usage(said)) = outcome else {
            panic!("the input ended before the second answer: {shown}")
        };
        assert!(
            said.contains(r#"--why-kept "kept for regressions" --not-guaranteed "...""#),
            "{said}"
        );
        let kept = progress::load(&path).unwrap().progress.reflection.unwrap();
        assert_eq!(kept, saved, "nothing was recorded");
    }
}
