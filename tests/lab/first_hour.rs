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

/// The third hint of exercise 8 is code, shown as code: no Markdown fence
/// reaches the screen, in either language.
#[test]
fn a_hint_with_code_shows_no_markdown_fences() {
    let sandbox = Sandbox::new();
    for language in ["rust", "python"] {
        let ran = sandbox.lab(&["hint", "8", "--all", "--impl", language]);
        ran.assert_success();
        assert!(!ran.stdout.contains("```"), "{}", ran.shown());
        assert!(
            ran.stdout
                .contains("\nclaim_many(p, \"j\", [], now=200, ttl=10)"),
            "the code is kept as it is: {}",
            ran.shown()
        );
    }
}

/// The screens of a step say what they show in plain words: the
/// worksheet's fragment quoted on a line of its own (exercise 6), "step 1"
/// and not "steps 1 to 1", and the tests the reference fails too named.
#[test]
fn a_step_s_screen_quotes_the_fragment_and_names_what_it_counts() {
    let sandbox = Sandbox::new();
    let six = sandbox.lab(&["step", "6", "--predict", "40", "--why", "done twice"]);
    six.assert_success();
    assert!(
        six.stdout.contains(
            "The worksheet's fragment, as printed there:\n    AND done>=0 AND until>?\", (result\n"
        ),
        "{}",
        six.shown()
    );
    let one = sandbox.lab(&["step", "1", "--predict", "4", "--why", "twice"]);
    one.assert_says(&["Running the 11 tests of step 1 against"]);
    assert!(!one.stdout.contains("steps 1 to 1"), "{}", one.shown());
    let eight = sandbox.lab(&[
        "step",
        "8",
        "--impl",
        "python",
        "--predict",
        "67",
        "--why",
        "length",
    ]);
    // The Python store fails none of the tests it is asked: a test beyond
    // the worksheet the mutant fails is said as what it is, and the test
    // no program is asked (its current folder is its own) is not there.
    eight.assert_says(&[
        "1 test beyond the worksheet for this store (the Rust store's own promises) fails on the mutant and counts for nothing: claim_many_with_an_empty_owner_is_invalid_and_claims_nothing",
    ]);
    assert!(
        !eight.stdout.contains("the reference fails too")
            && !eight
                .stdout
                .contains("init_db_with_a_bare_file_name_uses_the_current_folder"),
        "{}",
        eight.shown()
    );
}

/// A student who breaks their own finished program on purpose and
/// predicts which tests catch it reads of their change, not of "the
/// mutant": `enqueue` that always answers true, predicted caught by a test
/// it survives.
#[test]
fn predicting_a_break_of_one_s_own_program_speaks_of_one_s_change() {
    let sandbox = Sandbox::new();
    let reference = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/store.py"))
        .expect("the Python store");
    let broken = reference.replace("return cursor.rowcount == 1", "return True");
    assert_ne!(broken, reference, "the break applies");
    std::fs::write(sandbox.path("mine.py"), broken).unwrap();
    let ran = sandbox.lab(&[
        "check",
        "--impl",
        "mine.py",
        "--step",
        "2",
        "--predict",
        "enqueue_adds_a_job_in_the_default_state",
    ]);
    ran.assert_says(&[
        "enqueue_adds_a_job_in_the_default_state",
        "Everything it checks is the same under your change, so it passes there.",
    ]);
    assert!(!ran.stdout.contains("under the mutant"), "{}", ran.shown());
}

/// Exercise 8's text agrees with its run, in both languages: the tests
/// named for one winner do catch the mutant (by their count of answers),
/// and the text says so rather than that counting will not catch it.
#[test]
fn exercise_8_s_text_agrees_with_what_its_run_shows() {
    let sandbox = Sandbox::new();
    for language in ["rust", "python"] {
        let ran = sandbox.lab(&[
            "step",
            "8",
            "--impl",
            language,
            "--predict",
            "67",
            "--why",
            "length",
        ]);
        ran.assert_success();
        let caught_one_winner = ran
            .stdout
            .lines()
            .any(|line| line.contains("one_winner") && line.contains("(caught)"));
        assert!(caught_one_winner, "{language}: {}", ran.shown());
        let text = words(&ran.stdout);
        assert!(
            !text.contains("counting winners will not catch it"),
            "{text}"
        );
        assert!(
            text.contains("the tests named for one winner too, whose first check is that each owner got an answer"),
            "{language}: {text}"
        );
    }
}

/// Step 4's screen says plainly that its tests cannot see whether a claim
/// is atomic, and where that is checked: a claim without `BEGIN IMMEDIATE`
/// passes every test of step 4 (mutant 08b, run through step 4 only) and
/// is caught at step 8.
#[test]
fn step_4_says_its_atomicity_is_checked_at_step_8() {
    let sandbox = Sandbox::new();
    let four = sandbox.lab(&["step", "4", "--predict", "26", "--why", "expiry"]);
    four.assert_says(&[
        "This step's tests make one call at a time, so they cannot see whether a claim is atomic",
        "Atomicity is checked at step 8",
    ]);
    let run = sandbox.lab(&["run", "08b", "--color", "never"]);
    run.assert_success();
    let (before_8, from_8) = run
        .stdout
        .split_once("\nstep 8\n")
        .unwrap_or_else(|| panic!("{}", run.shown()));
    let failed: Vec<&str> = before_8
        .lines()
        .filter(|line| line.trim_start().starts_with(['F', 'C', 'T']))
        .collect();
    assert!(failed.is_empty(), "08b fails before step 8: {failed:#?}");
    assert!(before_8.contains("\nstep 4\n"), "{}", run.shown());
    assert!(from_8.contains("FAIL  claims_queued_behind_a_writer_have_one_winner"));
}

/// A student at the prompt of `lab step 4`, 80 columns wide, who reads a
/// hint and presses Ctrl-C: the hint counts as seen, as `lab hint` would
/// count it, though the step never went through.
#[test]
fn a_hint_read_before_ctrl_c_counts_as_seen() {
    use std::io::{Read, Write};
    use std::time::{Duration, Instant};
    let sandbox = Sandbox::new();
    let line = format!("'{}' step 4", env!("CARGO_BIN_EXE_lab"));
    let mut terminal = sandbox.command_of(
        std::path::Path::new("script"),
        &["--quiet", "--return", "--command", &line, "/dev/null"],
    );
    // A terminal's shell starts a command with Ctrl-C's signal at its
    // default, whatever this test was started with: a shell without job
    // control starts what it runs in the background with SIGINT ignored,
    // and that would pass on to the lab through script.
    // SAFETY: signal(2) is async-signal-safe, and the closure touches no
    // memory of the parent.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut terminal, || {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut child = terminal
        .env("COLUMNS", "80")
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("script starts");
    let mut keyboard = child.stdin.take().expect("piped");
    let mut screen = child.stdout.take().expect("piped");
    let (sender, shown) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buffer = [0u8; 4096];
        while let Ok(read @ 1..) = screen.read(&mut buffer) {
            if sender.send(buffer[..read].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut text = String::new();
    // Waits until `wanted` is shown after byte `after` of what was shown,
    // and answers where it ends.
    let mut wait_for = |wanted: &str, after: usize| -> usize {
        let deadline = Instant::now() + crate::common::NO_HANG;
        loop {
            if let Some(at) = text.get(after..).and_then(|rest| rest.find(wanted)) {
                return after + at + wanted.len();
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match shown.recv_timeout(left.max(Duration::from_millis(1))) {
                Ok(bytes) => text.push_str(&String::from_utf8_lossy(&bytes)),
                Err(_) => {
                    let _ = child.kill();
                    panic!("{wanted:?} never came:\n{text}");
                }
            }
        }
    };
    let prompt = wait_for("\n> ", 0);
    keyboard.write_all(b"h\n").unwrap();
    let hint = wait_for("Hint 1 of 3", prompt);
    // The prompt again, where a person presses the keys.
    wait_for("\n> ", hint);
    // Ctrl-C, as the terminal sends it.
    keyboard.write_all(b"\x03").unwrap();
    let deadline = Instant::now() + crate::common::NO_HANG;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "Ctrl-C did not end it:\n{text}");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(!status.success(), "interrupted: {status}");
    let progress = sandbox.lab(&["progress", "--format", "json"]).json();
    assert_eq!(progress["exercises"]["4"]["hints_seen"], 1, "{progress:#}");
    assert_eq!(
        progress["exercises"]["4"]["attempts"],
        serde_json::json!([]),
        "no attempt"
    );
}

/// `lab reflect` at a terminal, with earlier answers: Enter keeps the
/// first, a new second answer replaces its own; the example answers come
/// once, under one heading. Ctrl-D at the first question records nothing
/// and does not tell a student at a terminal that a terminal asks.
#[test]
fn reflect_at_a_terminal_keeps_an_earlier_answer_on_enter() {
    let sandbox = Sandbox::new();
    sandbox
        .lab(&[
            "reflect",
            "--why-kept",
            "old tests guard old rules",
            "--not-guaranteed",
            "clock skew",
        ])
        .assert_success();
    let ran = sandbox.lab_at_terminal(&["reflect"], "\nfsync that lies\n");
    ran.assert_success();
    ran.assert_says(&["which Enter keeps"]);
    let progress = sandbox.lab(&["progress", "--format", "json"]).json();
    assert_eq!(
        progress["reflection"]["why_tests_are_kept"],
        "old tests guard old rules"
    );
    assert_eq!(progress["reflection"]["not_guaranteed"], "fsync that lies");
    assert_eq!(
        ran.stdout.matches("Set beside your answers").count(),
        1,
        "{}",
        ran.shown()
    );
    assert!(
        !ran.stdout
            .to_lowercase()
            .contains("example answers to set beside"),
        "the heading once: {}",
        ran.shown()
    );
    // What lab wrote before the first question (the rest of the screen
    // has the typed input echoed where the terminal put it).
    let (before, _) = ran
        .stdout
        .split_once("Why are the earlier")
        .unwrap_or_else(|| panic!("no question: {}", ran.shown()));
    fits_80(before);

    let ended = sandbox.lab_at_terminal(&["reflect"], "");
    ended.assert_code(2);
    assert!(
        !ended.text().contains("at a terminal"),
        "it is at one: {}",
        ended.shown()
    );
    let kept = sandbox.lab(&["progress", "--format", "json"]).json();
    assert_eq!(
        kept["reflection"], progress["reflection"],
        "nothing changed"
    );
}
