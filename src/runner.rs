//! Runs the contract suite against variants: every test on its own fresh
//! database, each variant in a worker process of its own, several at once.
//!
//! A worker is the `lab` binary itself started with a hidden subcommand, so
//! nothing is built at run time. Inside the worker each test runs on a
//! thread with a time limit and its panics caught; a test that outlives its
//! limit is reported as a timeout and left behind, and the worker exits when
//! its tests are done. A variant that aborts the whole process (a stack
//! overflow, say) takes down only its worker: the test that was running is
//! reported as a crash and a new worker carries on with the rest.

use crate::child_process::{LineChild, NoLine};
use crate::error::Faulted;
use crate::fault::FaultRecorder;
use crate::job_store::JobStore;
use crate::outcome::{Outcome, TestRun};
use crate::suite::{self, Bench, Case};
use crate::variant::Variant;
use std::collections::VecDeque;
use std::io::Write;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// The longest one test (or one probe) may run, unless told otherwise,
/// before it counts as a timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// How many workers run at once unless told otherwise: four per core,
/// since many tests wait (for a lock another client holds, for racing
/// claims to queue up) while others work.
pub fn default_jobs() -> usize {
    4 * thread::available_parallelism().map_or(2, usize::from)
}

/// How a run is carried out.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The longest one test may take before it counts as a timeout.
    pub timeout: Duration,
    /// Where the tests' temporary databases go.
    pub scratch: PathBuf,
    /// How many workers run at once.
    pub jobs: usize,
    /// After this many tests of one variant run out of time, the rest are
    /// not run but reported as crashes that say why: an implementation
    /// that hangs at every call would otherwise cost the time limit once
    /// per test. `None`: every test runs (the kill matrix needs them all).
    pub give_up_after_timeouts: Option<usize>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            timeout: DEFAULT_TIMEOUT,
            scratch: default_scratch(),
            jobs: default_jobs(),
            give_up_after_timeouts: None,
        }
    }
}

/// The folder for the tests' throwaway databases: `LEASE_LAB_SCRATCH` if set,
/// else the memory-backed `/dev/shm` where there is one (a suite run makes
/// thousands of small databases, and their durability is not what is being
/// tested), else the system's temporary folder.
pub fn default_scratch() -> PathBuf {
    if let Some(folder) = std::env::var_os("LEASE_LAB_SCRATCH") {
        return PathBuf::from(folder);
    }
    let shm = Path::new("/dev/shm");
    // A folder can be made in it only if it is a folder we may write to.
    if tempfile::tempdir_in(shm).is_ok() {
        return shm.to_path_buf();
    }
    std::env::temp_dir()
}

/// Runs one test against one implementation, on a new database in
/// `scratch`, on its own thread, within `timeout`.
pub fn run_case(
    case: &'static Case,
    store: Arc<dyn JobStore>,
    scratch: &Path,
    timeout: Duration,
) -> TestRun {
    let started = Instant::now();
    let folder = match tempfile::Builder::new()
        .prefix("lease-lab-")
        .tempdir_in(scratch)
    {
        Ok(folder) => folder,
        Err(error) => {
            let message = format!(
                "cannot make a temporary folder in {}: {error}",
                scratch.display()
            );
            return TestRun::new(case.name, Outcome::Crash { message }, started.elapsed());
        }
    };
    let db = folder.path().join("jobs.db");
    store.open_stderr_window();
    let (sender, receiver) = mpsc::channel();
    let tested = Arc::clone(&store);
    let spawned = thread::Builder::new()
        .name(case.name.to_string())
        .spawn(move || {
            let recorder = FaultRecorder::new(tested.as_ref());
            let bench = Bench::new(&recorder, db);
            let result = panic::catch_unwind(AssertUnwindSafe(|| (case.run)(&bench)));
            let outcome = match (recorder.first_fault(), result) {
                (Some(fault), _) => outcome_of_fault(&fault),
                (None, Ok(checked)) => Outcome::from_checked(checked),
                (None, Err(payload)) => Outcome::Crash {
                    message: format!("panicked: {}", panic_text(payload.as_ref())),
                },
            };
            let _ = sender.send(outcome);
        });
    if let Err(error) = spawned {
        let message = format!("cannot start a test thread: {error}");
        return TestRun::new(case.name, Outcome::Crash { message }, started.elapsed());
    }
    let outcome = match receiver.recv_timeout(timeout) {
        Ok(outcome) => outcome,
        Err(_) => {
            // A program's call gives up a little before the test does (see
            // `call_limit`), saying which request it left unanswered; on a
            // loaded machine the test's limit may strike first, so that
            // explanation gets a moment more to arrive.
            let explained = hang_explained(receiver.recv_timeout(grace(timeout)));
            if explained.is_none() {
                // The thread still runs and may still use the folder: keep
                // it, and stop whatever it left running in the implementation.
                let _ = folder.keep();
                store.abandon();
            }
            Outcome::Timeout {
                limit_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
                detail: explained,
            }
        }
    };
    let stderr = store.close_stderr_window(TEST_STDERR_LINES);
    TestRun::new(case.name, outcome, started.elapsed()).with_stderr(stderr)
}

/// How many of the last lines a program wrote on standard error during a
/// test its run keeps.
pub const TEST_STDERR_LINES: usize = 5;

/// How long a test that ran out of time is given more for its explanation
/// to arrive (see [`call_limit`]).
pub fn grace(test_limit: Duration) -> Duration {
    test_limit / 10
}

/// The explanation of a hang that arrived in the grace after a test's
/// limit: the fault of a program that gave no answer (a timeout with its
/// detail). Anything else that arrives late, or nothing, explains nothing.
fn hang_explained(late: Result<Outcome, mpsc::RecvTimeoutError>) -> Option<String> {
    match late {
        Ok(Outcome::Timeout { detail, .. }) => detail,
        _ => None,
    }
}

/// How long one call of a program may wait for its answer within a test's
/// time limit: a little less than the limit, so that a program that hangs
/// is caught by the call, which knows the request left unanswered and can
/// say so, before the test's own limit strikes.
pub fn call_limit(test_limit: Duration) -> Duration {
    test_limit.saturating_sub((test_limit / 10).min(Duration::from_millis(500)))
}

/// The outcome of a test during which an implementation in another
/// program (see [`crate::external`]) failed to answer: a timeout when it
/// hung, a crash saying what it did otherwise.
pub fn outcome_of_fault(fault: &Faulted) -> Outcome {
    match fault.hang {
        Some(limit) => Outcome::Timeout {
            limit_ms: u64::try_from(limit.as_millis()).unwrap_or(u64::MAX),
            detail: Some(fault.message.clone()),
        },
        None => Outcome::Crash {
            message: fault.message.clone(),
        },
    }
}

/// The message of a caught panic, whether it was a `&str` or a `String`.
pub fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|text| text.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// What a worker process writes on stdout, one JSON object per line.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(tag = "event", rename_all = "lowercase")]
pub enum WorkerEvent {
    /// A test is about to run.
    Start {
        /// Its name.
        test: String,
    },
    /// A test finished.
    Done(TestRun),
}

/// The body of a worker process: runs `tests` against `store` and writes
/// a [`WorkerEvent`] line for each start and each end to `out`.
pub fn work(
    store: Arc<dyn JobStore>,
    tests: &[&'static Case],
    options: &RunOptions,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    // A panic is an outcome here, reported as a crash: keep stderr quiet.
    panic::set_hook(Box::new(|_| {}));
    let mut timed_out: Vec<&str> = Vec::new();
    for case in tests {
        emit(
            out,
            &WorkerEvent::Start {
                test: case.name.to_string(),
            },
        )?;
        let run = if options
            .give_up_after_timeouts
            .is_some_and(|limit| timed_out.len() >= limit)
        {
            let message = format!(
                "not run: the implementation already ran out of time in {} ({}); fix that first",
                timed_out.len(),
                timed_out.join(", ")
            );
            TestRun::new(case.name, Outcome::Crash { message }, Duration::ZERO)
        } else {
            run_case(case, Arc::clone(&store), &options.scratch, options.timeout)
        };
        if matches!(run.outcome, Outcome::Timeout { .. }) {
            timed_out.push(case.name);
        }
        emit(out, &WorkerEvent::Done(run))?;
    }
    Ok(())
}

/// The hidden arguments of a worker process (`lab __worker`): which
/// variant, which tests, and how. [`WorkerArgs::to_args`] writes them for
/// the process the runner starts; clap reads them back in the worker.
#[derive(Debug, Clone, PartialEq, clap::Args)]
pub struct WorkerArgs {
    /// The variant's id.
    #[arg(long)]
    pub variant: String,
    /// For a program that speaks the lab's protocol: how to start it, as JSON.
    #[arg(long)]
    pub command: Option<String>,
    /// The tests to run, by name, in order.
    #[arg(long, value_delimiter = ',')]
    pub tests: Vec<String>,
    /// The longest one test may run, in milliseconds.
    #[arg(long)]
    pub timeout_ms: u64,
    /// Where the tests' temporary databases go.
    #[arg(long)]
    pub scratch: PathBuf,
    /// See [`RunOptions::give_up_after_timeouts`].
    #[arg(long)]
    pub give_up_after_timeouts: Option<usize>,
}

impl WorkerArgs {
    /// The arguments for `variant`, `tests` and `options`.
    pub fn new(variant: &Variant, tests: &[&'static Case], options: &RunOptions) -> WorkerArgs {
        WorkerArgs {
            variant: variant.id.clone(),
            command: variant
                .command()
                .map(|command| serde_json::to_string(command).expect("a command is JSON")),
            tests: tests.iter().map(|case| case.name.to_string()).collect(),
            timeout_ms: u64::try_from(options.timeout.as_millis()).unwrap_or(u64::MAX),
            scratch: options.scratch.clone(),
            give_up_after_timeouts: options.give_up_after_timeouts,
        }
    }

    /// The command-line form, after the worker's verb.
    pub fn to_args(&self) -> Vec<std::ffi::OsString> {
        let command = self
            .command
            .iter()
            .flat_map(|command| ["--command".into(), command.into()]);
        command
            .chain([
                "--variant".into(),
                self.variant.clone().into(),
                "--tests".into(),
                self.tests.join(",").into(),
                "--timeout-ms".into(),
                self.timeout_ms.to_string().into(),
                "--scratch".into(),
                self.scratch.clone().into(),
            ])
            .chain(
                self.give_up_after_timeouts.iter().flat_map(|limit| {
                    ["--give-up-after-timeouts".into(), limit.to_string().into()]
                }),
            )
            .collect()
    }
}

/// Why a worker process could not run its tests.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// The arguments name no such variant or test.
    #[error("{0}")]
    Usage(String),
    /// Its output could not be written.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// The body of `lab __worker`: runs the tests its arguments name against
/// its variant and writes the events to `out`.
pub fn serve(args: &WorkerArgs, out: &mut dyn Write) -> Result<(), WorkerError> {
    let variant = match &args.command {
        Some(command) => {
            let command = serde_json::from_str(command).map_err(|error| {
                WorkerError::Usage(format!("--command is not a command ({error})"))
            })?;
            Variant::program(&args.variant, command)
        }
        None => Variant::find(&args.variant)
            .ok_or_else(|| WorkerError::Usage(format!("no variant {:?}", args.variant)))?,
    };
    let cases = args
        .tests
        .iter()
        .map(|name| {
            suite::case(name).ok_or_else(|| WorkerError::Usage(format!("unknown test {name:?}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let options = RunOptions {
        timeout: Duration::from_millis(args.timeout_ms),
        scratch: args.scratch.clone(),
        jobs: 1,
        give_up_after_timeouts: args.give_up_after_timeouts,
    };
    let store = variant.open(call_limit(options.timeout));
    work(store, &cases, &options, out)?;
    Ok(())
}

fn emit(out: &mut dyn Write, event: &WorkerEvent) -> std::io::Result<()> {
    let line = serde_json::to_string(event).map_err(std::io::Error::other)?;
    writeln!(out, "{line}")?;
    out.flush()
}

/// The outcomes of the suite's tests against one variant, in suite order.
#[derive(Debug, Clone)]
pub struct VariantRun {
    /// The variant.
    pub variant: Variant,
    /// One run per test asked for.
    pub runs: Vec<TestRun>,
}

impl VariantRun {
    /// The outcome of the test with this name, if it ran.
    pub fn outcome(&self, test: &str) -> Option<&Outcome> {
        self.runs
            .iter()
            .find(|run| run.test == test)
            .map(|run| &run.outcome)
    }
}

/// How to start a worker: a program and the arguments that come before the
/// variant's own (for `lab`, its own path and the hidden `worker` verb).
#[derive(Debug, Clone)]
pub struct WorkerCommand {
    /// The program to start.
    pub program: PathBuf,
    /// The arguments before `--variant`.
    pub args: Vec<String>,
}

impl WorkerCommand {
    /// The running `lab` binary as its own worker.
    pub fn current_lab() -> std::io::Result<WorkerCommand> {
        Ok(WorkerCommand {
            program: std::env::current_exe()?,
            args: vec!["__worker".into()],
        })
    }
}

/// Runs `tests` against every variant of `variants`, `options.jobs` workers
/// at a time, and returns one [`VariantRun`] per variant, in the given order.
pub fn run_all(
    command: &WorkerCommand,
    variants: &[Variant],
    tests: &[&'static Case],
    options: &RunOptions,
) -> Vec<VariantRun> {
    let queue: Arc<Mutex<VecDeque<(usize, Variant)>>> =
        Arc::new(Mutex::new(variants.iter().cloned().enumerate().collect()));
    let results: Arc<Mutex<Vec<Option<VariantRun>>>> =
        Arc::new(Mutex::new(vec![None; variants.len()]));
    let workers = options.jobs.clamp(1, variants.len().max(1));
    thread::scope(|scope| {
        for _ in 0..workers {
            let queue = Arc::clone(&queue);
            let results = Arc::clone(&results);
            scope.spawn(move || loop {
                let next = queue.lock().expect("queue lock").pop_front();
                let Some((index, variant)) = next else { break };
                let runs = run_variant(command, &variant, tests, options);
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

/// Runs `tests` against one variant in worker processes, starting a new
/// worker after the test that brought the previous one down.
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
    let mut runs: Vec<TestRun> = Vec::with_capacity(tests.len());
    while runs.len() < tests.len() {
        let remaining = &tests[runs.len()..];
        let finished = run_worker(command, variant, remaining, options, on_run);
        let count = finished.runs.len();
        runs.extend(finished.runs);
        if count < remaining.len() {
            // The worker ended early: the test it had started is to blame.
            let culprit = remaining[count];
            let run = TestRun::new(culprit.name, finished.ending, Duration::ZERO);
            on_run(&run);
            runs.push(run);
        }
    }
    runs
}

struct WorkerResult {
    runs: Vec<TestRun>,
    ending: Outcome,
}

fn run_worker(
    command: &WorkerCommand,
    variant: &Variant,
    tests: &[&'static Case],
    options: &RunOptions,
    on_run: &mut dyn FnMut(&TestRun),
) -> WorkerResult {
    let mut process = Command::new(&command.program);
    process
        .args(&command.args)
        .args(WorkerArgs::new(variant, tests, options).to_args());
    let mut child = match LineChild::spawn(&mut process, false) {
        Ok(child) => child,
        Err(error) => {
            let message = format!(
                "cannot start a worker ({}): {error}",
                command.program.display()
            );
            return WorkerResult {
                runs: Vec::new(),
                ending: Outcome::Crash { message },
            };
        }
    };
    // A worker that stops answering (a test stuck outside its own thread)
    // is killed once every test it was given could have timed out, with one
    // more test's time (at least a second) for starting and stopping.
    let deadline = options
        .timeout
        .saturating_mul(u32::try_from(tests.len()).unwrap_or(u32::MAX))
        + options.timeout.max(Duration::from_secs(1));
    let started = Instant::now();
    let mut runs = Vec::new();
    loop {
        match child.next_line(deadline.saturating_sub(started.elapsed())) {
            Ok(line) => {
                if let Ok(WorkerEvent::Done(run)) = serde_json::from_str::<WorkerEvent>(&line) {
                    on_run(&run);
                    runs.push(run);
                }
            }
            Err(NoLine::Closed) => break,
            Err(NoLine::Timeout) => {
                child.kill();
                let limit_ms = u64::try_from(deadline.as_millis()).unwrap_or(u64::MAX);
                return WorkerResult {
                    runs,
                    ending: Outcome::Timeout {
                        limit_ms,
                        detail: None,
                    },
                };
            }
        }
    }
    let how = child.wait();
    let message = match child.stderr_tail().last() {
        Some(last_words) => format!("the worker process {how}: {last_words}"),
        None => format!("the worker process {how}"),
    };
    WorkerResult {
        runs,
        ending: Outcome::Crash { message },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::external::{FaultKind, ImplementationFault};

    #[test]
    fn each_event_is_one_json_line() {
        let mut out = Vec::new();
        emit(&mut out, &WorkerEvent::Start { test: "t".into() }).unwrap();
        emit(
            &mut out,
            &WorkerEvent::Done(TestRun::new("t", Outcome::Pass, Duration::ZERO)),
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(lines[0], r#"{"event":"start","test":"t"}"#);
        let done: WorkerEvent = serde_json::from_str(lines[1]).unwrap();
        assert!(matches!(done, WorkerEvent::Done(run) if run.outcome == Outcome::Pass));
    }

    /// Runs `run_variant` on a thread of its own; its answer, or a panic if
    /// it does not end within 20 s (it takes milliseconds).
    fn run_variant_bounded(command: WorkerCommand, tests: &'static [Case]) -> Vec<TestRun> {
        let (done, ended) = mpsc::channel();
        thread::spawn(move || {
            let tests: Vec<&'static Case> = tests.iter().collect();
            let options = RunOptions {
                timeout: Duration::from_secs(1),
                scratch: std::env::temp_dir(),
                jobs: 1,
                give_up_after_timeouts: None,
            };
            let _ = done.send(run_variant(
                &command,
                &Variant::reference(),
                &tests,
                &options,
            ));
        });
        ended
            .recv_timeout(Duration::from_secs(20))
            .expect("run_variant ends")
    }

    #[test]
    fn a_variant_whose_worker_cannot_start_ends_with_every_test_a_crash() {
        let command = WorkerCommand {
            program: "/no/such/program".into(),
            args: Vec::new(),
        };
        let runs = run_variant_bounded(command, &suite::CASES[..3]);
        let names: Vec<&str> = runs.iter().map(|run| run.test.as_str()).collect();
        let expected: Vec<&str> = suite::CASES[..3].iter().map(|case| case.name).collect();
        assert_eq!(names, expected);
        assert!(
            runs.iter()
                .all(|run| matches!(run.outcome, Outcome::Crash { .. })),
            "{runs:?}"
        );
    }

    #[test]
    fn a_variant_ends_once_its_worker_has_run_every_test() {
        let script = r#"while [ $# -gt 0 ]; do
            case "$1" in --tests) tests="$2"; shift ;; esac
            shift
        done
        for test in $(echo "$tests" | tr ',' ' '); do
            echo "{\"event\":\"start\",\"test\":\"$test\"}"
            echo "{\"event\":\"done\",\"test\":\"$test\",\"outcome\":\"pass\",\"micros\":1}"
        done"#;
        let command = WorkerCommand {
            program: "sh".into(),
            args: vec!["-c".into(), script.into(), "worker".into()],
        };
        let runs = run_variant_bounded(command, &suite::CASES[..2]);
        assert_eq!(runs.len(), 2, "{runs:?}");
        assert!(
            runs.iter().all(|run| run.outcome == Outcome::Pass),
            "{runs:?}"
        );
    }

    #[test]
    fn four_workers_run_per_core() {
        let cores = thread::available_parallelism().map_or(2, usize::from);
        assert_eq!(default_jobs(), 4 * cores);
    }

    #[test]
    fn a_call_gives_up_a_tenth_before_the_test_at_most_half_a_second_before() {
        assert_eq!(
            call_limit(Duration::from_secs(1)),
            Duration::from_millis(900)
        );
        assert_eq!(
            call_limit(Duration::from_secs(10)),
            Duration::from_millis(9500)
        );
        assert_eq!(grace(Duration::from_secs(1)), Duration::from_millis(100));
    }

    #[test]
    fn only_a_late_hang_of_a_program_explains_a_timeout() {
        let fault = |kind: FaultKind| ImplementationFault {
            implementation: "./mine".into(),
            kind,
            request: Some("{\"op\":\"init_db\"}".into()),
            stderr: Vec::new(),
        };
        let late = |fault: ImplementationFault| {
            Ok(outcome_of_fault(&Faulted {
                message: fault.to_string(),
                hang: fault.hang(),
            }))
        };
        let hang = hang_explained(late(fault(FaultKind::Hang(Duration::from_millis(900)))));
        assert!(
            hang.as_deref()
                .is_some_and(|text| text.contains("gave no answer within 900 ms")),
            "{hang:?}"
        );
        let not_json = late(fault(FaultKind::NotJson("x".into())));
        assert!(matches!(&not_json, Ok(Outcome::Crash { message }) if message.contains("./mine")));
        assert_eq!(hang_explained(not_json), None);
        assert_eq!(
            hang_explained(Ok(Outcome::Timeout {
                limit_ms: 5,
                detail: None
            })),
            None
        );
        assert_eq!(hang_explained(Ok(Outcome::Pass)), None);
        assert_eq!(hang_explained(Err(mpsc::RecvTimeoutError::Timeout)), None);
    }
}
