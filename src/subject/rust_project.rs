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
const ERROR: &str = include_str!("../error.rs");
/// The lab's row and fence types.
const JOB: &str = include_str!("../job.rs");
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
    /// What went wrong, with the compiler's error lines.
    pub message: String,
}

impl fmt::Display for BuildFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BuildFailure {}

/// Builds the project in `folder` (`cargo build`, its build in `target`,
/// else in `CARGO_TARGET_DIR` if set, else in the folder's own `target/`)
/// and returns the program built. A debug build: it rebuilds quickest after a change, and SQLite,
/// where the tests spend their time, is optimised by the manifest anyway.
///
/// Uses the cargo that runs this process if any (`CARGO`), else `cargo`
/// from the path. Errors: cargo cannot be started, or the build fails; the
/// message then holds the compiler's error lines.
pub fn build(folder: &Path, target: Option<&Path>) -> Result<PathBuf, BuildFailure> {
    build_with(&cargo(), folder, target)
}

/// The cargo that runs this process if any (`CARGO`), else `cargo` from
/// the path.
fn cargo() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

/// [`build`] with the cargo program `cargo`: in this process's sandbox
/// when its programs are confined ([`crate::sandbox::confine`]), with the
/// environment of [`build_env`], else as this process runs it.
fn build_with(
    cargo: &OsStr,
    folder: &Path,
    target: Option<&Path>,
) -> Result<PathBuf, BuildFailure> {
    // Cargo's own convention: CARGO_TARGET_DIR, when set, holds every build.
    let target = target
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from))
        .unwrap_or_else(|| folder.join("target"));
    let manifest = folder.join("Cargo.toml");
    let cannot_run = |error: &dyn fmt::Display| BuildFailure {
        message: format!(
            "cannot run {}: {error}; building a Rust store needs Rust's toolchain (rustup.rs)",
            Path::new(cargo).display()
        ),
    };
    let output = match crate::sandbox::confined() {
        Some(sandbox) => {
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
            prepared.command.stdin(std::process::Stdio::null()).output()
        }
        None => Command::new(cargo)
            .args(["build", "--quiet", "--manifest-path"])
            .arg(&manifest)
            .env("CARGO_TARGET_DIR", &target)
            .output(),
    }
    .map_err(|error| cannot_run(&error))?;
    if !output.status.success() {
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
        return Err(BuildFailure {
            message: format!(
                "cargo build in {} failed ({}):\n{detail}",
                folder.display(),
                output.status
            ),
        });
    }
    Ok(target.join("debug").join(BINARY))
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
    })?;
    for (name, text) in files(MANIFEST, STUBS) {
        let path = project.join(name);
        if fs::read_to_string(&path).ok().as_deref() != Some(text) {
            fs::write(&path, text).map_err(|error| BuildFailure {
                message: format!("cannot write {}: {error}", path.display()),
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
        })?;
    if !output.status.success() {
        return Err(BuildFailure {
            message: format!(
                "the starter's dependencies did not build in {}: {}",
                folder.display(),
                String::from_utf8_lossy(&output.stderr).trim_end()
            ),
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
    })?;
    let program = build_with(cargo, &folder, Some(&cache.join("target")))?;
    fs::copy(&program, &built).map_err(|error| BuildFailure {
        message: format!("cannot keep the worker at {}: {error}", built.display()),
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

    #[test]
    #[ignore = "builds rusqlite with cargo, a minute when cold; .ci/run runs it"]
    fn a_build_that_fails_reports_the_compiler_s_errors() {
        let folder = tempfile::tempdir().unwrap();
        write(folder.path(), "pub fn broken() -> u8 { \"one\" }\n").unwrap();
        // The build folder of tests/lab/own_impl.rs, so that rusqlite builds once.
        let target = std::env::temp_dir()
            .join("lease-lab-test-cache")
            .join("target");
        let failure = build(folder.path(), Some(&target)).unwrap_err();
        assert!(failure.message.contains("error[E0308]"), "{failure}");
        assert!(failure.message.contains("src/store.rs"), "{failure}");
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
        let failure =
            build_with(failing.as_os_str(), folder.path(), Some(folder.path())).unwrap_err();
        assert!(
            failure.message.starts_with(&format!(
                "cargo build in {} failed",
                folder.path().display()
            )),
            "{failure}"
        );
        assert!(
            failure
                .message
                .ends_with("error[E0308]: mismatched types\n --> src/store.rs:1:1"),
            "{failure}"
        );
        assert!(
            !failure.message.contains("Compiling"),
            "only the error lines: {failure}"
        );
        assert_eq!(failure.to_string(), failure.message);
        let missing = build_with(OsStr::new("/no/such/cargo"), folder.path(), None).unwrap_err();
        assert!(
            missing
                .message
                .contains("building a Rust store needs Rust's toolchain"),
            "{missing}"
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
