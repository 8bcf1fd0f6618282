//! Item statistics of an exercise across a class, as an item analysis of
//! a test gives them (PrairieLearn's question statistics): how hard it was
//! on the first try, how well it tells the students who did well overall
//! from those who did not, and how much help it took.

use super::{ExerciseAttempts, StudentGrade};
use serde::Serialize;
use std::collections::BTreeMap;

/// How many of the most common wrong first guesses are kept.
const WRONG_FIRST_GUESSES: usize = 3;

/// One exercise's statistics over the students who attempted it; each
/// `None` when no student (or, for the discrimination, too few) did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ItemStatistics {
    /// Students whose first attempt named a test that caught the mutant.
    pub first_predicted_a_killer: usize,
    /// The mean score of the first attempts, 0 to 100.
    pub first_mean_score: Option<f64>,
    /// The share of students whose first attempt named a killer, 0 to 1:
    /// the higher, the easier.
    pub difficulty: Option<f64>,
    /// The correlation (Pearson's) between the students' first-attempt
    /// score at this exercise and the rest of their first-attempt total,
    /// -1 to 1: near 1, the students who do well elsewhere do well here.
    /// `None` under two students, or when either side does not vary.
    pub discrimination: Option<f64>,
    /// The mean number of attempts.
    pub mean_attempts: Option<f64>,
    /// The mean number of hints seen.
    pub mean_hints: Option<f64>,
    /// The tests most often named in a first attempt that did not catch
    /// the mutant, with how many students named each, most first (ties by
    /// name).
    pub wrong_first_guesses: Vec<(String, usize)>,
}

/// The statistics of exercise `key` over `students`, whose hints seen are
/// `hints` (by student, in the same order).
pub fn of(key: &str, students: &[StudentGrade], hints: &[usize]) -> ItemStatistics {
    let attempted: Vec<(&StudentGrade, &ExerciseAttempts, usize)> = students
        .iter()
        .zip(hints)
        .filter_map(|(student, hints)| Some((student, student.exercise(key)?, *hints)))
        .collect();
    let count = attempted.len();
    let mean = |total: f64| (count > 0).then(|| total / count as f64);
    let first_score = |entry: &ExerciseAttempts| f64::from(entry.first.shown());
    let first_predicted_a_killer = attempted
        .iter()
        .filter(|(_, entry, _)| entry.first.score.found_a_killer())
        .count();
    let mut wrong: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, entry, _) in &attempted {
        for test in &entry.first.score.predicted_but_survived {
            *wrong.entry(test.as_str()).or_default() += 1;
        }
    }
    let mut wrong_first_guesses: Vec<(String, usize)> = wrong
        .into_iter()
        .map(|(test, students)| (test.to_string(), students))
        .collect();
    wrong_first_guesses.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    wrong_first_guesses.truncate(WRONG_FIRST_GUESSES);
    let pairs: Vec<(f64, f64)> = attempted
        .iter()
        .map(|(student, entry, _)| {
            let here = first_score(entry);
            (here, f64::from(student.first_total) - here)
        })
        .collect();
    ItemStatistics {
        first_predicted_a_killer,
        first_mean_score: mean(
            attempted
                .iter()
                .map(|(_, entry, _)| first_score(entry))
                .sum(),
        ),
        difficulty: mean(first_predicted_a_killer as f64),
        discrimination: correlation(&pairs),
        mean_attempts: mean(
            attempted
                .iter()
                .map(|(_, entry, _)| entry.attempts as f64)
                .sum(),
        ),
        mean_hints: mean(attempted.iter().map(|(_, _, hints)| *hints as f64).sum()),
        wrong_first_guesses,
    }
}

/// Pearson's correlation of the pairs; `None` under two pairs or when
/// either side is constant.
fn correlation(pairs: &[(f64, f64)]) -> Option<f64> {
    if pairs.len() < 2 {
        return None;
    }
    let n = pairs.len() as f64;
    let (mean_x, mean_y) = (
        pairs.iter().map(|p| p.0).sum::<f64>() / n,
        pairs.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let (mut xy, mut xx, mut yy) = (0.0, 0.0, 0.0);
    for (x, y) in pairs {
        let (dx, dy) = (x - mean_x, y - mean_y);
        xy += dx * dy;
        xx += dx * dx;
        yy += dy * dy;
    }
    (xx > 0.0 && yy > 0.0).then(|| xy / (xx * yy).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_correlation_is_pearson_s_and_absent_without_variation() {
        let perfect = [(0.0, 0.0), (50.0, 100.0), (100.0, 200.0)];
        assert!((correlation(&perfect).unwrap() - 1.0).abs() < 1e-12);
        let opposite = [(0.0, 200.0), (100.0, 0.0)];
        assert!((correlation(&opposite).unwrap() + 1.0).abs() < 1e-12);
        // By hand: x = 0, 100, 100; y = 100, 0, 200. Means 66.67 and 100;
        // sum dx dy = 0; so the correlation is 0.
        let none = [(0.0, 100.0), (100.0, 0.0), (100.0, 200.0)];
        assert!(correlation(&none).unwrap().abs() < 1e-12);
        assert_eq!(correlation(&[(1.0, 2.0)]), None);
        assert_eq!(correlation(&[(1.0, 2.0), (1.0, 3.0)]), None);
        assert_eq!(correlation(&[(1.0, 2.0), (2.0, 2.0)]), None);
    }
}
