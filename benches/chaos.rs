//! `lab chaos`'s throughput: checked calls a second, the run and both of
//! its checks (the named properties and the model check) together, for
//! the Rust store's reference and the Python store's with 8 workers and
//! every fault on (`cargo bench --bench chaos`, about a minute on two
//! cores). Each figure is the median of five seeds. The promise: at least
//! 1,000 checked calls a second for the Rust store.

use lease_lab::chaos::judge::Judgement;
use lease_lab::chaos::plan::{Faults, Settings};
use lease_lab::chaos::run::{run, Workers};
use lease_lab::runner::WorkerCommand;
use lease_lab::subject::Subject;
use std::path::PathBuf;
use std::time::Instant;

fn main() {
    let lab = WorkerCommand {
        program: PathBuf::from(env!("CARGO_BIN_EXE_lab")),
        args: Vec::new(),
    };
    let scratch = lease_lab::runner::default_scratch();
    let python = Subject::Python
        .variants(std::path::Path::new("no-mutants-folder"))
        .expect("the Python store's variants")
        .into_iter()
        .next()
        .expect("its reference");
    let subjects = [
        ("Rust store", lease_lab::variant::Variant::reference()),
        ("Python store", python),
    ];
    println!(
        "{:<40} {:>12} {:>10}",
        "8 workers, 2000 calls, every fault", "calls/s", "of which"
    );
    for (name, variant) in subjects {
        let workers = Workers::of(&variant, &lab);
        let mut rates: Vec<(f64, f64)> = (1..=5)
            .map(|seed| {
                let settings = Settings {
                    workers: 8,
                    operations: 2000,
                    seed,
                    faults: Faults::all(false),
                };
                let started = Instant::now();
                let record = run(&workers, &settings, &scratch).expect("a run");
                let ran = started.elapsed();
                let judged = Judgement::of(record);
                let total = started.elapsed().as_secs_f64();
                assert!(
                    !judged.failed(),
                    "the {name}'s reference broke the contract"
                );
                (2000.0 / total, ran.as_secs_f64() / total)
            })
            .collect();
        rates.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (rate, running) = rates[2];
        println!(
            "{:<40} {rate:>12.0} {:>9.0}% running",
            format!("{name}, checked"),
            running * 100.0
        );
    }
}
