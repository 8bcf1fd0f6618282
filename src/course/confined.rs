//! A check whose programs run in sandboxes ([`crate::sandbox`]): the lab
//! checks as the instructor, outside, in its room
//! ([`crate::sandbox::room`]); the submission is copied into the room
//! without following a link ([`super::submission`]), built there in a
//! sandbox when it is a Rust project (from a copy of the starter's
//! dependencies, prebuilt outside), and run there in a sandbox of its own,
//! which shares the room's folder with the lab: the tests' databases are
//! written by the program and read by the lab.

use super::submission;
use crate::sandbox::room::Room;
use crate::sandbox::{self, Limits, Sandbox};
use crate::subject::rust_project;
use crate::subject::Implementation;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The longest the copy of a submission into the room may take.
const COPY_LIMIT: Duration = Duration::from_secs(60);

/// A room ready for a check: the copy of the implementation to run, and
/// the folder of the tests' databases.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confined {
    /// The implementation as copied into the room.
    pub implementation: Implementation,
    /// Where the tests' databases go.
    pub scratch: PathBuf,
}

/// The room a check of a submission needs, in `folder` (the room's tmpfs,
/// of [`Limits::disk`] bytes): `own` copied into it, a Rust project's
/// dependencies copied beside it, and every program of this process
/// confined from now on to a sandbox that writes only the room.
///
/// Errors: a command line (which cannot be copied), a submission that
/// cannot be copied (a link, a FIFO, past a bound), or dependencies that
/// do not build; the message says why.
/// Its control group, where one is made, is named for `cgroup` when given
/// (see [`crate::sandbox::cgroup::remove_named`]).
pub fn prepare(
    folder: &Path,
    own: &Implementation,
    limits: Limits,
    cgroup: Option<&str>,
) -> Result<Confined, String> {
    let room = Room::make(folder).map_err(|error| {
        format!(
            "cannot make the check's room in {}: {error}",
            folder.display()
        )
    })?;
    let deadline = Instant::now() + COPY_LIMIT;
    let copy = |from: &Path| -> Result<PathBuf, String> {
        let to = room
            .code()
            .join(from.file_name().unwrap_or("submission".as_ref()));
        submission::copy(from, &to, deadline).map_err(|refused| refused.to_string())?;
        Ok(to)
    };
    let implementation = match own {
        Implementation::Python { file } => Implementation::Python { file: copy(file)? },
        Implementation::Rust { project } => {
            let copied = copy(project)?;
            let prebuilt = rust_project::prebuilt_dependencies(|folder| {
                eprintln!(
                    "lab: building the Rust starter's dependencies once, outside the sandbox, in {} (about a minute)...",
                    folder.display()
                );
            })
            .map_err(|failure| failure.message)?;
            // Where the project's build goes (its copy has no target/).
            rust_project::copy_prebuilt(&prebuilt, &copied.join("target")).map_err(|error| {
                format!("cannot copy the prebuilt dependencies into the room: {error}")
            })?;
            Implementation::Rust { project: copied }
        }
        Implementation::Command { line } => {
            return Err(format!(
                "{line:?} is a command line, which cannot be copied into a sandbox: give a .py file or a Rust project's folder, or pass --no-sandbox to run it as you"
            ))
        }
    };
    sandbox::confine(Sandbox::for_programs(
        vec![room.folder.clone()],
        limits,
        cgroup,
    ));
    Ok(Confined {
        implementation,
        scratch: room.databases(),
    })
}

/// The line a check says when its sandbox's control group killed a
/// process for its memory, for the row of a class's check to find (see
/// [`crate::sandbox::limit_met`]); `None` when it did not, or there is no
/// sandbox.
pub fn memory_line() -> Option<String> {
    let sandbox = sandbox::confined()?;
    sandbox.memory_met().then(|| {
        format!(
            "the sandbox killed a process of the program for its memory ({} for all its processes)",
            sandbox::size(sandbox.limits.memory)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_line_cannot_be_confined() {
        let folder = tempfile::tempdir().unwrap();
        let error = prepare(
            folder.path(),
            &Implementation::Command {
                line: "node store.js".into(),
            },
            Limits::default(),
            None,
        )
        .unwrap_err();
        assert!(error.contains("cannot be copied into a sandbox"), "{error}");
        assert!(sandbox::confined().is_none(), "nothing confined");
    }

    #[test]
    fn a_link_is_refused_before_anything_runs() {
        let folder = tempfile::tempdir().unwrap();
        let secret = folder.path().join("secret.py");
        std::fs::write(&secret, "x").unwrap();
        let link = folder.path().join("store.py");
        std::os::unix::fs::symlink(&secret, &link).unwrap();
        let room = folder.path().join("room");
        std::fs::create_dir(&room).unwrap();
        let error = prepare(
            &room,
            &Implementation::Python { file: link },
            Limits::default(),
            None,
        )
        .unwrap_err();
        assert!(
            error.contains("is a symbolic link, not followed"),
            "{error}"
        );
        assert!(sandbox::confined().is_none(), "nothing confined");
    }
}
