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

use super::args::{worker_command, SuiteArgs};
use super::outcome::{say, say_line, CliError, Outcome, ReportFormat};
use super::update;
use colored::Colorize;
use lease_lab::course::check::{check_lanes, hear_greeting, run_check_showing, CheckReport, Ready};
use lease_lab::course::prediction::{comparison, parse_selection, Score};
use lease_lab::course::progress::{self, OwnPrediction};
use lease_lab::course::starter::{self, OPERATIONS};
use lease_lab::lab_text::Language;
use lease_lab::report::check::{check_json, check_text, next_text, watch_text};
use lease_lab::runner::{RunOptions, WorkerCommand};
use lease_lab::subject::own::write_once;
use lease_lab::subject::{rust_project, Implementation, Subject};
use lease_lab::suite::{self, Case, Tag};
use lease_lab::terminal::{cut, fill};
use notify_debouncer_mini::notify::RecursiveMode;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

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
    /// List the tests beyond the worksheet (the Rust store's own stricter
    /// promises, never counted) one by one, not only how many hold.
    #[arg(long)]
    all: bool,
    /// Output format: text, or the check's result per step and per test
    /// as JSON for tools (the check alone: not with --predict).
    #[arg(long, value_enum, default_value_t = ReportFormat::Text, conflicts_with = "predict")]
    format: ReportFormat,
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
    #[arg(long = "impl", value_name = "IMPL", value_parser = Subject::parse)]
    implementation: Option<Subject>,
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
            write_once(&file, &starter::python()).map_err(unwritable)?;
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
    update(progress_path, |progress| {
        progress.implementation = Some(implementation.clone());
    })?;
    let width = lease_lab::terminal::text_width();
    let paragraph = |text: String| lease_lab::terminal::fill(&text, width, "", "");
    say(&format!(
        "{}\n\n{}\n  {}   runs the contract tests of every step against it\n  {}   runs them again each time you save\n\n{}\n",
        paragraph(format!(
            "Wrote {}: the protocol is done, the eight operations are yours to write, each with the worksheet's contract as its documentation.",
            implementation.describe()
        )),
        paragraph(format!(
            "Recorded in {} as your implementation, so:",
            progress_path.display()
        )),
        "lab check".bold(),
        "lab watch".bold(),
        paragraph(format!(
            "Start with step 1, {}, in {}.",
            OPERATIONS[0],
            start.display()
        ))
    ))
}

/// The implementation `--impl` names, else the one recorded.
fn chosen(given: Option<&Subject>, progress: &progress::Progress) -> Result<Subject, CliError> {
    match given {
        Some(subject) => Ok(subject.clone()),
        None => progress
            .implementation
            .clone()
            .map(Subject::Own)
            .ok_or_else(|| {
                CliError::Usage(
                    "there is no implementation to check yet: start one with `lab new --lang python DIR` (or --lang rust), or name yours with --impl FILE-FOLDER-OR-COMMAND".into(),
                )
            }),
    }
}

/// `lab check`.
pub fn check(args: &CheckArgs, progress_path: &Path) -> Outcome {
    let mut session = super::session(progress_path)?;
    let checked = chosen(args.which.implementation.as_ref(), session.progress())?;
    let through = args.which.step.unwrap_or(8);
    let predicted = match &args.predict {
        Some(text) => Some(predicted_tests(text, through)?),
        None => None,
    };
    let worker = worker_command()?;
    let width = lease_lab::terminal::text_width();
    let heading = format!(
        "Checking {} against the contract tests of steps 1 to {through}...",
        checked.describe()
    );
    let json = args.format == ReportFormat::Json;
    // The program is stopped once the report is out (`_running` goes last).
    let (report, _running) = run_shown(
        &checked,
        through,
        &args.run.options(),
        &worker,
        !json,
        || {
            if json {
                return Ok(());
            }
            say(&format!("{}\n\n", fill(&heading, width, "", "  ").bold()))
        },
    )?;
    if json {
        if let Subject::Own(own) = &checked {
            report.record(session.edit(), own);
            session.save()?;
        }
        say_line(
            &serde_json::to_string_pretty(&check_json(&report, &checked.describe(), through))
                .expect("a check is JSON"),
        )?;
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
        say(&comparison(&score, lease_lab::terminal::text_width()))?;
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
        if let Subject::Own(_) = checked {
            session.edit().own_predictions.push(OwnPrediction {
                at: progress::now_stamp(),
                through,
                predicted,
                why: args.why.clone().unwrap_or_default(),
                failed: failing.clone(),
                score,
            });
            session.save()?;
            say(&format!("\nRecorded in {}.\n", progress_path.display()))?;
        }
    } else {
        if let Subject::Own(own) = &checked {
            report.record(session.edit(), own);
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

/// Prepares the implementation and runs the check: `heading` is shown
/// once the program greeted, and at a terminal the check's progress, step
/// by step, on one line that the report then takes the place of.
///
/// Answers the report, and the implementation as it ran, which stops the
/// program when it goes.
///
/// Errors: a program that does not greet, with the lines of its standard
/// error as it wrote them (a traceback's caret in place).
fn run_shown(
    checked: &Subject,
    through: u8,
    options: &RunOptions,
    worker: &WorkerCommand,
    show_progress: bool,
    heading: impl FnOnce() -> Outcome,
) -> Result<(CheckReport, Ready), CliError> {
    let variant = checked.reference()?;
    let ready = hear_greeting(&variant, options, check_lanes()).map_err(|fault| {
        let width = lease_lab::terminal::width();
        let message = fault.to_string();
        let lines: Vec<String> = message
            .lines()
            .enumerate()
            .map(|(at, line)| {
                if at == 0 {
                    line.to_string()
                } else {
                    cut(line, width)
                }
            })
            .collect();
        CliError::Found(lines.join("\n"))
    })?;
    heading()?;
    let mut progress = ProgressLine::at_terminal(through, show_progress);
    let report = run_check_showing(worker, &ready, through, options, &mut |run| {
        progress.ran(run)
    });
    progress.clear();
    Ok((report, ready))
}

/// A check's progress on one line rewritten in place, at a terminal only:
/// piped, a check writes its report and nothing else.
struct ProgressLine {
    /// How many tests each step has, and how many of them ran.
    steps: Vec<(usize, usize)>,
    shown: bool,
}

impl ProgressLine {
    fn at_terminal(through: u8, wanted: bool) -> ProgressLine {
        let steps = if wanted && std::io::stdout().is_terminal() {
            (1..=through)
                .map(|step| {
                    (
                        suite::cases_through(through)
                            .filter(|case| case.step == step)
                            .count(),
                        0,
                    )
                })
                .collect()
        } else {
            Vec::new()
        };
        ProgressLine {
            steps,
            shown: false,
        }
    }

    fn ran(&mut self, run: &lease_lab::outcome::TestRun) {
        let Some(step) = suite::case(&run.test).map(|case| usize::from(case.step)) else {
            return;
        };
        let Some(counts) = self.steps.get_mut(step - 1) else {
            return;
        };
        counts.1 += 1;
        let (tests, ran) = *counts;
        let line = format!(
            "  step {step} of {}: {ran} of {tests} tests run",
            self.steps.len()
        );
        let _ = write!(std::io::stdout(), "\r\x1b[K{}", line.dimmed());
        let _ = std::io::stdout().flush();
        self.shown = true;
    }

    fn clear(&self) {
        if self.shown {
            let _ = write!(std::io::stdout(), "\r\x1b[K");
        }
    }
}

/// How long `lab watch` waits after a change of a file for the next one,
/// so that an editor's save (often several writes and a rename, within a
/// few milliseconds) checks once. Each file's change is told as soon as it
/// settled, not batched with others (which could double the wait): the
/// check starts about this long after the save. A change that only renames
/// or rewrites the same contents checks nothing (see [`fingerprint`]).
const SETTLE: Duration = Duration::from_millis(50);

/// `lab watch`: a check now, and again after each save of the
/// implementation's files, until interrupted.
pub fn watch(args: &WatchArgs, progress_path: &Path) -> Outcome {
    let session = super::session(progress_path)?;
    let checked = chosen(args.which.implementation.as_ref(), session.progress())?;
    let Subject::Own(own) = &checked else {
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
    let settle = notify_debouncer_mini::Config::default()
        .with_timeout(SETTLE)
        .with_batch_mode(false);
    let mut debouncer =
        notify_debouncer_mini::new_debouncer_opt::<_, notify::RecommendedWatcher>(settle, sender)
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
    // Names, not paths: the heading of each run fits one line.
    let names: Vec<String> = watched
        .iter()
        .map(|path| {
            path.file_name()
                .unwrap_or(path.as_os_str())
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let round = WatchRound {
        checked: &checked,
        own,
        through,
        options: &options,
        worker: &worker,
        progress_path,
        watching: names.join(", "),
        terminal: std::io::stdout().is_terminal(),
    };
    let mut last_seen: Vec<u64> = watched.iter().map(|path| fingerprint(path)).collect();
    let mut runs = 1;
    round.run(runs, None)?;
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
        runs += 1;
        round.run(runs, Some(&watched[changed]))?;
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

/// What every check of `lab watch` needs.
struct WatchRound<'a> {
    checked: &'a Subject,
    own: &'a Implementation,
    through: u8,
    options: &'a RunOptions,
    worker: &'a WorkerCommand,
    progress_path: &'a Path,
    /// The files watched, said in the first check's heading.
    watching: String,
    /// Whether standard output is a terminal, whose screen each check
    /// clears.
    terminal: bool,
}

impl WatchRound<'_> {
    /// Check number `run` (`changed`: the file whose save started it): at a
    /// terminal on a cleared screen, else under a blank line; headed by
    /// its time, then one line per step and the first failure in full. A
    /// failure to build or run is shown, and the watch goes on; only a
    /// closed output ends it.
    fn run(&self, run: usize, changed: Option<&Path>) -> Outcome {
        let width = lease_lab::terminal::text_width();
        let why = match changed {
            None => format!(": watching {}", self.watching),
            Some(file) => format!(
                ", after {} changed",
                file.file_name()
                    .unwrap_or(file.as_os_str())
                    .to_string_lossy()
            ),
        };
        let heading = format!(
            "Run {run} at {}{why} (Ctrl-C stops)",
            clock_time_utc(std::time::SystemTime::now()),
        );
        let shown = run_shown(
            self.checked,
            self.through,
            self.options,
            self.worker,
            true,
            || {
                let clear = if self.terminal { "\x1b[2J\x1b[H" } else { "\n" };
                say(&format!(
                    "{clear}{}\n",
                    fill(&heading, width, "", "  ").bold()
                ))
            },
        );
        match shown {
            Ok((report, _running)) => {
                // A watch lasts: each round records what it found, as a
                // command of its own would.
                update(self.progress_path, |progress| {
                    report.record(progress, self.own)
                })?;
                say(&watch_text(&report, width))?;
                say(&next_text(
                    &report,
                    &self.checked.source(),
                    self.through,
                    &self.checked.impl_arg(),
                ))?;
            }
            Err(CliError::ClosedPipe) => return Err(CliError::ClosedPipe),
            Err(error) => say(&format!(
                "{}{}\n",
                if self.terminal { "\x1b[2J\x1b[H" } else { "\n" },
                fill(
                    &format!(
                        "Run {run}, lab watch: {}",
                        error.message().unwrap_or("the check failed")
                    ),
                    width,
                    "",
                    "  "
                )
                .red()
            ))?,
        }
        Ok(())
    }
}

/// The time of day of `at` as `14:02:07 UTC`: the lab keeps no time zone
/// data, so it says the zone it uses.
fn clock_time_utc(at: std::time::SystemTime) -> String {
    let stamp = humantime::format_rfc3339_seconds(at).to_string();
    format!("{} UTC", &stamp[11..19])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--impl rust` and `--impl python` check the lab's own stores, any
    /// other text the student's; without `--impl`, the one recorded, and
    /// with none recorded, an error that says how to start one.
    #[test]
    fn the_checked_implementation_is_the_one_named_else_the_one_recorded() {
        let progress = progress::Progress::default();
        let lab = chosen(Some(&Subject::parse(" python ").unwrap()), &progress).unwrap();
        assert_eq!(
            (lab.describe(), lab.source()),
            ("the lab's python store".to_string(), "python".to_string())
        );
        let rust = chosen(Some(&Subject::Rust), &progress).unwrap();
        assert_eq!(rust.describe(), "the lab's rust store");
        let Err(error) = chosen(None, &progress) else {
            panic!("nothing to check");
        };
        let error = error.to_string();
        assert!(error.contains("lab new --lang python DIR"), "{error}");
        let own = Implementation::parse("./my-store --fast").unwrap();
        let recorded = progress::Progress {
            implementation: Some(own.clone()),
            ..progress::Progress::default()
        };
        let checked = chosen(None, &recorded).unwrap();
        assert_eq!(checked.describe(), own.describe());
        assert_eq!(checked.source(), own.source());
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
}
