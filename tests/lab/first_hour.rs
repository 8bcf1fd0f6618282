//! A student's first hour, walked as a student walks it: the commands
//! around the exercises at a terminal 80 columns wide (a pseudo-terminal,
//! see [`Sandbox::lab_at_terminal`]), mistakes included.

use crate::common::{words, Sandbox};
use lease_lab::course::prediction::Score;
use lease_lab::course::progress::{Attempt, Progress};

/// Every line of `text` fits 80 columns.
fn fits_80(text: &str) {
    let wide: Vec<&str> = text
        .lines()
        .filter(|line| line.chars().count() > 80)
        .collect();
    assert!(wide.is_empty(), "wider than 80 columns: {wide:#?}");
}

/// The student presses Enter on the first closing question, answers both,
/// and finds them recorded; another time the input ends after the first
/// answer: nothing is recorded, and the error gives back what was typed.
#[test]
fn reflect_at_a_terminal_asks_an_empty_answer_again_and_loses_nothing() {
    let sandbox = Sandbox::new();
    let ran = sandbox.lab_at_terminal(&["reflect"], "\nold tests guard old rules\nclock skew\n");
    ran.assert_success();
    assert_eq!(
        ran.stdout
            .matches("Why are the earlier steps' tests kept")
            .count(),
        2,
        "{}",
        ran.shown()
    );
    ran.assert_says(&["an answer is needed", "Recorded your reflection."]);
    let progress = sandbox.lab(&["progress", "--format", "json"]).json();
    assert_eq!(
        progress["reflection"]["why_tests_are_kept"],
        "old tests guard old rules"
    );
    assert_eq!(progress["reflection"]["not_guaranteed"], "clock skew");

    let ran = sandbox.lab_at_terminal(&["reflect"], "they pin the rules\n");
    ran.assert_code(2);
    ran.assert_says(&[r#"lab reflect --why-kept "they pin the rules" --not-guaranteed "...""#]);
    // The input ended at the second question: the error starts a line of
    // its own, under the question, and fits the terminal.
    let error = ran
        .stdout
        .lines()
        .skip_while(|line| !line.starts_with("lab reflect:"))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(!error.is_empty(), "{}", ran.shown());
    fits_80(&error);
    let kept = sandbox.lab(&["progress", "--format", "json"]).json();
    assert_eq!(
        kept["reflection"], progress["reflection"],
        "nothing changed"
    );
}

/// `lab hint` alone gives the hint of the exercise `lab` names next, and
/// says which; once every exercise has an attempt it says how to ask for
/// one.
#[test]
fn hint_without_a_number_is_for_the_next_exercise() {
    let sandbox = Sandbox::new();
    let overview = sandbox.lab(&["--student", "Ada"]);
    overview.assert_says(&["Next: lab step 1"]);
    let ran = sandbox.lab(&["hint"]);
    ran.assert_success();
    ran.assert_says(&["Exercise 1:", "Hint 1", "run `lab hint 1` again"]);
    let again = sandbox.lab(&["hint"]);
    again.assert_says(&["Hint 2"]);
    let named = sandbox.lab(&["hint", "1"]);
    assert!(named.stdout.starts_with("Hint 1"), "{}", named.shown());

    let done = sandbox.path("done.json");
    let mut progress = Progress::default();
    for exercise in lease_lab::exercise::exercises() {
        let attempt = Attempt {
            at: "2026-01-01T00:00:00Z".into(),
            mutant: exercise.variant.id.to_string(),
            predicted: Vec::new(),
            why: String::new(),
            probe: None,
            caught_by: Vec::new(),
            score: Score::of(&[], &[]),
        };
        progress.exercise(&exercise.key).attempts.push(attempt);
    }
    std::fs::write(&done, serde_json::to_string(&progress).unwrap()).unwrap();
    let ran = sandbox.lab(&["--progress", "done.json", "hint"]);
    ran.assert_success();
    ran.assert_says(&["Every exercise has an attempt", "lab hint N"]);
}

/// `lab reset 4` asks first at a terminal, as `lab reset` does: Enter
/// keeps the exercise, `y` forgets it; off a terminal it needs `--yes`.
#[test]
fn reset_of_one_exercise_asks_first() {
    let sandbox = Sandbox::new();
    sandbox.lab(&["hint", "4"]).assert_success();
    let kept = sandbox.lab_at_terminal(&["reset", "4"], "\n");
    kept.assert_success();
    kept.assert_says(&[
        "Forget exercise 4: 0 attempts and 1 hint seen? [y/N]",
        "Nothing was forgotten.",
    ]);
    let refused = sandbox.lab(&["reset", "4"]);
    refused.assert_code(2);
    refused.assert_says(&["nothing was changed: add --yes"]);
    let forgot = sandbox.lab_at_terminal(&["reset", "4"], "y\n");
    forgot.assert_says(&["Forgot exercise 4: 0 attempts and 1 hint seen."]);
    let again = sandbox.lab(&["hint", "4"]);
    assert!(!again.stdout.contains("Hint 2"), "{}", again.shown());
}

/// After `lab new --lang python mystore`, `cd mystore && lab check` checks
/// that program: the progress file is found in the folder above, as `lab
/// new` says.
#[test]
fn check_inside_the_folder_lab_new_made_checks_that_program() {
    let sandbox = Sandbox::new();
    let made = sandbox.lab(&["new", "--lang", "python", "mystore"]);
    made.assert_success();
    made.assert_says(&[
        "your progress file, lease-lab-progress.json",
        "(as mystore)",
    ]);
    let mut inside = sandbox.command(&["check", "--step", "1"]);
    inside.current_dir(sandbox.path("mystore"));
    let ran = crate::common::run_bounded(&mut inside, crate::common::NO_HANG);
    assert!(
        !words(&ran.text()).contains("no implementation to check"),
        "{}",
        ran.shown()
    );
    ran.assert_says(&["mystore/store.py", "step 1"]);
    assert!(
        !sandbox.path("mystore/lease-lab-progress.json").exists(),
        "no second progress file is made"
    );
}

/// At 80×24, at the prediction prompt of exercise 8b, the change is on
/// screen: the lookup moved out from under the write lock, and the line it
/// was moved past, `begin_immediate` (`BEGIN IMMEDIATE` in Python), in
/// both languages.
#[test]
fn at_the_8b_prompt_the_moved_lookup_and_the_lock_it_left_are_on_screen() {
    for (language, lock) in [("rust", "begin_immediate()"), ("python", "BEGIN IMMEDIATE")] {
        let sandbox = Sandbox::new();
        let ran =
            sandbox.lab_at_terminal(&["--student", "Ada", "step", "8b", "--impl", language], "");
        let lines: Vec<&str> = ran.stdout.lines().collect();
        let prompt = lines
            .iter()
            .rposition(|line| line.starts_with('>'))
            .unwrap_or_else(|| panic!("no prompt: {}", ran.shown()));
        let screen = &lines[prompt.saturating_sub(23)..=prompt];
        let at = |text: &str| screen.iter().position(|line| line.contains(text));
        let lock_line = at(lock).unwrap_or_else(|| panic!("{language}: {screen:#?}"));
        let added = screen
            .iter()
            .position(|line| line.starts_with('+'))
            .unwrap_or_else(|| panic!("{language}: {screen:#?}"));
        let removed = screen
            .iter()
            .rposition(|line| line.starts_with('-'))
            .unwrap_or_else(|| panic!("{language}: {screen:#?}"));
        assert!(
            added < lock_line && lock_line < removed,
            "{language}: the lock's line between the moved lines: {screen:#?}"
        );
        fits_80(&screen.join("\n"));
    }
}
