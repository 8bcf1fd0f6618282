//! How fast the lab answers, every figure measured side by side in one run
//! (`cargo bench --bench speed`, about seven minutes on two cores):
//!
//! - **feedback**: `lab check --impl python` (its wall time, and the Python
//!   program's own CPU time in that same check, measured by a wrapper around
//!   the program, and the check again with `python3` the interpreter itself
//!   where it is a launcher such as pyenv's shim), `lab check --impl rust`,
//!   and `lab watch` from a save to the result on screen;
//! - **the kill matrix**: the Rust store's reference and mutants, the Python
//!   store's, against the approach the lab replaces, `cargo test --test
//!   contract --features mutant-ID` for each worksheet mutant: warm (built
//!   already) and rebuilding (as an instructor switching mutants waits).
//!
//! Each lab figure is the median of five runs. `LEASE_LAB_BENCH_SKIP_CARGO=1`
//! leaves the cargo figures out. It prints a table, then the ratios the lab
//! promises, each with its bound.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The argument that makes this binary the wrapper that measures a
/// program's CPU time: `--program-cpu-into FILE COMMAND...` runs COMMAND
/// with this process's standard streams and writes the CPU seconds (user
/// plus system) it used, it and its children, to FILE.
const WRAP: &str = "--program-cpu-into";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some(WRAP) {
        wrap(Path::new(&args[2]), &args[3..]);
        return;
    }
    let lab = Path::new(env!("CARGO_BIN_EXE_lab"));
    let work = tempfile::tempdir().expect("a temporary folder");
    let store = work.path().join("store.py");
    std::fs::write(&store, lease_lab::subject::PYTHON_SOURCE).expect("the Python store is written");
    let progress = work.path().join("progress.json");

    let check_python = median_of(5, || timed(lab, &["check", "--impl", "python"]));
    let check_rust = median_of(5, || timed(lab, &["check", "--impl", "rust"]));
    // The same check with `python3` the interpreter itself: where `python3`
    // is a version manager's launcher (pyenv's is a shell script), what the
    // launcher costs a check shows beside it.
    let interpreter = work.path().join("interpreter");
    let direct_path = direct_python(&interpreter);
    let check_direct = median_of(5, || {
        timed_with_path(lab, &["check", "--impl", "python"], &direct_path)
    });
    let (check_wrapped, program_cpu) = {
        let mut runs: Vec<(Duration, Duration)> = (0..5)
            .map(|_| wrapped_check(lab, &store, &progress, work.path()))
            .collect();
        runs.sort();
        runs[2]
    };
    let watch = watch_saves(lab, &store, &progress, 5);
    let matrix_rust = median_of(5, || timed(lab, &["matrix"]));
    let matrix_python = median_of(5, || timed(lab, &["matrix", "--impl", "python"]));
    let variants_rust = lease_lab::variant::Variant::all_compiled().len();

    println!("\n{}, {} cores", cpu_model(), cores());
    println!("{}", python_kind(&interpreter));
    println!("{:<66} {:>9}", "what", "seconds");
    let tests = lease_lab::suite::CASES.len();
    row(
        &format!("lab check --impl python ({tests} tests)"),
        check_python,
    );
    row(
        "  the same through the CPU-measuring wrapper",
        check_wrapped,
    );
    row(
        "  the Python program's own CPU time in that check",
        program_cpu,
    );
    row("  the same, python3 the interpreter itself", check_direct);
    row("lab check --impl rust", check_rust);
    row("lab watch, from a save to the result on screen", watch);
    row(
        &format!("lab matrix, {variants_rust} variants × {tests} tests"),
        matrix_rust,
    );
    let variants_python = lease_lab::subject::Subject::Python
        .variants(Path::new("no-mutants-folder"))
        .map_or(0, |variants| variants.len());
    row(
        &format!("lab matrix --impl python, {variants_python} variants"),
        matrix_python,
    );
    let per_variant = matrix_rust / u32::try_from(variants_rust).expect("a few variants");
    row("  lab matrix per Rust variant", per_variant);

    println!("\n{:<66} {:>9}", "promise", "ratio");
    ratio(
        "check python wall / its program's CPU (at most 1.5)",
        check_wrapped,
        program_cpu,
    );
    ratio(
        "check python / check rust (at most 2)",
        check_python,
        check_rust,
    );
    ratio(
        "  the same, python3 the interpreter itself",
        check_direct,
        check_rust,
    );
    ratio(
        "watch from a save / one check python (at most 1.5)",
        watch,
        check_python,
    );
    ratio(
        "matrix python / matrix rust (at most 1.5)",
        matrix_python,
        matrix_rust,
    );
    if std::env::var_os("LEASE_LAB_BENCH_SKIP_CARGO").is_some() {
        return;
    }
    let (warm, rebuild) = cargo_per_mutant();
    println!();
    row(
        "cargo test --test contract --features mutant-ID, warm, per mutant",
        warm,
    );
    row("  rebuilding, per mutant", rebuild);
    ratio(
        "warm cargo per mutant / lab per variant (at least 40)",
        warm,
        per_variant,
    );
    ratio(
        "rebuilding cargo per mutant / lab per variant (at least 600)",
        rebuild,
        per_variant,
    );
}

/// The processor's name, as Linux gives it.
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find_map(|line| {
            line.strip_prefix("model name")?
                .split_once(':')
                .map(|(_, name)| name.trim().to_string())
        })
        .unwrap_or_else(|| "an unnamed processor".into())
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

fn row(label: &str, took: Duration) {
    println!("{label:<66} {:>9.3}", took.as_secs_f64());
}

fn ratio(label: &str, numerator: Duration, denominator: Duration) {
    println!(
        "{label:<66} {:>9.2}",
        numerator.as_secs_f64() / denominator.as_secs_f64()
    );
}

fn median_of(runs: usize, mut measure: impl FnMut() -> Duration) -> Duration {
    let mut times: Vec<Duration> = (0..runs).map(|_| measure()).collect();
    times.sort();
    times[runs / 2]
}

/// The wall time of `lab ARGS`, which must succeed.
fn timed(lab: &Path, args: &[&str]) -> Duration {
    timed_with_path(lab, args, &std::env::var_os("PATH").unwrap_or_default())
}

/// [`timed`], with `path` as `PATH`.
fn timed_with_path(lab: &Path, args: &[&str], path: &std::ffi::OsStr) -> Duration {
    let started = Instant::now();
    let output = Command::new(lab)
        .args(args)
        .args(["--color", "never"])
        .env("PATH", path)
        .output()
        .expect("lab runs");
    let took = started.elapsed();
    assert!(
        output.status.success(),
        "lab {args:?} must pass to be worth timing: {}",
        String::from_utf8_lossy(&output.stdout)
    );
    took
}

/// A `PATH` whose first folder, `folder`, holds `python3` as a link to the
/// interpreter that this `PATH`'s `python3` runs (asked of Python itself),
/// so that no launcher stands between the lab and the interpreter.
fn direct_python(folder: &Path) -> std::ffi::OsString {
    let asked = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    assert!(asked.status.success(), "python3 names its interpreter");
    let executable = String::from_utf8(asked.stdout).expect("a path in UTF-8");
    std::fs::create_dir_all(folder).expect("a folder for the link");
    std::os::unix::fs::symlink(executable.trim(), folder.join("python3"))
        .expect("a link to the interpreter");
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(folder.to_path_buf()).chain(std::env::split_paths(&path)))
        .expect("a PATH")
}

/// Whether `PATH`'s `python3` is a launcher (a script that starts the
/// interpreter, as pyenv's shim) or the interpreter that `folder` links to.
fn python_kind(folder: &Path) -> &'static str {
    // (Said of the PATH the bench was given, not of the one with `folder`.)
    let linked = std::fs::read_link(folder.join("python3")).expect("the link");
    let found = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|dir| dir.join("python3"))
        .find(|candidate| candidate.is_file())
        .and_then(|candidate| candidate.canonicalize().ok());
    if found == linked.canonicalize().ok() {
        "python3 is the interpreter itself"
    } else {
        "python3 is a launcher that starts the interpreter"
    }
}

/// One `lab check` of the Python store run as one's own program through
/// the wrapper: its wall time, and the CPU time of the program's
/// processes in it (both lanes, each from its start to its exit).
fn wrapped_check(lab: &Path, store: &Path, progress: &Path, dir: &Path) -> (Duration, Duration) {
    let cpu_files: Vec<PathBuf> = (0..8).map(|n| dir.join(format!("cpu-{n}"))).collect();
    for file in &cpu_files {
        let _ = std::fs::remove_file(file);
    }
    // Each process of the program writes its own file: the wrapper takes the
    // first name that is free.
    let me = std::env::current_exe().expect("this bench's path");
    let command = format!(
        "{} {WRAP} {} python3 {}",
        me.display(),
        dir.join("cpu").display(),
        store.display()
    );
    let took = timed(
        lab,
        &[
            "check",
            "--impl",
            &command,
            "--progress",
            &progress.to_string_lossy(),
        ],
    );
    let cpu = cpu_files
        .iter()
        .filter_map(|file| std::fs::read_to_string(file).ok())
        .map(|seconds| Duration::from_secs_f64(seconds.trim().parse().expect("seconds")))
        .sum();
    assert!(cpu > Duration::ZERO, "the wrapper measured the program");
    (took, cpu)
}

/// The wrapper's body: runs `command` and writes the CPU seconds of its
/// children to the first of `FILE-0`, `FILE-1`... that does not exist yet.
fn wrap(file: &Path, command: &[String]) {
    let status = Command::new(&command[0])
        .args(&command[1..])
        .status()
        .expect("the wrapped program starts");
    // Linux: cutime and cstime, fields 16 and 17 of /proc/self/stat, in
    // clock ticks of 1/100 s (USER_HZ), count the children waited for.
    let stat = std::fs::read_to_string("/proc/self/stat").expect("Linux's /proc");
    let after_name = &stat[stat.rfind(')').expect("the name ends") + 2..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks: u64 = fields[13].parse::<u64>().unwrap() + fields[14].parse::<u64>().unwrap();
    let seconds = ticks as f64 / 100.0;
    for n in 0.. {
        let target = PathBuf::from(format!("{}-{n}", file.display()));
        if let Ok(mut out) = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&target)
        {
            writeln!(out, "{seconds}").expect("the CPU time is written");
            break;
        }
    }
    std::process::exit(status.code().unwrap_or(1));
}

/// The median time from a save of `store` (a change of its contents) to
/// the last step's line of `lab watch`'s next run, over `saves` saves.
fn watch_saves(lab: &Path, store: &Path, progress: &Path, saves: usize) -> Duration {
    let mut watch = Command::new(lab)
        .args(["watch", "--impl", &store.to_string_lossy()])
        .args([
            "--progress",
            &progress.to_string_lossy(),
            "--color",
            "never",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("lab watch starts");
    let (lines, shown) = std::sync::mpsc::channel();
    let stdout = watch.stdout.take().expect("piped");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if line.trim_start().starts_with("step 8") && lines.send(Instant::now()).is_err() {
                break;
            }
        }
    });
    let limit = Duration::from_secs(60);
    shown
        .recv_timeout(limit)
        .expect("the first run shows its result");
    let mut times = Vec::new();
    for save in 0..saves {
        // Let the watch settle between saves, as a person's edits do.
        std::thread::sleep(Duration::from_millis(500));
        let mut text = std::fs::read_to_string(store).expect("the store is read");
        text.push_str(&format!("# save {save}\n"));
        let saved = Instant::now();
        std::fs::write(store, text).expect("the store is saved");
        let at = shown
            .recv_timeout(limit)
            .expect("the save's run shows its result");
        times.push(at - saved);
    }
    let _ = watch.kill();
    let _ = watch.wait();
    times.sort();
    times[saves / 2]
}

/// For each worksheet mutant, `cargo test --test contract --features
/// mutant-ID`, in a target folder of its own first built without features:
/// the first run rebuilds, the second is warm. The medians of both.
///
/// Cargo keeps what it built for each set of features, so a second run of
/// this bench would find every mutant built already: first, everything the
/// folder holds of this crate (not of its dependencies) is deleted, so that
/// each mutant's build compiles the crate for its features as the first
/// switch to that mutant does.
fn cargo_per_mutant() -> (Duration, Duration) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = root.join("target").join("bench-features");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let run = |feature: Option<&str>| {
        let mut command = Command::new(&cargo);
        command
            .current_dir(root)
            .env("CARGO_TARGET_DIR", &target)
            .args(["test", "--quiet", "--test", "contract"]);
        if let Some(feature) = feature {
            command.args(["--features", feature]);
        }
        let started = Instant::now();
        let output = command.output().expect("cargo runs");
        (started.elapsed(), output.status.success())
    };
    forget_the_crate(&target);
    assert!(
        run(None).1,
        "the reference must pass before mutants are timed"
    );
    let mut warm = Vec::new();
    let mut rebuild = Vec::new();
    for id in ["01", "02", "03", "04", "05", "06", "07", "08", "08b"] {
        let feature = format!("mutant-{id}");
        let (built, passed) = run(Some(&feature));
        assert!(!passed, "mutant {id} must fail the suite");
        rebuild.push(built);
        warm.push(run(Some(&feature)).0);
    }
    warm.sort();
    rebuild.sort();
    (warm[warm.len() / 2], rebuild[rebuild.len() / 2])
}

/// Deletes what cargo built of this crate in the target folder `target`
/// (its compiled units, build script, fingerprints and incremental state,
/// for every set of features), keeping the dependencies.
fn forget_the_crate(target: &Path) {
    let ours = |name: &str| {
        [
            "lease-lab-",
            "lease_lab-",
            "liblease_lab-",
            "lab-",
            "fault_worker-",
            "contract-",
        ]
        .iter()
        .any(|prefix| name.starts_with(prefix))
    };
    for folder in [".fingerprint", "build", "deps", "incremental"] {
        let Ok(entries) = std::fs::read_dir(target.join("debug").join(folder)) else {
            continue;
        };
        for entry in entries.flatten() {
            // Only the crate's own units are compiled incrementally.
            if folder != "incremental" && !ours(&entry.file_name().to_string_lossy()) {
                continue;
            }
            let path = entry.path();
            let removed = if path.is_dir() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            removed.unwrap_or_else(|error| panic!("cannot delete {}: {error}", path.display()));
        }
    }
}
