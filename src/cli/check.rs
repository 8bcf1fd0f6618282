//! `lab check`: parses the arguments, runs the check in a sandbox's room
//! of its own when asked ([`enter_room`]), and checks the student's
//! implementation ([`lease_lab::tutor::check`]); a check that could not
//! run still writes an autograder's results file.

use super::args::{worker_command, SuiteArgs, WhichArgs};
use super::exit::{say_line, CliError, Outcome};
use lease_lab::course::check::predicted_tests;
use lease_lab::course::confined;
use lease_lab::report::format::CheckFormat;
use lease_lab::runner::RunOptions;
use lease_lab::sandbox::{self, room, Limits};
use lease_lab::subject::Subject;
use lease_lab::tutor::check::{self as tutor, checked, BreakPrediction, Checking};
use std::path::{Path, PathBuf};

/// `lab check`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    which: WhichArgs,
    /// After breaking your code on purpose: the tests you predict will now
    /// fail, by number or name, comma-separated (`lab tests` lists them).
    #[arg(long)]
    predict: Option<String>,
    /// With --predict: what input, error or stored state will show the break.
    #[arg(long, requires = "predict")]
    why: Option<String>,
    /// List the tests beyond the worksheet (the Rust store's own stricter
    /// promises, never counted) one by one, not only how many hold.
    #[arg(long)]
    all: bool,
    /// Output format: text, the check's result per step and per test as
    /// JSON for tools, or an autograder's results.json, Gradescope's or
    /// PrairieLearn's (the check alone: not with --predict).
    #[arg(long, value_enum, default_value_t = CheckFormat::Text, conflicts_with = "predict")]
    format: CheckFormat,
    /// Run the program, and a Rust project's build, in a sandbox of its
    /// own (bubblewrap): no network, no files but a copy of its own, caps
    /// on memory, disk, processes, CPU time and output; the lab checks it
    /// from outside. The default with --format gradescope or prairielearn.
    #[arg(long, conflicts_with = "no_sandbox")]
    sandbox: bool,
    /// Run the program as you, with your files and network, even with
    /// --format gradescope or prairielearn (for code you trust, or where
    /// no sandbox can be made).
    #[arg(long)]
    no_sandbox: bool,
    /// The room of a sandboxed check: set by the lab itself when it runs
    /// the check in its room.
    #[arg(long, hide = true)]
    room: Option<PathBuf>,
    /// The name of the sandbox's control group (`lab grade` gives one, to
    /// remove it if the check is stopped).
    #[arg(long, hide = true)]
    cgroup_name: Option<String>,
    #[command(flatten)]
    run: SuiteArgs,
}

impl Args {
    /// Whether the program runs in a sandbox: when asked, and by default
    /// for an autograder's format.
    fn sandboxed(&self) -> bool {
        self.sandbox
            || (!self.no_sandbox
                && matches!(
                    self.format,
                    CheckFormat::Gradescope | CheckFormat::PrairieLearn
                ))
    }
}

/// `lab check`. Sandboxed, it runs again in a room of its own
/// ([`enter_room`]), where it checks a copy of the implementation
/// ([`confined::prepare`]). For an autograder's format, a check that
/// cannot run still writes the results file, scoring nothing and saying
/// why.
pub fn check(args: &Args, progress_path: &Path) -> Outcome {
    let outcome = check_or_fail(args, progress_path);
    // An error with a message is a check that did not run (a program
    // that did not greet, a build that failed, no sandbox): a failing
    // check has said what it found already.
    if let Some(rendered) = outcome
        .as_ref()
        .err()
        .and_then(CliError::message)
        .and_then(|why| args.format.not_checked(why))
    {
        say_line(&rendered)?;
    }
    outcome
}

/// [`check`], without the results file of a check that could not run.
fn check_or_fail(args: &Args, progress_path: &Path) -> Outcome {
    if args.sandboxed() && args.room.is_none() {
        return enter_room();
    }
    // However the check ends, the sandbox's control group goes with it.
    let _released = Released;
    let mut session = super::session(progress_path)?;
    let (chosen, named) = checked(args.which.implementation.as_ref(), &mut session)?;
    // A program named is current from now on, whether or not it builds.
    session.save()?;
    let checked = chosen.subject.clone();
    let (run, options) = in_room_or_not(args, &checked)?;
    let through = args.which.step.unwrap_or(8);
    let prediction = match &args.predict {
        Some(text) => Some(BreakPrediction {
            tests: predicted_tests(text, through)
                .map_err(|error| CliError::Usage(error.to_string()))?,
            why: args.why.clone().unwrap_or_default(),
        }),
        None => None,
    };
    let worker = worker_command()?;
    let checking = Checking {
        checked: &checked,
        named: &named,
        run: &run,
        options: &options,
        worker: &worker,
        through,
        format: args.format,
        all: args.all,
        prediction,
    };
    let report = tutor::check(&mut session, &checking)?;
    if report.all_pass() {
        Ok(())
    } else {
        Err(CliError::Reported)
    }
}

/// What a check runs, and how: `checked` as it is, or in the room of a
/// sandboxed check, a copy of it confined there ([`confined::prepare`])
/// with its databases in the room.
///
/// Errors: the copy cannot be made, or `checked` is one of the lab's own
/// stores, which a sandbox is not for (a usage error).
fn in_room_or_not(args: &Args, checked: &Subject) -> Result<(Subject, RunOptions), CliError> {
    match (&args.room, checked) {
        (Some(room), Subject::Own(own)) => {
            let confined =
                confined::prepare(room, own, Limits::default(), args.cgroup_name.as_deref())
                    .map_err(CliError::Failed)?;
            let options = RunOptions {
                scratch: confined.scratch,
                ..args.run.options()
            };
            Ok((Subject::Own(confined.implementation), options))
        }
        (Some(_), lab) => Err(CliError::Usage(format!(
            "--sandbox runs a program of your own; {} is the lab's own",
            lab.describe()
        ))),
        (None, _) => Ok((checked.clone(), args.run.options())),
    }
}

/// Removes the sandbox's control group when it goes
/// ([`sandbox::release_confinement`]).
struct Released;

impl Drop for Released {
    fn drop(&mut self) {
        sandbox::release_confinement();
    }
}

/// Runs this very check again in a room of its own (see
/// [`lease_lab::sandbox::room`]), once a sandbox is known to be possible
/// here, and ends as it ends: what it had to say, it said.
fn enter_room() -> Outcome {
    sandbox::probe().map_err(|error| {
        CliError::Failed(format!(
            "cannot run the program in a sandbox: {error}; or pass --no-sandbox to run it as you, with your files and network"
        ))
    })?;
    let lab = std::env::current_exe().map_err(|error| {
        CliError::Failed(format!(
            "cannot find the lab binary to check in a sandbox: {error}"
        ))
    })?;
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let status = room::run_in_room(Limits::default().disk, &lab, &args)
        .map_err(|error| CliError::Failed(error.to_string()))?;
    match status.code() {
        Some(0) => Ok(()),
        Some(code) => Err(CliError::Exited(u8::try_from(code).unwrap_or(u8::MAX))),
        None => Err(CliError::Failed(format!(
            "the check in its room ended: {status}"
        ))),
    }
}
