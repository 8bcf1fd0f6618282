//! What the sandbox costs a class's grading, and how long a class of Rust
//! projects takes from nothing built (`cargo bench --bench grading`, about
//! five minutes on two cores):
//!
//! - **20 Python submissions** (the Python store, each its own file):
//!   `lab grade --impl-dir` with each submission in its sandbox, against
//!   the same with `--no-sandbox`, run in turn, five times each; the
//!   medians and their ratio, which the lab keeps under 1.10;
//! - **10 Rust submissions** (the starter with the lab's Rust store as its
//!   `store.rs`) with nothing built: the starter's dependencies built once
//!   outside the sandboxes, then each project built and checked in its
//!   own; the lab keeps it under five minutes.
//!
//! The Rust figure uses a cache folder of its own (`LEASE_LAB_CACHE`), so
//! that it starts cold whatever was built before.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn main() {
    let lab = Path::new(env!("CARGO_BIN_EXE_lab"));
    let work = tempfile::tempdir().expect("a temporary folder");
    let python = work.path().join("python");
    std::fs::create_dir(&python).expect("the class's folder");
    for student in 1..=20 {
        std::fs::write(
            python.join(format!("student-{student:02}.py")),
            lease_lab::subject::PYTHON_SOURCE,
        )
        .expect("a submission");
    }
    let mut sandboxed = Vec::new();
    let mut unsandboxed = Vec::new();
    for _ in 0..5 {
        sandboxed.push(grade(lab, &python, &[], work.path()));
        unsandboxed.push(grade(lab, &python, &["--no-sandbox"], work.path()));
    }
    let (with, without) = (median(sandboxed), median(unsandboxed));

    let rust = work.path().join("rust");
    std::fs::create_dir(&rust).expect("the class's folder");
    for student in 1..=10 {
        let project = rust.join(format!("student-{student:02}"));
        lease_lab::subject::rust_project::write(&project, lease_lab::variant::REFERENCE_SOURCE)
            .expect("a project");
    }
    let cache = work.path().join("cache");
    let cold = {
        let started = Instant::now();
        let ran = Command::new(lab)
            .args(["grade", "--impl-dir"])
            .arg(&rust)
            .args(["--format", "csv", "--time-limit-s", "120"])
            .env("LEASE_LAB_CACHE", &cache)
            .current_dir(work.path())
            .stdin(Stdio::null())
            .output()
            .expect("lab grade runs");
        let took = started.elapsed();
        let rows = String::from_utf8_lossy(&ran.stdout);
        assert!(
            ran.status.success() && rows.lines().skip(1).all(|row| row.contains("\"8\",\"8\"")),
            "every Rust submission passes every step:\n{rows}\n{}",
            String::from_utf8_lossy(&ran.stderr)
        );
        took
    };

    println!("grading                                      median of 5");
    println!(
        "20 Python submissions, each in its sandbox   {:>8.2} s",
        with.as_secs_f64()
    );
    println!(
        "20 Python submissions, --no-sandbox          {:>8.2} s",
        without.as_secs_f64()
    );
    println!(
        "10 Rust submissions, nothing built           {:>8.2} s (one run)",
        cold.as_secs_f64()
    );
    let ratio = with.as_secs_f64() / without.as_secs_f64();
    println!();
    println!(
        "the sandbox costs {:+.1}% (bound: at most +10%): {}",
        (ratio - 1.0) * 100.0,
        verdict(ratio <= 1.10)
    );
    println!(
        "a class of 10 Rust projects from cold: {:.0} s (bound: at most 300 s): {}",
        cold.as_secs_f64(),
        verdict(cold <= Duration::from_secs(300))
    );
}

/// How long `lab grade --impl-dir class ARGS` took; it must succeed and
/// grade every submission 8 of 8.
fn grade(lab: &Path, class: &Path, args: &[&str], work: &Path) -> Duration {
    let started = Instant::now();
    let ran = Command::new(lab)
        .args(["grade", "--impl-dir"])
        .arg(class)
        .args(["--format", "csv"])
        .args(args)
        .current_dir(work)
        .stdin(Stdio::null())
        .output()
        .expect("lab grade runs");
    let took = started.elapsed();
    let rows = String::from_utf8_lossy(&ran.stdout);
    assert!(
        ran.status.success() && rows.lines().skip(1).all(|row| row.contains("\"8\",\"8\"")),
        "every submission passes every step:\n{rows}"
    );
    took
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn verdict(held: bool) -> &'static str {
    if held {
        "holds"
    } else {
        "DOES NOT HOLD"
    }
}
