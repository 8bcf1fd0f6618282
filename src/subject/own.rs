//! A program of the student's own that speaks the lab's protocol, as
//! `--impl` names it and the progress file records it: a Python file, a
//! cargo project, or any command line.

use super::rust_project;
use super::{SubjectError, PROGRAM_ID};
use crate::external::{ImplCommand, InvalidImpl};
use crate::variant::Variant;
use serde::{Deserialize, Serialize};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

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
    pub fn parse(text: &str) -> Result<Implementation, InvalidImpl> {
        let path = Path::new(text.trim());
        if path.is_dir() {
            if !path.join("Cargo.toml").is_file() {
                return Err(InvalidImpl(format!(
                    "{} is a folder without Cargo.toml: name a Rust project (lab new --lang rust DIR makes one), a .py file, or a command line",
                    path.display()
                )));
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

    /// How `--impl` names it: the file, the project's folder, or the
    /// command line (quoted for a shell).
    pub fn impl_arg(&self) -> String {
        let text = match self {
            Implementation::Python { file } => file.display().to_string(),
            Implementation::Rust { project } => project.display().to_string(),
            Implementation::Command { line } => line.clone(),
        };
        shell_words::quote(&text).into_owned()
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

    /// The command that runs it; a Rust project is built first, cargo
    /// showing its progress and the compiler's messages on standard error
    /// ([`rust_project::build_showing`]).
    pub fn command(&self) -> Result<ImplCommand, SubjectError> {
        match self {
            Implementation::Python { file } => Ok(super::python_command(file)),
            Implementation::Rust { project } => {
                let program = rust_project::build_showing(project)?;
                Ok(ImplCommand {
                    argv: vec![program.display().to_string()],
                    dir: Some(project.clone()),
                    env: Vec::new(),
                })
            }
            Implementation::Command { line } => {
                ImplCommand::parse(line).map_err(|error| SubjectError::Invalid(error.0))
            }
        }
    }

    /// The implementation as a variant of its own, reported as `yours`.
    pub fn variant(&self) -> Result<Variant, SubjectError> {
        Ok(Variant::program(PROGRAM_ID, self.command()?))
    }
}

/// `path` made absolute against the current folder (kept as it is if the
/// current folder cannot be read).
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Writes `text` to `path` unless it holds it already. Never overwrites a
/// file that differs: a student's work is not lost.
///
/// Errors: the file exists with other contents (`AlreadyExists`, saying
/// so), or it cannot be read or written.
pub fn write_once(path: &Path, text: &str) -> io::Result<()> {
    match fs::read_to_string(path) {
        Ok(existing) if existing == text => Ok(()),
        Ok(_) => Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "{} exists already: choose another folder, or move it aside",
                path.display()
            ),
        )),
        Err(error) if error.kind() == io::ErrorKind::NotFound => fs::write(path, text),
        Err(error) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_implementation_is_a_rust_project_a_python_file_or_a_command_line() {
        let folder = tempfile::tempdir().unwrap();
        let project = folder.path().join("mine-rs");
        std::fs::create_dir_all(project.join("src")).unwrap();
        let error = Implementation::parse(&project.display().to_string()).unwrap_err();
        assert!(error.0.contains("a folder without Cargo.toml"), "{error}");
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

    /// A starter is written where nothing is, written again over itself,
    /// and never over anything else, even a file that cannot be read as
    /// text: a student's work is not lost.
    #[test]
    fn a_starter_is_written_only_where_it_loses_nothing() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("store.py");
        write_once(&path, "starter").unwrap();
        write_once(&path, "starter").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "starter");
        fs::write(&path, "mine").unwrap();
        let error = write_once(&path, "starter").unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::AlreadyExists);
        assert!(error.to_string().contains("exists already"), "{error}");
        let bytes = [0xff, 0xfe, b'm', b'i', b'n', b'e'];
        fs::write(&path, bytes).unwrap();
        assert!(write_once(&path, "starter").is_err());
        assert_eq!(fs::read(&path).unwrap(), bytes);
    }
}
