//! The schedule: which variants run, how many workers at once, and how
//! many processes of a program a check uses.

use super::*;
use crate::outcome::TestRun;
use crate::suite::Case;
use crate::variant::Variant;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// Runs `tests` against every variant of `variants`, `options.jobs` workers
/// at a time, and returns one [`VariantRun`] per variant, in the given order.
pub fn run_all(
    command: &WorkerCommand,
    variants: &[Variant],
    tests: &[&'static Case],
    options: &RunOptions,
) -> Vec<VariantRun> {
    let plans = variants
        .iter()
        .map(|variant| (variant.clone(), tests.to_vec()))
        .collect();
    run_planned(command, plans, options)
}

/// A variant and the tests to run against it.
pub type Plan = (Variant, Vec<&'static Case>);

/// Runs each variant of `plans` against its own tests, `options.jobs`
/// workers at a time, and returns one [`VariantRun`] per variant, in the
/// given order. A variant with no tests to run is not started at all.
pub fn run_planned(
    command: &WorkerCommand,
    plans: Vec<Plan>,
    options: &RunOptions,
) -> Vec<VariantRun> {
    let count = plans.len();
    let queue: Arc<Mutex<VecDeque<(usize, Plan)>>> =
        Arc::new(Mutex::new(plans.into_iter().enumerate().collect()));
    let results: Arc<Mutex<Vec<Option<VariantRun>>>> = Arc::new(Mutex::new(vec![None; count]));
    let workers = options.jobs.clamp(1, count.max(1));
    thread::scope(|scope| {
        for _ in 0..workers {
            let queue = Arc::clone(&queue);
            let results = Arc::clone(&results);
            scope.spawn(move || loop {
                let next = queue.lock().expect("queue lock").pop_front();
                let Some((index, (variant, tests))) = next else {
                    break;
                };
                let runs = if tests.is_empty() {
                    Vec::new()
                } else {
                    run_variant(command, &variant, &tests, options)
                };
                results.lock().expect("results lock")[index] = Some(VariantRun { variant, runs });
            });
        }
    });
    let results = Arc::try_unwrap(results)
        .expect("workers are done")
        .into_inner()
        .expect("results lock");
    results
        .into_iter()
        .map(|run| run.expect("every variant ran"))
        .collect()
}

/// Runs `tests` against one variant: a compiled one in worker processes,
/// starting a new worker after the test that brought the previous one
/// down; a program from this process (see [`run_program`]).
pub fn run_variant(
    command: &WorkerCommand,
    variant: &Variant,
    tests: &[&'static Case],
    options: &RunOptions,
) -> Vec<TestRun> {
    run_variant_showing(command, variant, tests, options, &mut |_| {})
}

/// [`run_variant`], handing each run to `on_run` as soon as it is known,
/// in the order of `tests`.
pub fn run_variant_showing(
    command: &WorkerCommand,
    variant: &Variant,
    tests: &[&'static Case],
    options: &RunOptions,
    on_run: &mut dyn FnMut(&TestRun),
) -> Vec<TestRun> {
    if variant.command().is_some() {
        let store = variant.open(call_limit(options.timeout));
        return run_program(&[store], tests, options, on_run);
    }
    let mut runs: Vec<TestRun> = Vec::with_capacity(tests.len());
    while runs.len() < tests.len() {
        let remaining = &tests[runs.len()..];
        let finished = run_worker(command, variant, remaining, options, on_run);
        let count = finished.runs.len();
        runs.extend(finished.runs);
        if count < remaining.len() {
            // The worker ended early: the test it had started is to blame.
            let culprit = remaining[count];
            let run = TestRun::new(culprit.name, finished.ending, Duration::ZERO)
                .with_operations(every_operation());
            on_run(&run);
            runs.push(run);
        }
    }
    runs
}

/// How many processes of a program run a check's tests side by side: one
/// per core, at most four. While one process waits for an answer
/// to travel, or for a lock, another works; each more process costs a
/// start of the program.
pub fn check_lanes() -> usize {
    std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(MOST_LANES)
}

/// See [`check_lanes`].
const MOST_LANES: usize = 4;
