//! The student's own screens around the exercises, as text: the overview
//! (`lab` alone), the hints, the recorded progress and the answers of a
//! reflection.

use crate::course::progress::{Progress, Reflection, StepStatus};
use crate::exercise;
use crate::terminal::{fill, plural};
use colored::Colorize;
use std::fmt::Write as _;
use std::path::Path;

/// `lab` with no arguments: every exercise with the student's progress,
/// and what to do next.
pub fn overview_text(progress: &Progress, progress_path: &Path, width: usize) -> String {
    // Running text no wider than 100 columns, which is easier to read.
    let text_width = width.min(100);
    let mut out = format!(
        "{}\n{}\n",
        wrapped(
            "lease-lab: a lease alone does not stop a stalled worker; a fence checked at the moment of writing does.",
            text_width,
            "",
            ""
        )
        .bold(),
        wrapped(
            "Each exercise shows a deliberately broken fragment of the store. Predict which tests catch it, then run them and compare.",
            text_width,
            "",
            ""
        )
    );
    let rows: Vec<(String, String, Status)> = exercise::exercises()
        .iter()
        .map(|exercise| {
            (
                exercise.key.clone(),
                exercise.label(),
                exercise_status(progress, &exercise.key),
            )
        })
        .collect();
    out.push_str(&exercise_rows(&rows, width));
    out.push('\n');
    out.push_str(&next_text(progress));
    out.push_str(&wrapped(
        &implementation_text(progress),
        text_width,
        "",
        "  ",
    ));
    let progress_line = match &progress.student {
        Some(student) => format!(
            "Progress: {}, of {student} (lab --student NAME changes the name)",
            progress_path.display()
        ),
        None => format!("Progress: {}", progress_path.display()),
    };
    out.push_str(&wrapped(&progress_line, width, "", "  "));
    out.push_str(&wrapped(
        "Other commands: lab demo, lab matrix, lab tests, lab --help",
        width,
        "",
        "  ",
    ));
    out
}

/// What to do next, as the overview and the progress end: the next
/// exercise, else the closing reflection, else that everything is done.
fn next_text(progress: &Progress) -> String {
    match progress.next_exercise() {
        Some(next) => format!(
            "Next: {}   (hints: lab hint {})\n",
            format!("lab step {}", next.key).bold(),
            next.key
        ),
        None if progress.reflection.is_none() => format!(
            "Every exercise is done. Last:\n  {}\n",
            "lab reflect --why-kept \"...\" --not-guaranteed \"...\"".bold()
        ),
        None => format!(
            "{}\n",
            "Every exercise and the reflection are done.".green().bold()
        ),
    }
}

/// An exercise's status in the overview, plain and as shown: "not
/// started", or "done", its latest score, its attempts and its probe's
/// verdict.
fn exercise_status(progress: &Progress, key: &str) -> Status {
    let Some(attempt) = progress.latest(key) else {
        return Status {
            done: false,
            rest: String::new(),
        };
    };
    let attempts = progress.exercises.get(key).map_or(0, |e| e.attempts.len());
    let probe = attempt.probe.as_ref().map_or(String::new(), |probe| {
        format!(", probe {}", crate::inert::line(&probe.verdict))
    });
    let rest = format!(
        ": {}, {}{probe}",
        found_and_precise(&attempt.score),
        plural(attempts, "attempt")
    );
    Status { done: true, rest }
}

/// An exercise's status in the overview: `not started`, or `done` and its
/// latest score.
struct Status {
    done: bool,
    /// What follows `done`.
    rest: String,
}

impl Status {
    /// The first word, which is coloured.
    fn head(&self) -> &'static str {
        if self.done {
            "done"
        } else {
            "not started"
        }
    }

    /// As plain text.
    fn text(&self) -> String {
        format!("{}{}", self.head(), self.rest)
    }
}

/// The overview's table: a row per exercise, its key, its title and its
/// status, each in a column of its own, every status starting in one
/// column. A title or status longer than its column is wrapped within it.
fn exercise_rows(rows: &[(String, String, Status)], width: usize) -> String {
    // The titles' column is as wide as the longest title, unless the
    // statuses need more of the line; but never so narrow that a title
    // takes more than two lines.
    let longest_label = rows
        .iter()
        .map(|row| row.1.chars().count())
        .max()
        .unwrap_or(0);
    let longest_status = rows
        .iter()
        .map(|row| row.2.text().chars().count())
        .max()
        .unwrap_or(0);
    let label_width = longest_label
        .min(width.saturating_sub(9 + longest_status))
        .max(longest_label.div_ceil(2))
        .max(MIN_TITLE);
    let status_width = width.saturating_sub(9 + label_width).max(MIN_TITLE);
    let mut out = String::new();
    for (key, label, status) in rows {
        let labels = fill(label, label_width, "", "");
        let statuses = fill(&status.text(), status_width, "", "  ");
        let (labels, statuses): (Vec<&str>, Vec<&str>) =
            (labels.lines().collect(), statuses.lines().collect());
        for line in 0..labels.len().max(statuses.len()) {
            let key = if line == 0 { key.as_str() } else { "" };
            let label = labels.get(line).copied().unwrap_or("");
            let shown = match statuses.get(line) {
                Some(first) if line == 0 => {
                    let painted = if status.done {
                        status.head().green()
                    } else {
                        status.head().dimmed()
                    };
                    format!("{painted}{}", &first[status.head().len()..])
                }
                Some(more) => more.to_string(),
                None => String::new(),
            };
            let row = format!("  {key:>3}  {label:<label_width$}  {shown}");
            writeln!(out, "{}", row.trim_end()).unwrap();
        }
    }
    out
}

/// The narrowest the overview's title and status columns get.
const MIN_TITLE: usize = 20;

/// A score's two parts in a few words: `found, 50% precise`.
fn found_and_precise(score: &crate::course::prediction::Score) -> String {
    let found = if score.found_a_killer() {
        "found"
    } else {
        "missed"
    };
    format!("{found}, {}% precise", score.percent)
}

/// The student's own implementation and its last check, step by step, or
/// how to start one.
pub fn implementation_text(progress: &Progress) -> String {
    let Some(implementation) = &progress.implementation else {
        return "Write the steps yourself: lab new --lang python DIR (or rust), then lab check"
            .to_string();
    };
    let steps_with = |status: StepStatus| -> Vec<&str> {
        progress
            .checks
            .iter()
            .filter(|(_, check)| check.status == status)
            .map(|(step, _)| step.as_str())
            .collect()
    };
    let mut parts = Vec::new();
    for (status, label) in [
        (StepStatus::Passed, "passed"),
        (StepStatus::Failing, "failing"),
        (StepStatus::NotImplemented, "not written"),
    ] {
        let steps = steps_with(status);
        if !steps.is_empty() {
            parts.push(format!("{label} {}", steps.join(" ")));
        }
    }
    let checked = if parts.is_empty() {
        "not checked yet".to_string()
    } else {
        format!("steps {}", parts.join("; "))
    };
    let next = if progress.all_steps_pass() {
        format!(
            "; all eight pass, so try lab chaos --impl {}: your store under many workers, stalls, kills and skewed clocks",
            implementation.impl_arg()
        )
    } else {
        String::new()
    };
    let others: Vec<String> = progress
        .other_implementations
        .iter()
        .map(|other| other.implementation.describe())
        .collect();
    let others = match others.as_slice() {
        [] => String::new(),
        [other] => format!(
            ". Also recorded: {other} (lab check --impl {} makes it current)",
            progress.other_implementations[0].implementation.impl_arg()
        ),
        _ => format!(
            ". Also recorded: {} (lab check --impl PATH makes one current)",
            others.join(", ")
        ),
    };
    format!(
        "Your current implementation, {}: {checked} (lab check){next}{others}",
        implementation.describe()
    )
}

/// The first `shown` hints of an exercise, and whether more remain.
pub fn hints_text(hints: &[String], shown: usize, key: &str, width: usize) -> String {
    let mut out = String::new();
    for (number, hint) in hints.iter().take(shown).enumerate() {
        writeln!(
            out,
            "{}\n{}\n",
            format!("Hint {}", number + 1).bold(),
            crate::terminal::reflow(hint, width)
        )
        .unwrap();
    }
    if shown < hints.len() {
        writeln!(
            out,
            "({} more: run `lab hint {key}` again)",
            hints.len() - shown
        )
        .unwrap();
    } else {
        writeln!(out, "(that was the last hint)").unwrap();
    }
    out
}

/// The recorded predictions and scores, exercise by exercise.
pub fn progress_text(progress: &Progress, width: usize) -> String {
    let mut out = String::new();
    if progress.implementation.is_some() {
        out.push_str(&wrapped(&implementation_text(progress), width, "", "  "));
        out.push('\n');
    }
    if progress.exercises.is_empty() {
        out.push_str("No prediction recorded yet: start with `lab step 1`.\n");
    }
    let item =
        |label: &str, text: &str| wrapped(&format!("{label}: {text}"), width, "    ", "      ");
    for exercise in exercise::exercises() {
        let Some(record) = progress.exercises.get(&exercise.key) else {
            continue;
        };
        let hints = exercise.lab().hints.len();
        writeln!(
            out,
            "{}, hints seen: {} of {hints}",
            format!(
                "exercise {} (mutant {})",
                exercise.key,
                exercise.mutant().spec.id
            )
            .bold(),
            record.hints_seen
        )
        .unwrap();
        for attempt in &record.attempts {
            writeln!(
                out,
                "  {}  {}",
                crate::inert::line(&attempt.at),
                found_and_precise(&attempt.score)
            )
            .unwrap();
            let listed = |names: &[String]| {
                if names.is_empty() {
                    "-".to_string()
                } else {
                    names.join(", ")
                }
            };
            out.push_str(&item("predicted", &listed(&attempt.predicted)));
            if let Some(probe) = &attempt.probe {
                out.push_str(&item(
                    "probe",
                    &format!("{}, {}", probe.file, probe.verdict),
                ));
            }
            if !attempt.why.is_empty() {
                out.push_str(&item("why", &attempt.why));
            }
            out.push_str(&item("caught by", &listed(&attempt.caught_by)));
        }
    }
    for prediction in &progress.own_predictions {
        writeln!(
            out,
            "{}  {}",
            format!("your own break, steps 1 to {}", prediction.through).bold(),
            found_and_precise(&prediction.score)
        )
        .unwrap();
        out.push_str(&item("at", &prediction.at));
        out.push_str(&item("predicted", &prediction.predicted.join(", ")));
        if !prediction.why.is_empty() {
            out.push_str(&item("why", &prediction.why));
        }
        out.push_str(&item("failed", &prediction.failed.join(", ")));
    }
    if let Some(reflection) = &progress.reflection {
        writeln!(out, "{}", "reflection".bold()).unwrap();
        out.push_str(&reflection_text(reflection, width));
    }
    if !progress.exercises.is_empty() {
        out.push('\n');
        out.push_str(&wrapped(&totals(progress), width, "", "  "));
    }
    out.push_str(&next_text(progress));
    out
}

/// The progress in one sentence: the exercises done of all of them, the
/// attempts and the hints seen; of the latest predictions, how many found
/// a test that catches the mutant, how many missed, and their mean
/// precision (the words of the overview's rows).
fn totals(progress: &Progress) -> String {
    let exercises = exercise::exercises();
    let latest: Vec<&crate::course::prediction::Score> = exercises
        .iter()
        .filter_map(|exercise| progress.latest(&exercise.key))
        .map(|attempt| &attempt.score)
        .collect();
    let attempts: usize = progress
        .exercises
        .values()
        .map(|record| record.attempts.len())
        .sum();
    let hints: usize = progress
        .exercises
        .values()
        .map(|record| record.hints_seen)
        .sum();
    let found = latest.iter().filter(|score| score.found_a_killer()).count();
    let latest_said = match latest.len() {
        0 => String::new(),
        done => format!(
            "; latest predictions: {found} found, {} missed, {}% precise on average",
            done - found,
            latest
                .iter()
                .map(|score| usize::from(score.percent))
                .sum::<usize>()
                / done
        ),
    };
    format!(
        "Totals: {} of {} exercises done in {}, {} seen{latest_said}.",
        latest.len(),
        exercises.len(),
        plural(attempts, "attempt"),
        plural(hints, "hint")
    )
}

/// The two answers of a reflection, one item each.
pub fn reflection_text(reflection: &Reflection, width: usize) -> String {
    wrapped(
        &format!("why the tests are kept: {}", reflection.why_tests_are_kept),
        width,
        "  ",
        "    ",
    ) + &wrapped(
        &format!("not guaranteed: {}", reflection.not_guaranteed),
        width,
        "  ",
        "    ",
    )
}

/// `text`, one paragraph, made inert ([`crate::inert::line`]: it may show
/// what a progress file holds, which is the student's to write, by hand
/// too) and wrapped at `width` between words, never inside one (a test
/// name longer than the line stays whole), each line ending in a line
/// break.
pub fn wrapped(text: &str, width: usize, first: &str, rest: &str) -> String {
    crate::terminal::fill(&crate::inert::line(text), width, first, rest) + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::course::prediction::Score;
    use crate::course::progress::{self, Attempt};

    #[test]
    fn the_implementation_line_gives_each_step_s_last_check() {
        use crate::course::progress::StepCheck;
        use crate::subject::Implementation;
        let mut progress = Progress::default();
        assert!(implementation_text(&progress).contains("lab new --lang python DIR"));
        progress.implementation = Some(Implementation::Command {
            line: "./mine".into(),
        });
        assert_eq!(
            implementation_text(&progress),
            "Your current implementation, ./mine: not checked yet (lab check)"
        );
        for (step, status) in [
            ("1", StepStatus::Passed),
            ("2", StepStatus::Passed),
            ("3", StepStatus::Failing),
            ("4", StepStatus::NotImplemented),
        ] {
            progress.checks.insert(
                step.into(),
                StepCheck {
                    at: progress::now_stamp(),
                    status,
                    failing: Vec::new(),
                },
            );
        }
        assert_eq!(
            implementation_text(&progress),
            "Your current implementation, ./mine: steps passed 1 2; failing 3; not written 4 (lab check)"
        );
    }

    /// `lab progress` names the current implementation first (and the
    /// others, with how to switch), and ends with the totals and what to
    /// do next.
    #[test]
    fn the_progress_names_the_current_implementation_and_ends_with_totals_and_next() {
        use crate::subject::Implementation;
        colored::control::set_override(false);
        let mut progress = Progress::default();
        let text = progress_text(&progress, 80);
        assert!(!text.contains("Totals"), "{text}");
        assert!(
            text.ends_with("Next: lab step 1   (hints: lab hint 1)\n"),
            "{text}"
        );
        let attempt = |predicted: &[&str]| {
            let predicted: Vec<String> = predicted.iter().map(|name| name.to_string()).collect();
            Attempt {
                at: "2026-12-01T10:00:00Z".into(),
                mutant: "04".into(),
                score: Score::of(&predicted, &["killer".to_string()]),
                predicted,
                why: String::new(),
                probe: None,
                caught_by: vec!["killer".into()],
            }
        };
        progress.exercise("1").attempts.push(attempt(&["killer"]));
        progress.exercise("2").attempts.push(attempt(&["other"]));
        progress
            .exercise("2")
            .attempts
            .push(attempt(&["killer", "other"]));
        progress.exercise("3").hints_seen = 2;
        let python = Implementation::Python {
            file: "/w/py/store.py".into(),
        };
        progress.make_current(&python);
        progress.make_current(&Implementation::Rust {
            project: "/w/rs".into(),
        });
        let text = progress_text(&progress, 80);
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.starts_with("Your current implementation, the Rust project /w/rs: not checked yet (lab check). Also recorded: python3 /w/py/store.py (lab check --impl /w/py/store.py makes it current) exercise 1"),
            "{text}"
        );
        assert!(
            flat.contains("Totals: 2 of 9 exercises done in 3 attempts, 2 hints seen; latest predictions: 2 found, 0 missed, 75% precise on average."),
            "{text}"
        );
        assert!(
            text.ends_with("Next: lab step 3   (hints: lab hint 3)\n"),
            "{text}"
        );
        assert!(
            text.lines().all(|line| line.chars().count() <= 80),
            "{text}"
        );
    }

    #[test]
    fn progress_lines_break_between_words_and_show_the_hints_seen() {
        let mut progress = Progress::default();
        let record = progress.exercise("4");
        record.hints_seen = 2;
        let predicted = vec![
            "claim_at_exact_expiry_is_reassigned".to_string(),
            "claim_just_before_expiry_is_refused".to_string(),
        ];
        record.attempts.push(Attempt {
            at: "2026-01-01T00:00:00Z".into(),
            mutant: "04".into(),
            score: Score::of(&predicted, &predicted[..1]),
            caught_by: predicted[..1].to_vec(),
            predicted,
            why: "a claim at exactly the end of the lease".into(),
            probe: None,
        });
        let text = progress_text(&progress, 60);
        assert!(text.contains("hints seen: 2 of 3"), "{text}");
        for line in text.lines() {
            for word in line.split_whitespace() {
                assert!(
                    text.contains(word) && !word.ends_with('-'),
                    "a word was cut: {word}"
                );
            }
        }
        assert!(
            text.contains("\n      claim_just_before_expiry_is_refused\n"),
            "{text}"
        );
        assert!(
            text.contains("    predicted: claim_at_exact_expiry_is_reassigned,"),
            "{text}"
        );
        assert!(text.lines().all(|line| line.len() <= 60), "{text}");
    }

    /// A progress file written by hand, with escape sequences, a
    /// bidirectional override and line breaks in every text it holds: the
    /// overview and the progress show them inert, within the width.
    #[test]
    fn what_a_progress_file_holds_is_shown_inert() {
        colored::control::set_override(false);
        let title = "\x1b]0;pwned\x07";
        let mut progress = Progress {
            student: Some(format!("{title}Eve\u{202e}\nX")),
            implementation: Some(crate::subject::Implementation::Command {
                line: "./mine\x1b[2K".into(),
            }),
            reflection: Some(Reflection {
                at: "now\x1b[1A".into(),
                why_tests_are_kept: "kept\x1b[31m".into(),
                not_guaranteed: "clocks\u{9b}2J".into(),
            }),
            ..Progress::default()
        };
        let predicted = vec!["claim\x1b[1A".to_string()];
        progress.exercise("4").attempts.push(Attempt {
            at: "2026\x1b[2K".into(),
            mutant: "04".into(),
            score: Score::of(&predicted, &[]),
            caught_by: Vec::new(),
            predicted,
            why: "it\x1b[1A\nbreaks".into(),
            probe: Some(progress::ProbeRecord {
                file: "p\x1b[2K.probe".into(),
                text: String::new(),
                verdict: "kills\x07".into(),
                killed: true,
            }),
        });
        let overview = overview_text(&progress, Path::new("p\x1b[1A.json"), 80);
        let recorded = progress_text(&progress, 80);
        for shown in [&overview, &recorded] {
            assert!(
                !shown
                    .chars()
                    .any(|c| (c.is_control() && c != '\n') || c == '\u{202e}' || c == '\u{9b}'),
                "{shown:?}"
            );
            assert!(
                shown.lines().all(|line| line.chars().count() <= 80),
                "{shown}"
            );
        }
        assert!(
            overview.contains("of \\x1b]0;pwned\\x07Eve\\u{202e}\\nX"),
            "{overview}"
        );
        assert!(overview.contains("p\\x1b[1A.json"), "{overview}");
        assert!(overview.contains(" kills\\x07\n"), "{overview}");
        assert!(overview.contains("./mine\\x1b[2K"), "{overview}");
        for expected in [
            "  2026\\x1b[2K  missed",
            "    predicted: claim\\x1b[1A\n",
            "    probe: p\\x1b[2K.probe, kills\\x07\n",
            "    why: it\\x1b[1A\\nbreaks\n",
            "  why the tests are kept: kept\\x1b[31m\n",
            "  not guaranteed: clocks\\u{9b}2J\n",
        ] {
            assert!(recorded.contains(expected), "{expected}\n{recorded}");
        }
    }

    /// Every exercise done, with the longest statuses, and the student's
    /// implementation passing all eight steps: at 80 columns the statuses
    /// start in one column, no line is wider, and the screen ends with one
    /// `Next:` line at most.
    #[test]
    fn the_overview_keeps_its_columns_and_says_next_once() {
        use crate::course::progress::StepCheck;
        colored::control::set_override(false);
        let mut progress = Progress::default();
        for exercise in exercise::exercises() {
            let predicted = vec!["claim_at_exact_expiry_is_reassigned".to_string()];
            let attempt = Attempt {
                at: "2026-01-01T00:00:00Z".into(),
                mutant: exercise.variant.id.to_string(),
                score: Score::of(&predicted, &predicted),
                caught_by: predicted.clone(),
                predicted,
                why: String::new(),
                probe: Some(progress::ProbeRecord {
                    file: "mine.probe".into(),
                    text: String::new(),
                    verdict: "kills".into(),
                    killed: true,
                }),
            };
            let record = progress.exercise(&exercise.key);
            record.attempts.push(attempt.clone());
            record.attempts.push(attempt);
        }
        progress.implementation = Some(crate::subject::Implementation::Command {
            line: "./mine".into(),
        });
        for step in 1..=8 {
            progress.checks.insert(
                step.to_string(),
                StepCheck {
                    at: progress::now_stamp(),
                    status: StepStatus::Passed,
                    failing: Vec::new(),
                },
            );
        }
        // 8b not started: the exercises' next step, and the program's.
        progress.exercises.remove("8b");
        let text = overview_text(&progress, Path::new("p.json"), 80);
        let wide: Vec<&str> = text
            .lines()
            .filter(|line| line.chars().count() > 80)
            .collect();
        assert!(wide.is_empty(), "{wide:#?}\n{text}");
        let columns: std::collections::BTreeSet<usize> = text
            .lines()
            .filter_map(|line| line.find("done: "))
            .collect();
        assert_eq!(columns.len(), 1, "{text}");
        assert_eq!(
            text.lines()
                .filter(|line| line.starts_with("   8b "))
                .count(),
            1,
            "{text}"
        );
        assert_eq!(text.matches("Next:").count(), 1, "{text}");
        assert!(text.contains("Next: lab step 8b"), "{text}");
        assert!(text.contains("try lab chaos --impl"), "{text}");
    }
}
