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
use crate::operation::NAMES;
use crate::outcome::{Outcome, TestRun};
use crate::suite::{self, Bench, Case};
use crate::variant::Variant;
use std::cell::Cell;
use std::collections::VecDeque;
use std::io::Write;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, Once, PoisonError};
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
    let tested = Arc::clone(&store);
    let body = move || {
        // A test that set this thread's busy timeout leaves it to the next.
        tested.set_thread_busy_timeout(None);
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
        (outcome, recorder.operations())
    };
    let thread = TestThread::take().and_then(|mut thread| Ok((thread.run(body)?, thread)));
    let (receiver, thread) = match thread {
        Ok(started) => started,
        Err(error) => {
            let message = format!("cannot start a test thread: {error}");
            return TestRun::new(case.name, Outcome::Crash { message }, started.elapsed());
        }
    };
    let (outcome, operations) = match receiver.recv_timeout(timeout) {
        Ok(ended) => {
            thread.give_back();
            ended
        }
        Err(_) => {
            // A program's call gives up a little before the test does (see
            // `call_limit`), saying which request it left unanswered; on a
            // loaded machine the test's limit may strike first, so that
            // explanation gets a moment more to arrive.
            let late = receiver.recv_timeout(grace(timeout));
            let explained = hang_explained(late.map(|(outcome, _)| outcome));
            if explained.is_none() {
                // The thread still runs and may still use the folder: keep
                // it, and stop whatever it left running in the implementation.
                let _ = folder.keep();
                store.abandon();
            }
            let outcome = Outcome::Timeout {
                limit_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
                detail: explained,
            };
            // What a test that did not end would still have called is not
            // known: it counts as calling every operation.
            (outcome, every_operation())
        }
    };
    // A fault that came after the test's last answer is the test's too.
    let outcome = match (store.fault_between_calls(), outcome) {
        (Some(fault), Outcome::Pass | Outcome::Fail { .. }) => outcome_of_fault(&fault),
        (_, outcome) => outcome,
    };
    let stderr = store.close_stderr_window(TEST_STDERR_LINES);
    TestRun::new(case.name, outcome, started.elapsed())
        .with_stderr(stderr)
        .with_operations(operations)
}

/// Every operation's name: what a test whose run did not say what it
/// called (it did not end, or was not run) counts as having called.
fn every_operation() -> Vec<String> {
    NAMES.iter().map(|name| name.to_string()).collect()
}

/// What a test's thread hands back: the test's outcome and the operations
/// it called.
type Ended = (Outcome, Vec<String>);

/// A test to run on a [`TestThread`], and where its end goes.
type TestBody = (Box<dyn FnOnce() -> Ended + Send>, mpsc::Sender<Ended>);

/// A thread that runs tests one at a time for the thread that asks, kept
/// from one test to the next: a run of the kill matrix makes thousands of
/// tests, and starting a thread for each cost more than many of them do.
///
/// A test that outlives its limit keeps its thread: that thread is never
/// given another test (the asking thread drops it and starts a new one),
/// so a late test cannot delay or disturb the ones after it.
struct TestThread {
    tests: mpsc::Sender<TestBody>,
}

thread_local! {
    /// This thread's test thread, free for the next test.
    static FREE_TEST_THREAD: std::cell::RefCell<Option<TestThread>> =
        const { std::cell::RefCell::new(None) };
}

impl TestThread {
    /// This thread's free test thread, or a new one.
    fn take() -> std::io::Result<TestThread> {
        match FREE_TEST_THREAD.with(|free| free.borrow_mut().take()) {
            Some(thread) => Ok(thread),
            None => TestThread::start(),
        }
    }

    /// Runs `body` on the test thread; its end arrives on the receiver.
    fn run(
        &mut self,
        body: impl FnOnce() -> Ended + Send + 'static,
    ) -> std::io::Result<mpsc::Receiver<Ended>> {
        let (ended, receiver) = mpsc::channel();
        if let Err(mpsc::SendError(test)) = self.tests.send((Box::new(body), ended)) {
            // Its thread is gone (a panic outside a test's own catch):
            // the test goes to a new one.
            *self = TestThread::start()?;
            self.tests
                .send(test)
                .map_err(|_| std::io::Error::other("a new test thread ended at once"))?;
        }
        Ok(receiver)
    }

    /// The test ended in time: the thread is free for this thread's next.
    fn give_back(self) {
        FREE_TEST_THREAD.with(|free| *free.borrow_mut() = Some(self));
    }

    fn start() -> std::io::Result<TestThread> {
        let (tests, bodies) = mpsc::channel::<TestBody>();
        thread::Builder::new()
            .name("lease-lab test".into())
            .spawn(move || {
                IN_A_TEST.with(|flag| flag.set(true));
                // Ends once the asking thread drops its end of the channel.
                for (body, ended) in bodies {
                    let _ = ended.send(body());
                }
            })?;
        Ok(TestThread { tests })
    }
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
    let (sender, events) = mpsc::channel();
    thread::scope(|scope| {
        scope.spawn(|| run_tests(&[store], tests, options, sender));
        // Once the events cannot be written, dropping their receiver stops
        // the tests.
        events
            .into_iter()
            .try_for_each(|(_, event)| emit(out, &event))
    })
}

/// What the lanes of [`run_tests`] share: the next test to run, the tests
/// that ran out of time, and where the events go.
struct Lanes {
    next: usize,
    timed_out: Vec<&'static str>,
    events: mpsc::Sender<(usize, WorkerEvent)>,
    stopped: bool,
}

impl Lanes {
    /// Sends `event` of test number `at`; stops the lanes once no one
    /// receives the events any more.
    fn tell(&mut self, at: usize, event: WorkerEvent) {
        if !self.stopped && self.events.send((at, event)).is_err() {
            self.stopped = true;
        }
    }
}

/// Runs `tests` against the implementation behind `stores`, from this
/// process: one lane per store, each lane running one test at a time and
/// taking the next test not yet taken, so that the lanes share the work;
/// the tests that wait on purpose ([`suite::waits`]) are taken first.
/// Each test's start and end go to `events` with the test's place in
/// `tests`; once they are not received, no more tests start. After
/// [`RunOptions::give_up_after_timeouts`] timeouts in all, the rest are
/// reported as crashes that say why, without being run.
fn run_tests(
    stores: &[Arc<dyn JobStore>],
    tests: &[&'static Case],
    options: &RunOptions,
    events: mpsc::Sender<(usize, WorkerEvent)>,
) {
    // The tests that wait go first: started last, one of them would be the
    // tail that every other lane has finished before.
    let (waiting, rest): (Vec<usize>, Vec<usize>) =
        (0..tests.len()).partition(|&at| suite::waits(tests[at].name));
    let order: Vec<usize> = waiting.into_iter().chain(rest).collect();
    let lanes = Mutex::new(Lanes {
        next: 0,
        timed_out: Vec::new(),
        events,
        stopped: false,
    });
    let lane = |store: &Arc<dyn JobStore>| loop {
        let (at, given_up) = {
            let mut lanes = lanes.lock().unwrap_or_else(PoisonError::into_inner);
            if lanes.stopped || lanes.next == tests.len() {
                return;
            }
            let at = order[lanes.next];
            lanes.next += 1;
            let given_up = options
                .give_up_after_timeouts
                .is_some_and(|limit| lanes.timed_out.len() >= limit)
                .then(|| lanes.timed_out.clone());
            let started = WorkerEvent::Start {
                test: tests[at].name.to_string(),
            };
            lanes.tell(at, started);
            (at, given_up)
        };
        let case = tests[at];
        let run = match given_up {
            Some(timed_out) => {
                let message = format!(
                    "not run: the implementation already ran out of time in {} ({}); fix that first",
                    timed_out.len(),
                    timed_out.join(", ")
                );
                TestRun::new(case.name, Outcome::Crash { message }, Duration::ZERO)
                    .with_operations(every_operation())
            }
            None => run_case(case, Arc::clone(store), &options.scratch, options.timeout),
        };
        let mut lanes = lanes.lock().unwrap_or_else(PoisonError::into_inner);
        if matches!(run.outcome, Outcome::Timeout { .. }) {
            lanes.timed_out.push(case.name);
        }
        lanes.tell(at, WorkerEvent::Done(run));
    };
    thread::scope(|scope| {
        for store in stores {
            scope.spawn(|| lane(store));
        }
    });
}

/// Runs `tests` against a program that speaks the lab's protocol, from
/// this process, through `lanes`: the program's store, or several stores
/// of the same program, each running its own process of it, to run that
/// many tests at once. Each run is handed to `on_run` as soon as it and
/// every test before it have ended, so in the order of `tests`.
///
/// A program runs in a process of its own already, so nothing it does can
/// bring the lab down, and a worker process would only add a start (and a
/// second start of the program, whose greeting the lab has heard): a store
/// keeps its running program from one test, and one run, to the next.
/// Each test runs in one process from its start to its end, so what that
/// process writes on standard error meanwhile is the test's, and the
/// racers of a race are that process's threads alone.
pub fn run_program(
    lanes: &[Arc<dyn JobStore>],
    tests: &[&'static Case],
    options: &RunOptions,
    on_run: &mut dyn FnMut(&TestRun),
) -> Vec<TestRun> {
    quiet_test_panics();
    let (sender, events) = mpsc::channel();
    let mut runs: Vec<Option<TestRun>> = vec![None; tests.len()];
    let mut shown = 0;
    thread::scope(|scope| {
        scope.spawn(|| run_tests(lanes, tests, options, sender));
        for (at, event) in events {
            if let WorkerEvent::Done(run) = event {
                runs[at] = Some(run);
            }
            while let Some(run) = runs.get(shown).and_then(Option::as_ref) {
                on_run(run);
                shown += 1;
            }
        }
    });
    runs.into_iter().flatten().collect()
}

thread_local! {
    /// Whether this thread runs a test (see [`quiet_test_panics`]).
    static IN_A_TEST: Cell<bool> = const { Cell::new(false) };
}

/// From now on, a panic on a test's thread is not printed: it is an
/// outcome, reported as a crash. A panic anywhere else still is, by the
/// hook that was set before.
fn quiet_test_panics() {
    static QUIET: Once = Once::new();
    QUIET.call_once(|| {
        let before = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !IN_A_TEST.with(Cell::get) {
                before(info);
            }
        }));
    });
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
    /// The outcome of the test with this name, if it ran (or was not
    /// covered, and has the reference's: see [`TestRun::not_covered`]).
    pub fn outcome(&self, test: &str) -> Option<&Outcome> {
        self.test_run(test).map(|run| &run.outcome)
    }

    /// The run of the test with this name, if any.
    pub fn test_run(&self, test: &str) -> Option<&TestRun> {
        self.runs.iter().find(|run| run.test == test)
    }

    /// How many of its tests were not run because they cannot run the
    /// mutant's change.
    pub fn not_covered(&self) -> usize {
        self.runs.iter().filter(|run| run.not_covered).count()
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

    /// The reference store, counting its calls; or, with `stall`, one
    /// that sleeps that long at every call.
    struct Counting {
        calls: std::sync::atomic::AtomicUsize,
        stall: Option<Duration>,
    }

    impl JobStore for Counting {
        fn call(
            &self,
            db: &Path,
            operation: &crate::operation::Operation,
        ) -> crate::Result<crate::operation::Answer> {
            self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            if let Some(stall) = self.stall {
                thread::sleep(stall);
            }
            crate::variant::Variant::reference()
                .open(DEFAULT_TIMEOUT)
                .call(db, operation)
        }
    }

    fn counting(stall: Option<Duration>) -> Arc<Counting> {
        Arc::new(Counting {
            calls: Default::default(),
            stall,
        })
    }

    /// Two lanes share the tests, and the runs come back in suite order.
    #[test]
    fn lanes_share_the_tests_and_the_runs_come_in_order() {
        let lanes = [counting(None), counting(None)];
        let stores: Vec<Arc<dyn JobStore>> = lanes
            .iter()
            .map(|lane| Arc::clone(lane) as Arc<dyn JobStore>)
            .collect();
        let tests: Vec<&'static Case> = suite::CASES[..12].iter().collect();
        let options = RunOptions {
            scratch: std::env::temp_dir(),
            ..RunOptions::default()
        };
        let mut shown = Vec::new();
        let runs = run_program(&stores, &tests, &options, &mut |run| {
            shown.push(run.test.clone())
        });
        let names: Vec<&str> = tests.iter().map(|case| case.name).collect();
        assert_eq!(shown, names, "handed on in suite order");
        let ran: Vec<&str> = runs.iter().map(|run| run.test.as_str()).collect();
        assert_eq!(ran, names);
        assert!(
            runs.iter().all(|run| run.outcome == Outcome::Pass),
            "{runs:?}"
        );
        for lane in &lanes {
            assert!(
                lane.calls.load(std::sync::atomic::Ordering::SeqCst) > 0,
                "each lane ran tests"
            );
        }
    }

    /// After the allowed timeouts, counted over all lanes, no more tests
    /// run: each is a crash that says why.
    #[test]
    fn lanes_give_up_together_after_the_allowed_timeouts() {
        let stores: Vec<Arc<dyn JobStore>> = (0..2)
            .map(|_| counting(Some(Duration::from_millis(400))) as Arc<dyn JobStore>)
            .collect();
        let tests: Vec<&'static Case> = suite::CASES[..6].iter().collect();
        let options = RunOptions {
            timeout: Duration::from_millis(100),
            scratch: std::env::temp_dir(),
            jobs: 1,
            give_up_after_timeouts: Some(2),
        };
        let runs = run_program(&stores, &tests, &options, &mut |_| {});
        let timeouts = runs
            .iter()
            .filter(|run| matches!(run.outcome, Outcome::Timeout { .. }))
            .count();
        assert!((2..=3).contains(&timeouts), "{runs:?}");
        let given_up: Vec<&TestRun> = runs
            .iter()
            .filter(|run| matches!(&run.outcome, Outcome::Crash { message } if message.starts_with("not run")))
            .collect();
        assert_eq!(given_up.len(), 6 - timeouts, "{runs:?}");
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
