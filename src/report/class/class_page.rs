//! The class page, `lab grade --format html`: one self-contained HTML file
//! with the students' rows (marked where merged, graded apart or claiming
//! another score), what became of every file given, the statistics per
//! exercise, the misconceptions with the students' reasons, and the
//! closing reflections. It fits a window 1,400 px wide and reads at
//! 800 px: the wide tables scroll inside their own box, the student
//! column staying in view.
//!
//! What the students wrote (names, file names, the tests they named,
//! their reasons and reflections) is made inert and escaped
//! ([`untrusted`]); so are the flags and what became of each file, which
//! name files.

use super::grade::{self as rows, LEGEND};
use crate::course::grade::{AttemptGrade, ClassGrade, ExerciseGrade, FileStatus};
use crate::exercise;
use crate::report::html_text::untrusted;
use crate::terminal::plural;
use html_escape::{encode_double_quoted_attribute as attr, encode_text as text};
use std::fmt::Write as _;

const STYLE: &str = r#"
body { font-family: system-ui, sans-serif; margin: 16px; color: #222; max-width: 1360px; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
.summary { color: #444; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; }
th, td { border-bottom: 1px solid #e4e4e4; padding: 3px 8px; text-align: left; vertical-align: top; }
td.score, th.score { text-align: right; white-space: nowrap; }
table.students tbody th { position: sticky; left: 0; background: #fff; font-weight: normal; max-width: 14em; overflow-wrap: anywhere; }
table.students thead th { background: #f5f5f5; }
table.students thead th:first-child { position: sticky; left: 0; z-index: 1; }
.file { color: #666; font-size: 0.85em; }
.mark { color: #b71c1c; font-weight: bold; }
tr.flag td { color: #b71c1c; border-bottom: 1px solid #e4e4e4; }
tr.apart th, tr.merged th { border-left: 4px solid #f9a825; }
.unknown { color: #6a1b9a; }
li { margin: 2px 0; }
td.guesses { min-width: 14em; }
td.guesses code { overflow-wrap: anywhere; }
"#;

/// The whole class page for `grade`: a complete HTML document with no
/// external resource.
pub fn page(grade: &ClassGrade) -> String {
    let mut body = String::new();
    writeln!(
        body,
        "<h1>The class: {}</h1>\n<p class=\"summary\">{} given; {} answered the closing reflection. {}</p>",
        plural(grade.students.len(), "student"),
        plural(grade.files.len(), "file"),
        grade.reflected,
        text(LEGEND)
    )
    .unwrap();
    for (store, reason) in &grade.not_recomputed {
        writeln!(
            body,
            "<p class=\"unknown\">The {} store's scores are not recomputed: {}. Its attempts show the score their files record, marked ?.</p>",
            text(store),
            untrusted(reason, true)
        )
        .unwrap();
    }
    student_table(&mut body, grade);
    files(&mut body, grade);
    exercises(&mut body, &grade.exercises);
    misconceptions(&mut body, grade);
    crate::report::html_page::shell(
        "lease-lab: the class",
        STYLE,
        &body,
        "lab grade --format html",
    )
}

/// The students' table: a row per student, each exercise's first and
/// latest score in one cell, the totals; under a row, its flags.
fn student_table(out: &mut String, grade: &ClassGrade) {
    let keys: Vec<exercise::Exercise> = exercise::exercises();
    out.push_str("<section id=\"students\">\n<h2>Students: first attempt → latest</h2>\n<div class=\"scroll\"><table class=\"students\">\n<thead><tr><th>student</th>");
    for exercise in &keys {
        write!(
            out,
            "<th class=\"score\" title=\"step {}: {}\">{}</th>",
            exercise.text.step,
            attr(exercise::step_title(exercise.text.step)),
            text(&exercise.key)
        )
        .unwrap();
    }
    writeln!(
        out,
        "<th class=\"score\">total /{}</th><th>stores</th></tr></thead>\n<tbody>",
        crate::course::grade::max_total()
    )
    .unwrap();
    for (row, student) in grade.students.iter().enumerate() {
        // The row's border says what its flags below say at length.
        let apart = grade.files.iter().any(
            |given| matches!(given.status, FileStatus::NotMerged { row: at, .. } if at == row),
        );
        let class = if apart {
            " class=\"apart\""
        } else if student.merged.is_empty() {
            ""
        } else {
            " class=\"merged\""
        };
        write!(out, "<tr{class}><th>{}", untrusted(&student.student, false)).unwrap();
        if student.named {
            let files: Vec<String> = std::iter::once(&student.file)
                .chain(&student.merged)
                .map(|file| untrusted(file, false))
                .collect();
            write!(out, "<br><span class=\"file\">{}</span>", files.join(", ")).unwrap();
        }
        out.push_str("</th>");
        for exercise in &keys {
            let entry = student.exercise(&exercise.key);
            write!(
                out,
                "<td class=\"score\">{}</td>",
                match entry {
                    None => "-".to_string(),
                    Some(entry) => format!("{} → {}", score(&entry.first), score(&entry.latest)),
                }
            )
            .unwrap();
        }
        writeln!(
            out,
            "<td class=\"score\">{} → {}</td><td>{}</td></tr>",
            student.first_total,
            student.latest_total,
            text(&rows::stores(&student.exercises))
        )
        .unwrap();
        let colspan = keys.len() + 3;
        for flag in &student.flags {
            writeln!(
                out,
                "<tr class=\"flag\"><td colspan=\"{colspan}\">{}</td></tr>",
                untrusted(flag, false)
            )
            .unwrap();
        }
    }
    out.push_str("</tbody></table></div>\n</section>\n");
}

/// A score as the class page shows it: the number, `!` when the file
/// claims another, `?` when it could not be recomputed.
fn score(attempt: &AttemptGrade) -> String {
    let mark = if attempt.differs() {
        "<span class=\"mark\">!</span>"
    } else if attempt.recomputed.is_none() {
        "<span class=\"unknown\">?</span>"
    } else {
        ""
    };
    format!("{}{mark}", attempt.shown())
}

/// Every file given and what became of it.
fn files(out: &mut String, grade: &ClassGrade) {
    out.push_str("<section id=\"files\">\n<h2>The files given</h2>\n<ul>\n");
    for given in &grade.files {
        let status = rows::status(grade, given);
        let class = match given.status {
            FileStatus::Graded { .. } | FileStatus::MergedInto { .. } => "",
            _ => " class=\"mark\"",
        };
        writeln!(
            out,
            "<li><code>{}</code>: <span{class}>{}</span></li>",
            untrusted(&given.file, false),
            untrusted(&status, true)
        )
        .unwrap();
    }
    out.push_str("</ul>\n</section>\n");
}

/// The statistics per exercise: first attempts beside the latest, and
/// the item statistics.
fn exercises(out: &mut String, exercises: &[ExerciseGrade]) {
    out.push_str("<section id=\"exercises\">\n<h2>Per exercise</h2>\n<p class=\"summary\">First attempt → latest. Difficulty: the share of students whose first attempt named a killer. Discrimination: how the first attempt's score goes with the rest of the student's first total (−1 to 1).</p>\n<div class=\"scroll\"><table class=\"exercises\">\n<thead><tr><th>exercise</th><th class=\"score\">attempted</th><th class=\"score\">named a killer</th><th class=\"score\">mean score</th><th class=\"score\">probe killed</th><th class=\"score\">difficulty</th><th class=\"score\">discrimination</th><th class=\"score\">mean attempts</th><th class=\"score\">mean hints</th><th>wrong first guesses</th></tr></thead>\n<tbody>\n");
    for entry in exercises {
        let stats = &entry.statistics;
        let tried = entry.attempted > 0;
        let (killers, mean) = if tried {
            (
                format!(
                    "{} → {}",
                    stats.first_predicted_a_killer, entry.predicted_a_killer
                ),
                format!(
                    "{} → {}%",
                    rows::percent(stats.first_mean_score),
                    entry.mean_score
                ),
            )
        } else {
            ("-".to_string(), "-".to_string())
        };
        let guesses: Vec<String> = stats
            .wrong_first_guesses
            .iter()
            .map(|(test, students)| {
                // A break may come after an underscore, not inside a word.
                let name = untrusted(test, false).replace('_', "_<wbr>");
                format!("<code>{name}</code>&nbsp;({students})")
            })
            .collect();
        writeln!(
            out,
            "<tr><th>{}</th><td class=\"score\">{}</td><td class=\"score\">{killers}</td><td class=\"score\">{mean}</td><td class=\"score\">{}</td><td class=\"score\">{}</td><td class=\"score\">{}</td><td class=\"score\">{}</td><td class=\"score\">{}</td><td class=\"guesses\">{}</td></tr>",
            text(&entry.exercise),
            entry.attempted,
            entry.probe_killed,
            rows::percent(stats.difficulty.map(|share| share * 100.0)),
            rows::decimal(stats.discrimination, 2),
            rows::decimal(stats.mean_attempts, 1),
            rows::decimal(stats.mean_hints, 1),
            guesses.join("<br>")
        )
        .unwrap();
    }
    out.push_str("</tbody></table></div>\n</section>\n");
}

/// The wrong predictions per exercise with the students' reasons, then
/// the closing reflections.
fn misconceptions(out: &mut String, grade: &ClassGrade) {
    out.push_str(
        "<section id=\"misconceptions\">\n<h2>Misconceptions: the wrong predictions and why</h2>\n",
    );
    if grade.misconceptions.is_empty() {
        out.push_str("<p>None: no wrong prediction was recorded.</p>\n");
    }
    for group in &grade.misconceptions {
        writeln!(out, "<h3>Exercise {}</h3>\n<ul>", text(&group.exercise)).unwrap();
        for wrong in &group.wrong {
            writeln!(
                out,
                "<li><code>{}</code>: {}",
                untrusted(&wrong.test, false),
                plural(wrong.students, "student")
            )
            .unwrap();
            if !wrong.reasons.is_empty() {
                out.push_str("<ul>\n");
                for reason in &wrong.reasons {
                    writeln!(
                        out,
                        "<li>{}: “{}”</li>",
                        untrusted(&reason.student, false),
                        untrusted(&reason.why, false)
                    )
                    .unwrap();
                }
                out.push_str("</ul>\n");
            }
            out.push_str("</li>\n");
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</section>\n");
    if grade.reflections.is_empty() {
        return;
    }
    out.push_str("<section id=\"reflections\">\n<h2>The closing reflections</h2>\n<table>\n<thead><tr><th>student</th><th>why the earlier steps' tests are kept</th><th>a condition the lab does not guarantee</th></tr></thead>\n<tbody>\n");
    for answers in &grade.reflections {
        writeln!(
            out,
            "<tr><th>{}</th><td>{}</td><td>{}</td></tr>",
            untrusted(&answers.student, false),
            untrusted(&answers.why_tests_are_kept, false),
            untrusted(&answers.not_guaranteed, false)
        )
        .unwrap();
    }
    out.push_str("</tbody></table>\n</section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::course::grade::tests::{killers, student, timed};
    use crate::course::grade::{grade, Unreadable};
    use crate::course::progress::Reflection;

    /// Ada's two files merged (a.json: exercise 4 wrong, then right;
    /// b.json: exercise 6, whose killers are not known) and a third of hers
    /// with another attempt at a.json's first moment, graded apart; Bob's
    /// file claiming 100% for a wrong guess, with his reason and his
    /// reflection; a file that could not be read.
    fn class() -> ClassGrade {
        let first = timed(
            "a.json",
            "4",
            &[
                ("2026-01-01T00:00:00Z", &["x"]),
                ("2026-01-02T00:00:00Z", &["a"]),
            ],
        );
        let six = timed("b.json", "6", &[("2026-01-03T00:00:00Z", &["z"])]);
        let apart = timed("c.json", "4", &[("2026-01-01T00:00:00Z", &["y"])]);
        let mut bob = student(
            "bob.json",
            "4",
            &[(&["x"], 100, "held <means> refused")],
            false,
        );
        bob.progress.student = Some("Bob".into());
        bob.progress.reflection = Some(Reflection {
            at: "2026-01-04T00:00:00Z".into(),
            why_tests_are_kept: "regressions".into(),
            not_guaranteed: "clocks".into(),
        });
        let gone = Unreadable {
            file: "gone.json".into(),
            reason: "there is no such file".into(),
        };
        grade(&[first, six, apart, bob], vec![gone], &killers("4", &["a"]))
    }

    #[test]
    fn the_page_marks_each_row_and_says_what_became_of_each_file() {
        let page = page(&class());
        assert!(page.contains("<h1>The class: 3 students</h1>"), "{page}");
        assert!(page.contains("5 files given; 1 answered the closing reflection."));
        assert_eq!(page.matches("<tr class=\"merged\">").count(), 1, "{page}");
        assert_eq!(page.matches("<tr class=\"apart\">").count(), 1, "{page}");
        assert!(page.contains("<th>Ada<br><span class=\"file\">a.json, b.json</span></th>"));
        assert!(page.contains("<td class=\"score\">0 → 100</td>"), "{page}");
        assert!(
            page.contains("<span class=\"unknown\">?</span>"),
            "exercise 6 is not recomputed"
        );
        let mark = "0<span class=\"mark\">!</span>";
        assert!(page.contains(&format!("{mark} → {mark}")), "Bob's claim");
        let colspan = exercise::exercises().len() + 3;
        assert!(page.contains(&format!("<tr class=\"flag\"><td colspan=\"{colspan}\">")));
        for file in [
            "<li><code>a.json</code>: <span>graded</span></li>",
            "<li><code>b.json</code>: <span>merged into the row of a.json</span></li>",
            "<li><code>gone.json</code>: <span class=\"mark\">unreadable: there is no such file</span></li>",
        ] {
            assert!(page.contains(file), "{file}\n{page}");
        }
        assert!(
            page.contains("<span class=\"mark\">graded apart: "),
            "{page}"
        );
    }

    #[test]
    fn the_page_gives_each_exercise_its_statistics_and_each_guess_its_reasons() {
        let page = page(&class());
        let section = &page[page.find("id=\"exercises\"").unwrap()..];
        let table = &section[..section.find("</table>").unwrap()];
        assert_eq!(
            table.matches("<tr><th>").count(),
            exercise::exercises().len() + 1,
            "a row per exercise, under the head"
        );
        assert!(
            page.contains(
                "<td class=\"guesses\"><code>x</code>&nbsp;(2)<br><code>y</code>&nbsp;(1)</td>"
            ),
            "{page}"
        );
        assert!(
            page.contains("<td class=\"score\">0 → 1</td><td class=\"score\">0% → 33%</td>"),
            "{page}"
        );
        assert!(page.contains("<tr><th>1</th><td class=\"score\">0</td><td class=\"score\">-</td><td class=\"score\">-</td>"), "{page}");
        assert!(page.contains("<h3>Exercise 4</h3>"));
        assert!(page.contains("<li><code>x</code>: 2 students"), "{page}");
        assert!(
            page.contains("<li>Bob: “held &lt;means&gt; refused”</li>"),
            "{page}"
        );
        assert!(page.contains("<tr><th>Bob</th><td>regressions</td><td>clocks</td></tr>"));
    }

    /// The page of a class of one, Eve, whose name, file name, named test,
    /// reason and reflection hold markup, escape sequences, a
    /// bidirectional override and a line break.
    fn eves_page() -> String {
        let name = "<img src=x onerror=alert(1)>\x1b]0;pwned\x07\u{202e}\nEve";
        let mut eve = student(
            "eve\x1b[2K.json",
            "4",
            &[(&["x\x1b[1A<i>"], 100, "<script>alert(1)</script>\x1b[1A")],
            false,
        );
        eve.progress.student = Some(name.into());
        eve.progress.reflection = Some(Reflection {
            at: String::new(),
            why_tests_are_kept: "\"kept\" <b>\x1b[31m".into(),
            not_guaranteed: "\u{9b}2J".into(),
        });
        page(&grade(&[eve], Vec::new(), &killers("4", &["a"])))
    }

    /// What Eve wrote is shown as text, inert.
    #[test]
    fn what_a_student_wrote_is_text_on_the_page_and_inert() {
        let page = eves_page();
        assert!(
            !page.chars().any(|c| (c.is_control() && c != '\n')
                || ('\u{202a}'..='\u{202e}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c)),
            "{page:?}"
        );
        let shown = "&lt;img src=x onerror=alert(1)&gt;\\x1b]0;pwned\\x07\\u{202e}\\nEve";
        assert!(page.contains(&format!("<tr><th>{shown}<br>")), "{page}");
        assert!(page.contains("<span class=\"file\">eve\\x1b[2K.json</span>"));
        assert!(page.contains("<li><code>eve\\x1b[2K.json</code>: <span>graded</span></li>"));
        assert!(page.contains(&format!(
            "<li>{shown}: “&lt;script&gt;alert(1)&lt;/script&gt;\\x1b[1A”</li>"
        )));
        assert!(page.contains("<code>x\\x1b[1A&lt;i&gt;</code>"), "{page}");
        assert!(page.contains("<td>\"kept\" &lt;b&gt;\\x1b[31m</td><td>\\u{9b}2J</td>"));
    }

    /// The page as a browser parses it (the `page-checks` feature).
    #[cfg(feature = "page-checks")]
    mod pages {
        /// Eve's page parses with no error, and holds none of the
        /// elements she wrote.
        #[test]
        fn what_a_student_wrote_makes_no_element() {
            let parsed = scraper::Html::parse_document(&super::eves_page());
            assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
            for element in ["img", "script", "i", "b"] {
                let selector = scraper::Selector::parse(element).unwrap();
                assert_eq!(parsed.select(&selector).count(), 0, "no <{element}>");
            }
        }
    }

    #[test]
    fn a_class_of_one_without_a_wrong_guess_says_so() {
        let one = timed("a.json", "4", &[("2026-01-01T00:00:00Z", &["a"])]);
        let page = page(&grade(&[one], Vec::new(), &killers("4", &["a"])));
        assert!(page.contains("<h1>The class: 1 student</h1>"), "{page}");
        assert!(page.contains("1 file given;"));
        assert!(page.contains("<p>None: no wrong prediction was recorded.</p>"));
        assert!(!page.contains("id=\"reflections\""));
        assert!(!page.contains("class=\"merged\"") && !page.contains("class=\"apart\""));
    }
}
