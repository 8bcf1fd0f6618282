//! The exercises and their texts, as the table `labs/exercises.toml` lists
//! them ([`crate::exercise_table`]): one exercise per worksheet mutant, each
//! with its text from `labs/`.
//!
//! Step N's exercise shows the mutant of step N; step 8 has two, the
//! worksheet's `claim_many` fragment (exercise `8`) and the check-then-act
//! race its basis warns about (exercise `8b`).

use crate::exercise_table::{self, ExerciseRow};
use crate::lab_text::{parse_lab, LabSections, Language};
use crate::subject::{self, Subject};
use crate::variant::{Variant, MUTANTS, REFERENCE_ID};
use std::sync::OnceLock;

/// An exercise text of `labs/`, compiled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LabText {
    /// The step it belongs to.
    pub step: u8,
    /// Its file name.
    pub file_name: &'static str,
    /// Its markdown.
    pub text: &'static str,
}

mod generated {
    use super::LabText;
    include!(concat!(env!("OUT_DIR"), "/labs.rs"));
}

pub use generated::LAB_TEXTS;

/// The rows of the table of exercises, in order.
///
/// # Panics
///
/// If the compiled-in table does not parse: the build checked it.
pub fn table() -> &'static [ExerciseRow] {
    static ROWS: OnceLock<Vec<ExerciseRow>> = OnceLock::new();
    ROWS.get_or_init(|| {
        exercise_table::parse(generated::EXERCISE_TABLE)
            .unwrap_or_else(|error| panic!("{error}, though the build checked it"))
    })
}

/// The text of a step: that of its first exercise in the table.
pub fn lab_text(step: u8) -> Option<&'static LabText> {
    LAB_TEXTS.iter().find(|text| text.step == step)
}

/// The file name of step `step`'s example probe in `labs/probes/`: that of
/// its first exercise in the table.
pub fn probe_file(step: u8) -> Option<&'static str> {
    table()
        .iter()
        .find(|row| row.step == step)
        .map(|row| row.probe.as_str())
}

/// The title of step `step`, from the heading of its text in `labs/`
/// (`# Step 4: TITLE`), or an empty string for a step without one.
pub fn step_title(step: u8) -> &'static str {
    lab_text(step)
        .and_then(|lab| lab.text.lines().next())
        .and_then(|heading| heading.strip_prefix("# "))
        .map(|heading| {
            heading
                .split_once(": ")
                .map_or(heading, |(_, title)| title)
                .trim()
        })
        .unwrap_or("")
}

/// One exercise: a worksheet mutant to predict and catch.
#[derive(Debug, Clone, PartialEq)]
pub struct Exercise {
    /// What the student types: `4`, `8b`.
    pub key: String,
    /// The mutant it is about.
    pub variant: Variant,
    /// The reference implementation that mutant is a change of.
    pub reference: Variant,
    /// Its text in `labs/`.
    pub text: &'static LabText,
    /// Whether it is the last exercise, after which come the closing questions.
    pub last: bool,
}

impl Exercise {
    /// The exercise of table row `row`, about `variant`, a mutant.
    fn of(row: &ExerciseRow, variant: Variant, reference: Variant) -> Exercise {
        debug_assert!(variant.mutant.is_some(), "an exercise is about a mutant");
        let text = text_named(&row.text).expect("the build compiled in every text the table names");
        Exercise {
            key: row.key.clone(),
            variant,
            reference,
            text,
            last: table().last().is_some_and(|last| last.key == row.key),
        }
    }

    /// The step whose tests are in force (those of steps 1 to this one).
    pub fn step(&self) -> u8 {
        self.mutant().spec.step
    }

    /// The mutant's fields and source.
    pub fn mutant(&self) -> &crate::variant::Mutant {
        self.variant
            .mutant
            .as_ref()
            .expect("an exercise is about a mutant")
    }

    /// The language of the store whose mutant it shows, in which its text
    /// is worded.
    pub fn language(&self) -> Language {
        crate::subject::Subject::of_spec(&self.mutant().spec).language()
    }

    /// Its text, worded for its language, by section.
    pub fn lab(&self) -> LabSections {
        self.lab_in(self.language())
    }

    /// Its text, worded for `language`, by section.
    pub fn lab_in(&self, language: Language) -> LabSections {
        parse_lab(self.text.text, language)
    }

    /// What the exercise is about: the step's title, or for a second
    /// exercise of one step (`8b`), its mutant's title.
    pub fn label(&self) -> String {
        if self.key.ends_with(|c: char| c.is_ascii_alphabetic()) {
            self.mutant().spec.title.clone()
        } else {
            step_title(self.step()).to_string()
        }
    }
}

/// The exercises in order, as the table lists them: each about its
/// compiled mutant of the Rust store. (A build without compiled mutants,
/// without the `variants` feature, has none.)
pub fn exercises() -> Vec<Exercise> {
    table()
        .iter()
        .filter_map(|row| {
            let mutant = MUTANTS.iter().find(|mutant| mutant.id == row.mutant)?;
            Some(Exercise::of(
                row,
                Variant::compiled(mutant),
                Variant::reference(),
            ))
        })
        .collect()
}

/// The Python store's files cannot be written where it runs, so its
/// exercises cannot be made ready.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the Python store to run it: {0}")]
pub struct NotReady(pub std::io::Error);

/// The exercises of a subject, those of its exercise store
/// ([`Subject::exercise_store`]): the Rust store's ([`exercises`]), or the
/// Python store's, each about its row's `python_mutant`, the worksheet's
/// literal fragment applied to the Python store (`py04` is exercise `4`,
/// `py08b`, its check-then-act race, exercise `8b`).
///
/// Errors: the Python store's files cannot be written.
pub fn exercises_of(subject: &Subject) -> Result<Vec<Exercise>, NotReady> {
    match subject.exercise_store() {
        Subject::Python => {
            let unwritable = NotReady;
            let reference = subject::python_variant(REFERENCE_ID, None).map_err(unwritable)?;
            let mut mutants = subject::python_mutants();
            let mut exercises = Vec::new();
            for row in table() {
                // The build checked that the table names only mutants that exist.
                let Some(at) = mutants.iter().position(|m| m.spec.id == row.python_mutant) else {
                    continue;
                };
                let mutant = mutants.swap_remove(at);
                let variant = subject::python_variant(&row.python_mutant, Some(mutant))
                    .map_err(unwritable)?;
                exercises.push(Exercise::of(row, variant, reference.clone()));
            }
            Ok(exercises)
        }
        _ => Ok(exercises()),
    }
}

/// The exercise a student named: `4`, `04`, `8b` or `08b`.
pub fn find(key: &str) -> Option<Exercise> {
    find_among(exercises(), key)
}

/// The exercise named `key`, or why not in words that list the exercises.
pub fn find_or_list(key: &str) -> Result<Exercise, String> {
    find(key).ok_or_else(|| format!("no exercise {key:?}; the exercises are: {}", keys()))
}

/// The exercise named `key` among `exercises`.
pub fn find_among(exercises: Vec<Exercise>, key: &str) -> Option<Exercise> {
    let wanted = key.trim().trim_start_matches('0').to_ascii_lowercase();
    exercises
        .into_iter()
        .find(|exercise| exercise.key == wanted)
}

/// The exercise keys, for messages: `1, 2, ..., 8, 8b`.
pub fn keys() -> String {
    exercises()
        .iter()
        .map(|exercise| exercise.key.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The closing questions' example answers, from the text of the last
/// exercise (the questions come after it). They are about the lab, not a
/// language, and are written the same for both (a test holds them to it).
pub fn closing_examples() -> String {
    table()
        .last()
        .and_then(|row| text_named(&row.text))
        .map(|text| parse_lab(text.text, Language::Rust).closing)
        .unwrap_or_default()
}

/// The text of `labs/` with this file name.
fn text_named(file_name: &str) -> Option<&'static LabText> {
    LAB_TEXTS.iter().find(|text| text.file_name == file_name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Python subject, the lab's or a student's `.py`, takes the Python
    /// store's nine exercises, 1 to 8 and 8b; any other the Rust store's.
    #[test]
    fn the_exercises_of_a_subject_are_its_stores_worksheet_mutants() {
        let of = |subject: &Subject| -> Vec<(String, String)> {
            exercises_of(subject)
                .unwrap()
                .into_iter()
                .map(|exercise| (exercise.key.clone(), exercise.mutant().spec.id.clone()))
                .collect()
        };
        let python = of(&Subject::Python);
        let expected: Vec<(String, String)> = ["1", "2", "3", "4", "5", "6", "7", "8", "8b"]
            .iter()
            .map(|key| (key.to_string(), format!("py0{key}")))
            .collect();
        assert_eq!(python, expected);
        let own_python = Subject::Own(subject::Implementation::Python {
            file: "store.py".into(),
        });
        assert_eq!(of(&own_python), python);
        let rust = of(&Subject::Rust);
        let expected: Vec<(String, String)> = expected
            .into_iter()
            .map(|(key, id)| (key, id.trim_start_matches("py").to_string()))
            .collect();
        assert_eq!(rust, expected);
        let command = Subject::parse("./my-store --serve").unwrap();
        assert_eq!(of(&command), rust);
    }

    #[test]
    fn exercises_are_the_worksheet_mutants_keyed_without_leading_zeros() {
        let keys: Vec<String> = exercises().into_iter().map(|e| e.key).collect();
        assert_eq!(keys, ["1", "2", "3", "4", "5", "6", "7", "8", "8b"]);
        assert_eq!(find("04").map(|e| e.key), Some("4".into()));
        assert_eq!(find(" 8B ").map(|e| e.key), Some("8b".into()));
        assert_eq!(find("9"), None);
        assert_eq!(keys_text(), "1, 2, 3, 4, 5, 6, 7, 8, 8b");
        let race = find("8b").expect("exercise 8b");
        assert_eq!(race.label(), race.mutant().spec.title);
        assert_eq!(
            find("4").unwrap().label(),
            "Take an expired lease atomically"
        );
    }

    fn keys_text() -> String {
        keys()
    }

    #[test]
    fn step_titles_come_from_the_headings_of_labs() {
        assert_eq!(step_title(1), "Create the lease state table");
        assert_eq!(step_title(8), "There is one winner among concurrent claims");
        assert_eq!(step_title(0), "");
        assert_eq!(step_title(9), "");
    }

    /// Every exercise has its own text, complete in both languages: no
    /// marker of a language's wording is left, and a Python student reads
    /// no Rust type (and the Rust one no Python value).
    #[test]
    fn every_exercise_has_its_own_complete_text_in_both_languages() {
        let mut texts = Vec::new();
        for subject in [Subject::Rust, Subject::Python] {
            for exercise in exercises_of(&subject).unwrap() {
                let key = format!("{} ({:?})", exercise.key, exercise.language());
                let lab = exercise.lab();
                for (name, section) in [
                    ("introduction", &lab.introduction),
                    ("contract", &lab.contract),
                    ("why it matters", &lab.why),
                    ("predict", &lab.predict),
                    ("after the run", &lab.after),
                ] {
                    assert!(!section.is_empty(), "exercise {key} has no {name}");
                }
                assert_eq!(lab.hints.len(), 3, "exercise {key} should have three hints");
                let whole = crate::lab_text::in_language(exercise.text.text, exercise.language());
                for marker in ["{rust:", "| python:", "```rust", "```python"] {
                    assert!(
                        !whole.contains(marker),
                        "exercise {key}: {marker:?} is left in"
                    );
                }
                let foreign: &[&str] = match exercise.language() {
                    Language::Python => &[
                        "Ok(",
                        "Some(",
                        "Err(",
                        "Option<",
                        "Vec<",
                        "InvalidArgument",
                        "`true`",
                        "`false`",
                        "panic",
                    ],
                    Language::Rust => &["ValueError", "`True`", "`False`", "a dict"],
                };
                for word in foreign {
                    assert!(
                        !whole.contains(word),
                        "exercise {key} says {word:?}:\n{whole}"
                    );
                }
                assert_eq!(exercise.last, exercise.key == "8b", "{key}");
                texts.push((exercise.key.clone(), exercise.text.file_name));
            }
        }
        let mut names: Vec<&str> = texts.iter().map(|(_, name)| *name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), 9, "one text per exercise: {texts:?}");
        assert!(closing_examples().contains("Why are the tests"));
        let last = find("8b").unwrap();
        assert_eq!(
            parse_lab(last.text.text, Language::Python).closing,
            closing_examples(),
            "the closing examples are the same in both languages"
        );
        assert!(find("8").unwrap().lab().closing.is_empty());
        assert!(!find("8b")
            .unwrap()
            .lab()
            .after
            .contains("Why are the tests"));
    }
}
