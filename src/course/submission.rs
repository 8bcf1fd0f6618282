//! A submission as found in a class's folder, read without trusting it:
//! what kind of entry it is, and a copy of it that never follows a
//! symbolic link and never opens a FIFO, a device or a socket (opening a
//! FIFO would wait for a writer for ever; a link could name any file of
//! the machine, another student's included). The copy is bounded in size
//! and in time, so that it fits within a check's own time limit.

use std::fs;
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The most a submission's files may hold in all, copied.
pub const MOST_BYTES: u64 = 64 << 20;

/// The most files and folders a submission may hold.
pub const MOST_ENTRIES: usize = 10_000;

/// What an entry of a class's folder is, read without following it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A folder.
    Folder,
    /// A symbolic link.
    Link,
    /// A named pipe.
    Fifo,
    /// A socket file.
    Socket,
    /// A device file.
    Device,
}

impl EntryKind {
    /// The kind of the entry at `path`, itself (a link is a link).
    ///
    /// Errors: it cannot be read.
    pub fn of(path: &Path) -> io::Result<EntryKind> {
        let kind = fs::symlink_metadata(path)?.file_type();
        Ok(if kind.is_symlink() {
            EntryKind::Link
        } else if kind.is_dir() {
            EntryKind::Folder
        } else if kind.is_fifo() {
            EntryKind::Fifo
        } else if kind.is_socket() {
            EntryKind::Socket
        } else if kind.is_block_device() || kind.is_char_device() {
            EntryKind::Device
        } else {
            EntryKind::File
        })
    }

    /// What it is, in words, for an entry that is not checked.
    pub fn refusal(self) -> Option<&'static str> {
        match self {
            EntryKind::File | EntryKind::Folder => None,
            EntryKind::Link => {
                Some("a symbolic link, not followed: submit the file or the folder itself")
            }
            EntryKind::Fifo => Some("a named pipe (FIFO), not opened: submit a file"),
            EntryKind::Socket => Some("a socket, not opened: submit a file"),
            EntryKind::Device => Some("a device file, not opened: submit a file"),
        }
    }
}

/// Why a submission was not copied: the entry inside that is not a file
/// or a folder, or a bound it passed. The message names it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct CopyRefused(pub String);

/// Copies the submission at `from` (a file, or a folder without a Rust
/// build's `target/`) to `to`, which must not exist, before `deadline`:
/// links, FIFOs, sockets and devices are never followed nor opened, and
/// the copy stops at [`MOST_BYTES`] and [`MOST_ENTRIES`].
///
/// Errors: an entry that is not a file or a folder (named, with what it
/// is), a bound passed, the deadline passed, or a file that cannot be read
/// or written.
pub fn copy(from: &Path, to: &Path, deadline: Instant) -> Result<(), CopyRefused> {
    let mut budget = Budget {
        bytes: MOST_BYTES,
        entries: MOST_ENTRIES,
        deadline,
    };
    copy_entry(from, from, to, &mut budget)
}

/// What is left of a copy's bounds.
struct Budget {
    bytes: u64,
    entries: usize,
    deadline: Instant,
}

fn copy_entry(root: &Path, from: &Path, to: &Path, budget: &mut Budget) -> Result<(), CopyRefused> {
    let shown = || {
        let inside = from.strip_prefix(root).unwrap_or(from);
        if inside.as_os_str().is_empty() {
            from.display().to_string()
        } else {
            inside.display().to_string()
        }
    };
    let failed = |what: &str, error: io::Error| CopyRefused(format!("{what} {}: {error}", shown()));
    if Instant::now() > budget.deadline {
        return Err(CopyRefused(
            "the copy of the submission ran past the time limit".into(),
        ));
    }
    budget.entries = budget.entries.checked_sub(1).ok_or_else(|| {
        CopyRefused(format!(
            "the submission holds more than {MOST_ENTRIES} files and folders"
        ))
    })?;
    let kind = EntryKind::of(from).map_err(|error| failed("cannot read", error))?;
    match kind {
        EntryKind::Folder => {
            fs::create_dir(to).map_err(|error| failed("cannot copy the folder", error))?;
            let mut items: Vec<_> = fs::read_dir(from)
                .map_err(|error| failed("cannot read the folder", error))?
                .collect::<Result<_, _>>()
                .map_err(|error| failed("cannot read the folder", error))?;
            items.sort_by_key(fs::DirEntry::file_name);
            for item in items {
                // A Rust build's folder: made again by the build.
                if item.file_name() == "target" && from == root {
                    continue;
                }
                copy_entry(root, &item.path(), &to.join(item.file_name()), budget)?;
            }
            Ok(())
        }
        EntryKind::File => copy_file(from, to, budget).map_err(|error| match error {
            Copied::Io(error) => failed("cannot copy", error),
            Copied::Refused(refused) => refused,
        }),
        other => Err(CopyRefused(format!(
            "{} is {}",
            shown(),
            other.refusal().unwrap_or("not a file")
        ))),
    }
}

/// How a file's copy failed.
enum Copied {
    Io(io::Error),
    Refused(CopyRefused),
}

impl From<io::Error> for Copied {
    fn from(error: io::Error) -> Copied {
        Copied::Io(error)
    }
}

/// Copies one regular file, opened without following a link and without
/// waiting (a FIFO put in its place since it was looked at is refused by
/// its kind once open), keeping its mode's execute bits.
fn copy_file(from: &Path, to: &Path, budget: &mut Budget) -> Result<(), Copied> {
    let source = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(from)?;
    let meta = source.metadata()?;
    if !meta.file_type().is_file() {
        return Err(Copied::Refused(CopyRefused(format!(
            "{} changed into something that is not a file while it was copied",
            from.display()
        ))));
    }
    let mode = std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o755;
    let mut target = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode | 0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(to)?;
    let mut reader = source.take(budget.bytes + 1);
    let mut buffer = vec![0u8; 64 << 10];
    loop {
        let read = reader.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        let read_bytes = read as u64;
        if read_bytes > budget.bytes {
            return Err(Copied::Refused(CopyRefused(format!(
                "the submission holds more than {} MiB",
                MOST_BYTES >> 20
            ))));
        }
        budget.bytes -= read_bytes;
        target.write_all(&buffer[..read])?;
        if Instant::now() > budget.deadline {
            return Err(Copied::Refused(CopyRefused(
                "the copy of the submission ran past the time limit".into(),
            )));
        }
    }
    Ok(())
}

/// The entries of a class's folder `dir`, in name order, hidden ones
/// included (each gets a row), each with its kind read without following
/// it.
///
/// Errors: the folder cannot be read.
pub fn entries(dir: &Path) -> io::Result<Vec<(PathBuf, io::Result<EntryKind>)>> {
    let mut found: Vec<PathBuf> = fs::read_dir(dir)?
        .map(|entry| entry.map(|entry| entry.path()))
        .collect::<Result<_, _>>()?;
    found.sort();
    Ok(found
        .into_iter()
        .map(|path| {
            let kind = EntryKind::of(&path);
            (path, kind)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn later() -> Instant {
        Instant::now() + Duration::from_secs(30)
    }

    fn fifo(path: &Path) {
        let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo(3) reads the string, which lives for the call.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o644) }, 0);
    }

    #[test]
    fn a_project_is_copied_without_its_build_and_with_its_modes() {
        let folder = tempfile::tempdir().unwrap();
        let project = folder.path().join("ada");
        fs::create_dir_all(project.join("src")).unwrap();
        fs::create_dir_all(project.join("target/debug")).unwrap();
        fs::write(project.join("Cargo.toml"), "[package]").unwrap();
        fs::write(project.join("src/store.rs"), "// mine").unwrap();
        fs::write(project.join("target/debug/big"), "built").unwrap();
        fs::write(project.join("run.sh"), "#!/bin/sh").unwrap();
        let mut mode = fs::metadata(project.join("run.sh")).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut mode, 0o755);
        fs::set_permissions(project.join("run.sh"), mode).unwrap();
        let copy_to = folder.path().join("copy");
        copy(&project, &copy_to, later()).unwrap();
        assert_eq!(
            fs::read_to_string(copy_to.join("src/store.rs")).unwrap(),
            "// mine"
        );
        assert!(!copy_to.join("target").exists(), "no build copied");
        let copied = fs::metadata(copy_to.join("run.sh")).unwrap().permissions();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&copied) & 0o777,
            0o755
        );
    }

    #[test]
    fn links_fifos_and_sockets_are_named_and_never_followed_or_opened() {
        let folder = tempfile::tempdir().unwrap();
        let secret = folder.path().join("secret.txt");
        fs::write(&secret, "another student's work").unwrap();
        let project = folder.path().join("bob");
        fs::create_dir_all(project.join("src")).unwrap();
        std::os::unix::fs::symlink(&secret, project.join("src/store.rs")).unwrap();
        let error = copy(&project, &folder.path().join("c1"), later()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "src/store.rs is a symbolic link, not followed: submit the file or the folder itself"
        );
        // A FIFO would block an open for ever: it is named at once.
        let piped = folder.path().join("carol");
        fs::create_dir(&piped).unwrap();
        fifo(&piped.join("store.py"));
        let started = Instant::now();
        let error = copy(&piped, &folder.path().join("c2"), later()).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(
            error.to_string(),
            "store.py is a named pipe (FIFO), not opened: submit a file"
        );
        let socket_path = folder.path().join("dan.py");
        let _socket = std::os::unix::net::UnixListener::bind(&socket_path).unwrap();
        assert_eq!(EntryKind::of(&socket_path).unwrap(), EntryKind::Socket);
        assert_eq!(EntryKind::of(&secret).unwrap(), EntryKind::File);
        let link = folder.path().join("eve.py");
        std::os::unix::fs::symlink(&secret, &link).unwrap();
        assert_eq!(EntryKind::of(&link).unwrap(), EntryKind::Link);
        let error = copy(&link, &folder.path().join("c3"), later()).unwrap_err();
        assert!(error.to_string().contains("is a symbolic link"), "{error}");
        assert!(!folder.path().join("c3").exists());
        assert_eq!(
            EntryKind::of(Path::new("/dev/null")).unwrap(),
            EntryKind::Device
        );
    }

    #[test]
    fn a_copy_stops_at_its_bounds_and_its_deadline() {
        let folder = tempfile::tempdir().unwrap();
        let big = folder.path().join("big.py");
        let file = fs::File::create(&big).unwrap();
        file.set_len(MOST_BYTES + 1).unwrap();
        let error = copy(&big, &folder.path().join("c1"), later()).unwrap_err();
        assert_eq!(error.to_string(), "the submission holds more than 64 MiB");
        let small = folder.path().join("small.py");
        fs::write(&small, "x").unwrap();
        let error = copy(&small, &folder.path().join("c2"), Instant::now()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the copy of the submission ran past the time limit"
        );
    }

    #[test]
    fn every_entry_is_listed_with_its_kind_hidden_ones_too() {
        let folder = tempfile::tempdir().unwrap();
        fs::write(folder.path().join("b.py"), "").unwrap();
        fs::write(folder.path().join(".sneaky.py"), "").unwrap();
        fs::create_dir(folder.path().join("a")).unwrap();
        std::os::unix::fs::symlink("b.py", folder.path().join("c.py")).unwrap();
        let found: Vec<(String, EntryKind)> = entries(folder.path())
            .unwrap()
            .into_iter()
            .map(|(path, kind)| {
                (
                    path.file_name().unwrap().to_string_lossy().into_owned(),
                    kind.unwrap(),
                )
            })
            .collect();
        assert_eq!(
            found,
            [
                (".sneaky.py".to_string(), EntryKind::File),
                ("a".to_string(), EntryKind::Folder),
                ("b.py".to_string(), EntryKind::File),
                ("c.py".to_string(), EntryKind::Link),
            ]
        );
    }
}
