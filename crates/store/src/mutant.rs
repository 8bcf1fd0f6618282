//! Mutant files: one deliberately broken fragment of the store, as data.
//!
//! A mutant file in `mutants/` is TOML named `ID-slug.toml` (`04-claim-boundary.toml`)
//! and holds the fields of [`MutantSpec`]. The build step reads every such file
//! with this module and compiles the store with the fragment replaced; the lab
//! reads the same files to validate new ones and to run one's own. Both list
//! a folder of them ([`mutant_files`]) and read an id from a file name
//! ([`id_of_file_name`]) here, and only here. This module uses only `std`,
//! `serde` and `toml`, because the build script includes it too.

use serde::Deserialize;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// The mutant files of `folder`: its `*.toml` files, in name order.
///
/// Errors: the folder cannot be listed (a missing folder among them).
pub fn mutant_files(folder: &Path) -> io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(folder)? {
        let path = entry?.path();
        if path.extension().is_some_and(|ext| ext == "toml") && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// The id a mutant file's name gives (`04` for `04-claim-boundary.toml`,
/// `o04a` for `o04a.toml`); `None` for a name that is not `*.toml`.
pub fn id_of_file_name(file_name: &str) -> Option<&str> {
    let stem = file_name.strip_suffix(".toml")?;
    stem.split('-').next()
}

/// Why a mutant exists, which decides where the lab shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MutantKind {
    /// One of the worksheet's broken fragments: the student's eight-step tour.
    Worksheet,
    /// A mutant that checks the suite covers every condition of the store's SQL.
    Hardening,
    /// A mutant modelled on the published design of a real queue, whose
    /// source its explanation names.
    Field,
    /// A mutant written by a student or an instructor.
    Own,
}

impl MutantKind {
    /// Every kind, in the order the lab shows them.
    pub const ALL: [MutantKind; 4] = [
        MutantKind::Worksheet,
        MutantKind::Hardening,
        MutantKind::Field,
        MutantKind::Own,
    ];

    /// The kind of this name ([`MutantKind::name`]).
    pub fn named(name: &str) -> Option<MutantKind> {
        MutantKind::ALL.into_iter().find(|kind| kind.name() == name)
    }

    /// The kind's name as written in mutant files.
    pub fn name(self) -> &'static str {
        match self {
            MutantKind::Worksheet => "worksheet",
            MutantKind::Hardening => "hardening",
            MutantKind::Field => "field",
            MutantKind::Own => "own",
        }
    }
}

/// The contents of one mutant file.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MutantSpec {
    /// Short id, the file name's part before the first `-` (`04`, `08b`, `h05a`).
    pub id: String,
    /// The worksheet step (1 to 8) whose contract the mutant breaks.
    pub step: u8,
    /// One line saying what the broken code does.
    pub title: String,
    /// Whether it is a worksheet, hardening, field or own mutant.
    pub kind: MutantKind,
    /// The source file it changes, relative to the crate root.
    pub file: String,
    /// The exact text replaced; it must occur exactly once in `file`.
    pub fragment: String,
    /// The text put in its place.
    pub replacement: String,
    /// Why the change breaks the contract, shown after the run.
    pub explanation: String,
    /// The worksheet's own wording of the fragment, for worksheet mutants.
    #[serde(default)]
    pub worksheet: Option<String>,
    /// The `lab demo` story that shows where this mutant breaks, when it
    /// is not the worksheet's ([`DemoStory::Takeover`]).
    #[serde(default)]
    pub story: Option<DemoStory>,
}

/// A story `lab demo` tells, as a mutant file's `story` names it.
///
/// Each is a different order of the same two workers' calls, because a
/// mutant may break only in some orders (a completion guarded by the
/// job's state alone is refused once the job is done, so it shows only
/// when the stale worker comes back first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DemoStory {
    /// The worksheet's: A stalls, B takes over and completes, then A's
    /// late completion.
    Takeover,
    /// A stalls, B takes over, and A comes back while B is still working:
    /// A's late completion, then B's.
    StaleFirst,
    /// A claims and releases the job, every worker restarts (and runs
    /// `init_db` on the existing file), then B claims.
    Restart,
}

impl DemoStory {
    /// Every story, in the order the lab lists them.
    pub const ALL: [DemoStory; 3] = [
        DemoStory::Takeover,
        DemoStory::StaleFirst,
        DemoStory::Restart,
    ];

    /// The story's name as written in mutant files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            DemoStory::Takeover => "takeover",
            DemoStory::StaleFirst => "stale-first",
            DemoStory::Restart => "restart",
        }
    }
}

/// The Rust reference store, which the build compiles each of its mutants from.
pub const MUTABLE_FILE: &str = "crates/store/src/store.rs";

/// The Python reference store, whose mutants are applied when they run.
pub const PYTHON_STORE: &str = "src/store.py";

/// The Rust reference store on PostgreSQL, which the build compiles each of
/// its mutants from, as it does the file store's.
pub const POSTGRES_STORE: &str = "crates/store/src/store_postgres.rs";

/// The files a mutant may change: the three reference implementations.
pub const MUTABLE_FILES: [&str; 3] = [MUTABLE_FILE, PYTHON_STORE, POSTGRES_STORE];

/// Where the Rust stores were before they moved into a crate of their own,
/// each with its place now: a mutant file written then (a student's, an
/// instructor's) still names them so, and is read as naming them.
pub const FORMER_PLACES: [(&str, &str); 2] = [
    ("src/store.rs", MUTABLE_FILE),
    ("src/store_postgres.rs", POSTGRES_STORE),
];

/// Why a mutant file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    /// The mutant file's name.
    pub file_name: String,
    /// What is wrong and what to do.
    pub reason: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "mutant {}: {}", self.file_name, self.reason)
    }
}

impl std::error::Error for SpecError {}

impl MutantSpec {
    /// Reads a mutant file's text and checks the fields that need no source:
    /// the name is `ID-slug.toml` with the file's `id`, the step is 1 to 8,
    /// the file is one of [`MUTABLE_FILES`], and the replacement differs from the fragment.
    pub fn parse(file_name: &str, text: &str) -> Result<MutantSpec, SpecError> {
        let error = |reason: String| SpecError {
            file_name: file_name.to_string(),
            reason,
        };
        let mut spec: MutantSpec =
            toml::from_str(text).map_err(|e| error(format!("is not a valid mutant file: {e}")))?;
        if let Some((_, now)) = FORMER_PLACES.iter().find(|(then, _)| *then == spec.file) {
            spec.file = (*now).to_string();
        }
        let prefix =
            id_of_file_name(file_name).ok_or_else(|| error("must be named ID-slug.toml".into()))?;
        if prefix != spec.id {
            return Err(error(format!(
                "its id is {:?} but its name starts with {:?}; name the file {}-slug.toml or change the id",
                spec.id, prefix, spec.id
            )));
        }
        if spec.id.is_empty()
            || !spec
                .id
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        {
            return Err(error(format!(
                "id {:?} must be lowercase letters and digits only (it becomes the feature mutant-{})",
                spec.id, spec.id
            )));
        }
        if !(1..=8).contains(&spec.step) {
            return Err(error(format!(
                "step is {}, but the worksheet has steps 1 to 8",
                spec.step
            )));
        }
        if !MUTABLE_FILES.contains(&spec.file.as_str()) {
            return Err(error(format!(
                "changes {:?}, but only {} (the reference stores) can be mutated",
                spec.file,
                MUTABLE_FILES.join(", ")
            )));
        }
        if spec.fragment == spec.replacement {
            return Err(error(
                "its replacement is the same as its fragment: it would change nothing".into(),
            ));
        }
        Ok(spec)
    }

    /// The source with the fragment replaced, or why that cannot be done.
    ///
    /// The fragment must occur exactly once, so that the change is the one
    /// the mutant's author meant.
    pub fn apply(&self, file_name: &str, source: &str) -> Result<String, SpecError> {
        let count = source.matches(self.fragment.as_str()).count();
        if count != 1 {
            let how = if count == 0 {
                "does not occur".to_string()
            } else {
                format!("occurs {count} times")
            };
            return Err(SpecError {
                file_name: file_name.to_string(),
                reason: format!(
                    "its fragment {how} in {}; it must occur exactly once (copy it from the file, with its spacing, and add context until it is unique)",
                    self.file
                ),
            });
        }
        Ok(source.replacen(self.fragment.as_str(), &self.replacement, 1))
    }

    /// The cargo feature that makes the library's store this mutant.
    pub fn feature(&self) -> String {
        format!("mutant-{}", self.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each kind is found by the name mutant files give it, and no other.
    #[test]
    fn each_kind_is_named_as_its_files_name_it() {
        for kind in MutantKind::ALL {
            assert_eq!(MutantKind::named(kind.name()), Some(kind));
        }
        assert_eq!(MutantKind::named("Worksheet"), None);
    }

    /// The reference store's source, which mutants apply to.
    const REFERENCE_SOURCE: &str = include_str!("store.rs");

    const VALID: &str = r#"
    id = "x1"
    step = 4
    kind = "own"
    title = "a test mutant"
    file = "crates/store/src/store.rs"
    fragment = "if done || held_until > now {"
    replacement = "if done || held_until >= now {"
    explanation = "why"
    "#;

    #[test]
    fn a_valid_mutant_file_parses_and_applies_once() {
        let spec = MutantSpec::parse("x1-boundary.toml", VALID).unwrap();
        assert_eq!(
            (spec.id.as_str(), spec.step, spec.kind),
            ("x1", 4, MutantKind::Own)
        );
        assert_eq!(spec.feature(), "mutant-x1");
        assert_eq!(spec.story, None);
        let told = MutantSpec::parse("x1-a.toml", &format!("{VALID}\nstory = \"stale-first\""));
        assert_eq!(told.unwrap().story, Some(DemoStory::StaleFirst));
        let mutated = spec.apply("x1-boundary.toml", REFERENCE_SOURCE).unwrap();
        assert!(mutated.contains("held_until >= now"));
        assert_eq!(mutated.len(), REFERENCE_SOURCE.len() + 1);
    }

    /// A mutant file written when the stores were in the lab's src/
    /// names them there: it is read as naming their place now.
    #[test]
    fn a_mutant_file_naming_a_store_s_former_place_names_it_now() {
        for (then, now) in FORMER_PLACES {
            let written = VALID.replace(MUTABLE_FILE, then);
            let spec = MutantSpec::parse("x1-boundary.toml", &written).unwrap();
            assert_eq!(spec.file, now);
        }
        let elsewhere = VALID.replace(MUTABLE_FILE, "src/stores.rs");
        assert!(MutantSpec::parse("x1-boundary.toml", &elsewhere).is_err());
    }

    #[test]
    fn mutant_files_with_mistakes_are_refused_with_the_reason() {
        let cases = [
            (
                "x1-a.toml",
                VALID.replace("step = 4", "step = 9"),
                "steps 1 to 8",
            ),
            (
                "x1-a.toml",
                VALID.replace("step = 4", "step = 0"),
                "steps 1 to 8",
            ),
            ("x2-a.toml", VALID.to_string(), "name the file x1-slug.toml"),
            ("x1-a.txt", VALID.to_string(), "must be named ID-slug.toml"),
            (
                "X1-a.toml",
                VALID.replace("\"x1\"", "\"X1\""),
                "lowercase letters and digits",
            ),
            (
                "x1-a.toml",
                VALID.replace("crates/store/src/store.rs", "src/main.rs"),
                "only crates/store/src/store.rs, src/store.py, crates/store/src/store_postgres.rs",
            ),
            (
                "x1-a.toml",
                VALID.replace(">= now {\"", "> now {\""),
                "would change nothing",
            ),
            (
                "x1-a.toml",
                VALID.replace("kind = \"own\"", "kind = \"other\""),
                "not a valid mutant file",
            ),
            (
                "x1-a.toml",
                format!("{VALID}\nextra = 1"),
                "not a valid mutant file",
            ),
            (
                "x1-a.toml",
                format!("{VALID}\nstory = \"sad\""),
                "`takeover`, `stale-first`, `restart`",
            ),
        ];
        for (name, text, reason) in cases {
            let error = MutantSpec::parse(name, &text).expect_err(name);
            assert_eq!(error.file_name, name);
            assert!(error.to_string().contains(reason), "{name}: {error}");
            assert!(
                error.to_string().starts_with(&format!("mutant {name}: ")),
                "{error}"
            );
        }
    }

    #[test]
    fn a_fragment_must_occur_exactly_once() {
        let missing = MutantSpec::parse(
            "x1-a.toml",
            &VALID.replace("held_until > now {", "no such text {"),
        )
        .unwrap();
        let error = missing.apply("x1-a.toml", REFERENCE_SOURCE).unwrap_err();
        assert!(error.reason.contains("does not occur"), "{error}");
        let twice = MutantSpec::parse(
            "x1-a.toml",
            &VALID.replace("if done || held_until > now {", "Ok("),
        )
        .unwrap();
        let error = twice.apply("x1-a.toml", REFERENCE_SOURCE).unwrap_err();
        assert!(
            error.reason.contains("occurs ") && error.reason.contains(" times"),
            "{error}"
        );
    }

    #[test]
    fn a_folder_lists_its_toml_files_by_name_and_each_name_gives_an_id() {
        let folder = tempfile::tempdir().unwrap();
        for name in ["b-two.toml", "a.toml", "notes.txt", "toml"] {
            std::fs::write(folder.path().join(name), "").unwrap();
        }
        std::fs::create_dir(folder.path().join("c.toml")).unwrap();
        assert_eq!(
            mutant_files(folder.path()).unwrap(),
            [
                folder.path().join("a.toml"),
                folder.path().join("b-two.toml")
            ]
        );
        assert!(mutant_files(&folder.path().join("missing")).is_err());
        assert_eq!(id_of_file_name("04-claim-boundary.toml"), Some("04"));
        assert_eq!(id_of_file_name("o04a.toml"), Some("o04a"));
        assert_eq!(id_of_file_name("o04a-own.txt"), None);
    }
}
