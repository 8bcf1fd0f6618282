//! Which implementations a run is about, as `--impl` names them: the Rust
//! store and its mutants compiled into this binary (`rust`), the Python
//! store in the worksheet's own idiom and its mutants, applied when they
//! run (`python`), or a program of one's own that speaks the lab's
//! protocol (a command line).

use crate::external::ImplCommand;
use crate::mutant::{MutantSpec, SpecError, PYTHON_STORE};
use crate::variant::{Engine, Mutant, Program, Variant, REFERENCE_ID};
use std::borrow::Cow;
use std::fs;
use std::path::Path;
use std::sync::Arc;

/// The Python reference store, exactly as the lab runs it.
pub const PYTHON_SOURCE: &str = include_str!("store.py");

/// The interpreter the Python store runs with.
pub const PYTHON: &str = "python3";

/// The id under which the lab reports a program of one's own.
pub const PROGRAM_ID: &str = "yours";

/// A mutant file compiled in as text.
#[derive(Debug, Clone, Copy)]
pub struct MutantFile {
    /// Its name in `mutants/`.
    pub file_name: &'static str,
    /// Its TOML.
    pub text: &'static str,
}

mod generated {
    use super::MutantFile;
    include!(concat!(env!("OUT_DIR"), "/python_mutants.rs"));
}

pub use generated::PYTHON_MUTANT_FILES;

/// A family of implementations: a reference and its mutants, or one
/// program under test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Family {
    /// The Rust store and its compiled mutants.
    Rust,
    /// The Python store and its mutants.
    Python,
    /// A program of one's own, alone.
    Program(ImplCommand),
}

impl Family {
    /// `rust`, `python`, or the command line of a program.
    pub fn parse(text: &str) -> Result<Family, String> {
        match text.trim() {
            "rust" => Ok(Family::Rust),
            "python" => Ok(Family::Python),
            line => ImplCommand::parse(line).map(Family::Program),
        }
    }

    /// Its name, as `--impl` takes it.
    pub fn name(&self) -> String {
        match self {
            Family::Rust => "rust".into(),
            Family::Python => "python".into(),
            Family::Program(command) => command.display(),
        }
    }

    /// Its implementations: the reference (or the program) first, then
    /// the mutants in file order.
    ///
    /// Errors: the Python store's files cannot be written where it runs.
    pub fn variants(&self) -> std::io::Result<Vec<Variant>> {
        match self {
            Family::Rust => Ok(Variant::all_compiled()),
            Family::Python => python_variants(),
            Family::Program(_) => self.reference().map(|program| vec![program]),
        }
    }

    /// Its reference implementation alone (for a program, the program).
    ///
    /// Errors: the Python store cannot be written where it runs.
    pub fn reference(&self) -> std::io::Result<Variant> {
        match self {
            Family::Rust => Ok(Variant::reference()),
            Family::Python => python_variant(REFERENCE_ID, None),
            Family::Program(command) => Ok(Variant::program(PROGRAM_ID, command.clone())),
        }
    }
}

/// The mutants of the Python store, parsed.
///
/// # Panics
///
/// If a compiled-in file does not parse or apply: the build checked both.
pub fn python_mutants() -> Vec<Mutant> {
    PYTHON_MUTANT_FILES
        .iter()
        .map(|file| {
            python_mutant(file.file_name, file.text)
                .unwrap_or_else(|error| panic!("{error}, though the build checked it"))
        })
        .collect()
}

/// A mutant of the Python store from its file's text.
pub fn python_mutant(file_name: &str, text: &str) -> Result<Mutant, SpecError> {
    let spec = MutantSpec::parse(file_name, text)?;
    if spec.file != PYTHON_STORE {
        return Err(SpecError {
            file_name: file_name.into(),
            reason: format!("changes {}, not {PYTHON_STORE}", spec.file),
        });
    }
    let source = spec.apply(file_name, PYTHON_SOURCE)?;
    Ok(Mutant {
        spec,
        original: Cow::Borrowed(PYTHON_SOURCE),
        source: Cow::Owned(source),
    })
}

/// The Python reference and its mutants, each written to a folder of its
/// own (kept while the variants live) and run with [`PYTHON`].
fn python_variants() -> std::io::Result<Vec<Variant>> {
    let mut variants = vec![python_variant(REFERENCE_ID, None)?];
    for mutant in python_mutants() {
        variants.push(python_variant(&mutant.spec.id.clone(), Some(mutant))?);
    }
    Ok(variants)
}

/// One Python variant: `mutant`'s source, or the reference's.
pub fn python_variant(id: &str, mutant: Option<Mutant>) -> std::io::Result<Variant> {
    let folder = tempfile::Builder::new()
        .prefix("lease-lab-python-")
        .tempdir()?;
    let file = folder.path().join("store.py");
    let source = mutant
        .as_ref()
        .map_or(PYTHON_SOURCE, |mutant| mutant.source.as_ref());
    fs::write(&file, source)?;
    Ok(Variant {
        id: id.into(),
        mutant: mutant.map(Arc::new),
        engine: Engine::Process(Arc::new(Program {
            command: python_command(&file),
            files: Some(folder),
        })),
    })
}

/// How to run a Python store kept at `file`.
pub fn python_command(file: &Path) -> ImplCommand {
    ImplCommand {
        argv: vec![PYTHON.into(), file.display().to_string()],
        dir: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_family_is_named_as_impl_takes_it() {
        assert_eq!(Family::parse("rust"), Ok(Family::Rust));
        assert_eq!(Family::parse(" python "), Ok(Family::Python));
        let program = Family::parse("python3 my_store.py").unwrap();
        assert_eq!(program.name(), "python3 my_store.py");
        assert!(Family::parse("").is_err());
    }

    #[test]
    fn the_python_mutants_are_the_worksheet_s_eight_literal_fragments_and_the_race() {
        let mutants = python_mutants();
        let ids: Vec<&str> = mutants.iter().map(|m| m.spec.id.as_str()).collect();
        assert_eq!(
            ids,
            ["py01", "py02", "py03", "py04", "py05", "py06", "py07", "py08", "py08b"]
        );
        let fragments: Vec<(&str, &str)> = mutants
            .iter()
            .take(7)
            .map(|m| (m.spec.fragment.as_str(), m.spec.replacement.as_str()))
            .collect();
        assert_eq!(
            fragments,
            [
                ("CREATE TABLE IF NOT EXISTS jobs", "CREATE TABLE jobs"),
                ("INSERT OR IGNORE INTO jobs", "INSERT OR REPLACE INTO jobs"),
                ("if row else None", "if row else {}"),
                ("row[0] > now", "row[0] >= now"),
                ("AND until>?\", (now+ttl", "AND until>=?\", (now+ttl"),
                (
                    "AND done=0 AND until>?\", (result",
                    "AND done>=0 AND until>?\", (result"
                ),
                (
                    "SET owner=NULL,until=0 WHERE",
                    "SET owner=NULL,until=0,fence=0 WHERE"
                ),
            ]
        );
        assert!(mutants[7]
            .spec
            .replacement
            .contains("return [claim(path,job_id,owners[0],now,ttl)]"));
        assert!(mutants[8].spec.fragment.contains("BEGIN IMMEDIATE"));
        let race = &mutants[8].spec.replacement;
        assert!(
            race.find("SELECT until, done").unwrap() < race.find("BEGIN IMMEDIATE").unwrap(),
            "py08b looks the lease up before it takes the write lock: {race}"
        );
        for mutant in &mutants {
            assert_eq!(PYTHON_SOURCE.matches(&mutant.spec.fragment).count(), 1);
            assert_ne!(mutant.source, mutant.original);
        }
    }

    #[test]
    fn a_mutant_of_another_file_is_not_a_python_mutant() {
        let text = PYTHON_MUTANT_FILES[0]
            .text
            .replace("src/store.py", "src/store.rs");
        let error = python_mutant("py01-x.toml", &text).unwrap_err();
        assert!(error.reason.contains("not src/store.py"), "{error}");
    }
}
