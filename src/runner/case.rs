//! One test against one store: on a thread of its own with a time limit,
//! its panics caught, its database fresh; and several tests on the lanes of
//! this process (a worker's, or a program's processes).

use super::*;
use crate::error::Faulted;
use crate::fault::FaultRecorder;
use crate::job_store::JobStore;
use crate::operation::NAMES;
use crate::outcome::{Outcome, TestRun, NOT_RUN};
use crate::suite::{self, Bench, Case};
use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, Once, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

/// What a test's thread hands back: the test's outcome and the operations
/// it called.
type Ended = (Outcome, Vec<String>);

/// A test to run on a [`TestThread`], and where its end goes.
type TestBody = (Box<dyn FnOnce() -> Ended + Send>, mpsc::Sender<Ended>);

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
        // The folder is the test's: it goes when the test ends, however
        // late (a test past its limit may still be using it).
        let _folder = folder;
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
                // Stop whatever the test left running in the implementation.
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
        .with_raised(store.take_raised())
        .with_unanswered(store.take_unanswered())
        .with_operations(operations)
}

/// Every operation's name: what a test whose run did not say what it
/// called (it did not end, or was not run) counts as having called.
pub(super) fn every_operation() -> Vec<String> {
    NAMES.iter().map(|name| name.to_string()).collect()
}

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
    // At least a second: the explanation may wait for a program's dumps
    // of its stacks (see LineChild::dump_stacks).
    (test_limit / 10).max(Duration::from_secs(1))
}

/// The explanation of a hang that arrived in the grace after a test's
/// limit: the fault of a program that gave no answer (a timeout with its
/// detail). Anything else that arrives late, or nothing, explains nothing.
pub(super) fn hang_explained(late: Result<Outcome, mpsc::RecvTimeoutError>) -> Option<String> {
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

    /// Whether the run gave up: [`RunOptions::give_up_after_timeouts`]
    /// tests ran out of time.
    fn given_up(&self, options: &RunOptions) -> bool {
        options
            .give_up_after_timeouts
            .is_some_and(|limit| self.timed_out.len() >= limit)
    }

    /// Why a test is not run once the run gave up.
    fn not_run(&self, limit: Duration) -> String {
        format!(
            "{NOT_RUN}the implementation ran out of time ({} a test) in {}; fix that first",
            crate::fault::seconds(limit),
            self.timed_out.join(", ")
        )
    }
}

/// Runs `tests` against the implementation behind `stores`, from this
/// process: one lane per store, each lane running one test at a time and
/// taking the next test not yet taken, so that the lanes share the work;
/// the tests that wait on purpose ([`suite::waits`]) are taken first.
/// Each test's start and end go to `events` with the test's place in
/// `tests`; once they are not received, no more tests start.
///
/// After [`RunOptions::give_up_after_timeouts`] timeouts in all, the run
/// gives up: the other lanes' programs are stopped at once (a hang costs
/// one time limit, however many lanes met it), and every test not run, or
/// stopped in the middle, is reported as not run ([`Outcome::not_run`]),
/// never as a failure of its own.
pub(super) fn run_tests(
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
    let not_run = |case: &'static Case, why: String| {
        TestRun::new(case.name, Outcome::Crash { message: why }, Duration::ZERO)
            .with_operations(every_operation())
    };
    let lane = |store: &Arc<dyn JobStore>| loop {
        let (at, given_up) = {
            let mut lanes = lanes.lock().unwrap_or_else(PoisonError::into_inner);
            if lanes.stopped || lanes.next == tests.len() {
                return;
            }
            let at = order[lanes.next];
            lanes.next += 1;
            let given_up = lanes
                .given_up(options)
                .then(|| lanes.not_run(options.timeout));
            let started = WorkerEvent::Start {
                test: tests[at].name.to_string(),
            };
            lanes.tell(at, started);
            (at, given_up)
        };
        let case = tests[at];
        let ran = given_up.is_none();
        let run = match given_up {
            Some(why) => not_run(case, why),
            None => run_case(case, Arc::clone(store), &options.scratch, options.timeout),
        };
        let mut lanes = lanes.lock().unwrap_or_else(PoisonError::into_inner);
        let run = match &run.outcome {
            // A test the lab stopped when another gave up did not fail on
            // its own.
            Outcome::Crash { .. } | Outcome::Timeout { .. } if ran && lanes.given_up(options) => {
                not_run(case, lanes.not_run(options.timeout))
            }
            Outcome::Timeout { .. } => {
                lanes.timed_out.push(case.name);
                if lanes.given_up(options) {
                    for other in stores.iter().filter(|other| !Arc::ptr_eq(other, store)) {
                        other.abandon();
                    }
                }
                run
            }
            _ => run,
        };
        lanes.tell(at, WorkerEvent::Done(Box::new(run)));
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
                let run = *run;
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
pub(super) fn quiet_test_panics() {
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
