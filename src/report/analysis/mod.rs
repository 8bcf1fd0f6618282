//! What the kill matrix means ([`Analysis`]), rendered: terminal text
//! ([`text`]), Markdown ([`markdown`]), JSON ([`json`]) and a
//! self-contained HTML page with the subsumption graph ([`html`]).

pub mod html;

use crate::analysis::{Analysis, ChosenTest, Idle, IdleTest, MutantGroup};
use crate::suite::Tag;
use crate::terminal::fill;
use colored::Colorize;
use std::fmt::Write as _;

/// The analysis as JSON, for tools: [`Analysis`] as it serialises.
pub fn json(analysis: &Analysis) -> serde_json::Value {
    serde_json::to_value(analysis).expect("an analysis is JSON")
}

/// The headline of each section, as the text, Markdown and HTML say it.
pub mod headline {
    use crate::analysis::Analysis;

    /// The tests that kill nothing.
    pub fn idle(analysis: &Analysis) -> String {
        let contract = analysis
            .idle_tests
            .iter()
            .filter(|test| test.tag == crate::suite::Tag::Contract)
            .count();
        format!(
            "{} kill nothing ({contract} of them contract tests)",
            super::count(analysis.idle_tests.len(), "test", "tests")
        )
    }

    /// Equivalent tests.
    pub fn equivalent(analysis: &Analysis) -> String {
        let tests: usize = analysis.equivalent_tests.iter().map(Vec::len).sum();
        format!(
            "{} of equivalent tests ({tests} tests): each group kills the same mutants",
            super::count(analysis.equivalent_tests.len(), "group", "groups")
        )
    }

    /// Dominated tests.
    pub fn dominated(analysis: &Analysis) -> String {
        format!(
            "{} dominated: another test kills every mutant {}, and more",
            super::count(analysis.dominated_tests.len(), "test is", "tests are"),
            if analysis.dominated_tests.len() == 1 {
                "it kills"
            } else {
                "they kill"
            }
        )
    }

    /// The tests dominated by none.
    pub fn undominated(analysis: &Analysis) -> String {
        let tests: usize = analysis.undominated_tests.iter().map(Vec::len).sum();
        format!(
            "{}, in {} of equivalent tests, dominated by none",
            super::count(tests, "test", "tests"),
            super::count(analysis.undominated_tests.len(), "group", "groups")
        )
    }

    /// Indistinguishable mutants.
    pub fn indistinguishable(analysis: &Analysis) -> String {
        format!(
            "{} of mutants no test tells apart",
            super::count(analysis.indistinguishable().count(), "group", "groups")
        )
    }

    /// Subsumed mutants.
    pub fn subsumed(analysis: &Analysis) -> String {
        format!(
            "{} of {} killed mutants are strictly subsumed: every test that kills the subsuming mutant kills them too",
            analysis.subsumed_mutants.len(),
            analysis.mutants - analysis.survived.len()
        )
    }

    /// The dominator set.
    pub fn dominators(analysis: &Analysis) -> String {
        format!(
            "The dominator set has {} mutants: kill these and every killed mutant is killed",
            analysis.dominators().len()
        )
    }

    /// The minimum test set.
    pub fn minimum(analysis: &Analysis) -> String {
        let forced = analysis.minimum_tests.iter().filter(|t| t.forced).count();
        format!(
            "The smallest set of tests that kills all {} killed mutants has {} tests, {forced} of them forced (the only killer of some mutant)",
            analysis.mutants - analysis.survived.len(),
            analysis.minimum_tests.len()
        )
    }

    /// The contract tests alone.
    pub fn contract(analysis: &Analysis) -> String {
        let contract = &analysis.contract_minimum;
        let ending = if contract.kills_every_mutant() {
            "kill every killed mutant".to_string()
        } else {
            format!(
                "leave {} alive (only other tests kill {})",
                contract.survivors.join(", "),
                if contract.survivors.len() == 1 {
                    "it"
                } else {
                    "them"
                }
            )
        };
        format!(
            "The {} contract tests alone {ending}; the smallest set of them has {} tests",
            contract.contract_tests,
            contract.tests.len()
        )
    }
}

/// "1 group", "3 groups".
fn count(count: usize, one: &str, many: &str) -> String {
    if count == 1 {
        format!("1 {one}")
    } else {
        format!("{count} {many}")
    }
}

/// Why an idle test kills nothing, in words.
pub fn idle_reason(test: &IdleTest) -> &'static str {
    match test.why {
        Idle::PassesOnEveryMutant => "passes on every mutant",
        Idle::FailsOnTheReference => "fails on the reference, so it tells nothing",
        Idle::BeyondTheWorksheet => "beyond the worksheet: it does not judge a program",
    }
}

/// The mutants an idle test could break on, in words.
pub fn reach(test: &IdleTest) -> String {
    if test.runs_the_change_of.is_empty() {
        "no mutant changes the code it runs".into()
    } else {
        format!("runs the change of {}", test.runs_the_change_of.join(" "))
    }
}

/// The analysis as text for a terminal `width` columns wide.
pub fn text(analysis: &Analysis, width: usize) -> String {
    let mut text = TextWriter {
        out: String::new(),
        width,
    };
    text.summary(analysis);
    text.heading(headline::idle(analysis));
    text.idle_tests(analysis);
    text.heading(headline::equivalent(analysis));
    for group in &analysis.equivalent_tests {
        text.line(&group.join(" = "), "  ", "      ");
    }
    text.heading(headline::dominated(analysis));
    text.dominated_tests(analysis);
    text.heading(headline::undominated(analysis));
    for group in &analysis.undominated_tests {
        text.line(&group.join(" = "), "  ", "      ");
    }
    text.heading(headline::indistinguishable(analysis));
    for group in analysis.indistinguishable() {
        let line = format!("{}: killed by {}", group.label(), group.killers.join(" "));
        text.line(&line, "  ", "      ");
    }
    text.heading(headline::subsumed(analysis));
    for mutant in &analysis.subsumed_mutants {
        let line = format!("{} by {}", mutant.id, mutant.subsumed_by.join(" "));
        text.line(&line, "  ", "      ");
    }
    text.heading(headline::dominators(analysis));
    let groups: Vec<String> = analysis
        .mutant_groups
        .iter()
        .filter(|group| group.dominator)
        .map(|group| group.label())
        .collect();
    text.line(&groups.join(" "), "  ", "  ");
    text.heading(headline::minimum(analysis));
    chosen_lines(&mut text, &analysis.minimum_tests, Some(analysis));
    text.heading(headline::contract(analysis));
    chosen_lines(&mut text, &analysis.contract_minimum.tests, None);
    text.out
}

/// The analysis as text being written, for a terminal `width` columns
/// wide.
struct TextWriter {
    out: String,
    width: usize,
}

impl TextWriter {
    /// Writes a section's headline `text`, bold, after a blank line.
    fn heading(&mut self, text: String) {
        writeln!(
            self.out,
            "\n{}",
            fill(&format!("{text}."), self.width, "", "").bold()
        )
        .unwrap();
    }

    /// Writes `text` filled to the width, its first line indented by
    /// `first` and the others by `rest`.
    fn line(&mut self, text: &str, first: &str, rest: &str) {
        writeln!(self.out, "{}", fill(text, self.width, first, rest)).unwrap();
    }

    /// Writes the summary: how many tests and mutants, killed and
    /// survived, and which survived.
    fn summary(&mut self, analysis: &Analysis) {
        let summary = format!(
            "What the kill matrix means: {} tests against {} mutants, {} killed, {} survived.",
            analysis.tests,
            analysis.mutants,
            analysis.mutants - analysis.survived.len(),
            analysis.survived.len()
        );
        self.line(&summary, "", "");
        if !analysis.survived.is_empty() {
            self.line(
                &format!(
                    "Survived (left out of subsumption): {}.",
                    analysis.survived.join(" ")
                ),
                "",
                "  ",
            );
        }
    }

    /// Writes each idle test: its name, step and tag, what it guards, the
    /// calls it makes, what it could break on and why it kills nothing.
    fn idle_tests(&mut self, analysis: &Analysis) {
        for test in &analysis.idle_tests {
            let tag = match test.tag {
                Tag::Contract => "contract",
                Tag::Reference => "reference",
            };
            let name = format!("{} (step {}, {tag})", test.name, test.step);
            self.line(&name, "  ", "      ");
            if let Some(guards) = test.guards {
                self.line(guards, "      ", "      ");
            }
            let calls = if test.operations.is_empty() {
                String::new()
            } else {
                format!("calls {}; ", test.operations.join(" "))
            };
            let about = format!("{calls}{}; {}.", reach(test), idle_reason(test));
            self.line(&about, "      ", "      ");
        }
    }

    /// Writes each dominated test: its name, its kills, and the first test
    /// that dominates it (with how many more do).
    fn dominated_tests(&mut self, analysis: &Analysis) {
        for test in &analysis.dominated_tests {
            writeln!(self.out, "  {}", test.name).unwrap();
            let more = match test.dominated_by.len() {
                1 => String::new(),
                n => format!(" (and {} more)", n - 1),
            };
            let text = format!(
                "kills {}; so does {}{more}",
                test.kills.join(" "),
                test.dominated_by[0]
            );
            self.line(&text, "      ", "        ");
        }
    }
}

/// One line per chosen test, a forced one marked with `*`; under a test
/// that another dominates (in the smallest set of `among`'s tests), why it
/// is there all the same.
fn chosen_lines(text: &mut TextWriter, tests: &[ChosenTest], among: Option<&Analysis>) {
    let (out, width) = (&mut text.out, text.width);
    for test in tests {
        let mark = if test.forced { "*" } else { " " };
        writeln!(out, "  {mark} {}", test.name).unwrap();
        if let Some(why) = among.and_then(|analysis| stand_in(analysis, test.name)) {
            writeln!(out, "{}", fill(&why, width, "      ", "      ").dimmed()).unwrap();
        }
    }
    if tests.iter().any(|test| test.forced) {
        writeln!(
            out,
            "  {}",
            "* forced: the only test that kills some mutant".dimmed()
        )
        .unwrap();
    }
}

/// The analysis as Markdown: a section per finding, tests as code.
pub fn markdown(analysis: &Analysis) -> String {
    let mut out = format!(
        "# What the kill matrix means\n\n{} tests against {} mutants; {} survived{}.\n",
        analysis.tests,
        analysis.mutants,
        analysis.survived.len(),
        if analysis.survived.is_empty() {
            String::new()
        } else {
            format!(" ({})", analysis.survived.join(", "))
        }
    );
    markdown_idle_tests(&mut out, analysis);
    writeln!(out, "\n## {}\n", headline::equivalent(analysis)).unwrap();
    markdown_none_if(&mut out, analysis.equivalent_tests.is_empty());
    for group in &analysis.equivalent_tests {
        writeln!(out, "- {}", markdown_code(group)).unwrap();
    }
    markdown_dominated_tests(&mut out, analysis);
    writeln!(out, "\n## {}\n", headline::undominated(analysis)).unwrap();
    markdown_none_if(&mut out, analysis.undominated_tests.is_empty());
    for group in &analysis.undominated_tests {
        writeln!(out, "- {}", markdown_code(group)).unwrap();
    }
    writeln!(out, "\n## {}\n", headline::indistinguishable(analysis)).unwrap();
    markdown_none_if(&mut out, analysis.indistinguishable().next().is_none());
    for group in analysis.indistinguishable() {
        markdown_group_item(&mut out, group);
    }
    markdown_table_head(
        &mut out,
        &headline::subsumed(analysis),
        "| mutant | subsumed by |\n|---|---|",
        analysis.subsumed_mutants.is_empty(),
    );
    for mutant in &analysis.subsumed_mutants {
        writeln!(out, "| {} | {} |", mutant.id, mutant.subsumed_by.join(", ")).unwrap();
    }
    writeln!(out, "\n## {}\n", headline::dominators(analysis)).unwrap();
    for group in analysis
        .mutant_groups
        .iter()
        .filter(|group| group.dominator)
    {
        markdown_group_item(&mut out, group);
    }
    writeln!(out, "\n## {}\n", headline::minimum(analysis)).unwrap();
    markdown_chosen(&mut out, &analysis.minimum_tests, Some(analysis));
    writeln!(out, "\n## {}\n", headline::contract(analysis)).unwrap();
    markdown_chosen(&mut out, &analysis.contract_minimum.tests, None);
    out
}

/// Test names as Markdown code, comma-separated.
fn markdown_code(names: &[&str]) -> String {
    names
        .iter()
        .map(|name| format!("`{name}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A section's heading and its table's head, or "None." under the
/// heading when the table would be `empty`: a head over no rows reads as
/// a page cut short.
fn markdown_table_head(out: &mut String, heading: &str, head: &str, empty: bool) {
    let body = if empty { "None." } else { head };
    writeln!(out, "\n## {heading}\n\n{body}").unwrap();
}

/// "None." for a section whose list is `empty`.
fn markdown_none_if(out: &mut String, empty: bool) {
    if empty {
        writeln!(out, "None.").unwrap();
    }
}

/// Writes the idle tests' section: its headline and a table row per test.
fn markdown_idle_tests(out: &mut String, analysis: &Analysis) {
    markdown_table_head(
        out,
        &headline::idle(analysis),
        "| test | step | tag | guards | calls | could break on |\n|---|---:|---|---|---|---|",
        analysis.idle_tests.is_empty(),
    );
    for test in &analysis.idle_tests {
        writeln!(
            out,
            "| `{}` | {} | {} | {} | {} | {} |",
            test.name,
            test.step,
            test.tag.name(),
            test.guards.unwrap_or("").replace('|', "\\|"),
            test.operations.join(", "),
            test.runs_the_change_of.join(", ")
        )
        .unwrap();
    }
}

/// Writes the dominated tests' section: its headline and a table row per
/// test.
fn markdown_dominated_tests(out: &mut String, analysis: &Analysis) {
    markdown_table_head(
        out,
        &headline::dominated(analysis),
        "| test | kills | dominated by |\n|---|---|---|",
        analysis.dominated_tests.is_empty(),
    );
    for test in &analysis.dominated_tests {
        writeln!(
            out,
            "| `{}` | {} | {} |",
            test.name,
            test.kills.join(", "),
            markdown_code(&test.dominated_by)
        )
        .unwrap();
    }
}

/// Writes a group of mutants as a list item: its ids and the tests that
/// kill it.
fn markdown_group_item(out: &mut String, group: &MutantGroup) {
    writeln!(
        out,
        "- {}: killed by {}",
        group.label(),
        markdown_code(&group.killers)
    )
    .unwrap();
}

/// Writes a list item per chosen test, a forced one marked, a dominated
/// one (in the smallest set of `among`'s tests) with why it is there.
fn markdown_chosen(out: &mut String, tests: &[ChosenTest], among: Option<&Analysis>) {
    for test in tests {
        let forced = if test.forced { " (forced)" } else { "" };
        let why = among
            .and_then(|analysis| stand_in(analysis, test.name))
            .map_or(String::new(), |why| format!(": {why}"));
        writeln!(out, "- `{}`{forced}{why}", test.name).unwrap();
    }
}

/// Why a dominated test may be in a smallest set: a smallest set is one
/// of several, and the test that dominates it could stand in for it, as
/// large a set; `None` for a test that no test dominates.
pub(crate) fn stand_in(analysis: &Analysis, test: &str) -> Option<String> {
    let dominated = analysis
        .dominated_tests
        .iter()
        .find(|dominated| dominated.name == test)?;
    Some(format!(
        "dominated by {}, which could take its place: a smallest set is one of several, and the search keeps the first it finds",
        dominated.dominated_by.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::sample;

    fn analysis() -> Analysis {
        Analysis::of(&sample::matrix(
            6,
            &["04", "h04a", "h04b", "h04c", "h04d"],
            &[&[0, 1], &[0, 1, 2], &[0, 1], &[3], &[]],
        ))
    }

    #[test]
    fn the_text_fits_the_width_and_says_every_finding() {
        colored::control::set_override(false);
        let analysis = analysis();
        let text = text(&analysis, 80);
        for line in text.lines() {
            assert!(line.chars().count() <= 80, "{line:?}");
        }
        assert!(
            text.contains("2 tests kill nothing (2 of them contract tests)."),
            "{text}"
        );
        assert!(
            text.contains("Survived (left out of subsumption): h04d."),
            "{text}"
        );
        assert!(text.contains("  h04a by 04 h04b\n"), "{text}");
        assert!(text.contains("  04=h04b: killed by"), "{text}");
        let flowing = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flowing.contains(
                "calls claim; runs the change of 04 h04a h04b h04c h04d; passes on every mutant."
            ),
            "{text}"
        );
        assert!(flowing.contains("has 2 tests, 1 of them forced"), "{text}");
        assert!(text.contains("The dominator set has 2 mutants"), "{text}");
        assert!(text.contains("\n  04=h04b h04c\n"), "{text}");
    }

    #[test]
    fn the_markdown_has_a_section_per_finding() {
        let analysis = analysis();
        let markdown = markdown(&analysis);
        assert_eq!(markdown.matches("\n## ").count(), 9, "{markdown}");
        assert!(markdown.contains("| h04a | 04, h04b |"), "{markdown}");
        assert!(markdown.contains(" (forced)\n"), "{markdown}");
        let json = json(&analysis);
        assert_eq!(json["survived"], serde_json::json!(["h04d"]));
        assert_eq!(json["mutant_groups"][0]["dominator"], true);
        assert_eq!(json["idle_tests"][0]["why"], "passes_on_every_mutant");
    }

    #[test]
    fn a_dominated_test_in_the_smallest_set_says_what_could_take_its_place() {
        colored::control::set_override(false);
        // Tests 0 and 3 kill 04, tests 0 and 2 h04a, tests 1 and 2 h04b:
        // no mutant subsumes another, test 3 is dominated by test 0 and
        // test 1 by test 2, and a smallest set has two tests, whichever
        // the search finds first.
        let analysis = Analysis::of(&sample::matrix(
            4,
            &["04", "h04a", "h04b"],
            &[&[0, 3], &[0, 2], &[1, 2]],
        ));
        assert!(analysis.subsumed_mutants.is_empty());
        assert_eq!(analysis.minimum_tests.len(), 2);
        let (dominated, dominator) = analysis
            .minimum_tests
            .iter()
            .find_map(|test| {
                let found = analysis
                    .dominated_tests
                    .iter()
                    .find(|d| d.name == test.name)?;
                Some((found.name, found.dominated_by[0]))
            })
            .expect("a dominated test in the smallest set");
        let note = format!("dominated by {dominator}, which could take its place");
        let text = text(&analysis, 80);
        let flowing = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flowing.contains(&format!("{dominated} {note}")), "{text}");
        let markdown = markdown(&analysis);
        assert!(
            markdown.contains(&format!("- `{dominated}`: {note}")),
            "{markdown}"
        );
        assert!(markdown.contains("kills them too\n\nNone."), "{markdown}");
        assert!(
            markdown.contains("kill nothing (0 of them contract tests)\n\nNone."),
            "{markdown}"
        );
        let page = html::page(&analysis);
        assert!(
            page.contains(&format!("<code>{dominated}</code>: {note}")),
            "{page}"
        );
        assert_eq!(page.matches("<p>None.</p>").count(), 4, "{page}");
    }
}
