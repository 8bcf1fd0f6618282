//! An exercise's text in `labs/`: one markdown source for both of the
//! student's languages, split into its sections.
//!
//! Where the Rust and the Python store say a thing differently (a
//! signature, `Ok(true)` and `True`, an `InvalidArgument` error and a
//! `ValueError`), the source marks the two wordings and the lab shows the
//! student's:
//!
//! - inline, `{rust: Ok(Some(1)) | python: 1}`: the text after `rust:` for
//!   the Rust store, after `python:` for Python (braces inside are
//!   allowed when they pair up, as in `Job { .. }`);
//! - a fenced code block whose info string is `rust` or `python` is shown
//!   only in that language (its fence then shown plain), one with none in
//!   both.
//!
//! Everything else is the same in both languages.

/// The language a student's store is written in, which decides how the
/// contract is worded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Language {
    /// One file, standard library only, in the worksheet's idiom.
    Python,
    /// A small cargo project on rusqlite, or the lab's own store.
    Rust,
}

impl Language {
    /// The language of a store's source file: Python for a `.py` file,
    /// Rust for anything else.
    pub fn of_file(file: &str) -> Language {
        if file.ends_with(".py") {
            Language::Python
        } else {
            Language::Rust
        }
    }

    /// The word that marks this language's parts of a text: `rust`, `python`.
    pub fn tag(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::Rust => "rust",
        }
    }

    /// The language a marker names, if it names one.
    fn tagged(tag: &str) -> Option<Language> {
        [Language::Rust, Language::Python]
            .into_iter()
            .find(|language| language.tag() == tag)
    }
}

/// The parts of a step's text in `labs/`, by heading.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabSections {
    /// What comes before the first `## ` heading.
    pub introduction: String,
    /// `## Contract`.
    pub contract: String,
    /// `## Why it matters`.
    pub why: String,
    /// `## Predict before you run`.
    pub predict: String,
    /// `## Hint 1`, `## Hint 2`, ... in order.
    pub hints: Vec<String>,
    /// `## After the run`.
    pub after: String,
    /// `## Closing reflection`: example answers to the worksheet's closing
    /// questions, shown only once the student has answered them.
    pub closing: String,
}

/// Splits a lab text, in `language`, into its sections. The `# ` title is
/// left out (see [`crate::exercise::step_title`]); unknown headings are
/// kept with the introduction, so nothing the author wrote is lost.
pub fn parse_lab(text: &str, language: Language) -> LabSections {
    let text = in_language(text, language);
    let mut sections = LabSections::default();
    let mut heading: Option<String> = None;
    let mut body = String::new();
    let flush = |heading: &Option<String>, body: &mut String, sections: &mut LabSections| {
        let text = body.trim().to_string();
        body.clear();
        match heading.as_deref() {
            None => sections.introduction = text,
            Some("Contract") => sections.contract = text,
            Some("Why it matters") => sections.why = text,
            Some("Predict before you run") => sections.predict = text,
            Some("After the run") => sections.after = text,
            Some("Closing reflection") => sections.closing = text,
            Some(other) if other.starts_with("Hint") => sections.hints.push(text),
            Some(other) => {
                sections.introduction =
                    format!("{}\n\n{other}\n\n{text}", sections.introduction.trim_end());
            }
        }
    };
    for line in text.lines() {
        if line.starts_with("# ") {
            continue;
        }
        if let Some(next) = line.strip_prefix("## ") {
            flush(&heading, &mut body, &mut sections);
            heading = Some(next.trim().to_string());
        } else {
            body.push_str(line);
            body.push('\n');
        }
    }
    flush(&heading, &mut body, &mut sections);
    sections
}

/// `text` as a student of `language` reads it: the code blocks of the
/// other language left out, each inline choice replaced by this
/// language's wording, and the blank lines a left-out block leaves
/// behind made one.
pub fn in_language(text: &str, language: Language) -> String {
    let mut kept = String::new();
    // Inside a fenced block: whether it is shown.
    let mut block: Option<bool> = None;
    for line in text.lines() {
        let fence = line.trim_start().strip_prefix("```");
        let shown = match (fence, block) {
            (Some(info), None) => {
                let tagged = Language::tagged(info.trim());
                let shown = tagged.is_none_or(|tagged| tagged == language);
                block = Some(shown);
                if shown && tagged.is_some() {
                    let indent = &line[..line.len() - line.trim_start().len()];
                    kept.push_str(indent);
                    kept.push_str("```\n");
                    continue;
                }
                shown
            }
            (Some(_), Some(shown)) => {
                block = None;
                shown
            }
            (None, shown) => shown.unwrap_or(true),
        };
        if shown {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    let chosen = choose_inline(&kept, language);
    let mut out = String::new();
    for line in chosen.lines() {
        if !(line.trim().is_empty() && out.ends_with("\n\n")) {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// `text` with every `{rust: A | python: B}` replaced by `language`'s part.
/// A marker left open is kept as it is written (the test of every lab text
/// finds it).
fn choose_inline(text: &str, language: Language) -> String {
    const OPEN: &str = "{rust:";
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(OPEN) {
        out.push_str(&rest[..at]);
        let inside = &rest[at + 1..];
        let Some(end) = closing_brace(inside) else {
            out.push_str(&rest[at..]);
            return out;
        };
        match wording(&inside[..end], language) {
            Some(wording) => out.push_str(wording),
            None => out.push_str(&rest[at..at + end + 2]),
        }
        rest = &inside[end + 1..];
    }
    out.push_str(rest);
    out
}

/// Where the brace that closes a choice is in `inside` (the text after its
/// `{`): the first `}` not paired with a `{` before it.
fn closing_brace(inside: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (at, c) in inside.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return Some(at),
            '}' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// `language`'s wording in a choice, `rust: A | python: B`; `None` unless
/// it has both languages' parts.
fn wording(choice: &str, language: Language) -> Option<&str> {
    let (rust, python) = choice.split_once(" | python:")?;
    let rust = rust.strip_prefix("rust:")?;
    Some(match language {
        Language::Rust => rust.trim(),
        Language::Python => python.trim(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_inline_choice_shows_the_student_s_language() {
        let text = "returns {rust: `Ok(Some(fence))` | python: the fence}, else {rust: `Ok(None)` | python: `None`}.\n";
        assert_eq!(
            in_language(text, Language::Rust),
            "returns `Ok(Some(fence))`, else `Ok(None)`.\n"
        );
        assert_eq!(
            in_language(text, Language::Python),
            "returns the fence, else `None`.\n"
        );
        assert_eq!(
            in_language(
                "a {rust: Job { id, .. } | python: a dict} here\n",
                Language::Rust
            ),
            "a Job { id, .. } here\n"
        );
    }

    #[test]
    fn a_choice_may_span_lines_and_a_broken_one_is_kept_as_written() {
        assert_eq!(
            in_language("x {rust: one\ntwo | python: three} y\n", Language::Rust),
            "x one\ntwo y\n"
        );
        for broken in ["x {rust: open\n", "x {rust: no python} y\n"] {
            assert_eq!(in_language(broken, Language::Python), broken);
        }
    }

    #[test]
    fn a_tagged_code_block_shows_only_in_its_language_with_a_plain_fence() {
        let text = "Try:\n\n```rust\nclaim() -> Ok(Some(1))\n```\n\n```python\nclaim() -> 1\n```\n\n```\nboth\n```\nEnd.\n";
        assert_eq!(
            in_language(text, Language::Rust),
            "Try:\n\n```\nclaim() -> Ok(Some(1))\n```\n\n```\nboth\n```\nEnd.\n"
        );
        assert_eq!(
            in_language(text, Language::Python),
            "Try:\n\n```\nclaim() -> 1\n```\n\n```\nboth\n```\nEnd.\n"
        );
    }

    #[test]
    fn a_lab_text_splits_into_its_sections() {
        let lab = parse_lab(
            "# Step 9: Title\nintro\n## Contract\nc {rust: r | python: p}\n## Odd\no\n## Hint 1\nh1\n## Hint 2\nh2\n## After the run\na\n## Closing reflection\nz\n",
            Language::Python,
        );
        assert_eq!(lab.introduction, "intro\n\nOdd\n\no");
        assert_eq!(lab.contract, "c p");
        assert_eq!(lab.hints, ["h1", "h2"]);
        assert_eq!(lab.after, "a");
        assert_eq!(lab.closing, "z");
    }

    #[test]
    fn a_store_s_language_is_that_of_its_file() {
        assert_eq!(Language::of_file("src/store.py"), Language::Python);
        assert_eq!(Language::of_file("src/store.rs"), Language::Rust);
        assert_eq!(Language::of_file("py"), Language::Rust);
    }
}
