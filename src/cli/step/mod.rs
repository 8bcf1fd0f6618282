//! The student's step-through: `lab step N` shows the exercise and the
//! broken fragment, takes the prediction, runs the suite against the
//! reference and the mutant, sets the prediction beside the result, and
//! records it.

mod prompt;

use super::args::{worker_command, SuiteArgs};
use super::outcome::{CliError, Outcome};
use colored::Colorize;
use lease_lab::course::check::{check_lanes, hear_greeting, run_check};
use lease_lab::course::prediction::{comparison, parse_selection, Score};
use lease_lab::course::progress::{self, Attempt, ProbeRecord, Reflection, Session};
use lease_lab::exercise::{self, Exercise};
use lease_lab::lab_text::Language;
use lease_lab::matrix::Matrix;
use lease_lab::probe::{self, CheckOptions, Probe};
use lease_lab::report::check::{check_text, next_text};
use lease_lab::report::step as screen;
use lease_lab::runner::RunOptions;
use lease_lab::subject::{Implementation, Subject};
use lease_lab::suite::{self, Case};
use lease_lab::variant::Variant;
pub use prompt::Console;
use std::io;
use std::path::{Path, PathBuf};

/// `lab step`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The exercise: 1 to 8, or 8b.
    exercise: String,
    /// The tests you predict will catch the mutant: numbers or names, comma-separated.
    #[arg(long)]
    predict: Option<String>,
    /// What input, error or stored state will reveal the difference.
    #[arg(long)]
    why: Option<String>,
    /// A probe file as the prediction: store operations with the answers you expect.
    #[arg(long)]
    probe: Option<PathBuf>,
    /// The first closing question (asked after the last exercise, 8b): why
    /// the earlier steps' tests are kept.
    #[arg(long)]
    why_kept: Option<String>,
    /// The second closing question: one operational condition the lab does
    /// not guarantee.
    #[arg(long)]
    not_guaranteed: Option<String>,
    /// Whose mutants: `rust` (the built-in store's) or `python` (the
    /// worksheet's own fragments, applied to the Python store). Anything
    /// else is your own implementation (a .py file, a Rust project, a
    /// command line), whose tests of steps 1 to N run after the verdicts;
    /// without it, the one `lab new` or `lab check` recorded runs.
    #[arg(long = "impl", value_name = "IMPL", value_parser = Subject::parse)]
    implementation: Option<Subject>,
    #[command(flatten)]
    run: SuiteArgs,
}

/// What `lab step --impl` and the progress file say to run: the lab's
/// store whose mutant the exercise shows, and the student's own
/// implementation.
pub(crate) struct Chosen {
    store: Subject,
    own: Option<Implementation>,
}

impl Chosen {
    /// `rust` and `python` name the store; anything else is the student's
    /// implementation, as is the one recorded. Without a store named, the
    /// exercises follow the student's language
    /// ([`Subject::exercise_store`]): Python mutants for a Python
    /// implementation, the Rust store's otherwise.
    pub(crate) fn of(given: Option<&Subject>, session: &Session) -> Chosen {
        let recorded = session.progress().implementation.clone();
        let (named, own) = match given {
            Some(Subject::Own(own)) => (None, Some(own.clone())),
            Some(store) => (Some(store.clone()), recorded),
            None => (None, recorded),
        };
        let store = named.unwrap_or_else(|| {
            own.clone()
                .map_or(Subject::Rust, Subject::Own)
                .exercise_store()
        });
        Chosen { store, own }
    }

    /// The language of the store's exercises, in which their texts are worded.
    pub(crate) fn language(&self) -> Language {
        match self.store {
            Subject::Python => Language::Python,
            _ => Language::Rust,
        }
    }

    /// The exercise `key` among the store's.
    pub(crate) fn exercise(&self, key: &str) -> Result<Exercise, CliError> {
        let exercises = exercise::exercises_of(&self.store).map_err(CliError::Failed)?;
        let keys: Vec<String> = exercises
            .iter()
            .map(|exercise| exercise.key.clone())
            .collect();
        exercise::find_among(exercises, key).ok_or_else(|| {
            CliError::Usage(format!(
                "no exercise {key:?} for the {} store; its exercises are: {}",
                self.store.name(),
                keys.join(", ")
            ))
        })
    }
}

/// `lab step N`: the exercise from start to end, on this terminal.
pub fn run(args: Args, progress_path: &Path) -> Outcome {
    let mut session = super::session(progress_path)?;
    let chosen = Chosen::of(args.implementation.as_ref(), &session);
    let exercise = chosen.exercise(&args.exercise)?;
    let worker = worker_command()?;
    let probe = args
        .probe
        .as_deref()
        .map(probe::load)
        .transpose()
        .map_err(|error| CliError::Usage(error.to_string()))?;
    let prediction = GivenPrediction {
        predict: args.predict,
        why: args.why,
        probe,
        reflection: args.why_kept.zip(args.not_guaranteed),
    };
    let options = args.run.options();
    let suite_runner = |variants: &[Variant], tests: Vec<&'static Case>| {
        Matrix::build(&worker, variants, tests, &options)
    };
    let outcome = Console::with_terminal(|console| {
        match step_through(
            &exercise,
            prediction,
            console,
            &suite_runner,
            &options,
            &mut session,
        ) {
            // The run of one's own implementation is the outcome, saved with
            // the attempt either way; a step that did not go through saves nothing.
            Ok(_) => Ok(match &chosen.own {
                Some(own) => yours(own, &exercise, &worker, &options, console, &mut session),
                None => Ok(()),
            }),
            Err(error @ (StepError::NoPrediction | StepError::BadPrediction(_))) => {
                Err(CliError::Usage(error.to_string()))
            }
            Err(StepError::Io(error)) => Err(CliError::from(error)),
            Err(error @ StepError::InputEnded) => Err(CliError::Usage(error.to_string())),
        }
    })?;
    // Once, whatever the run of the student's own implementation gave:
    // the attempt is kept even when that run could not be made.
    session.save()?;
    outcome
}

/// After the exercise, the student's own implementation against the tests
/// of steps 1 to the exercise's step, as `lab check --step N` runs them, and
/// recorded the same way.
fn yours(
    own: &Implementation,
    exercise: &Exercise,
    worker: &lease_lab::runner::WorkerCommand,
    options: &RunOptions,
    console: &mut Console,
    session: &mut Session,
) -> Outcome {
    let step = exercise.step();
    let variant = own.variant()?;
    let ready = hear_greeting(&variant, options, check_lanes())
        .map_err(|fault| CliError::Found(fault.to_string()))?;
    writeln!(
        console.output,
        "\n{}\n",
        format!(
            "Your implementation, {}, against the tests of steps 1 to {step}:",
            own.describe()
        )
        .bold()
    )?;
    let report = run_check(worker, &ready, step, options);
    write!(
        console.output,
        "{}",
        check_text(&report, console.width, false)
    )?;
    report.record(session.edit(), own);
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
}

/// Runs one exercise from start to end and returns the attempt, recorded
/// in `session` (which the caller saves).
pub fn step_through(
    exercise: &Exercise,
    given: GivenPrediction,
    console: &mut Console,
    suite_runner: &SuiteRunner,
    options: &RunOptions,
    session: &mut Session,
) -> Result<Attempt, StepError> {
    if given.predict.is_none() && given.probe.is_none() && !console.interactive {
        return Err(StepError::NoPrediction);
    }
    let step = exercise.step();
    let menu: Vec<&'static Case> = suite::cases_through(step).collect();
    write!(
        console.output,
        "{}",
        screen::exercise(exercise, console.width)
    )?;
    let mut aids = prompt::Aids {
        exercise,
        hints: exercise.lab().hints,
        hints_seen: session
            .progress()
            .exercises
            .get(&exercise.key)
            .map_or(0, |record| record.hints_seen),
    };
    let prediction = prediction(&given, &menu, &mut aids, console)?;
    // Hints asked for at the prompt count as seen, as `lab hint` counts them.
    let seen = &mut session.edit().exercise(&exercise.key).hints_seen;
    *seen = (*seen).max(aids.hints_seen);
    let probe = match given.probe.clone().or(prediction.typed_probe) {
        Some(probe) => Some(run_probe(exercise, probe, options, console)?),
        None => None,
    };
    writeln!(
        console.output,
        "\n{}",
        format!(
            "Running the {} tests of steps 1 to {step} against the reference and mutant {}...",
            menu.len(),
            exercise.mutant().spec.id
        )
        .bold()
    )?;
    let matrix = suite_runner(
        &[exercise.reference.clone(), exercise.variant.clone()],
        menu,
    );
    let (shown, caught) = screen::verdicts(&matrix, step, console.width);
    write!(console.output, "{shown}")?;
    let score = match &probe {
        Some(probe) => Score::with_probe(&prediction.tests, &caught, &probe.file, probe.killed),
        None => Score::of(&prediction.tests, &caught),
    };
    write!(console.output, "{}", comparison(&score, console.width))?;
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
    let record = session.edit();
    record
        .exercise(&exercise.key)
        .attempts
        .push(attempt.clone());
    // The closing questions come after the last exercise; answers given
    // on the command line are kept whenever they come.
    if (exercise.last || given.reflection.is_some()) && record.reflection.is_none() {
        record.reflection = reflection(given, console)?;
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
                lease_lab::terminal::fill(
                    "Closing questions: answer them with `lab reflect --why-kept \"...\" --not-guaranteed \"...\"`.",
                    console.width,
                    "",
                    "  "
                )
            )?;
            None
        }
    };
    let Some((why_tests_are_kept, not_guaranteed)) =
        answers.filter(|(kept, not_guaranteed)| !kept.is_empty() && !not_guaranteed.is_empty())
    else {
        return Ok(None);
    };
    write!(console.output, "{}", closing_examples(console.width))?;
    Ok(Some(Reflection {
        at: progress::now_stamp(),
        why_tests_are_kept,
        not_guaranteed,
    }))
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
        lease_lab::terminal::reflow(examples, width)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use lease_lab::course::progress::Progress;
    use lease_lab::runner::{run_case, VariantRun};
    use std::io::{Cursor, Write};

    /// The suite run in this process, test by test: what the workers
    /// would report, without a `lab` binary to start.
    fn in_process(variants: &[Variant], tests: Vec<&'static Case>) -> Matrix {
        let options = RunOptions::default();
        let runs = variants
            .iter()
            .map(|variant| VariantRun {
                variant: variant.clone(),
                runs: tests
                    .iter()
                    .map(|case| {
                        run_case(
                            case,
                            variant.open(options.timeout),
                            &options.scratch,
                            options.timeout,
                        )
                    })
                    .collect(),
            })
            .collect();
        Matrix { tests, runs }
    }

    fn step_in(
        folder: &Path,
        key: &str,
        given: GivenPrediction,
        typed: &str,
        interactive: bool,
    ) -> (Result<Attempt, StepError>, String) {
        let mut input = Cursor::new(typed.as_bytes().to_vec());
        let mut output = Bounded(Vec::new());
        let mut console = Console {
            input: &mut input,
            interactive,
            output: &mut output,
            width: 100,
            columns: 160,
        };
        // As `run` does: one session, saved once when the step went through.
        let mut session = Session::open(&folder.join("progress.json")).unwrap();
        let result = step_through(
            &exercise::find(key).unwrap(),
            given,
            &mut console,
            &in_process,
            &RunOptions::default(),
            &mut session,
        );
        if result.is_ok() {
            session.save().unwrap();
        }
        (result, String::from_utf8(output.0).unwrap())
    }

    /// A step's output under test, refused past 1 MiB (a whole step writes
    /// a few kilobytes): a prompt that asked again for ever would
    /// otherwise fill the memory, and now fails the test at once.
    struct Bounded(Vec<u8>);

    impl Write for Bounded {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            if self.0.len() + bytes.len() > 1 << 20 {
                return Err(io::Error::other(
                    "the step wrote more than 1 MiB: does a prompt ask again for ever?",
                ));
            }
            self.0.extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// The last exercise, 8b, predicted as test 1 (with `reflection`, if
    /// given), typed answers `typed`: the attempt's result, what was shown
    /// and what was saved.
    fn step_8(
        reflection: Option<(&str, &str)>,
        typed: &str,
        interactive: bool,
    ) -> (Result<Attempt, StepError>, String, Progress) {
        let folder = tempfile::tempdir().unwrap();
        let given = GivenPrediction {
            predict: Some("1".into()),
            reflection: reflection.map(|(kept, not)| (kept.into(), not.into())),
            ..GivenPrediction::default()
        };
        let (result, shown) = step_in(folder.path(), "8b", given, typed, interactive);
        (result, shown, saved(folder.path()))
    }

    fn saved(folder: &Path) -> Progress {
        progress::load(&folder.join("progress.json"))
            .unwrap()
            .progress
    }

    #[test]
    fn the_step_asks_when_interactive_and_records_the_answers() {
        let folder = tempfile::tempdir().unwrap();
        let typed = "99\n\n2, 3\ntwo enqueues of one id\n";
        let (result, shown) = step_in(folder.path(), "2", GivenPrediction::default(), typed, true);
        let attempt = result.unwrap();
        assert!(shown.contains("there is no test number 99"), "{shown}");
        assert!(shown.contains("Name at least one test."), "{shown}");
        assert_eq!(
            attempt.predicted,
            [suite::CASES[1].name, suite::CASES[2].name]
        );
        assert_eq!(attempt.why, "two enqueues of one id");
        assert_eq!(attempt.mutant, "02");
        let caught = [
            "enqueue_of_an_existing_job_answers_false",
            "enqueue_of_a_claimed_job_keeps_its_lease_and_fence",
            "enqueue_of_a_done_job_keeps_its_result",
        ];
        assert_eq!(attempt.caught_by, caught);
        // Two tests of step 1 predicted, both survivors: none named rightly.
        assert_eq!(attempt.score.percent, 0);
        assert_eq!(attempt.score.predicted_and_caught, Vec::<String>::new());
        assert_eq!(attempt.score.predicted_but_survived, attempt.predicted);
        assert_eq!(attempt.score.caught_not_predicted, caught);
        assert!(
            shown.contains("Step 2 of 8: Register only the first job"),
            "{shown}"
        );
        assert!(
            shown.contains("+                \"INSERT OR REPLACE INTO jobs (id)"),
            "{shown}"
        );
        assert_eq!(saved(folder.path()).latest("2"), Some(&attempt));
        assert!(
            shown.contains("Next: lab step 3"),
            "the exercise after this one: {shown}"
        );
        assert!(
            !shown.contains("closing questions"),
            "the reflection waits for step 8: {shown}"
        );
    }

    #[test]
    fn exercise_8_is_not_the_last_so_the_closing_questions_wait_for_8b() {
        let folder = tempfile::tempdir().unwrap();
        let given = GivenPrediction {
            predict: Some("1".into()),
            why: Some("the count".into()),
            ..GivenPrediction::default()
        };
        let (result, shown) = step_in(folder.path(), "8", given, "", true);
        result.unwrap();
        assert!(!shown.contains("closing questions"), "{shown}");
        assert!(shown.contains("Next: lab step 8b"), "{shown}");
        assert_eq!(saved(folder.path()).reflection, None);
    }

    /// At the prompt, `t` lists every test in force and asks again;
    /// `probe` reads a probe up to an empty line, asks again when it does
    /// not parse (saying why), and otherwise runs it as the prediction.
    #[test]
    fn the_prompt_lists_every_test_on_t_and_takes_a_typed_probe() {
        let folder = tempfile::tempdir().unwrap();
        let typed = "t\nprobe\ngrab j1\n\nprobe\nenqueue j1 -> true\nenqueue j1 -> false\n\n";
        let (result, shown) = step_in(folder.path(), "2", GivenPrediction::default(), typed, true);
        let attempt = result.unwrap();
        let menu: Vec<&'static Case> = suite::cases_through(2).collect();
        let every_test = screen::all_tests(&menu, 160);
        assert_eq!(
            shown.matches(&every_test).count(),
            1,
            "the list, once, after `t`: {shown}"
        );
        assert!(
            shown.contains("<typed>:1: expected"),
            "the wrong probe's error: {shown}"
        );
        let probe = attempt.probe.expect("the typed probe is recorded");
        assert_eq!(probe.text, "enqueue j1 -> true\nenqueue j1 -> false\n");
        assert!(probe.killed, "the probe tells mutant 02 apart: {shown}");
        assert!(attempt.predicted.is_empty());
    }

    /// Before the prompt, the changed lines and the question come last; at
    /// the prompt, `d` shows the diff again, `h` the next hint (counted as
    /// seen, as `lab hint` counts them) until none is left, and `?` what
    /// each key does; each asks again.
    #[test]
    fn the_prompt_shows_the_change_last_and_the_diff_a_hint_or_help_on_a_key() {
        let folder = tempfile::tempdir().unwrap();
        let typed = "d\nh\nH\nh\nh\n?\n3\nwhy\n";
        let (result, shown) = step_in(folder.path(), "2", GivenPrediction::default(), typed, true);
        result.unwrap();
        let exercise = exercise::find("2").unwrap();
        let before_the_prompt = shown.split("\n> ").next().unwrap();
        let change = "-                \"INSERT OR IGNORE INTO jobs (id) VALUES (:id)\",\n+                \"INSERT OR REPLACE INTO jobs (id) VALUES (:id)\",\nWhich tests will catch the mutant?";
        assert!(before_the_prompt.contains(change), "{before_the_prompt}");
        assert!(
            before_the_prompt.trim_end().ends_with(screen::PROMPT_KEYS),
            "{before_the_prompt}"
        );
        assert_eq!(
            shown.matches(&screen::fragment(&exercise, 100)).count(),
            2,
            "the fragment in the exercise, and again after `d`: {shown}"
        );
        let hints = exercise::find("2").unwrap().lab().hints;
        for (number, hint) in hints.iter().enumerate() {
            let heading = format!("Hint {} of 3\n", number + 1);
            assert_eq!(shown.matches(&heading).count(), 1, "{heading}: {shown}");
            assert!(shown.contains(&lease_lab::terminal::reflow(hint, 100)));
        }
        assert!(
            shown.contains("That was the last of the 3 hints (lab hint 2 --all shows them all)."),
            "{shown}"
        );
        assert!(shown.contains(&screen::prompt_help(100)), "{shown}");
        assert!(shown.contains("this help"), "{shown}");
        assert_eq!(
            shown.matches("The broken fragment: mutant 02,").count(),
            2,
            "{shown}"
        );
        assert_eq!(saved(folder.path()).exercises["2"].hints_seen, 3);
    }

    /// The exercises follow the student's language unless a family is
    /// named: a Python file (given, or recorded in the progress file) gets
    /// the Python store's mutants, any other program the Rust store's.
    #[test]
    fn the_exercises_follow_the_students_language() {
        let folder = tempfile::tempdir().unwrap();
        let progress_path = folder.path().join("progress.json");
        let store = folder.path().join("store.py");
        std::fs::write(&store, "").unwrap();
        let store = store.to_str().unwrap();
        let family = |given: Option<&str>| {
            let given = given.map(|text| Subject::parse(text).unwrap());
            Chosen::of(given.as_ref(), &Session::open(&progress_path).unwrap()).store
        };
        assert_eq!(family(Some(store)), Subject::Python);
        assert_eq!(family(Some("rust")), Subject::Rust);
        assert_eq!(family(Some("./my-store --serve")), Subject::Rust);
        assert_eq!(family(None), Subject::Rust);
        let recorded = Progress {
            implementation: Some(Implementation::parse(store).unwrap()),
            ..Progress::default()
        };
        progress::save(&progress_path, &recorded).unwrap();
        assert_eq!(family(None), Subject::Python);
        assert_eq!(family(Some("rust")), Subject::Rust);
        let chosen = Chosen::of(
            Some(&Subject::Python),
            &Session::open(&progress_path).unwrap(),
        );
        assert_eq!(chosen.store, Subject::Python);
        assert_eq!(chosen.own, recorded.implementation);
    }

    /// A probe given on the command line is run and recorded; one that
    /// holds on the mutant as on the reference did not kill it.
    #[test]
    fn a_given_probe_that_does_not_tell_the_mutant_apart_is_recorded_as_not_killing() {
        let folder = tempfile::tempdir().unwrap();
        let given = GivenPrediction {
            probe: Some(probe::parse("same.probe", "enqueue j1 -> true\n").unwrap()),
            ..GivenPrediction::default()
        };
        let (result, shown) = step_in(folder.path(), "2", given, "", false);
        let probe = result.unwrap().probe.expect("the probe is recorded");
        assert_eq!(probe.file, "same.probe");
        assert!(!probe.killed, "{shown}");
    }

    /// The closing reflection is kept only with both answers; the examples
    /// are shown beside them, and only when there are some.
    #[test]
    fn a_reflection_needs_both_answers() {
        for reflection in [("kept because", ""), ("", "clocks")] {
            let (result, shown, saved) = step_8(Some(reflection), "", false);
            result.unwrap();
            assert!(saved.reflection.is_none(), "{shown}");
            assert!(!shown.contains("Set beside your answers"), "{shown}");
        }
        let (result, shown, saved) = step_8(None, "kept because\n\n", true);
        result.unwrap();
        assert!(shown.contains("closing questions"), "{shown}");
        assert!(saved.reflection.is_none(), "{shown}");
        let examples = exercise::closing_examples();
        let shown = closing_examples(200);
        assert!(shown.contains("Set beside your answers"), "{shown}");
        assert!(
            shown.contains(examples.lines().next().unwrap().trim()),
            "{shown}"
        );
        assert_eq!(beside_your_answers("", 200), "");
    }

    #[test]
    fn the_step_stops_cleanly_when_input_ends_or_cannot_come() {
        let folder = tempfile::tempdir().unwrap();
        let (result, _) = step_in(folder.path(), "3", GivenPrediction::default(), "", true);
        assert!(matches!(result, Err(StepError::InputEnded)));
        let (result, shown) = step_in(folder.path(), "3", GivenPrediction::default(), "", false);
        assert!(matches!(result, Err(StepError::NoPrediction)));
        assert!(shown.is_empty(), "nothing is shown before the refusal");
        let given = GivenPrediction {
            predict: Some("nope".into()),
            ..GivenPrediction::default()
        };
        let (result, _) = step_in(folder.path(), "3", given, "", false);
        assert!(
            matches!(result, Err(StepError::BadPrediction(message)) if message.contains("\"nope\""))
        );
        assert!(
            !folder.path().join("progress.json").exists(),
            "nothing is recorded"
        );
    }

    #[test]
    fn the_step_asks_for_the_reflection_after_the_last_exercise_and_then_says_all_is_done() {
        let folder = tempfile::tempdir().unwrap();
        let mut record = Progress::default();
        for exercise in exercise::exercises().into_iter().filter(|e| e.key != "8b") {
            record.exercise(&exercise.key).attempts.push(Attempt {
                at: progress::now_stamp(),
                mutant: exercise.mutant().spec.id.clone(),
                predicted: vec![],
                why: String::new(),
                probe: None,
                caught_by: vec![],
                score: Score::of(&[], &[]),
            });
        }
        progress::save(&folder.path().join("progress.json"), &record).unwrap();
        assert_eq!(record.next_exercise().unwrap().key, "8b");
        let given = GivenPrediction {
            predict: Some("claim_many_answers_every_owner_in_order".into()),
            ..GivenPrediction::default()
        };
        let (result, shown) = step_in(folder.path(), "8b", given, "kept because\nclocks\n", true);
        result.unwrap();
        assert!(
            shown.contains("Every exercise has a recorded prediction."),
            "{shown}"
        );
        let saved = saved(folder.path());
        let reflection = saved.reflection.clone().expect("the reflection is kept");
        assert_eq!(
            (
                reflection.why_tests_are_kept.as_str(),
                reflection.not_guaranteed.as_str()
            ),
            ("kept because", "clocks")
        );
        assert!(saved.next_exercise().is_none());
    }

    #[test]
    fn the_step_without_a_terminal_points_to_lab_reflect() {
        let (result, shown, saved) = step_8(None, "", false);
        result.unwrap();
        assert!(shown.contains("lab reflect --why-kept"), "{shown}");
        assert!(saved.reflection.is_none());
    }
}
