//! The terminal: whether to colour, how wide to write, and the text, the
//! coloured diffs and the failed checks that the lab's screens share.

use colored::Colorize;
use similar::{ChangeTag, TextDiff};
use std::fmt::Write as _;
use std::io::IsTerminal;

/// When to colour the output, as given to `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour when stdout is a terminal and `NO_COLOR` is not set.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// Whether to colour, given the choice, `NO_COLOR` and whether stdout is a terminal.
pub fn use_color(choice: ColorChoice, no_color: bool, terminal: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => terminal && !no_color,
    }
}

/// Applies the colour choice to everything printed afterwards.
pub fn apply_color(choice: ColorChoice) {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|value| !value.is_empty());
    let on = use_color(choice, no_color, std::io::stdout().is_terminal());
    colored::control::set_override(on);
}

/// The width to write for: `COLUMNS` when it holds a number, else the
/// terminal's columns when standard output is a terminal, else 80; never
/// under 40.
pub fn width() -> usize {
    let terminal = terminal_size::terminal_size_of(std::io::stdout())
        .map(|(terminal_size::Width(columns), _)| usize::from(columns));
    width_of(std::env::var("COLUMNS").ok().as_deref(), terminal)
}

/// The width [`width`] picks from `COLUMNS` and the terminal's columns.
pub fn width_of(columns: Option<&str>, terminal: Option<usize>) -> usize {
    columns
        .and_then(|text| text.trim().parse::<usize>().ok())
        .filter(|&columns| columns > 0)
        .or(terminal)
        .unwrap_or(80)
        .max(40)
}

/// The width for running text: the terminal's, but no wider than 100
/// columns, which is easier to read.
pub fn text_width() -> usize {
    width().min(100)
}

/// `text` filled to `width` columns, broken only at spaces (never inside
/// a word, nor at a hyphen: a test name longer than the line stays whole),
/// its first line indented by `first` and the others by `rest`.
pub fn fill(text: &str, width: usize, first: &str, rest: &str) -> String {
    let options = textwrap::Options::new(width)
        .initial_indent(first)
        .subsequent_indent(rest)
        .break_words(false)
        .word_separator(textwrap::WordSeparator::AsciiSpace)
        .word_splitter(textwrap::WordSplitter::NoHyphenation);
    textwrap::fill(text, options)
}

/// `line` cut to `width` columns, its end marked `...` when something was
/// cut: for lines whose spacing means something (a traceback's caret
/// under the column it points at), which filling would move. The mark is
/// ASCII, so that the line is no wider in bytes than in columns.
pub fn cut(line: &str, width: usize) -> String {
    const MARK: &str = "...";
    if textwrap::core::display_width(line) <= width {
        return line.to_string();
    }
    let room = width.saturating_sub(MARK.len());
    let mut kept = String::new();
    let mut used = 0;
    for c in line.chars() {
        let wide = textwrap::core::display_width(c.encode_utf8(&mut [0; 4]));
        if used + wide > room {
            break;
        }
        used += wide;
        kept.push(c);
    }
    kept + MARK
}

/// Each line of `text` filled to `width` on its own, its continuation
/// lines indented two columns past the line's own indentation.
pub fn fill_lines(text: &str, width: usize) -> String {
    text.split('\n')
        .map(|line| {
            let body = line.trim_start();
            let indent = &line[..line.len() - body.len()];
            fill(body, width, indent, &format!("{indent}  "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Lab text (Markdown as `labs/` writes it) wrapped again at `width`:
/// paragraphs and list items are refilled, their continuation lines
/// indented under the item's text; indented lines are kept as they are,
/// and so are the lines of a fenced code block, its fences (Markdown's
/// markup, not text) left out.
pub fn reflow(text: &str, width: usize) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut paragraph: Vec<&str> = Vec::new();
    let mut in_code = false;
    let flush = |paragraph: &mut Vec<&str>, out: &mut Vec<String>| {
        if paragraph.is_empty() {
            return;
        }
        let joined = paragraph.join(" ");
        let rest = if joined.starts_with("- ") { "  " } else { "" };
        out.push(fill(&joined, width, "", rest));
        paragraph.clear();
    };
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            flush(&mut paragraph, &mut out);
            in_code = !in_code;
        } else if in_code
            || line.starts_with("  ") && !line.trim_start().is_empty() && paragraph.is_empty()
        {
            out.push(line.to_string());
        } else if line.trim().is_empty() {
            flush(&mut paragraph, &mut out);
            out.push(String::new());
        } else if line.starts_with("- ") {
            flush(&mut paragraph, &mut out);
            paragraph.push(line);
        } else {
            paragraph.push(line.trim());
        }
    }
    flush(&mut paragraph, &mut out);
    out.join("\n")
}

/// The changed lines of `new` against `old` with `context` lines around
/// each change, as a student sees a mutant before predicting: code only.
/// Comment lines of the context (`comment` starts them) are left out, since
/// the reference's comments may explain the very bug; each hunk is headed
/// by where it is in `file`.
///
/// A line wider than `width` is broken at a space, its continuation
/// indented four columns past the line's own indentation, as code is.
pub fn code_diff(
    old: &str,
    new: &str,
    file: &str,
    comment: &str,
    context: usize,
    width: usize,
) -> String {
    let diff = TextDiff::from_lines(old, new);
    diff_hunks(&diff, diff.grouped_ops(context), file, comment, width)
}

/// The changed lines of `new` against `old` and nothing around them, but
/// for the lines between two changes at most `BETWEEN` (four) lines apart, which
/// are one hunk: a line moved past another shows what it was moved past.
/// Otherwise as [`code_diff`] with no context.
pub fn code_change(old: &str, new: &str, file: &str, comment: &str, width: usize) -> String {
    let diff = TextDiff::from_lines(old, new);
    let hunks = diff
        .grouped_ops(BETWEEN / 2)
        .into_iter()
        .map(|group| {
            let changed = |op: &&similar::DiffOp| op.tag() != similar::DiffTag::Equal;
            let first = group.iter().position(|op| changed(&op));
            let last = group.iter().rposition(|op| changed(&op));
            match (first, last) {
                (Some(first), Some(last)) => group[first..=last].to_vec(),
                _ => Vec::new(),
            }
        })
        .collect();
    diff_hunks(&diff, hunks, file, comment, width)
}

/// How many unchanged lines may lie between two changes that
/// [`code_change`] shows as one hunk.
const BETWEEN: usize = 4;

/// The hunks of `diff`, each headed by where it starts in `file`, without
/// the comment lines of its unchanged lines.
fn diff_hunks(
    diff: &TextDiff<'_, '_, '_, str>,
    hunks: Vec<Vec<similar::DiffOp>>,
    file: &str,
    comment: &str,
    width: usize,
) -> String {
    let mut out = String::new();
    for group in hunks {
        let Some(first) = group.first() else { continue };
        let start = first.old_range().start + 1;
        writeln!(out, "{}", format!("{file}, line {start}:").cyan()).unwrap();
        let shown = group
            .iter()
            .flat_map(|op| diff.iter_changes(op))
            .filter(|change| {
                change.tag() != ChangeTag::Equal
                    || !change.value().trim_start().starts_with(comment)
            });
        for change in shown {
            writeln!(out, "{}", diff_line(change.tag(), change.value(), width)).unwrap();
        }
    }
    out
}

/// One line of a diff: `-` and red for a deleted line, `+` and green for
/// an inserted one, a space for context; broken to fit `width`, each of
/// its lines marked.
fn diff_line(tag: ChangeTag, text: &str, width: usize) -> String {
    let text = text.trim_end_matches('\n');
    let code = text.trim_start();
    let indent = &text[..text.len() - code.len()];
    let lines = if text.chars().count() < width {
        text.to_string()
    } else {
        fill(
            code,
            width.saturating_sub(1),
            indent,
            &format!("{indent}    "),
        )
    };
    let (mark, paint): (char, fn(String) -> String) = match tag {
        ChangeTag::Delete => ('-', |line| line.red().to_string()),
        ChangeTag::Insert => ('+', |line| line.green().to_string()),
        ChangeTag::Equal => (' ', |line| line),
    };
    lines
        .split('\n')
        .map(|line| paint(format!("{mark}{line}")))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A failed check: what was checked, then expected against actual, as a
/// line diff when the values span several lines (stored rows do), then
/// what the stored rows hold against the contract's, when the test read
/// them (`stored`, one line); long lines wrapped at `width` between words.
///
/// Each value is made inert ([`crate::inert`]) before it is laid out: the
/// actual value is what a program answered (an error's message, a row it
/// stored), which may hold escape sequences.
pub fn failure_text(
    check: &str,
    expected: &str,
    actual: &str,
    stored: Option<&str>,
    indent: usize,
    width: usize,
) -> String {
    let pad = " ".repeat(indent);
    let wrap = |label: &str, text: &str| {
        let text = crate::inert::line(text);
        let first = format!("{pad}{label} ");
        let rest = " ".repeat(first.chars().count());
        let filled = fill(&text, width.max(first.len() + 20), &first, &rest);
        // The label is bold; the text is not.
        format!(
            "{pad}{}{}\n",
            label.bold(),
            &filled[pad.len() + label.len()..]
        )
    };
    let mut out = wrap("check:", check);
    if expected.contains('\n') || actual.contains('\n') {
        let (expected, actual) = (crate::inert::lines(expected), crate::inert::lines(actual));
        let diff = TextDiff::from_lines(expected.as_ref(), actual.as_ref());
        writeln!(out, "{pad}{}", "- expected  + actual".dimmed()).unwrap();
        for change in diff.iter_all_changes() {
            let text = change.value().trim_end_matches('\n');
            let line = match change.tag() {
                ChangeTag::Delete => format!("-{text}").red().to_string(),
                ChangeTag::Insert => format!("+{text}").green().to_string(),
                ChangeTag::Equal => format!(" {text}").dimmed().to_string(),
            };
            writeln!(out, "{pad}{line}").unwrap();
        }
    } else {
        out.push_str(&wrap("expected:", expected));
        out.push_str(&wrap("actual:  ", actual));
    }
    if let Some(stored) = stored {
        out.push_str(&wrap("stored:  ", stored));
    }
    out
}

/// A count with its noun, singular for one: "1 worker", "3 workers".
pub fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_of_a_noun_is_singular_and_every_other_count_plural() {
        assert_eq!(plural(1, "worker"), "1 worker");
        assert_eq!(plural(0, "worker"), "0 workers");
        assert_eq!(plural(2, "call"), "2 calls");
    }

    #[test]
    fn the_width_is_columns_else_the_terminal_s_else_80_and_never_under_40() {
        assert_eq!(width_of(Some("120"), Some(100)), 120);
        assert_eq!(width_of(Some(" 72 "), None), 72);
        assert_eq!(width_of(Some("wide"), Some(100)), 100);
        assert_eq!(width_of(Some("0"), None), 80);
        assert_eq!(width_of(None, Some(160)), 160);
        assert_eq!(width_of(None, None), 80);
        assert_eq!(width_of(Some("20"), None), 40);
    }

    #[test]
    fn colour_follows_the_choice_then_no_color_then_the_terminal() {
        assert!(use_color(ColorChoice::Always, true, false));
        assert!(!use_color(ColorChoice::Never, false, true));
        assert!(use_color(ColorChoice::Auto, false, true));
        assert!(!use_color(ColorChoice::Auto, true, true));
        assert!(!use_color(ColorChoice::Auto, false, false));
    }

    #[test]
    fn lab_text_is_refilled_to_the_width_and_never_broken_inside_a_word() {
        let text = "A paragraph of several words that goes on\nacross two lines.\n\n- an item whose text is long enough to wrap\n  onto a second line\n- a short item\n\n```\nclaim(p, \"j\")   -> 1\n```\n";
        let shown = reflow(text, 24);
        assert_eq!(
            shown,
            "A paragraph of several\nwords that goes on\nacross two lines.\n\n- an item whose text is\n  long enough to wrap\n  onto a second line\n- a short item\n\nclaim(p, \"j\")   -> 1"
        );
        for line in shown.lines().filter(|line| !line.contains("claim(")) {
            assert!(line.chars().count() <= 24, "{line:?}");
        }
    }

    #[test]
    fn a_code_change_shows_the_lines_between_two_close_changes_and_nothing_around() {
        colored::control::set_override(false);
        let old = "a\nb\nlock\nread\nc\nd\n";
        let moved = "a\nb\nread\nlock\nc\nd\n";
        let shown = code_change(old, moved, "f.rs", "//", 80);
        assert_eq!(shown, "f.rs, line 3:\n+read\n lock\n-read\n");
        let far = "1\nx\n3\n4\n5\n6\n7\n8\ny\n10\n";
        let changed = "1\nX\n3\n4\n5\n6\n7\n8\nY\n10\n";
        assert_eq!(
            code_change(far, changed, "f.rs", "//", 80),
            "f.rs, line 2:\n-x\n+X\nf.rs, line 9:\n-y\n+Y\n",
            "changes more than four lines apart are hunks of their own"
        );
        let near = "1\nx\n3\n4\n5\n6\ny\n8\n";
        let changed = "1\nX\n3\n4\n5\n6\nY\n8\n";
        assert_eq!(
            code_change(near, changed, "f.rs", "//", 80),
            "f.rs, line 2:\n-x\n+X\n 3\n 4\n 5\n 6\n-y\n+Y\n"
        );
    }

    #[test]
    fn a_code_diff_leaves_out_the_comments_around_the_change() {
        let old = "fn f() {\n    // the lock comes first, or two could win\n    let tx = lock();\n    let row = read();\n}\n";
        let new = "fn f() {\n    // the lock comes first, or two could win\n    let row = read();\n    let tx = lock();\n}\n";
        colored::control::set_override(false);
        let diff = code_diff(old, new, "src/store.rs", "//", 3, 80);
        assert!(!diff.contains("two could win"), "{diff}");
        assert!(
            diff.starts_with("src/store.rs, line 1:\n fn f() {\n"),
            "{diff}"
        );
        assert!(
            diff.contains("\n-    let ") && diff.contains("\n+    let "),
            "{diff}"
        );
    }

    #[test]
    fn a_code_line_wider_than_the_screen_is_broken_at_a_space_and_indented_as_code() {
        colored::control::set_override(false);
        let line = "        cursor = conn.execute(\"INSERT OR IGNORE INTO jobs (id) VALUES (?)\", (job_id,))\n";
        assert_eq!(
            diff_line(ChangeTag::Delete, line, 60),
            "-        cursor = conn.execute(\"INSERT OR IGNORE INTO jobs\n-            (id) VALUES (?)\", (job_id,))"
        );
        assert_eq!(diff_line(ChangeTag::Equal, "\n", 60), " ");
        assert_eq!(diff_line(ChangeTag::Insert, "  x = 1\n", 60), "+  x = 1");
    }

    #[test]
    fn a_line_is_cut_to_the_width_and_marked() {
        assert_eq!(cut("abcdef", 6), "abcdef");
        assert_eq!(cut("abcdefgh", 6), "abc...");
        assert_eq!(cut("    ^", 40), "    ^");
    }

    #[test]
    fn each_line_is_filled_on_its_own_under_its_indentation() {
        assert_eq!(
            fill_lines("one two three\n  four five six\n", 10),
            "one two\n  three\n  four\n    five\n    six\n"
        );
    }

    /// What a program answered is shown inert: on one line, or line by
    /// line in a diff.
    #[test]
    fn a_failure_shows_the_program_s_answer_inert() {
        colored::control::set_override(false);
        let text = failure_text(
            "claim",
            "fence 2",
            "\x1b]0;pwned\x07\u{202e}",
            Some("row j: owner \x1b[1A"),
            2,
            80,
        );
        assert_eq!(
            text,
            "  check: claim\n  expected: fence 2\n  actual:   \\x1b]0;pwned\\x07\\u{202e}\n  stored:   row j: owner \\x1b[1A\n"
        );
        let rows = failure_text(
            "rows",
            "row j\nrow k\n",
            "row j\nrow \x1b[2Kk\n",
            None,
            0,
            80,
        );
        assert_eq!(
            rows,
            "check: rows\n- expected  + actual\n row j\n-row k\n+row \\x1b[2Kk\n"
        );
    }

    #[test]
    fn a_failure_is_wrapped_between_words_under_its_label() {
        colored::control::set_override(false);
        let actual =
            "6 winners: worker-00 got 2, worker-01 got 14, worker-02 got 1, worker-03 got 16";
        let text = failure_text("claim_many", "exactly one owner", actual, None, 4, 50);
        assert_eq!(
            text,
            "    check: claim_many\n    expected: exactly one owner\n    actual:   6 winners: worker-00 got 2,\n              worker-01 got 14, worker-02 got 1,\n              worker-03 got 16\n"
        );
    }
}
