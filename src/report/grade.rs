//! A graded class ([`ClassGrade`]) rendered: a row per student for the
//! terminal and as CSV, the class per exercise, and the misconceptions as
//! text and Markdown.

use crate::course::class_check::{CheckResult, ImplCheck};
use crate::course::grade::{max_total, AttemptGrade, ClassGrade, Misconceptions, StudentGrade};
use crate::exercise;
use crate::terminal::fill;
use std::fmt::Write as _;

/// How wide a student's name (or file) may be in a row, in characters.
const NAME_WIDTH: usize = 16;

/// What the marks beside a score mean, for the legend.
const LEGEND: &str = "Each score is recomputed from the recorded prediction against \
what the suite catches today. ! the file claims another score (see below the row); \
? not recomputed, the file's score is shown. - not attempted.";

/// `text` cut to `width` characters, `..` marking a cut.
fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let kept: String = text.chars().take(width.saturating_sub(2)).collect();
    format!("{kept}..")
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
        let label = format!("{:<NAME_WIDTH$}", cut(label, NAME_WIDTH));
        format!("{label} {which:>6}{cells}{total:>6}\n")
    };
    let below = if student.named { &student.file } else { "" };
    let mut out = line(&student.student, "first", false, student.first_total);
    out.push_str(&line(below, "latest", true, student.latest_total));
    for flag in &student.flags {
        out.push_str(&fill(flag, width, "    ! ", "      "));
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

/// The class per exercise, on each student's latest attempt.
pub fn exercises_text(grade: &ClassGrade, width: usize) -> String {
    let mut out = format!(
        "{:>8}  {:>9}  {:>14}  {:>12}  {:>10}\n",
        "exercise", "attempted", "named a killer", "probe killed", "mean score"
    );
    for entry in &grade.exercises {
        let mean = if entry.attempted == 0 {
            "-".to_string()
        } else {
            format!("{}%", entry.mean_score)
        };
        writeln!(
            out,
            "{:>8}  {:>9}  {:>14}  {:>12}  {:>10}",
            entry.exercise, entry.attempted, entry.predicted_a_killer, entry.probe_killed, mean
        )
        .unwrap();
        if let Some((test, count)) = &entry.most_common_wrong_guess {
            out.push_str(&fill(
                &format!("most common wrong guess: {test} ({count})"),
                width,
                "          ",
                "            ",
            ));
            out.push('\n');
        }
    }
    out
}

/// The class as CSV (RFC 4180): a header row, then one row per student:
/// the student, the file, each exercise's first and latest score (empty
/// when not attempted), the totals, and the flags joined by `; `.
pub fn csv(grade: &ClassGrade) -> String {
    let keys: Vec<String> = exercise::exercises().into_iter().map(|e| e.key).collect();
    let mut writer = csv::Writer::from_writer(Vec::new());
    let mut header = vec!["student".to_string(), "file".to_string()];
    for key in &keys {
        header.push(format!("{key} first"));
        header.push(format!("{key} latest"));
    }
    header.extend(["first total", "latest total", "flags"].map(String::from));
    writer.write_record(&header).expect("CSV into memory");
    for student in &grade.students {
        let mut row = vec![student.student.clone(), student.file.clone()];
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
        row.push(student.flags.join("; "));
        writer.write_record(&row).expect("CSV into memory");
    }
    String::from_utf8(writer.into_inner().expect("CSV into memory")).expect("CSV of UTF-8")
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
                &format!("{} ({students}) did not catch it", guess.test),
                width,
                "  ",
                "    ",
            ));
            out.push('\n');
            for reason in &guess.reasons {
                out.push_str(&fill(
                    &format!("{}: \"{}\"", reason.student, reason.why),
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
            writeln!(out, "  {}", answers.student).unwrap();
            for (question, answer) in [
                ("why tests are kept", &answers.why_tests_are_kept),
                ("not guaranteed", &answers.not_guaranteed),
            ] {
                out.push_str(&fill(
                    &format!("{question}: {answer}"),
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

/// What a check's row says: the steps passed, or why there are none.
fn check_summary(result: &CheckResult) -> (String, String) {
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

/// The students' implementations checked, a row each: the student, the
/// steps passed, and what is open (or why nothing ran), filled to `width`.
pub fn checks_text(checks: &[ImplCheck], width: usize) -> String {
    let mut out = format!(
        "{:<NAME_WIDTH$}  {:<12}  result\n",
        "student", "steps passed"
    );
    let indent = " ".repeat(NAME_WIDTH + 16);
    for check in checks {
        let (passed, result) = check_summary(&check.result);
        out.push_str(&fill(
            &result,
            width,
            &format!(
                "{:<NAME_WIDTH$}  {passed:<12}  ",
                cut(&check.student, NAME_WIDTH)
            ),
            &indent,
        ));
        out.push('\n');
    }
    out
}

/// The students' implementations checked, as CSV: a header row, then the
/// student, the entry, the steps passed (empty when none ran), the steps
/// checked, and the result.
pub fn checks_csv(checks: &[ImplCheck]) -> String {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer
        .write_record([
            "student",
            "entry",
            "steps passed",
            "steps checked",
            "result",
        ])
        .expect("CSV into memory");
    for check in checks {
        let (steps_passed, through) = match &check.result {
            CheckResult::Checked {
                steps_passed,
                through,
                ..
            } => (steps_passed.to_string(), through.to_string()),
            _ => (String::new(), String::new()),
        };
        writer
            .write_record([
                check.student.clone(),
                check.entry.clone(),
                steps_passed,
                through,
                check_summary(&check.result).1,
            ])
            .expect("CSV into memory");
    }
    String::from_utf8(writer.into_inner().expect("CSV into memory")).expect("CSV of UTF-8")
}

/// Text for a Markdown table cell: no line breaks, `|` escaped.
fn markdown_cell(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\r', '\n'], " ")
}

/// The misconceptions as Markdown: a table per exercise, then the
/// closing reflections.
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
                .map(|reason| format!("{}: \"{}\"", reason.student, reason.why))
                .collect();
            writeln!(
                out,
                "| `{}` | {} | {} |",
                markdown_cell(&guess.test),
                guess.students,
                markdown_cell(&reasons.join("; "))
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
                markdown_cell(&answers.student),
                markdown_cell(&answers.why_tests_are_kept),
                markdown_cell(&answers.not_guaranteed)
            )
            .unwrap();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::course::grade::{grade, Killers, StudentFile};
    use crate::course::prediction::Score;
    use crate::course::progress::{Attempt, Progress};

    fn file(name: &str, student: Option<&str>, predicted: &[&str], claimed: u8) -> StudentFile {
        let mut progress = Progress {
            student: student.map(String::from),
            ..Progress::default()
        };
        let predicted: Vec<String> = predicted.iter().map(|t| t.to_string()).collect();
        let mut score = Score::of(&predicted, &[]);
        score.percent = claimed;
        progress.exercise("4").attempts.push(Attempt {
            at: String::new(),
            mutant: "04".into(),
            predicted,
            why: "a \"fence\", surely".into(),
            probe: None,
            caught_by: Vec::new(),
            score,
        });
        StudentFile {
            file: name.into(),
            progress,
        }
    }

    fn class() -> ClassGrade {
        let mut killers = Killers::default();
        killers.add_mutant("04", vec![("right".into(), 4)]);
        grade(
            &[
                file("ada.json", Some("Lovelace, \"Ada\"\nA."), &["right"], 100),
                file("b.json", None, &["wrong|test"], 100),
            ],
            &killers,
        )
    }

    /// Names with commas, quotes and line breaks are quoted as RFC 4180
    /// says, and read back whole.
    #[test]
    fn csv_quotes_commas_quotes_and_line_breaks() {
        let written = csv(&class());
        assert!(
            written.starts_with("student,file,1 first,1 latest,"),
            "{written}"
        );
        assert!(
            written.contains("\"Lovelace, \"\"Ada\"\"\nA.\",ada.json,"),
            "{written}"
        );
        let mut reader = ::csv::Reader::from_reader(written.as_bytes());
        let rows: Vec<::csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 2);
        assert_eq!(&rows[0][0], "Lovelace, \"Ada\"\nA.");
        let header = reader.headers().unwrap().clone();
        let column = |name: &str| header.iter().position(|h| h == name).unwrap();
        assert_eq!(&rows[0][column("4 first")], "100");
        assert_eq!(&rows[1][column("4 first")], "0");
        assert_eq!(&rows[1][column("5 first")], "");
        assert_eq!(
            &rows[1][column("flags")],
            "exercise 4 first: the file says 100%, the prediction earns 0%"
        );
    }

    /// Every line fits 80 columns; a flagged score is marked and explained.
    #[test]
    fn the_rows_fit_80_columns_and_mark_a_claimed_score() {
        let shown = text(&class(), 80);
        assert!(
            shown.lines().all(|line| line.chars().count() <= 80),
            "{shown}"
        );
        let row = shown
            .lines()
            .find(|line| line.starts_with("b.json"))
            .unwrap();
        assert!(row.contains("   0!"), "{shown}");
        assert!(
            shown.contains("    ! exercise 4 first: the file says 100%"),
            "{shown}"
        );
        let misconceptions = misconceptions_text(&class(), 80);
        assert!(
            misconceptions.contains("  wrong|test (1 student) did not catch it\n    - b.json: \"a \"fence\", surely\"\n"),
            "{misconceptions}"
        );
        assert!(misconceptions_markdown(&class()).contains("| `wrong\\|test` | 1 |"));
    }
}
