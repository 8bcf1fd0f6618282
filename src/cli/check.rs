//! `lab check`: the student's own implementation, checked by the lab's
//! suite: the contract tests of steps 1 to N run against it, and it says,
//! step by step, what passes, what fails and what is not written yet.
//! Which implementation is checked, and how far, is chosen here for
//! `lab watch` too ([`WhichArgs`], [`checked`]).
//!
//! The checks are cumulative, as the worksheet insists: the tests of every
//! earlier step stay in force at each later one. The suite's `reference`
//! tests (the Rust store's own stricter promises) run too and are shown
//! apart, beyond the worksheet; they never count against the student.

use super::args::{worker_command, SuiteArgs};
use super::exit::{say, say_line, CliError, Outcome};
use colored::Colorize;
use lease_lab::course::check::{check_shown, predicted_tests};
use lease_lab::course::chosen::{Chosen, How};
use lease_lab::course::confined;
use lease_lab::course::prediction::Score;
use lease_lab::course::progress::{self, Became, OwnPrediction};
use lease_lab::course::session::Session;
use lease_lab::report::format::CheckFormat;
use lease_lab::report::student::check::{check_text, next_text, own_prediction_text};
use lease_lab::runner::RunOptions;
use lease_lab::sandbox::{self, room, Limits};
use lease_lab::subject::Subject;
use lease_lab::terminal::fill;
use lease_lab::tutor::step::NOTHING_TO_CHECK;
use std::io::Write;
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

/// Which implementation to check, and how far.
#[derive(Debug, clap::Args)]
pub struct WhichArgs {
    /// Your implementation: a .py file, a Rust project's folder, or a
    /// command line, which becomes your current one (the others stay
    /// recorded, each with its checks). Default: your current
    /// implementation (`lab new`'s, or the last --impl). `rust` or `python`
    /// checks the lab's own stores instead, without recording anything.
    #[arg(long = "impl", value_name = "IMPL", value_parser = Subject::parse)]
    pub implementation: Option<Subject>,
    /// Check steps 1 to this one (default: all eight).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=8))]
    pub step: Option<u8>,
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
    let predicted = match &args.predict {
        Some(text) => Some(
            predicted_tests(text, through).map_err(|error| CliError::Usage(error.to_string()))?,
        ),
        None => None,
    };
    let worker = worker_command()?;
    let width = lease_lab::terminal::text_width();
    // The heading names the student's file or command.
    let heading = format!(
        "Checking {named} against the contract tests of steps 1 to {through}...",
        named = lease_lab::inert::line(&named)
    );
    let json = args.format != CheckFormat::Text;
    // The program is stopped once the report is out (`_running` goes last).
    let (report, _running) = check_shown(&run, through, &options, &worker, !json, || {
        if json {
            return Ok(());
        }
        let mut stdout = std::io::stdout().lock();
        write!(stdout, "{}\n\n", fill(&heading, width, "", "  ").bold())?;
        stdout.flush()
    })?;
    if let Some(line) = confined::memory_line() {
        eprintln!("lab check: {line}");
    }
    if json {
        if let Subject::Own(own) = &checked {
            session.record_check(&report, own);
            session.save()?;
        }
        let rendered = args
            .format
            .render(&report, &checked.describe(), through)
            .expect("a format for tools");
        say_line(&rendered)?;
        return if report.all_pass() {
            Ok(())
        } else {
            Err(CliError::Reported)
        };
    }
    say(&check_text(&report, width, args.all))?;
    let failing = report.failing_tests();
    if let Some(predicted) = &predicted {
        let predicted: Vec<String> = predicted.iter().map(|name| name.to_string()).collect();
        let score = Score::of(&predicted, &failing);
        say(&own_prediction_text(
            &score,
            failing.is_empty(),
            lease_lab::terminal::text_width(),
        ))?;
        if let Subject::Own(_) = checked {
            session.record_own_prediction(OwnPrediction {
                at: progress::now_stamp(),
                through,
                predicted,
                why: args.why.clone().unwrap_or_default(),
                failed: failing.clone(),
                score,
            });
            session.save()?;
            let recorded = format!("\nRecorded in {}.\n", progress_path.display());
            say(&lease_lab::inert::lines(&recorded))?;
        }
    } else {
        if let Subject::Own(own) = &checked {
            session.record_check(&report, own);
            session.save()?;
        }
        say(&next_text(
            &report,
            &checked.source(),
            through,
            &checked.impl_arg(),
        ))?;
    }
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

/// What `lab check` and `lab watch` run, by the one rule ([`Chosen::of`]),
/// and how their headings name it (a program of the student's set off by
/// commas). A program of the student's that
/// `--impl` names becomes their current implementation (the session
/// changed, for the caller to save); with nothing named or recorded there
/// is nothing to check, and the error says how to start.
pub fn checked(
    given: Option<&Subject>,
    session: &mut Session,
) -> Result<(Chosen, String), CliError> {
    let chosen = Chosen::of(given, session.progress());
    if chosen.how == How::NothingRecorded {
        return Err(CliError::Usage(NOTHING_TO_CHECK.into()));
    }
    // Set off by commas where it names the student's: `Checking your
    // current implementation, FILE, against ...`.
    let named = match (chosen.own(), chosen.how) {
        (Some(own), How::Named) if session.make_current(own) != Became::AlreadyCurrent => {
            format!("{}, now your current implementation,", own.describe())
        }
        (Some(own), _) => format!("your current implementation, {},", own.describe()),
        (None, _) => chosen.named(),
    };
    Ok((chosen, named))
}

#[cfg(test)]
mod tests {
    use super::*;
    use lease_lab::subject::Implementation;

    /// `--impl rust` and `--impl python` check the lab's own stores, any
    /// other text the student's, which becomes current; without `--impl`,
    /// the current one, and with none recorded, an error that says how to
    /// start one. Each heading names what runs.
    #[test]
    fn the_checked_implementation_is_the_one_named_else_the_current_one() {
        let folder = tempfile::tempdir().unwrap();
        let mut session = Session::open(&folder.path().join("progress.json")).unwrap();
        let (lab, named) =
            checked(Some(&Subject::parse(" python ").unwrap()), &mut session).unwrap();
        assert_eq!(
            (lab.subject, named.as_str()),
            (Subject::Python, "the lab's Python store")
        );
        let (rust, named) = checked(Some(&Subject::Rust), &mut session).unwrap();
        assert_eq!(
            (rust.subject, named.as_str()),
            (Subject::Rust, "the lab's Rust store")
        );
        let Err(error) = checked(None, &mut session) else {
            panic!("nothing to check");
        };
        let error = error.to_string();
        assert!(error.contains("lab new --lang python DIR"), "{error}");
        assert!(
            session.progress().implementation.is_none(),
            "a lab store is not recorded"
        );

        let own = Implementation::parse("./my-store --fast").unwrap();
        let (named_own, named) = checked(Some(&Subject::Own(own.clone())), &mut session).unwrap();
        assert_eq!(named_own.own(), Some(&own));
        assert_eq!(named, "./my-store --fast, now your current implementation,");
        assert_eq!(session.progress().implementation.as_ref(), Some(&own));
        let (current, named) = checked(None, &mut session).unwrap();
        assert_eq!(current.subject, Subject::Own(own.clone()));
        assert_eq!(named, "your current implementation, ./my-store --fast,");
        let (_, named) = checked(Some(&Subject::Own(own.clone())), &mut session).unwrap();
        assert_eq!(named, "your current implementation, ./my-store --fast,");
        let (rust, _) = checked(Some(&Subject::Rust), &mut session).unwrap();
        assert_eq!(
            rust.subject,
            Subject::Rust,
            "a store named is checked, not the current one"
        );
        assert_eq!(session.progress().implementation.as_ref(), Some(&own));
    }
}
