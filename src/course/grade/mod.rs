//! A class's progress files graded: a row per student with the first and
//! the latest attempt at each exercise, every score recomputed from the
//! recorded prediction against what the suite catches today; the class
//! per exercise; and the wrong predictions the class made, with the
//! students' own words.
//!
//! A score is never taken on trust: the file says what was predicted, and
//! [`Killers`] (read from the kill matrices) says which tests catch each
//! mutant now, so a hand-edited score shows as what it really is.

use super::prediction::Score;
use super::progress::{Attempt, Progress};
use crate::exercise;
use crate::matrix::Matrix;
use crate::runner::{RunOptions, WorkerCommand};
use crate::subject::Subject;
use crate::subject::PYTHON;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

mod merge;
mod statistics;
pub use merge::{FileStatus, GivenFile, Unreadable};
pub use statistics::ItemStatistics;

/// The stores whose kill matrices grading `class` needs: those of the
/// mutants its attempts are about ([`Subject::of_mutant`]), the Rust
/// store's first. An attempt at a mutant the lab does not have needs none.
pub fn stores_needed<'a>(class: impl IntoIterator<Item = &'a Progress>) -> Vec<Subject> {
    let needed: Vec<Subject> = class
        .into_iter()
        .flat_map(|progress| progress.exercises.values())
        .flat_map(|exercise| &exercise.attempts)
        .filter_map(|attempt| Subject::of_mutant(&attempt.mutant))
        .collect();
    [Subject::Rust, Subject::Python]
        .into_iter()
        .filter(|store| needed.contains(store))
        .collect()
}

/// Which tests catch each mutant today, by the matrix's one rule
/// ([`Matrix::caught_by`]), and for each store whose matrix could not be
/// built, why.
#[derive(Debug, Clone, Default)]
pub struct Killers {
    /// Per mutant id: the tests that catch it, each with its step, in suite order.
    caught: BTreeMap<String, Vec<(String, u8)>>,
    /// Per store, by its name: why its matrix could not be built.
    unavailable: BTreeMap<String, String>,
}

impl Killers {
    /// Adds what `matrix` says of each of its mutants.
    pub fn add_matrix(&mut self, matrix: &Matrix) {
        for (run, mutant) in matrix.mutant_runs() {
            let killers = matrix.caught_by(run);
            let with_steps = matrix
                .tests
                .iter()
                .filter(|case| killers.contains(&case.name))
                .map(|case| (case.name.to_string(), case.step))
                .collect();
            self.caught.insert(mutant.spec.id.clone(), with_steps);
        }
    }

    /// Adds one mutant's killers, each test with its step.
    pub fn add_mutant(&mut self, id: &str, killers: Vec<(String, u8)>) {
        self.caught.insert(id.to_string(), killers);
    }

    /// Records that `store`'s matrix could not be built, and why.
    pub fn add_unavailable(&mut self, store: &Subject, reason: String) {
        self.unavailable.insert(store.name(), reason);
    }

    /// The stores whose matrices could not be built, by name, with the reason.
    pub fn unavailable(&self) -> &BTreeMap<String, String> {
        &self.unavailable
    }

    /// The tests in force at `step` (steps 1 to `step`) that catch
    /// `mutant`, as the exercise's run counts them.
    ///
    /// Errors: why they are not known (its store's matrix could not be
    /// built, or no such mutant exists).
    pub fn caught_at(&self, mutant: &str, step: u8) -> Result<Vec<String>, NotKnown> {
        match self.caught.get(mutant) {
            Some(killers) => Ok(killers
                .iter()
                .filter(|(_, at)| *at <= step)
                .map(|(test, _)| test.clone())
                .collect()),
            None => Err(NotKnown(
                match Subject::of_mutant(mutant)
                    .and_then(|store| self.unavailable.get(&store.name()))
                {
                    Some(reason) => reason.clone(),
                    None => format!("the lab has no mutant {mutant}"),
                },
            )),
        }
    }
}

/// Why the tests that catch a mutant are not known: its store's matrix
/// could not be built (the reason), or the lab has no such mutant.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NotKnown(pub String);

/// One attempt's score: the one its file records, and the one its
/// prediction earns against today's matrix.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttemptGrade {
    /// The mutant it was about.
    pub mutant: String,
    /// The store that mutant is of (`rust`, `python`); `None` for a mutant
    /// the lab does not have.
    pub store: Option<String>,
    /// The score the file records, 0 to 100.
    pub stored: u8,
    /// The score recomputed from the prediction, 0 to 100; `None` when it
    /// could not be ([`AttemptGrade::not_recomputed`] says why).
    pub recomputed: Option<u8>,
    /// Why the score was not recomputed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_recomputed: Option<String>,
    /// The prediction beside the recomputed result (the stored one when it
    /// could not be recomputed).
    #[serde(skip)]
    pub score: Score,
}

impl AttemptGrade {
    /// Recomputes `attempt` at `step` with the lab's one scoring
    /// ([`Score::of`], [`Score::with_probe`]). A probe's verdict is taken
    /// from the file: a probe is the student's own program, not rerun here.
    pub fn of(attempt: &Attempt, step: u8, killers: &Killers) -> AttemptGrade {
        let stored = attempt.score.percent;
        match killers.caught_at(&attempt.mutant, step) {
            Ok(caught) => {
                let score = match &attempt.probe {
                    Some(probe) => {
                        Score::with_probe(&attempt.predicted, &caught, &probe.file, probe.killed)
                    }
                    None => Score::of(&attempt.predicted, &caught),
                };
                AttemptGrade {
                    mutant: attempt.mutant.clone(),
                    store: store_of(&attempt.mutant),
                    stored,
                    recomputed: Some(score.percent),
                    not_recomputed: None,
                    score,
                }
            }
            Err(reason) => AttemptGrade {
                mutant: attempt.mutant.clone(),
                store: store_of(&attempt.mutant),
                stored,
                recomputed: None,
                not_recomputed: Some(reason.0),
                score: attempt.score.clone(),
            },
        }
    }

    /// Whether it was an attempt at a mutant of the Python store.
    pub fn on_python(&self) -> bool {
        self.store.as_deref() == Some("python")
    }

    /// The score to show: the recomputed one, else the stored one.
    pub fn shown(&self) -> u8 {
        self.recomputed.unwrap_or(self.stored)
    }

    /// Whether the file claims another score than the prediction earns.
    pub fn differs(&self) -> bool {
        self.recomputed.is_some_and(|score| score != self.stored)
    }
}

/// The name of the store whose mutant `id` is.
fn store_of(id: &str) -> Option<String> {
    Subject::of_mutant(id).map(|store| store.name())
}

/// One student's first and latest attempt at one exercise.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExerciseAttempts {
    /// The exercise key (`4`, `8b`).
    pub exercise: String,
    /// How many attempts were recorded.
    pub attempts: usize,
    /// The first attempt.
    pub first: AttemptGrade,
    /// The latest attempt (the first, when there was only one).
    pub latest: AttemptGrade,
}

/// A row of the class: one student.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StudentGrade {
    /// Who: the recorded name, else the file's name.
    pub student: String,
    /// Whether the file records the student's name.
    pub named: bool,
    /// The progress file, as given (the first of the student's files).
    pub file: String,
    /// The student's other files, merged into this row: its attempts are
    /// those of every file, first and latest by time.
    pub merged: Vec<String>,
    /// The exercises attempted, in exercise order.
    pub exercises: Vec<ExerciseAttempts>,
    /// The first attempts' scores added up (100 per exercise at most).
    pub first_total: u32,
    /// The latest attempts' scores added up.
    pub latest_total: u32,
    /// What the instructor should look at: a score the file claims that
    /// the prediction does not earn, a score that could not be recomputed.
    pub flags: Vec<String>,
}

impl StudentGrade {
    /// The student's attempts at exercise `key`, if any.
    pub fn exercise(&self, key: &str) -> Option<&ExerciseAttempts> {
        self.exercises.iter().find(|entry| entry.exercise == key)
    }
}

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
    /// The first attempts beside these, and the item statistics.
    #[serde(flatten)]
    pub statistics: ItemStatistics,
}

/// One student's reason for a wrong prediction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reason {
    /// Who gave it.
    pub student: String,
    /// Their `--why`.
    pub why: String,
}

/// A test the class named that did not catch the mutant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WrongGuess {
    /// The test (or `probe FILE`).
    pub test: String,
    /// How many students named it in some attempt.
    pub students: usize,
    /// Their reasons, each student's different ones once, in class order.
    pub reasons: Vec<Reason>,
}

/// The wrong predictions made at one exercise, most shared first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Misconceptions {
    /// The exercise key.
    pub exercise: String,
    /// Each wrong guess, by how many students made it, then by name.
    pub wrong: Vec<WrongGuess>,
}

/// A student's answers to the worksheet's closing questions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReflectionAnswers {
    /// Who.
    pub student: String,
    /// Why the earlier steps' tests are kept at every later step.
    pub why_tests_are_kept: String,
    /// One operational condition the lab does not guarantee.
    pub not_guaranteed: String,
}

/// A progress file to grade: its name, as given, and what it records.
#[derive(Debug, Clone)]
pub struct StudentFile {
    /// The file, as given.
    pub file: String,
    /// Its progress.
    pub progress: Progress,
}

impl StudentFile {
    /// Who the student is: the recorded name, else the file's name.
    pub fn identity(&self) -> &str {
        self.progress.student.as_deref().unwrap_or(&self.file)
    }
}

/// The progress files read, in the order given, and those that could not
/// be, each with why in words.
pub fn read_class(files: &[std::path::PathBuf]) -> (Vec<StudentFile>, Vec<Unreadable>) {
    let mut skipped: Vec<Unreadable> = Vec::new();
    let mut class = Vec::new();
    for file in files {
        match super::progress::read_for_grading(file) {
            Ok(progress) => class.push(StudentFile {
                file: file.display().to_string(),
                progress,
            }),
            Err(error) => {
                let reason = match error.kind() {
                    std::io::ErrorKind::NotFound => "there is no such file".to_string(),
                    std::io::ErrorKind::InvalidData => error.to_string(),
                    _ => format!("it cannot be read ({error})"),
                };
                skipped.push(Unreadable {
                    file: file.display().to_string(),
                    reason,
                });
            }
        }
    }
    (class, skipped)
}

/// The class graded.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClassGrade {
    /// One row per student, in the order given.
    pub students: Vec<StudentGrade>,
    /// How many of them answered the closing reflection.
    pub reflected: usize,
    /// Per exercise, on the latest attempts.
    pub exercises: Vec<ExerciseGrade>,
    /// The wrong predictions per exercise (exercises with none left out).
    pub misconceptions: Vec<Misconceptions>,
    /// The closing reflections' answers.
    pub reflections: Vec<ReflectionAnswers>,
    /// Every file given, in the order given (those that could not be read
    /// last), and what became of it: a row, merged into one, or why not.
    pub files: Vec<GivenFile>,
    /// The stores whose matrices could not be built, with why: their
    /// attempts show stored scores, marked as not recomputed.
    pub not_recomputed: BTreeMap<String, String>,
}

/// The most a total can be: 100 per exercise.
pub fn max_total() -> u32 {
    100 * u32::try_from(exercise::exercises().len()).unwrap_or(0)
}

/// Grades a class: a row per student, a student's files merged into it
/// (by the rules of `merge::rows`), every score recomputed with `killers`; the files
/// that could not be read are listed with why.
pub fn grade(files: &[StudentFile], unreadable: Vec<Unreadable>, killers: &Killers) -> ClassGrade {
    let (rows, given) = merge::rows(files, unreadable);
    let class: Vec<&StudentFile> = rows.iter().map(|(file, _)| file).collect();
    let not_merged: BTreeMap<usize, &str> = given
        .iter()
        .filter_map(|file| match &file.status {
            FileStatus::NotMerged { row, why } => Some((*row, why.as_str())),
            _ => None,
        })
        .collect();
    let students: Vec<StudentGrade> = rows
        .iter()
        .enumerate()
        .map(|(row, (file, merged))| {
            let mut student = student_grade(file, killers);
            student.merged.clone_from(merged);
            if !merged.is_empty() {
                student.flags.insert(
                    0,
                    format!(
                        "merged from {} and {}: first and latest attempts by time",
                        file.file,
                        merged.join(" and ")
                    ),
                );
            }
            if let Some(why) = not_merged.get(&row) {
                student.flags.insert(0, format!("{}: graded apart", why));
            }
            student
        })
        .collect();
    ClassGrade {
        reflected: class
            .iter()
            .filter(|file| file.progress.reflection.is_some())
            .count(),
        exercises: exercise_grades(&class, &students),
        misconceptions: misconceptions(&class, killers),
        reflections: class
            .iter()
            .filter_map(|file| {
                let reflection = file.progress.reflection.as_ref()?;
                Some(ReflectionAnswers {
                    student: file.identity().to_string(),
                    why_tests_are_kept: reflection.why_tests_are_kept.clone(),
                    not_guaranteed: reflection.not_guaranteed.clone(),
                })
            })
            .collect(),
        students,
        files: given,
        not_recomputed: killers
            .unavailable()
            .iter()
            .map(|(store, reason)| (store.clone(), reason.clone()))
            .collect(),
    }
}

fn student_grade(file: &StudentFile, killers: &Killers) -> StudentGrade {
    let mut flags = Vec::new();
    let exercises: Vec<ExerciseAttempts> = exercise::exercises()
        .iter()
        .filter_map(|exercise| {
            let attempts = &file.progress.exercises.get(&exercise.key)?.attempts;
            let grade = |attempt: &Attempt| AttemptGrade::of(attempt, exercise.step(), killers);
            let first = grade(attempts.first()?);
            let latest = grade(attempts.last()?);
            for (which, attempt) in [("first", &first), ("latest", &latest)] {
                if which == "latest" && attempts.len() == 1 {
                    break;
                }
                if let Some(recomputed) = attempt.recomputed.filter(|_| attempt.differs()) {
                    flags.push(format!(
                        "exercise {} {which}: the file says {}%, the prediction earns {recomputed}%",
                        exercise.key, attempt.stored
                    ));
                }
                if let Some(reason) = &attempt.not_recomputed {
                    flags.push(format!(
                        "exercise {} {which}: stored {}%, not recomputed ({reason})",
                        exercise.key, attempt.stored
                    ));
                }
            }
            Some(ExerciseAttempts {
                exercise: exercise.key.clone(),
                attempts: attempts.len(),
                first,
                latest,
            })
        })
        .collect();
    let total = |pick: fn(&ExerciseAttempts) -> &AttemptGrade| {
        exercises
            .iter()
            .map(|entry| u32::from(pick(entry).shown()))
            .sum()
    };
    StudentGrade {
        student: file.identity().to_string(),
        named: file.progress.student.is_some(),
        file: file.file.clone(),
        merged: Vec::new(),
        first_total: total(|entry| &entry.first),
        latest_total: total(|entry| &entry.latest),
        exercises,
        flags,
    }
}

fn exercise_grades(class: &[&StudentFile], students: &[StudentGrade]) -> Vec<ExerciseGrade> {
    let hints = |key: &str| -> Vec<usize> {
        class
            .iter()
            .map(|file| file.progress.exercises.get(key).map_or(0, |e| e.hints_seen))
            .collect()
    };
    exercise::exercises()
        .into_iter()
        .map(|exercise| {
            let latest: Vec<&AttemptGrade> = students
                .iter()
                .filter_map(|student| student.exercise(&exercise.key))
                .map(|entry| &entry.latest)
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
                .map(|attempt| usize::from(attempt.shown()))
                .sum();
            let mean_score = total
                .checked_div(latest.len())
                .map_or(0, |mean| u8::try_from(mean).unwrap_or(100));
            ExerciseGrade {
                exercise: exercise.key.clone(),
                attempted: latest.len(),
                predicted_a_killer: latest.iter().filter(|a| a.score.found_a_killer()).count(),
                probe_killed: class
                    .iter()
                    .filter_map(|file| file.progress.latest(&exercise.key))
                    .filter(|a| a.probe.as_ref().is_some_and(|probe| probe.killed))
                    .count(),
                mean_score,
                most_common_wrong_guess,
                statistics: statistics::of(&exercise.key, students, &hints(&exercise.key)),
            }
        })
        .collect()
}

/// Every attempt's wrong guesses (by the recomputed score), per exercise
/// and test: how many students made each, and why they thought so.
fn misconceptions(class: &[&StudentFile], killers: &Killers) -> Vec<Misconceptions> {
    exercise::exercises()
        .into_iter()
        .filter_map(|exercise| {
            // Per test: the students who named it, and their reasons.
            let mut by_test: BTreeMap<String, (BTreeSet<usize>, Vec<Reason>)> = BTreeMap::new();
            for (index, file) in class.iter().enumerate() {
                let Some(record) = file.progress.exercises.get(&exercise.key) else {
                    continue;
                };
                for attempt in &record.attempts {
                    let score = AttemptGrade::of(attempt, exercise.step(), killers).score;
                    for test in &score.predicted_but_survived {
                        let (who, reasons) = by_test.entry(test.clone()).or_default();
                        who.insert(index);
                        let why = attempt.why.trim();
                        let reason = Reason {
                            student: file.identity().to_string(),
                            why: why.to_string(),
                        };
                        if !why.is_empty() && !reasons.contains(&reason) {
                            reasons.push(reason);
                        }
                    }
                }
            }
            let mut wrong: Vec<WrongGuess> = by_test
                .into_iter()
                .map(|(test, (who, reasons))| WrongGuess {
                    test,
                    students: who.len(),
                    reasons,
                })
                .collect();
            wrong.sort_by(|a, b| b.students.cmp(&a.students).then(a.test.cmp(&b.test)));
            (!wrong.is_empty()).then(|| Misconceptions {
                exercise: exercise.key.clone(),
                wrong,
            })
        })
        .collect()
}

/// Which tests catch each mutant the class's attempts name, today: the
/// kill matrix of each store they are about, built as `lab matrix` builds
/// it, of its reference and those mutants (what catches a mutant does not
/// depend on the others, so a class that tried the worksheet's eight waits
/// for those alone). A store whose matrix cannot be built is recorded with
/// the reason, and said on standard error, never left out silently.
pub fn killers(class: &[StudentFile], worker: &WorkerCommand, options: &RunOptions) -> Killers {
    let mut killers = Killers::default();
    let attempted: BTreeSet<&str> = class
        .iter()
        .flat_map(|file| file.progress.exercises.values())
        .flat_map(|exercise| &exercise.attempts)
        .map(|attempt| attempt.mutant.as_str())
        .collect();
    for store in stores_needed(class.iter().map(|file| &file.progress)) {
        match store_matrix(&store, &attempted, worker, options) {
            Ok(matrix) => killers.add_matrix(&matrix),
            Err(reason) => {
                eprintln!(
                    "lab grade: warning: the {} store's scores are not recomputed: {reason}",
                    store.name()
                );
                killers.add_unavailable(&store, reason);
            }
        }
    }
    killers
}

/// The interpreter a store's programs run with, which must start before
/// its matrix can be built: the Python store's; none for the Rust store,
/// compiled into the lab.
fn interpreter(store: &Subject) -> Option<&'static str> {
    (*store == Subject::Python).then_some(PYTHON)
}

/// The kill matrix of one of the lab's stores, of its reference and the
/// mutants of it that `attempted` names, or why it cannot be built (its
/// interpreter does not start, its reference fails tests here).
fn store_matrix(
    subject: &Subject,
    attempted: &BTreeSet<&str>,
    worker: &WorkerCommand,
    options: &RunOptions,
) -> Result<Matrix, String> {
    if let Some(interpreter) = interpreter(subject) {
        std::process::Command::new(interpreter)
            .arg("--version")
            .output()
            .map_err(|error| format!("{interpreter} cannot be started ({error})"))?;
    }
    let variants: Vec<_> = subject
        .built_in_variants()
        .map_err(|error| error.to_string())?
        .into_iter()
        .filter(|variant| variant.is_reference() || attempted.contains(variant.id.as_str()))
        .collect();
    let matrix = Matrix::of_suite(worker, &variants, false, options);
    let failures = matrix.reference_failures();
    if !failures.is_empty() {
        return Err(format!(
            "its reference fails {} test(s) here ({}), so what catches its mutants is not known",
            failures.len(),
            failures
                .iter()
                .map(|(test, _)| *test)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(matrix)
}

#[cfg(test)]
pub(crate) mod tests;
