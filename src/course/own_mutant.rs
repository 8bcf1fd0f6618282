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
use crate::subject::{self, PYTHON_SOURCE};
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
    fragment_in(step_code(step)?.text, REFERENCE_SOURCE)
}

/// The line of `code` to offer as a fragment (see [`suggested_fragment`]),
/// one that occurs exactly once in `source`.
fn fragment_in<'a>(code: &'a str, source: &str) -> Option<&'a str> {
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
    let statement = |line: &&str| {
        line.ends_with(';')
            && !["use ", "const ", "pub const ", "static "]
                .iter()
                .any(|start| line.starts_with(start))
    };
    let mut lines = candidates.iter().copied();
    lines
        .clone()
        .find(decides)
        .or_else(|| lines.find(statement))
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

/// The text of a new mutant file (kind `own`) for `step` with id `id`,
/// its fragment a line of the step's code ([`suggested_fragment`]) and
/// its replacement the same line, to be edited.
///
/// Until the replacement is changed the file is not a mutant, and
/// [`validate`] and the build both say so; the comments at its top tell
/// the student what to fill in.
pub fn template(step: u8, id: &str) -> Result<String, TemplateError> {
    let code = step_code(step).ok_or_else(|| {
        TemplateError(format!(
            "there is no step {step}: the worksheet has steps 1 to 8"
        ))
    })?;
    let fragment = suggested_fragment(step).ok_or_else(|| {
        TemplateError(format!(
            "step {step}'s code has no line that occurs only once in {MUTABLE_FILE}"
        ))
    })?;
    let title = crate::exercise::step_title(step);
    let mut out = String::new();
    writeln!(
        out,
        "# A mutant of your own for step {step}: {title}.\n\
         #\n\
         # 1. fragment: the exact text of {MUTABLE_FILE} to break. It is a line of\n\
         #    step {step}'s code now (lines {first} to {last} of {MUTABLE_FILE}); choose\n\
         #    any text of the file, copied with its spacing, long enough to occur\n\
         #    exactly once.\n\
         # 2. replacement: the broken text put in its place. It must compile, and it\n\
         #    must change what the code does: a change of spacing or comments is not\n\
         #    a mutant.\n\
         # 3. title and explanation: what the broken code does, and which input,\n\
         #    error or stored state reveals it.\n\
         # 4. Check it with `lab mutant check FILE`: it says which tests kill it,\n\
         #    and from then on `lab matrix` shows it beside the other mutants (no\n\
         #    rebuild of lab). The id must stay the start of the file's name.",
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
    writeln!(out, "file = {}", toml_string(MUTABLE_FILE)).unwrap();
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

/// Writes a template for `step` into `folder` as `ID-own.toml`, the id from
/// [`free_id`], and returns its path. Never overwrites a file.
pub fn new_file(folder: &Path, step: u8) -> Result<PathBuf, NewFileError> {
    let write = |source: io::Error| NewFileError::Write {
        folder: folder.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(folder).map_err(write)?;
    let id = free_id(step, folder).ok_or_else(|| NewFileError::IdsTaken {
        step,
        folder: folder.to_path_buf(),
    })?;
    let text = template(step, &id)?;
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
mod tests {
    use super::*;

    #[test]
    fn every_step_has_code_and_a_fragment_from_it() {
        for step in 1..=8 {
            let code = step_code(step).expect("every step has a banner");
            let fragment = suggested_fragment(step).expect("every step has a fragment");
            assert!(code.text.contains(fragment), "step {step}: {fragment}");
            assert_eq!(REFERENCE_SOURCE.matches(fragment).count(), 1);
            let first = REFERENCE_SOURCE.lines().nth(code.first_line - 1).unwrap();
            assert!(code.text.starts_with(first));
        }
        assert_eq!(step_code(9), None);
    }

    /// A step's code runs from after its banner to the rule that opens
    /// the next one; the last step's, to the file's end.
    #[test]
    fn a_steps_code_ends_where_the_next_banner_begins() {
        let lines: Vec<&str> = REFERENCE_SOURCE.lines().collect();
        for step in 1..=8 {
            let code = step_code(step).unwrap();
            assert!(!code.text.contains("// ---"), "step {step}");
            assert_eq!(
                code.text.lines().count(),
                code.last_line + 1 - code.first_line
            );
            if step < 8 {
                assert!(is_rule(lines[code.last_line]), "step {step}");
                let next = format!("// Step {}.", step + 1);
                assert!(lines[code.last_line + 1].starts_with(&next), "step {step}");
            } else {
                assert_eq!(code.last_line, lines.len());
            }
        }
    }

    /// A fragment is a line of code that decides something, else the
    /// first statement; never a comment, an import or a constant, and
    /// never a line that occurs twice in the source.
    #[test]
    fn a_fragment_is_a_deciding_line_else_a_statement_occurring_once() {
        let code = "// a > b decides\n    let a = 1;\n    if a > b {\n";
        assert_eq!(fragment_in(code, code), Some("if a > b {"));
        let code = "use x;\nconst N: u8 = 1;\nfoo(1)\nlet b = 2;\nlet c = 3;\n";
        assert_eq!(fragment_in(code, code), Some("let b = 2;"));
        let source = format!("{code}let b = 2;\n");
        assert_eq!(fragment_in(code, &source), Some("let c = 3;"));
        assert_eq!(fragment_in("foo(1)\n# note\n", "foo(1)\n# note\n"), None);
    }

    #[test]
    fn a_template_for_a_step_the_worksheet_lacks_says_which_steps_it_has() {
        assert_eq!(
            template(9, "o09a").unwrap_err().to_string(),
            "there is no step 9: the worksheet has steps 1 to 8"
        );
    }

    #[test]
    fn the_fragment_offered_is_the_decision_where_there_is_one() {
        assert_eq!(suggested_fragment(4), Some("if done || held_until > now {"));
        assert!(suggested_fragment(2).unwrap().contains("INSERT OR IGNORE"));
        assert!(suggested_fragment(7)
            .unwrap()
            .contains("UPDATE jobs SET owner = NULL"));
    }

    #[test]
    fn code_ignores_spacing_and_comments_but_not_strings() {
        let a = "fn f() { let x = 1; // one\n  x > 0 }";
        assert_eq!(
            code_of(a),
            code_of("fn f(){let x=1;/* a /* nested */ note */ x>0}")
        );
        assert_ne!(code_of(a), code_of("fn f() { let x = 1; x >= 0 }"));
        assert_ne!(code_of("s(\"a b\")"), code_of("s(\"ab\")"));
        assert_ne!(code_of("let x"), code_of("letx"));
        assert_ne!(code_of("x = a / b;"), code_of("x = a / c;"));
        // An escaped quote does not end a string; an escaped backslash
        // before the closing quote does not keep it open.
        assert_ne!(code_of(r#"s("a\" b")"#), code_of(r#"s("a\"  b")"#));
        assert_eq!(code_of(r#"s("a\\")  ;"#), code_of(r#"s("a\\");"#));
    }

    /// Texts that neither plain quotes nor a literal string can hold.
    const NEED_ESCAPES: [&str; 4] = [
        "a '''b\" c",
        "ends with \"it\" '",
        "\nafter \"a\" break",
        "a\r\"b\"",
    ];

    #[test]
    fn toml_strings_read_back_as_the_same_text() {
        for text in [
            "plain",
            "it's",
            "say \"hi\"",
            "back\\slash",
            "a '''b''' c",
            "ends with '",
            "two\nlines",
            "\nafter a break",
        ]
        .into_iter()
        .chain(NEED_ESCAPES)
        {
            let line = format!("value = {}", toml_string(text));
            let table: toml::Table = toml::from_str(&line).unwrap();
            assert_eq!(table["value"].as_str(), Some(text), "{line}");
        }
    }

    /// Each text in the most readable form that holds it: plain quotes,
    /// else a literal string (code as it is), else a basic string with escapes.
    #[test]
    fn toml_strings_take_the_most_readable_form() {
        assert_eq!(toml_string("plain"), r#""plain""#);
        assert_eq!(toml_string(r#"say "hi""#), r#"'''say "hi"'''"#);
        assert_eq!(toml_string(r"back\slash"), r"'''back\slash'''");
        assert_eq!(toml_string("two\nlines"), "'''two\nlines'''");
        for escaped in NEED_ESCAPES {
            let shown = toml_string(escaped);
            assert!(shown.starts_with('"'), "a basic string: {shown}");
        }
    }

    /// Writes `text` as `name` in a new folder and validates it.
    fn validate_text(name: &str, text: &str) -> Result<Validated, SpecError> {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join(name);
        std::fs::write(&path, text).unwrap();
        validate(&path)
    }

    #[test]
    fn a_template_needs_its_replacement_edited_and_then_validates() {
        for step in 1..=8 {
            let text = template(step, "o01a").unwrap();
            let error = validate_text("o01a-own.toml", &text).unwrap_err();
            assert!(error.reason.contains("same as its fragment"), "{error}");
        }
        let text = template(4, "o04a").unwrap();
        let edited = text.replacen(
            "replacement = \"if done || held_until > now {\"",
            "replacement = \"if held_until > now {\"",
            1,
        );
        assert_ne!(edited, text, "the template offers step 4's comparison");
        let valid = validate_text("o04a-own.toml", &edited).unwrap();
        assert_eq!(valid.spec.step, 4);
        assert_eq!(
            valid.notes,
            [
                "its title still says TODO: say what the change breaks",
                "its explanation still says TODO: say what the change breaks"
            ]
        );
    }

    fn own(id: &str, fragment: &str, replacement: &str) -> String {
        format!(
            "id = \"{id}\"\nstep = 4\nkind = \"own\"\ntitle = \"t\"\nfile = \"src/store.rs\"\nfragment = {}\nreplacement = {}\nexplanation = \"e\"\n",
            toml_string(fragment),
            toml_string(replacement)
        )
    }

    #[test]
    fn validation_refuses_what_the_build_would_refuse_or_no_test_could_kill() {
        let missing = validate_text("o04a-x.toml", &own("o04a", "no such text", "x")).unwrap_err();
        assert!(missing.reason.contains("does not occur"), "{missing}");
        let twice =
            validate_text("o04a-x.toml", &own("o04a", "check_job_id(job_id)?;", "")).unwrap_err();
        assert!(twice.reason.contains("times"), "{twice}");
        let spacing = validate_text(
            "o04a-x.toml",
            &own(
                "o04a",
                "if done || held_until > now {",
                "if done||held_until>now { // same",
            ),
        )
        .unwrap_err();
        assert!(
            spacing.reason.contains("only spacing or comments"),
            "{spacing}"
        );
        let taken = validate_text(
            "04-mine.toml",
            &own(
                "04",
                "if done || held_until > now {",
                "if held_until > now {",
            ),
        )
        .unwrap_err();
        assert!(
            taken.reason.contains("taken by 04-claim-boundary.toml"),
            "{taken}"
        );
    }

    #[test]
    fn validation_refuses_an_id_that_another_file_in_the_folder_has() {
        let folder = tempfile::tempdir().unwrap();
        let body = own(
            "o04a",
            "if done || held_until > now {",
            "if held_until > now {",
        );
        std::fs::write(folder.path().join("o04a-first.toml"), &body).unwrap();
        let second = folder.path().join("o04a-second.toml");
        std::fs::write(&second, &body).unwrap();
        let error = validate(&second).unwrap_err();
        assert!(error.reason.contains("taken by o04a-first.toml"), "{error}");
    }

    #[test]
    fn the_built_in_mutant_files_validate_the_rust_and_the_python_ones() {
        let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("mutants");
        for name in ["04-claim-boundary.toml", "py04-claim-boundary.toml"] {
            let valid = validate(&folder.join(name)).unwrap();
            assert!(valid.notes.is_empty(), "{name}");
        }
    }

    #[test]
    fn python_code_ignores_comments_and_blank_lines_but_not_indentation_or_strings() {
        let a = "def f():\n    x = 1  # one\n\n    return x > 0\n";
        assert_eq!(
            python_code_of(a),
            python_code_of("def f():\n    x = 1\n    return x > 0   \n# done\n")
        );
        assert_ne!(
            python_code_of(a),
            python_code_of("def f():\n    x = 1\nreturn x > 0\n")
        );
        assert_ne!(python_code_of("s = '#a'\n"), python_code_of("s = '#b'\n"));
        assert_ne!(python_code_of("s = 'x#a'\n"), python_code_of("s = 'x#b'\n"));
        assert_eq!(
            python_code_of("s = \"it's\"  # one\n"),
            python_code_of("s = \"it's\"  # two\n")
        );
    }

    #[test]
    fn new_files_take_the_next_free_id_and_never_overwrite() {
        let folder = tempfile::tempdir().unwrap();
        let first = new_file(folder.path(), 5).unwrap();
        let second = new_file(folder.path(), 5).unwrap();
        assert!(first.ends_with("o05a-own.toml"), "{}", first.display());
        assert!(second.ends_with("o05b-own.toml"), "{}", second.display());
        let text = std::fs::read_to_string(&first).unwrap();
        assert!(text.contains("id = \"o05a\""), "{text}");
        let error = new_file(folder.path(), 9).unwrap_err();
        assert!(matches!(error, NewFileError::Template(_)), "{error:?}");
        assert_eq!(
            error.to_string(),
            "there is no step 9: the worksheet has steps 1 to 8"
        );
    }

    #[test]
    fn a_new_file_needs_a_free_id_and_a_folder_it_can_write_in() {
        let folder = tempfile::tempdir().unwrap();
        for letter in 'a'..='z' {
            std::fs::write(folder.path().join(format!("o05{letter}-x.toml")), "").unwrap();
        }
        let error = new_file(folder.path(), 5).unwrap_err();
        assert!(
            matches!(error, NewFileError::IdsTaken { step: 5, .. }),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            format!(
                "every id from o05a to o05z is taken in {}",
                folder.path().display()
            )
        );
        assert!(
            new_file(folder.path(), 6).is_ok(),
            "another step's ids are free"
        );
        let blocked = folder.path().join("blocked");
        std::fs::write(&blocked, "a file, not a folder").unwrap();
        let error = new_file(&blocked, 5).unwrap_err();
        assert!(matches!(error, NewFileError::Write { .. }), "{error:?}");
        let shown = error.to_string();
        let start = format!("cannot write a mutant file in {}: ", blocked.display());
        assert!(shown.starts_with(&start), "{shown}");
        let inner = std::fs::create_dir_all(&blocked).unwrap_err();
        assert_eq!(shown, format!("{start}{inner}"));
    }
}
