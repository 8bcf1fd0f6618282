//! A Rust project's build as the student sees it, through the real `lab`
//! binary: cargo's own lines, the compiler's messages as written, then a
//! Next; the first build said as such, with the time it took.
//!
//! The builds here are made by a stand-in for cargo (a shell script named
//! by `CARGO`, as the lab finds cargo), so that they take no time; the one
//! that builds for real is ignored by default.

use crate::common::{run_bounded, Ran, Sandbox};
use crate::own_impl::{shared_target, BUILD_BOUND};
use std::path::{Path, PathBuf};

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
