//! The `lab` command line as a user meets it: outputs, exit codes, colours,
//! the progress file. Each test runs the built binary in a folder of its own.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::common::{run_bounded, Ran, Sandbox, NO_HANG};

/// `lab db` in a sandbox, as these tests run it. (A trait of this module's
/// own: the other modules of this binary give `Sandbox` methods of theirs.)
trait CommandLine {
    /// `lab db OP ... --db jobs.db`, returning exit code, stdout, stderr.
    fn db(&self, args: &[&str]) -> (i32, String, String);

    fn db_json(&self, args: &[&str]) -> Value;
}

impl CommandLine for Sandbox {
    fn db(&self, args: &[&str]) -> (i32, String, String) {
        let mut full = vec!["db", "--db", "jobs.db"];
        full.extend_from_slice(args);
        let output = self.lab(&full);
        (
            output.code.expect("an exit code"),
            output.stdout,
            output.stderr,
        )
    }

    fn db_json(&self, args: &[&str]) -> Value {
        let (code, stdout, stderr) = self.db(args);
        assert_eq!(code, 0, "lab db {args:?} failed: {stderr}");
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
    }
}

/// A stream of a [`Ran`] (UTF-8, as [`Sandbox::lab`] checks), or the bytes
/// of an `Output`, which must be UTF-8.
fn text(bytes: impl AsRef<[u8]>) -> String {
    String::from_utf8(bytes.as_ref().to_vec()).expect("UTF-8")
}

/// The eight operations on the Rust store and on the Python store, each
/// answering as the contract says; no fault of the Python program, no
/// panic text.
#[test]
fn db_runs_all_eight_operations_and_prints_their_answers_as_json() {
    for implementation in [&["--impl", "rust"], &["--impl", "python"]] {
        eight_operations_answer_as_json(implementation);
    }
}

fn eight_operations_answer_as_json(implementation: &[&str]) {
    let sandbox = Sandbox::new();
    let lab = |args: &[&str]| -> Value { sandbox.db_json(&[implementation, args].concat()) };
    assert_eq!(lab(&["init"]), Value::Bool(true));
    assert_eq!(lab(&["enqueue", "j"]), Value::Bool(true));
    assert_eq!(lab(&["enqueue", "j"]), Value::Bool(false));
    assert_eq!(
        lab(&["claim", "j", "A", "--now", "100", "--ttl", "10"]),
        serde_json::json!(1)
    );
    assert_eq!(
        lab(&["claim", "j", "B", "--now", "105", "--ttl", "10"]),
        Value::Null
    );
    assert_eq!(
        lab(&["renew", "j", "A", "1", "--now", "105", "--ttl", "20"]),
        Value::Bool(true)
    );
    assert_eq!(
        lab(&["state", "j"]),
        serde_json::json!({"id": "j", "owner": "A", "until": 125.0, "fence": 1, "result": null, "done": false})
    );
    assert_eq!(lab(&["release", "j", "A", "1"]), Value::Bool(true));
    assert_eq!(lab(&["release", "j", "A", "1"]), Value::Bool(false));
    assert_eq!(
        lab(&["claim", "j", "B", "--now", "106", "--ttl", "10"]),
        serde_json::json!(2)
    );
    assert_eq!(
        lab(&["complete", "j", "A", "1", "--now", "107", "--result", "stale"]),
        Value::Bool(false)
    );
    assert_eq!(
        lab(&[
            "complete",
            "j",
            "B",
            "2",
            "--now",
            "107",
            "--result",
            "B's result"
        ]),
        Value::Bool(true)
    );
    assert_eq!(
        lab(&["state", "j"]),
        serde_json::json!({"id": "j", "owner": "B", "until": 116.0, "fence": 2, "result": "B's result", "done": true})
    );
    assert_eq!(lab(&["state", "missing"]), Value::Null);
    assert_eq!(lab(&["enqueue", "k"]), Value::Bool(true));
    let answers = lab(&[
        "claim-many",
        "k",
        "A",
        "B",
        "C",
        "--now",
        "100",
        "--ttl",
        "10",
    ]);
    let answers = answers.as_array().expect("an array");
    assert_eq!(answers.len(), 3);
    assert_eq!(
        answers
            .iter()
            .filter(|a| **a == serde_json::json!(1))
            .count(),
        1
    );
    assert_eq!(answers.iter().filter(|a| a.is_null()).count(), 2);
}

#[test]
fn db_invalid_argument_exits_2_with_one_line_and_changes_nothing() {
    let lab = Sandbox::new();
    lab.db_json(&["init"]);
    lab.db_json(&["enqueue", "j"]);
    let before = lab.db_json(&["state", "j"]);
    for args in [
        vec!["claim", "j", "A", "--now", "100", "--ttl", "0"],
        vec!["claim", "j", "A", "--now", "100", "--ttl", "-5"],
        vec!["claim", "j", "A", "--now", "nan", "--ttl", "10"],
        vec!["renew", "j", "A", "1", "--now", "100", "--ttl", "inf"],
        vec!["enqueue", ""],
    ] {
        let (code, stdout, stderr) = lab.db(&args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "{args:?} printed {stdout}");
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains("invalid argument"), "{args:?}: {stderr}");
    }
    assert_eq!(lab.db_json(&["state", "j"]), before);
}

#[test]
fn db_usage_error_exits_2() {
    let lab = Sandbox::new();
    let (code, _, stderr) = lab.db(&["claim", "j", "A", "--now", "soon", "--ttl", "10"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("soon"), "{stderr}");
    let (code, _, stderr) = lab.db(&["--variant", "nope", "init"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("no variant \"nope\""), "{stderr}");
}

#[test]
fn db_other_failures_exit_1_naming_the_file() {
    let lab = Sandbox::new();
    let (code, stdout, stderr) = lab.db(&["enqueue", "j"]);
    assert_eq!(code, 1);
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("jobs.db") && stderr.contains("init"),
        "{stderr}"
    );
    assert!(!lab.path("jobs.db").exists(), "no file may be created");
    std::fs::write(
        lab.path("jobs.db"),
        b"this is not a database, just text that is long enough",
    )
    .unwrap();
    let (code, _, stderr) = lab.db(&["init"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("not a usable SQLite database"), "{stderr}");
}

/// `lab db --engine postgres` without a server says what to give, refuses
/// a mutant or a program (only the lab's own store runs on PostgreSQL),
/// and names a server it cannot reach; none of this needs PostgreSQL
/// installed (tests/store/postgres.rs drives a real server).
#[test]
fn db_on_postgres_says_what_it_needs() {
    let lab = Sandbox::new();
    let mut command = lab.command(&["db", "--engine", "postgres", "state", "j"]);
    command.env_remove("LEASE_LAB_PG");
    let ran = crate::common::run_bounded(&mut command, crate::common::NO_HANG);
    assert_eq!(ran.code, Some(2), "{}", ran.shown());
    assert!(
        ran.text()
            .contains("--engine postgres needs a server: give --dsn URL or set LEASE_LAB_PG"),
        "{}",
        ran.shown()
    );
    for other in [&["--variant", "06"][..], &["--impl", "python"][..]] {
        let args = [
            &["db", "--engine", "postgres", "--dsn", "host=/nowhere"][..],
            other,
            &["state", "j"],
        ]
        .concat();
        let ran = lab.lab(&args);
        assert_eq!(ran.code, Some(2), "{}", ran.shown());
        assert!(
            ran.text().contains("runs the lab's own store"),
            "{}",
            ran.shown()
        );
    }
    let nowhere = lab.path("no-server");
    let dsn = format!(
        "host={} user=lab password=secret dbname=lab",
        nowhere.display()
    );
    let ran = lab.lab(&["db", "--engine", "postgres", "--dsn", &dsn, "enqueue", "j"]);
    assert_eq!(ran.code, Some(3), "could not run: {}", ran.shown());
    let said = ran.text();
    assert!(said.contains("cannot connect"), "{said}");
    assert!(
        said.contains(&nowhere.display().to_string()),
        "the server is named: {said}"
    );
    assert!(
        !said.contains("secret"),
        "a password is never printed: {said}"
    );
    assert!(ran.stdout.is_empty());
}

/// `--engine postgres` where it cannot run says so, and what to do, before
/// any server is started: with another store than the lab's Rust one, and
/// on the commands that run on SQLite only; a server that cannot be
/// reached is named without its password, and the matrix fails.
#[test]
fn the_engine_postgres_says_where_it_does_not_run() {
    let lab = Sandbox::new();
    let ran = lab.lab(&["matrix", "--engine", "postgres", "--impl", "python"]);
    assert_eq!(ran.code, Some(2), "{}", ran.shown());
    assert!(
        ran.text()
            .contains("--engine postgres runs the lab's Rust store on PostgreSQL"),
        "{}",
        ran.shown()
    );
    for args in [&["analyze"][..], &["probe", "any.probe"]] {
        let command = args[0];
        let ran = lab.lab(&[args, &["--engine", "postgres"]].concat());
        assert_eq!(ran.code, Some(2), "{command}: {}", ran.shown());
        assert!(
            ran.text().contains(&format!(
                "--engine postgres: {command} runs on SQLite only so far"
            )),
            "{command}: {}",
            ran.shown()
        );
    }
    // A fault of the other engine is refused before any server is started.
    for (faults, engine, says) in [
        (
            "stalls,server-crash",
            &[][..],
            "--faults server-crash kills a PostgreSQL server",
        ),
        (
            "power",
            &["--engine", "postgres"][..],
            "use server-crash to kill its server",
        ),
        (
            "stalls,partition",
            &["--engine", "postgres"][..],
            "--faults partition cuts a worker's link to the server",
        ),
        ("stalls", &["--hosts"][..], "add --engine postgres"),
        (
            "stalls",
            &["--engine", "postgres", "--hosts", "--dsn", "host=/nowhere"][..],
            "leave out --dsn",
        ),
    ] {
        let ran = lab.lab(&[&["chaos", "--faults", faults][..], engine].concat());
        assert_eq!(ran.code, Some(2), "{faults}: {}", ran.shown());
        assert!(ran.text().contains(says), "{faults}: {}", ran.shown());
    }
    let ran = lab.lab(&["demo", "--engine", "postgres", "--power-cut"]);
    assert_eq!(ran.code, Some(2), "{}", ran.shown());
    assert!(
        ran.text().contains("--faults server-crash"),
        "{}",
        ran.shown()
    );
    let ran = lab.lab(&["chaos", "--faults", "server-crush"]);
    assert_eq!(ran.code, Some(2), "{}", ran.shown());
    assert!(
        ran.text()
            .contains("power, server-crash and partition (or none)"),
        "{}",
        ran.shown()
    );
    let nowhere = lab.path("no-server");
    let dsn = format!("host={} user=lab password=secret", nowhere.display());
    let ran = lab.lab(&["run", "reference", "--engine", "postgres", "--dsn", &dsn]);
    assert_eq!(ran.code, Some(3), "{}", ran.shown());
    assert!(ran.text().contains("cannot connect"), "{}", ran.shown());
    assert!(
        ran.text().contains(&nowhere.display().to_string()),
        "{}",
        ran.shown()
    );
    assert!(!ran.text().contains("secret"), "{}", ran.shown());
    assert!(ran.stdout.is_empty(), "no test ran: {}", ran.shown());
}

#[test]
fn db_can_drive_a_mutant() {
    let lab = Sandbox::new();
    lab.db_json(&["init"]);
    lab.db_json(&["enqueue", "j"]);
    lab.db_json(&["claim", "j", "A", "--now", "100", "--ttl", "10"]);
    let (code, stdout, _) = lab.db(&[
        "--variant",
        "04",
        "claim",
        "j",
        "B",
        "--now",
        "110",
        "--ttl",
        "10",
    ]);
    assert_eq!(
        (code, stdout.trim()),
        (0, "null"),
        "mutant 04 refuses the claim at expiry"
    );
    let (code, stdout, _) = lab.db(&["claim", "j", "B", "--now", "110", "--ttl", "10"]);
    assert_eq!((code, stdout.trim()), (0, "2"), "the reference takes it");
}

#[test]
fn step_without_a_terminal_or_prediction_says_so_and_exits() {
    let lab = Sandbox::new();
    let output = lab.lab(&["step", "4"]);
    assert_eq!(output.code, Some(2));
    assert!(
        text(&output.stderr).contains("--predict"),
        "{}",
        text(&output.stderr)
    );
    assert!(
        output.stdout.is_empty(),
        "nothing is shown before the refusal"
    );
    assert!(!lab.path("lease-lab-progress.json").exists());
}

#[test]
fn step_with_a_prediction_runs_compares_and_records() {
    let lab = Sandbox::new();
    let output = lab.lab(&[
        "step",
        "4",
        "--predict",
        "claim_at_exact_expiry_is_reassigned,4",
        "--why",
        "a claim at now == until",
    ]);
    assert!(output.success(), "{}", text(&output.stderr));
    let shown = text(&output.stdout);
    for expected in [
        "-        if done || held_until > now {",
        "+        if done || held_until >= now {",
        "claim_at_exact_expiry_is_reassigned",
        "predicted and caught:        claim_at_exact_expiry_is_reassigned",
        "predicted but it survived:   init_db_twice_keeps_jobs_and_fences",
        "found a killer:              yes, 1 of the 1 that catch it",
        "precision:                   50%, 1 of the 2 you named caught it",
        "Why the tests you named survived\n  init_db_twice_keeps_jobs_and_fences\n    checks: ",
        "Next: lab step 5",
    ] {
        assert!(
            shown.contains(expected),
            "missing {expected:?} in:\n{shown}"
        );
    }
    assert!(
        !shown.contains('\u{1b}'),
        "piped output has no escape codes"
    );
    let progress: Value = serde_json::from_str(
        &std::fs::read_to_string(lab.path("lease-lab-progress.json")).unwrap(),
    )
    .unwrap();
    let attempt = &progress["exercises"]["4"]["attempts"][0];
    assert_eq!(attempt["mutant"], "04");
    assert_eq!(attempt["why"], "a claim at now == until");
    assert_eq!(
        attempt["caught_by"],
        serde_json::json!(["claim_at_exact_expiry_is_reassigned"])
    );
    assert_eq!(attempt["score"]["percent"], 50);
    let overview = text(&lab.lab(&[]).stdout);
    assert!(
        overview.contains("done: found, 50% precise, 1 attempt"),
        "{overview}"
    );
}

#[test]
fn step_reads_the_prediction_from_standard_input_when_interactive_input_is_piped_in() {
    // Piped input is not a terminal: the prompt is refused, not waited for.
    let lab = Sandbox::new();
    let mut child = lab
        .command(&["step", "1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdin.take());
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn step_rejects_an_unknown_test_or_exercise() {
    let lab = Sandbox::new();
    let output = lab.lab(&["step", "4", "--predict", "no_such_test"]);
    assert_eq!(output.code, Some(2));
    assert!(text(&output.stderr).contains("\"no_such_test\" is not a test"));
    let output = lab.lab(&["step", "2", "--predict", "99"]);
    assert_eq!(output.code, Some(2));
    assert!(text(&output.stderr).contains("there is no test number 99"));
    let output = lab.lab(&["step", "9"]);
    assert_eq!(output.code, Some(2));
    assert!(text(&output.stderr).contains("its exercises are: 1, 2, 3, 4, 5, 6, 7, 8, 8b"));
}

#[test]
fn a_failed_command_names_itself_before_its_message() {
    let lab = Sandbox::new();
    // A usage error exits with 2, an operation that failed with 1.
    for (args, code, start) in [
        (&["step", "9"][..], 2, "lab step: "),
        (&["run", "no-such-variant"], 2, "lab run: "),
        (&["demo", "--variant", "no-such-variant"], 2, "lab demo: "),
        (&["db", "--db", "jobs.db", "state", "j"], 1, "lab db: "),
    ] {
        let output = lab.lab(args);
        assert_eq!(output.code, Some(code), "lab {args:?}");
        let stderr = text(&output.stderr);
        assert!(stderr.starts_with(start), "lab {args:?} said: {stderr}");
    }
}

#[test]
fn step_8_records_the_closing_reflection() {
    let lab = Sandbox::new();
    let output = lab.lab(&[
        "step",
        "8b",
        "--predict",
        "claims_queued_behind_a_writer_have_one_winner",
        "--why-kept",
        "a later step relies on the earlier contracts",
        "--not-guaranteed",
        "clocks are given by the caller and not synchronised",
    ]);
    assert!(output.success(), "{}", text(&output.stderr));
    let progress = text(&lab.lab(&["progress", "--format", "json"]).stdout);
    let progress: Value = serde_json::from_str(&progress).unwrap();
    assert_eq!(
        progress["reflection"]["not_guaranteed"],
        "clocks are given by the caller and not synchronised"
    );
    // The queued claims always catch the race; the other racing tests
    // catch it only when their threads happen to overlap.
    let attempt = &progress["exercises"]["8b"]["attempts"][0];
    let caught: Vec<&str> = attempt["caught_by"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(
        caught.contains(&"claims_queued_behind_a_writer_have_one_winner"),
        "{caught:?}"
    );
    // One killer named, and nothing else: found, and precise.
    assert_eq!(attempt["score"]["percent"], 100);
}

#[test]
fn a_corrupt_progress_file_is_set_aside_not_lost() {
    let lab = Sandbox::new();
    std::fs::write(lab.path("lease-lab-progress.json"), "{ half a file").unwrap();
    let output = lab.lab(&[]);
    assert!(output.success());
    let warning = text(&output.stderr);
    assert!(
        warning.contains("could not be read") && warning.contains(".corrupt-"),
        "{warning}"
    );
    let aside: Vec<PathBuf> = std::fs::read_dir(lab.dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.to_string_lossy().contains(".corrupt-"))
        .collect();
    assert_eq!(aside.len(), 1);
    assert_eq!(std::fs::read_to_string(&aside[0]).unwrap(), "{ half a file");
}

#[test]
fn hints_come_one_at_a_time_and_reset_forgets() {
    let lab = Sandbox::new();
    let first = text(&lab.lab(&["hint", "4"]).stdout);
    assert!(
        first.contains("Hint 1") && !first.contains("Hint 2") && first.contains("2 more"),
        "{first}"
    );
    let second = text(&lab.lab(&["hint", "4"]).stdout);
    assert!(
        second.contains("Hint 2") && !second.contains("Hint 3"),
        "{second}"
    );
    let all = text(&lab.lab(&["hint", "4", "--all"]).stdout);
    assert!(
        all.contains("Hint 3") && all.contains("the last hint"),
        "{all}"
    );
    assert!(text(&lab.lab(&["reset", "4", "--yes"]).stdout).contains("Forgot exercise 4"));
    let again = text(&lab.lab(&["hint", "4"]).stdout);
    assert!(!again.contains("Hint 2"), "{again}");
}

/// A test that reads the stored rows shows them beside a wrong answer: at
/// step 2, the row that `INSERT OR REPLACE` rebuilt, for both stores.
#[test]
fn a_wrong_answer_shows_the_row_it_left_behind() {
    let lab = Sandbox::new();
    for store in ["rust", "python"] {
        let output = lab.lab(&[
            "step",
            "2",
            "--impl",
            store,
            "--predict",
            "13",
            "--why",
            "the row",
            "--color",
            "never",
        ]);
        let shown = text(&output.stdout);
        assert!(output.success(), "{store}: {}", text(&output.stderr));
        assert!(
            shown.contains(
                "stored:   \"j\": owner \"A\" -> none, until 110 -> 0, fence 1 -> 0, left behind by the call\n"
            ),
            "{store}: {shown}"
        );
    }
}

/// A hint is worded in the student's language: that of `--impl`, else
/// that of the implementation `lab new` recorded, else Rust's.
#[test]
fn hints_speak_the_student_s_language() {
    let lab = Sandbox::new();
    let rust = text(&lab.lab(&["hint", "4", "--all"]).stdout);
    let python = text(&lab.lab(&["hint", "4", "--all", "--impl", "python"]).stdout);
    assert!(
        rust.contains("-> Ok(Some(2))     (broken: Ok(None))"),
        "{rust}"
    );
    assert!(python.contains("-> 2       (broken: None)"), "{python}");
    assert!(!python.contains("Ok("), "{python}");
    let made = lab.lab(&["new", "--lang", "python", "mine"]);
    assert!(made.success(), "{}", text(&made.stderr));
    let recorded = text(&lab.lab(&["hint", "4", "--all"]).stdout);
    assert_eq!(recorded, python);
}

#[test]
fn colours_follow_the_flag_and_no_color() {
    let lab = Sandbox::new();
    let escape = |output: Ran| text(&output.stdout).contains('\u{1b}');
    assert!(escape(lab.lab(&["tests", "--color", "always"])));
    assert!(!escape(lab.lab(&["tests", "--color", "never"])));
    assert!(!escape(lab.lab(&["tests"])), "auto is off when piped");
    let mut no_color = lab.command(&["tests", "--color", "auto"]);
    no_color.env("NO_COLOR", "1");
    assert!(!escape(run_bounded(&mut no_color, NO_HANG)));
}

#[test]
fn demo_shows_the_stale_write_refused_then_landing_on_the_lease_alone() {
    let lab = Sandbox::new();
    let reference = text(&lab.lab(&["demo"]).stdout);
    assert!(
        reference.contains("A's stale write was refused"),
        "{reference}"
    );
    assert!(reference.contains("result \"B's result\""), "{reference}");
    let mutant = text(&lab.lab(&["demo", "--variant", "h06h"]).stdout);
    assert!(mutant.contains("The stale write LANDED"), "{mutant}");
}

/// The power-cut story runs under the simulated power cut, on the stores
/// compiled into `lab` only; another implementation is refused, saying
/// which to use.
#[test]
fn demo_power_cut_tells_the_fence_surviving_and_refuses_a_program_of_its_own() {
    let lab = Sandbox::new();
    let output = lab.lab(&["demo", "--power-cut"]);
    assert!(output.success(), "{}", text(&output.stderr));
    let story = text(&output.stdout);
    assert!(story.contains("survived the power cut"), "{story}");
    let output = lab.lab(&["demo", "--power-cut", "--impl", "python"]);
    assert_eq!(output.code, Some(2), "{}", text(&output.stderr));
    let refusal = text(&output.stderr);
    assert!(
        refusal.contains("runs in a program of its own: use --impl rust"),
        "{refusal}"
    );
}

/// The worksheet's own fragments, applied to the Python store: each is
/// killed by a test of its own step, and the Rust store's own promises the
/// Python store does not keep are beyond the worksheet, not failures.
#[test]
fn the_python_matrix_check_passes_with_every_fragment_killed_in_its_step() {
    let lab = Sandbox::new();
    let output = lab.lab(&["matrix", "--impl", "python", "--check", "--color", "never"]);
    let stderr = text(&output.stderr);
    assert!(output.success(), "{stderr}");
    // The Python store passes every test it is asked (not the one only a
    // store in the lab's process can be).
    let asked = lease_lab::suite::for_programs().len();
    assert!(
        stderr.contains(&format!("the reference passes all {asked} tests"))
            && stderr.contains("every one of the 9 mutants is caught by a test of its own step"),
        "{stderr}"
    );
    let shown = text(&output.stdout);
    for id in ["py01", "py04", "py08", "py08b"] {
        assert!(shown.contains(id), "{id} in:\n{shown}");
    }
}

#[test]
fn matrix_json_has_the_documented_shape_and_check_passes() {
    let lab = Sandbox::new();
    let output = lab.lab(&[
        "matrix",
        "--format",
        "json",
        "--check",
        "--kind",
        "worksheet",
    ]);
    assert!(output.success(), "{}", text(&output.stderr));
    let matrix: Value = serde_json::from_str(&output.stdout).unwrap();
    let tests = matrix["tests"].as_array().unwrap();
    assert_eq!(tests.len(), lease_lab::suite::CASES.len());
    assert_eq!(tests[0]["step"], 1);
    let variants = matrix["variants"].as_array().unwrap();
    assert_eq!(variants[0]["id"], "reference");
    assert_eq!(
        variants.len(),
        10,
        "the reference and the nine worksheet mutants"
    );
    for variant in variants {
        let outcomes = variant["outcomes"].as_object().unwrap();
        assert_eq!(outcomes.len(), tests.len());
        for outcome in outcomes.values() {
            assert!(["pass", "fail", "timeout", "crash"].contains(&outcome.as_str().unwrap()));
        }
    }
    let race = variants.iter().find(|v| v["id"] == "08b").unwrap();
    assert_eq!(
        race["outcomes"]["claims_queued_behind_a_writer_have_one_winner"],
        "fail"
    );
    assert_eq!(race["status"], "killed");
    assert!(text(&output.stderr).contains("lab matrix --check: ok"));
}

#[test]
fn run_lists_every_test_with_its_verdict() {
    let lab = Sandbox::new();
    let output = lab.lab(&["run", "06", "--color", "never"]);
    assert!(output.success());
    let shown = text(&output.stdout);
    assert!(
        shown.contains("FAIL  second_completion_is_refused_and_keeps_the_result"),
        "{shown}"
    );
    let passed = lease_lab::suite::CASES.len() - 1;
    assert!(
        shown.contains(&format!("{passed} passed, 1 failed")),
        "{shown}"
    );
    let output = lab.lab(&["run", "nope"]);
    assert_eq!(output.code, Some(2));
    // A mutant is meant to fail tests (06 above exits 0); the reference
    // passing every test exits 0 too.
    let output = lab.lab(&["run", "reference", "--color", "never"]);
    assert!(output.success(), "{}", text(&output.stdout));
    let passed = lease_lab::suite::CASES.len();
    assert!(
        text(&output.stdout).contains(&format!("{passed} passed, 0 failed")),
        "{}",
        text(&output.stdout)
    );
}

#[test]
fn tests_and_variants_are_listed() {
    let lab = Sandbox::new();
    let tests = text(&lab.lab(&["tests"]).stdout);
    assert!(tests.contains("step 4: Take an expired lease atomically"));
    assert!(tests.contains("claim_at_exact_expiry_is_reassigned"));
    // Every test numbered as in the suite, those beyond the worksheet marked.
    for (number, case) in lease_lab::suite::CASES.iter().enumerate() {
        let mark = match case.tag {
            lease_lab::suite::Tag::Reference => "*",
            lease_lab::suite::Tag::Contract => " ",
        };
        let line = format!("{:>3}{mark} {}\n", number + 1, case.name);
        assert!(tests.contains(&line), "{line:?} in:\n{tests}");
    }
    let variants = text(&lab.lab(&["tests", "--variants"]).stdout);
    assert!(
        variants.contains("reference")
            && variants.contains("08b")
            && variants.contains("hardening")
    );
}

#[test]
fn a_progress_file_can_be_chosen() {
    let lab = Sandbox::new();
    let chosen = lab.path("elsewhere.json");
    let output = lab.lab(&[
        "--progress",
        chosen.to_str().unwrap(),
        "reflect",
        "--why-kept",
        "x",
        "--not-guaranteed",
        "y",
    ]);
    assert!(output.success());
    assert!(chosen.exists());
    assert!(!Path::new(&lab.path("lease-lab-progress.json")).exists());
    let mut by_variable = lab.command(&["progress", "--format", "json"]);
    by_variable.env("LEASE_LAB_PROGRESS", &chosen);
    let progress: Value =
        serde_json::from_str(&run_bounded(&mut by_variable, NO_HANG).stdout).unwrap();
    assert_eq!(progress["reflection"]["why_tests_are_kept"], "x");
}

#[test]
fn every_command_that_reads_progress_reports_a_corrupt_file() {
    for args in [vec!["progress"], vec!["hint", "4"], vec!["reset"]] {
        let lab = Sandbox::new();
        std::fs::write(lab.path("lease-lab-progress.json"), "[]").unwrap();
        let output = lab.lab(&args);
        assert!(output.success(), "{args:?}");
        let warning = text(&output.stderr);
        assert!(
            warning.contains("could not be read") && warning.contains(".corrupt-"),
            "{args:?}: {warning}"
        );
    }
}

/// The example probes, for the tests that run one.
fn example_probe(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("labs/probes")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn a_probe_that_kills_scores_as_a_right_prediction_in_every_view() {
    let lab = Sandbox::new();
    let probe = example_probe("04-claim-expired.probe");
    let output = lab.lab(&["step", "4", "--probe", &probe, "--color", "never"]);
    assert!(output.success(), "{}", text(&output.stderr));
    let shown = text(&output.stdout);
    assert!(shown.contains("mutant 04 killed:"), "{shown}");
    assert!(
        shown.contains("precision:                   100%, 1 of the 1 you named caught it"),
        "{shown}"
    );
    assert!(
        shown.contains("caught but not predicted:    none"),
        "{shown}"
    );
    let progress: Value =
        serde_json::from_str(&lab.lab(&["progress", "--format", "json"]).stdout).unwrap();
    let attempt = &progress["exercises"]["4"]["attempts"][0];
    assert_eq!(attempt["score"]["percent"], 100);
    assert_eq!(attempt["probe"]["killed"], true);
    let overview = text(&lab.lab(&["--color", "never"]).stdout);
    assert!(
        overview.contains("done: found, 100% precise, 1 attempt, probe good prediction"),
        "{overview}"
    );
    let listed = text(&lab.lab(&["progress", "--color", "never"]).stdout);
    assert!(listed.contains("found, 100% precise"), "{listed}");
    assert!(listed.contains("probe: "), "{listed}");
    let class = text(
        &lab.lab(&[
            "grade",
            &lab.path("lease-lab-progress.json").display().to_string(),
        ])
        .stdout,
    );
    let row = class
        .lines()
        .find(|line| line.trim_start().starts_with("4 "))
        .unwrap();
    assert!(row.contains("100%"), "{class}");
}

#[test]
fn every_wrong_entry_of_a_prediction_is_reported_at_once() {
    let lab = Sandbox::new();
    let output = lab.lab(&[
        "step",
        "4",
        "--predict",
        "99,claim_at_exact_expiry,claim_many_answers_every_owner_in_order",
    ]);
    assert_eq!(output.code, Some(2));
    let error = text(&output.stderr);
    assert!(error.contains("there is no test number 99"), "{error}");
    assert!(
        error.contains("did you mean claim_at_exact_expiry_is_reassigned?"),
        "{error}"
    );
    assert!(
        error.contains("is a test of step 8, not in force yet"),
        "{error}"
    );
    assert!(
        !lab.path("lease-lab-progress.json").exists(),
        "nothing is recorded"
    );
}

#[test]
fn a_reader_that_goes_away_ends_the_output_quietly() {
    let lab = Sandbox::new();
    let mut child = lab
        .command(&["step", "4", "--predict", "26", "--color", "never"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    std::io::Read::read_exact(&mut stdout, &mut first).unwrap();
    drop(stdout);
    let output = child.wait_with_output().unwrap();
    let error = text(&output.stderr);
    assert!(!error.contains("Broken pipe"), "{error}");
    assert!(!error.contains("panicked"), "{error}");
    assert_eq!(output.status.code(), Some(0), "{error}");
}

#[test]
fn a_probe_exits_0_only_when_it_holds_and_kills_what_it_ran_against() {
    let lab = Sandbox::new();
    let probe = example_probe("04-claim-expired.probe");
    let killed = lab.lab(&["probe", &probe, "--variant", "04"]);
    assert_eq!(killed.code, Some(0), "{}", text(&killed.stderr));
    let survived = lab.lab(&["probe", &probe, "--variant", "07"]);
    assert_eq!(survived.code, Some(1));
    let every = lab.lab(&["probe", &probe, "--color", "never"]);
    assert_eq!(every.code, Some(1), "most mutants survive a step-4 probe");
    assert!(text(&every.stdout).contains("mutant 04 killed:"));
    std::fs::write(lab.path("one.probe"), "enqueue j1 -> true\n").unwrap();
    let one = lab.lab(&["probe", "one.probe", "--variant", "04", "--color", "never"]);
    assert!(
        text(&one.stdout).contains("reference: the one line holds"),
        "{}",
        text(&one.stdout)
    );
    std::fs::write(lab.path("bad.probe"), "grab j1\n").unwrap();
    assert_eq!(lab.lab(&["probe", "bad.probe"]).code, Some(2));
}

#[test]
fn a_mutant_file_can_be_started_outside_the_lab_s_folder() {
    let lab = Sandbox::new();
    let output = lab.lab(&["mutant", "new", "--step", "4"]);
    assert!(output.success(), "{}", text(&output.stderr));
    assert!(lab.path("mutants/o04a-own.toml").is_file());
    let output = lab.lab(&["mutant", "new", "--step", "4", "--dir", "mine/deeper"]);
    assert!(output.success(), "{}", text(&output.stderr));
    assert!(lab.path("mine/deeper/o04a-own.toml").is_file());
    let output = lab.lab(&["mutant", "new", "--step", "9"]);
    assert_eq!(output.code, Some(2), "{}", text(&output.stderr));
    assert!(
        text(&output.stderr).contains("step 9"),
        "{}",
        text(&output.stderr)
    );
    std::fs::write(lab.path("blocked"), "a file, not a folder").unwrap();
    let output = lab.lab(&["mutant", "new", "--step", "4", "--dir", "blocked"]);
    assert_eq!(output.code, Some(3), "could not run");
    assert!(
        text(&output.stderr).contains("blocked"),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn counts_of_one_read_in_the_singular() {
    let lab = Sandbox::new();
    let markdown = text(
        &lab.lab(&["matrix", "--kind", "worksheet", "--format", "markdown"])
            .stdout,
    );
    assert!(
        markdown.contains("| 03 | 3 | killed | 1 test (1 of step 3) |"),
        "{markdown}"
    );
    assert!(!markdown.contains(" 1 tests"), "{markdown}");
}

#[test]
fn example_answers_to_the_closing_questions_come_only_after_the_student_s_own() {
    let lab = Sandbox::new();
    let step = text(
        &lab.lab(&["step", "8b", "--predict", "64", "--color", "never"])
            .stdout,
    );
    assert!(step.contains("lab reflect --why-kept"), "{step}");
    assert!(
        !step.contains("Why are the tests of steps 1 to 7"),
        "no examples before answering: {step}"
    );
    let reflected = lab.lab(&[
        "reflect",
        "--why-kept",
        "mine",
        "--not-guaranteed",
        "clocks",
        "--color",
        "never",
    ]);
    let shown = text(&reflected.stdout);
    assert!(shown.starts_with("Recorded your reflection."), "{shown}");
    assert!(
        shown.contains("Why are the tests of steps 1 to 7 still run at step 8?"),
        "{shown}"
    );
}

#[test]
fn a_reflection_needs_both_answers_and_a_blank_one_records_nothing() {
    let lab = Sandbox::new();
    for (why_kept, not_guaranteed) in [("mine", " "), ("", "clocks"), (" ", "")] {
        let output = lab.lab(&[
            "reflect",
            "--why-kept",
            why_kept,
            "--not-guaranteed",
            not_guaranteed,
        ]);
        assert_eq!(output.code, Some(2), "{why_kept:?}, {not_guaranteed:?}");
        let error = text(&output.stderr);
        assert!(
            error.contains("both closing questions need an answer, and nothing was recorded"),
            "{error}"
        );
        if why_kept == "mine" {
            assert!(
                error.contains(r#"--why-kept "mine" --not-guaranteed "...""#),
                "{error}"
            );
        }
        assert!(
            !lab.path("lease-lab-progress.json").exists(),
            "nothing is recorded"
        );
    }
}

/// `lab tests --variants` lists the variants of the implementation
/// `--impl` names, as `lab run` takes their ids: the Python store's nine.
#[test]
fn tests_variants_lists_the_chosen_implementations_variants() {
    let lab = Sandbox::new();
    let output = lab.lab(&["tests", "--variants", "--impl", "python"]);
    assert!(output.success(), "{}", text(&output.stderr));
    let ids: Vec<String> = text(&output.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().next().map(String::from))
        .collect();
    let expected: Vec<String> = std::iter::once("reference".to_string())
        .chain((1..=8).map(|step| format!("py0{step}")))
        .chain(["py08b".to_string()])
        .collect();
    assert_eq!(ids, expected);
    assert_eq!(
        text(&output.stdout).lines().next(),
        Some("reference  the reference implementation"),
        "the lab's Python store is the reference, not a program of one's own"
    );
    let own = lab.lab(&["tests", "--variants", "--impl", "python3 mine.py"]);
    assert_eq!(text(&own.stdout), "    yours  python3 mine.py\n");
    let rust = text(&lab.lab(&["tests", "--variants"]).stdout);
    assert!(
        rust.lines()
            .any(|line| line.trim_start().starts_with("h06h ")),
        "{rust}"
    );
    assert!(!rust.contains("py0"), "{rust}");
}

/// A program that breaks the protocol is the command's failure, said in
/// one line: no panic message, no backtrace.
#[test]
fn db_on_a_program_that_does_not_greet_fails_in_one_line() {
    let lab = Sandbox::new();
    let (code, stdout, stderr) = lab.db(&["--impl", "sh -c 'echo hello'", "init"]);
    assert_eq!(code, 3, "could not run: {stderr}");
    assert_eq!(stdout, "");
    assert!(
        stderr.starts_with("lab db: sh -c 'echo hello' did not greet the lab"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// `lab --help` ends with the exit codes, and each one means one thing:
/// a surviving mutant is 1, a report that cannot be written is 3.
#[test]
fn the_exit_codes_tell_a_problem_found_from_a_command_that_could_not_run() {
    let lab = Sandbox::new();
    let help = text(&lab.lab(&["--help"]).stdout);
    assert!(
        help.contains("Exit codes:\n  0  done\n  1  a problem found")
            && help.contains("\n  3  could not run"),
        "{help}"
    );
    std::fs::write(lab.path("blocked"), "a file, not a folder").unwrap();
    let unwritable = lab.lab(&[
        "matrix",
        "--kind",
        "worksheet",
        "--format",
        "json",
        "-o",
        "blocked/report.json",
    ]);
    assert_eq!(unwritable.code, Some(3), "{}", text(&unwritable.stderr));
    assert!(text(&unwritable.stderr).contains("cannot write blocked/report.json"));
}
