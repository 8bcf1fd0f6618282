//! The student's own implementation, checked by the lab's suite: `lab new`
//! writes a starter (Python or Rust) with the protocol done and the eight
//! operations to write; `lab check` runs the contract tests of steps 1 to N
//! against it and says, step by step, what passes, what fails and what is
//! not written yet; `lab watch` checks again on every save.
//!
//! The checks are cumulative, as the worksheet insists: the tests of every
//! earlier step stay in force at each later one. The suite's `reference`
//! tests (the Rust store's own stricter promises) run too and are shown
//! apart, beyond the worksheet; they never count against the student.

use super::args::{worker_command, Implementation, SuiteArgs};
use super::outcome::{say, CliError, Outcome};
use super::prediction::{comparison, parse_selection, Score};
use super::progress::{self, OwnPrediction, Progress, StepCheck, StepStatus};
use super::rust_project;
use colored::Colorize;
use lease_lab::course::starter::{self, OPERATIONS};
use lease_lab::exercise;
use lease_lab::external::ExternalStore;
use lease_lab::family::Family;
use lease_lab::outcome::Outcome as TestOutcome;
use lease_lab::runner::{self, RunOptions, VariantRun, WorkerCommand};
use lease_lab::suite::{self, Case, Tag};
use lease_lab::terminal::{failure_text, fill};
use lease_lab::variant::Variant;
use notify_debouncer_mini::notify::RecursiveMode;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The languages of the starters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Language {
    /// One file, standard library only, in the worksheet's idiom.
    Python,
    /// A small cargo project on rusqlite.
    Rust,
}

/// `lab new`'s arguments.
#[derive(Debug, clap::Args)]
pub struct NewArgs {
    /// The language to write it in.
    #[arg(long, value_enum)]
    lang: Language,
    /// The folder to write it into (made if missing; a file of yours there is never overwritten).
    dir: PathBuf,
}

/// `lab check`'s arguments.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    #[command(flatten)]
    which: WhichArgs,
    /// After breaking your code on purpose: the tests you predict will now
    /// fail, by number or name, comma-separated (`lab tests` lists them).
    #[arg(long)]
    predict: Option<String>,
    /// With --predict: what input, error or stored state will show the break.
    #[arg(long, requires = "predict")]
    why: Option<String>,
    #[command(flatten)]
    run: SuiteArgs,
}

/// `lab watch`'s arguments.
#[derive(Debug, clap::Args)]
pub struct WatchArgs {
    #[command(flatten)]
    which: WhichArgs,
    #[command(flatten)]
    run: SuiteArgs,
}

/// Which implementation to check, and how far.
#[derive(Debug, clap::Args)]
pub struct WhichArgs {
    /// Your implementation: a .py file, a Rust project's folder, or a
    /// command line; recorded for the next checks. Default: the one recorded
    /// (by `lab new`, or an earlier --impl). `rust` or `python` checks the
    /// lab's own stores instead, without recording anything.
    #[arg(long = "impl", value_name = "IMPL")]
    implementation: Option<String>,
    /// Check steps 1 to this one (default: all eight).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=8))]
    step: Option<u8>,
}

/// `lab new`: writes a starter and records it as the implementation that
/// `lab check` and `lab watch` run.
pub fn new(args: &NewArgs, progress_path: &Path) -> Outcome {
    let unwritable = |error: std::io::Error| {
        CliError::Failed(format!(
            "cannot write the starter in {}: {error}",
            args.dir.display()
        ))
    };
    let (implementation, start) = match args.lang {
        Language::Python => {
            std::fs::create_dir_all(&args.dir).map_err(unwritable)?;
            let file = args.dir.join("store.py");
            starter::write_once(&file, &starter::python()).map_err(unwritable)?;
            let implementation =
                Implementation::parse(&file.display().to_string()).map_err(CliError::Failed)?;
            (implementation, file)
        }
        Language::Rust => {
            rust_project::write(&args.dir, rust_project::STUBS).map_err(unwritable)?;
            let implementation =
                Implementation::parse(&args.dir.display().to_string()).map_err(CliError::Failed)?;
            (implementation, args.dir.join("src").join("store.rs"))
        }
    };
    progress::update(progress_path, |progress| {
        progress.implementation = Some(implementation.clone());
    })?;
    say(&format!(
        "Wrote {}: the protocol is done, the eight operations are yours to write,\neach with the worksheet's contract as its documentation.\n\nRecorded in {} as your implementation, so:\n  {}   runs the contract tests of every step against it\n  {}   runs them again each time you save\n\nStart with step 1, {}, in {}.\n",
        implementation.describe(),
        progress_path.display(),
        "lab check".bold(),
        "lab watch".bold(),
        OPERATIONS[0],
        start.display()
    ))
}

/// The implementation a check is about.
enum Checked {
    /// The student's own.
    Own(Implementation),
    /// One of the lab's references (`--impl rust` or `python`).
    Lab(Family),
}

impl Checked {
    /// The implementation `--impl` names, else the one recorded.
    fn chosen(given: Option<&str>, progress: &Progress) -> Result<Checked, CliError> {
        match given.map(str::trim) {
            Some("rust") => Ok(Checked::Lab(Family::Rust)),
            Some("python") => Ok(Checked::Lab(Family::Python)),
            Some(text) => Implementation::parse(text)
                .map(Checked::Own)
                .map_err(CliError::Usage),
            None => progress
                .implementation
                .clone()
                .map(Checked::Own)
                .ok_or_else(|| {
                    CliError::Usage(
                        "there is no implementation to check yet: start one with `lab new --lang python DIR` (or --lang rust), or name yours with --impl FILE-FOLDER-OR-COMMAND".into(),
                    )
                }),
        }
    }

    /// How it is named in messages.
    fn describe(&self) -> String {
        match self {
            Checked::Own(own) => own.describe(),
            Checked::Lab(family) => format!("the lab's {} store", family.name()),
        }
    }

    /// Where its operations are written.
    fn source(&self) -> String {
        match self {
            Checked::Own(own) => own.source(),
            Checked::Lab(family) => family.name(),
        }
    }

    /// The implementation, ready to run (a Rust project built).
    fn variant(&self) -> Result<Variant, CliError> {
        match self {
            Checked::Own(own) => own.variant(),
            Checked::Lab(family) => family.reference().map_err(|error| {
                CliError::Failed(format!(
                    "cannot prepare the {} store: {error}",
                    family.name()
                ))
            }),
        }
    }
}

/// How a check shows a step's status.
fn status_label(status: StepStatus) -> String {
    match status {
        StepStatus::Passed => "passed     ".green().to_string(),
        StepStatus::Failing => "failing    ".red().bold().to_string(),
        StepStatus::NotImplemented => "not written".yellow().to_string(),
    }
}

/// One step of a check: its contract tests and what they gave.
#[derive(Debug, Clone)]
pub struct StepResult {
    /// The step, 1 to 8.
    pub step: u8,
    /// What its tests made of it.
    pub status: StepStatus,
    /// How many contract tests it has.
    pub tests: usize,
    /// The tests that did not pass, with what happened.
    pub failures: Vec<(&'static str, TestOutcome)>,
}

/// What a check found: the contract tests of steps 1 to N, step by step,
/// and the reference tests of those steps apart.
#[derive(Debug, Clone)]
pub struct CheckReport {
    /// The steps, in order.
    pub steps: Vec<StepResult>,
    /// The reference tests that ran, and those of them that did not pass.
    pub beyond: (usize, Vec<&'static str>),
}

impl CheckReport {
    /// The report of a run of `cases_through(through)` against one
    /// implementation.
    pub fn of(run: &VariantRun, through: u8) -> CheckReport {
        let failed =
            |case: &&&'static Case| run.outcome(case.name).is_some_and(TestOutcome::catches);
        let steps = (1..=through)
            .map(|step| {
                let cases: Vec<&'static Case> = suite::CASES
                    .iter()
                    .filter(|case| case.step == step && case.tag == Tag::Contract)
                    .collect();
                let failures: Vec<(&'static str, TestOutcome)> = cases
                    .iter()
                    .filter(failed)
                    .map(|case| (case.name, run.outcome(case.name).cloned().expect("it ran")))
                    .collect();
                let status = if failures.is_empty() {
                    StepStatus::Passed
                } else if failures
                    .iter()
                    .all(|(_, outcome)| outcome.not_implemented().is_some())
                {
                    StepStatus::NotImplemented
                } else {
                    StepStatus::Failing
                };
                StepResult {
                    step,
                    status,
                    tests: cases.len(),
                    failures,
                }
            })
            .collect();
        let beyond: Vec<&'static Case> = suite::cases_through(through)
            .filter(|case| case.tag == Tag::Reference)
            .collect();
        let beyond_failing = beyond.iter().filter(failed).map(|case| case.name).collect();
        CheckReport {
            steps,
            beyond: (beyond.len(), beyond_failing),
        }
    }

    /// Whether every step checked passes.
    pub fn all_pass(&self) -> bool {
        self.steps
            .iter()
            .all(|step| step.status == StepStatus::Passed)
    }

    /// The contract tests that did not pass, in suite order.
    pub fn failing_tests(&self) -> Vec<String> {
        self.steps
            .iter()
            .flat_map(|step| step.failures.iter().map(|(name, _)| name.to_string()))
            .collect()
    }

    /// The first step that does not pass.
    fn first_open(&self) -> Option<&StepResult> {
        self.steps
            .iter()
            .find(|step| step.status != StepStatus::Passed)
    }
}

/// How many failures of one step a check shows in full.
const SHOWN_FAILURES: usize = 2;

/// After how many tests that ran out of time a check stops running the
/// rest: an implementation that hangs at every call would otherwise cost
/// the time limit once per test.
const GIVE_UP_AFTER_TIMEOUTS: usize = 2;

/// Starts a program once to hear its greeting, before a check: one that
/// cannot start or greets wrongly fails the check at once, saying so,
/// rather than failing every test the same way.
pub fn hear_greeting(variant: &Variant, limit: Duration) -> Result<(), CliError> {
    match variant.command() {
        Some(command) => ExternalStore::new(command.clone(), limit)
            .name()
            .map(|_| ())
            .map_err(|fault| CliError::Failed(fault.to_string())),
        None => Ok(()),
    }
}

/// Runs the tests of steps 1 to `through` (contract and reference) against
/// `variant` in a worker process, as every suite run goes.
pub fn run_check(
    worker: &WorkerCommand,
    variant: &Variant,
    through: u8,
    options: &RunOptions,
) -> CheckReport {
    let options = RunOptions {
        give_up_after_timeouts: Some(GIVE_UP_AFTER_TIMEOUTS),
        ..options.clone()
    };
    let tests: Vec<&'static Case> = suite::cases_through(through).collect();
    let run = runner::run_all(worker, std::slice::from_ref(variant), &tests, &options)
        .into_iter()
        .next()
        .expect("one variant, one run");
    CheckReport::of(&run, through)
}

/// The check step by step: each step passed, failing (with the call, the
/// expected answer and what came back, for the first failures) or not
/// written, then the reference tests apart.
pub fn check_text(report: &CheckReport, width: usize) -> String {
    let mut out = String::new();
    // A stub's answer is shown once: the steps after it that fail on the
    // same stub wait for it.
    let mut last_said = "";
    for step in &report.steps {
        let title = exercise::step_title(step.step);
        let detail = match step.status {
            StepStatus::Passed => format!(" ({} tests)", step.tests).dimmed().to_string(),
            StepStatus::Failing => {
                format!(": {} of {} tests fail", step.failures.len(), step.tests)
            }
            StepStatus::NotImplemented => String::new(),
        };
        writeln!(
            out,
            "  step {}  {}  {title}{detail}",
            step.step,
            status_label(step.status)
        )
        .unwrap();
        match step.status {
            StepStatus::Passed => {}
            StepStatus::NotImplemented => {
                let said = step.failures[0].1.not_implemented().unwrap_or_default();
                if said != last_said {
                    let line = format!(
                        "it answers: {}",
                        if said.is_empty() {
                            "not implemented"
                        } else {
                            said
                        }
                    );
                    writeln!(
                        out,
                        "{}",
                        fill(
                            &line,
                            width,
                            "                       ",
                            "                       "
                        )
                        .dimmed()
                    )
                    .unwrap();
                    last_said = said;
                }
            }
            StepStatus::Failing => out.push_str(&failures_text(step, width)),
        }
    }
    let (ran, failing) = &report.beyond;
    if *ran > 0 {
        // Which of them do not hold is worth reading once the contract does.
        let which = if failing.is_empty() || !report.all_pass() {
            String::new()
        } else {
            format!("; not: {}", failing.join(", "))
        };
        let line = format!(
            "Beyond the worksheet (the Rust store's own stricter promises, not counted): {} of {ran} hold{which}.",
            ran - failing.len(),
        );
        write!(out, "\n{}\n", fill(&line, width, "", "  ").dimmed()).unwrap();
    }
    out
}

/// The first failures of a failing step, in full, and the names of the rest.
fn failures_text(step: &StepResult, width: usize) -> String {
    let mut out = String::new();
    let shown = step
        .failures
        .iter()
        .filter(|(_, outcome)| outcome.not_implemented().is_none())
        .take(SHOWN_FAILURES);
    for (name, outcome) in shown {
        writeln!(out, "      {}", name.bold()).unwrap();
        match outcome {
            TestOutcome::Fail {
                check,
                expected,
                actual,
            } => out.push_str(&failure_text(check, expected, actual, 8, width)),
            other => {
                let reason = other.reason().unwrap_or_default();
                out.push_str(&fill(&reason, width, "        ", "        "));
                out.push('\n');
            }
        }
    }
    let rest: Vec<&str> = step
        .failures
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| !out.contains(name))
        .collect();
    if !rest.is_empty() {
        let line = format!("also failing: {}", rest.join(", "));
        out.push_str(&fill(&line, width, "      ", "        "));
        out.push('\n');
    }
    out
}

/// What to do next after a check.
pub fn next_text(report: &CheckReport, source: &str, through: u8) -> String {
    let line = match report.first_open() {
        Some(open) if open.status == StepStatus::NotImplemented => {
            // The stub that answered names its own step: a step's tests
            // may call the operations of later steps (step 1's call
            // `enqueue` and `claim` to see that init_db keeps the fence).
            let stub = open.failures[0].1.not_implemented().and_then(stub_step);
            let step = stub.unwrap_or(open.step);
            let also = match stub {
                Some(stub) if stub != open.step => {
                    format!("; step {}'s tests need it too", open.step)
                }
                _ => String::new(),
            };
            format!(
                "Next: write step {step}, {} (its contract is its documentation in {source}){also}. Then `lab check` again, or keep `lab watch` running.",
                OPERATIONS[usize::from(step) - 1]
            )
        }
        Some(open) => format!(
            "Next: make step {} pass: the failures above give the call, the contract's answer and yours. Every earlier step's tests stay in force, as the worksheet insists.",
            open.step
        ),
        None if through < 8 => format!(
            "Steps 1 to {through} pass. Next: step {}, `lab check --step {}` (or `lab check` for all eight).",
            through + 1,
            through + 1
        ),
        None => "All eight steps pass. The worksheet's last instruction: break your code on purpose (a boundary comparison, the cleanup code), predict which tests fail, and let the lab score it: `lab check --predict TEST,TEST --why \"...\"`.".to_string(),
    };
    format!(
        "\n{}\n",
        fill(&line, lease_lab::terminal::text_width(), "", "").bold()
    )
}

/// The step a stub's answer names: the starters' stubs answer `step N: ...`.
fn stub_step(message: &str) -> Option<u8> {
    let number: String = message
        .strip_prefix("step ")?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    number.parse().ok().filter(|step| (1..=8).contains(step))
}

/// `lab check`.
pub fn check(args: &CheckArgs, progress_path: &Path) -> Outcome {
    let record = progress::load_reporting(progress_path)?;
    let checked = Checked::chosen(args.which.implementation.as_deref(), &record)?;
    let through = args.which.step.unwrap_or(8);
    let predicted = match &args.predict {
        Some(text) => Some(predicted_tests(text, through)?),
        None => None,
    };
    let worker = worker_command()?;
    let report = check_once(&checked, through, &args.run.options(), &worker)?;
    let failing = report.failing_tests();
    if let Some(predicted) = &predicted {
        let predicted: Vec<String> = predicted.iter().map(|name| name.to_string()).collect();
        let score = Score::of(&predicted, &failing);
        say(&comparison(&score))?;
        if failing.is_empty() {
            say(&format!(
                "\n{}\n",
                fill(
                    "No test fails: either your change does what the code did before (an equivalent change), or the suite misses it. Which input, error or stored state would show it? That test is missing.",
                    lease_lab::terminal::text_width(),
                    "",
                    ""
                )
            ))?;
        }
        if let Checked::Own(_) = checked {
            progress::update(progress_path, |progress| {
                progress.own_predictions.push(OwnPrediction {
                    at: progress::now_stamp(),
                    through,
                    predicted,
                    why: args.why.clone().unwrap_or_default(),
                    failed: failing.clone(),
                    score,
                });
            })?;
            say(&format!("\nRecorded in {}.\n", progress_path.display()))?;
        }
    } else {
        if let Checked::Own(own) = &checked {
            record_checks(progress_path, own, &report)?;
        }
        say(&next_text(&report, &checked.source(), through))?;
    }
    if report.all_pass() {
        Ok(())
    } else {
        Err(CliError::Reported)
    }
}

/// The tests a `--predict` names, numbered as `lab tests` numbers them:
/// contract tests of steps 1 to `through`, since only those judge a
/// student's implementation.
fn predicted_tests(text: &str, through: u8) -> Result<Vec<&'static str>, CliError> {
    let menu: Vec<&'static Case> = suite::cases_through(through).collect();
    let chosen =
        parse_selection(text, &menu).map_err(|problems| CliError::Usage(problems.join("; ")))?;
    let beyond: Vec<&str> = chosen
        .iter()
        .copied()
        .filter(|name| suite::case(name).is_some_and(|case| case.tag == Tag::Reference))
        .collect();
    if !beyond.is_empty() {
        return Err(CliError::Usage(format!(
            "{} beyond the worksheet (the Rust store's own promises, marked * by `lab tests`), which do not judge your implementation: predict among the contract tests",
            if beyond.len() == 1 {
                format!("{} is a test", beyond[0])
            } else {
                format!("{} are tests", beyond.join(", "))
            }
        )));
    }
    Ok(chosen)
}

/// Prepares the implementation, runs the check and shows it.
fn check_once(
    checked: &Checked,
    through: u8,
    options: &RunOptions,
    worker: &WorkerCommand,
) -> Result<CheckReport, CliError> {
    let variant = checked.variant()?;
    hear_greeting(&variant, options.timeout)?;
    let width = lease_lab::terminal::text_width();
    let heading = format!(
        "Checking {} against the contract tests of steps 1 to {through}...",
        checked.describe()
    );
    say(&format!("{}\n\n", fill(&heading, width, "", "  ").bold()))?;
    let report = run_check(worker, &variant, through, options);
    say(&check_text(&report, width))?;
    Ok(report)
}

/// Records each step's result of a check of the student's implementation,
/// and the implementation, in the progress file.
pub fn record_checks(
    progress_path: &Path,
    own: &Implementation,
    report: &CheckReport,
) -> Result<(), CliError> {
    progress::update(progress_path, |progress| {
        progress.implementation = Some(own.clone());
        let at = progress::now_stamp();
        for step in &report.steps {
            progress.checks.insert(
                step.step.to_string(),
                StepCheck {
                    at: at.clone(),
                    status: step.status,
                    failing: step
                        .failures
                        .iter()
                        .map(|(name, _)| name.to_string())
                        .collect(),
                },
            );
        }
    })
}

/// How long `lab watch` waits after a change for the next one, so that an
/// editor's save (often several writes and a rename) checks once.
const SETTLE: Duration = Duration::from_millis(300);

/// `lab watch`: a check now, and again after each save of the
/// implementation's files, until interrupted.
pub fn watch(args: &WatchArgs, progress_path: &Path) -> Outcome {
    let record = progress::load_reporting(progress_path)?;
    let checked = Checked::chosen(args.which.implementation.as_deref(), &record)?;
    let Checked::Own(own) = &checked else {
        return Err(CliError::Usage(
            "the lab's own stores do not change: watch your implementation (--impl FILE-OR-FOLDER, or the one `lab new` recorded)".into(),
        ));
    };
    let watched = own.watched();
    if watched.is_empty() {
        return Err(CliError::Usage(format!(
            "cannot tell which files to watch in `{}`: give --impl the .py file or the Rust project's folder",
            own.describe()
        )));
    }
    let through = args.which.step.unwrap_or(8);
    let options = args.run.options();
    let worker = worker_command()?;
    let (sender, changes) = std::sync::mpsc::channel();
    let mut debouncer = notify_debouncer_mini::new_debouncer(SETTLE, sender)
        .map_err(|error| CliError::Failed(format!("cannot watch files: {error}")))?;
    for path in &watched {
        // A file is watched through its folder: editors often save by
        // writing a new file and renaming it over the old one.
        let (target, mode) = if path.is_dir() {
            (path.as_path(), RecursiveMode::Recursive)
        } else {
            (
                path.parent().unwrap_or(Path::new(".")),
                RecursiveMode::NonRecursive,
            )
        };
        debouncer.watcher().watch(target, mode).map_err(|error| {
            CliError::Failed(format!("cannot watch {}: {error}", target.display()))
        })?;
    }
    let names: Vec<String> = watched
        .iter()
        .map(|path| path.display().to_string())
        .collect();
    say(&format!(
        "{}\n\n",
        format!(
            "Watching {}: a check runs after every save (Ctrl-C stops).",
            names.join(", ")
        )
        .dimmed()
    ))?;
    let mut last_seen: Vec<u64> = watched.iter().map(|path| fingerprint(path)).collect();
    watch_round(&checked, own, through, &options, &worker, progress_path)?;
    for batch in changes {
        batch.map_err(|error| CliError::Failed(format!("watching failed: {error}")))?;
        // The watcher also reports files being opened and read (the check
        // itself reads them) and files beside a watched one: only a change
        // of what the watched files hold counts.
        let now_seen: Vec<u64> = watched.iter().map(|path| fingerprint(path)).collect();
        let Some(changed) = (0..watched.len()).find(|&at| now_seen[at] != last_seen[at]) else {
            continue;
        };
        last_seen = now_seen;
        say(&format!(
            "\n{}\n\n",
            format!(
                "{} changed at {}: checking again",
                watched[changed].display(),
                progress::now_stamp()
            )
            .dimmed()
        ))?;
        watch_round(&checked, own, through, &options, &worker, progress_path)?;
    }
    Ok(())
}

/// A hash of what a watched file holds (a folder: its files, recursively,
/// with their names): it changes exactly when a file is saved with other
/// contents, added, removed or renamed.
fn fingerprint(path: &Path) -> u64 {
    fn visit(path: &Path, hasher: &mut std::collections::hash_map::DefaultHasher) {
        use std::hash::Hash;
        path.hash(hasher);
        if path.is_dir() {
            let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
                .into_iter()
                .flatten()
                .filter_map(|entry| entry.ok().map(|entry| entry.path()))
                .collect();
            entries.sort();
            for entry in entries {
                visit(&entry, hasher);
            }
        } else {
            std::fs::read(path).ok().hash(hasher);
        }
    }
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    visit(path, &mut hasher);
    std::hash::Hasher::finish(&hasher)
}

/// One check of `lab watch`: a failure to build or run is shown, and the
/// watch goes on; only a closed output ends it.
fn watch_round(
    checked: &Checked,
    own: &Implementation,
    through: u8,
    options: &RunOptions,
    worker: &WorkerCommand,
    progress_path: &Path,
) -> Outcome {
    match check_once(checked, through, options, worker) {
        Ok(report) => {
            record_checks(progress_path, own, &report)?;
            say(&next_text(&report, &checked.source(), through))
        }
        Err(CliError::ClosedPipe) => Err(CliError::ClosedPipe),
        Err(error) => say(&format!(
            "{}\n",
            format!(
                "lab watch: {}",
                error.message().unwrap_or("the check failed")
            )
            .red()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lease_lab::outcome::TestRun;

    /// `--impl rust` and `--impl python` check the lab's own stores, any
    /// other text the student's; without `--impl`, the one recorded, and
    /// with none recorded, an error that says how to start one.
    #[test]
    fn the_checked_implementation_is_the_one_named_else_the_one_recorded() {
        let progress = Progress::default();
        let lab = Checked::chosen(Some(" python "), &progress).unwrap();
        assert_eq!(
            (lab.describe(), lab.source()),
            ("the lab's python store".to_string(), "python".to_string())
        );
        let rust = Checked::chosen(Some("rust"), &progress).unwrap();
        assert_eq!(rust.describe(), "the lab's rust store");
        let Err(error) = Checked::chosen(None, &progress) else {
            panic!("nothing to check");
        };
        let error = error.to_string();
        assert!(error.contains("lab new --lang python DIR"), "{error}");
        let own = Implementation::parse("./my-store --fast").unwrap();
        let recorded = Progress {
            implementation: Some(own.clone()),
            ..Progress::default()
        };
        let checked = Checked::chosen(None, &recorded).unwrap();
        assert_eq!(checked.describe(), own.describe());
        assert_eq!(checked.source(), own.source());
    }

    fn run_with(outcomes: &[(&str, TestOutcome)]) -> VariantRun {
        VariantRun {
            variant: Variant::reference(),
            runs: suite::cases_through(8)
                .map(|case| {
                    let outcome = outcomes
                        .iter()
                        .find(|(name, _)| *name == case.name)
                        .map_or(TestOutcome::Pass, |(_, outcome)| outcome.clone());
                    TestRun::new(case.name, outcome, Duration::ZERO)
                })
                .collect(),
        }
    }

    /// The name of the `n`-th test (from 0) of `step` with `tag`.
    fn nth_of(step: u8, tag: Tag, n: usize) -> &'static str {
        suite::CASES
            .iter()
            .filter(|case| case.step == step && case.tag == tag)
            .nth(n)
            .expect("a test of that step")
            .name
    }

    fn first_of(step: u8, tag: Tag) -> &'static str {
        nth_of(step, tag, 0)
    }

    fn stub(step: u8) -> TestOutcome {
        TestOutcome::Fail {
            check: "a call".into(),
            expected: "an answer (the call is valid)".into(),
            actual: format!("error not-implemented: step {step} is not written yet"),
        }
    }

    #[test]
    fn each_step_is_passed_failing_or_not_written_and_reference_tests_are_apart() {
        let wrong = TestOutcome::Fail {
            check: "enqueue(\"j\") again".into(),
            expected: "false".into(),
            actual: "true".into(),
        };
        let run = run_with(&[
            (first_of(2, Tag::Contract), wrong),
            (first_of(4, Tag::Contract), stub(4)),
            (
                first_of(1, Tag::Reference),
                TestOutcome::Crash {
                    message: "x".into(),
                },
            ),
        ]);
        let report = CheckReport::of(&run, 5);
        let statuses: Vec<StepStatus> = report.steps.iter().map(|step| step.status).collect();
        use StepStatus::*;
        assert_eq!(statuses, [Passed, Failing, Passed, NotImplemented, Passed]);
        assert!(!report.all_pass());
        assert_eq!(
            report.failing_tests(),
            [first_of(2, Tag::Contract), first_of(4, Tag::Contract)]
        );
        assert_eq!(report.beyond.1, [first_of(1, Tag::Reference)]);
        colored::control::set_override(false);
        let text = check_text(&report, 100);
        assert!(text.contains("  step 2  failing"), "{text}");
        assert!(text.contains("expected: false"), "{text}");
        assert!(
            text.contains("it answers: step 4 is not written yet"),
            "{text}"
        );
        assert!(text.contains("not counted"), "{text}");
        let next = next_text(&report, "store.py", 5);
        assert!(next.contains("make step 2 pass"), "{next}");
    }

    /// A failing step shows its first two failures in full and names the
    /// rest; the reference tests that do not hold are named once the
    /// contract holds, and not mentioned when none ran.
    #[test]
    fn a_check_shows_two_failures_in_full_and_names_the_rest() {
        colored::control::set_override(false);
        let crash = || TestOutcome::Crash {
            message: "it broke".into(),
        };
        let [a, b, c] = [0, 1, 2].map(|n| nth_of(4, Tag::Contract, n));
        let report = CheckReport::of(&run_with(&[(a, crash()), (b, crash()), (c, crash())]), 4);
        let text = check_text(&report, 200);
        assert!(text.contains(&format!("also failing: {c}\n")), "{text}");
        assert!(!text.contains(&format!("also failing: {a}")), "{text}");
        let one = CheckReport::of(&run_with(&[(a, crash())]), 4);
        assert!(!check_text(&one, 200).contains("also failing"));

        let reference = first_of(1, Tag::Reference);
        let failing = run_with(&[(a, crash()), (reference, crash())]);
        let text = check_text(&CheckReport::of(&failing, 4), 200);
        assert!(text.contains("Beyond the worksheet"), "{text}");
        assert!(!text.contains("; not: "), "the contract first: {text}");
        let holding = CheckReport::of(&run_with(&[(reference, crash())]), 4);
        let text = check_text(&holding, 200);
        let ran = holding.beyond.0;
        assert!(
            text.contains(&format!("{} of {ran} hold; not: {reference}.", ran - 1)),
            "{text}"
        );
        let none_failing = check_text(&CheckReport::of(&run_with(&[]), 4), 200);
        assert!(
            none_failing.contains(&format!("{ran} of {ran} hold.")),
            "{none_failing}"
        );
        let none_ran = CheckReport {
            beyond: (0, Vec::new()),
            ..holding
        };
        assert!(!check_text(&none_ran, 200).contains("Beyond the worksheet"));
    }

    #[test]
    fn the_fingerprint_changes_with_contents_and_names_but_not_with_reading() {
        let folder = tempfile::tempdir().unwrap();
        let file = folder.path().join("store.py");
        let src = folder.path().join("src");
        std::fs::create_dir(&src).unwrap();
        std::fs::write(&file, "a").unwrap();
        std::fs::write(src.join("store.rs"), "b").unwrap();
        let (first, first_src) = (fingerprint(&file), fingerprint(&src));
        let _ = std::fs::read(&file).unwrap();
        assert_eq!(fingerprint(&file), first, "reading changes nothing");
        std::fs::write(&file, "a2").unwrap();
        assert_ne!(fingerprint(&file), first, "a save with other contents");
        assert_eq!(fingerprint(&src), first_src, "a file outside the folder");
        std::fs::write(src.join("other.rs"), "").unwrap();
        let second_src = fingerprint(&src);
        assert_ne!(second_src, first_src, "a new file in a watched folder");
        std::fs::write(src.join("other.rs"), "x").unwrap();
        assert_ne!(fingerprint(&src), second_src, "a file in the folder saved");
    }

    #[test]
    fn the_advice_follows_the_first_open_step() {
        colored::control::set_override(false);
        let stubs = run_with(
            &suite::CASES
                .iter()
                .filter(|case| case.tag == Tag::Contract)
                .map(|case| (case.name, stub(case.step)))
                .collect::<Vec<_>>(),
        );
        let report = CheckReport::of(&stubs, 8);
        assert!(report
            .steps
            .iter()
            .all(|step| step.status == StepStatus::NotImplemented));
        let next = next_text(&report, "store.py", 8);
        assert!(next.contains("write step 1, init_db"), "{next}");
        assert!(!next.contains("tests need it too"), "{next}");
        let waiting = run_with(
            &suite::CASES
                .iter()
                .filter(|case| case.tag == Tag::Contract)
                .map(|case| (case.name, stub(case.step.max(2))))
                .collect::<Vec<_>>(),
        );
        let next = next_text(&CheckReport::of(&waiting, 8), "store.py", 8);
        assert!(next.contains("write step 2, enqueue"), "{next}");
        assert!(next.contains("step 1's tests need it too"), "{next}");
        assert_eq!(stub_step("step 12: no"), None);
        assert_eq!(stub_step("not written yet"), None);
        let passing = CheckReport::of(&run_with(&[]), 3);
        assert!(passing.all_pass());
        assert!(next_text(&passing, "store.py", 3).contains("lab check --step 4"));
        let all = CheckReport::of(&run_with(&[]), 8);
        assert!(next_text(&all, "store.py", 8).contains("lab check --predict"));
    }
}
