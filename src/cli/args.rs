//! What several commands take: an exercise or a variant by name, and how
//! a suite run is carried out.

use super::outcome::CliError;
use super::own_variants;
use super::rust_project;
use lease_lab::exercise::{self, Exercise};
use lease_lab::external::ImplCommand;
use lease_lab::family::{self, Family};
use lease_lab::runner::{self, RunOptions, WorkerCommand};
use lease_lab::variant::{Variant, REFERENCE_ID};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The exercise named on the command line, or a usage error listing them.
pub fn find_exercise(key: &str) -> Result<Exercise, CliError> {
    exercise::find(key).ok_or_else(|| {
        CliError::Usage(format!(
            "no exercise {key:?}; the exercises are: {}",
            exercise::keys()
        ))
    })
}

/// A student's own implementation, as `--impl` names it and the progress
/// file records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Implementation {
    /// One Python file, run with `python3`.
    Python {
        /// The file, as an absolute path.
        file: PathBuf,
    },
    /// A cargo project, built (`cargo build`) before every run.
    Rust {
        /// The project's folder (holding `Cargo.toml`), as an absolute path.
        project: PathBuf,
    },
    /// Any program that speaks the lab's protocol.
    Command {
        /// Its command line, as typed.
        line: String,
    },
}

impl Implementation {
    /// What `--impl` names when it is not `rust` or `python`: a folder
    /// holding `Cargo.toml` is a Rust project, an existing `.py` file a
    /// Python store, and anything else a command line.
    ///
    /// Errors: an empty command line, unbalanced quotes, or a folder
    /// without `Cargo.toml`.
    pub fn parse(text: &str) -> Result<Implementation, String> {
        let path = Path::new(text.trim());
        if path.is_dir() {
            if !path.join("Cargo.toml").is_file() {
                return Err(format!(
                    "{} is a folder without Cargo.toml: name a Rust project (lab new --lang rust DIR makes one), a .py file, or a command line",
                    path.display()
                ));
            }
            return Ok(Implementation::Rust {
                project: absolute(path),
            });
        }
        if path.is_file() && path.extension().is_some_and(|ext| ext == "py") {
            return Ok(Implementation::Python {
                file: absolute(path),
            });
        }
        ImplCommand::parse(text).map(|_| Implementation::Command {
            line: text.trim().to_string(),
        })
    }

    /// How it is named in messages: the file, the project or the command.
    pub fn describe(&self) -> String {
        match self {
            Implementation::Python { file } => format!("python3 {}", file.display()),
            Implementation::Rust { project } => format!("the Rust project {}", project.display()),
            Implementation::Command { line } => line.clone(),
        }
    }

    /// Where its operations are written: the Python file, the project's
    /// `src/store.rs`, or the command line.
    pub fn source(&self) -> String {
        match self {
            Implementation::Python { file } => file.display().to_string(),
            Implementation::Rust { project } => {
                project.join("src").join("store.rs").display().to_string()
            }
            Implementation::Command { line } => line.clone(),
        }
    }

    /// The files whose change calls for a new check (`lab watch`): the
    /// Python file; the project's `Cargo.toml` and `src/`; the files and
    /// folders a command line names.
    pub fn watched(&self) -> Vec<PathBuf> {
        match self {
            Implementation::Python { file } => vec![file.clone()],
            Implementation::Rust { project } => {
                vec![project.join("Cargo.toml"), project.join("src")]
            }
            Implementation::Command { line } => shell_words::split(line)
                .unwrap_or_default()
                .iter()
                .skip(1)
                .map(PathBuf::from)
                .filter(|path| path.exists())
                .map(|path| absolute(&path))
                .collect(),
        }
    }

    /// The command that runs it; a Rust project is built first, saying so
    /// on standard error (the build's errors are the failure's message).
    pub fn command(&self) -> Result<ImplCommand, CliError> {
        match self {
            Implementation::Python { file } => Ok(family::python_command(file)),
            Implementation::Rust { project } => {
                eprintln!(
                    "lab: building {} (cargo build; the first build compiles SQLite, about a minute)...",
                    project.display()
                );
                let program = rust_project::build(project, None)
                    .map_err(|failure| CliError::Failed(failure.to_string()))?;
                Ok(ImplCommand {
                    argv: vec![program.display().to_string()],
                    dir: Some(project.clone()),
                })
            }
            Implementation::Command { line } => ImplCommand::parse(line).map_err(CliError::Usage),
        }
    }

    /// The implementation as a variant of its own, reported as `yours`.
    pub fn variant(&self) -> Result<Variant, CliError> {
        Ok(Variant::program(family::PROGRAM_ID, self.command()?))
    }
}

/// `path` made absolute against the current folder (kept as it is if the
/// current folder cannot be read).
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Which implementations a command is about.
#[derive(Debug, Clone, clap::Args)]
pub struct ImplArgs {
    /// `rust` (the built-in store and its mutants), `python` (the worksheet's
    /// Python store and its mutants), or your own implementation: a .py
    /// file, a Rust project's folder, or a command line
    /// (`"python3 my_store.py"`; see labs/protocol.md).
    #[arg(long = "impl", value_name = "IMPL", default_value = "rust")]
    pub implementation: String,
    /// The folder of your own mutant files: those that are not compiled
    /// into lab run beside the built-in ones.
    #[arg(long, value_name = "DIR", default_value = "mutants")]
    pub mutants: PathBuf,
}

impl ImplArgs {
    /// The family `--impl` names; your own implementation is prepared
    /// (a Rust project built) to run.
    pub fn family(&self) -> Result<Family, CliError> {
        match self.implementation.trim() {
            "rust" => Ok(Family::Rust),
            "python" => Ok(Family::Python),
            text => {
                let own = Implementation::parse(text).map_err(CliError::Usage)?;
                Ok(Family::Program(own.command()?))
            }
        }
    }

    /// Its implementations: the reference (or the program) first, then the
    /// mutants, built-in ones and then those of [`ImplArgs::mutants`].
    pub fn variants(&self) -> Result<Vec<Variant>, CliError> {
        let family = self.family()?;
        let mut variants = family.variants().map_err(|error| {
            CliError::Failed(format!(
                "cannot prepare the {} implementations: {error}",
                family.name()
            ))
        })?;
        own_variants::add_own_variants(&mut variants, &family, &self.mutants)?;
        Ok(variants)
    }

    /// The implementation of the family with this id (`reference` and
    /// `correct` name the reference; a program is `yours` or `reference`).
    pub fn variant(&self, id: &str) -> Result<Variant, CliError> {
        let wanted = if id == "correct" { REFERENCE_ID } else { id };
        let variants = self.variants()?;
        let found = variants.iter().position(|variant| {
            variant.id == wanted || (wanted == REFERENCE_ID && variant.is_reference())
        });
        match found {
            Some(index) => Ok(variants.into_iter().nth(index).expect("found")),
            None => {
                let ids: Vec<&str> = variants.iter().map(|variant| variant.id.as_str()).collect();
                Err(CliError::Usage(format!(
                    "no variant {id:?} for --impl {}; the variants are: {}",
                    self.implementation,
                    ids.join(", ")
                )))
            }
        }
    }
}

/// How to start the workers that run variants: this very binary.
pub fn worker_command() -> Result<WorkerCommand, CliError> {
    WorkerCommand::current_lab().map_err(|error| {
        CliError::Failed(format!(
            "cannot find the lab binary to start workers: {error}"
        ))
    })
}

/// How a suite run is carried out, as every command that runs one takes it.
#[derive(Debug, Clone, clap::Args)]
pub struct SuiteArgs {
    /// The longest one test may run, in milliseconds, before it counts as a timeout.
    #[arg(long, default_value_t = millis(runner::DEFAULT_TIMEOUT))]
    pub timeout_ms: u64,
    /// How many variants to run at once (default: four per core, since many
    /// tests wait for a lock while others work).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Where to put the tests' temporary databases.
    #[arg(long)]
    pub scratch: Option<PathBuf>,
}

/// A duration in whole milliseconds, for a default value.
pub fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

impl SuiteArgs {
    /// The run's options.
    pub fn options(&self) -> RunOptions {
        let defaults = RunOptions::default();
        RunOptions {
            timeout: Duration::from_millis(self.timeout_ms),
            scratch: self.scratch.clone().unwrap_or(defaults.scratch),
            jobs: self.jobs.unwrap_or(defaults.jobs).max(1),
            give_up_after_timeouts: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_is_found_by_its_old_name_too() {
        let rust = ImplArgs {
            implementation: "rust".into(),
            mutants: PathBuf::from("/no/such/folder"),
        };
        assert_eq!(rust.variant("correct").unwrap().id, "reference");
        let error = rust.variant("99").unwrap_err();
        assert!(
            error
                .to_string()
                .contains("the variants are: reference, 01"),
            "{error}"
        );
        assert_eq!(error.exit_code(), 2);
        assert!(find_exercise("9")
            .unwrap_err()
            .to_string()
            .contains("1, 2, 3"));
    }

    /// `--timeout-ms`, `--jobs` (at least one) and `--scratch` make the
    /// run's options; what is not given is the default.
    #[test]
    fn suite_arguments_make_the_run_options() {
        let given = SuiteArgs {
            timeout_ms: 1234,
            jobs: Some(0),
            scratch: Some(PathBuf::from("/scratch/here")),
        };
        let options = given.options();
        assert_eq!(options.timeout, Duration::from_millis(1234));
        assert_eq!(options.jobs, 1);
        assert_eq!(options.scratch, PathBuf::from("/scratch/here"));
        assert_eq!(options.give_up_after_timeouts, None);
        let defaults = RunOptions::default();
        let options = SuiteArgs {
            timeout_ms: millis(runner::DEFAULT_TIMEOUT),
            jobs: None,
            scratch: None,
        }
        .options();
        assert_eq!(options.timeout, defaults.timeout);
        assert_eq!(
            (options.jobs, options.scratch),
            (defaults.jobs, defaults.scratch)
        );
    }

    #[test]
    fn an_implementation_is_a_rust_project_a_python_file_or_a_command_line() {
        let folder = tempfile::tempdir().unwrap();
        let project = folder.path().join("mine-rs");
        std::fs::create_dir_all(project.join("src")).unwrap();
        let error = Implementation::parse(&project.display().to_string()).unwrap_err();
        assert!(error.contains("a folder without Cargo.toml"), "{error}");
        std::fs::write(project.join("Cargo.toml"), "").unwrap();
        let rust = Implementation::parse(&project.display().to_string()).unwrap();
        assert_eq!(
            rust,
            Implementation::Rust {
                project: project.clone()
            }
        );
        assert_eq!(
            rust.source(),
            project.join("src/store.rs").display().to_string()
        );
        assert_eq!(
            rust.watched(),
            [project.join("Cargo.toml"), project.join("src")]
        );
        assert!(rust.describe().starts_with("the Rust project "));

        let file = folder.path().join("store.py");
        std::fs::write(&file, "").unwrap();
        let python = Implementation::parse(&format!(" {} ", file.display())).unwrap();
        assert_eq!(python, Implementation::Python { file: file.clone() });
        assert_eq!(python.describe(), format!("python3 {}", file.display()));
        assert_eq!(python.source(), file.display().to_string());
        assert_eq!(python.watched(), std::slice::from_ref(&file));
        assert_eq!(
            python.command().unwrap().argv,
            ["python3".to_string(), file.display().to_string()]
        );

        let line = format!("node {} --fast", file.display());
        let command = Implementation::parse(&line).unwrap();
        assert_eq!(command, Implementation::Command { line: line.clone() });
        assert_eq!((command.describe(), command.source()), (line.clone(), line));
        assert_eq!(command.watched(), [file], "the files a command line names");
        assert_eq!(command.variant().unwrap().id, "yours");
        assert!(Implementation::parse("node 'open").is_err());

        // A Python store is an existing .py file: another file, or a .py
        // that is not there, is a command line.
        let text = folder.path().join("store.txt");
        std::fs::write(&text, "").unwrap();
        for line in [text.display().to_string(), "missing.py".to_string()] {
            let command = Implementation::parse(&line).unwrap();
            assert_eq!(command, Implementation::Command { line });
        }
    }
}
