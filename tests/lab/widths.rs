//! Every screen of the lab fits an 80-column terminal: each command a
//! student or an instructor runs, with `COLUMNS=80` and its output piped,
//! writes no line wider than 80 columns, on standard output or error (the
//! course's own screens are checked with their snapshots, in `screens`). The
//! width is counted in bytes once colour codes are stripped, as a terminal
//! tool that knows nothing of Unicode would count it, so a wide character
//! cannot hide a long line.

use crate::common::{rust_matrix, RustMatrix, Sandbox};
use std::path::Path;

/// The terminal's width under test.
pub const WIDTH: usize = 80;

/// The lines of `lab ARGS`'s output (both streams) wider than [`WIDTH`],
/// each with the command and its width.
fn too_wide(sandbox: &Sandbox, args: &[&str]) -> Vec<String> {
    let output = sandbox
        .command(args)
        .env("COLUMNS", WIDTH.to_string())
        .output()
        .expect("lab runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    too_wide_in(&args.join(" "), &text)
}

/// The lines of `text`, the output of `lab COMMAND`, wider than [`WIDTH`],
/// each with the command and its width.
pub fn too_wide_in(command: &str, text: &str) -> Vec<String> {
    without_colour(text)
        .lines()
        .filter(|line| line.len() > WIDTH)
        .map(|line| format!("lab {command}: {} columns: {line}", line.len()))
        .collect()
}

/// `text` without its ANSI colour codes.
fn without_colour(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for end in chars.by_ref() {
                if end.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Runs every command in one sandbox, in order, and fails naming every
/// line too wide.
fn assert_fit(sandbox: &Sandbox, commands: &[Vec<String>]) {
    let wide: Vec<String> = commands
        .iter()
        .flat_map(|args| {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            too_wide(sandbox, &args)
        })
        .collect();
    assert!(
        wide.is_empty(),
        "lines wider than {WIDTH}:\n{}",
        wide.join("\n")
    );
}

fn args(text: &str) -> Vec<String> {
    text.split_whitespace().map(String::from).collect()
}

#[test]
fn the_demo_the_probes_the_lists_and_the_help_fit_80_columns() {
    let probes = Path::new(env!("CARGO_MANIFEST_DIR")).join("labs/probes");
    let mut commands = vec![
        args("demo"),
        args("demo --variant h06h"),
        args("demo --power-cut"),
        args("demo --power-cut --variant h04g"),
        args("demo --variant f06a"),
        args("demo --variant f06b"),
        args("demo --variant f06c"),
        args("demo --variant f01a"),
        args("demo --story stale-first"),
        args("demo --story restart"),
        args("tests"),
        args("tests --variants"),
        args("tests --variants --impl python"),
        args("--help"),
        // A usage error with a suggestion.
        args("step 8 --predict claim_many_has_one_winner --why x"),
    ];
    for entry in std::fs::read_dir(&probes).expect("labs/probes") {
        let path = entry.expect("a probe").path();
        commands.push(vec!["probe".into(), path.display().to_string()]);
    }
    for command in [
        "step", "hint", "reset", "reflect", "progress", "probe", "new", "check", "watch", "mutant",
        "grade", "demo", "matrix", "analyze", "run", "tests", "db",
    ] {
        commands.push(args(&format!("{command} --help")));
    }
    assert_fit(&Sandbox::new(), &commands);
}

/// The Rust store's matrix is the run the other tests of this binary read
/// (`lab matrix --output json=matrix.json` at 80 columns: its text report
/// on standard output).
#[test]
fn the_matrix_its_analysis_and_a_run_fit_80_columns() {
    let matrix = rust_matrix();
    let wide = too_wide_in(
        &RustMatrix::ARGS.join(" "),
        &format!("{}{}", matrix.ran.stdout, matrix.ran.stderr),
    );
    assert!(
        wide.is_empty(),
        "lines wider than {WIDTH}:\n{}",
        wide.join("\n")
    );
    assert_fit(
        &Sandbox::new(),
        &[
            args("matrix --impl python"),
            args("analyze"),
            args("analyze --impl python"),
            args("run 04"),
            args("run py04 --impl python"),
        ],
    );
}

#[test]
fn a_student_s_new_program_and_its_checks_fit_80_columns() {
    let sandbox = Sandbox::new();
    let store = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/store.py");
    assert_fit(
        &sandbox,
        &[
            args("new --lang python mine"),
            args("check"),
            args(""),
            vec!["check".into(), "--impl".into(), store.display().to_string()],
            args(""),
        ],
    );
}

/// `lab check` on a program that fails: its prints under a failing test
/// (some wider than the screen), the race advice, every test beyond the
/// worksheet with `--all`, and a traceback of a program that cannot start.
#[test]
fn a_student_s_failing_program_s_checks_fit_80_columns() {
    let sandbox = Sandbox::new();
    let file = crate::own_impl::filled_in_python_starter(&sandbox);
    let text = std::fs::read_to_string(&file).unwrap();
    let lookup = "        conn.execute(\"BEGIN IMMEDIATE\")\n        try:\n            row = conn.execute(\"SELECT until, done FROM jobs WHERE id=?\", (job_id,)).fetchone()\n";
    assert_eq!(text.matches(lookup).count(), 1, "claim's lookup");
    let racing = text.replacen(
        lookup,
        "        row = conn.execute(\"SELECT until, done FROM jobs WHERE id=?\", (job_id,)).fetchone()\n        print(\"claim of\", owner, \"read\", row, \"-\" * 100)\n        conn.execute(\"BEGIN IMMEDIATE\")\n        try:\n",
        1,
    );
    std::fs::write(&file, &racing).unwrap();
    let broken = sandbox.path("mine").join("broken.py");
    let signature = "def renew(path, job_id, owner, fence, now, ttl):";
    assert_eq!(racing.matches(signature).count(), 1, "renew's signature");
    std::fs::write(
        &broken,
        racing.replacen(
            signature,
            // Indented, and longer than the screen with its comment: Python
            // quotes the line in its traceback, which must be cut to fit.
            &format!(
                "{}{}  # {}",
                " ".repeat(70),
                &signature[..signature.len() - 1],
                "a comment wider than the screen ".repeat(4)
            ),
            1,
        ),
    )
    .unwrap();
    assert_fit(
        &sandbox,
        &[
            args("check"),
            args("check --all"),
            args("check --step 8 --all"),
            vec![
                "check".into(),
                "--impl".into(),
                broken.display().to_string(),
            ],
        ],
    );
    // The message is wrapped whole; the traceback's lines are cut, each to
    // one line of the screen, so that they stay lines of code.
    let output = sandbox
        .command(&["check", "--impl", &broken.display().to_string()])
        .env("COLUMNS", WIDTH.to_string())
        .output()
        .expect("lab runs");
    let said = String::from_utf8_lossy(&output.stderr);
    let unwrapped = said.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        unwrapped.contains("before it greeted the lab; its standard error ended with:"),
        "{said}"
    );
    assert!(
        said.lines()
            .any(|line| line.contains("def renew(") && line.ends_with("...")),
        "{said}"
    );
}
