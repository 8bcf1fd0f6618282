//! The student's step-through: `lab step N` shows the exercise and the
//! broken fragment, takes the prediction, runs the suite against the
//! reference and the mutant, sets the prediction beside the result, and
//! records it.

use super::args::{find_exercise, worker_command, SuiteArgs};
use super::outcome::{CliError, Outcome};
use super::prediction::{parse_selection, Score};
use super::progress::{self, Attempt, ProbeRecord, Reflection};
use colored::Colorize;
use lease_lab::exercise::{self, Exercise};
use lease_lab::matrix::Matrix;
use lease_lab::outcome::Outcome as TestOutcome;
use lease_lab::probe::{self, CheckOptions, Probe};
use lease_lab::runner::RunOptions;
use lease_lab::suite::{self, Case};
use lease_lab::terminal::{failure_text, unified_diff};
use lease_lab::variant::Variant;
use std::io::{self, BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

/// `lab step`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The exercise: 1 to 8, or 8b.
    exercise: String,
    /// The tests you predict will catch the mutant: numbers or names, comma-separated.
    #[arg(long)]
    predict: Option<String>,
    /// What input, error or stored state will reveal the difference.
    #[arg(long)]
    why: Option<String>,
    /// A probe file as the prediction: store operations with the answers you expect.
    #[arg(long)]
    probe: Option<PathBuf>,
    /// After step 8: why the earlier steps' tests are kept.
    #[arg(long)]
    why_kept: Option<String>,
    /// After step 8: one operational condition the lab does not guarantee.
    #[arg(long)]
    not_guaranteed: Option<String>,
    #[command(flatten)]
    run: SuiteArgs,
}

/// `lab step N`: the exercise from start to end, on this terminal.
pub fn run(args: Args, progress_path: &Path) -> Outcome {
    let exercise = find_exercise(&args.exercise)?;
    let worker = worker_command()?;
    let probe = args
        .probe
        .as_deref()
        .map(probe::load)
        .transpose()
        .map_err(|error| CliError::Usage(error.to_string()))?;
    let prediction = GivenPrediction {
        predict: args.predict,
        why: args.why,
        probe,
        reflection: args.why_kept.zip(args.not_guaranteed),
    };
    let stdin = io::stdin();
    let interactive = stdin.is_terminal();
    let mut input = stdin.lock();
    let mut output = io::stdout().lock();
    let mut console = Console {
        input: &mut input,
        interactive,
        output: &mut output,
    };
    let options = args.run.options();
    let suite_runner = |variants: &[Variant], tests: Vec<&'static Case>| {
        Matrix::build(&worker, variants, tests, &options)
    };
    match step_through(
        &exercise,
        prediction,
        &mut console,
        &suite_runner,
        &options,
        progress_path,
    ) {
        Ok(_) => Ok(()),
        Err(error @ (StepError::NoPrediction | StepError::BadPrediction(_))) => {
            Err(CliError::Usage(error.to_string()))
        }
        Err(StepError::Io(error)) => Err(CliError::from(error)),
        Err(StepError::Progress(error)) => Err(error),
        Err(error) => Err(CliError::Failed(error.to_string())),
    }
}

/// How a step-through runs the suite: the variants and tests given, into
/// a matrix (the lab's workers; a made-up matrix in tests).
pub type SuiteRunner<'a> = dyn Fn(&[Variant], Vec<&'static Case>) -> Matrix + 'a;

/// Where the step-through reads answers and writes its text.
pub struct Console<'a> {
    /// Answers typed by the student.
    pub input: &'a mut dyn BufRead,
    /// Whether `input` is a person at a terminal (prompts are only shown then).
    pub interactive: bool,
    /// Everything shown.
    pub output: &'a mut dyn Write,
}

impl Console<'_> {
    /// Shows `prompt` and reads one line; `None` at the end of input.
    fn ask(&mut self, prompt: &str) -> io::Result<Option<String>> {
        write!(self.output, "{} ", prompt.bold())?;
        self.output.flush()?;
        let mut line = String::new();
        if self.input.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        Ok(Some(line.trim().to_string()))
    }
}

/// The prediction as far as the command line gave it.
#[derive(Debug, Clone, Default)]
pub struct GivenPrediction {
    /// `--predict`: test numbers or names.
    pub predict: Option<String>,
    /// `--why`: the input, error or stored state that will reveal the mutant.
    pub why: Option<String>,
    /// A probe given as the prediction (`--probe FILE`).
    pub probe: Option<Probe>,
    /// `--why-kept` and `--not-guaranteed`, the closing reflection.
    pub reflection: Option<(String, String)>,
}

/// Why a step-through stopped before its end.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// The prediction is needed and cannot be asked for.
    #[error("standard input is not a terminal, so the prediction cannot be asked for: give it with --predict NUMBERS-OR-NAMES --why \"TEXT\" (see `lab tests` for the names)")]
    NoPrediction,
    /// The prediction names no test the lab knows.
    #[error("{0}")]
    BadPrediction(String),
    /// Input ended before the prediction was complete.
    #[error("input ended before the prediction was given")]
    InputEnded,
    /// Reading or writing the console failed.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// The progress file could not be read or written.
    #[error("{0}")]
    Progress(CliError),
}

/// Runs one exercise from start to end and returns the recorded attempt.
pub fn step_through(
    exercise: &Exercise,
    given: GivenPrediction,
    console: &mut Console,
    suite_runner: &SuiteRunner,
    options: &RunOptions,
    progress_path: &Path,
) -> Result<Attempt, StepError> {
    let step = exercise.step();
    let menu: Vec<&'static Case> = suite::cases_through(step).collect();
    if given.predict.is_none() && given.probe.is_none() && !console.interactive {
        return Err(StepError::NoPrediction);
    }
    present(exercise, console)?;
    let Prediction {
        tests: predicted,
        why,
        typed_probe,
    } = prediction(exercise, &given, &menu, console)?;
    let probe = match given.probe.clone().or(typed_probe) {
        Some(probe) => Some(run_probe(exercise, probe, options, console)?),
        None => None,
    };

    writeln!(
        console.output,
        "\n{}",
        format!(
            "Running the {} tests of steps 1 to {step} against the reference and mutant {}...",
            menu.len(),
            exercise.mutant().spec.id
        )
        .bold()
    )?;
    let matrix = suite_runner(
        &[Variant::reference(), exercise.variant.clone()],
        menu.clone(),
    );
    let caught = verdicts(&matrix, console)?;

    let score = Score::of(&predicted, &caught);
    compare(&score, console)?;
    writeln!(
        console.output,
        "\n{}\n{}",
        "Why it breaks the contract".bold(),
        exercise.mutant().spec.explanation
    )?;
    if let Some(lab) = exercise::lab(step) {
        writeln!(
            console.output,
            "\n{}\n{}",
            "After the run".bold(),
            lab.after
        )?;
    }

    let attempt = Attempt {
        at: progress::now_stamp(),
        mutant: exercise.mutant().spec.id.clone(),
        predicted,
        why,
        probe,
        caught_by: caught,
        score,
    };
    let mut record = progress::load_reporting(progress_path).map_err(StepError::Progress)?;
    record
        .exercise(&exercise.key)
        .attempts
        .push(attempt.clone());
    if step == 8 && record.reflection.is_none() {
        record.reflection = reflection(&given, console)?;
    }
    progress::save(progress_path, &record).map_err(|error| {
        StepError::Progress(CliError::Failed(format!(
            "cannot write the progress file {}: {error}",
            progress_path.display()
        )))
    })?;
    writeln!(console.output, "\nRecorded in {}.", progress_path.display())?;
    match record.next_exercise() {
        Some(next) => writeln!(
            console.output,
            "Next: {}",
            format!("lab step {}", next.key).bold()
        )?,
        None => writeln!(
            console.output,
            "{}",
            "Every exercise has a recorded prediction.".bold()
        )?,
    }
    Ok(attempt)
}

fn present(exercise: &Exercise, console: &mut Console) -> io::Result<()> {
    let step = exercise.step();
    let out = &mut *console.output;
    writeln!(
        out,
        "{}",
        format!(
            "Step {step} of 8: {} (exercise {})",
            exercise::step_title(step),
            exercise.key
        )
        .bold()
    )?;
    if let Some(lab) = exercise::lab(step) {
        writeln!(out, "\n{}\n", lab.introduction)?;
        writeln!(out, "{}\n{}\n", "Contract".bold(), lab.contract)?;
        writeln!(out, "{}\n{}\n", "Why it matters".bold(), lab.why)?;
    }
    let mutant = exercise.mutant();
    let spec = &mutant.spec;
    writeln!(
        out,
        "{}",
        format!("The broken fragment: mutant {}, {}", spec.id, spec.title).bold()
    )?;
    if let Some(original) = &spec.worksheet {
        writeln!(out, "(the worksheet's fragment: {original})")?;
    }
    write!(
        out,
        "{}",
        unified_diff(
            &mutant.original,
            &mutant.source,
            &format!("{} (reference)", spec.file),
            &format!("{} (mutant {})", spec.file, spec.id),
            3
        )
    )?;
    if let Some(lab) = exercise::lab(step) {
        writeln!(
            out,
            "\n{}\n{}",
            "Predict before you run".bold(),
            lab.predict
        )?;
    }
    Ok(())
}

/// The prediction as made: at the prompt, or from the command line.
struct Prediction {
    /// The tests predicted to catch the mutant.
    tests: Vec<String>,
    /// The student's words: which input, error or stored state reveals it.
    why: String,
    /// A probe typed at the prompt, if any.
    typed_probe: Option<Probe>,
}

fn prediction(
    exercise: &Exercise,
    given: &GivenPrediction,
    menu: &[&'static Case],
    console: &mut Console,
) -> Result<Prediction, StepError> {
    let mut typed_probe = None;
    let chosen = match &given.predict {
        Some(text) => parse_selection(text, menu).map_err(StepError::BadPrediction)?,
        None if given.probe.is_some() => Vec::new(),
        None if !console.interactive => return Err(StepError::NoPrediction),
        None => {
            writeln!(
                console.output,
                "\n{}",
                format!("The tests in force at step {}:", exercise.step()).bold()
            )?;
            let mut step = 0;
            for (number, case) in menu.iter().enumerate() {
                if case.step != step {
                    step = case.step;
                    writeln!(console.output, "  step {step}")?;
                }
                writeln!(console.output, "  {:>4}  {}", number + 1, case.name)?;
            }
            loop {
                let Some(answer) = console.ask(
                    "\nWhich tests will catch the mutant? (numbers or names, comma-separated; or `probe` to write one)",
                )?
                else {
                    return Err(StepError::InputEnded);
                };
                if answer == "probe" {
                    match read_probe(console)? {
                        Some(probe) => {
                            typed_probe = Some(probe);
                            break Vec::new();
                        }
                        None => continue,
                    }
                }
                match parse_selection(&answer, menu) {
                    Ok(chosen) if !chosen.is_empty() => break chosen,
                    Ok(_) => writeln!(console.output, "Name at least one test.")?,
                    Err(problem) => writeln!(console.output, "{problem}")?,
                }
            }
        }
    };
    let why = match &given.why {
        Some(text) => text.clone(),
        None if given.predict.is_some()
            || given.probe.is_some()
            || typed_probe.is_some()
            || !console.interactive =>
        {
            String::new()
        }
        None => console
            .ask("What input, error or stored state will reveal the difference?")?
            .ok_or(StepError::InputEnded)?,
    };
    Ok(Prediction {
        tests: chosen.into_iter().map(String::from).collect(),
        why,
        typed_probe,
    })
}

/// Reads a probe typed at the prompt, up to an empty line; on a parse
/// error, says where and returns `None` so the question is asked again.
fn read_probe(console: &mut Console) -> Result<Option<Probe>, StepError> {
    writeln!(
        console.output,
        "Type the probe, one operation per line (as in labs/probes/), and an empty line to end it."
    )?;
    let mut text = String::new();
    loop {
        let Some(line) = console.ask(">")? else {
            return Err(StepError::InputEnded);
        };
        if line.is_empty() {
            break;
        }
        text.push_str(&line);
        text.push('\n');
    }
    match probe::parse("<typed>", &text) {
        Ok(probe) => Ok(Some(probe)),
        Err(error) => {
            writeln!(console.output, "{error}")?;
            Ok(None)
        }
    }
}

/// Runs a probe against the reference and the exercise's mutant, shows the
/// verdict, and returns what the progress file keeps of it.
fn run_probe(
    exercise: &Exercise,
    probe: Probe,
    options: &RunOptions,
    console: &mut Console,
) -> Result<ProbeRecord, StepError> {
    let check_options = CheckOptions {
        scratch: options.scratch.clone(),
        timeout: options.timeout,
        attempts: CheckOptions::default().attempts,
    };
    let check = probe::check(
        &probe,
        &Variant::reference(),
        std::slice::from_ref(&exercise.variant),
        &check_options,
    )?;
    writeln!(console.output, "\n{}", "Your probe".bold())?;
    write!(console.output, "{}", probe::check_text(&probe, &check))?;
    let verdict = match (check.wrong_reading(), check.mutants.first()) {
        (Some(_), _) => "wrong reading".to_string(),
        (None, Some(mutant)) => mutant.verdict.label().to_string(),
        (None, None) => "not run".to_string(),
    };
    Ok(ProbeRecord {
        file: probe.file_name.clone(),
        text: probe.source.clone(),
        verdict,
    })
}

/// Shows every test's verdict and returns the tests that caught the mutant.
fn verdicts(matrix: &Matrix, console: &mut Console) -> io::Result<Vec<String>> {
    let reference = &matrix.runs[0];
    let mutant = &matrix.runs[1];
    let out = &mut *console.output;
    let mut caught = Vec::new();
    let mut still_pass = Vec::new();
    writeln!(
        out,
        "\n{:<62} {:<10} {}",
        "test".bold(),
        "reference".bold(),
        "mutant".bold()
    )?;
    for case in &matrix.tests {
        let on_reference = reference.outcome(case.name);
        let on_mutant = mutant.outcome(case.name);
        let reference_cell = match on_reference {
            Some(TestOutcome::Pass) => "pass".green().to_string(),
            Some(other) => other.label().to_uppercase().red().bold().to_string(),
            None => "-".into(),
        };
        let mutant_cell = match on_mutant {
            Some(TestOutcome::Pass) => "pass (survives)".dimmed().to_string(),
            Some(other) => format!("{} (caught)", other.label().to_uppercase())
                .yellow()
                .bold()
                .to_string(),
            None => "-".into(),
        };
        // Pad by the visible width: colour codes must not count.
        let reference_label = match on_reference {
            Some(TestOutcome::Pass) => "pass".len(),
            Some(other) => other.label().len(),
            None => 1,
        };
        writeln!(
            out,
            "{:<62} {reference_cell}{} {mutant_cell}",
            case.name,
            " ".repeat(10usize.saturating_sub(reference_label))
        )?;
        match on_mutant {
            Some(TestOutcome::Pass) | None => still_pass.push(case.name),
            Some(TestOutcome::Fail {
                check,
                expected,
                actual,
            }) => {
                caught.push(case.name.to_string());
                write!(out, "{}", failure_text(check, expected, actual, 6))?;
            }
            Some(other) => {
                caught.push(case.name.to_string());
                writeln!(out, "      {}", other.reason().unwrap_or_default())?;
            }
        }
    }
    if let Some(problem) = reference
        .runs
        .iter()
        .find_map(|run| run.outcome.reason().map(|r| (run.test.clone(), r)))
    {
        writeln!(
            out,
            "\n{} the reference fails {}: {}. The suite or this machine is broken; the comparison below is not to be trusted.",
            "warning:".red().bold(),
            problem.0,
            problem.1
        )?;
    }
    writeln!(
        out,
        "\n{} of {} tests caught the mutant; {} normal cases still pass on it, as the worksheet warns they may.",
        caught.len(),
        matrix.tests.len(),
        still_pass.len()
    )?;
    Ok(caught)
}

fn compare(score: &Score, console: &mut Console) -> io::Result<()> {
    let out = &mut *console.output;
    writeln!(out, "\n{}", "Your prediction beside the result".bold())?;
    let list = |names: &[String]| {
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    };
    writeln!(
        out,
        "  {} {}",
        "predicted and caught:       ".green(),
        list(&score.predicted_and_caught)
    )?;
    writeln!(
        out,
        "  {} {}",
        "predicted but it survived:  ".red(),
        list(&score.predicted_but_survived)
    )?;
    writeln!(
        out,
        "  {} {}",
        "caught but not predicted:   ".yellow(),
        list(&score.caught_not_predicted)
    )?;
    writeln!(out, "  {} {}%", "score:".bold(), score.percent)?;
    Ok(())
}

fn reflection(given: &GivenPrediction, console: &mut Console) -> io::Result<Option<Reflection>> {
    let answers = match &given.reflection {
        Some((kept, not_guaranteed)) => Some((kept.clone(), not_guaranteed.clone())),
        None if console.interactive => {
            writeln!(
                console.output,
                "\n{}",
                "The worksheet's closing questions".bold()
            )?;
            let kept = console.ask("Why are the earlier steps' tests kept at every later step?")?;
            let not_guaranteed =
                console.ask("Name one operational condition this lab does not guarantee:")?;
            kept.zip(not_guaranteed)
        }
        None => {
            writeln!(
                console.output,
                "\nClosing questions: answer them with `lab reflect --why-kept \"...\" --not-guaranteed \"...\"`."
            )?;
            None
        }
    };
    Ok(answers
        .filter(|(kept, not_guaranteed)| !kept.is_empty() && !not_guaranteed.is_empty())
        .map(|(why_tests_are_kept, not_guaranteed)| Reflection {
            at: progress::now_stamp(),
            why_tests_are_kept,
            not_guaranteed,
        }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::progress::Progress;
    use lease_lab::runner::{run_case, VariantRun};
    use std::io::Cursor;

    /// The suite run in this process, test by test: what the workers
    /// would report, without a `lab` binary to start.
    fn in_process(variants: &[Variant], tests: Vec<&'static Case>) -> Matrix {
        let options = RunOptions::default();
        let runs = variants
            .iter()
            .map(|variant| VariantRun {
                variant: variant.clone(),
                runs: tests
                    .iter()
                    .map(|case| run_case(case, variant.open(), &options.scratch, options.timeout))
                    .collect(),
            })
            .collect();
        Matrix { tests, runs }
    }

    fn step_in(
        folder: &Path,
        key: &str,
        given: GivenPrediction,
        typed: &str,
        interactive: bool,
    ) -> (Result<Attempt, StepError>, String) {
        let mut input = Cursor::new(typed.as_bytes().to_vec());
        let mut output = Vec::new();
        let mut console = Console {
            input: &mut input,
            interactive,
            output: &mut output,
        };
        let result = step_through(
            &exercise::find(key).unwrap(),
            given,
            &mut console,
            &in_process,
            &RunOptions::default(),
            &folder.join("progress.json"),
        );
        (result, String::from_utf8(output).unwrap())
    }

    fn saved(folder: &Path) -> Progress {
        progress::load(&folder.join("progress.json"))
            .unwrap()
            .progress
    }

    #[test]
    fn the_step_asks_when_interactive_and_records_the_answers() {
        let folder = tempfile::tempdir().unwrap();
        let typed = "99\n\n2, 3\ntwo enqueues of one id\n";
        let (result, shown) = step_in(folder.path(), "2", GivenPrediction::default(), typed, true);
        let attempt = result.unwrap();
        assert!(shown.contains("there is no test number 99"), "{shown}");
        assert!(shown.contains("Name at least one test."), "{shown}");
        assert_eq!(
            attempt.predicted,
            [suite::CASES[1].name, suite::CASES[2].name]
        );
        assert_eq!(attempt.why, "two enqueues of one id");
        assert_eq!(attempt.mutant, "02");
        assert!(attempt
            .caught_by
            .contains(&"enqueue_of_an_existing_job_answers_false".to_string()));
        assert_eq!(
            attempt.score,
            Score::of(&attempt.predicted, &attempt.caught_by)
        );
        assert!(
            shown.contains("Step 2 of 8: Register only the first job"),
            "{shown}"
        );
        assert!(
            shown.contains("+                \"INSERT OR REPLACE INTO jobs (id)"),
            "{shown}"
        );
        assert_eq!(saved(folder.path()).latest("2"), Some(&attempt));
    }

    #[test]
    fn the_step_stops_cleanly_when_input_ends_or_cannot_come() {
        let folder = tempfile::tempdir().unwrap();
        let (result, _) = step_in(folder.path(), "3", GivenPrediction::default(), "", true);
        assert!(matches!(result, Err(StepError::InputEnded)));
        let (result, shown) = step_in(folder.path(), "3", GivenPrediction::default(), "", false);
        assert!(matches!(result, Err(StepError::NoPrediction)));
        assert!(shown.is_empty(), "nothing is shown before the refusal");
        let given = GivenPrediction {
            predict: Some("nope".into()),
            ..GivenPrediction::default()
        };
        let (result, _) = step_in(folder.path(), "3", given, "", false);
        assert!(
            matches!(result, Err(StepError::BadPrediction(message)) if message.contains("\"nope\""))
        );
        assert!(
            !folder.path().join("progress.json").exists(),
            "nothing is recorded"
        );
    }

    #[test]
    fn the_step_asks_for_the_reflection_after_step_8_and_then_says_all_is_done() {
        let folder = tempfile::tempdir().unwrap();
        let mut record = Progress::default();
        for exercise in exercise::exercises().into_iter().filter(|e| e.key != "8") {
            record.exercise(&exercise.key).attempts.push(Attempt {
                at: progress::now_stamp(),
                mutant: exercise.mutant().spec.id.clone(),
                predicted: vec![],
                why: String::new(),
                probe: None,
                caught_by: vec![],
                score: Score::of(&[], &[]),
            });
        }
        progress::save(&folder.path().join("progress.json"), &record).unwrap();
        assert_eq!(record.next_exercise().unwrap().key, "8");
        let given = GivenPrediction {
            predict: Some("claim_many_answers_every_owner_in_order".into()),
            ..GivenPrediction::default()
        };
        let (result, shown) = step_in(folder.path(), "8", given, "kept because\nclocks\n", true);
        result.unwrap();
        assert!(
            shown.contains("Every exercise has a recorded prediction."),
            "{shown}"
        );
        let saved = saved(folder.path());
        let reflection = saved.reflection.clone().expect("the reflection is kept");
        assert_eq!(
            (
                reflection.why_tests_are_kept.as_str(),
                reflection.not_guaranteed.as_str()
            ),
            ("kept because", "clocks")
        );
        assert!(saved.next_exercise().is_none());
    }

    #[test]
    fn the_step_without_a_terminal_points_to_lab_reflect() {
        let folder = tempfile::tempdir().unwrap();
        let given = GivenPrediction {
            predict: Some("1".into()),
            ..GivenPrediction::default()
        };
        let (result, shown) = step_in(folder.path(), "8", given, "", false);
        result.unwrap();
        assert!(shown.contains("lab reflect --why-kept"), "{shown}");
        assert!(saved(folder.path()).reflection.is_none());
    }
}
