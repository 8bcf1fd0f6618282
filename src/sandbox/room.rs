//! The judge's room: a check of a submission that runs its programs in
//! sandboxes runs itself (the lab, as the instructor, outside every
//! sandbox) in a mount namespace of its own, made by bubblewrap with
//! everything the instructor sees, where one folder is a tmpfs of a fixed
//! size. The submission's copy, its build and the tests' databases go
//! there, shared with its sandboxes, which bind it: so the submission's
//! disk is capped by the kernel, whatever user grades, and the folder goes
//! with the check, however it ends (the namespace ends with its last
//! process).

use super::{bubblewrap, SandboxError};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

/// The flag a check is given inside its room, with the room's folder.
pub const ROOM_FLAG: &str = "--room";

/// Runs `lab` with `args` and `--room FOLDER` in a room of `size` bytes,
/// in the foreground (its standard streams are this process's), and
/// answers how it ended. The folder, made empty in the system's temporary
/// folder, is removed after.
///
/// Errors: bubblewrap is not installed, or cannot be started.
pub fn run_in_room(size: u64, lab: &Path, args: &[OsString]) -> Result<ExitStatus, SandboxError> {
    let bwrap = bubblewrap()?;
    let folder = tempfile::Builder::new()
        .prefix("lease-lab-room-")
        .tempdir()
        .map_err(|error| SandboxError::Start {
            program: "a folder for the check's room".into(),
            error,
        })?;
    let mut command = Command::new(&bwrap);
    command.args(room_args(size, folder.path(), lab, args));
    let status = command.status().map_err(|error| SandboxError::Start {
        program: bwrap.display().to_string(),
        error,
    })?;
    Ok(status)
}

/// bubblewrap's arguments for a room at `folder` of `size` bytes, running
/// `lab args --room folder`: the whole file system as it is (devices
/// included), the folder a tmpfs of that size, and the room ending with
/// the process that made it.
fn room_args(size: u64, folder: &Path, lab: &Path, args: &[OsString]) -> Vec<OsString> {
    let mut words: Vec<OsString> = [
        "--dev-bind",
        "/",
        "/",
        "--die-with-parent",
        "--size",
        &size.to_string(),
        "--tmpfs",
    ]
    .iter()
    .map(OsString::from)
    .collect();
    words.push(folder.into());
    words.push("--".into());
    words.push(lab.into());
    words.extend(args.iter().cloned());
    words.push(ROOM_FLAG.into());
    words.push(folder.into());
    words
}

/// The folders of a room: the submission's copy (and a Rust project's
/// build, in the copy's `target/`), and the tests' databases.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Room {
    /// The room's folder.
    pub folder: PathBuf,
}

impl Room {
    /// Where the submission is copied.
    pub fn code(&self) -> PathBuf {
        self.folder.join("code")
    }

    /// Where the tests' databases go.
    pub fn databases(&self) -> PathBuf {
        self.folder.join("db")
    }

    /// Makes the room's folders.
    ///
    /// Errors: they cannot be made (the room is not a folder).
    pub fn make(folder: &Path) -> std::io::Result<Room> {
        let room = Room {
            folder: folder.to_path_buf(),
        };
        for dir in [room.code(), room.databases()] {
            std::fs::create_dir_all(dir)?;
        }
        Ok(room)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_room_is_the_whole_system_with_one_sized_folder_and_the_check_told_of_it() {
        let args = room_args(
            1 << 20,
            Path::new("/tmp/lease-lab-room-x"),
            Path::new("/usr/local/bin/lab"),
            &["check".into(), "--impl".into(), "a.py".into()],
        );
        let words: Vec<String> = args
            .iter()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            words,
            [
                "--dev-bind",
                "/",
                "/",
                "--die-with-parent",
                "--size",
                "1048576",
                "--tmpfs",
                "/tmp/lease-lab-room-x",
                "--",
                "/usr/local/bin/lab",
                "check",
                "--impl",
                "a.py",
                "--room",
                "/tmp/lease-lab-room-x"
            ]
        );
    }

    #[test]
    fn a_room_has_a_folder_for_the_code_and_the_databases() {
        let folder = tempfile::tempdir().unwrap();
        let room = Room::make(folder.path()).unwrap();
        for dir in [room.code(), room.databases()] {
            assert!(dir.is_dir() && dir.starts_with(folder.path()));
        }
    }
}
