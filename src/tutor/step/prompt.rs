//! The step-through's dialogue: the console it reads and writes, and the
//! questions it asks (the prediction, a typed probe, the closing
//! reflection), each asked again until the answer can be used.

use super::screen;
use super::StepError;
use crate::course::prediction::parse_selection;
use crate::course::progress::CLOSING_QUESTIONS;
use crate::course::session::Session;
use crate::exercise::Exercise;
use crate::probe::{self, Probe};
use crate::suite::Case;
use colored::Colorize;
use std::io::{self, BufRead, IsTerminal, Write};

/// The fewest columns a prompt leaves to type an answer in, on its line.
pub const ROOM_TO_TYPE: usize = 40;

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
    /// Runs `f` with the console of this process: standard input and
    /// output, interactive when standard input is a terminal, written for
    /// the terminal's width.
    pub fn with_terminal<T>(f: impl FnOnce(&mut Console) -> T) -> T {
        let stdin = io::stdin();
        let interactive = stdin.is_terminal();
        let mut input = stdin.lock();
        let mut output = io::stdout().lock();
        f(&mut Console {
            input: &mut input,
            interactive,
            output: &mut output,
            width: crate::terminal::text_width(),
            columns: crate::terminal::width(),
        })
    }

    /// Shows `prompt` and reads one line; `None` at the end of input. A
    /// prompt that would leave less than [`ROOM_TO_TYPE`] columns to type
    /// in is a question of its own, filled to the width, with the answer
    /// typed on the next line, after `> `.
    pub fn ask(&mut self, prompt: &str) -> io::Result<Option<String>> {
        if unicode_width::UnicodeWidthStr::width(prompt) + 1 + ROOM_TO_TYPE > self.columns {
            let question = crate::terminal::fill(prompt, self.width.min(self.columns), "", "");
            write!(self.output, "{}\n{} ", question.bold(), ">".bold())?;
        } else {
            write!(self.output, "{} ", prompt.bold())?;
        }
        self.output.flush()?;
        let mut line = String::new();
        if self.input.read_line(&mut line)? == 0 {
            // Ctrl-D left the cursor after the prompt: what is said next
            // starts a line of its own.
            if self.interactive {
                writeln!(self.output)?;
            }
            return Ok(None);
        }
        Ok(Some(line.trim().to_string()))
    }

    /// Shows `question` and reads an answer that says something: an empty
    /// one is asked again, saying so; `None` only at the end of input.
    pub fn ask_answer(&mut self, question: &str) -> io::Result<Option<String>> {
        loop {
            match self.ask(question)? {
                Some(answer) if answer.is_empty() => writeln!(
                    self.output,
                    "{}",
                    crate::terminal::fill(ANSWER_NEEDED, self.width, "", "")
                )?,
                answer => return Ok(answer),
            }
        }
    }
}

/// Said when a question that needs an answer gets an empty one.
const ANSWER_NEEDED: &str =
    "A sentence is enough, but an answer is needed (Ctrl-D stops without recording).";

/// What the student answered at the prediction prompt.
pub enum Predicted {
    /// The tests named.
    Tests(Vec<&'static str>),
    /// A probe typed instead.
    Probe(Probe),
}

/// What the prediction prompt shows on request: the exercise (for its
/// diff), and its hints, counted as seen in the student's session.
pub struct Aids<'a> {
    /// The exercise asked about.
    pub exercise: &'a Exercise,
    /// The step's hints, in order.
    pub hints: Vec<String>,
    /// The student's progress, where each hint shown is recorded and saved
    /// at once, as `lab hint` records it: a student who reads a hint and
    /// then leaves (Ctrl-C, the end of the input) has seen it.
    pub session: &'a mut Session,
}

/// Asks which tests will catch the mutant until the answer names at least
/// one test of `menu` (every wrong entry is reported at once), or is a
/// probe typed at the prompt. On the way, `d` shows the diff again, `h`
/// the next hint, `t` every test in force, and `?` what each key does.
pub fn ask_prediction(
    menu: &[&'static Case],
    aids: &mut Aids,
    console: &mut Console,
) -> Result<Predicted, StepError> {
    loop {
        let Some(answer) = console.ask(">")? else {
            return Err(StepError::InputEnded);
        };
        let shown = match answer.to_ascii_lowercase().as_str() {
            "?" | "help" => Some(screen::prompt_help(console.width)),
            "t" => Some(screen::all_tests(menu, console.columns)),
            "d" => Some(screen::fragment(aids.exercise, console.width)),
            "h" | "hint" => Some(next_hint(aids, console.width)?),
            _ => None,
        };
        if let Some(shown) = shown {
            write!(console.output, "{shown}")?;
            continue;
        }
        if answer == "probe" {
            match read_probe(console)? {
                Some(probe) => return Ok(Predicted::Probe(probe)),
                None => continue,
            }
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

/// The next hint the student has not seen, recorded as seen and saved
/// before it is shown; or that there is none left.
///
/// Errors: the progress file cannot be written.
fn next_hint(aids: &mut Aids, width: usize) -> Result<String, StepError> {
    let key = &aids.exercise.key;
    let seen = aids.session.hints_seen(key);
    let Some(hint) = aids.hints.get(seen) else {
        return Ok(format!(
            "That was the last of the {} hints (lab hint {key} --all shows them all).\n",
            aids.hints.len(),
        ));
    };
    let seen = aids.session.saw_hints(key, seen + 1);
    aids.session.save()?;
    Ok(format!(
        "{}\n{}\n",
        format!("Hint {seen} of {}", aids.hints.len()).bold(),
        crate::terminal::reflow(hint, width)
    ))
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
    let [why_kept, not_guaranteed] = CLOSING_QUESTIONS;
    let Some(kept) = console.ask_answer(why_kept)? else {
        return Ok(None);
    };
    let Some(not_guaranteed) = console.ask_answer(not_guaranteed)? else {
        return Ok(None);
    };
    Ok(Some((kept, not_guaranteed)))
}
