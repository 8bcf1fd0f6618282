//! The kill matrix as one self-contained HTML page for instructors: a
//! coloured table of tests (by step) against variants, then every mutant
//! with its diff, its explanation and the failure behind each kill.
//!
//! The page loads nothing: its style is inline, it runs no script, and it
//! links only to its own sections, so it can be mailed, archived or opened
//! from a file on a machine without network.

use super::{
    cell_look, key_looks, not_covered_reason, status_look, survivor_advice, test_file, NOT_COVERED,
};
use crate::exercise::step_title;
use crate::matrix::{Matrix, MutantSummary};
use crate::outcome::{MutantStatus, Outcome};
use crate::report::html_page::shell;
use crate::report::html_text::{untrusted, untrusted_attr};
use crate::report::tests_phrase;
use crate::runner::VariantRun;
use crate::variant::Mutant;
use html_escape::{encode_double_quoted_attribute as attr, encode_text as text};
use similar::{ChangeTag, TextDiff};
use std::fmt::Write as _;

/// The page's style: status colours that also read in greyscale, a table
/// whose variant ids stand upright so that forty columns fit a laptop, in a
/// box of its own that scrolls (the page never scrolls sideways), whose
/// header row and test names stay in view as it scrolls (sticky cells,
/// opaque so that the cells scrolling under them do not show; the borders
/// separate, so that a sticky cell keeps its own), test names shortened to
/// a third of the window with the full name on hover, a step's title and
/// a test's reasons pinned to the box's left edge, and the filters: a
/// kind's columns and a step's rows hidden by CSS alone (`:has`), with no
/// script.
const STYLE: &str = r#"
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px; color: #1d1d1f; background: #fff; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 22px 0 4px; }
code, pre { font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.summary { color: #444; }
.problems { background: #fff4f2; border-left: 4px solid #c62828; padding: 6px 12px; }
.fine { background: #f1f8f1; border-left: 4px solid #2e7d32; padding: 6px 12px; }
.legend span { display: inline-block; min-width: 18px; text-align: center; margin: 0 4px 0 12px; border-radius: 3px; }
div.scroller { overflow: auto; max-width: 100%; max-height: 85vh; border: 1px solid #ccc; }
table.matrix { border-collapse: separate; border-spacing: 0; }
table.matrix th, table.matrix td { border-right: 1px solid #e3e3e3; border-bottom: 1px solid #e3e3e3; }
table.matrix thead th { position: sticky; top: 0; z-index: 2; background: #fff; box-shadow: 0 1px 0 #ccc; }
table.matrix thead th:first-child { left: 0; z-index: 3; }
table.matrix tbody th.test { position: sticky; left: 0; z-index: 1; background: #fff; box-shadow: 1px 0 0 #ccc; }
table.matrix th.test span.name { display: block; max-width: calc(33vw - 24px); overflow: hidden; text-overflow: ellipsis; }
table.matrix th.test .beyond { color: #8d6e00; font-weight: bold; margin-right: 4px; cursor: help; }
table.matrix .pin { position: sticky; left: 8px; display: inline-block; max-width: calc(100vw - 100px); white-space: normal; }
form.filters { margin: 6px 0; font-size: 13px; }
form.filters fieldset { display: inline-block; border: 1px solid #ddd; margin: 0 12px 6px 0; padding: 2px 8px; }
form.filters label { margin-right: 8px; white-space: nowrap; }
table.matrix thead th.variant { writing-mode: vertical-rl; transform: rotate(180deg); padding: 6px 2px; font-weight: 600; font-size: 12px; }
table.matrix thead th.variant a { color: inherit; text-decoration: none; }
table.matrix th.test { text-align: left; font-weight: normal; font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; padding: 1px 8px 1px 16px; white-space: nowrap; }
table.matrix tr.step-title th { text-align: left; background: #f6f6f6; padding: 6px 0; font-size: 13px; }
table.matrix tr.reasons td { padding: 0 0 2px; font-size: 12px; }
table.matrix tr.reasons summary { color: #555; cursor: pointer; }
td.cell { width: 20px; min-width: 20px; text-align: center; font-size: 12px; padding: 1px 0; }
.group-start { border-left: 3px solid #999 !important; }
.ok { background: #c8e6c9; color: #1b5e20; }
.broken { background: #c62828; color: #fff; font-weight: bold; }
.killed { background: #ffb74d; color: #4e2a00; font-weight: bold; }
.survives { background: #fafafa; color: #bbb; }
.timeout { background: #ce93d8; color: #38006b; font-weight: bold; }
.crash { background: #9575cd; color: #fff; font-weight: bold; }
.not-covered { background: #f0f0f0; color: #999; }
.not-counted { background: #e0f7fa; color: #00838f; }
.not-run { background: #fff; }
table.matrix thead th.status-survived { background: #c62828; color: #fff; }
table.matrix thead th.status-killed { background: #fff3e0; }
table.matrix thead th.status-timeout, table.matrix thead th.status-crashed { background: #f3e5f5; }
table.matrix thead th.reference { background: #e8f5e9; }
table.mutants { border-collapse: collapse; }
table.mutants th, table.mutants td { border-bottom: 1px solid #eee; padding: 3px 10px; text-align: left; }
.badge { border-radius: 3px; padding: 0 6px; }
section.mutant { border-top: 1px solid #eee; }
pre.diff { background: #fafafa; border: 1px solid #eee; padding: 8px; overflow-x: auto; }
pre.diff .del { background: #ffebee; color: #b71c1c; display: block; }
pre.diff .add { background: #e8f5e9; color: #1b5e20; display: block; }
pre.diff .hunk { color: #00838f; display: block; }
pre.diff .file { font-weight: bold; display: block; }
pre.diff .ctx { display: block; }
ul.kills li { margin: 2px 0; }
.reason { color: #555; overflow-wrap: anywhere; }
.advice { background: #fff8e1; border-left: 4px solid #f9a825; padding: 6px 12px; }
"#;

/// The whole page for `matrix`: a complete HTML document with no external
/// resource.
pub fn page(matrix: &Matrix) -> String {
    let mut body = header(matrix);
    body.push_str(&matrix_section(matrix));
    body.push_str(&mutants_section(matrix));
    shell(
        "lease-lab kill matrix",
        STYLE,
        &body,
        "lab matrix --format html",
    )
}

fn header(matrix: &Matrix) -> String {
    let summaries = matrix.summaries();
    let count = |status: MutantStatus| summaries.iter().filter(|s| s.status == status).count();
    let detected = summaries.iter().filter(|s| s.status.detected()).count();
    let mut out = String::from("<header>\n<h1>lease-lab: which test kills which mutant</h1>\n");
    // The sentence follows the matrix's rule, as the banner below does: a
    // failure of the reference that does not count (a test beyond the
    // worksheet, for a program) is said apart, never as a problem.
    let reference = match matrix.reference() {
        Some(run) => {
            let failed = run
                .runs
                .iter()
                .filter(|test| test.outcome != Outcome::Pass)
                .count();
            let counted = matrix.reference_failures().len();
            let passed = run.runs.len() - failed;
            match failed - counted {
                0 => format!("The reference passes {passed} of {} tests.", run.runs.len()),
                1 => format!(
                    "The reference passes {passed} of {} tests; the one it fails is beyond the worksheet for this store and does not count.",
                    run.runs.len()
                ),
                uncounted => format!(
                    "The reference passes {passed} of {} tests; the {uncounted} it fails are beyond the worksheet for this store and do not count.",
                    run.runs.len()
                ),
            }
        }
        None => "The reference was not run.".into(),
    };
    writeln!(
        out,
        "<p class=\"summary\">{} tests against {} variants. {reference} The suite catches {detected} of {} mutants: {} killed by a failing test, {} by a timeout, {} by a crash; {} survived.</p>",
        matrix.tests.len(),
        matrix.runs.len(),
        summaries.len(),
        count(MutantStatus::Killed),
        count(MutantStatus::Timeout),
        count(MutantStatus::Crashed),
        count(MutantStatus::Survived),
    )
    .unwrap();
    let problems = matrix.problems();
    if problems.is_empty() {
        out.push_str("<p class=\"fine\">No problems: the reference passes every test that counts, and each mutant is caught by a test of its own step.</p>\n");
    } else {
        out.push_str("<div class=\"problems\"><p>Problems (what <code>lab matrix --check</code> fails on):</p><ul>\n");
        for problem in problems {
            writeln!(out, "<li>{}</li>", untrusted(&problem, true)).unwrap();
        }
        out.push_str("</ul></div>\n");
    }
    out.push_str("</header>\n");
    out
}

fn legend(matrix: &Matrix) -> String {
    let mut out = String::from("<p class=\"legend\">");
    for look in key_looks(matrix) {
        write!(
            out,
            "<span class=\"{}\">{}</span>{}",
            look.class, look.glyph, look.meaning
        )
        .unwrap();
    }
    out.push_str(". Under a test that did not pass everywhere, <em>why</em> unfolds the failures; a column's id links to the mutant's diff.</p>\n");
    if !matrix.beyond_the_worksheet_tests().is_empty() {
        writeln!(
            out,
            "<p class=\"legend\"><span class=\"beyond\">{BEYOND_MARK}</span>{BEYOND_MEANING}.</p>"
        )
        .unwrap();
    }
    out
}

/// The mark of a test beyond the worksheet, after its name.
const BEYOND_MARK: &str = "*";

/// What the mark means, for the legend and the mark's title.
const BEYOND_MEANING: &str = "beyond the worksheet: a test of the Rust store's own stricter promises, which does not judge this implementation, so that its failures count for nothing";

/// Where a new group of columns starts: after the reference, and where
/// the mutants' kind changes.
fn starts_group(matrix: &Matrix, index: usize) -> bool {
    let kind = |run: &VariantRun| run.variant.mutant.as_ref().map(|mutant| mutant.spec.kind);
    index > 0 && kind(&matrix.runs[index]) != kind(&matrix.runs[index - 1])
}

/// The table's opening and its header row: a column per variant, its id
/// upright, a mutant's linked to its section and titled with its status.
fn header_row(matrix: &Matrix) -> String {
    let summaries = matrix.summaries();
    let mut out = String::new();
    out.push_str("<div class=\"scroller\">\n<table class=\"matrix\">\n<thead><tr><th scope=\"col\">test</th>");
    for (index, run) in matrix.runs.iter().enumerate() {
        let group = if starts_group(matrix, index) {
            " group-start"
        } else {
            ""
        };
        match run.variant.mutant.as_deref() {
            None => write!(
                out,
                "<th scope=\"col\" class=\"variant reference{group}\" title=\"the reference implementation\">{}</th>",
                text(&run.variant.id)
            ),
            Some(mutant) => {
                let mutant = &mutant.spec;
                let status = summary(&summaries, &mutant.id).status.label();
                write!(
                    out,
                    "<th scope=\"col\" class=\"variant status-{status}{group} kind-{}\" title=\"{}\"><a href=\"#mutant-{}\">{}</a></th>",
                    mutant.kind.name(),
                    untrusted_attr(&format!("{} (step {}, {}): {}", mutant.id, mutant.step, status, mutant.title), false),
                    attr(&mutant.id),
                    text(&mutant.id)
                )
            }
        }
        .unwrap();
    }
    out.push_str("</tr></thead>\n");
    out
}

fn matrix_section(matrix: &Matrix) -> String {
    let mut out = String::from("<section id=\"matrix\">\n<h2>The kill matrix</h2>\n");
    out.push_str(&legend(matrix));
    out.push_str(&filters(matrix));
    let beyond = matrix.beyond_the_worksheet_tests();
    out.push_str(&header_row(matrix));

    let mut step = None;
    for case in &matrix.tests {
        if step != Some(case.step) {
            if step.is_some() {
                out.push_str("</tbody>\n");
            }
            step = Some(case.step);
            writeln!(
                out,
                "<tbody id=\"step-{0}\"><tr class=\"step-title\"><th colspan=\"{1}\" scope=\"colgroup\"><span class=\"pin\">Step {0}: {2} <code class=\"reason\">{3}</code></span></th></tr>",
                case.step,
                matrix.runs.len() + 1,
                text(step_title(case.step)),
                text(&test_file(case.step)),
            )
            .unwrap();
        }
        let mark = if beyond.contains(&case.name) {
            format!(
                "<span class=\"beyond\" title=\"{}\">{BEYOND_MARK}</span>",
                attr(BEYOND_MEANING)
            )
        } else {
            String::new()
        };
        // The mark first: a name too long for the column is cut at its
        // end, and its full name is the cell's title.
        write!(
            out,
            "<tr class=\"test\"><th scope=\"row\" class=\"test\" title=\"{}\"><span class=\"name\">{mark}{}</span></th>",
            attr(case.name),
            text(case.name)
        )
        .unwrap();
        for (index, run) in matrix.runs.iter().enumerate() {
            let outcome = run.outcome(case.name);
            let look = cell_look(matrix, case, run);
            let (class, mark) = (look.class, look.glyph.trim());
            let group = if starts_group(matrix, index) {
                " group-start"
            } else {
                ""
            };
            let why = match outcome {
                None => "not run".to_string(),
                Some(_) if look == NOT_COVERED => not_covered_reason(run.variant.mutant.as_deref()),
                Some(outcome) => outcome.reason().unwrap_or_else(|| "passes".into()),
            };
            write!(
                out,
                "<td class=\"cell {class}{group}{}\" title=\"{}\">{mark}</td>",
                kind_class(run),
                untrusted_attr(&format!("{} × {}: {why}", run.variant.id, case.name), true)
            )
            .unwrap();
        }
        out.push_str("</tr>\n");
        out.push_str(&reasons_row(matrix, case.name));
    }
    if step.is_some() {
        out.push_str("</tbody>\n");
    }
    out.push_str("</table>\n</div>\n</section>\n");
    out
}

/// A mutant's column's class for its kind (` kind-field`), by which the
/// filters hide it; none for the reference, always shown.
fn kind_class(run: &VariantRun) -> String {
    run.variant
        .mutant
        .as_ref()
        .map(|mutant| format!(" kind-{}", mutant.spec.kind.name()))
        .unwrap_or_default()
}

/// The filters above the table: a box per kind of mutant in the matrix,
/// whose columns it shows, and one per step, whose rows it shows, all
/// checked; and the style rules (CSS's `:has`, no script) that hide what
/// is unchecked.
fn filters(matrix: &Matrix) -> String {
    let mut kinds: Vec<crate::mutant::MutantKind> = Vec::new();
    for mutant in matrix
        .runs
        .iter()
        .filter_map(|run| run.variant.mutant.as_ref())
    {
        if !kinds.contains(&mutant.spec.kind) {
            kinds.push(mutant.spec.kind);
        }
    }
    let mut steps: Vec<u8> = matrix.tests.iter().map(|case| case.step).collect();
    steps.dedup();
    let mut rules = String::new();
    let mut out = String::from(
        "<form class=\"filters\" aria-label=\"filters\"><fieldset><legend>columns: mutants of kind</legend>",
    );
    for kind in &kinds {
        let name = kind.name();
        write!(
            out,
            "<label><input type=\"checkbox\" id=\"show-{name}\" checked> {name}</label>"
        )
        .unwrap();
        writeln!(
            rules,
            "body:has(#show-{name}:not(:checked)) table.matrix .kind-{name} {{ display: none; }}"
        )
        .unwrap();
    }
    out.push_str("</fieldset><fieldset><legend>rows: the tests of step</legend>");
    for step in &steps {
        write!(
            out,
            "<label><input type=\"checkbox\" id=\"show-step-{step}\" checked> {step}</label>"
        )
        .unwrap();
        writeln!(
            rules,
            "body:has(#show-step-{step}:not(:checked)) table.matrix #step-{step} {{ display: none; }}"
        )
        .unwrap();
    }
    write!(out, "</fieldset></form>\n<style>\n{rules}</style>\n").unwrap();
    out
}

/// Under a test that did not pass everywhere, a row that tells why, per
/// variant, folded so the table stays compact, and readable without
/// pointing at a cell.
fn reasons_row(matrix: &Matrix, test: &str) -> String {
    let reasons: Vec<(&str, String)> = matrix
        .runs
        .iter()
        .filter(|run| {
            run.test_run(test)
                .is_some_and(|test_run| !test_run.not_covered)
        })
        .filter_map(|run| Some((run.variant.id.as_str(), run.outcome(test)?.reason()?)))
        .collect();
    if reasons.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "<tr class=\"reasons\"><td colspan=\"{}\"><details class=\"pin\"><summary>why {} did not pass on {}</summary><ul>",
        matrix.runs.len() + 1,
        text(test),
        match reasons.len() {
            1 => "1 variant".to_string(),
            n => format!("{n} variants"),
        }
    );
    for (id, reason) in reasons {
        write!(
            out,
            "<li><code>{}</code> {}</li>",
            text(id),
            reason_html(&reason)
        )
        .unwrap();
    }
    out.push_str("</ul></details></td></tr>\n");
    out
}

fn summary<'a>(summaries: &'a [MutantSummary], id: &str) -> &'a MutantSummary {
    summaries
        .iter()
        .find(|summary| summary.id == id)
        .expect("a summary per mutant run")
}

fn mutants_section(matrix: &Matrix) -> String {
    let summaries = matrix.summaries();
    let mut out = String::from(
        "<section id=\"mutants\">\n<h2>The mutants</h2>\n<table class=\"mutants\">\n<thead><tr><th>mutant</th><th>step</th><th>kind</th><th>status</th><th>caught by</th><th>what the broken code does</th></tr></thead>\n<tbody>\n",
    );
    for (_, mutant) in matrix.mutant_runs() {
        let mutant = &mutant.spec;
        let summary = summary(&summaries, &mutant.id);
        let status = summary.status.label();
        writeln!(
            out,
            "<tr><td><a href=\"#mutant-{}\">{}</a></td><td>{}</td><td>{}</td><td><span class=\"badge {}\">{status}</span></td><td>{} ({} of its step)</td><td>{}</td></tr>",
            attr(&mutant.id),
            text(&mutant.id),
            mutant.step,
            mutant.kind.name(),
            status_look(summary.status).class,
            tests_phrase(summary.killers.len()),
            summary.own_step_killers,
            untrusted(&mutant.title, false),
        )
        .unwrap();
    }
    out.push_str("</tbody>\n</table>\n");
    for (run, mutant) in matrix.mutant_runs() {
        out.push_str(&mutant_details(matrix, run, mutant, &summaries));
    }
    out.push_str("</section>\n");
    out
}

fn mutant_details(
    matrix: &Matrix,
    run: &VariantRun,
    whole: &Mutant,
    summaries: &[MutantSummary],
) -> String {
    let mutant = &whole.spec;
    let summary = summary(summaries, &mutant.id);
    let mut out = String::new();
    writeln!(
        out,
        "<section class=\"mutant\" id=\"mutant-{}\">\n<h3>Mutant {} · step {} · {} · <span class=\"badge {}\">{}</span></h3>\n<p><strong>{}</strong></p>\n<p>{}</p>",
        attr(&mutant.id),
        text(&mutant.id),
        mutant.step,
        mutant.kind.name(),
        status_look(summary.status).class,
        summary.status.label(),
        untrusted(&mutant.title, false),
        untrusted(mutant.explanation.trim(), true),
    )
    .unwrap();
    out.push_str(&diff(whole));
    if summary.killers.is_empty() {
        let advice = survivor_advice(matrix, &mutant.id).unwrap_or_default();
        writeln!(out, "<p class=\"advice\">{}</p>", text(&advice)).unwrap();
    } else {
        writeln!(
            out,
            "<p>Caught by {}:</p>\n<ul class=\"kills\">",
            tests_phrase(summary.killers.len())
        )
        .unwrap();
        for test in &summary.killers {
            let reason = run
                .outcome(test)
                .and_then(Outcome::reason)
                .unwrap_or_default();
            writeln!(
                out,
                "<li><code>{}</code> {}</li>",
                text(test),
                reason_html(&reason)
            )
            .unwrap();
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</section>\n");
    out
}

/// The longest failure message shown whole; a longer one (a race of 64
/// owners lists every answer) is folded, its start as the summary.
const LONG_REASON: usize = 240;

/// A failure message, folded when long: a `<details>` element needs no
/// script. It may quote what a program wrote: made inert, its lines kept.
fn reason_html(reason: &str) -> String {
    let reason = crate::inert::lines(reason);
    if reason.chars().count() <= LONG_REASON {
        return format!("<span class=\"reason\">{}</span>", text(&reason));
    }
    let start: String = reason.chars().take(LONG_REASON).collect();
    format!(
        "<details class=\"reason\"><summary>{}…</summary>{}</details>",
        text(&start),
        text(&reason)
    )
}

/// The mutant's source against the reference, as a unified diff with three
/// lines of context, each line marked for colour.
fn diff(mutant: &Mutant) -> String {
    let diff = TextDiff::from_lines(mutant.original.as_ref(), mutant.source.as_ref());
    let mut out = String::from("<pre class=\"diff\">");
    write!(
        out,
        "<span class=\"file\">--- {file} (the reference)</span><span class=\"file\">+++ {file} (mutant {})</span>",
        text(&mutant.spec.id),
        file = text(&mutant.spec.file),
    )
    .unwrap();
    for group in diff.grouped_ops(3) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old = first.old_range().start..last.old_range().end;
        let new = first.new_range().start..last.new_range().end;
        write!(
            out,
            "<span class=\"hunk\">@@ -{},{} +{},{} @@</span>",
            old.start + 1,
            old.len(),
            new.start + 1,
            new.len()
        )
        .unwrap();
        for op in &group {
            for change in diff.iter_changes(op) {
                let (class, sign) = match change.tag() {
                    ChangeTag::Delete => ("del", '-'),
                    ChangeTag::Insert => ("add", '+'),
                    ChangeTag::Equal => ("ctx", ' '),
                };
                write!(
                    out,
                    "<span class=\"{class}\">{sign}{}</span>",
                    untrusted(change.value().trim_end_matches('\n'), false)
                )
                .unwrap();
            }
        }
    }
    out.push_str("</pre>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::matrix::sample::matrix;

    #[test]
    fn the_table_has_a_row_per_test_and_a_column_per_variant() {
        let matrix = matrix();
        let page = page(&matrix);
        assert_eq!(
            page.matches("<tr class=\"test\">").count(),
            matrix.tests.len()
        );
        assert_eq!(
            page.matches("<th scope=\"col\" class=\"variant").count(),
            matrix.runs.len()
        );
        assert_eq!(
            page.matches("<td class=\"cell").count(),
            matrix.tests.len() * matrix.runs.len()
        );
    }

    #[test]
    fn a_test_that_did_not_pass_everywhere_has_its_reasons_under_it() {
        let matrix = matrix();
        let page = page(&matrix);
        assert!(page.contains("<tr class=\"reasons\"><td colspan=\"6\"><details class=\"pin\"><summary>why claim_at_exact_expiry_is_reassigned did not pass on 1 variant</summary><ul><li><code>04</code> <span class=\"reason\">claim(\"j\", \"B\", now=110, ttl=5): expected fence 2, got none &lt;script&gt;&amp;</span></li></ul></details></td></tr>"), "{page}");
        let passing = page
            .split("<th scope=\"row\" class=\"test\" title=\"claim_of_a_new_job_returns_fence_1\"><span class=\"name\">claim_of_a_new_job_returns_fence_1</span></th>")
            .nth(1)
            .unwrap();
        assert!(
            passing
                .split("</tr>")
                .nth(1)
                .unwrap()
                .contains("<tr class=\"test\">"),
            "no reasons row under a test that passed everywhere"
        );
    }

    /// A program's matrix: the tests of the Rust store's own promises are
    /// marked as beyond the worksheet, and the legend says what the mark
    /// means; the Rust store's matrix has neither.
    #[test]
    fn tests_beyond_the_worksheet_are_marked_with_a_legend() {
        use crate::external::ImplCommand;
        use crate::suite::Tag;
        use crate::variant::Variant;
        let mut program = matrix();
        program.runs[0].variant =
            Variant::program("reference", ImplCommand::parse("python3 store.py").unwrap());
        let promise = program
            .tests
            .iter()
            .find(|case| case.tag == Tag::Reference)
            .expect("a test of the Rust store's own promises in steps 4 to 8");
        let contract = program.tests[0];
        assert_eq!(contract.tag, Tag::Contract);
        let page = page(&program);
        let row = |name: &str| -> String {
            let start = page
                .find(&format!("class=\"test\" title=\"{name}\">"))
                .expect("the test's row");
            page[start..start + page[start..].find("</th>").unwrap()].to_string()
        };
        assert!(
            row(promise.name).contains("<span class=\"beyond\" title=\"beyond the worksheet: "),
            "{}",
            row(promise.name)
        );
        assert!(
            !row(contract.name).contains("beyond"),
            "{}",
            row(contract.name)
        );
        assert!(
            page.contains(
                "<p class=\"legend\"><span class=\"beyond\">*</span>beyond the worksheet: "
            ),
            "{page}"
        );
        let rust = super::page(&matrix());
        assert!(!rust.contains("<span class=\"beyond\""), "{rust}");
    }

    /// The header row and the column of test names stay in view as the
    /// table scrolls (tested in a browser in tests/lab/html_browser.rs).
    #[test]
    fn the_header_row_and_the_test_names_are_sticky() {
        let style: Vec<&str> = STYLE.lines().collect();
        let rule = |selector: &str| {
            style
                .iter()
                .find(|line| line.starts_with(&format!("{selector} {{")))
                .unwrap_or_else(|| panic!("a rule for {selector}"))
                .to_string()
        };
        for selector in ["table.matrix thead th", "table.matrix tbody th.test"] {
            let rule = rule(selector);
            assert!(rule.contains("position: sticky;"), "{rule}");
            assert!(rule.contains("background: #fff;"), "opaque: {rule}");
        }
        assert!(rule("table.matrix thead th").contains("top: 0;"));
        assert!(rule("table.matrix tbody th.test").contains("left: 0;"));
    }

    /// A box per kind of mutant in the matrix and per step, each checked,
    /// each with the rule that hides its columns or rows when unchecked;
    /// every mutant's header and cells carry its kind, the reference's none.
    #[test]
    fn the_filters_hide_a_kind_s_columns_and_a_step_s_rows_without_a_script() {
        let matrix = matrix();
        let page = page(&matrix);
        assert!(!page.contains("<script"), "no script");
        let kinds: std::collections::BTreeSet<&str> = matrix
            .runs
            .iter()
            .filter_map(|run| Some(run.variant.mutant.as_ref()?.spec.kind.name()))
            .collect();
        for kind in &kinds {
            assert!(
                page.contains(&format!(
                    "<input type=\"checkbox\" id=\"show-{kind}\" checked> {kind}"
                )),
                "{kind}"
            );
            assert!(page.contains(&format!(
                "body:has(#show-{kind}:not(:checked)) table.matrix .kind-{kind} {{ display: none; }}"
            )));
        }
        let steps: std::collections::BTreeSet<u8> =
            matrix.tests.iter().map(|case| case.step).collect();
        assert_eq!(
            page.matches("id=\"show-").count(),
            kinds.len() + steps.len()
        );
        for step in steps {
            assert!(page.contains(&format!(
                "body:has(#show-step-{step}:not(:checked)) table.matrix #step-{step} {{ display: none; }}"
            )));
        }
        let mutants = matrix
            .runs
            .iter()
            .filter(|run| run.variant.mutant.is_some())
            .count();
        assert_eq!(
            page.matches(" kind-").count(),
            // A header and a cell per test, per mutant.
            mutants * (1 + matrix.tests.len())
        );
    }

    #[test]
    fn cells_carry_their_failure_escaped() {
        let page = page(&matrix());
        assert!(page.contains("class=\"cell killed group-start kind-worksheet\" title=\"04 × claim_at_exact_expiry_is_reassigned: claim(&quot;j&quot;, &quot;B&quot;, now=110, ttl=5): expected fence 2, got none &lt;script&gt;&amp;\""));
        assert!(page.contains("<code>claim_at_exact_expiry_is_reassigned</code> <span class=\"reason\">claim(\"j\", \"B\", now=110, ttl=5): expected fence 2, got none &lt;script&gt;&amp;</span>"));
        assert!(page.contains("class=\"cell timeout kind-"));
        assert!(page.contains("class=\"cell crash kind-"));
    }

    #[test]
    fn the_page_needs_nothing_from_outside() {
        let page = page(&matrix());
        assert!(!page.contains("<script"), "no script");
        assert!(!page.contains(" src="), "no embedded resource");
        assert!(!page.contains("url("), "no resource from the style");
        assert!(!page.contains("@import"), "no imported style");
        let links: Vec<&str> = page.split("<link").skip(1).collect();
        assert_eq!(links.len(), 1);
        assert!(links[0].starts_with(" rel=\"icon\" href=\"data:,\""));
        for href in page.split("href=\"").skip(1) {
            assert!(href.starts_with('#') || href.starts_with("data:"), "{href}");
        }
    }

    /// A crash's message quotes what a program wrote: the page shows it
    /// inert, in the cell's title and in the reasons under the test.
    #[test]
    fn a_program_s_output_is_shown_inert() {
        use crate::matrix::sample::small_matrix;
        let crash = Outcome::Crash {
            message: "it wrote \x1b]0;pwned\x07<b>\u{202e}\n  line two".into(),
        };
        let page = page(&small_matrix(
            Outcome::Pass,
            [Outcome::Pass, crash],
            [Outcome::Pass, Outcome::Pass],
        ));
        assert!(!page.contains(['\x1b', '\x07', '\u{202e}']), "{page}");
        let shown = "it wrote \\x1b]0;pwned\\x07&lt;b&gt;\\u{202e} line two";
        assert!(
            page.contains(&format!("<span class=\"reason\">crashed: {shown}</span>")),
            "{page}"
        );
        assert!(page.contains(&format!(": crashed: {shown}\">")), "{page}");
    }

    #[test]
    fn each_mutant_shows_its_diff_and_a_survivor_its_advice() {
        let page = page(&matrix());
        assert!(
            page.contains("<span class=\"del\">-        if done || held_until &gt; now {</span>")
        );
        assert!(
            page.contains("<span class=\"add\">+        if done || held_until &gt;= now {</span>")
        );
        let survivor = page
            .split("<section class=\"mutant\" id=\"mutant-07\">")
            .nth(1)
            .expect("a section for mutant 07");
        assert!(
            survivor.contains("class=\"advice\">Mutant 07 survives"),
            "{survivor}"
        );
        assert!(page.contains(
            "4 mutants: 1 killed by a failing test, 1 by a timeout, 1 by a crash; 1 survived."
        ));
        assert!(page.contains("mutant 07 survives"));
    }
}
