//! The exercises and their texts, as the table `labs/exercises.toml` lists
//! them ([`crate::exercise_table`]): one exercise per worksheet mutant, each
//! with its text from `labs/`.
//!
//! Step N's exercise shows the mutant of step N; step 8 has two, the
//! worksheet's `claim_many` fragment (exercise `8`) and the check-then-act
//! race its basis warns about (exercise `8b`).

use crate::exercise_table::{self, ExerciseRow};
use crate::subject::{self, Subject};
use crate::variant::{Variant, MUTANTS, REFERENCE_ID};
use std::sync::OnceLock;

/// An exercise text of `labs/`, compiled in.
#[derive(Debug, Clone, Copy)]
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
}

impl Exercise {
    /// The exercise of table row `row`, about `variant`, a mutant.
    fn of(row: &ExerciseRow, variant: Variant, reference: Variant) -> Exercise {
        debug_assert!(variant.mutant.is_some(), "an exercise is about a mutant");
        Exercise {
            key: row.key.clone(),
            variant,
            reference,
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
/// `LEASE_LAB_VARIANTS=none`, has none.)
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

/// The exercises of a subject, those of its exercise store
/// ([`Subject::exercise_store`]): the Rust store's ([`exercises`]), or the
/// Python store's, each about its row's `python_mutant`, the worksheet's
/// literal fragment applied to the Python store (`py04` is exercise `4`,
/// `py08b`, its check-then-act race, exercise `8b`).
///
/// Errors: the Python store's files cannot be written.
pub fn exercises_of(subject: &Subject) -> Result<Vec<Exercise>, String> {
    match subject.exercise_store() {
        Subject::Python => {
            let unwritable =
                |error: std::io::Error| format!("cannot write the Python store to run it: {error}");
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

/// The parts of a step's text in `labs/`, by heading.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabSections {
    /// What comes before the first `## ` heading.
    pub introduction: String,
    /// `## Contract`.
    pub contract: String,
    /// `## Why it matters`.
    pub why: String,
    /// `## Predict before you run`.
    pub predict: String,
    /// `## Hint 1`, `## Hint 2`, ... in order.
    pub hints: Vec<String>,
    /// `## After the run`.
    pub after: String,
    /// `## Closing reflection`: example answers to the worksheet's closing
    /// questions, shown only once the student has answered them.
    pub closing: String,
}

/// Splits a lab text into its sections. The `# ` title is left out (see
/// [`step_title`]); unknown headings are kept with the introduction, so
/// nothing the author wrote is lost.
pub fn parse_lab(text: &str) -> LabSections {
    let mut sections = LabSections::default();
    let mut heading: Option<String> = None;
    let mut body = String::new();
    let flush = |heading: &Option<String>, body: &mut String, sections: &mut LabSections| {
        let text = body.trim().to_string();
        body.clear();
        match heading.as_deref() {
            None => sections.introduction = text,
            Some("Contract") => sections.contract = text,
            Some("Why it matters") => sections.why = text,
            Some("Predict before you run") => sections.predict = text,
            Some("After the run") => sections.after = text,
            Some("Closing reflection") => sections.closing = text,
            Some(other) if other.starts_with("Hint") => sections.hints.push(text),
            Some(other) => {
                sections.introduction =
                    format!("{}\n\n{other}\n\n{text}", sections.introduction.trim_end());
            }
        }
    };
    for line in text.lines() {
        if line.starts_with("# ") {
            continue;
        }
        if let Some(next) = line.strip_prefix("## ") {
            flush(&heading, &mut body, &mut sections);
            heading = Some(next.trim().to_string());
        } else {
            body.push_str(line);
            body.push('\n');
        }
    }
    flush(&heading, &mut body, &mut sections);
    sections
}

/// The sections of step `step`'s text, if `labs/` has one.
pub fn lab(step: u8) -> Option<LabSections> {
    lab_text(step).map(|text| parse_lab(text.text))
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

    #[test]
    fn a_lab_text_splits_into_its_sections() {
        let lab = parse_lab(
            "# Step 9: Title\nintro\n## Contract\nc\n## Odd\no\n## Hint 1\nh1\n## Hint 2\nh2\n## After the run\na\n",
        );
        assert_eq!(lab.introduction, "intro\n\nOdd\n\no");
        assert_eq!(lab.contract, "c");
        assert_eq!(lab.hints, ["h1", "h2"]);
        assert_eq!(lab.after, "a");
    }

    #[test]
    fn every_step_has_a_complete_text() {
        for step in 1..=8 {
            let lab = lab(step).unwrap_or_else(|| panic!("labs/ has no text for step {step}"));
            assert!(!step_title(step).is_empty(), "step {step} has no title");
            for (name, section) in [
                ("introduction", &lab.introduction),
                ("contract", &lab.contract),
                ("why it matters", &lab.why),
                ("predict", &lab.predict),
                ("after the run", &lab.after),
            ] {
                assert!(!section.is_empty(), "step {step} has no {name}");
            }
            assert_eq!(lab.hints.len(), 3, "step {step} should have three hints");
        }
        assert!(lab(8).unwrap().closing.contains("Why are the tests"));
        assert!(!lab(8).unwrap().after.contains("Why are the tests"));
    }
}
