use super::*;
use crate::outcome::TestRun;
use crate::runner::VariantRun;
use crate::suite::{self, Tag};
use crate::variant::Variant;
use std::time::Duration;

fn run_with(outcomes: &[(&str, TestOutcome)]) -> VariantRun {
    VariantRun {
        variant: Variant::reference(),
        runs: suite::cases_through(8)
            .map(|case| {
                let outcome = outcomes
                    .iter()
                    .find(|(name, _)| *name == case.name)
                    .map_or(TestOutcome::Pass, |(_, outcome)| outcome.clone());
                TestRun::new(case.name, outcome, Duration::ZERO)
            })
            .collect(),
    }
}

/// The name of the `n`-th test (from 0) of `step` with `tag`.
fn nth_of(step: u8, tag: Tag, n: usize) -> &'static str {
    suite::CASES
        .iter()
        .filter(|case| case.step == step && case.tag == tag)
        .nth(n)
        .expect("a test of that step")
        .name
}

fn first_of(step: u8, tag: Tag) -> &'static str {
    nth_of(step, tag, 0)
}

fn stub(step: u8) -> TestOutcome {
    TestOutcome::Fail {
        check: "a call".into(),
        expected: "an answer (the call is valid)".into(),
        actual: format!("error not-implemented: step {step} is not written yet"),
        state: None,
    }
}

#[test]
fn each_step_is_passed_failing_or_not_written_and_reference_tests_are_apart() {
    let wrong = TestOutcome::Fail {
        check: "enqueue(\"j\") again".into(),
        expected: "false".into(),
        actual: "true".into(),
        state: None,
    };
    let run = run_with(&[
        (first_of(2, Tag::Contract), wrong),
        (first_of(4, Tag::Contract), stub(4)),
        (
            first_of(1, Tag::Reference),
            TestOutcome::Crash {
                message: "x".into(),
            },
        ),
    ]);
    let report = CheckReport::of(&run, 5);
    let statuses: Vec<StepStatus> = report.steps.iter().map(|step| step.status).collect();
    use StepStatus::*;
    assert_eq!(statuses, [Passed, Failing, Passed, NotImplemented, Passed]);
    assert!(!report.all_pass());
    assert_eq!(
        report.failing_tests(),
        [first_of(2, Tag::Contract), first_of(4, Tag::Contract)]
    );
    assert_eq!(report.beyond_failing(), [first_of(1, Tag::Reference)]);
    colored::control::set_override(false);
    let text = check_text(&report, 100, false);
    assert!(text.contains("  step 2  failing"), "{text}");
    assert!(text.contains("expected: false"), "{text}");
    assert!(
        text.contains("it answers: step 4 is not written yet"),
        "{text}"
    );
    assert!(text.contains("not counted"), "{text}");
    let next = next_text(&report, "store.py", 5, "store.py");
    assert!(next.contains("make step 2 pass"), "{next}");
}

/// A failing step shows its first two failures in full and names the
/// rest; the reference tests that do not hold are named once the
/// contract holds, and not mentioned when none ran.
#[test]
fn a_check_shows_two_failures_in_full_and_names_the_rest() {
    colored::control::set_override(false);
    let crash = || TestOutcome::Crash {
        message: "it broke".into(),
    };
    let [a, b, c] = [0, 1, 2].map(|n| nth_of(4, Tag::Contract, n));
    let report = CheckReport::of(&run_with(&[(a, crash()), (b, crash()), (c, crash())]), 4);
    let text = check_text(&report, 200, false);
    assert!(text.contains(&format!("also failing: {c}\n")), "{text}");
    assert!(!text.contains(&format!("also failing: {a}")), "{text}");
    let one = CheckReport::of(&run_with(&[(a, crash())]), 4);
    assert!(!check_text(&one, 200, false).contains("also failing"));

    // A crash is shown before the plain failures that came first.
    let wrong = || TestOutcome::Fail {
        check: "claim".into(),
        expected: "1".into(),
        actual: "2".into(),
        state: None,
    };
    let mixed = CheckReport::of(&run_with(&[(a, wrong()), (b, wrong()), (c, crash())]), 4);
    let text = check_text(&mixed, 200, false);
    assert!(text.contains(&format!("also failing: {b}\n")), "{text}");
    let (crash_at, wrong_at) = (text.find("it broke"), text.find("expected: 1"));
    assert!(
        crash_at.is_some() && wrong_at.is_some() && crash_at < wrong_at,
        "{text}"
    );

    let reference = first_of(1, Tag::Reference);
    let failing = run_with(&[(a, crash()), (reference, crash())]);
    let text = check_text(&CheckReport::of(&failing, 4), 200, false);
    let ran = CheckReport::of(&failing, 4).beyond.len();
    assert!(
        text.contains(&format!(
            "{} of {ran} of the Rust store's stricter promises hold (`lab check --all` lists them)",
            ran - 1
        )),
        "{text}"
    );
    assert!(!text.contains(reference), "named only with --all: {text}");
    let holding = CheckReport::of(&run_with(&[(reference, crash())]), 4);
    let text = check_text(&holding, 200, false);
    assert!(!text.contains(reference), "named only with --all: {text}");
    let all = check_text(&holding, 200, true);
    assert!(
        all.contains(&format!(
            "promises hold:\n  fails  {reference}: crashed: it broke\n"
        )),
        "{all}"
    );
    let holds = &holding.beyond[1].0;
    assert!(all.contains(&format!("\n  holds  {holds}\n")), "{all}");
    let none_failing = check_text(&CheckReport::of(&run_with(&[]), 4), 200, false);
    assert!(
        none_failing.contains(&format!("{ran} of {ran} of the")),
        "{none_failing}"
    );
    let none_ran = CheckReport {
        beyond: Vec::new(),
        ..holding
    };
    assert!(!check_text(&none_ran, 200, true).contains("Beyond the worksheet"));
}

#[test]
fn the_advice_follows_the_first_open_step() {
    colored::control::set_override(false);
    let stubs = run_with(
        &suite::CASES
            .iter()
            .filter(|case| case.tag == Tag::Contract)
            .map(|case| (case.name, stub(case.step)))
            .collect::<Vec<_>>(),
    );
    let report = CheckReport::of(&stubs, 8);
    assert!(report
        .steps
        .iter()
        .all(|step| step.status == StepStatus::NotImplemented));
    let next = next_text(&report, "store.py", 8, "store.py");
    assert!(next.contains("write step 1, init_db"), "{next}");
    assert!(!next.contains("tests need it too"), "{next}");
    let waiting = run_with(
        &suite::CASES
            .iter()
            .filter(|case| case.tag == Tag::Contract)
            .map(|case| (case.name, stub(case.step.max(2))))
            .collect::<Vec<_>>(),
    );
    let next = next_text(&CheckReport::of(&waiting, 8), "store.py", 8, "store.py");
    assert!(next.contains("write step 2, enqueue"), "{next}");
    assert!(next.contains("step 1's tests need it too"), "{next}");
    let helper = run_with(
        &suite::CASES
            .iter()
            .filter(|case| case.tag == Tag::Contract && case.step >= 2)
            .map(|case| {
                let said = "step 2: check_args is not written yet";
                (
                    case.name,
                    TestOutcome::Fail {
                        check: "enqueue(\"j\")".into(),
                        expected: "true".into(),
                        actual: format!("error not-implemented: {said}"),
                        state: None,
                    },
                )
            })
            .collect::<Vec<_>>(),
    );
    let next = next_text(&CheckReport::of(&helper, 8), "store.py", 8, "store.py");
    assert!(next.contains("write step 2, check_args (its"), "{next}");
    assert_eq!(
        stub_name("step 2: check_args is not written yet"),
        Some("check_args")
    );
    assert_eq!(stub_name("step 1: create the jobs table"), None);
    assert_eq!(stub_name("step 1:  is not written yet"), None);
    assert_eq!(stub_name("step 1: the table is not written yet"), None);
    assert_eq!(stub_name("step 1 init_db is not written yet"), None);
    assert_eq!(stub_step("step 12: no"), None);
    assert_eq!(stub_step("not written yet"), None);
    let passing = CheckReport::of(&run_with(&[]), 3);
    assert!(passing.all_pass());
    assert!(next_text(&passing, "store.py", 3, "store.py").contains("lab check --step 4"));
    let all = CheckReport::of(&run_with(&[]), 8);
    assert!(next_text(&all, "store.py", 8, "store.py").contains("lab check --predict"));
}

fn window(last: &[&str], earlier: usize) -> StderrWindow {
    StderrWindow {
        last: last.iter().map(|line| line.to_string()).collect(),
        earlier,
    }
}

/// What the program wrote during a failing test is shown under it, cut
/// to the width; a crash keeps its traceback's lines as written, and
/// what it quotes already is not shown twice.
#[test]
fn a_failure_shows_the_program_s_standard_error_and_a_crash_its_lines() {
    colored::control::set_override(false);
    let wrong = TestOutcome::Fail {
        check: "claim".into(),
        expected: "fence 2".into(),
        actual: "none".into(),
        state: None,
    };
    let shown = failure_text_of(
        "t",
        &wrong,
        Some(&window(&["seen 1", "seen 2"], 3)),
        None,
        80,
    );
    assert!(
        shown.ends_with("        it wrote on standard error (3 earlier lines left out):\n          seen 1\n          seen 2\n"),
        "{shown}"
    );
    let one = failure_text_of("t", &wrong, Some(&window(&["x"], 1)), None, 80);
    assert!(one.contains("(1 earlier line left out)"), "{one}");
    let none = failure_text_of("t", &wrong, Some(&window(&["x"], 0)), None, 80);
    assert!(
        none.contains("it wrote on standard error:\n          x\n"),
        "{none}"
    );
    assert!(!failure_text_of("t", &wrong, None, None, 80).contains("standard error"));
    let long = "y".repeat(100);
    let cut_line = failure_text_of("t", &wrong, Some(&window(&[&long], 0)), None, 60);
    assert!(
        cut_line.lines().all(|line| line.chars().count() <= 60),
        "{cut_line}"
    );

    let crash = TestOutcome::Crash {
        message: format!("python3 s.py exited with code 1{STDERR_INTRO}\n    another test's line"),
    };
    let traceback = ["File \"s.py\", line 3", "  def f()", "         ^"];
    let shown = failure_text_of("t", &crash, Some(&window(&traceback, 0)), None, 80);
    assert_eq!(
        shown,
        "      t\n        crashed: python3 s.py exited with code 1\n        it wrote on standard error:\n          File \"s.py\", line 3\n            def f()\n                   ^\n",
        "the caret stays under its column; the lines the message quotes are the test's own"
    );
    let quiet = failure_text_of("t", &crash, Some(&window(&[], 0)), None, 80);
    assert_eq!(
        quiet,
        format!("      t\n        crashed: python3 s.py exited with code 1{STDERR_INTRO}\n            another test's line\n"),
        "without lines of its own, the program's last"
    );
    let hang = TestOutcome::Timeout {
        limit_ms: 900,
        detail: Some("it gave no answer".into()),
    };
    assert!(failure_text_of("t", &hang, None, None, 80)
        .contains("        timed out: it gave no answer\n"));
}

/// Step 8's race tests report `N winners`: with several, the advice
/// sends the student back to claim and step 4's contract.
#[test]
fn several_winners_send_the_student_back_to_claim() {
    colored::control::set_override(false);
    let race = |actual: &str| TestOutcome::Fail {
        check: "the owners that got a fence from claim_many on \"j\"".into(),
        expected: "exactly one owner with a fence".into(),
        actual: actual.into(),
        state: None,
    };
    assert_eq!(
        several_winners(&race("16 winners: w00 got 1, and 15 more")),
        Some(16)
    );
    assert_eq!(several_winners(&race("1 winners: w00 got 1")), None);
    assert_eq!(several_winners(&race("2 owners: none")), None);
    assert_eq!(several_winners(&race("no winner")), None);
    assert_eq!(several_winners(&TestOutcome::Pass), None);
    let test = first_of(8, Tag::Contract);
    let report = CheckReport::of(&run_with(&[(test, race("4 winners: A got 1, B got 2"))]), 8);
    let next = next_text(&report, "store.py", 8, "store.py");
    assert!(next.contains("4 claims won one job"), "{next}");
    assert!(
        next.contains("The race is in claim: its read and its write"),
        "{next}"
    );
    assert!(next.contains("step 4's contract"), "{next}");
    assert!(next.contains("BEGIN IMMEDIATE"), "{next}");
    let other = CheckReport::of(&run_with(&[(test, race("none"))]), 8);
    assert!(next_text(&other, "store.py", 8, "store.py").contains("make step 8 pass"));
}

/// A step keeps what the program wrote during each of its failing
/// tests that wrote anything; a passing test's lines are not kept.
#[test]
fn a_step_keeps_the_standard_error_of_its_failing_tests() {
    let [a, b, c] = [0, 1, 2].map(|n| nth_of(3, Tag::Contract, n));
    let wrong = TestOutcome::Crash {
        message: "x".into(),
    };
    let mut run = run_with(&[(a, wrong.clone()), (b, wrong)]);
    for test in &mut run.runs {
        if test.test == a || test.test == c {
            test.stderr = window(&[test.test.as_str()], 0);
        }
    }
    let report = CheckReport::of(&run, 3);
    let kept: Vec<(&str, &StderrWindow)> = report.steps[2]
        .stderr
        .iter()
        .map(|(name, window)| (*name, window))
        .collect();
    assert_eq!(kept, [(a, &window(&[a], 0))]);
}

/// `lab watch` shows a line per step, then the first failure in full:
/// a stub's answer when the first open step is not written.
#[test]
fn a_watched_check_is_a_line_per_step_then_the_first_failure() {
    colored::control::set_override(false);
    let wrong = TestOutcome::Fail {
        check: "enqueue again".into(),
        expected: "false".into(),
        actual: "true".into(),
        state: None,
    };
    let [a, b] = [0, 1].map(|n| nth_of(2, Tag::Contract, n));
    let report = CheckReport::of(&run_with(&[(a, wrong.clone()), (b, wrong)]), 3);
    let text = watch_text(&report, 80);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("  step 1  passed"), "{text}");
    assert!(lines[1].starts_with("  step 2  failing"), "{text}");
    assert!(lines[2].starts_with("  step 3  passed"), "{text}");
    assert_eq!(
        lines[3..6],
        ["", "First failure, step 2:", &format!("      {a}")],
        "{text}"
    );
    assert!(text.contains("expected: false"), "{text}");
    assert!(!text.contains(b), "only the first failure: {text}");
    let printed = run_with(&[(a, stub(2))]);
    let mut printed = CheckReport::of(&printed, 3);
    printed.steps[1].failures[0].1 = TestOutcome::Crash {
        message: "it ended".into(),
    };
    printed.steps[1]
        .stderr
        .insert(a, window(&["1", "2", "3", "4", "5"], 2));
    let text = watch_text(&printed, 80);
    assert!(
        text.ends_with("(4 earlier lines left out):\n          3\n          4\n          5\n"),
        "{text}"
    );
    let stubbed = CheckReport::of(&run_with(&[(a, stub(2))]), 3);
    let text = watch_text(&stubbed, 80);
    assert!(
        text.contains(&format!("First failure, step 2:\n      {a}\n")),
        "{text}"
    );
    assert!(
        text.contains("it answers: step 2 is not written yet"),
        "{text}"
    );
    let passing = CheckReport::of(&run_with(&[]), 3);
    assert_eq!(watch_text(&passing, 80).lines().count(), 3);
}

#[test]
fn a_step_s_line_fits_the_width() {
    colored::control::set_override(false);
    let crash = TestOutcome::Crash {
        message: "x".into(),
    };
    let report = CheckReport::of(&run_with(&[(first_of(8, Tag::Contract), crash)]), 8);
    let line = step_line(&report.steps[7], 70);
    assert!(line.lines().count() == 2, "{line}");
    assert!(
        line.lines().all(|line| line.chars().count() <= 70),
        "{line}"
    );
    assert!(
        line.lines().nth(1).unwrap().starts_with(DETAIL_INDENT),
        "{line}"
    );
}

/// Whether `text` holds a character a terminal would obey, or that
/// reorders what it shows, but for the line breaks of its layout.
fn obeyed(text: &str) -> Option<char> {
    text.chars().find(|&c| {
        (c.is_control() && c != '\n')
            || ('\u{202a}'..='\u{202e}').contains(&c)
            || ('\u{2066}'..='\u{2069}').contains(&c)
    })
}

/// A program that answers, raises, crashes and writes escape sequences
/// and a bidirectional override: each failure shows them inert, the
/// traceback in its lines, each line within the width.
#[test]
fn what_a_program_wrote_is_shown_inert_within_the_width() {
    colored::control::set_override(false);
    let title = "\x1b]0;pwned\x07";
    let wrong = TestOutcome::Fail {
        check: "claim".into(),
        expected: "fence 2".into(),
        actual: format!("error conflict: {title}up\x1b[1A"),
        state: None,
    };
    let raised = [Raised {
        error: format!("error conflict: {title}up\x1b[1A"),
        frames: vec![Frame {
            file: "s\x1b[2K.py".into(),
            line: 3,
            function: Some("claim\u{202e}".into()),
            code: Some("raise Conflict(\"\x1b[1A\")".into()),
        }],
    }];
    let stderr = window(&["\x1b[31mred\x1b[0m", "tab\there"], 0);
    let shown = failure_text_of("t", &wrong, Some(&stderr), Some(&raised), 80);
    assert_eq!(obeyed(&shown), None, "{shown}");
    assert_eq!(
        shown,
        "      t\n        check: claim\n        expected: fence 2\n        actual:   error conflict: \\x1b]0;pwned\\x07up\\x1b[1A\n        raised in claim\\u{202e}, line 3 of s\\x1b[2K.py:\n            raise Conflict(\"\\x1b[1A\")\n        it wrote on standard error:\n          \\x1b[31mred\\x1b[0m\n          tab\\there\n"
    );
    let crash = TestOutcome::Crash {
        message: format!(
            "{title} exited with code 1{STDERR_INTRO}\n    Traceback\x1b[1A\n    {}",
            "\x1b".repeat(30)
        ),
    };
    let crashed = failure_text_of("t", &crash, None, None, 60);
    assert_eq!(obeyed(&crashed), None, "{crashed}");
    assert!(
        crashed.starts_with("      t\n        crashed: \\x1b]0;pwned\\x07 exited with code 1;"),
        "{crashed}"
    );
    assert!(
        crashed.contains("\n            Traceback\\x1b[1A\n"),
        "the traceback's lines kept: {crashed}"
    );
    assert!(
        crashed.lines().all(|line| line.chars().count() <= 60),
        "the inert line is cut to the width: {crashed}"
    );
    let stub = TestOutcome::Fail {
        check: "a call".into(),
        expected: "an answer".into(),
        actual: format!("error not-implemented: step 1: {title}init_db is not written yet"),
        state: None,
    };
    let run = run_with(&[(first_of(1, Tag::Contract), stub)]);
    let report = CheckReport::of(&run, 1);
    let text = check_text(&report, 80, false) + &next_text(&report, "s\x1b[2K.py", 1, "s.py");
    assert_eq!(obeyed(&text), None, "{text}");
    assert!(
        text.contains("it answers: step 1: \\x1b]0;pwned\\x07init_db"),
        "{text}"
    );
    assert!(text.contains("s\\x1b[2K.py)"), "{text}");
}
