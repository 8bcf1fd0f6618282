//! How long the kill matrix takes in the lab, against the approach it
//! replaces: building and testing each variant with
//! `cargo test --features mutant-ID`.
//!
//! Run with `cargo bench --bench matrix`. It prints a table: the lab's matrix
//! over the worksheet's mutants and over every mutant (median of several
//! runs), and the total time of `cargo test --test contract --features
//! mutant-ID` for each worksheet mutant in turn, each one an incremental
//! rebuild plus a suite run, as an instructor would do it by hand.
//! `LEASE_LAB_BENCH_ALL_FEATURES=1` times the cargo approach over every
//! mutant instead (about ten minutes on two cores), and
//! `LEASE_LAB_BENCH_SKIP_CARGO=1` leaves it out (the lab's figures alone).
//!
//! It also times the suite against the Python store and its eight
//! mutants (the worksheet's literal fragments), each a `python3` process
//! speaking the lab's protocol: the target is under 5 s on two cores.

use lease_lab::matrix::Matrix;
use lease_lab::mutant::MutantKind;
use lease_lab::runner::{RunOptions, WorkerCommand};
use lease_lab::subject::Subject;
use lease_lab::suite;
use lease_lab::variant::Variant;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// One line of the table: what was timed, and how long it took.
fn row(label: String, took: Duration) {
    println!("{label:<64} {:>8.2}", took.as_secs_f64());
}

fn main() {
    // `cargo bench` passes `--bench`; any other argument is a filter we do not use.
    let worker = WorkerCommand {
        program: env!("CARGO_BIN_EXE_lab").into(),
        args: vec!["__worker".into()],
    };
    let options = RunOptions::default();
    let all = Variant::all_compiled();
    let worksheet: Vec<Variant> = all
        .iter()
        .filter(|variant| {
            variant
                .mutant
                .as_ref()
                .is_none_or(|m| m.spec.kind == MutantKind::Worksheet)
        })
        .cloned()
        .collect();

    let lab_worksheet = median_of(5, || time_matrix(&worker, &worksheet, &options));
    let lab_all = median_of(5, || time_matrix(&worker, &all, &options));
    let python = Subject::Python
        .built_in_variants()
        .expect("the Python store and its mutants can be written");
    let lab_python = median_of(5, || time_matrix(&worker, &python, &options));

    let every_feature = std::env::var_os("LEASE_LAB_BENCH_ALL_FEATURES").is_some();
    let chosen: Vec<&str> = all
        .iter()
        .filter_map(|variant| variant.mutant.as_deref())
        .filter(|mutant| every_feature || mutant.spec.kind == MutantKind::Worksheet)
        .map(|mutant| mutant.spec.id.as_str())
        .collect();
    let cargo = if std::env::var_os("LEASE_LAB_BENCH_SKIP_CARGO").is_some() {
        None
    } else {
        Some(time_cargo_features(&chosen))
    };

    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    println!(
        "\nkill matrix, {} suite tests, {} workers on {cores} cores",
        suite::CASES.len(),
        options.jobs
    );
    println!("{:<64} {:>8}", "approach", "seconds");
    row(
        format!(
            "lab matrix, reference + {} worksheet mutants (median of 5)",
            worksheet.len() - 1
        ),
        lab_worksheet,
    );
    row(
        format!(
            "lab matrix, reference + all {} mutants (median of 5)",
            all.len() - 1
        ),
        lab_all,
    );
    row(
        format!(
            "lab matrix --impl python, reference + {} mutants (median of 5)",
            python.len() - 1
        ),
        lab_python,
    );
    let Some((cargo_total, per_variant)) = cargo else {
        return;
    };
    row(
        format!(
            "cargo test --features mutant-ID, {} mutants in turn",
            chosen.len()
        ),
        cargo_total,
    );
    for (id, took) in per_variant {
        row(format!("  of which mutant {id}"), took);
    }
}

fn time_matrix(worker: &WorkerCommand, variants: &[Variant], options: &RunOptions) -> Duration {
    let tests = suite::CASES.iter().collect();
    let started = Instant::now();
    let matrix = Matrix::build(worker, variants, tests, options);
    let took = started.elapsed();
    assert!(
        matrix.problems().is_empty(),
        "the matrix must be sound to be worth timing: {:?}",
        matrix.problems()
    );
    took
}

fn median_of(runs: usize, mut measure: impl FnMut() -> Duration) -> Duration {
    let mut times: Vec<Duration> = (0..runs).map(|_| measure()).collect();
    times.sort();
    times[runs / 2]
}

/// Times `cargo test --test contract --features mutant-ID` for each id, in a
/// target folder of its own that has first been built without features, so
/// each run is the incremental rebuild an instructor would wait for.
fn time_cargo_features(ids: &[&str]) -> (Duration, Vec<(String, Duration)>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = root.join("target").join("bench-features");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let run = |features: Option<&str>| {
        let mut command = Command::new(&cargo);
        command
            .current_dir(root)
            .env("CARGO_TARGET_DIR", &target)
            .args(["test", "--quiet", "--test", "contract"]);
        if let Some(feature) = features {
            command.args(["--features", feature]);
        }
        let started = Instant::now();
        let output = command.output().expect("cargo runs");
        (started.elapsed(), output.status.success())
    };
    let (_, baseline_passes) = run(None);
    assert!(
        baseline_passes,
        "the reference must pass before mutants are timed"
    );
    let mut per_variant = Vec::new();
    for id in ids {
        let (took, passed) = run(Some(&format!("mutant-{id}")));
        assert!(!passed, "mutant {id} must fail the suite");
        per_variant.push((id.to_string(), took));
    }
    let total = per_variant.iter().map(|(_, took)| *took).sum();
    (total, per_variant)
}
