//! The mutants of one's own that `lab` runs without being rebuilt: the
//! files in the mutants folder that are not compiled in, read when a
//! command starts. A mutant of the Python store is applied to a copy of it;
//! one of the Rust store is built into a small worker program of its own,
//! cached by the hash of its source ([`rust_project::worker`]).

use super::{rust_project, Subject, SubjectError, PYTHON_SOURCE};
use crate::external::ImplCommand;
use crate::mutant::{mutant_files, MutantSpec, MUTABLE_FILE, PYTHON_STORE};
use crate::operation::NAMES;
use crate::variant::{Engine, Mutant, Program, Variant, REFERENCE_SOURCE};
use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

/// Adds to `variants` (a family's, built-in first) the mutants of the
/// files in `folder` that are not compiled into this binary: those that
/// change the family's store. A file with the id of a built-in mutant but
/// other contents takes that mutant's place: the file is what counts.
///
/// A file that cannot be used (it does not parse or apply, or its worker
/// does not build) is skipped with a warning on standard error that says
/// how to find out more. A missing folder adds nothing.
pub fn add_own_variants(variants: &mut Vec<Variant>, subject: &Subject, folder: &Path) {
    let store = match subject {
        Subject::Rust => MUTABLE_FILE,
        Subject::Python => PYTHON_STORE,
        Subject::Own(_) => return,
    };
    // A folder that cannot be listed (none is there) adds nothing.
    for path in mutant_files(folder).unwrap_or_default() {
        let file_name = path
            .file_name()
            .map_or_else(String::new, |name| name.to_string_lossy().into_owned());
        let warn = |why: &str| {
            let warning = format!(
                "lab: warning: {} is left out: {why}; `lab mutant check {}` says more",
                path.display(),
                path.display()
            );
            eprintln!("{}", crate::inert::line(&warning));
        };
        let spec = match std::fs::read_to_string(&path)
            .map_err(|error| error.to_string())
            .and_then(|text| MutantSpec::parse(&file_name, &text).map_err(|e| e.reason))
        {
            Ok(spec) if spec.file == store => spec,
            Ok(_) => continue,
            Err(why) => {
                warn(&why);
                continue;
            }
        };
        let at = variants.iter().position(|variant| variant.id == spec.id);
        // A file that makes the code a built-in mutant makes is that
        // mutant, whatever its title or explanation say.
        let same_code = |built: &Mutant| {
            spec.apply(&file_name, &built.original).as_deref() == Ok(built.source.as_ref())
        };
        if at.is_some_and(|at| variants[at].mutant.as_deref().is_some_and(same_code)) {
            continue;
        }
        let made = match subject {
            Subject::Python => python_variant(spec),
            _ => rust_variant(spec),
        };
        match (made, at) {
            (Ok(variant), Some(at)) => {
                let said = format!(
                    "lab: {} differs from the mutant {} built into lab: running the file's version",
                    path.display(),
                    variant.id
                );
                eprintln!("{}", crate::inert::line(&said));
                variants[at] = variant;
            }
            (Ok(variant), None) => variants.push(variant),
            (Err(error), _) => warn(&error.to_string()),
        }
    }
}

/// A mutant of the Python store from its file: applied to a copy, no build.
pub fn python_variant(spec: MutantSpec) -> Result<Variant, SubjectError> {
    let file_name = format!("{}.toml", spec.id);
    let source = spec
        .apply(&file_name, PYTHON_SOURCE)
        .map_err(|error| SubjectError::Mutant(error.reason))?;
    let id = spec.id.clone();
    let reaches = crate::reach::python_reach(PYTHON_SOURCE, &spec.fragment, &NAMES);
    let mutant = Mutant {
        spec,
        original: Cow::Borrowed(PYTHON_SOURCE),
        source: Cow::Owned(source),
        reaches: Some(reaches),
    };
    super::python_variant(&id, Some(mutant)).map_err(|error| SubjectError::Unwritable {
        subject: format!("mutated Python store {id}"),
        error,
    })
}

/// A mutant of the Rust store from its file: its worker program, built
/// the first time (saying so on standard error) and taken from the cache
/// after.
pub fn rust_variant(spec: MutantSpec) -> Result<Variant, SubjectError> {
    let file_name = format!("{}.toml", spec.id);
    let source = spec
        .apply(&file_name, REFERENCE_SOURCE)
        .map_err(|error| SubjectError::Mutant(error.reason))?;
    let program = rust_project::worker(&source, |folder| {
        eprintln!(
            "lab: building a worker for mutant {} in {} (once; cached after)...",
            spec.id,
            folder.display()
        );
    })?;
    Ok(Variant {
        id: spec.id.clone(),
        engine: Engine::Process(Arc::new(Program {
            command: ImplCommand {
                argv: vec![program.display().to_string()],
                dir: None,
                env: Vec::new(),
            },
            files: None,
        })),
        mutant: Some(Arc::new(Mutant {
            spec,
            original: Cow::Borrowed(REFERENCE_SOURCE),
            source: Cow::Owned(source),
            // Built apart from the lab, without its analysis of the
            // store's call graph: every test may run it.
            reaches: None,
        })),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_mutant_files_add_nothing_and_an_own_python_one_is_added() {
        let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("mutants");
        for subject in [Subject::Rust, Subject::Python] {
            let built_in = subject.built_in_variants().unwrap();
            let with_files = subject.variants(&folder).unwrap();
            assert_eq!(with_files, built_in, "{}", subject.name());
        }
        let own = tempfile::tempdir().unwrap();
        let text = std::fs::read_to_string(folder.join("py04-claim-boundary.toml"))
            .unwrap()
            .replace("id = \"py04\"", "id = \"o04p\"")
            .replace("kind = \"worksheet\"", "kind = \"own\"");
        std::fs::write(own.path().join("o04p-mine.toml"), text).unwrap();
        let variants = Subject::Python.variants(own.path()).unwrap();
        let added = variants.last().unwrap();
        assert_eq!(added.id, "o04p");
        assert!(added
            .mutant
            .as_ref()
            .unwrap()
            .source
            .contains("row[0] >= now"));
        assert_eq!(
            Subject::Rust.variants(own.path()).unwrap().len(),
            Subject::Rust.built_in_variants().unwrap().len(),
            "a mutant of the Python store is not one of the Rust store"
        );
    }
}
