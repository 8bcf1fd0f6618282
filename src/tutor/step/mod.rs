//! The student's step-through, `lab step N`: the exercise and its broken
//! fragment, the prediction (asked at a terminal or given), the suite run
//! against the reference and the mutant, the prediction set beside the
//! result, and the attempt recorded in the student's [`Session`]; then,
//! when the student has an implementation of their own, its check against
//! the tests of steps 1 to N.
//!
//! The console it talks through, and the questions it asks, are in
//! [`prompt`]; the screens it shows are [`crate::report::student::step`]'s.

pub mod prompt;

use crate::course::check::{greeting_fault, hear_greeting, run_check, CheckError};
use crate::course::chosen::{Chosen, How};
use crate::course::prediction::{comparison, parse_selection, Broken, Score};
use crate::course::progress::{self, Attempt, ProbeRecord, Progress, Reflection};
use crate::course::session::Session;
use crate::exercise::{self, Exercise};
use crate::lab_text::Language;
use crate::matrix::Matrix;
use crate::probe::{self, CheckOptions, Probe};
use crate::report::student::check::{check_text, next_text};
use crate::report::student::step as screen;
use crate::runner::{check_lanes, RunOptions, WorkerCommand};
use crate::subject::{Implementation, Subject};
use crate::suite::{self, Case};
use crate::variant::Variant;
use colored::Colorize;
pub use prompt::Console;
use std::io;

/// What `lab step` runs, by the rule of [`Chosen`]: the lab's store whose
/// mutant the exercise shows (the store `--impl` names, else the one in
/// the language of the student's implementation), and the student's own
/// implementation, checked after the exercise (the one `--impl` names,
/// else the current one).
pub struct StepChoice {
    /// The lab's store whose mutants the exercises show.
    pub store: Subject,
    /// The student's own implementation, if any.
    pub own: Option<Implementation>,
    /// Whether that is the current implementation rather than one named.
    own_is_current: bool,
    /// Whether `--impl` named the store.
    store_named: bool,
}

impl StepChoice {
    /// The choice for `--impl` `given` and the student's `progress`.
    pub fn of(given: Option<&Subject>, progress: &Progress) -> StepChoice {
        let chosen = Chosen::of(given, progress);
        let (own, own_is_current) = match chosen.own() {
            Some(own) => (Some(own.clone()), chosen.how == How::Current),
            None => (progress.implementation.clone(), true),
        };
        StepChoice {
            store: chosen.subject.exercise_store(),
            own,
            own_is_current,
            store_named: chosen.how == How::Named && chosen.own().is_none(),
        }
    }

    /// The line under a step's title that says what runs: the lab's
    /// store, then the student's own implementation against the tests of
    /// steps 1 to `step`.
    pub fn header(&self, step: u8) -> String {
        let store = match self.store {
            Subject::Python => "the lab's Python store",
            _ => "the lab's Rust store",
        };
        match &self.own {
            Some(own) => format!(
                "On {store}; then {}{}, against the tests of {}.",
                if self.own_is_current {
                    "your current implementation, "
                } else {
                    ""
                },
                own.describe(),
                crate::report::steps_through(step)
            ),
            None if self.store_named => format!("On {store}, as --impl names it."),
            None => {
                format!("On {store} (no implementation of yours is recorded: lab new makes one).")
            }
        }
    }

    /// The language of the store's exercises, in which their texts are worded.
    pub fn language(&self) -> Language {
        self.store.language()
    }

    /// The exercise `key` among the store's.
    ///
    /// Errors: the store has no such exercise (the message lists those it
    /// has), or its exercises cannot be made ready.
    pub fn exercise(&self, key: &str) -> Result<Exercise, StepError> {
        let exercises = exercise::exercises_of(&self.store).map_err(StepError::NotReady)?;
        let keys: Vec<String> = exercises
            .iter()
            .map(|exercise| exercise.key.clone())
            .collect();
        exercise::find_among(exercises, key).ok_or_else(|| {
            StepError::NoExercise(format!(
                "no exercise {key:?} for the {} store; its exercises are: {}",
                self.store.name(),
                keys.join(", ")
            ))
        })
    }
}

/// An exercise taken: the attempt recorded, and how the run of the
/// student's own implementation after it went (`Ok` when there is none).
#[derive(Debug)]
pub struct Taken {
    /// The attempt, recorded in the session.
    pub attempt: Attempt,
    /// The run of one's own implementation: it is made after the attempt
    /// is recorded, so its failure loses nothing.
    pub yours: Result<(), CheckError>,
}

/// Takes an exercise from start to end ([`step_through`], under the
/// header of `choice`, what runs); then, when the student has an
/// implementation of their own (`choice.own`), runs the tests of steps 1
/// to N against it with the workers `worker` starts ([`yours`]). The
/// caller saves the session either way.
///
/// Errors: the step did not go through ([`StepError`]); nothing is
/// recorded but the hints seen.
pub fn take(
    exercise: &Exercise,
    given: GivenPrediction,
    console: &mut Console,
    suite_runner: &SuiteRunner,
    options: &RunOptions,
    session: &mut Session,
    (choice, worker): (&StepChoice, &WorkerCommand),
) -> Result<Taken, StepError> {
    let header = choice.header(exercise.step());
    let attempt = step_through(
        exercise,
        given,
        console,
        suite_runner,
        options,
        session,
        &header,
    )?;
    let yours = match &choice.own {
        Some(own) => yours(own, exercise, worker, options, console, session),
        None => Ok(()),
    };
    Ok(Taken { attempt, yours })
}

/// After the exercise, the student's own implementation against the tests
/// of steps 1 to the exercise's step, as `lab check --step N` runs them, and
/// recorded the same way.
///
/// Errors: the implementation cannot be made ready (a project that does
/// not build), does not answer the lab's greeting, or the console fails.
pub fn yours(
    own: &Implementation,
    exercise: &Exercise,
    worker: &WorkerCommand,
    options: &RunOptions,
    console: &mut Console,
    session: &mut Session,
) -> Result<(), CheckError> {
    let step = exercise.step();
    let variant = own.variant()?;
    let ready = hear_greeting(&variant, options, check_lanes()).map_err(greeting_fault)?;
    let heading = format!(
        "Your implementation, {}, against the tests of {}:",
        crate::inert::line(&own.describe()),
        crate::report::steps_through(step)
    );
    writeln!(
        console.output,
        "\n{}\n",
        crate::terminal::fill(&heading, console.width, "", "  ").bold()
    )?;
    let report = run_check(worker, &ready, step, options);
    write!(
        console.output,
        "{}",
        check_text(&report, console.width, false)
    )?;
    session.record_check(&report, own);
    write!(
        console.output,
        "{}",
        next_text(&report, &own.source(), step, &own.impl_arg())
    )?;
    Ok(())
}

/// How a step-through runs the suite: the variants and tests given, into
/// a matrix (the lab's workers; a made-up matrix in tests).
pub type SuiteRunner<'a> = dyn Fn(&[Variant], Vec<&'static Case>) -> Matrix + 'a;

/// The prediction as far as the command line gave it.
#[derive(Debug, Clone, Default)]
pub struct GivenPrediction {
    /// `--predict`: test numbers or names.
    pub predict: Option<String>,
    /// `--why`: the input, error or stored state that will reveal the mutant.
    pub why: Option<String>,
    /// A probe given as the prediction (`--probe FILE`).
    pub probe: Option<Probe>,
    /// `--why-kept` and `--not-guaranteed`, the closing reflection.
    pub reflection: Option<(String, String)>,
}

/// Why a step-through stopped before its end.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// The prediction is needed and cannot be asked for.
    #[error("standard input is not a terminal, so the prediction cannot be asked for: give it with --predict NUMBERS-OR-NAMES --why \"TEXT\" (see `lab tests` for the names)")]
    NoPrediction,
    /// The prediction names no test the lab knows.
    #[error("{0}")]
    BadPrediction(String),
    /// Input ended before the prediction was complete.
    #[error("input ended before the prediction was given")]
    InputEnded,
    /// Reading or writing the console failed.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// The store has no exercise of that key; the message lists its own.
    #[error("{0}")]
    NoExercise(String),
    /// The store's exercises cannot be made ready (its files cannot be written).
    #[error(transparent)]
    NotReady(#[from] exercise::NotReady),
    /// The progress file cannot be written (a hint shown is saved at once).
    #[error(transparent)]
    Progress(#[from] crate::course::progress::ProgressError),
}

/// Runs one exercise from start to end, `header` under its title (what
/// runs: [`StepChoice::header`]), and returns the attempt, recorded in
/// `session` (which the caller saves).
pub fn step_through(
    exercise: &Exercise,
    given: GivenPrediction,
    console: &mut Console,
    suite_runner: &SuiteRunner,
    options: &RunOptions,
    session: &mut Session,
    header: &str,
) -> Result<Attempt, StepError> {
    if given.predict.is_none() && given.probe.is_none() && !console.interactive {
        return Err(StepError::NoPrediction);
    }
    let step = exercise.step();
    let menu: Vec<&'static Case> = suite::cases_through(step).collect();
    let asked = exercise.reference.suite_through(step);
    // A prediction given on the command line that names no test is refused
    // before the step is shown: the error is all the student sees.
    if let Some(text) = &given.predict {
        parse_selection(text, &menu)
            .map_err(|problems| StepError::BadPrediction(problems.join("; ")))?;
    }
    write!(
        console.output,
        "{}",
        screen::exercise(exercise, header, console.width)
    )?;
    let mut aids = prompt::Aids {
        exercise,
        hints: exercise.lab().hints,
        session,
    };
    let prediction = prediction(&given, &menu, &mut aids, console)?;
    let probe = match given.probe.clone().or(prediction.typed_probe) {
        Some(probe) => Some(run_probe(exercise, probe, options, console)?),
        None => None,
    };
    writeln!(
        console.output,
        "\n{}",
        format!(
            "Running the {} of {} against the reference and mutant {}...",
            crate::report::tests_phrase(asked.len()),
            crate::report::steps_through(step),
            exercise.mutant().spec.id
        )
        .bold()
    )?;
    // The tests this store is asked (a program is not asked what only a
    // store in the lab's process can be: suite::IN_THE_LAB_ONLY).
    let matrix = suite_runner(
        &[exercise.reference.clone(), exercise.variant.clone()],
        asked,
    );
    let (shown, caught) = screen::verdicts(&matrix, step, console.width);
    write!(console.output, "{shown}")?;
    let score = match &probe {
        Some(probe) => Score::with_probe(&prediction.tests, &caught, &probe.file, probe.killed),
        None => Score::of(&prediction.tests, &caught),
    };
    write!(
        console.output,
        "{}",
        comparison(&score, Broken::Mutant, console.width)
    )?;
    write!(
        console.output,
        "{}",
        screen::after_the_run(exercise, console.width)
    )?;
    let attempt = Attempt {
        at: progress::now_stamp(),
        mutant: exercise.mutant().spec.id.clone(),
        predicted: prediction.tests,
        why: prediction.why,
        probe,
        caught_by: caught,
        score,
    };
    record(exercise, &attempt, &given, console, session)?;
    Ok(attempt)
}

/// Records the attempt (and after the last exercise the closing reflection) in the
/// student's progress, and says what to do next.
fn record(
    exercise: &Exercise,
    attempt: &Attempt,
    given: &GivenPrediction,
    console: &mut Console,
    session: &mut Session,
) -> Result<(), StepError> {
    session.record_attempt(&exercise.key, attempt.clone());
    // The closing questions come after the last exercise; answers given
    // on the command line are kept whenever they come.
    if (exercise.last || given.reflection.is_some()) && session.progress().reflection.is_none() {
        if let Some(reflection) = reflection(given, console)? {
            session.keep_reflection(reflection);
        }
    }
    writeln!(
        console.output,
        "\nRecorded in {}.",
        session.path().display()
    )?;
    match session.progress().next_exercise_after(&exercise.key) {
        Some(next) => writeln!(
            console.output,
            "Next: {}",
            format!("lab step {}", next.key).bold()
        )?,
        None => writeln!(
            console.output,
            "{}",
            "Every exercise has a recorded prediction.".bold()
        )?,
    }
    Ok(())
}

/// The prediction as made: at the prompt, or from the command line.
struct Prediction {
    /// The tests predicted to catch the mutant.
    tests: Vec<String>,
    /// The student's words: which input, error or stored state reveals it.
    why: String,
    /// A probe typed at the prompt, if any.
    typed_probe: Option<Probe>,
}

fn prediction(
    given: &GivenPrediction,
    menu: &[&'static Case],
    aids: &mut prompt::Aids,
    console: &mut Console,
) -> Result<Prediction, StepError> {
    let mut typed_probe = None;
    let chosen = match &given.predict {
        Some(text) => parse_selection(text, menu)
            .map_err(|problems| StepError::BadPrediction(problems.join("; ")))?,
        None if given.probe.is_some() => Vec::new(),
        // Without a terminal, step_through has refused already.
        None => {
            write!(
                console.output,
                "{}",
                screen::menu(aids.exercise, menu, console.columns)
            )?;
            match prompt::ask_prediction(menu, aids, console)? {
                prompt::Predicted::Tests(chosen) => chosen,
                prompt::Predicted::Probe(probe) => {
                    typed_probe = Some(probe);
                    Vec::new()
                }
            }
        }
    };
    let why = match &given.why {
        Some(text) => text.clone(),
        None if given.predict.is_some()
            || given.probe.is_some()
            || typed_probe.is_some()
            || !console.interactive =>
        {
            String::new()
        }
        None => console
            .ask("What input, error or stored state will reveal the difference?")?
            .ok_or(StepError::InputEnded)?,
    };
    Ok(Prediction {
        tests: chosen.into_iter().map(String::from).collect(),
        why,
        typed_probe,
    })
}

/// Runs a probe against the reference and the exercise's mutant, shows the
/// verdict, and returns what the progress file keeps of it.
fn run_probe(
    exercise: &Exercise,
    probe: Probe,
    options: &RunOptions,
    console: &mut Console,
) -> Result<ProbeRecord, StepError> {
    let check_options = CheckOptions {
        scratch: options.scratch.clone(),
        timeout: options.timeout,
    };
    let check = probe::check(
        &probe,
        &exercise.reference,
        std::slice::from_ref(&exercise.variant),
        &check_options,
    )?;
    writeln!(console.output, "\n{}", "Your probe".bold())?;
    write!(
        console.output,
        "{}",
        probe::check_text(&probe, &check, console.width)
    )?;
    let verdict = match (check.wrong_reading(), check.mutants.first()) {
        (Some(_), _) => "wrong reading".to_string(),
        (None, Some(mutant)) => mutant.verdict.label().to_string(),
        (None, None) => "not run".to_string(),
    };
    Ok(ProbeRecord {
        file: probe.file_name.clone(),
        text: probe.source.clone(),
        verdict,
        killed: check.kills_all() && !check.mutants.is_empty(),
    })
}

/// The closing reflection after the last exercise: from the command line, or asked
/// at a terminal; else how to give it later. Once answered, the example
/// answers of the step's text are shown, to set beside the student's own.
fn reflection(given: &GivenPrediction, console: &mut Console) -> io::Result<Option<Reflection>> {
    let answers = match &given.reflection {
        Some((kept, not_guaranteed)) => Some((kept.clone(), not_guaranteed.clone())),
        None if console.interactive => prompt::ask_reflection(console)?,
        None => {
            writeln!(
                console.output,
                "\n{}",
                crate::terminal::fill(
                    "Closing questions: answer them with `lab reflect --why-kept \"...\" --not-guaranteed \"...\"`.",
                    console.width,
                    "",
                    "  "
                )
            )?;
            None
        }
    };
    let Some(reflection) =
        answers.and_then(|(kept, not_guaranteed)| Reflection::answered(&kept, &not_guaranteed))
    else {
        return Ok(None);
    };
    write!(console.output, "{}", closing_examples(console.width))?;
    Ok(Some(reflection))
}

/// The example answers to the closing questions, shown once the student
/// has answered them.
pub fn closing_examples(width: usize) -> String {
    beside_your_answers(&exercise::closing_examples(), width)
}

/// `examples` under their heading; nothing when there are none.
fn beside_your_answers(examples: &str, width: usize) -> String {
    if examples.is_empty() {
        return String::new();
    }
    format!(
        "\n{}\n{}\n",
        "Set beside your answers".bold(),
        crate::terminal::reflow(examples, width)
    )
}

#[cfg(test)]
mod tests;
