//! The terminal: whether to colour, and the coloured unified diffs and
//! failed checks that the lab's screens share.

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

/// A unified diff of `old` against `new` with `context` lines around each
/// change, coloured when colour is on.
pub fn unified_diff(
    old: &str,
    new: &str,
    old_name: &str,
    new_name: &str,
    context: usize,
) -> String {
    let diff = TextDiff::from_lines(old, new);
    let mut out = String::new();
    writeln!(out, "{}", format!("--- {old_name}").bold()).unwrap();
    writeln!(out, "{}", format!("+++ {new_name}").bold()).unwrap();
    for group in diff.grouped_ops(context) {
        let (first, last) = (
            group.first().expect("a group has ops"),
            group.last().expect("a group has ops"),
        );
        let old_range = first.old_range().start..last.old_range().end;
        let new_range = first.new_range().start..last.new_range().end;
        writeln!(
            out,
            "{}",
            format!(
                "@@ -{},{} +{},{} @@",
                old_range.start + 1,
                old_range.len(),
                new_range.start + 1,
                new_range.len()
            )
            .cyan()
        )
        .unwrap();
        for op in &group {
            for change in diff.iter_changes(op) {
                let text = change.value().trim_end_matches('\n');
                let line = match change.tag() {
                    ChangeTag::Delete => format!("-{text}").red().to_string(),
                    ChangeTag::Insert => format!("+{text}").green().to_string(),
                    ChangeTag::Equal => format!(" {text}"),
                };
                writeln!(out, "{line}").unwrap();
            }
        }
    }
    out
}

/// A failed check: what was checked, then expected against actual, as a
/// line diff when the values span several lines (stored rows do).
pub fn failure_text(check: &str, expected: &str, actual: &str, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let mut out = format!("{pad}{} {check}\n", "check:".bold());
    if expected.contains('\n') || actual.contains('\n') {
        let diff = TextDiff::from_lines(expected, actual);
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
        writeln!(out, "{pad}{} {expected}", "expected:".bold()).unwrap();
        writeln!(out, "{pad}{} {actual}", "actual:  ".bold()).unwrap();
    }
    out
}
