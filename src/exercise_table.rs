//! The course's table of exercises, `labs/exercises.toml`, and its check.
//!
//! The table is the one place that says what the exercises are: each row
//! names its key (what the student types), its step, the worksheet mutant
//! of each store it is about, its text in `labs/` and its example probe in
//! `labs/probes/`. The build reads it with this module and refuses a table
//! that names a file or a mutant that is not there, or that leaves a
//! worksheet mutant out (as rustlings checks its `info.toml`); the lab
//! reads the same table at run time. This module uses only `std`, `serde`
//! and `toml`, and [`crate::mutant`], because the build script includes it
//! too.

use crate::mutant::{MutantKind, MutantSpec, MUTABLE_FILE, POSTGRES_STORE, PYTHON_STORE};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};

/// The table's file, relative to the crate root.
pub const TABLE_FILE: &str = "labs/exercises.toml";

/// One exercise of the table.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExerciseRow {
    /// What the student types: `4`, `8b`. Its digits are its step.
    pub key: String,
    /// The worksheet step (1 to 8) whose tests are in force.
    pub step: u8,
    /// The id of the Rust store's worksheet mutant it is about (`04`).
    pub mutant: String,
    /// The id of the Python store's worksheet mutant it is about (`py04`).
    pub python_mutant: String,
    /// Its text's file name in `labs/`.
    pub text: String,
    /// Its example probe's file name in `labs/probes/`.
    pub probe: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    exercise: Vec<ExerciseRow>,
}

/// Reads the table's text: its rows, in order.
///
/// Errors: the text is not TOML, or a row has a missing or unknown field;
/// the message names the table's file.
pub fn parse(text: &str) -> Result<Vec<ExerciseRow>, String> {
    toml::from_str::<Table>(text)
        .map(|table| table.exercise)
        .map_err(|error| format!("{TABLE_FILE}: {error}"))
}

/// What the table is checked against: the mutants of `mutants/`, and the
/// file names of `labs/*.md` and of `labs/probes/*.probe`.
#[derive(Debug, Clone, Copy)]
pub struct Course<'a> {
    /// Every mutant file, parsed.
    pub mutants: &'a [MutantSpec],
    /// The texts' file names.
    pub texts: &'a BTreeSet<String>,
    /// The probes' file names.
    pub probes: &'a BTreeSet<String>,
}

/// Checks the table against the course's files, and returns every problem,
/// each naming the row and what to do:
///
/// - keys are unique, and a key is its step's number with at most one
///   letter after it (`8`, `8b`);
/// - rows are in step order, and the steps run from 1 with none left out;
/// - each row's mutants are worksheet mutants of its step, of the Rust and
///   the Python store, and its text and probe exist;
/// - every worksheet mutant of `mutants/` is the mutant of exactly one row.
pub fn check(rows: &[ExerciseRow], course: Course<'_>) -> Result<(), Vec<String>> {
    let mut problems = Vec::new();
    let mut keys = BTreeSet::new();
    let mut last_step = 0;
    for row in rows {
        let name = format!("{TABLE_FILE}: exercise {:?}", row.key);
        if !keys.insert(row.key.as_str()) {
            problems.push(format!(
                "{name} is in the table twice: give each its own key"
            ));
        }
        if !key_fits_step(&row.key, row.step) {
            problems.push(format!(
                "{name}: a key is its step's number ({}), with at most one letter after it",
                row.step
            ));
        }
        if row.step < last_step || row.step > last_step + 1 {
            problems.push(format!(
                "{name}: step {} comes after step {last_step}; list the steps in order, from 1, leaving none out",
                row.step
            ));
        }
        last_step = last_step.max(row.step);
        for (id, store) in [
            (&row.mutant, MUTABLE_FILE),
            (&row.python_mutant, PYTHON_STORE),
        ] {
            if let Some(problem) = mutant_problem(course.mutants, id, store, row.step) {
                problems.push(format!("{name}: {problem}"));
            }
        }
        if !course.texts.contains(&row.text) {
            problems.push(format!("{name}: its text labs/{} does not exist", row.text));
        }
        if !course.probes.contains(&row.probe) {
            problems.push(format!(
                "{name}: its probe labs/probes/{} does not exist",
                row.probe
            ));
        }
    }
    let mut rows_of: BTreeMap<&str, usize> = BTreeMap::new();
    for row in rows {
        for id in [&row.mutant, &row.python_mutant] {
            *rows_of.entry(id.as_str()).or_default() += 1;
        }
    }
    // The worksheet's fragments translated to the store on PostgreSQL are
    // the same exercises' on another engine: no exercise of their own.
    for spec in course.mutants {
        if spec.kind != MutantKind::Worksheet || spec.file == POSTGRES_STORE {
            continue;
        }
        match rows_of.get(spec.id.as_str()).copied().unwrap_or(0) {
            1 => {}
            0 => problems.push(format!(
                "{TABLE_FILE}: worksheet mutant {} (step {}) is in no exercise: add a row for it",
                spec.id, spec.step
            )),
            n => problems.push(format!(
                "{TABLE_FILE}: worksheet mutant {} is the mutant of {n} exercises: each is the mutant of one",
                spec.id
            )),
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// Whether `key` is `step`'s number with at most one lowercase letter after it.
fn key_fits_step(key: &str, step: u8) -> bool {
    let digits = key.trim_end_matches(|c: char| c.is_ascii_lowercase());
    key.len() - digits.len() <= 1 && digits == step.to_string()
}

/// What is wrong with naming mutant `id` for a row of `step` whose store
/// is `store`, if anything.
fn mutant_problem(mutants: &[MutantSpec], id: &str, store: &str, step: u8) -> Option<String> {
    let Some(spec) = mutants.iter().find(|spec| spec.id == id) else {
        return Some(format!("mutants/ has no mutant {id}"));
    };
    if spec.file != store {
        Some(format!("mutant {id} changes {}, not {store}", spec.file))
    } else if spec.kind != MutantKind::Worksheet {
        Some(format!(
            "mutant {id} is a {} mutant, not a worksheet one",
            spec.kind.name()
        ))
    } else if spec.step != step {
        Some(format!("mutant {id} is of step {}, not {step}", spec.step))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(id: &str, step: u8, kind: MutantKind, file: &str) -> MutantSpec {
        MutantSpec {
            id: id.into(),
            step,
            title: format!("mutant {id}"),
            kind,
            file: file.into(),
            fragment: "a".into(),
            replacement: "b".into(),
            explanation: "why".into(),
            worksheet: None,
            story: None,
        }
    }

    fn row(key: &str, step: u8, mutant: &str) -> ExerciseRow {
        ExerciseRow {
            key: key.into(),
            step,
            mutant: mutant.into(),
            python_mutant: format!("py{mutant}"),
            text: format!("{step:02}-text.md"),
            probe: format!("{step:02}-text.probe"),
        }
    }

    /// A course of two steps, with a second exercise for step 2, and one
    /// hardening mutant of the Rust store.
    fn mutants() -> Vec<MutantSpec> {
        let mut mutants = Vec::new();
        for (id, step) in [("01", 1), ("02", 2), ("02b", 2)] {
            mutants.push(spec(id, step, MutantKind::Worksheet, MUTABLE_FILE));
            mutants.push(spec(
                &format!("py{id}"),
                step,
                MutantKind::Worksheet,
                PYTHON_STORE,
            ));
        }
        mutants.push(spec("h02a", 2, MutantKind::Hardening, MUTABLE_FILE));
        mutants
    }

    fn rows() -> Vec<ExerciseRow> {
        vec![row("1", 1, "01"), row("2", 2, "02"), row("2b", 2, "02b")]
    }

    fn names(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|name| name.to_string()).collect()
    }

    /// The problems `check` finds in `rows` against the small course.
    fn problems(rows: &[ExerciseRow]) -> Vec<String> {
        let mutants = mutants();
        let texts = names(&["01-text.md", "02-text.md", "protocol.md"]);
        let probes = names(&["01-text.probe", "02-text.probe"]);
        let course = Course {
            mutants: &mutants,
            texts: &texts,
            probes: &probes,
        };
        check(rows, course).err().unwrap_or_default()
    }

    #[test]
    fn a_table_that_names_every_worksheet_mutant_once_passes() {
        assert_eq!(problems(&rows()), Vec::<String>::new());
    }

    #[test]
    fn the_lab_s_own_table_passes_against_its_mutants_and_texts() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let read = |path: &std::path::Path| std::fs::read_to_string(path).unwrap();
        let rows = parse(&read(&root.join(TABLE_FILE))).unwrap();
        let mutants: Vec<MutantSpec> = crate::mutant::mutant_files(&root.join("mutants"))
            .unwrap()
            .iter()
            .map(|path| {
                let name = path.file_name().unwrap().to_string_lossy();
                MutantSpec::parse(&name, &read(path)).unwrap()
            })
            .collect();
        let listing = |folder: &str| -> BTreeSet<String> {
            std::fs::read_dir(root.join(folder))
                .unwrap()
                .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        };
        let course = Course {
            mutants: &mutants,
            texts: &listing("labs"),
            probes: &listing("labs/probes"),
        };
        assert_eq!(check(&rows, course), Ok(()));
        let keys: Vec<&str> = rows.iter().map(|row| row.key.as_str()).collect();
        assert_eq!(keys, ["1", "2", "3", "4", "5", "6", "7", "8", "8b"]);
    }

    #[test]
    fn a_key_is_its_step_s_number_with_at_most_one_letter() {
        assert!(key_fits_step("8", 8));
        assert!(key_fits_step("8b", 8));
        assert!(key_fits_step("12", 12));
        assert!(!key_fits_step("08", 8));
        assert!(!key_fits_step("8bc", 8));
        assert!(!key_fits_step("9", 8));
        assert!(!key_fits_step("8B", 8));
        assert!(!key_fits_step("b", 8));
    }

    #[test]
    fn keys_twice_or_keys_that_do_not_fit_their_step_are_named() {
        let mut twice = rows();
        twice[2].key = "2".into();
        assert_eq!(
            problems(&twice),
            ["labs/exercises.toml: exercise \"2\" is in the table twice: give each its own key"]
        );
        let mut misfit = rows();
        misfit[0].key = "01".into();
        assert_eq!(
            problems(&misfit),
            ["labs/exercises.toml: exercise \"01\": a key is its step's number (1), with at most one letter after it"]
        );
    }

    #[test]
    fn steps_out_of_order_or_left_out_are_named() {
        let mut backwards = rows();
        backwards.swap(0, 1);
        assert_eq!(
            problems(&backwards),
            [
                "labs/exercises.toml: exercise \"2\": step 2 comes after step 0; list the steps in order, from 1, leaving none out",
                "labs/exercises.toml: exercise \"1\": step 1 comes after step 2; list the steps in order, from 1, leaving none out",
            ]
        );
    }

    #[test]
    fn a_mutant_that_is_missing_of_another_store_kind_or_step_is_named() {
        let mut missing = rows();
        missing[0].mutant = "09".into();
        let mut other_store = rows();
        other_store[0].python_mutant = "01".into();
        let mut hardening = rows();
        hardening[1].mutant = "h02a".into();
        let mut other_step = rows();
        other_step[2].mutant = "01".into();
        assert_eq!(
            problems(&missing),
            [
                "labs/exercises.toml: exercise \"1\": mutants/ has no mutant 09",
                "labs/exercises.toml: worksheet mutant 01 (step 1) is in no exercise: add a row for it",
            ]
        );
        assert_eq!(
            problems(&other_store)[0],
            "labs/exercises.toml: exercise \"1\": mutant 01 changes crates/store/src/store.rs, not src/store.py"
        );
        assert_eq!(
            problems(&hardening)[0],
            "labs/exercises.toml: exercise \"2\": mutant h02a is a hardening mutant, not a worksheet one"
        );
        assert_eq!(
            problems(&other_step),
            [
                "labs/exercises.toml: exercise \"2b\": mutant 01 is of step 1, not 2",
                "labs/exercises.toml: worksheet mutant 01 is the mutant of 2 exercises: each is the mutant of one",
                "labs/exercises.toml: worksheet mutant 02b (step 2) is in no exercise: add a row for it",
            ]
        );
    }

    #[test]
    fn a_text_or_probe_that_does_not_exist_is_named() {
        let mut no_text = rows();
        no_text[1].text = "02-other.md".into();
        no_text[1].probe = "02-other.probe".into();
        assert_eq!(
            problems(&no_text),
            [
                "labs/exercises.toml: exercise \"2\": its text labs/02-other.md does not exist",
                "labs/exercises.toml: exercise \"2\": its probe labs/probes/02-other.probe does not exist",
            ]
        );
    }

    #[test]
    fn a_table_with_a_field_missing_or_unknown_names_the_file() {
        let missing = parse("[[exercise]]\nkey = \"1\"\nstep = 1\n").unwrap_err();
        assert!(missing.starts_with("labs/exercises.toml: "), "{missing}");
        assert!(missing.contains("missing field `mutant`"), "{missing}");
        let unknown = parse(
            "[[exercise]]\nkey = \"1\"\nstep = 1\nmutant = \"01\"\npython_mutant = \"py01\"\ntext = \"a.md\"\nprobe = \"a.probe\"\ntitle = \"x\"\n",
        )
        .unwrap_err();
        assert!(unknown.contains("unknown field `title`"), "{unknown}");
        assert_eq!(parse("exercise = []\n"), Ok(Vec::new()));
    }
}
