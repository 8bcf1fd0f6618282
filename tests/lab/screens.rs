//! The student's screens under test: every screen of the course, for the
//! Rust store and the Python store, at 80 columns and piped, compared with
//! its snapshot in `tests/lab/snapshots/` (insta: review a change with
//! `cargo insta review`, or accept it with `INSTA_UPDATE=always cargo test
//! --test lab screens`), and no line of it wider than 80 columns.
//!
//! What changes from run to run is replaced before the comparison: the
//! sandbox's folder, times of day, durations, the Python version. Where a
//! verdict itself depends on the scheduler (exercise 8b's racing tests,
//! which catch the race only when their threads happen to overlap), the
//! run's table is left out of the snapshot; the screen before the run and
//! the explanation after it stay.

use crate::common::Sandbox;
use crate::widths::{too_wide_in, WIDTH};

/// A sandbox whose path has the same length on every machine, so that a
/// screen that names a file in it wraps the same everywhere: in `/tmp`,
/// whatever `TMPDIR` says.
fn sandbox() -> Sandbox {
    Sandbox {
        dir: tempfile::Builder::new()
            .prefix("lab-screens-")
            .rand_bytes(6)
            .tempdir_in("/tmp")
            .expect("a folder in /tmp"),
    }
}

/// `lab ARGS` in `sandbox` at 80 columns, both streams, as a student reads
/// them piped: checked for width, with what varies between runs replaced.
fn screen(sandbox: &Sandbox, args: &[&str]) -> String {
    let output = sandbox
        .command(args)
        .env("COLUMNS", WIDTH.to_string())
        .output()
        .expect("lab runs");
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !stderr.is_empty() {
        text.push_str("--- standard error ---\n");
        text.push_str(&stderr);
    }
    let wide = too_wide_in(&args.join(" "), &text);
    assert!(
        wide.is_empty(),
        "lines wider than {WIDTH}:\n{}",
        wide.join("\n")
    );
    let folder = sandbox.dir.path().display().to_string();
    text.replace(&folder, "[sandbox]")
}

/// Compares `text` with the snapshot `name`, what varies replaced.
fn assert_screen(name: &str, text: &str) {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_snapshot_path("snapshots");
    for (pattern, replacement) in [
        (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "[time]"),
        (r"\b\d+(\.\d+)? ?(ms|µs|s)\b", "[duration]"),
        (r"Python 3\.\d+\.\d+", "Python [version]"),
    ] {
        settings.add_filter(pattern, replacement);
    }
    settings.bind(|| insta::assert_snapshot!(name, text));
}

/// The exercises, in order.
const KEYS: [&str; 9] = ["1", "2", "3", "4", "5", "6", "7", "8", "8b"];

/// Exercise 8b's screen without its run, whose verdicts depend on the
/// scheduler: up to the run's heading, and from the explanation after it.
fn without_the_race(text: &str) -> String {
    let (before, rest) = text
        .split_once("\nRunning the ")
        .unwrap_or_else(|| panic!("no run in:\n{text}"));
    let (_, after) = rest
        .split_once("\nWhy it breaks the contract\n")
        .unwrap_or_else(|| panic!("no explanation in:\n{text}"));
    format!("{before}\n[the run: its racing verdicts vary]\n\nWhy it breaks the contract\n{after}")
}

/// The course of one store, as a student takes it: the overview, each
/// exercise with a prediction and its hints, the overview and the
/// progress after.
fn course(store: &str) {
    let sandbox = sandbox();
    assert_screen(&format!("{store}-overview-new"), &screen(&sandbox, &[]));
    for key in KEYS {
        let step = screen(
            &sandbox,
            &[
                "step",
                key,
                "--impl",
                store,
                "--predict",
                "1,2",
                "--why",
                "because",
            ],
        );
        let step = if key == "8b" {
            without_the_race(&step)
        } else {
            step
        };
        assert_screen(&format!("{store}-step-{key}"), &step);
        let hints = screen(&sandbox, &["hint", key, "--all", "--impl", store]);
        assert_screen(&format!("{store}-hints-{key}"), &hints);
    }
    assert_screen(&format!("{store}-overview-done"), &screen(&sandbox, &[]));
    assert_screen(
        &format!("{store}-progress"),
        &screen(&sandbox, &["progress"]),
    );
}

#[test]
fn the_rust_store_s_course_matches_its_snapshots_at_80_columns() {
    course("rust");
}

#[test]
fn the_python_store_s_course_matches_its_snapshots_at_80_columns() {
    course("python");
}

/// The screens beside the exercises: the demo, its stories told on the
/// field mutants that name them (A back first, a restart), the power cut,
/// an example probe, the list of tests, for the Rust store and the Python
/// one.
#[test]
fn the_demo_a_probe_and_the_tests_match_their_snapshots_at_80_columns() {
    let sandbox = sandbox();
    // The probe is copied in, so that the screen names it as a student's
    // own file, the same wherever the lab is checked out.
    let probe = "04-claim-expired.probe";
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("labs/probes")
            .join(probe),
        sandbox.path(probe),
    )
    .expect("the example probe");
    for (name, args) in [
        ("demo", vec!["demo"]),
        ("demo-power-cut", vec!["demo", "--power-cut"]),
        ("demo-stale-first-f06a", vec!["demo", "--variant", "f06a"]),
        ("demo-restart-f01a", vec!["demo", "--variant", "f01a"]),
        ("probe-04", vec!["probe", probe]),
        ("probe-04-python", vec!["probe", probe, "--impl", "python"]),
        ("tests", vec!["tests"]),
    ] {
        assert_screen(name, &screen(&sandbox, &args));
    }
}

/// A student's own Python program: `lab new`, then `lab check` on the
/// starter as written (every step not written yet) and on the lab's own
/// Python store (every step passed), with and without `--all`.
#[test]
fn a_student_s_program_and_its_checks_match_their_snapshots_at_80_columns() {
    let sandbox = sandbox();
    assert_screen(
        "new-python",
        &screen(&sandbox, &["new", "--lang", "python", "mine"]),
    );
    assert_screen("check-starter", &screen(&sandbox, &["check"]));
    let store = "store.py";
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/store.py"),
        sandbox.path(store),
    )
    .expect("the Python store");
    assert_screen(
        "check-python-store",
        &screen(&sandbox, &["check", "--impl", store]),
    );
    assert_screen(
        "check-python-store-all",
        &screen(&sandbox, &["check", "--impl", store, "--all"]),
    );
}

/// A student with two implementations: `lab new --lang rust` after a
/// Python one says which is current and how to switch back, and `lab
/// progress` names the current one first, lists the other, and ends with
/// the totals and what to do next. (Nothing is built: `lab new` only
/// writes the project.)
#[test]
fn a_second_implementation_and_the_progress_match_their_snapshots_at_80_columns() {
    let sandbox = sandbox();
    screen(&sandbox, &["new", "--lang", "python", "mine"]);
    screen(&sandbox, &["check", "--step", "1"]);
    screen(
        &sandbox,
        &[
            "step",
            "1",
            "--impl",
            "rust",
            "--predict",
            "4",
            "--why",
            "twice",
        ],
    );
    assert_screen(
        "new-rust-after-python",
        &screen(&sandbox, &["new", "--lang", "rust", "mine-rs"]),
    );
    assert_screen(
        "progress-two-implementations",
        &screen(&sandbox, &["progress"]),
    );
}
