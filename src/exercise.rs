//! The exercises: one per worksheet mutant, each with its step's text.
//!
//! Step N's exercise shows the mutant of step N; step 8 has two, the
//! worksheet's `claim_many` fragment (exercise `8`) and the check-then-act
//! race its basis warns about (exercise `8b`).

use crate::mutant::MutantKind;
use crate::variant::{self, CompiledMutant};

/// The worksheet's title of each step.
pub const STEP_TITLES: [&str; 8] = [
    "Create the lease state table",
    "Register only the first job",
    "Read the current state",
    "Take an expired lease atomically",
    "Only the current generation renews the lease",
    "Reject a stale completion",
    "Only the current worker returns the lease",
    "There is one winner among concurrent claims",
];

/// The title of step `step` (1 to 8), or an empty string for another number.
pub fn step_title(step: u8) -> &'static str {
    usize::from(step)
        .checked_sub(1)
        .and_then(|index| STEP_TITLES.get(index))
        .copied()
        .unwrap_or("")
}

/// One exercise: a worksheet mutant to predict and catch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exercise {
    /// What the student types: `4`, `8b`.
    pub key: &'static str,
    /// The mutant it is about.
    pub mutant: &'static CompiledMutant,
}

impl Exercise {
    /// What the exercise is about: the step's title, or for a second
    /// exercise of one step (`8b`), its mutant's title.
    pub fn label(&self) -> &'static str {
        if self.key.ends_with(|c: char| c.is_ascii_alphabetic()) {
            self.mutant.title
        } else {
            step_title(self.step())
        }
    }

    /// The step whose tests are in force (those of steps 1 to this one).
    pub fn step(&self) -> u8 {
        self.mutant.step
    }
}

/// The exercises in order: the worksheet's mutants, keyed by their ids
/// without the leading zero.
pub fn exercises() -> Vec<Exercise> {
    variant::MUTANTS
        .iter()
        .filter(|mutant| mutant.kind == MutantKind::Worksheet)
        .map(|mutant| Exercise {
            key: mutant.id.trim_start_matches('0'),
            mutant,
        })
        .collect()
}

/// The exercise a student named: `4`, `04`, `8b` or `08b`.
pub fn find(key: &str) -> Option<Exercise> {
    let wanted = key.trim().trim_start_matches('0').to_ascii_lowercase();
    exercises()
        .into_iter()
        .find(|exercise| exercise.key == wanted)
}

/// The parts of a step's text in `labs/`, by heading.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabSections {
    /// The `# ` title line's text.
    pub title: String,
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
}

/// Splits a lab text into its sections. Unknown headings are kept with the
/// introduction, so nothing the author wrote is lost.
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
            Some(other) if other.starts_with("Hint") => sections.hints.push(text),
            Some(other) => {
                sections.introduction =
                    format!("{}\n\n{other}\n\n{text}", sections.introduction.trim_end());
            }
        }
    };
    for line in text.lines() {
        if let Some(title) = line.strip_prefix("# ") {
            sections.title = title.trim().to_string();
        } else if let Some(next) = line.strip_prefix("## ") {
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
    variant::lab_text(step).map(|text| parse_lab(text.text))
}
