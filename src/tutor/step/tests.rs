//! The step-through's own tests: a student at a console, with the suite
//! run in this process.

use super::*;
use crate::course::progress::Progress;
use crate::runner::{run_case, VariantRun};
use std::io::{Cursor, Write};
use std::path::Path;

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
        "On the lab's Rust store.",
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
        assert!(shown.contains(&crate::terminal::reflow(hint, 100)));
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
    assert!(
        shown.starts_with(
            "Step 2 of 8: Register only the first job (exercise 2)\nOn the lab's Rust store.\n"
        ),
        "the header under the title: {shown}"
    );
}

/// A hint read at the prompt is recorded at once: a student who reads two
/// and leaves (Ctrl-C, the input's end) before predicting has seen them,
/// though the step did not go through and nothing else was saved.
#[test]
fn a_hint_read_at_the_prompt_counts_when_the_student_leaves() {
    let folder = tempfile::tempdir().unwrap();
    let (result, shown) = step_in(
        folder.path(),
        "4",
        GivenPrediction::default(),
        "h\nh\n",
        true,
    );
    assert!(matches!(result, Err(StepError::InputEnded)), "{shown}");
    assert!(shown.contains("Hint 2 of 3"), "{shown}");
    let saved = saved(folder.path());
    assert_eq!(saved.exercises["4"].hints_seen, 2);
    assert!(saved.exercises["4"].attempts.is_empty());
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
        let progress = Session::open(&progress_path).unwrap().progress().clone();
        StepChoice::of(given.as_ref(), &progress).store
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
    let chosen = StepChoice::of(Some(&Subject::Python), &recorded);
    assert_eq!(chosen.store, Subject::Python);
    assert_eq!(chosen.own, recorded.implementation);
}

/// The line under a step's title names the store whose mutant runs and
/// the student's implementation checked after it: the current one, or
/// the one `--impl` names; with none, how to make one.
#[test]
fn the_step_s_header_names_the_store_and_the_student_s_implementation() {
    let mut progress = Progress::default();
    assert_eq!(
        StepChoice::of(None, &progress).header(4),
        "On the lab's Rust store (no implementation of yours is recorded: lab new makes one)."
    );
    assert_eq!(
        StepChoice::of(Some(&Subject::Python), &progress).header(4),
        "On the lab's Python store, as --impl names it."
    );
    let current = Implementation::Python {
        file: "/home/ada/store.py".into(),
    };
    progress.make_current(&current);
    assert_eq!(
        StepChoice::of(None, &progress).header(4),
        "On the lab's Python store; then your current implementation, python3 /home/ada/store.py, against the tests of steps 1 to 4."
    );
    assert_eq!(
        StepChoice::of(None, &progress).header(1),
        "On the lab's Python store; then your current implementation, python3 /home/ada/store.py, against the tests of step 1."
    );
    assert_eq!(
        StepChoice::of(Some(&Subject::Rust), &progress).header(2),
        "On the lab's Rust store; then your current implementation, python3 /home/ada/store.py, against the tests of steps 1 to 2."
    );
    let named = Subject::Own(Implementation::Command {
        line: "./mine".into(),
    });
    assert_eq!(
        StepChoice::of(Some(&named), &progress).header(4),
        "On the lab's Rust store; then ./mine, against the tests of steps 1 to 4."
    );
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
    // At a terminal an empty answer is asked again, not taken as one.
    let (result, shown, saved) = step_8(None, "kept because\n\nclocks\n", true);
    result.unwrap();
    assert!(shown.contains("an answer is needed"), "{shown}");
    let reflection = saved.reflection.expect("both answers recorded");
    assert_eq!(
        (
            reflection.why_tests_are_kept.as_str(),
            reflection.not_guaranteed.as_str()
        ),
        ("kept because", "clocks")
    );
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

/// A prompt as long as the reason's leaves room to type: at 80 columns it
/// is a question of its own and the answer is typed after `> `; a short
/// one keeps its answer on its line.
#[test]
fn a_long_prompt_leaves_room_to_type_on_a_line_of_its_own() {
    colored::control::set_override(false);
    let asked = |prompt: &str, columns: usize| {
        let mut input = Cursor::new(b"an answer\n".to_vec());
        let mut output = Vec::new();
        let mut console = Console {
            input: &mut input,
            interactive: true,
            output: &mut output,
            width: columns.min(100),
            columns,
        };
        let answer = console.ask(prompt).unwrap();
        assert_eq!(answer.as_deref(), Some("an answer"));
        String::from_utf8(output).unwrap()
    };
    let reason = "What input, error or stored state will reveal the difference?";
    assert_eq!(
        asked(reason, 80),
        format!("{reason}\n> "),
        "at 80 columns the reason's prompt is a line of its own"
    );
    assert_eq!(asked(reason, 160), format!("{reason} "));
    assert_eq!(asked("Your name?", 80), "Your name? ");
    // Past the width, the question itself is filled.
    let shown = asked(reason, 40);
    assert!(
        shown.lines().all(|line| line.chars().count() <= 40),
        "{shown}"
    );
    assert!(shown.ends_with("\n> "), "{shown}");
}

/// A `--predict` that names no test is refused before the step is shown:
/// the error is all the student sees.
#[test]
fn a_prediction_that_names_no_test_is_refused_before_the_step_is_shown() {
    let folder = tempfile::tempdir().unwrap();
    let given = GivenPrediction {
        predict: Some("99".into()),
        why: Some("a guess".into()),
        ..GivenPrediction::default()
    };
    let (result, shown) = step_in(folder.path(), "4", given, "", false);
    match result {
        Err(StepError::BadPrediction(problem)) => {
            assert!(problem.contains("no test number 99"), "{problem}")
        }
        other => panic!("refused, not {other:?}"),
    }
    assert_eq!(shown, "", "nothing is shown before the error");
}
