//! The step-through's dialogue: the console it reads and writes, and the
//! questions it asks (the prediction, a typed probe, the closing
//! reflection), each asked again until the answer can be used.

use super::screen;
use super::StepError;
use colored::Colorize;
use lease_lab::course::prediction::parse_selection;
use lease_lab::probe::{self, Probe};
use lease_lab::suite::Case;
use std::io::{self, BufRead, Write};

/// Where the step-through reads answers and writes its text.
pub struct Console<'a> {
    /// Answers typed by the student.
    pub input: &'a mut dyn BufRead,
    /// Whether `input` is a person at a terminal (prompts are only shown then).
    pub interactive: bool,
    /// Everything shown.
    pub output: &'a mut dyn Write,
    /// The width to write running text for.
    pub width: usize,
    /// The terminal's width, for lists laid out in columns.
    pub columns: usize,
}

impl Console<'_> {
    /// Shows `prompt` and reads one line; `None` at the end of input.
    pub fn ask(&mut self, prompt: &str) -> io::Result<Option<String>> {
        write!(self.output, "{} ", prompt.bold())?;
        self.output.flush()?;
        let mut line = String::new();
        if self.input.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        Ok(Some(line.trim().to_string()))
    }
}

/// What the student answered at the prediction prompt.
pub enum Predicted {
    /// The tests named.
    Tests(Vec<&'static str>),
    /// A probe typed instead.
    Probe(Probe),
}

/// Asks which tests will catch the mutant until the answer names at least
/// one test of `menu` (every wrong entry is reported at once), or is a
/// probe typed at the prompt; `?` lists every test in force.
pub fn ask_prediction(
    menu: &[&'static Case],
    console: &mut Console,
) -> Result<Predicted, StepError> {
    loop {
        let Some(answer) = console.ask(">")? else {
            return Err(StepError::InputEnded);
        };
        match answer.as_str() {
            "?" => {
                write!(
                    console.output,
                    "{}",
                    screen::all_tests(menu, console.columns)
                )?;
                continue;
            }
            "probe" => match read_probe(console)? {
                Some(probe) => return Ok(Predicted::Probe(probe)),
                None => continue,
            },
            _ => {}
        }
        match parse_selection(&answer, menu) {
            Ok(chosen) if !chosen.is_empty() => return Ok(Predicted::Tests(chosen)),
            Ok(_) => writeln!(console.output, "Name at least one test.")?,
            Err(problems) => {
                for problem in problems {
                    writeln!(console.output, "{problem}")?;
                }
            }
        }
    }
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

/// The worksheet's two closing questions, asked at the console: the two
/// answers as typed (empty ones included), `None` when input ends.
pub fn ask_reflection(console: &mut Console) -> io::Result<Option<(String, String)>> {
    writeln!(
        console.output,
        "\n{}",
        "The worksheet's closing questions".bold()
    )?;
    let Some(kept) = console.ask("Why are the earlier steps' tests kept at every later step?")?
    else {
        return Ok(None);
    };
    let Some(not_guaranteed) =
        console.ask("Name one operational condition this lab does not guarantee:")?
    else {
        return Ok(None);
    };
    Ok(Some((kept, not_guaranteed)))
}
