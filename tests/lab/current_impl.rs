//! Which implementation the commands run, through the real `lab` binary:
//! the one rule (`--impl`, else the student's current implementation,
//! else the lab's Rust store, said so), a progress file that keeps each of
//! the student's implementations with its own checks, and a Rust
//! project's build as the student sees it (cargo's own lines, the
//! compiler's messages as written, then a Next).
//!
//! The builds here are made by a stand-in for cargo (a shell script named
//! by `CARGO`, as the lab finds cargo), so that they take no time; the one
//! that builds for real is ignored by default.

use crate::common::{run_bounded, Ran, Sandbox};
use crate::own_impl::{shared_target, Watched, BUILD_BOUND};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The lab's own Python store, written into the sandbox as `name`: a
/// correct program of the student's.
fn correct_python(sandbox: &Sandbox, name: &str) -> PathBuf {
    let file = sandbox.path(name);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("src/store.py"),
        &file,
    )
    .unwrap();
    file
}

/// The command's header on standard error: its line that starts `lab
/// COMMAND: running`, spacing aside.
fn header(ran: &Ran, command: &str) -> String {
    let start = format!("lab {command}: running ");
    let text = crate::common::words(&ran.stderr);
    let at = text
        .find(&start)
        .unwrap_or_else(|| panic!("no header {start:?}:\n{}", ran.shown()));
    text[at..].to_string()
}

/// Without `--impl`, `run`, `tests --variants`, `matrix` and `probe` run
/// the lab's Rust store while nothing is recorded, saying so; once the
/// student has an implementation, that one, named in each header; with
/// `--impl rust` or `--impl python`, the lab's own store again.
#[test]
fn every_command_runs_the_current_implementation_and_names_it() {
    let sandbox = Sandbox::new();
    let nothing = sandbox.lab(&["tests", "--variants"]);
    nothing.assert_success();
    assert!(
        header(&nothing, "tests").starts_with(
            "lab tests: running the lab's Rust store (no implementation of yours is recorded"
        ),
        "{}",
        nothing.shown()
    );
    assert!(nothing.stdout.contains("reference  the reference"));

    let new = sandbox.lab(&["new", "--lang", "python", "mine"]);
    new.assert_success();
    let file = correct_python(&sandbox, "mine/store.py");
    let current = format!(
        "running your current implementation, python3 {} (--impl rust or --impl python runs the lab's own)",
        file.display()
    );
    let listed = sandbox.lab(&["tests", "--variants"]);
    listed.assert_success();
    assert!(
        header(&listed, "tests").ends_with(&current),
        "{}",
        listed.shown()
    );
    assert!(
        listed.stdout.trim_start().starts_with("yours  python3"),
        "the student's program alone:\n{}",
        listed.shown()
    );

    let run = sandbox.lab(&["run", "reference"]);
    run.assert_success();
    assert!(header(&run, "run").ends_with(&current), "{}", run.shown());
    assert!(run.stdout.contains("pass  init_db_creates_the_jobs_table"));

    let matrix = sandbox.lab(&["matrix", "--format", "json"]);
    let variants: Vec<String> = matrix.json()["variants"]
        .as_array()
        .expect("the matrix's variants")
        .iter()
        .map(|variant| variant["id"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(variants, ["yours"], "{}", matrix.shown());
    assert!(header(&matrix, "matrix").ends_with(&current));

    let probe_file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("labs/probes/04-claim-expired.probe");
    let probe = sandbox.lab(&["probe", probe_file.to_str().unwrap()]);
    assert!(
        header(&probe, "probe").ends_with(&current),
        "{}",
        probe.shown()
    );
    assert!(
        probe.stdout.contains("reference: all 6 lines hold"),
        "{}",
        probe.shown()
    );

    let rust = sandbox.lab(&["tests", "--variants", "--impl", "rust"]);
    rust.assert_success();
    assert_eq!(
        header(&rust, "tests"),
        "lab tests: running the lab's Rust store (as --impl names it)"
    );
    assert!(rust.stdout.contains("reference  the reference"));
    let python = sandbox.lab(&["run", "py04", "--impl", "python"]);
    python.assert_success();
    assert_eq!(
        header(&python, "run"),
        "lab run: running the lab's Python store (as --impl names it)"
    );
    assert_eq!(
        sandbox.progress()["implementation"]["file"],
        file.display().to_string(),
        "naming the lab's store records nothing"
    );
}

/// `lab mutant new` breaks the store in the language of the current
/// implementation (the Python store's code for a .py file), `--impl rust`
/// the Rust store's, and says which; `lab mutant check` says whose it is
/// and that `lab matrix --impl python` shows it (plain `lab matrix` runs
/// the student's own program).
#[test]
fn a_new_mutant_breaks_the_store_of_the_current_implementation_s_language() {
    let sandbox = Sandbox::new();
    let rust_only = sandbox.lab(&["mutant", "new", "--step", "4"]);
    rust_only.assert_success();
    rust_only.assert_says(&["a mutant of the lab's Rust store, crates/store/src/store.rs"]);
    sandbox
        .lab(&["new", "--lang", "python", "mine"])
        .assert_success();
    let python = sandbox.lab(&["mutant", "new", "--step", "4"]);
    python.assert_success();
    python.assert_says(&[
        "wrote mutants/o04b-own.toml, a mutant of the lab's Python store, src/store.py (in the language of your current implementation",
    ]);
    let file = sandbox.path("mutants/o04b-own.toml");
    let template = std::fs::read_to_string(&file).unwrap();
    assert!(template.contains("file = \"src/store.py\""), "{template}");
    let rust = sandbox.lab(&["mutant", "new", "--step", "4", "--impl", "rust"]);
    rust.assert_says(&[
        "a mutant of the lab's Rust store, crates/store/src/store.rs (as --impl names it)",
    ]);
    let rust_template = std::fs::read_to_string(sandbox.path("mutants/o04c-own.toml")).unwrap();
    assert!(rust_template.contains("file = \"crates/store/src/store.rs\""));

    let edited: String = template
        .lines()
        .map(|line| match line.strip_prefix("replacement = ") {
            Some(_) => line.replace("until, done", "until, 0"),
            None => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert_ne!(edited, template, "the template offers claim's lookup");
    std::fs::write(&file, edited).unwrap();
    let check = sandbox.lab(&["mutant", "check", "mutants/o04b-own.toml"]);
    check.assert_success();
    check.assert_says(&[
        "mutants/o04b-own.toml, a mutant of the lab's Python store: the fragment occurs once",
        "o04b is killed",
        "`lab matrix --impl python` shows it beside every other mutant",
    ]);
}

/// The step's checks of the implementation at `at` in the progress file
/// (`implementation` the current one, else one of `other_implementations`
/// by its file), by step.
fn checks_of(progress: &Value, file: &Path) -> Value {
    let file = file.display().to_string();
    if progress["implementation"]["file"] == file.as_str() {
        return progress["checks"].clone();
    }
    progress["other_implementations"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|other| other["implementation"]["file"] == file.as_str())
        .map(|other| other["checks"].clone())
        .unwrap_or_else(|| panic!("{file} is not recorded: {progress:#}"))
}

/// The steps a check recorded, in order.
fn steps(checks: &Value) -> Vec<String> {
    checks
        .as_object()
        .map(|checks| checks.keys().cloned().collect())
        .unwrap_or_default()
}

/// A second implementation named with `lab check --impl` becomes current
/// and is checked without `--impl` from then on; the first stays
/// recorded with its own checks, and `lab check --impl` makes it current
/// again. `lab new --lang rust` after them keeps both and says how to
/// switch back. A progress file written before there were several loads
/// with its one implementation current.
#[test]
fn each_implementation_is_kept_with_its_checks_and_check_impl_switches() {
    let sandbox = Sandbox::new();
    sandbox
        .lab(&["new", "--lang", "python", "mine"])
        .assert_success();
    let mine = sandbox.path("mine").join("store.py");
    sandbox.lab(&["check", "--step", "1"]).assert_code(1);
    let other = correct_python(&sandbox, "other/store.py");
    let named = sandbox.lab(&["check", "--impl", other.to_str().unwrap(), "--step", "2"]);
    named.assert_success();
    named.assert_says(&[&format!(
        "Checking python3 {}, now your current implementation, against the contract tests of steps 1 to 2",
        other.display()
    )]);
    let progress = sandbox.progress();
    assert_eq!(
        progress["implementation"]["file"],
        other.display().to_string()
    );
    assert_eq!(steps(&checks_of(&progress, &other)), ["1", "2"]);
    assert_eq!(steps(&checks_of(&progress, &mine)), ["1"]);
    assert_eq!(
        checks_of(&progress, &mine)["1"]["status"],
        "not-implemented"
    );

    let again = sandbox.lab(&["check", "--step", "3"]);
    again.assert_success();
    again.assert_says(&[&format!(
        "Checking your current implementation, python3 {}, against",
        other.display()
    )]);
    assert_eq!(
        steps(&checks_of(&sandbox.progress(), &other)),
        ["1", "2", "3"]
    );

    let rust = sandbox.lab(&["new", "--lang", "rust", "mine-rs"]);
    rust.assert_success();
    rust.assert_says(&[
        "It is now your current implementation",
        &format!(
            "Your earlier implementation, python3 {}, stays recorded with its checks: `lab check --impl {}` makes it current again.",
            other.display(),
            other.display()
        ),
    ]);
    let progress = sandbox.progress();
    assert_eq!(progress["implementation"]["kind"], "rust");
    assert!(progress.get("checks").is_none(), "{progress:#}");
    assert_eq!(steps(&checks_of(&progress, &other)), ["1", "2", "3"]);
    assert_eq!(steps(&checks_of(&progress, &mine)), ["1"]);

    // Back to the first: its checks come back with it, and no build runs.
    let back = sandbox.lab(&["check", "--impl", mine.to_str().unwrap(), "--step", "1"]);
    back.assert_code(1);
    back.assert_says(&["now your current implementation"]);
    let progress = sandbox.progress();
    assert_eq!(
        progress["implementation"]["file"],
        mine.display().to_string()
    );
    let others: Vec<&Value> = progress["other_implementations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|other| &other["implementation"]["kind"])
        .collect();
    assert_eq!(others, ["rust", "python"], "the one current last first");
    let listed = sandbox.lab(&["progress"]);
    listed.assert_says(&[
        &format!("Your current implementation, python3 {}", mine.display()),
        "Also recorded: the Rust project",
        "lab check --impl PATH makes one current",
    ]);
}

/// A progress file as the lab wrote it when it kept one implementation:
/// it loads, its implementation current with its checks, and a new one
/// keeps it among the others.
#[test]
fn a_progress_file_of_one_implementation_loads_it_as_current() {
    let sandbox = Sandbox::new();
    let file = correct_python(&sandbox, "mine/store.py");
    let old = serde_json::json!({
        "version": 1,
        "exercises": {},
        "reflection": null,
        "implementation": {"kind": "python", "file": file.display().to_string()},
        "checks": {
            "1": {"at": "2026-11-30T09:12:44Z", "status": "passed", "failing": []}
        }
    });
    std::fs::write(
        sandbox.path("lease-lab-progress.json"),
        serde_json::to_string_pretty(&old).unwrap(),
    )
    .unwrap();
    let listed = sandbox.lab(&["progress"]);
    listed.assert_success();
    listed.assert_says(&[&format!(
        "Your current implementation, python3 {}: steps passed 1 (lab check)",
        file.display()
    )]);
    assert!(
        listed.stderr.is_empty(),
        "nothing set aside:\n{}",
        listed.shown()
    );
    sandbox
        .lab(&["new", "--lang", "python", "second"])
        .assert_success();
    let progress = sandbox.progress();
    assert_eq!(
        checks_of(&progress, &file)["1"]["status"],
        "passed",
        "{progress:#}"
    );
}

// ---------------------------------------------------------------------------
// A Rust project's build
// ---------------------------------------------------------------------------

/// A line of the compiler's, wider than any terminal: it must reach the
/// screen as written, never wrapped.
const WIDE: &str = "52 |     let really_long_variable_name_for_the_database_connection: u8 = \"a string that is not a number\";";

/// A stand-in for cargo in `folder` that writes what cargo and rustc write
/// for a type error, and fails as cargo does.
fn failing_cargo(folder: &Path) -> PathBuf {
    let script = format!(
        "#!/bin/sh\nprintf '%s\\n' '   Compiling my-lease-store v0.1.0' 'error[E0308]: mismatched types' '  --> src/store.rs:52:77' '   |' '{}' '   |                                                           --   ^^^ expected `u8`' >&2\nexit 101\n",
        WIDE.replace('\'', r"'\''")
    );
    let path = folder.join("fake-cargo");
    std::fs::write(&path, script).unwrap();
    let mut permissions = std::fs::metadata(&path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&path, permissions).unwrap();
    path
}

/// `lab check --impl PROJECT` with the cargo `cargo`, at 80 columns.
fn check_with(sandbox: &Sandbox, cargo: &Path, project: &Path) -> Ran {
    let mut command = sandbox.command(&["check", "--impl", project.to_str().unwrap()]);
    command
        .env("CARGO", cargo)
        .env("COLUMNS", "80")
        .env_remove("CARGO_TARGET_DIR");
    run_bounded(&mut command, crate::common::NO_HANG)
}

/// A build that fails shows cargo's lines and the compiler's messages as
/// they were written (a line wider than the terminal stays one line, the
/// gutter in place), then what failed and a Next line. The first build
/// (nothing of SQLite built yet in the project's build folder) says it is
/// one and how long it took; a later one says nothing of the kind.
#[test]
fn a_build_failure_shows_the_compiler_s_messages_as_written_then_next() {
    let sandbox = Sandbox::new();
    let project = sandbox.path("mine-rs");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("Cargo.toml"), "").unwrap();
    let cargo = failing_cargo(sandbox.dir.path());
    let first = check_with(&sandbox, &cargo, &project);
    first.assert_code(3);
    let lines: Vec<&str> = first.stderr.lines().collect();
    let at = lines
        .iter()
        .position(|line| *line == "error[E0308]: mismatched types")
        .unwrap_or_else(|| panic!("no compiler message:\n{}", first.shown()));
    assert_eq!(
        &lines[at..at + 4],
        [
            "error[E0308]: mismatched types",
            "  --> src/store.rs:52:77",
            "   |",
            WIDE
        ],
        "as written:\n{}",
        first.shown()
    );
    assert!(
        lines[at - 1].contains("Compiling my-lease-store"),
        "{}",
        first.shown()
    );
    let after = crate::common::words(&lines[at + 5..].join("\n"));
    assert!(
        after.starts_with(&format!(
            "lab: the first build took 0 s. lab check: cargo build in {} failed (exit status: 101); the compiler's messages are above. Next: fix the first error the compiler names (its file and line are under it), then run `lab check` again.",
            project.display()
        )),
        "{}",
        first.shown()
    );
    assert!(
        first.stderr.starts_with("lab: the first build of "),
        "said before cargo runs:\n{}",
        first.shown()
    );
    for line in lines.iter().filter(|line| line.starts_with("lab")) {
        assert!(
            line.chars().count() <= 80,
            "the lab's own lines fit: {line}"
        );
    }
    assert!(first.stdout.is_empty(), "{}", first.shown());

    // SQLite built: a later build says nothing of a first one.
    let fingerprints = project.join("target/debug/.fingerprint");
    std::fs::create_dir_all(fingerprints.join("libsqlite3-sys-0123")).unwrap();
    let later = check_with(&sandbox, &cargo, &project);
    later.assert_code(3);
    assert!(!later.stderr.contains("first build"), "{}", later.shown());
    assert!(
        later.stderr.starts_with("   Compiling my-lease-store"),
        "{}",
        later.shown()
    );
    assert_eq!(
        sandbox.progress()["implementation"]["kind"],
        "rust",
        "named, it is current even though it did not build"
    );
}

/// A real build of a project that does not compile: rustc's own messages
/// reach standard error unchanged (its gutter, its caret lines), then a
/// Next line; the first build of the shared build folder says it is one.
#[test]
#[ignore = "builds rusqlite with cargo, a minute when cold; .ci/run runs it"]
fn a_real_build_failure_passes_rustc_s_messages_through() {
    let sandbox = Sandbox::new();
    sandbox
        .lab(&["new", "--lang", "rust", "mine"])
        .assert_success();
    let store = sandbox.path("mine").join("src").join("store.rs");
    let text = std::fs::read_to_string(&store).unwrap();
    let broken = text.replacen(
        "pub fn init_db",
        "pub fn broken() -> u8 {\n    \"one\"\n}\n\npub fn init_db",
        1,
    );
    std::fs::write(&store, broken).unwrap();
    // The shared build folder tells packages apart by name, not by folder
    // (as the lab's workers of mutants are named apart): this project is
    // named apart from the starters the other tests build there.
    let manifest = sandbox.path("mine").join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let renamed = text.replacen(
        "name = \"my-lease-store\"",
        "name = \"my-lease-store-that-does-not-compile\"",
        1,
    ) + "\n[[bin]]\nname = \"my-lease-store\"\npath = \"src/main.rs\"\n";
    assert!(renamed.contains("that-does-not-compile"), "{renamed}");
    std::fs::write(&manifest, renamed).unwrap();
    let target = shared_target();
    let cold = lease_lab::subject::rust_project::first_build(&target);
    let ran = run_bounded(
        sandbox
            .command(&["check"])
            .env("CARGO_TARGET_DIR", &target)
            .env("COLUMNS", "80"),
        BUILD_BOUND,
    );
    ran.assert_code(3);
    let lines: Vec<&str> = ran.stderr.lines().collect();
    let at = lines
        .iter()
        .position(|line| line.starts_with("error[E0308]"))
        .unwrap_or_else(|| panic!("no rustc message:\n{}", ran.shown()));
    assert!(
        lines[at + 1].trim_start().starts_with("--> src/store.rs:"),
        "{}",
        ran.shown()
    );
    assert!(
        lines[at + 2].trim_end().ends_with('|'),
        "the gutter:\n{}",
        ran.shown()
    );
    assert_eq!(
        ran.stderr.contains("the first build of"),
        cold,
        "{}",
        ran.shown()
    );
    ran.assert_says(&["Next: fix the first error the compiler names"]);
}
