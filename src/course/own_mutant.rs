//! Mutants written by students and instructors: the code of each step to
//! break, a template to start from, and the checks a new mutant file must
//! pass before it is run.
//!
//! A mutant file is data (see [`crate::mutant`]). The build compiles the
//! worksheet's, the hardening and the field mutants into the `lab` binary;
//! a mutant of one's own is never compiled in: `lab` finds it in the
//! mutants folder when it runs. So an installed `lab` sees a new mutant
//! file at once, and a deleted file takes its mutant away.
//!
//! A new mutant goes through two checks. [`validate`] is instant and needs
//! no toolchain: the file parses, its fragment occurs exactly once in the
//! store it changes, and the replacement changes code, not just spacing or
//! comments. Then `lab mutant check` runs it: builds the worker (a mutant
//! of the Rust store needs Rust's toolchain for that, once) and runs the
//! suite against it, to say which tests kill it.

use crate::mutant::{
    id_of_file_name, mutant_files, MutantSpec, SpecError, MUTABLE_FILE, PYTHON_STORE,
};
use crate::subject::{self, Subject, PYTHON_SOURCE};
use crate::variant::{self, REFERENCE_SOURCE};
use std::fmt::{self, Write as _};
use std::io;
use std::path::{Path, PathBuf};

/// The lines of the reference source that hold one step's code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepCode {
    /// The step, 1 to 8.
    pub step: u8,
    /// The first line after the step's banner, from 1.
    pub first_line: usize,
    /// The last line before the next banner (or the file's end).
    pub last_line: usize,
    /// Those lines.
    pub text: &'static str,
}

/// The code of `step` in the reference store: the lines between its
/// `// Step N.` banner and the next banner. `None` for a step the
/// reference has no banner for.
pub fn step_code(step: u8) -> Option<StepCode> {
    let lines: Vec<&'static str> = REFERENCE_SOURCE.split_inclusive('\n').collect();
    let heading = format!("// Step {step}.");
    let banner = lines.iter().position(|line| line.starts_with(&heading))?;
    // A banner is a title between two rules, and rules appear in banners
    // only: the code starts after the second rule and ends before the rule
    // that opens the next banner (or at the file's end).
    let first = banner + 2;
    let end = (first..lines.len())
        .find(|&index| is_rule(lines[index]))
        .unwrap_or(lines.len());
    let start_byte: usize = lines[..first].iter().map(|line| line.len()).sum();
    let end_byte: usize = lines[..end].iter().map(|line| line.len()).sum();
    Some(StepCode {
        step,
        first_line: first + 1,
        last_line: end,
        text: &REFERENCE_SOURCE[start_byte..end_byte],
    })
}

fn is_rule(line: &str) -> bool {
    line.trim_end().starts_with("// ---")
}

/// A line of `step`'s code to offer as the fragment of a new mutant, trimmed:
/// the first line that decides something (an SQL statement or a
/// comparison), else the first statement of the step's code; always one
/// that occurs exactly once in the reference source.
pub fn suggested_fragment(step: u8) -> Option<&'static str> {
    fragment_in(step_code(step)?.text, REFERENCE_SOURCE, rust_statement)
}

/// Whether a trimmed line of Rust is a statement of its own: it ends with
/// `;`, and declares nothing at a module's level.
fn rust_statement(line: &str) -> bool {
    line.ends_with(';')
        && !["use ", "const ", "pub const ", "static "]
            .iter()
            .any(|start| line.starts_with(start))
}

/// Whether a trimmed line of Python is a simple statement of its own: it
/// opens no block and continues on no other line, and imports nothing.
fn python_statement(line: &str) -> bool {
    !line.ends_with([':', '(', '[', '{', ',', '\\'])
        && !["import ", "from ", ")", "]", "}"]
            .iter()
            .any(|start| line.starts_with(start))
}

/// The line of `code` to offer as a fragment (see [`suggested_fragment`]),
/// one that occurs exactly once in `source`: the first that decides
/// something, else the first that is a `statement` of its own.
fn fragment_in<'a>(code: &'a str, source: &str, statement: fn(&str) -> bool) -> Option<&'a str> {
    let candidates: Vec<&'a str> = code
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with("//") && !line.starts_with('#'))
        .filter(|line| source.matches(*line).count() == 1)
        .collect();
    let decides = |line: &&str| {
        const SQL: [&str; 5] = ["\"CREATE", "\"INSERT", "\"UPDATE", "\"SELECT", "\"DELETE"];
        const COMPARISONS: [&str; 6] = [" > ", " < ", " >= ", " <= ", " == ", " != "];
        SQL.iter()
            .chain(&COMPARISONS)
            .any(|mark| line.contains(mark))
    };
    let mut lines = candidates.iter().copied();
    lines
        .clone()
        .find(decides)
        .or_else(|| lines.find(|line| statement(line)))
}

/// Why a template cannot be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError(pub String);

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TemplateError {}

/// The code of `step` in `store`'s reference source ([`Subject::Rust`]'s
/// or [`Subject::Python`]'s; another subject's store is the one of its
/// exercises, [`Subject::exercise_store`]): in the Rust store the lines
/// under the step's banner ([`step_code`]), in the Python store the body
/// of the step's operation, after its docstring ([`python_step_code`]).
pub fn step_code_of(store: &Subject, step: u8) -> Option<StepCode> {
    match store.exercise_store() {
        Subject::Python => python_step_code(step),
        _ => step_code(step),
    }
}

/// The body of step `step`'s operation in the Python store, after its
/// docstring, up to the next line at the file's top level (the blank
/// lines before it left out). `None` for a step the worksheet lacks.
pub fn python_step_code(step: u8) -> Option<StepCode> {
    let name = crate::operation::NAMES.get(usize::from(step).checked_sub(1)?)?;
    let lines: Vec<&'static str> = PYTHON_SOURCE.split_inclusive('\n').collect();
    let def = lines
        .iter()
        .position(|line| line.starts_with(&format!("def {name}(")))?;
    // The docstring opens on the line after `def` and may end on it.
    let opening = lines.get(def + 1)?.trim();
    let mut closing = def + 1;
    if !(opening.len() > 3 && opening.ends_with("\"\"\"")) {
        closing += 1;
        while !lines.get(closing)?.trim_end().ends_with("\"\"\"") {
            closing += 1;
        }
    }
    let first = closing + 1;
    let mut end = (first..lines.len())
        .find(|&at| !lines[at].trim().is_empty() && !lines[at].starts_with(char::is_whitespace))
        .unwrap_or(lines.len());
    while end > first && lines[end - 1].trim().is_empty() {
        end -= 1;
    }
    let start_byte: usize = lines[..first].iter().map(|line| line.len()).sum();
    let end_byte: usize = lines[..end].iter().map(|line| line.len()).sum();
    Some(StepCode {
        step,
        first_line: first + 1,
        last_line: end,
        text: &PYTHON_SOURCE[start_byte..end_byte],
    })
}

/// The text of a new mutant file (kind `own`) of `store` (the Rust or the
/// Python store, as [`step_code_of`] takes it) for `step` with id `id`,
/// its fragment a line of the step's code (the first that decides
/// something, as [`suggested_fragment`] offers it) and its
/// replacement the same line, to be edited.
///
/// Until the replacement is changed the file is not a mutant, and
/// [`validate`] and the build both say so; the comments at its top tell
/// the student what to fill in.
pub fn template(step: u8, id: &str, store: &Subject) -> Result<String, TemplateError> {
    let code = step_code_of(store, step).ok_or_else(|| {
        TemplateError(format!(
            "there is no step {step}: the worksheet has steps 1 to 8"
        ))
    })?;
    let (file, source, statement, must, name): (_, _, fn(&str) -> bool, _, _) =
        match store.exercise_store() {
            Subject::Python => (
                PYTHON_STORE,
                PYTHON_SOURCE,
                python_statement,
                "still run",
                "python",
            ),
            _ => (
                MUTABLE_FILE,
                REFERENCE_SOURCE,
                rust_statement,
                "compile",
                "rust",
            ),
        };
    let fragment = fragment_in(code.text, source, statement).ok_or_else(|| {
        TemplateError(format!(
            "step {step}'s code has no line that occurs only once in {file}"
        ))
    })?;
    let title = crate::exercise::step_title(step);
    let mut out = String::new();
    writeln!(
        out,
        "# A mutant of your own for step {step}: {title}.\n\
         #\n\
         # 1. fragment: the exact text of {file} to break. It is a line of\n\
         #    step {step}'s code now (lines {first} to {last} of {file}); choose\n\
         #    any text of the file, copied with its spacing, long enough to occur\n\
         #    exactly once.\n\
         # 2. replacement: the broken text put in its place. It must {must}, and\n\
         #    it must change what the code does: a change of spacing or comments\n\
         #    is not a mutant.\n\
         # 3. title and explanation: what the broken code does, and which input,\n\
         #    error or stored state reveals it.\n\
         # 4. Check it with `lab mutant check FILE`: it says which tests kill it,\n\
         #    and from then on `lab matrix --impl {name}` shows it beside the\n\
         #    other mutants (no rebuild of lab). The id must stay the start of\n\
         #    the file's name.",
        first = code.first_line,
        last = code.last_line,
    )
    .unwrap();
    writeln!(out, "id = {}", toml_string(id)).unwrap();
    writeln!(out, "step = {step}").unwrap();
    writeln!(out, "kind = \"own\"").unwrap();
    writeln!(
        out,
        "title = \"TODO: what the broken code does, in one line\""
    )
    .unwrap();
    writeln!(out, "file = {}", toml_string(file)).unwrap();
    writeln!(out, "fragment = {}", toml_string(fragment)).unwrap();
    writeln!(out, "replacement = {}", toml_string(fragment)).unwrap();
    writeln!(
        out,
        "explanation = \"\"\"\nTODO: which input, error or stored state tells this mutant from the reference, and why the change breaks the contract of step {step}.\n\"\"\""
    )
    .unwrap();
    Ok(out)
}

/// A TOML string for `text`: a basic string (`"..."`) when it needs no
/// escape; else a literal string (`'''...'''`, which takes code as it is,
/// backslashes and quotes included) when it can hold the text; else an
/// escaped basic string.
fn toml_string(text: &str) -> String {
    let plain = !text.contains(|c: char| c == '"' || c == '\\' || c.is_control());
    // A literal string cannot hold three quotes in a row or end in one,
    // and TOML drops a line break that directly follows its opening quotes.
    let literal_fits = !text.contains("'''")
        && !text.ends_with('\'')
        && !text.starts_with('\n')
        && !text.contains('\r');
    if plain {
        format!("\"{text}\"")
    } else if literal_fits {
        format!("'''{text}'''")
    } else {
        toml::Value::String(text.to_string()).to_string()
    }
}

/// The first id `oNNx` (own mutant of step NN, x from a to z) that no
/// mutant of this lab binary and no file in `folder` uses yet.
pub fn free_id(step: u8, folder: &Path) -> Option<String> {
    let taken = ids_in(folder);
    ('a'..='z')
        .map(|letter| format!("o{step:02}{letter}"))
        .find(|id| variant::compiled_mutant(id).is_none() && !taken.contains(id))
}

/// The ids that the mutant files in `folder` are named with.
fn ids_in(folder: &Path) -> Vec<String> {
    mutant_files(folder)
        .unwrap_or_default()
        .iter()
        .filter_map(|path| path.file_name()?.to_str())
        .filter_map(id_of_file_name)
        .map(str::to_string)
        .collect()
}

/// Why [`new_file`] wrote no mutant file.
#[derive(Debug, thiserror::Error)]
pub enum NewFileError {
    /// The step has no template: the worksheet has no such step, or its
    /// code has no line to offer as the fragment.
    #[error(transparent)]
    Template(#[from] TemplateError),
    /// Every id the step's mutants of one's own can have (`oNNa` to `oNNz`)
    /// is taken in the folder.
    #[error("every id from o{step:02}a to o{step:02}z is taken in {}", .folder.display())]
    IdsTaken {
        /// The step.
        step: u8,
        /// The folder of mutant files.
        folder: PathBuf,
    },
    /// The folder could not be made, or the file in it not written.
    #[error("cannot write a mutant file in {}: {source}", .folder.display())]
    Write {
        /// The folder of mutant files.
        folder: PathBuf,
        /// What failed.
        source: io::Error,
    },
}

/// Writes a template of `store` for `step` ([`template`]) into `folder`
/// as `ID-own.toml`, the id from [`free_id`], and returns its path. Never
/// overwrites a file.
pub fn new_file(folder: &Path, step: u8, store: &Subject) -> Result<PathBuf, NewFileError> {
    let write = |source: io::Error| NewFileError::Write {
        folder: folder.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(folder).map_err(write)?;
    let id = free_id(step, folder).ok_or_else(|| NewFileError::IdsTaken {
        step,
        folder: folder.to_path_buf(),
    })?;
    let text = template(step, &id, store)?;
    let path = folder.join(format!("{id}-own.toml"));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .and_then(|mut file| io::Write::write_all(&mut file, text.as_bytes()))
        .map_err(write)?;
    Ok(path)
}

/// A mutant file that passed [`validate`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Validated {
    /// Its contents.
    pub spec: MutantSpec,
    /// Its file name.
    pub file_name: String,
    /// Things to finish that do not stop it from being a mutant, such as a
    /// title still reading TODO.
    pub notes: Vec<String>,
}

/// Checks a mutant file without building it: it reads as a mutant file
/// ([`MutantSpec::parse`]: name, id, step, file), its fragment occurs
/// exactly once in the store it changes (the Rust or the Python one), its
/// replacement changes code rather than only spacing or comments, and no
/// other mutant (of this binary, or another file in its folder) has its id.
///
/// The stores are those this binary was built with.
pub fn validate(path: &Path) -> Result<Validated, SpecError> {
    let file_name = path.file_name().map_or_else(
        || path.display().to_string(),
        |name| name.to_string_lossy().into_owned(),
    );
    let error = |reason: String| SpecError {
        file_name: file_name.clone(),
        reason,
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| error(format!("cannot read {}: {e}", path.display())))?;
    let spec = MutantSpec::parse(&file_name, &text)?;
    let (original, code): (&str, fn(&str) -> String) = if spec.file == PYTHON_STORE {
        (PYTHON_SOURCE, python_code_of)
    } else {
        (REFERENCE_SOURCE, code_of)
    };
    let mutated = spec.apply(&file_name, original)?;
    if code(&mutated) == code(original) {
        return Err(error(
            "its replacement changes only spacing or comments: it runs as the reference itself, so no test could ever kill it; change what the code does".into(),
        ));
    }
    let built_in = variant::MUTANTS
        .iter()
        .map(|mutant| (mutant.id, mutant.file_name))
        .chain(subject::PYTHON_MUTANT_FILES.iter().map(|file| {
            (
                file.file_name.split('-').next().unwrap_or(""),
                file.file_name,
            )
        }))
        .find(|(id, other)| *id == spec.id && *other != file_name);
    if let Some((_, other)) = built_in {
        return Err(error(format!(
            "the id {:?} is taken by {other}; choose another id and rename the file to match",
            spec.id
        )));
    }
    if let Some(folder) = path.parent() {
        let clash = std::fs::read_dir(folder)
            .into_iter()
            .flatten()
            .filter_map(|entry| entry.ok())
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .filter(|name| *name != file_name)
            .find(|name| id_of_file_name(name) == Some(spec.id.as_str()));
        if let Some(other) = clash {
            return Err(error(format!(
                "the id {:?} is taken by {other} in the same folder; choose another id and rename the file to match",
                spec.id
            )));
        }
    }
    let notes = [("title", &spec.title), ("explanation", &spec.explanation)]
        .iter()
        .filter(|(_, value)| value.contains("TODO"))
        .map(|(field, _)| format!("its {field} still says TODO: say what the change breaks"))
        .collect();
    Ok(Validated {
        spec,
        file_name,
        notes,
    })
}

/// Python source as the interpreter runs it, roughly: comments and blank
/// lines removed and trailing spaces trimmed. Indentation stays, since in
/// Python it is code; so do strings, where a `#` is not a comment.
fn python_code_of(source: &str) -> String {
    let mut code = String::with_capacity(source.len());
    for line in source.lines() {
        let mut kept = String::new();
        let mut quote: Option<char> = None;
        for c in line.chars() {
            match (quote, c) {
                (None, '#') => break,
                (None, '"' | '\'') => quote = Some(c),
                (Some(open), _) if c == open => quote = None,
                _ => {}
            }
            kept.push(c);
        }
        let kept = kept.trim_end();
        if !kept.is_empty() {
            code.push_str(kept);
            code.push('\n');
        }
    }
    code
}

/// The source as the compiler sees it, roughly: comments removed, and
/// whitespace kept only where it separates two words. Strings and
/// characters are kept whole, since a change inside them changes the
/// program.
fn code_of(source: &str) -> String {
    let mut code = String::with_capacity(source.len());
    let mut chars = source.chars().peekable();
    let mut pending_space = false;
    let word = |c: char| c.is_alphanumeric() || c == '_';
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
                pending_space = true;
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                skip_block_comment(&mut chars);
                pending_space = true;
            }
            c if c.is_whitespace() => pending_space = true,
            '"' => {
                code.push('"');
                let mut escaped = false;
                for c in chars.by_ref() {
                    code.push(c);
                    if c == '"' && !escaped {
                        break;
                    }
                    escaped = c == '\\' && !escaped;
                }
                pending_space = false;
            }
            c => {
                if pending_space && code.chars().next_back().is_some_and(word) && word(c) {
                    code.push(' ');
                }
                code.push(c);
                pending_space = false;
            }
        }
    }
    code
}

/// Skips a `/* ... */` comment (after its opening), nested ones included.
fn skip_block_comment(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    let mut depth = 1;
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('*', Some('/')) => {
                chars.next();
                depth -= 1;
                if depth == 0 {
                    return;
                }
            }
            ('/', Some('*')) => {
                chars.next();
                depth += 1;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests;
