//! A graded class ([`ClassGrade`]) rendered: a row per student for the
//! terminal and as CSV, the class per exercise, and the misconceptions as
//! text and Markdown.
//!
//! What a student chose (a name, a file name, the tests they named, a
//! `--why`, a reflection) and what their program wrote (a reason a check
//! quotes) is untrusted: the terminal's views show it made inert
//! ([`crate::inert`]), padded and cut by the width of what is shown; the CSV
//! files write it as [`crate::report::class::safe_csv`] says, the Markdown as [`markdown_cell::cell`]
//! does.

use super::markdown_cell;
use super::safe_csv::SafeCsv;
use crate::course::class_check::{CheckResult, ImplCheck};
use crate::course::grade::{
    max_total, AttemptGrade, ClassGrade, ExerciseAttempts, FileStatus, GivenFile, Misconceptions,
    StudentGrade,
};
use crate::exercise;
use crate::inert;
use crate::terminal::fill;
use std::fmt::Write as _;

/// How wide a student's name (or file) may be in a row, in characters.
const NAME_WIDTH: usize = 16;

/// What the marks beside a score mean, for the legend.
pub(crate) const LEGEND: &str = "Each score is recomputed from the recorded prediction against \
what the suite catches today. ! the file claims another score (see below the row); \
? not recomputed, the file's score is shown. - not attempted.";

/// `text` cut to `width` columns of a terminal, `..` marking a cut, then
/// padded with spaces to `width` columns: a wide character (CJK, most
/// emoji) takes two columns, as the terminal draws it, not one.
fn cut(text: &str, width: usize) -> String {
    use unicode_width::UnicodeWidthChar;
    let columns = unicode_width::UnicodeWidthStr::width(text);
    let mut kept = String::new();
    let mut used = 0;
    if columns <= width {
        kept.push_str(text);
        used = columns;
    } else {
        for c in text.chars() {
            let wide = c.width().unwrap_or(0);
            if used + wide > width.saturating_sub(2) {
                break;
            }
            kept.push(c);
            used += wide;
        }
        kept.push_str("..");
        used += 2;
    }
    kept.push_str(&" ".repeat(width.saturating_sub(used)));
    kept
}

/// A score in its column: the number, then `!` when the file claims
/// another score, `?` when it could not be recomputed.
fn cell(attempt: Option<&AttemptGrade>) -> String {
    match attempt {
        None => format!("{:>4} ", "-"),
        Some(attempt) => {
            let mark = if attempt.differs() {
                "!"
            } else if attempt.recomputed.is_none() {
                "?"
            } else {
                " "
            };
            format!("{:>4}{mark}", attempt.shown())
        }
    }
}

/// One student as two lines (the first attempts, then the latest), each
/// exercise a column, with the totals; then the row's flags, filled to
/// `width`.
fn student_rows(student: &StudentGrade, width: usize) -> String {
    let keys: Vec<String> = exercise::exercises().into_iter().map(|e| e.key).collect();
    let line = |label: &str, which: &str, latest: bool, total: u32| {
        let cells: String = keys
            .iter()
            .map(|key| {
                cell(
                    student
                        .exercise(key)
                        .map(|entry| if latest { &entry.latest } else { &entry.first }),
                )
            })
            .collect();
        let label = cut(&inert::line(label), NAME_WIDTH);
        format!("{label} {which:>6}{cells}{total:>6}\n")
    };
    let below = if student.named { &student.file } else { "" };
    let mut out = line(&student.student, "first", false, student.first_total);
    out.push_str(&line(below, "latest", true, student.latest_total));
    let on_python: Vec<&str> = student
        .exercises
        .iter()
        .filter(|entry| entry.first.on_python() || entry.latest.on_python())
        .map(|entry| entry.exercise.as_str())
        .collect();
    if !on_python.is_empty() {
        out.push_str(&fill(
            &format!("on the Python store: {}", on_python.join(" ")),
            width,
            "      ",
            "        ",
        ));
        out.push('\n');
    }
    for flag in &student.flags {
        out.push_str(&fill(&inert::line(flag), width, "    ! ", "      "));
        out.push('\n');
    }
    out
}

/// The class for the terminal: a legend, a row per student (first and
/// latest attempt, each exercise a column), then the class per exercise.
/// Fits `width` columns (80 and more).
pub fn text(grade: &ClassGrade, width: usize) -> String {
    let mut out = String::new();
    for (store, reason) in &grade.not_recomputed {
        out.push_str(&fill(
            &format!(
                "The {store} store's scores are not recomputed: {reason}. Its attempts show the score their files record, marked ?."
            ),
            width,
            "",
            "",
        ));
        out.push_str("\n\n");
    }
    let students = grade.students.len();
    writeln!(
        out,
        "{students} student{}, {} answered the closing reflection",
        if students == 1 { "" } else { "s" },
        grade.reflected
    )
    .unwrap();
    out.push_str(&fill(LEGEND, width, "", ""));
    out.push_str("\n\n");
    let header: String = exercise::exercises()
        .iter()
        .map(|exercise| format!("{:>4} ", exercise.key))
        .collect();
    writeln!(
        out,
        "{:<NAME_WIDTH$} {:>6}{header}{:>6}",
        "student",
        "",
        format!("/{}", max_total())
    )
    .unwrap();
    for student in &grade.students {
        out.push_str(&student_rows(student, width));
    }
    out.push('\n');
    out.push_str(&exercises_text(grade, width));
    out
}

/// The class per exercise: the first attempts beside the latest (students
/// who named a killer, the mean score), the probes that killed, the item
/// statistics (difficulty, discrimination, the mean attempts and hints
/// seen), and the most common wrong guesses, first and latest.
pub fn exercises_text(grade: &ClassGrade, width: usize) -> String {
    let mut out = format!(
        "{:>8}  {:>9}  {:>16}  {:>12}  {:>16}\n",
        "exercise", "attempted", "named a killer", "probe killed", "mean score"
    );
    for entry in &grade.exercises {
        let stats = &entry.statistics;
        let (killers, mean) = if entry.attempted == 0 {
            ("-".to_string(), "-".to_string())
        } else {
            (
                format!(
                    "{} -> {}",
                    stats.first_predicted_a_killer, entry.predicted_a_killer
                ),
                format!(
                    "{} -> {}%",
                    percent(stats.first_mean_score),
                    entry.mean_score
                ),
            )
        };
        writeln!(
            out,
            "{:>8}  {:>9}  {:>16}  {:>12}  {:>16}",
            entry.exercise, entry.attempted, killers, entry.probe_killed, mean
        )
        .unwrap();
    }
    out.push_str(&fill(
        "First attempt -> latest. Difficulty: the share whose first attempt named a killer. Discrimination: how the first attempt's score goes with the rest of the student's first total (-1 to 1).",
        width,
        "",
        "",
    ));
    writeln!(
        out,
        "\n\n{:>8}  {:>10}  {:>14}  {:>13}  {:>10}",
        "exercise", "difficulty", "discrimination", "mean attempts", "mean hints"
    )
    .unwrap();
    for entry in &grade.exercises {
        let stats = &entry.statistics;
        writeln!(
            out,
            "{:>8}  {:>10}  {:>14}  {:>13}  {:>10}",
            entry.exercise,
            percent(stats.difficulty.map(|share| share * 100.0)),
            decimal(stats.discrimination, 2),
            decimal(stats.mean_attempts, 1),
            decimal(stats.mean_hints, 1),
        )
        .unwrap();
    }
    let wrong: Vec<String> = grade
        .exercises
        .iter()
        .filter(|entry| {
            !entry.statistics.wrong_first_guesses.is_empty()
                || entry.most_common_wrong_guess.is_some()
        })
        .map(|entry| {
            let guesses = |list: &[(String, usize)]| {
                list.iter()
                    .map(|(test, count)| format!("{} ({count})", inert::line(test)))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let mut text = format!("exercise {}: first: {}", entry.exercise, {
                let first = guesses(&entry.statistics.wrong_first_guesses);
                if first.is_empty() {
                    "none".to_string()
                } else {
                    first
                }
            });
            if let Some(latest) = &entry.most_common_wrong_guess {
                text.push_str(&format!(
                    "; latest: {}",
                    guesses(std::slice::from_ref(latest))
                ));
            }
            fill(&text, width, "  ", "    ")
        })
        .collect();
    if !wrong.is_empty() {
        writeln!(out, "\nThe most common wrong guesses:").unwrap();
        for line in wrong {
            writeln!(out, "{line}").unwrap();
        }
    }
    out
}

/// A statistic to `places` decimals, `-` when there is none.
pub(crate) fn decimal(value: Option<f64>, places: usize) -> String {
    value.map_or("-".to_string(), |value| format!("{value:.places$}"))
}

/// A percentage, whole, `-` when there is none.
pub(crate) fn percent(value: Option<f64>) -> String {
    value.map_or("-".to_string(), |value| format!("{value:.0}%"))
}

/// The class as CSV (RFC 4180): a header row, then a row for every file
/// given, in the order given: its student, the file, what became of it
/// (`graded`; `merged into the row of FILE`; `graded apart: why`; `given
/// twice: graded once`; `unreadable: why`), and for a graded row each
/// exercise's first and latest score (empty when not attempted), the
/// totals, the stores its attempts were on, and the flags joined by `; `.
/// Every cell is quoted and made safe as [`crate::report::class::safe_csv`] says.
pub fn csv(grade: &ClassGrade) -> String {
    let keys: Vec<String> = exercise::exercises().into_iter().map(|e| e.key).collect();
    let mut writer = SafeCsv::new();
    let mut header = vec![
        "student".to_string(),
        "file".to_string(),
        "status".to_string(),
    ];
    for key in &keys {
        header.push(format!("{key} first"));
        header.push(format!("{key} latest"));
    }
    header.extend(["first total", "latest total", "stores", "flags"].map(String::from));
    writer.row(&header);
    for given in &grade.files {
        let status = status(grade, given);
        let student = match &given.status {
            FileStatus::Graded { row } | FileStatus::NotMerged { row, .. } => {
                Some(&grade.students[*row])
            }
            FileStatus::MergedInto { row } => {
                let into = &grade.students[*row];
                let mut row = vec![into.student.clone(), given.file.clone(), status];
                row.resize(header.len(), String::new());
                writer.row(&row);
                continue;
            }
            FileStatus::GivenTwice | FileStatus::Unreadable { .. } => None,
        };
        let mut row = vec![
            student.map_or(String::new(), |student| student.student.clone()),
            given.file.clone(),
            status,
        ];
        if let Some(student) = student {
            for key in &keys {
                let entry = student.exercise(key);
                let score = |attempt: Option<&AttemptGrade>| {
                    attempt.map_or(String::new(), |attempt| attempt.shown().to_string())
                };
                row.push(score(entry.map(|entry| &entry.first)));
                row.push(score(entry.map(|entry| &entry.latest)));
            }
            row.push(student.first_total.to_string());
            row.push(student.latest_total.to_string());
            row.push(stores(&student.exercises));
            row.push(student.flags.join("; "));
        }
        // Every row has every column, empty where it has nothing to say.
        row.resize(header.len(), String::new());
        writer.row(&row);
    }
    writer.text()
}

/// What became of a file given, in words: `graded`; `merged into the row
/// of FILE`; `graded apart: why`; `given twice: graded once`;
/// `unreadable: why`.
pub(crate) fn status(grade: &ClassGrade, given: &GivenFile) -> String {
    match &given.status {
        FileStatus::Graded { .. } => "graded".to_string(),
        FileStatus::NotMerged { why, .. } => format!("graded apart: {why}"),
        FileStatus::MergedInto { row } => {
            format!("merged into the row of {}", grade.students[*row].file)
        }
        FileStatus::GivenTwice => "given twice: graded once".to_string(),
        FileStatus::Unreadable { reason } => format!("unreadable: {reason}"),
    }
}

/// The class per exercise as CSV: a header row, then a row per exercise
/// with its attempts, the first and latest attempts that named a killer
/// and their mean scores, the probes that killed, the item statistics
/// (difficulty and discrimination to three places, empty when there is
/// none), and the most common wrong first guesses (`test (students)`,
/// joined by `; `).
pub fn exercises_csv(grade: &ClassGrade) -> String {
    let mut writer = SafeCsv::new();
    writer.row([
        "exercise",
        "attempted",
        "first named a killer",
        "latest named a killer",
        "first mean score",
        "latest mean score",
        "probe killed",
        "difficulty",
        "discrimination",
        "mean attempts",
        "mean hints",
        "wrong first guesses",
    ]);
    let number = |value: Option<f64>| value.map_or(String::new(), |v| format!("{v:.3}"));
    for entry in &grade.exercises {
        let stats = &entry.statistics;
        let tried = entry.attempted > 0;
        writer.row([
            entry.exercise.clone(),
            entry.attempted.to_string(),
            stats.first_predicted_a_killer.to_string(),
            entry.predicted_a_killer.to_string(),
            number(stats.first_mean_score),
            if tried {
                entry.mean_score.to_string()
            } else {
                String::new()
            },
            entry.probe_killed.to_string(),
            number(stats.difficulty),
            number(stats.discrimination),
            number(stats.mean_attempts),
            number(stats.mean_hints),
            stats
                .wrong_first_guesses
                .iter()
                .map(|(test, students)| format!("{test} ({students})"))
                .collect::<Vec<_>>()
                .join("; "),
        ]);
    }
    writer.text()
}

/// The stores a student's attempts were on, each with its exercises:
/// `rust: 1 2 4; python: 6`.
pub(crate) fn stores(exercises: &[ExerciseAttempts]) -> String {
    let mut by_store: Vec<(String, Vec<&str>)> = Vec::new();
    for entry in exercises {
        for attempt in [&entry.first, &entry.latest] {
            let store = attempt.store.clone().unwrap_or_else(|| "unknown".into());
            match by_store.iter_mut().find(|(name, _)| *name == store) {
                Some((_, keys)) if keys.last() == Some(&entry.exercise.as_str()) => {}
                Some((_, keys)) => keys.push(&entry.exercise),
                None => by_store.push((store, vec![&entry.exercise])),
            }
        }
    }
    by_store
        .iter()
        .map(|(store, keys)| format!("{store}: {}", keys.join(" ")))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The misconceptions for the terminal: per exercise, each wrong guess
/// with how many students made it and their reasons; then the closing
/// reflections' answers.
pub fn misconceptions_text(grade: &ClassGrade, width: usize) -> String {
    let mut out = String::new();
    if grade.misconceptions.is_empty() {
        out.push_str("No wrong predictions were recorded.\n");
    }
    for Misconceptions { exercise, wrong } in &grade.misconceptions {
        writeln!(out, "Exercise {exercise}").unwrap();
        for guess in wrong {
            let students = match guess.students {
                1 => "1 student".to_string(),
                n => format!("{n} students"),
            };
            out.push_str(&fill(
                &format!("{} ({students}) did not catch it", inert::line(&guess.test)),
                width,
                "  ",
                "    ",
            ));
            out.push('\n');
            for reason in &guess.reasons {
                out.push_str(&fill(
                    &format!(
                        "{}: \"{}\"",
                        inert::line(&reason.student),
                        inert::line(&reason.why)
                    ),
                    width,
                    "    - ",
                    "      ",
                ));
                out.push('\n');
            }
        }
        out.push('\n');
    }
    if !grade.reflections.is_empty() {
        out.push_str("Closing reflections\n");
        for answers in &grade.reflections {
            writeln!(out, "  {}", inert::line(&answers.student)).unwrap();
            for (question, answer) in [
                ("why tests are kept", &answers.why_tests_are_kept),
                ("not guaranteed", &answers.not_guaranteed),
            ] {
                out.push_str(&fill(
                    &format!("{question}: {}", inert::line(answer)),
                    width,
                    "    - ",
                    "      ",
                ));
                out.push('\n');
            }
        }
    }
    out
}

/// What a check's row says: the steps passed, or why there are none, and
/// the sandbox's limit the submission met.
fn check_summary(check: &ImplCheck) -> (String, String) {
    let (passed, result) = check_result(&check.result);
    match &check.limit {
        Some(limit) => (
            passed,
            format!("{result}; met the sandbox's limit on {limit}"),
        ),
        None => (passed, result),
    }
}

/// The steps passed, or why there are none.
fn check_result(result: &CheckResult) -> (String, String) {
    match result {
        CheckResult::Checked {
            steps_passed,
            through,
            open_steps,
        } => (
            format!("{steps_passed} of {through}"),
            if open_steps.is_empty() {
                "every step passes".to_string()
            } else {
                let open: Vec<String> = open_steps.iter().map(u8::to_string).collect();
                format!("open: step {}", open.join(", "))
            },
        ),
        CheckResult::TimedOut { limit_s } => {
            ("-".into(), format!("timed out: stopped after {limit_s} s"))
        }
        CheckResult::CouldNotStart { reason } => ("-".into(), format!("could not start: {reason}")),
    }
}

/// What became of each file not graded as a row of its own, a warning or
/// a line each (for standard error): given twice, merged into another
/// student's row, or kept apart. Each is one line, made inert: it names
/// files and students.
pub fn file_warnings(graded: &ClassGrade) -> Vec<String> {
    let row = |row: &usize| &graded.students[*row];
    graded
        .files
        .iter()
        .filter_map(|given| match &given.status {
            FileStatus::GivenTwice => Some(format!(
                "warning: {} is given twice: graded once",
                given.file
            )),
            FileStatus::MergedInto { row: at } => Some(format!(
                "{} is {}'s too: merged into the row of {}",
                given.file,
                row(at).student,
                row(at).file
            )),
            FileStatus::NotMerged { why, .. } => {
                Some(format!("warning: {}: {why}; graded apart", given.file))
            }
            FileStatus::Graded { .. } | FileStatus::Unreadable { .. } => None,
        })
        .map(|warning| inert::line(&warning).into_owned())
        .collect()
}

/// The warning for a file that could not be read (for standard error):
/// `warning: FILE skipped: why`, on one line, made inert (the file's name
/// is the student's to choose, and why may quote what it holds).
pub fn skipped_warning(file: &crate::course::grade::Unreadable) -> String {
    inert::line(&format!("warning: {} skipped: {}", file.file, file.reason)).into_owned()
}

/// The students' implementations checked, in `format` (text, JSON or
/// CSV; Gradescope's, whose files are in `results_dir`, as text that
/// ends saying where they are), at `width` columns.
pub fn checks_report(
    checks: &[ImplCheck],
    format: crate::report::format::GradeFormat,
    results_dir: Option<&std::path::Path>,
    width: usize,
) -> String {
    use crate::report::format::GradeFormat;
    match (format, results_dir) {
        (GradeFormat::Json, _) => {
            serde_json::to_string_pretty(checks).expect("checks are JSON") + "\n"
        }
        (GradeFormat::Csv, _) => checks_csv(checks),
        (GradeFormat::Gradescope, Some(folder)) => {
            let written = format!(
                "Gradescope's results.json of each of the {} submissions: {}/STUDENT/results.json",
                checks.len(),
                folder.display()
            );
            format!(
                "{}\n{}\n",
                checks_text(checks, width),
                fill(&written, width, "", "  ")
            )
        }
        _ => checks_text(checks, width),
    }
}

/// The students' implementations checked, a row each: the student, the
/// steps passed, and what is open (or why nothing ran), filled to `width`;
/// a word of the program's output too long for a line is cut to it.
pub fn checks_text(checks: &[ImplCheck], width: usize) -> String {
    let mut out = format!(
        "{:<NAME_WIDTH$}  {:<12}  result\n",
        "student", "steps passed"
    );
    let indent = " ".repeat(NAME_WIDTH + 16);
    for check in checks {
        let (passed, result) = check_summary(check);
        // The result may quote the program's output, which keeps its lines.
        let filled = fill(
            &inert::lines(&result),
            width,
            &format!(
                "{}  {passed:<12}  ",
                cut(&inert::line(&check.student), NAME_WIDTH)
            ),
            &indent,
        );
        for line in filled.lines() {
            out.push_str(&crate::terminal::cut(line, width));
            out.push('\n');
        }
    }
    out
}

/// The students' implementations checked, as CSV: a header row, then the
/// student, the entry, the steps passed (empty when none ran), the steps
/// checked, and the result.
pub fn checks_csv(checks: &[ImplCheck]) -> String {
    let mut writer = SafeCsv::new();
    writer.row([
        "student",
        "entry",
        "steps passed",
        "steps checked",
        "result",
    ]);
    for check in checks {
        let (steps_passed, through) = match &check.result {
            CheckResult::Checked {
                steps_passed,
                through,
                ..
            } => (steps_passed.to_string(), through.to_string()),
            _ => (String::new(), String::new()),
        };
        writer.row([
            check.student.clone(),
            check.entry.clone(),
            steps_passed,
            through,
            check_summary(check).1,
        ]);
    }
    writer.text()
}

/// The misconceptions as Markdown: a table per exercise, then the
/// closing reflections. What the students wrote is text in its cell,
/// never Markdown or HTML ([`markdown_cell::cell`], [`markdown_cell::code_cell`]).
pub fn misconceptions_markdown(grade: &ClassGrade) -> String {
    let mut out = String::from("# Misconceptions\n\n");
    for Misconceptions { exercise, wrong } in &grade.misconceptions {
        writeln!(
            out,
            "## Exercise {exercise}\n\n| test named that did not catch it | students | why |\n|---|---:|---|"
        )
        .unwrap();
        for guess in wrong {
            let reasons: Vec<String> = guess
                .reasons
                .iter()
                .map(|reason| {
                    format!(
                        "{}: \"{}\"",
                        markdown_cell::cell(&reason.student),
                        markdown_cell::cell(&reason.why)
                    )
                })
                .collect();
            writeln!(
                out,
                "| {} | {} | {} |",
                markdown_cell::code_cell(&guess.test),
                guess.students,
                reasons.join("; ")
            )
            .unwrap();
        }
        out.push('\n');
    }
    if !grade.reflections.is_empty() {
        out.push_str("## Closing reflections\n\n| student | why tests are kept | not guaranteed |\n|---|---|---|\n");
        for answers in &grade.reflections {
            writeln!(
                out,
                "| {} | {} | {} |",
                markdown_cell::cell(&answers.student),
                markdown_cell::cell(&answers.why_tests_are_kept),
                markdown_cell::cell(&answers.not_guaranteed)
            )
            .unwrap();
        }
    }
    out
}

#[cfg(test)]
mod tests;
