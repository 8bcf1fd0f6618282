//! A small cargo project around a Rust store: the starter a student fills
//! in (`lab new --lang rust`), and the worker that runs a mutant of the
//! Rust store that is not compiled into `lab` (a student's own). Both are
//! the protocol loop of `labs/starters/rust/src/main.rs` around a
//! `store.rs`, with the lab's own `error.rs` and `job.rs`.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::fs;
use std::hash::{Hash, Hasher};
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The project's manifest.
const MANIFEST: &str = include_str!("../../labs/starters/rust/Cargo.toml");
/// The protocol loop.
const MAIN: &str = include_str!("../../labs/starters/rust/src/main.rs");
/// The starter's stubs.
pub const STUBS: &str = include_str!("../../labs/starters/rust/src/store.rs");
/// The lab's error type, which the store's functions return.
const ERROR: &str = include_str!("../../crates/store/src/error.rs");
/// The lab's row and fence types.
const JOB: &str = include_str!("../../crates/store/src/job.rs");
/// The lab's own lock file: the project builds with the same crate
/// versions, which the lab's build has already fetched.
const LOCK: &str = include_str!("../../Cargo.lock");

/// The binary the project builds.
const BINARY: &str = "my-lease-store";

/// Writes the project into `folder` (made if missing) with `store` as its
/// `src/store.rs`. Never overwrites a file that differs: a student's work
/// is not lost.
pub fn write(folder: &Path, store: &str) -> io::Result<()> {
    write_files(folder, files(MANIFEST, store))
}

fn write_files(folder: &Path, files: [(&str, &str); 6]) -> io::Result<()> {
    fs::create_dir_all(folder.join("src"))?;
    for (name, text) in files {
        super::own::write_once(&folder.join(name), text)?;
    }
    Ok(())
}

/// The project's files, by path, with `manifest` as `Cargo.toml` and
/// `store` as `src/store.rs`.
fn files<'a>(manifest: &'a str, store: &'a str) -> [(&'static str, &'a str); 6] {
    [
        ("Cargo.toml", manifest),
        ("Cargo.lock", LOCK),
        ("src/main.rs", MAIN),
        ("src/store.rs", store),
        ("src/error.rs", ERROR),
        ("src/job.rs", JOB),
    ]
}

/// Why a project did not build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildFailure {
    /// What went wrong. Its first line is the lab's words: the folder and
    /// cargo's exit status, or why cargo could not run. The lines after
    /// it, if any, are the compiler's messages as it wrote them, quoted
    /// when the build's output was captured (a build in a sandbox); a
    /// build outside one lets cargo write them to standard error as it
    /// goes, and the first line says that they are above.
    pub message: String,
    /// Whether cargo ran and the compiler said why the build failed,
    /// rather than cargo not running at all.
    pub compiler_said: bool,
}

impl BuildFailure {
    /// The failure's first line, in the lab's words.
    pub fn what(&self) -> &str {
        self.message.lines().next().unwrap_or_default()
    }

    /// The compiler's messages quoted after the first line, as written.
    pub fn quoted(&self) -> Option<&str> {
        self.message
            .split_once('\n')
            .map(|(_, quoted)| quoted)
            .filter(|quoted| !quoted.trim().is_empty())
    }

    /// What to do next, `then` being what follows the fix (`run lab check
    /// again`).
    pub fn next(&self, then: &str) -> String {
        if self.compiler_said {
            format!("Next: fix the first error the compiler names (its file and line are under it), then {then}.")
        } else {
            format!("Next: make cargo runnable here, then {then}.")
        }
    }
}

impl fmt::Display for BuildFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BuildFailure {}

/// Builds the project in `folder` (`cargo build`, its build in `target`,
/// else in `CARGO_TARGET_DIR` if set, else in the folder's own `target/`)
/// and returns the program built. A debug build: it rebuilds quickest
/// after a change, and SQLite, where the tests spend their time, is
/// optimised by the manifest anyway.
///
/// Outside a sandbox, cargo writes to standard error as it builds: its
/// progress (a bar at a terminal, a line per crate otherwise) and the
/// compiler's messages, as they are written. In a sandbox (a class's
/// check, whose output goes to a file) it builds quietly, and a failure
/// quotes the compiler's messages.
///
/// Uses the cargo that runs this process if any (`CARGO`), else `cargo`
/// from the path. Errors: cargo cannot be started, or the build fails
/// ([`BuildFailure`]).
pub fn build(folder: &Path, target: Option<&Path>) -> Result<PathBuf, BuildFailure> {
    build_with(&cargo(), folder, target)
}

/// [`build`] of a student's project, saying on standard error what it
/// costs: before a first build ([`first_build`]: SQLite and the crates
/// the store uses compile then, once), that it is one, and after it how
/// long it took. Quiet in a sandbox, as [`build`] is.
///
/// Errors: as for [`build`].
pub fn build_showing(folder: &Path) -> Result<PathBuf, BuildFailure> {
    let first = crate::sandbox::confined().is_none() && first_build(&target_folder(folder, None));
    let say = |text: &str| {
        let text = crate::inert::line(text);
        eprintln!(
            "{}",
            crate::terminal::fill(&text, crate::terminal::width(), "", "  ")
        );
    };
    if first {
        say(&format!(
            "lab: the first build of {}: cargo compiles SQLite and the crates the store uses, once, which takes a minute or more; its progress shows below, and later builds take seconds.",
            folder.display()
        ));
    }
    let started = std::time::Instant::now();
    let built = build(folder, None);
    if first {
        say(&format!(
            "lab: the first build took {}.",
            minutes_and_seconds(started.elapsed())
        ));
    }
    built
}

/// Whether a build into `target` is a first one: nothing of SQLite is
/// built there yet (no fingerprint of `libsqlite3-sys`, the crate that
/// compiles it, which every later build reuses).
pub fn first_build(target: &Path) -> bool {
    let Ok(entries) = fs::read_dir(target.join("debug").join(".fingerprint")) else {
        return true;
    };
    !entries.flatten().any(|entry| {
        entry
            .file_name()
            .to_string_lossy()
            .starts_with("libsqlite3-sys-")
    })
}

/// A duration as a person says it: `48 s`, `1 min 12 s`, `2 min`.
fn minutes_and_seconds(duration: std::time::Duration) -> String {
    let seconds = duration.as_secs();
    match (seconds / 60, seconds % 60) {
        (0, seconds) => format!("{seconds} s"),
        (minutes, 0) => format!("{minutes} min"),
        (minutes, seconds) => format!("{minutes} min {seconds} s"),
    }
}

/// The build folder of the project in `folder`: `target` if given, else
/// `CARGO_TARGET_DIR` if set (cargo's own convention: it then holds every
/// build), else the folder's own `target/`.
fn target_folder(folder: &Path, target: Option<&Path>) -> PathBuf {
    target
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from))
        .unwrap_or_else(|| folder.join("target"))
}

/// The cargo that runs this process if any (`CARGO`), else `cargo` from
/// the path.
fn cargo() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

/// [`build`] with the cargo program `cargo`: in this process's sandbox
/// when its programs are confined ([`crate::sandbox::confine`]), with the
/// environment of [`build_env`], quietly; else as this process runs it,
/// writing to its standard error.
fn build_with(
    cargo: &OsStr,
    folder: &Path,
    target: Option<&Path>,
) -> Result<PathBuf, BuildFailure> {
    let target = target_folder(folder, target);
    let manifest = folder.join("Cargo.toml");
    let cannot_run = |error: &dyn fmt::Display| BuildFailure {
        message: format!(
            "cannot run {}: {error}; building a Rust store needs Rust's toolchain (rustup.rs)",
            Path::new(cargo).display()
        ),
        compiler_said: false,
    };
    let Some(sandbox) = crate::sandbox::confined() else {
        let mut command = Command::new(cargo);
        command
            .args(["build", "--manifest-path"])
            .arg(&manifest)
            .env("CARGO_TARGET_DIR", &target)
            .stdin(std::process::Stdio::null())
            // Standard output may be a report for tools: cargo's words go
            // to standard error, where it writes them all anyway.
            .stdout(std::process::Stdio::null());
        if !colored::control::SHOULD_COLORIZE.should_colorize() {
            command.env("CARGO_TERM_COLOR", "never");
        }
        let status = command.status().map_err(|error| cannot_run(&error))?;
        if !status.success() {
            return Err(BuildFailure {
                message: format!(
                    "cargo build in {} failed ({status}); the compiler's messages are above.",
                    folder.display()
                ),
                compiler_said: true,
            });
        }
        return Ok(target.join("debug").join(BINARY));
    };
    let argv = [
        toolchain_program("cargo").map_or_else(
            || cargo.to_string_lossy().into_owned(),
            |found| found.display().to_string(),
        ),
        "build".into(),
        "--quiet".into(),
        "--manifest-path".into(),
        manifest.display().to_string(),
    ];
    let mut prepared = sandbox
        .command(&argv, folder, &build_env(&target))
        .map_err(|error| cannot_run(&error))?;
    let output = prepared
        .command
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|error| cannot_run(&error))?;
    if !output.status.success() {
        return Err(quoting_failure(folder, &output));
    }
    Ok(target.join("debug").join(BINARY))
}

/// The failure of a quiet build whose output was captured: the folder
/// and the exit status, then the compiler's messages as written, from
/// the first error on (all of standard error when no line starts one).
fn quoting_failure(folder: &Path, output: &std::process::Output) -> BuildFailure {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let errors: Vec<&str> = stderr
        .lines()
        .skip_while(|line| !line.starts_with("error"))
        .collect();
    let detail = if errors.is_empty() {
        stderr.trim_end().to_string()
    } else {
        errors.join("\n")
    };
    BuildFailure {
        message: format!(
            "cargo build in {} failed ({}):\n{detail}",
            folder.display(),
            output.status
        ),
        compiler_said: true,
    }
}

/// The environment of a build of a student's project in a sandbox, and
/// of the dependencies the lab builds for it beforehand outside (see
/// [`prebuilt_dependencies`]): the same in both, so that cargo takes the
/// prebuilt dependencies for its own. Cargo's and rustup's homes are the
/// instructor's (shown read-only in the sandbox), with no network.
pub fn build_env(target: &Path) -> Vec<(String, String)> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let folder = |variable: &str, under_home: &str| -> Option<(String, String)> {
        let found = std::env::var_os(variable)
            .map(PathBuf::from)
            .or_else(|| Some(home.as_ref()?.join(under_home)))?;
        Some((variable.to_string(), found.display().to_string()))
    };
    let mut env: Vec<(String, String)> = [
        folder("CARGO_HOME", ".cargo"),
        folder("RUSTUP_HOME", ".rustup"),
        std::env::var("RUSTUP_TOOLCHAIN")
            .ok()
            .map(|toolchain| ("RUSTUP_TOOLCHAIN".to_string(), toolchain)),
    ]
    .into_iter()
    .flatten()
    .collect();
    // The toolchain's own compiler, not rustup's proxy for it, which would
    // write into rustup's folder (read-only in a sandbox).
    env.extend(
        toolchain_program("rustc").map(|rustc| ("RUSTC".to_string(), rustc.display().to_string())),
    );
    env.extend([
        ("CARGO_TARGET_DIR".to_string(), target.display().to_string()),
        ("CARGO_NET_OFFLINE".to_string(), "true".to_string()),
        ("CARGO_TERM_COLOR".to_string(), "never".to_string()),
    ]);
    env
}

/// The program `name` (`cargo`, `rustc`) of the toolchain that `rustc`
/// on the `PATH` runs, asked of it once (rustup's proxies choose a
/// toolchain, then run its programs: a sandboxed build runs those
/// directly, as the prebuilt dependencies were built).
fn toolchain_program(name: &str) -> Option<PathBuf> {
    static SYSROOT: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    let sysroot = SYSROOT.get_or_init(|| {
        let output = Command::new("rustc")
            .args(["--print", "sysroot"])
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
            .ok()?;
        output
            .status
            .success()
            .then(|| PathBuf::from(String::from_utf8_lossy(&output.stdout).trim()))
    });
    let program = sysroot.as_ref()?.join("bin").join(name);
    program.is_file().then_some(program)
}

/// The build folder of the starter's dependencies, built once as the
/// instructor outside any sandbox (the starter's manifest and lock file
/// are the lab's own, so its build scripts are the lab's to run) with the
/// environment a sandboxed build has ([`build_env`]), in the cache
/// (`deps/` in [`cache_folder`]): each check of a student's project in a
/// sandbox starts from a copy of it ([`copy_prebuilt`]), and compiles only
/// the student's own crate. `on_build` is told the folder before a build
/// that is not a no-op is likely (no build finished there yet).
///
/// Errors: cargo cannot be run, or the starter does not build.
pub fn prebuilt_dependencies(on_build: impl FnOnce(&Path)) -> Result<PathBuf, BuildFailure> {
    let folder = cache_folder().join("deps");
    let (project, target) = (folder.join("project"), folder.join("target"));
    if !target.join("debug").join(BINARY).is_file() {
        on_build(&folder);
    }
    fs::create_dir_all(project.join("src")).map_err(|error| BuildFailure {
        message: format!("cannot write {}: {error}", project.display()),
        compiler_said: false,
    })?;
    for (name, text) in files(MANIFEST, STUBS) {
        let path = project.join(name);
        if fs::read_to_string(&path).ok().as_deref() != Some(text) {
            fs::write(&path, text).map_err(|error| BuildFailure {
                message: format!("cannot write {}: {error}", path.display()),
                compiler_said: false,
            })?;
        }
    }
    let cargo = toolchain_program("cargo").map_or_else(cargo, PathBuf::into_os_string);
    let output = Command::new(&cargo)
        .args(["build", "--quiet", "--manifest-path"])
        .arg(project.join("Cargo.toml"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", "/tmp")
        .envs(build_env(&target))
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|error| BuildFailure {
            message: format!("cannot run {}: {error}", Path::new(&cargo).display()),
            compiler_said: false,
        })?;
    if !output.status.success() {
        return Err(BuildFailure {
            message: format!(
                "the starter's dependencies did not build in {}: {}",
                folder.display(),
                String::from_utf8_lossy(&output.stderr).trim_end()
            ),
            compiler_said: true,
        });
    }
    Ok(target)
}

/// Copies the prebuilt dependencies of `from` (a build folder from
/// [`prebuilt_dependencies`]) into the build folder `to`, with their
/// times (cargo tells a fresh build from its files' times): what a build
/// reuses (`debug/deps`, `debug/build`, `debug/.fingerprint`), not the
/// starter's own program or its incremental state.
///
/// Errors: a file cannot be read or written.
pub fn copy_prebuilt(from: &Path, to: &Path) -> io::Result<()> {
    for part in ["deps", "build", ".fingerprint"] {
        copy_with_times(&from.join("debug").join(part), &to.join("debug").join(part))?;
    }
    Ok(())
}

/// Copies the folder `from` to `to` (made), every file with its mode and
/// its time of change; links are left out.
fn copy_with_times(from: &Path, to: &Path) -> io::Result<()> {
    fs::create_dir_all(to)?;
    for item in fs::read_dir(from)? {
        let item = item?;
        let kind = item.file_type()?;
        let target = to.join(item.file_name());
        if kind.is_dir() {
            copy_with_times(&item.path(), &target)?;
        } else if kind.is_file() {
            fs::copy(item.path(), &target)?;
            let modified = item.metadata()?.modified()?;
            fs::File::options()
                .write(true)
                .open(&target)?
                .set_modified(modified)?;
        }
    }
    // A folder's time too: cargo reads the time of a build script's
    // output folder.
    let modified = fs::metadata(from)?.modified()?;
    fs::File::open(to)?.set_modified(modified)
}

/// Where the lab keeps the workers it builds for mutants of the Rust store
/// that are not compiled in: `$LEASE_LAB_CACHE`, else `lease-lab` in the
/// user's cache folder (`$XDG_CACHE_HOME`, else `~/.cache`), else in the
/// system's temporary folder.
pub fn cache_folder() -> PathBuf {
    if let Some(folder) = std::env::var_os("LEASE_LAB_CACHE") {
        return PathBuf::from(folder);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("lease-lab")
}

/// The worker program for a Rust store `source`: built into the cache the
/// first time (`on_build` is told the project's folder first, to say so),
/// found there after. The cache is keyed by a hash of every file of the
/// project, so a change of the source builds anew. All workers share one
/// build folder, so the crates they use build once.
pub fn worker(source: &str, on_build: impl FnOnce(&Path)) -> Result<PathBuf, BuildFailure> {
    worker_in(&cache_folder(), &cargo(), source, on_build)
}

/// [`worker`] with the cache folder `cache` and the cargo program `cargo`.
fn worker_in(
    cache: &Path,
    cargo: &OsStr,
    source: &str,
    on_build: impl FnOnce(&Path),
) -> Result<PathBuf, BuildFailure> {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    files(MANIFEST, source).hash(&mut hasher);
    let key = format!("{:016x}", hasher.finish());
    let folder = cache.join("workers").join(&key);
    let built = folder.join(BINARY);
    if built.is_file() {
        return Ok(built);
    }
    on_build(&folder);
    // Every worker builds in one target folder, where cargo tells packages
    // apart by name and version, not by folder: a worker named like the
    // starter (or like another worker) would be taken for it and not
    // rebuilt. So each worker's package is named by its key; the program
    // keeps its name.
    let manifest = MANIFEST.replacen(
        &format!("name = \"{BINARY}\""),
        &format!("name = \"{BINARY}-{key}\""),
        1,
    ) + &format!("\n[[bin]]\nname = \"{BINARY}\"\npath = \"src/main.rs\"\n");
    write_files(&folder, files(&manifest, source)).map_err(|error| BuildFailure {
        message: format!(
            "cannot write the worker's project in {}: {error}",
            folder.display()
        ),
        compiler_said: false,
    })?;
    let program = build_with(cargo, &folder, Some(&cache.join("target")))?;
    fs::copy(&program, &built).map_err(|error| BuildFailure {
        message: format!("cannot keep the worker at {}: {error}", built.display()),
        compiler_said: false,
    })?;
    Ok(built)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_is_written_once_and_a_student_s_file_never_overwritten() {
        let folder = tempfile::tempdir().unwrap();
        write(folder.path(), STUBS).unwrap();
        for name in [
            "Cargo.toml",
            "Cargo.lock",
            "src/main.rs",
            "src/store.rs",
            "src/error.rs",
            "src/job.rs",
        ] {
            assert!(folder.path().join(name).is_file(), "{name}");
        }
        write(folder.path(), STUBS).unwrap();
        fs::write(folder.path().join("src/store.rs"), "// my work").unwrap();
        let error = write(folder.path(), STUBS).unwrap_err();
        assert!(
            error.to_string().contains("src/store.rs exists already"),
            "{error}"
        );
        assert_eq!(
            fs::read_to_string(folder.path().join("src/store.rs")).unwrap(),
            "// my work"
        );
    }

    /// A real build that fails: cargo wrote the compiler's messages to
    /// standard error as it went (tests/lab/current_impl.rs reads them
    /// there), and the failure says so, with cargo's exit status.
    #[test]
    #[ignore = "builds rusqlite with cargo, a minute when cold; .ci/run runs it"]
    fn a_build_that_fails_says_the_compiler_s_errors_are_above() {
        let folder = tempfile::tempdir().unwrap();
        // Named apart from the starters built in the same build folder,
        // which tells packages apart by name (as `worker_in` does).
        let manifest = MANIFEST.replacen(
            &format!("name = \"{BINARY}\""),
            &format!("name = \"{BINARY}-that-does-not-compile\""),
            1,
        ) + &format!("\n[[bin]]\nname = \"{BINARY}\"\npath = \"src/main.rs\"\n");
        let store = "pub fn broken() -> u8 { \"one\" }\n";
        write_files(folder.path(), files(&manifest, store)).unwrap();
        // The build folder of tests/lab/own_impl.rs, so that rusqlite builds once.
        let target = std::env::temp_dir()
            .join("lease-lab-test-cache")
            .join("target");
        let failure = build(folder.path(), Some(&target)).unwrap_err();
        assert!(failure.compiler_said, "{failure}");
        assert_eq!(
            failure.message,
            format!(
                "cargo build in {} failed (exit status: 101); the compiler's messages are above.",
                folder.path().display()
            )
        );
    }

    #[test]
    fn a_build_uses_the_cargo_that_runs_the_lab() {
        // Under `cargo test`, CARGO names the cargo that runs the tests.
        assert_eq!(Some(cargo()), std::env::var_os("CARGO"));
        // That cargo, asked to build a folder with no project, fails at once.
        let empty = tempfile::tempdir().unwrap();
        let failure = build(empty.path(), Some(empty.path())).unwrap_err();
        assert!(
            failure
                .message
                .starts_with(&format!("cargo build in {} failed", empty.path().display())),
            "{failure}"
        );
    }

    /// A quiet build's failure (a sandbox's) quotes the compiler's
    /// messages from the first error on, as written, under its first line.
    #[test]
    fn a_captured_failure_quotes_the_compiler_from_its_first_error() {
        use std::os::unix::process::ExitStatusExt;
        let stderr = "   Compiling my-lease-store\nwarning: unused\nerror[E0308]: mismatched types\n --> src/store.rs:1:25\n  |\n1 | pub fn broken() -> u8 { \"one\" }\n  |                    --   ^^^^^ expected `u8`, found `&str`\n";
        let output = std::process::Output {
            status: std::process::ExitStatus::from_raw(101 << 8),
            stdout: Vec::new(),
            stderr: stderr.as_bytes().to_vec(),
        };
        let failure = quoting_failure(Path::new("/room/mine"), &output);
        assert_eq!(
            failure.what(),
            "cargo build in /room/mine failed (exit status: 101):"
        );
        let quoted = failure.quoted().expect("the compiler's messages");
        assert!(quoted.starts_with("error[E0308]: mismatched types\n --> src/store.rs:1:25\n  |\n"));
        assert!(
            quoted.ends_with("^^^^^ expected `u8`, found `&str`"),
            "{quoted}"
        );
        let nothing_said = std::process::Output {
            stderr: b"cargo: killed\n".to_vec(),
            ..output
        };
        assert_eq!(
            quoting_failure(Path::new("/room/mine"), &nothing_said).quoted(),
            Some("cargo: killed")
        );
    }

    /// A build is a first one until SQLite's crate has a fingerprint in
    /// the build folder; a duration is said in minutes and seconds.
    #[test]
    fn a_first_build_is_one_before_sqlite_is_built() {
        let target = tempfile::tempdir().unwrap();
        assert!(first_build(target.path()), "nothing built");
        let fingerprints = target.path().join("debug").join(".fingerprint");
        fs::create_dir_all(fingerprints.join("rusqlite-0123")).unwrap();
        assert!(first_build(target.path()), "SQLite not built yet");
        fs::create_dir_all(fingerprints.join("libsqlite3-sys-4567")).unwrap();
        assert!(!first_build(target.path()));
        let seconds = std::time::Duration::from_secs;
        assert_eq!(minutes_and_seconds(seconds(48)), "48 s");
        assert_eq!(minutes_and_seconds(seconds(72)), "1 min 12 s");
        assert_eq!(minutes_and_seconds(seconds(120)), "2 min");
    }

    #[test]
    fn the_cache_folder_is_lease_lab_s_own() {
        let folder = cache_folder();
        assert!(folder.ends_with("lease-lab") || std::env::var_os("LEASE_LAB_CACHE").is_some());
    }

    /// A stand-in for cargo: it counts its calls in `calls` beside the
    /// build folder and either "builds" the worker (a script) or fails as
    /// the compiler does.
    fn fake_cargo(folder: &Path, fails: bool) -> PathBuf {
        let script = if fails {
            "echo '   Compiling my-lease-store' >&2\necho 'error[E0308]: mismatched types' >&2\necho ' --> src/store.rs:1:1' >&2\nexit 101\n"
        } else {
            "mkdir -p \"$CARGO_TARGET_DIR/debug\"\necho x >> \"$CARGO_TARGET_DIR/calls\"\nprintf '#!/bin/sh\\n' > \"$CARGO_TARGET_DIR/debug/my-lease-store\"\n"
        };
        let path = folder.join(if fails { "failing-cargo" } else { "cargo" });
        fs::write(&path, format!("#!/bin/sh\n{script}")).unwrap();
        let mut permissions = fs::metadata(&path).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
        fs::set_permissions(&path, permissions).unwrap();
        path
    }

    #[test]
    fn a_worker_is_built_once_per_source_and_then_taken_from_the_cache() {
        let cache = tempfile::tempdir().unwrap();
        let cargo = fake_cargo(cache.path(), false);
        let calls = || {
            fs::read_to_string(cache.path().join("target/calls"))
                .map_or(0, |text| text.lines().count())
        };
        let mut built_in = None;
        let first = worker_in(cache.path(), cargo.as_os_str(), "// one", |folder| {
            built_in = Some(folder.to_path_buf())
        })
        .unwrap();
        let folder = built_in.expect("the first call builds, saying where");
        assert_eq!(first, folder.join(BINARY));
        assert!(first.is_file() && folder.join("src/store.rs").is_file());
        assert_eq!(
            fs::read_to_string(folder.join("src/store.rs")).unwrap(),
            "// one"
        );
        assert_eq!(calls(), 1);
        let again = worker_in(cache.path(), cargo.as_os_str(), "// one", |_| {
            panic!("no build")
        })
        .unwrap();
        assert_eq!(
            (again, calls()),
            (first.clone(), 1),
            "the same source is cached"
        );
        let other = worker_in(cache.path(), cargo.as_os_str(), "// two", |_| {}).unwrap();
        assert_ne!(other, first);
        // One target folder for all: each worker's package has a name of its own.
        let package = |program: &Path| {
            fs::read_to_string(program.with_file_name("Cargo.toml"))
                .unwrap()
                .lines()
                .find(|line| line.starts_with("name = "))
                .unwrap()
                .to_string()
        };
        assert_ne!(package(&first), package(&other));
        assert_ne!(package(&first), format!("name = \"{BINARY}\""));
        assert_eq!(calls(), 2, "another source builds anew");
    }

    #[test]
    fn a_failed_or_impossible_build_says_why() {
        let folder = tempfile::tempdir().unwrap();
        let failing = fake_cargo(folder.path(), true);
        // Outside a sandbox cargo writes its messages itself, as it goes
        // (tests/lab/own_impl.rs sees them on the lab's standard error).
        let failure =
            build_with(failing.as_os_str(), folder.path(), Some(folder.path())).unwrap_err();
        assert_eq!(
            failure.message,
            format!(
                "cargo build in {} failed (exit status: 101); the compiler's messages are above.",
                folder.path().display()
            )
        );
        assert!(failure.compiler_said && failure.quoted().is_none());
        assert_eq!(failure.what(), failure.message);
        assert_eq!(failure.to_string(), failure.message);
        assert!(
            failure
                .next("run `lab check` again")
                .starts_with("Next: fix the first error the compiler names"),
            "{}",
            failure.next("")
        );
        let missing = build_with(OsStr::new("/no/such/cargo"), folder.path(), None).unwrap_err();
        assert!(
            missing
                .message
                .contains("building a Rust store needs Rust's toolchain"),
            "{missing}"
        );
        assert!(!missing.compiler_said);
        assert_eq!(
            missing.next("run `lab check` again"),
            "Next: make cargo runnable here, then run `lab check` again."
        );
        let fine = fake_cargo(folder.path(), false);
        let target = folder.path().join("elsewhere");
        assert_eq!(
            build_with(fine.as_os_str(), folder.path(), Some(&target)).unwrap(),
            target.join("debug").join(BINARY)
        );
        if std::env::var_os("CARGO_TARGET_DIR").is_none() {
            assert_eq!(
                build_with(fine.as_os_str(), folder.path(), None).unwrap(),
                folder.path().join("target/debug").join(BINARY)
            );
        }
    }
}
