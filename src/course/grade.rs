//! A class's progress files summarised per exercise, so that an
//! instructor sees which observations a class found and which it missed.

use super::progress::Progress;
use crate::exercise;
use serde::Serialize;
use std::collections::BTreeMap;

/// One exercise across the class, judged on each student's latest attempt.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExerciseGrade {
    /// The exercise key (`4`, `8b`).
    pub exercise: String,
    /// Students with at least one attempt.
    pub attempted: usize,
    /// Students whose prediction named at least one test that caught the mutant.
    pub predicted_a_killer: usize,
    /// Students whose probe killed the mutant.
    pub probe_killed: usize,
    /// The mean score, 0 to 100, over the students who attempted it.
    pub mean_score: u8,
    /// The test most often predicted that did not catch the mutant, and how
    /// many students named it; `None` when no wrong guess was made.
    pub most_common_wrong_guess: Option<(String, usize)>,
}

/// The class summary: one entry per exercise, in exercise order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClassGrade {
    /// How many progress files were read.
    pub students: usize,
    /// How many of them answered the closing reflection.
    pub reflected: usize,
    /// Per exercise.
    pub exercises: Vec<ExerciseGrade>,
}

/// Summarises the progress of a class.
pub fn grade(class: &[Progress]) -> ClassGrade {
    let exercises = exercise::exercises()
        .into_iter()
        .map(|exercise| {
            let latest: Vec<_> = class
                .iter()
                .filter_map(|student| student.latest(&exercise.key))
                .collect();
            let mut wrong: BTreeMap<&str, usize> = BTreeMap::new();
            for attempt in &latest {
                for test in &attempt.score.predicted_but_survived {
                    *wrong.entry(test.as_str()).or_default() += 1;
                }
            }
            // The most named; on a tie, the first name in alphabetical order.
            let most_common_wrong_guess = wrong
                .iter()
                .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
                .map(|(test, count)| (test.to_string(), *count));
            let total: usize = latest
                .iter()
                .map(|attempt| usize::from(attempt.score.percent))
                .sum();
            let mean_score = total
                .checked_div(latest.len())
                .map_or(0, |mean| u8::try_from(mean).unwrap_or(100));
            ExerciseGrade {
                exercise: exercise.key.clone(),
                attempted: latest.len(),
                predicted_a_killer: latest.iter().filter(|a| a.score.found_a_killer()).count(),
                probe_killed: latest
                    .iter()
                    .filter(|a| a.probe.as_ref().is_some_and(|probe| probe.killed))
                    .count(),
                mean_score,
                most_common_wrong_guess,
            }
        })
        .collect();
    ClassGrade {
        students: class.len(),
        reflected: class
            .iter()
            .filter(|student| student.reflection.is_some())
            .count(),
        exercises,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::course::prediction::Score;
    use crate::course::progress::{Attempt, ProbeRecord, Reflection};

    fn strings(names: &[&str]) -> Vec<String> {
        names.iter().map(|name| name.to_string()).collect()
    }

    /// A student whose attempts at `key` predicted and were caught as given
    /// (the last one counts), with a probe that killed when `probe_killed`.
    fn student(key: &str, attempts: &[(&[&str], &[&str])], probe_killed: bool) -> Progress {
        let mut progress = Progress::default();
        for (predicted, caught) in attempts {
            progress.exercise(key).attempts.push(Attempt {
                at: "2026-01-01T00:00:00Z".into(),
                mutant: key.into(),
                predicted: strings(predicted),
                why: String::new(),
                probe: probe_killed.then(|| ProbeRecord {
                    file: "p.probe".into(),
                    text: String::new(),
                    verdict: String::new(),
                    killed: true,
                }),
                caught_by: strings(caught),
                score: Score::of(&strings(predicted), &strings(caught)),
            });
        }
        progress
    }

    fn entry<'a>(grade: &'a ClassGrade, key: &str) -> &'a ExerciseGrade {
        grade.exercises.iter().find(|e| e.exercise == key).unwrap()
    }

    #[test]
    fn each_exercise_is_judged_on_every_students_latest_attempt() {
        let mut reflected = student("4", &[(&["x"], &["x"]), (&["a", "b"], &["a"])], false);
        reflected.reflection = Some(Reflection {
            at: String::new(),
            why_tests_are_kept: String::new(),
            not_guaranteed: String::new(),
        });
        let class = [
            reflected,
            student("4", &[(&["b", "c"], &["a"])], false),
            student("4", &[(&["c"], &["c"])], true),
            Progress::default(),
        ];
        let grade = grade(&class);
        assert_eq!((grade.students, grade.reflected), (4, 1));
        assert_eq!(grade.exercises.len(), exercise::exercises().len());
        assert_eq!(
            entry(&grade, "4"),
            &ExerciseGrade {
                exercise: "4".into(),
                attempted: 3,
                predicted_a_killer: 2,
                probe_killed: 1,
                // 50% (a of a, b), 0% and 100%.
                mean_score: 50,
                most_common_wrong_guess: Some(("b".into(), 2)),
            }
        );
        let untried = entry(&grade, "5");
        assert_eq!((untried.attempted, untried.mean_score), (0, 0));
        assert_eq!(untried.most_common_wrong_guess, None);
    }

    #[test]
    fn a_tie_between_wrong_guesses_goes_to_the_first_name_in_order() {
        let class = [
            student("6", &[(&["z"], &["a"])], false),
            student("6", &[(&["y"], &["a"])], false),
        ];
        assert_eq!(
            entry(&grade(&class), "6").most_common_wrong_guess,
            Some(("y".into(), 1))
        );
    }
}
