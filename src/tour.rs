//! The student's step-through: `lab step N` shows the exercise and the
//! broken fragment, takes the prediction, runs the suite against the
//! reference and the mutant, sets the prediction beside the result, and
//! records it.

use crate::display::{failure_text, unified_diff};
use crate::exercise::{self, Exercise};
use crate::matrix::Matrix;
use crate::outcome::Outcome;
use crate::prediction::{parse_selection, Score};
use crate::probe::{self, CheckOptions, Probe};
use crate::progress::{self, Attempt, ProbeRecord, Progress, Reflection};
use crate::runner::{RunOptions, WorkerCommand};
use crate::suite::{self, Case};
use crate::variant::{Variant, REFERENCE_SOURCE};
use colored::Colorize;
use std::io::{self, BufRead, Write};
use std::path::Path;

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

/// What the student gave on the command line.
#[derive(Debug, Clone, Default)]
pub struct Given {
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
pub enum TourError {
    /// The prediction is needed and cannot be asked for.
    #[error("standard input is not a terminal, so the prediction cannot be asked for: give it with --predict NUMBERS-OR-NAMES --why \"TEXT\" (see `lab tests` for the names)")]
    NoPrediction,
    /// The prediction names no test the lab knows.
    #[error("{0}")]
    BadPrediction(String),
    /// Input ended before the prediction was complete.
    #[error("input ended before the prediction was given")]
    InputEnded,
    /// Reading, writing or the progress file failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Runs one exercise from start to end and returns the recorded attempt.
pub fn run(
    exercise: Exercise,
    given: Given,
    console: &mut Console,
    worker: &WorkerCommand,
    options: &RunOptions,
    progress_path: &Path,
) -> Result<Attempt, TourError> {
    let step = exercise.step();
    let menu: Vec<&'static Case> = suite::cases_through(step).collect();
    if given.predict.is_none() && given.probe.is_none() && !console.interactive {
        return Err(TourError::NoPrediction);
    }
    present(exercise, console)?;
    let (predicted, why, typed_probe) = prediction(exercise, &given, &menu, console)?;
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
            exercise.mutant.id
        )
        .bold()
    )?;
    let matrix = Matrix::build(
        worker,
        &[Variant::Reference, Variant::Mutant(exercise.mutant)],
        menu.clone(),
        options,
    );
    let caught = verdicts(&matrix, console)?;

    let score = Score::of(&predicted, &caught);
    compare(&score, console)?;
    writeln!(
        console.output,
        "\n{}\n{}",
        "Why it breaks the contract".bold(),
        exercise.mutant.explanation
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
        mutant: exercise.mutant.id.to_string(),
        predicted,
        why,
        probe,
        caught_by: caught,
        score,
    };
    let loaded = load_progress(progress_path, console)?;
    let mut record = loaded;
    record.exercise(exercise.key).attempts.push(attempt.clone());
    if step == 8 && record.reflection.is_none() {
        record.reflection = reflection(&given, console)?;
    }
    progress::save(progress_path, &record)?;
    writeln!(console.output, "\nRecorded in {}.", progress_path.display())?;
    match next_exercise(&record) {
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

/// Loads the progress file, telling the student if a corrupt one was set aside.
pub fn load_progress(path: &Path, console: &mut Console) -> io::Result<Progress> {
    let loaded = progress::load(path)?;
    if let Some((aside, reason)) = &loaded.set_aside {
        writeln!(
            console.output,
            "{} {} could not be read ({reason}); it was moved to {} and a new progress file was started.",
            "warning:".yellow().bold(),
            path.display(),
            aside.display()
        )?;
    }
    Ok(loaded.progress)
}

/// The first exercise without a recorded attempt, in order.
pub fn next_exercise(progress: &Progress) -> Option<Exercise> {
    exercise::exercises()
        .into_iter()
        .find(|exercise| progress.latest(exercise.key).is_none())
}

fn present(exercise: Exercise, console: &mut Console) -> io::Result<()> {
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
    let mutant = exercise.mutant;
    writeln!(
        out,
        "{}",
        format!(
            "The broken fragment: mutant {}, {}",
            mutant.id, mutant.title
        )
        .bold()
    )?;
    if let Some(original) = mutant.worksheet {
        writeln!(out, "(the worksheet's fragment: {original})")?;
    }
    write!(
        out,
        "{}",
        unified_diff(
            REFERENCE_SOURCE,
            mutant.source,
            "src/store.rs (reference)",
            &format!("src/store.rs (mutant {})", mutant.id),
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

/// The tests predicted, the student's words, and a probe typed at the prompt.
type Prediction = (Vec<String>, String, Option<Probe>);

fn prediction(
    exercise: Exercise,
    given: &Given,
    menu: &[&'static Case],
    console: &mut Console,
) -> Result<Prediction, TourError> {
    let mut typed_probe = None;
    let chosen = match &given.predict {
        Some(text) => parse_selection(text, menu).map_err(TourError::BadPrediction)?,
        None if given.probe.is_some() => Vec::new(),
        None if !console.interactive => return Err(TourError::NoPrediction),
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
                    return Err(TourError::InputEnded);
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
            .ok_or(TourError::InputEnded)?,
    };
    Ok((
        chosen.into_iter().map(String::from).collect(),
        why,
        typed_probe,
    ))
}

/// Reads a probe typed at the prompt, up to an empty line; on a parse
/// error, says where and returns `None` so the question is asked again.
fn read_probe(console: &mut Console) -> Result<Option<Probe>, TourError> {
    writeln!(
        console.output,
        "Type the probe, one operation per line (as in labs/probes/), and an empty line to end it."
    )?;
    let mut text = String::new();
    loop {
        let Some(line) = console.ask(">")? else {
            return Err(TourError::InputEnded);
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
    exercise: Exercise,
    probe: Probe,
    options: &RunOptions,
    console: &mut Console,
) -> Result<ProbeRecord, TourError> {
    let check_options = CheckOptions {
        scratch: options.scratch.clone(),
        timeout: options.timeout,
        attempts: CheckOptions::default().attempts,
    };
    let check = probe::check(&probe, &[exercise.mutant], &check_options)?;
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
            Some(Outcome::Pass) => "pass".green().to_string(),
            Some(other) => other.label().to_uppercase().red().bold().to_string(),
            None => "-".into(),
        };
        let mutant_cell = match on_mutant {
            Some(Outcome::Pass) => "pass (survives)".dimmed().to_string(),
            Some(other) => format!("{} (caught)", other.label().to_uppercase())
                .yellow()
                .bold()
                .to_string(),
            None => "-".into(),
        };
        // Pad by the visible width: colour codes must not count.
        let reference_label = match on_reference {
            Some(Outcome::Pass) => "pass".len(),
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
            Some(Outcome::Pass) | None => still_pass.push(case.name),
            Some(Outcome::Fail {
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

fn reflection(given: &Given, console: &mut Console) -> io::Result<Option<Reflection>> {
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
