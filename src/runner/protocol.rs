//! The worker protocol, both sides: the `lab __worker` process that runs
//! tests and writes a JSON line for each start and end ([`WorkerEvent`]),
//! and the parent that starts it, reads those lines and starts another
//! when a worker dies.

use super::*;
use crate::child_process::{LineChild, NoLine};
use crate::command::CommandError;
use crate::job_store::JobStore;
use crate::outcome::{Outcome, TestRun};
use crate::suite::{self, Case};
use crate::variant::Variant;
use std::io::Write;
use std::panic::{self};
use std::path::PathBuf;
use std::process::Command;
use std::sync::mpsc;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// What a worker process writes on stdout, one JSON object per line.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(tag = "event", rename_all = "lowercase")]
pub enum WorkerEvent {
    /// A test is about to run.
    Start {
        /// Its name.
        test: String,
    },
    /// A test finished (boxed: a run is much larger than a start).
    Done(Box<TestRun>),
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
    /// The variant is the store on PostgreSQL's, on the server whose
    /// connection string is in `LEASE_LAB_PG` (see
    /// [`Variant::find_on_the_server_of_the_environment`]).
    #[arg(long)]
    pub on_server: bool,
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
            on_server: variant.server().is_some(),
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
            .chain(self.on_server.then(|| "--on-server".into()))
            .collect()
    }
}

/// The body of `lab __worker`: runs the tests its arguments name against
/// its variant and writes the events to `out`.
pub fn serve(args: &WorkerArgs, out: &mut dyn Write) -> Result<(), CommandError> {
    let variant = match &args.command {
        Some(command) => {
            let command = serde_json::from_str(command).map_err(|error| {
                CommandError::Usage(format!("--command is not a command ({error})"))
            })?;
            Variant::program(&args.variant, command)
        }
        None if args.on_server => Variant::find_on_the_server_of_the_environment(&args.variant)
            .map_err(CommandError::Usage)?,
        None => Variant::find(&args.variant)
            .ok_or_else(|| CommandError::Usage(format!("no variant {:?}", args.variant)))?,
    };
    let cases = args
        .tests
        .iter()
        .map(|name| {
            suite::case(name).ok_or_else(|| CommandError::Usage(format!("unknown test {name:?}")))
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

pub(super) fn emit(out: &mut dyn Write, event: &WorkerEvent) -> std::io::Result<()> {
    let line = serde_json::to_string(event).map_err(std::io::Error::other)?;
    writeln!(out, "{line}")?;
    out.flush()
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

pub(super) struct WorkerResult {
    pub(super) runs: Vec<TestRun>,
    pub(super) ending: Outcome,
}

pub(super) fn run_worker(
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
    if let Some(server) = variant.server() {
        process.env(crate::pg_server::DSN_VARIABLE, server.dsn());
    }
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
                    let run = *run;
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
