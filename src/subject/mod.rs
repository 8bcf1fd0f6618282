//! What runs: the subject of every command that runs the store, as
//! `--impl` names it. The Rust store and its mutants compiled into this
//! binary (`rust`), the Python store in the worksheet's own idiom and its
//! mutants, applied when they run (`python`), or a program of the
//! student's own that speaks the lab's protocol (a `.py` file, a cargo
//! project or a command line). A subject owns its source, its reference,
//! its mutants (the built-in ones and those of a mutants folder) and how
//! one of them is built or applied.

pub mod own;
pub mod own_mutants;
pub mod rust_project;

use crate::external::ImplCommand;
pub use crate::external::InvalidImpl;
use crate::lab_text::Language;
use crate::mutant::{MutantSpec, SpecError, PYTHON_STORE};
use crate::operation::NAMES;
use crate::variant::{Engine, Mutant, Program, Variant, REFERENCE_ID};
pub use own::Implementation;
use rust_project::BuildFailure;
use std::borrow::Cow;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The Python reference store, exactly as the lab runs it.
pub const PYTHON_SOURCE: &str = include_str!("../store.py");

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

/// What a command runs: one of the lab's stores with its mutants, or a
/// program of the student's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// The Rust store and its compiled mutants.
    Rust,
    /// The Python store and its mutants.
    Python,
    /// A program of the student's own, alone.
    Own(Implementation),
}

/// Why a subject cannot run.
#[derive(Debug, thiserror::Error)]
pub enum SubjectError {
    /// What `--impl` names cannot run: an empty or unbalanced command line,
    /// a folder without `Cargo.toml`. A usage error.
    #[error("{0}")]
    Invalid(String),
    /// A cargo project (the student's, or the worker of a mutant of the
    /// Rust store) did not build; the message has cargo's errors.
    #[error(transparent)]
    Build(#[from] BuildFailure),
    /// The files a run needs (a copy of the Python store) cannot be written.
    #[error("cannot prepare the {subject} implementations: {error}")]
    Unwritable {
        /// The subject, as `--impl` names it.
        subject: String,
        /// Why.
        error: std::io::Error,
    },
    /// A mutant file does not apply to its store's source.
    #[error("{0}")]
    Mutant(String),
}

impl Subject {
    /// What `--impl` names: `rust`, `python`, or the student's own
    /// implementation ([`Implementation::parse`]).
    ///
    /// Errors: the text names nothing that can run; the message says what
    /// to give instead.
    pub fn parse(text: &str) -> Result<Subject, InvalidImpl> {
        match text.trim() {
            "rust" => Ok(Subject::Rust),
            "python" => Ok(Subject::Python),
            text => Implementation::parse(text).map(Subject::Own),
        }
    }

    /// Its name, as `--impl` takes it (for one's own, how it is described).
    pub fn name(&self) -> String {
        match self {
            Subject::Rust => "rust".into(),
            Subject::Python => "python".into(),
            Subject::Own(own) => own.describe(),
        }
    }

    /// How `--impl` names it, ready for a command line.
    pub fn impl_arg(&self) -> String {
        match self {
            Subject::Own(own) => own.impl_arg(),
            lab => lab.name(),
        }
    }

    /// How it is named in messages.
    pub fn describe(&self) -> String {
        match self {
            Subject::Own(own) => own.describe(),
            lab => format!("the lab's {} store", lab.name()),
        }
    }

    /// Where its operations are written: one's own source, or the name of
    /// the lab's store.
    pub fn source(&self) -> String {
        match self {
            Subject::Own(own) => own.source(),
            lab => lab.name(),
        }
    }

    /// Its implementations: the reference (or the program) first, then
    /// the built-in mutants in file order, then those of the mutant files
    /// in `mutants` that change its store (see [`own_mutants`]).
    ///
    /// Errors: the Python store's files cannot be written where it runs;
    /// one's own Rust project does not build.
    pub fn variants(&self, mutants: &Path) -> Result<Vec<Variant>, SubjectError> {
        let mut variants = self.built_in_variants()?;
        own_mutants::add_own_variants(&mut variants, self, mutants);
        Ok(variants)
    }

    /// Its implementations without those of a mutants folder: the
    /// reference (or the program) first, then the built-in mutants.
    ///
    /// Errors: as for [`Subject::variants`].
    pub fn built_in_variants(&self) -> Result<Vec<Variant>, SubjectError> {
        Ok(match self {
            Subject::Rust => Variant::all_compiled(),
            Subject::Python => python_variants().map_err(|error| self.unwritable(error))?,
            Subject::Own(_) => vec![self.reference()?],
        })
    }

    /// Its reference implementation alone (for one's own, the program,
    /// built first when it is a cargo project).
    ///
    /// Errors: as for [`Subject::variants`].
    pub fn reference(&self) -> Result<Variant, SubjectError> {
        match self {
            Subject::Rust => Ok(Variant::reference()),
            Subject::Python => {
                python_variant(REFERENCE_ID, None).map_err(|error| self.unwritable(error))
            }
            Subject::Own(own) => own.variant(),
        }
    }

    /// The lab's store that a mutant file changes: the Python store for
    /// one that changes `src/store.py`, the Rust store otherwise. The one
    /// rule for which store a mutant belongs to.
    pub fn of_spec(spec: &MutantSpec) -> Subject {
        if spec.file == PYTHON_STORE {
            Subject::Python
        } else {
            Subject::Rust
        }
    }

    /// The lab's store whose built-in mutant has the id `id` (a Rust
    /// store's compiled mutant, or one of the Python store's), or `None`
    /// when the lab has no such mutant.
    pub fn of_mutant(id: &str) -> Option<Subject> {
        if crate::variant::compiled_mutant(id).is_some() {
            return Some(Subject::Rust);
        }
        PYTHON_MUTANT_FILES
            .iter()
            .any(|file| crate::mutant::id_of_file_name(file.file_name) == Some(id))
            .then_some(Subject::Python)
    }

    /// The language its exercises are worded in: Python for the Python
    /// store and one's own `.py` file, Rust otherwise.
    pub fn language(&self) -> Language {
        match self.exercise_store() {
            Subject::Python => Language::Python,
            _ => Language::Rust,
        }
    }

    /// The lab's store whose worksheet mutants are the subject's
    /// exercises: the Python store's for a Python subject (the lab's or
    /// one's own `.py`), the Rust store's otherwise.
    pub fn exercise_store(&self) -> Subject {
        match self {
            Subject::Python | Subject::Own(Implementation::Python { .. }) => Subject::Python,
            _ => Subject::Rust,
        }
    }

    fn unwritable(&self, error: std::io::Error) -> SubjectError {
        SubjectError::Unwritable {
            subject: self.name(),
            error,
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
    let reaches = crate::reach::python_reach(PYTHON_SOURCE, &spec.fragment, &NAMES);
    Ok(Mutant {
        spec,
        original: Cow::Borrowed(PYTHON_SOURCE),
        source: Cow::Owned(source),
        reaches: Some(reaches),
    })
}

/// The Python reference and its mutants, each written once to a file of
/// its own in the lab's cache folder ([`python_file`]) and run with
/// [`PYTHON`].
fn python_variants() -> std::io::Result<Vec<Variant>> {
    let mut variants = vec![python_variant(REFERENCE_ID, None)?];
    for mutant in python_mutants() {
        variants.push(python_variant(&mutant.spec.id.clone(), Some(mutant))?);
    }
    Ok(variants)
}

/// One Python variant: `mutant`'s source, or the reference's.
pub fn python_variant(id: &str, mutant: Option<Mutant>) -> std::io::Result<Variant> {
    let source = mutant
        .as_ref()
        .map_or(PYTHON_SOURCE, |mutant| mutant.source.as_ref());
    let file = python_file(&rust_project::cache_folder().join("python"), source)?;
    Ok(Variant {
        id: id.into(),
        mutant: mutant.map(Arc::new),
        engine: Engine::Process(Arc::new(Program {
            command: python_command(&file),
            files: None,
        })),
    })
}

/// The file `store.py` holding `source`, in a folder of `cache` named for
/// the source's hash: written the first time (to a file of its own, then
/// renamed into place, so that two runs at once never see half of it),
/// found there after. A run leaves no folder behind, and each source is
/// one file however many runs use it.
fn python_file(cache: &Path, source: &str) -> std::io::Result<PathBuf> {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    source.hash(&mut hasher);
    let folder = cache.join(format!("{:016x}", hasher.finish()));
    let file = folder.join("store.py");
    if fs::read_to_string(&file).is_ok_and(|kept| kept == source) {
        return Ok(file);
    }
    fs::create_dir_all(&folder)?;
    let mut written = tempfile::NamedTempFile::new_in(&folder)?;
    std::io::Write::write_all(&mut written, source.as_bytes())?;
    written.persist(&file).map_err(|error| error.error)?;
    Ok(file)
}

/// How to run a Python store kept at `file`.
pub fn python_command(file: &Path) -> ImplCommand {
    ImplCommand {
        argv: vec![PYTHON.into(), file.display().to_string()],
        dir: None,
        env: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_python_store_s_mutants_reach_their_operations() {
        use crate::operation::NAMES;
        use crate::reach::python_reach;
        let store = crate::subject::PYTHON_SOURCE;
        let of = |id: &str| {
            let file = crate::subject::PYTHON_MUTANT_FILES
                .iter()
                .find(|file| file.file_name.starts_with(&format!("{id}-")))
                .unwrap();
            let spec = crate::mutant::MutantSpec::parse(file.file_name, file.text).unwrap();
            python_reach(store, &spec.fragment, &NAMES)
        };
        assert_eq!(of("py05"), ["renew"]);
        assert_eq!(of("py08b"), ["claim", "claim_many"]);
        assert_eq!(of("py02"), ["enqueue"]);
        assert_eq!(
            of("py01"),
            ["init_db"],
            "an error message naming init_db calls nothing"
        );
        assert_eq!(python_reach(store, "no such text", &NAMES), NAMES);
        assert_eq!(
            python_reach(store, "sys.stdout = sys.stderr", &NAMES),
            NAMES,
            "the protocol's loop runs for every operation"
        );
    }

    use super::*;

    /// A Python store is one file per source in the cache, written once
    /// and found after; another source is another file; nothing else is
    /// left in the folder (the file written first is renamed into place).
    #[test]
    fn a_python_store_is_written_once_per_source_in_the_cache() {
        let cache = tempfile::tempdir().unwrap();
        let first = python_file(cache.path(), "print('one')\n").unwrap();
        assert_eq!(fs::read_to_string(&first).unwrap(), "print('one')\n");
        let modified = fs::metadata(&first).unwrap().modified().unwrap();
        let again = python_file(cache.path(), "print('one')\n").unwrap();
        assert_eq!(again, first);
        assert_eq!(
            fs::metadata(&again).unwrap().modified().unwrap(),
            modified,
            "not written again"
        );
        let other = python_file(cache.path(), "print('two')\n").unwrap();
        assert_ne!(other.parent(), first.parent());
        for folder in [first.parent().unwrap(), other.parent().unwrap()] {
            assert_eq!(fs::read_dir(folder).unwrap().count(), 1, "only store.py");
        }
        // A file cut short (a run stopped while writing it, before this
        // way of writing) is written again.
        fs::write(&first, "print(").unwrap();
        let mended = python_file(cache.path(), "print('one')\n").unwrap();
        assert_eq!(fs::read_to_string(mended).unwrap(), "print('one')\n");
    }

    /// Which store a mutant belongs to is read from what it changes, for
    /// every built-in mutant, and a mutant the lab lacks has none.
    #[test]
    fn a_mutant_belongs_to_the_store_its_file_changes() {
        for mutant in python_mutants() {
            assert_eq!(Subject::of_spec(&mutant.spec), Subject::Python);
            assert_eq!(Subject::of_mutant(&mutant.spec.id), Some(Subject::Python));
        }
        for variant in Variant::all_compiled().iter().skip(1) {
            let spec = &variant.mutant.as_ref().expect("a mutant").spec;
            assert_eq!(Subject::of_spec(spec), Subject::Rust);
            assert_eq!(Subject::of_mutant(&spec.id), Some(Subject::Rust));
        }
        assert_eq!(Subject::of_mutant("py99"), None);
        assert_eq!(Subject::of_mutant("reference"), None);
        assert_eq!(Subject::Python.language(), Language::Python);
        assert_eq!(Subject::Rust.language(), Language::Rust);
        let own = Subject::Own(Implementation::Python {
            file: "store.py".into(),
        });
        assert_eq!(own.language(), Language::Python);
        let command = Subject::Own(Implementation::Command {
            line: "python3 store.py".into(),
        });
        assert_eq!(command.language(), Language::Rust);
    }

    #[test]
    fn a_subject_is_named_as_impl_takes_it() {
        assert_eq!(Subject::parse("rust"), Ok(Subject::Rust));
        assert_eq!(Subject::parse(" python "), Ok(Subject::Python));
        let program = Subject::parse("python3 my_store.py").unwrap();
        assert_eq!(program.name(), "python3 my_store.py");
        assert_eq!(program.describe(), "python3 my_store.py");
        assert_eq!(Subject::Python.describe(), "the lab's python store");
        assert_eq!(Subject::Rust.source(), "rust");
        assert!(Subject::parse("").is_err());
        assert_eq!(program.exercise_store(), Subject::Rust);
        assert_eq!(Subject::Python.exercise_store(), Subject::Python);
        let python_file = Subject::Own(Implementation::Python {
            file: "store.py".into(),
        });
        assert_eq!(python_file.exercise_store(), Subject::Python);
        assert_eq!(python_file.source(), "store.py");
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
            .replace("src/store.py", crate::mutant::MUTABLE_FILE);
        let error = python_mutant("py01-x.toml", &text).unwrap_err();
        assert!(error.reason.contains("not src/store.py"), "{error}");
    }
}
