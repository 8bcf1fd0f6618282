//! What the step-through shows: the exercise before the prediction (laid
//! out so that the contract, the diff, the question and the step's own
//! tests end on one screen of 50 rows, right above the prompt), and the
//! run and the comparison after it.

use crate::exercise::{self, Exercise};
use crate::matrix::{Matrix, NotCounted, Verdict};
use crate::outcome::Outcome;
use crate::runner::VariantRun;
use crate::suite::{self, Case, Tag};
use crate::terminal::{code_diff, failure_text, fill, reflow};
use colored::Colorize;
use std::fmt::Write as _;

/// How many lines of unchanged code surround a change in the diff.
const DIFF_CONTEXT: usize = 2;

/// The exercise before the prediction: its title and under it `header`
/// (what runs: the lab's store, the student's own), the step's text, the
/// broken fragment as a diff of code (without the reference's comments,
/// which may explain the bug), and the question to answer. The parts the
/// student reasons from come last, next to the prompt.
pub fn exercise(exercise: &Exercise, header: &str, width: usize) -> String {
    let step = exercise.step();
    let mut out = format!(
        "{}\n{}\n",
        fill(
            &format!(
                "Step {step} of 8: {} (exercise {})",
                exercise::step_title(step),
                exercise.key
            ),
            width,
            "",
            ""
        )
        .bold(),
        // It names the student's file.
        fill(&crate::inert::line(header), width, "", "")
    );
    let lab = exercise.lab();
    let section = |title: &str, text: &str| {
        if text.is_empty() {
            String::new()
        } else {
            format!("\n{}\n{}\n", title.bold(), reflow(text, width))
        }
    };
    out.push_str(&section("About this step", &lab.introduction));
    out.push_str(&section("Why it matters", &lab.why));
    out.push_str(&section("Contract", &lab.contract));
    out.push_str(&fragment(exercise, width));
    out.push_str(&section("Predict before you run", &lab.predict));
    out
}

/// The broken fragment: the mutant's title, the worksheet's wording of it,
/// and the diff against the reference with a little context (comments
/// left out); `d` at the prompt shows it again.
pub fn fragment(exercise: &Exercise, width: usize) -> String {
    let mutant = exercise.mutant();
    let spec = &mutant.spec;
    let mut out = format!(
        "\n{}\n",
        fill(
            &format!("The broken fragment: mutant {}, {}", spec.id, spec.title),
            width,
            "",
            ""
        )
        .bold()
    );
    // The worksheet prints a piece of a line, not a statement: it is
    // quoted as it stands, on a line of its own, never run into a sentence.
    if let Some(original) = &spec.worksheet {
        writeln!(
            out,
            "The worksheet's fragment, as printed there:\n{}",
            fill(original, width, "    ", "    ")
        )
        .unwrap();
    }
    out.push_str(&mutant_diff(exercise, DIFF_CONTEXT, width));
    out
}

/// The mutant's changed lines, with where they are and the few lines
/// between two changes close together (a line moved past another): what
/// the question is about, shown next to the prompt.
fn changed_lines(exercise: &Exercise, width: usize) -> String {
    let mutant = exercise.mutant();
    crate::terminal::code_change(
        &mutant.original,
        &mutant.source,
        &mutant.spec.file,
        comment_of(&mutant.spec.file),
        width,
    )
}

/// What starts a comment line in `file`'s language.
fn comment_of(file: &str) -> &'static str {
    if file.ends_with(".py") {
        "#"
    } else {
        "//"
    }
}

/// The mutant against its reference, with `context` lines around each
/// change, the comments of the store's language left out.
fn mutant_diff(exercise: &Exercise, context: usize, width: usize) -> String {
    let mutant = exercise.mutant();
    code_diff(
        &mutant.original,
        &mutant.source,
        &mutant.spec.file,
        comment_of(&mutant.spec.file),
        context,
        width,
    )
}

/// The menu before the prompt: the step's own tests, in columns when the
/// width allows, a line for the earlier steps' tests, which are in force
/// too and listed on request, then the changed lines and the question, so
/// that what the question is about is on screen when it is asked (on a
/// terminal of 24 rows too), and the keys of the prompt.
pub fn menu(exercise: &Exercise, menu: &[&'static Case], width: usize) -> String {
    let step = exercise.step();
    let own: Vec<(usize, &Case)> = numbered(menu)
        .filter(|(_, case)| case.step == step)
        .collect();
    let earlier = menu.len() - own.len();
    let mut out = format!("\n{}\n", format!("The tests of step {step}:").bold());
    out.push_str(&columns(&own, width));
    if earlier > 0 {
        writeln!(
            out,
            "Tests 1 to {earlier}, of {}, are in force too: t lists them.",
            crate::report::steps_through(step - 1)
        )
        .unwrap();
    }
    if own.iter().any(|(_, case)| case.tag == Tag::Reference) {
        writeln!(
            out,
            "{}",
            "* beyond the worksheet: the Rust store's own stricter promises".dimmed()
        )
        .unwrap();
    }
    writeln!(
        out,
        "{} {}{}",
        "The change:".bold(),
        changed_lines(exercise, width),
        reflow(
            "Which tests will catch the mutant? Numbers or names, comma-separated.",
            width
        )
        .bold()
    )
    .unwrap();
    writeln!(out, "{}", fill(PROMPT_KEYS, width, "", "").dimmed()).unwrap();
    out
}

/// The keys of the prediction prompt, in one line.
pub const PROMPT_KEYS: &str = "d: the diff, h: a hint, t: all tests, probe: write a probe, ?: help";

/// What each key of the prediction prompt does.
pub fn prompt_help(width: usize) -> String {
    let mut out = String::new();
    for (key, what) in [
        ("NUMBERS, NAMES", "your prediction: the tests that will catch the mutant, by number or name, comma-separated"),
        ("d", "the broken fragment and its diff again"),
        ("h", "the next hint (lab hint shows them again later)"),
        ("t", "every test in force, by step"),
        ("probe", "write a probe instead: operations that tell the mutant from the reference"),
        ("?", "this help"),
    ] {
        out.push_str(&fill(&format!("{key:<15} {what}"), width, "  ", &" ".repeat(18)));
        out.push('\n');
    }
    out
}

/// Every test in force, by step, in columns.
pub fn all_tests(menu: &[&'static Case], width: usize) -> String {
    let mut out = String::new();
    let mut steps: Vec<u8> = menu.iter().map(|case| case.step).collect();
    steps.dedup();
    for step in steps {
        writeln!(out, "{}", format!("step {step}").bold()).unwrap();
        let tests: Vec<(usize, &Case)> = numbered(menu)
            .filter(|(_, case)| case.step == step)
            .collect();
        out.push_str(&columns(&tests, width));
    }
    out
}

/// The tests with their numbers in the suite (from 1).
fn numbered<'a>(menu: &'a [&'static Case]) -> impl Iterator<Item = (usize, &'static Case)> + 'a {
    menu.iter()
        .enumerate()
        .map(|(index, case)| (index + 1, *case))
}

/// Numbered test names in as many columns as fit `width`, filled down
/// each column first.
fn columns(tests: &[(usize, &Case)], width: usize) -> String {
    let cell = tests
        .iter()
        .map(|(_, case)| case.name.len() + 7)
        .max()
        .unwrap_or(0);
    let count = (width.saturating_sub(2) / cell.max(1)).clamp(1, 3);
    let rows = tests.len().div_ceil(count);
    let mut out = String::new();
    for row in 0..rows {
        let mut line = String::from(" ");
        for column in 0..count {
            if let Some((number, case)) = tests.get(column * rows + row) {
                // `*` marks a test beyond the worksheet, as `lab tests` does.
                let mark = if case.tag == Tag::Reference { '*' } else { ' ' };
                write!(
                    line,
                    " {number:>4}{mark} {:<width$}",
                    case.name,
                    width = cell - 7
                )
                .unwrap();
            }
        }
        writeln!(out, "{}", line.trim_end()).unwrap();
    }
    out
}

/// The run: the step's own tests with the verdict of each, the earlier
/// steps' summed up (each one that caught the mutant, or that the
/// reference fails, shown too), with the reason of every catch. Answers
/// the tests that caught the mutant, by the matrix's one rule
/// ([`Matrix::caught_by`]).
pub fn verdicts(matrix: &Matrix, step: u8, width: usize) -> (String, Vec<String>) {
    let (reference, mutant) = (&matrix.runs[0], &matrix.runs[1]);
    let name_width = name_width(matrix, mutant, width);
    let mut out = format!(
        "\n  {:>4}  {:<name_width$}  {:<9} {}\n",
        "",
        "test".bold(),
        "reference".bold(),
        format!("mutant {}", mutant.variant.id).bold()
    );
    let caught = matrix.caught_by(mutant);
    let counts = |case: &Case, run: &VariantRun| matrix.verdict(case, run) == Some(Verdict::Fail);
    let (mut quiet, mut earlier, mut not_counted) = (0, 0, Vec::new());
    for case in &matrix.tests {
        let verdict = matrix.verdict(case, mutant);
        if let Some(Verdict::NotCounted(why)) = verdict {
            not_counted.push((case.name, why));
        }
        if case.step < step {
            earlier += 1;
            if !counts(case, mutant) && !counts(case, reference) {
                quiet += 1;
                continue;
            }
        }
        out.push_str(&verdict_line(
            suite::number(case.name),
            case,
            (reference, mutant),
            (matrix.verdict(case, reference), verdict),
            name_width,
            width,
        ));
    }
    out.push_str(&quiet_earlier_text(step, earlier, quiet, width));
    if let Some((test, reason)) = matrix.reference_failures().into_iter().next() {
        writeln!(
            out,
            "\n{} the reference fails {test}: {reason}. The suite or this machine is broken; the comparison below is not to be trusted.",
            "warning:".red().bold(),
        )
        .unwrap();
    }
    out.push_str(&run_summary(
        matrix,
        mutant,
        caught.len(),
        &not_counted,
        width,
    ));
    (out, caught.into_iter().map(String::from).collect())
}

/// How wide the test names' column is: the names take what the number,
/// the reference's cell and the widest cell of the `mutant` leave of a
/// line `width` columns wide; longer ones are abbreviated.
fn name_width(matrix: &Matrix, mutant: &VariantRun, width: usize) -> usize {
    let widest_cell = matrix
        .tests
        .iter()
        .map(|case| {
            mutant_cell(mutant.outcome(case.name), matrix.verdict(case, mutant))
                .0
                .len()
        })
        .max()
        .unwrap_or(0);
    matrix
        .tests
        .iter()
        .map(|case| case.name.len())
        .max()
        .unwrap_or(0)
        .min(width.saturating_sub(ROW_FRAME + widest_cell))
}

/// The line that says how many of the `earlier` steps' tests (before
/// `step`) are `quiet` (tell the mutant from the reference neither way)
/// and so not listed; empty when `step` has no earlier tests.
fn quiet_earlier_text(step: u8, earlier: usize, quiet: usize, width: usize) -> String {
    let steps = crate::report::steps_through(step.saturating_sub(1));
    let text = match (earlier, quiet) {
        (0, _) => return String::new(),
        (all, quiet) if all == quiet => format!(
            "None of the {} of {steps} tells the mutant from the reference (not listed).",
            tests_phrase(all)
        ),
        (all, quiet) => format!("The other {quiet} of the {all} tests of {steps} do not tell the mutant from the reference (not listed)."),
    };
    format!("{}\n", fill(&text, width, "  ", "  "))
}

/// The run's last line: how many tests caught the mutant, how many still
/// pass on it, and how many count for nothing.
fn run_summary(
    matrix: &Matrix,
    mutant: &VariantRun,
    caught: usize,
    not_counted: &[(&str, NotCounted)],
    width: usize,
) -> String {
    let still_pass = matrix
        .tests
        .iter()
        .filter(|case| matrix.verdict(case, mutant) == Some(Verdict::Pass))
        .count();
    let mut summary = format!(
        "{} of {} caught the mutant; {still_pass} still pass on it, as the worksheet warns normal cases may",
        tests_phrase(caught),
        matrix.tests.len()
    );
    // Each kind of failure that does not count, said as what it is.
    for kind in [
        NotCounted::BeyondTheWorksheet,
        NotCounted::FailsOnTheReference,
    ] {
        let names: Vec<&str> = not_counted
            .iter()
            .filter(|(_, why)| *why == kind)
            .map(|(name, _)| *name)
            .collect();
        let s = if names.len() == 1 { "s" } else { "" };
        let said = match kind {
            NotCounted::BeyondTheWorksheet => format!(
                "beyond the worksheet for this store (the Rust store's own promises) fail{s} on the mutant and count{s} for nothing"
            ),
            NotCounted::FailsOnTheReference => {
                format!("that the reference fails too count{s} for nothing")
            }
        };
        if !names.is_empty() {
            write!(
                summary,
                "; {} {said}: {}",
                tests_phrase(names.len()),
                names.join(", ")
            )
            .unwrap();
        }
    }
    format!("\n{}.\n", reflow(&summary, width))
}

/// "1 test", "3 tests".
fn tests_phrase(count: usize) -> String {
    crate::report::tests_phrase(count)
}

/// One test's verdict on both sides, and why the mutant failed it.
fn verdict_line(
    number: usize,
    case: &Case,
    (reference, mutant): (&VariantRun, &VariantRun),
    (on_reference, verdict): (Option<Verdict>, Option<Verdict>),
    name_width: usize,
    width: usize,
) -> String {
    let reference_cell = match (reference.outcome(case.name), on_reference) {
        (Some(Outcome::Pass), _) => format!("{:<9}", "pass").green().to_string(),
        (Some(other), Some(Verdict::NotCounted(_))) => {
            format!("{:<9}", other.label()).dimmed().to_string()
        }
        (Some(other), _) => format!("{:<9}", other.label().to_uppercase())
            .red()
            .bold()
            .to_string(),
        (None, _) => format!("{:<9}", "-"),
    };
    let on_mutant = mutant.outcome(case.name);
    let mutant_cell = mutant_cell(on_mutant, verdict).1;
    let mut name = case.name.to_string();
    // ASCII dots, not an ellipsis: every column of the row is one byte, so
    // a tool that counts bytes measures what the reader sees.
    if name.len() > name_width {
        name.truncate(name_width.saturating_sub(3));
        name.push_str("...");
    }
    let mut out = format!("  {number:>4}  {name:<name_width$}  {reference_cell} {mutant_cell}\n");
    if verdict != Some(Verdict::Fail) {
        return out;
    }
    match on_mutant {
        Some(Outcome::Fail {
            check,
            expected,
            actual,
            state,
        }) => out.push_str(&failure_text(
            check,
            expected,
            actual,
            state.as_ref().map(ToString::to_string).as_deref(),
            8,
            width,
        )),
        Some(other @ (Outcome::Timeout { .. } | Outcome::Crash { .. })) => {
            let reason = other.reason().unwrap_or_default();
            writeln!(out, "        {}", crate::inert::lines(&reason)).unwrap();
        }
        _ => {}
    }
    out
}

/// The columns of a row of the run other than the name and the mutant's
/// cell: the indent (2), the number (4), the gaps around the name (2 and
/// 2), the reference's cell (9) and the gap after it (1).
const ROW_FRAME: usize = 20;

/// The mutant's cell of a row, plain (to measure) and as shown.
fn mutant_cell(on_mutant: Option<&Outcome>, verdict: Option<Verdict>) -> (String, String) {
    match (on_mutant, verdict) {
        (Some(other), Some(Verdict::Fail)) => {
            let text = format!("{} (caught)", other.label().to_uppercase());
            (text.clone(), text.yellow().bold().to_string())
        }
        (Some(other), Some(Verdict::NotCounted(_))) => {
            let text = format!("{} (not counted)", other.label());
            (text.clone(), text.dimmed().to_string())
        }
        (Some(_), _) => {
            let text = "pass (survives)".to_string();
            (text.clone(), text.dimmed().to_string())
        }
        (None, _) => ("-".into(), "-".into()),
    }
}

/// After the comparison: why the mutant breaks the contract, and what to
/// notice now, from the step's text.
pub fn after_the_run(exercise: &Exercise, width: usize) -> String {
    let mut out = format!(
        "\n{}\n{}\n",
        "Why it breaks the contract".bold(),
        reflow(exercise.mutant().spec.explanation.trim(), width)
    );
    let after = exercise.lab().after;
    if !after.is_empty() {
        write!(
            out,
            "\n{}\n{}\n",
            "After the run".bold(),
            reflow(&after, width)
        )
        .unwrap();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::TestRun;
    use crate::suite;
    use crate::variant::{self, Variant};
    use std::time::Duration;

    /// A run of `tests` in which the named ones crash and the rest pass.
    fn run(variant: Variant, tests: &[&'static Case], crashing: &[&str]) -> VariantRun {
        let outcome = |name: &str| {
            if crashing.contains(&name) {
                Outcome::Crash {
                    message: "boom".into(),
                }
            } else {
                Outcome::Pass
            }
        };
        let runs = tests
            .iter()
            .map(|case| TestRun::new(case.name, outcome(case.name), Duration::ZERO))
            .collect();
        VariantRun { variant, runs }
    }

    /// The matrix of exercise `step`'s mutant against the reference over
    /// steps 1 to `step`, with the given tests crashing on each side.
    fn matrix(step: u8, on_reference: &[&str], on_mutant: &[&str]) -> Matrix {
        let tests: Vec<&'static Case> = suite::cases_through(step).collect();
        let mutant = variant::compiled_mutant(&format!("0{step}")).expect("a worksheet mutant");
        let runs = vec![
            run(Variant::reference(), &tests, on_reference),
            run(Variant::compiled(mutant), &tests, on_mutant),
        ];
        Matrix { tests, runs }
    }

    /// The tests that have a line in the run, in order, each numbered as
    /// in the suite (the numbers a prediction may name).
    fn listed(shown: &str) -> Vec<&str> {
        shown
            .lines()
            .filter_map(|line| {
                let mut words = line.split_whitespace();
                let number: usize = words.next()?.parse().ok()?;
                let name = words.next()?;
                let position = suite::CASES.iter().position(|case| case.name == name)?;
                assert_eq!(number, position + 1, "{name}'s number in {line:?}");
                Some(name)
            })
            .collect()
    }

    fn names(step: u8) -> Vec<&'static str> {
        suite::CASES
            .iter()
            .filter(|case| case.step == step)
            .map(|case| case.name)
            .collect()
    }

    fn earlier_count(step: u8) -> usize {
        suite::CASES.iter().filter(|case| case.step < step).count()
    }

    /// The run's rows are as wide as the screen allows and no wider: with
    /// names longer than the room, the widest row (a crash the mutant's
    /// tests caught) is exactly the width, and the names are shortened
    /// with dots.
    #[test]
    fn the_rows_of_the_run_fill_the_width_and_shorten_long_names() {
        colored::control::set_override(false);
        let long = "claim_of_a_missing_job_is_none_and_creates_nothing";
        let (shown, _) = verdicts(&matrix(4, &[], &[long]), 4, 60);
        let rows: Vec<&str> = shown
            .lines()
            .filter(|line| line.starts_with("    ") && line.contains("pass"))
            .collect();
        assert!(!rows.is_empty(), "{shown}");
        assert_eq!(rows.iter().map(|row| row.len()).max(), Some(60), "{shown}");
        let caught = rows.iter().find(|row| row.contains("(caught)")).unwrap();
        // The test's number in the suite, as the run shows it.
        let number = 1 + suite::CASES
            .iter()
            .position(|case| case.name == long)
            .unwrap();
        assert_eq!(
            *caught,
            format!("    {number}  claim_of_a_missing_job...  pass      CRASH (caught)")
        );
    }

    /// The step's own tests are all listed; an earlier one only when it
    /// caught the mutant or failed on the reference; the rest are summed
    /// up in one line that counts them.
    #[test]
    fn the_run_lists_the_steps_tests_and_the_earlier_ones_that_matter() {
        let (early, own) = (names(1)[0], names(3)[0]);
        let (shown, caught) = verdicts(&matrix(3, &[], &[early, own]), 3, 200);
        let mut expected = vec![early];
        expected.extend(names(3));
        assert_eq!(listed(&shown), expected, "{shown}");
        assert_eq!(caught, [early, own]);
        let all = earlier_count(3);
        assert!(
            shown.contains(&format!(
                "The other {} of the {all} tests of steps 1 to 2 do not tell the mutant from the reference (not listed).",
                all - 1
            )),
            "{shown}"
        );
        assert!(!shown.contains("warning:"), "{shown}");
        let total = all + names(3).len();
        assert!(
            shown.contains(&format!(
                "2 tests of {total} caught the mutant; {} still pass on it",
                total - 2
            )),
            "{shown}"
        );

        let broken = names(1)[1];
        let (shown, caught) = verdicts(&matrix(2, &[broken], &[]), 2, 200);
        let mut expected = vec![broken];
        expected.extend(names(2));
        assert_eq!(listed(&shown), expected, "{shown}");
        assert!(caught.is_empty());
        assert!(
            shown.contains(&format!(
                "The other {} of the {} tests of step 1 do not tell the mutant from the reference (not listed).",
                earlier_count(2) - 1,
                earlier_count(2)
            )),
            "{shown}"
        );
        assert!(
            shown.contains(&format!("warning: the reference fails {broken}: ")),
            "{shown}"
        );

        let (shown, caught) = verdicts(&matrix(2, &[], &[]), 2, 200);
        assert_eq!(listed(&shown), names(2), "{shown}");
        assert!(caught.is_empty());
        assert!(
            shown.contains(&format!(
                "None of the {} tests of step 1 tells the mutant from the reference (not listed).",
                earlier_count(2)
            )),
            "{shown}"
        );
        assert!(!shown.contains("count for nothing"), "{shown}");
    }

    /// For a program (the Python store), a test beyond the worksheet that
    /// fails on its reference and its mutant alike is shown as not
    /// counted: it is no catch, no warning, and the counts say so.
    #[test]
    fn a_programs_failures_beyond_the_worksheet_are_neither_catches_nor_warnings() {
        use crate::external::ImplCommand;
        let tests: Vec<&'static Case> = suite::cases_through(4).collect();
        let boundary = "claim_at_exact_expiry_is_reassigned";
        let busy = "claim_while_the_lock_is_held_is_a_busy_error";
        assert_eq!(suite::case(busy).unwrap().tag, suite::Tag::Reference);
        let program = |id: &str, mutant: Option<Variant>| Variant {
            mutant: mutant.and_then(|variant| variant.mutant),
            ..Variant::program(id, ImplCommand::parse("python3 store.py").unwrap())
        };
        let failing = |variant: Variant, failing: &[&str]| {
            let mut run = run(variant, &tests, &[]);
            for test in &mut run.runs {
                if failing.contains(&test.test.as_str()) {
                    test.outcome = Outcome::Fail {
                        check: "c".into(),
                        expected: "e".into(),
                        actual: "a".into(),
                        state: None,
                    };
                }
            }
            run
        };
        let matrix = Matrix {
            runs: vec![
                failing(program("reference", None), &[busy]),
                failing(program("py04", Variant::find("04")), &[busy, boundary]),
            ],
            tests: tests.clone(),
        };
        colored::control::set_override(false);
        let (shown, caught) = verdicts(&matrix, 4, 200);
        assert_eq!(caught, [boundary]);
        assert!(!shown.contains("warning"), "{shown}");
        let line = |name: &str| {
            shown
                .lines()
                .find(|line| line.contains(name))
                .unwrap_or_else(|| panic!("{name} is listed: {shown}"))
                .to_string()
        };
        assert!(
            line(busy).ends_with("fail      fail (not counted)"),
            "{shown}"
        );
        assert!(
            line(boundary).ends_with("pass      FAIL (caught)"),
            "{shown}"
        );
        let words = shown.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            words.contains(&format!(
                "1 test of {} caught the mutant; {} still pass on it, as the worksheet warns normal cases may; 1 test beyond the worksheet for this store (the Rust store's own promises) fails on the mutant and counts for nothing: {busy}",
                tests.len(),
                tests.len() - 2
            )),
            "{shown}"
        );
    }
}
