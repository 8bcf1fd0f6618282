//! The bench's own reach into a test's files, which the implementation
//! under test shares with it and may have put anything into: a program
//! that may be hostile writes the same folder, and the lab (the judge,
//! running as the instructor) must never be led by it to another file.
//! So the bench never follows a symbolic link there: a database is opened
//! with SQLite's `SQLITE_OPEN_NOFOLLOW` (no link anywhere in its path; its
//! journal, log and index files are opened with `O_NOFOLLOW` by SQLite
//! itself) and read defensively (`SQLITE_DBCONFIG_DEFENSIVE`, an untrusted
//! schema, no memory mapping); any other file is opened with `O_NOFOLLOW`,
//! without waiting (a FIFO in its place is refused, not waited on), and
//! must be a regular file; its mode is changed through that handle, never
//! by path.

use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags};
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// A connection to the database at `path`, with `flags` and never through
/// a link, read defensively.
///
/// Errors: SQLite's (a link is `SQLITE_CANTOPEN`).
pub fn connect_with(path: &Path, flags: OpenFlags) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(path, flags | OpenFlags::SQLITE_OPEN_NOFOLLOW)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false)?;
    conn.pragma_update(None, "mmap_size", 0)?;
    Ok(conn)
}

/// A connection that may read, write and create the database at `path`
/// (as `Connection::open`), never through a link.
///
/// Errors: SQLite's.
pub fn connect(path: &Path) -> rusqlite::Result<Connection> {
    connect_with(path, OpenFlags::default())
}

/// `path` opened with `options`, never through a link and without
/// waiting, and only if it is a regular file.
fn open(path: &Path, options: &mut OpenOptions) -> io::Result<File> {
    let file = options
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.file_type().is_file() {
        return Err(io::Error::other(format!(
            "{} is not a regular file",
            path.display()
        )));
    }
    Ok(file)
}

/// The bytes of the file at `path`.
///
/// Errors: it cannot be read, or it is a link or not a regular file.
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    open(path, OpenOptions::new().read(true))?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Writes `bytes` as the whole file at `path`, made if missing.
///
/// Errors: it cannot be written, or it is a link or not a regular file.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = open(
        path,
        OpenOptions::new().write(true).create(true).truncate(true),
    )?;
    file.write_all(bytes)
}

/// Whether the file at `path` can be opened for writing by this process.
pub fn writable(path: &Path) -> bool {
    open(path, OpenOptions::new().write(true)).is_ok()
}

/// Sets the permission bits of the file at `path` to `mode`, through a
/// handle on it.
///
/// Errors: it cannot be opened, or it is a link or not a regular file.
pub fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    open(path, OpenOptions::new().read(true))?
        .set_permissions(std::fs::Permissions::from_mode(mode))
}

/// The regular file at `path`, open for reading, never through a link: for
/// an `ioctl` on it.
///
/// Errors: as for [`read`].
pub fn handle(path: &Path) -> io::Result<File> {
    open(path, OpenOptions::new().read(true))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A link put where a test's file is expected leads the bench nowhere:
    /// not to read, write, change the mode of, or open as a database the
    /// file it names.
    #[test]
    fn a_link_in_a_test_s_folder_is_never_followed() {
        let folder = tempfile::tempdir().unwrap();
        let secret = folder.path().join("instructor.db");
        let conn = Connection::open(&secret).unwrap();
        conn.execute_batch("CREATE TABLE jobs (id TEXT); INSERT INTO jobs VALUES ('x');")
            .unwrap();
        drop(conn);
        std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
        let before = std::fs::read(&secret).unwrap();
        let link = folder.path().join("jobs.db");
        std::os::unix::fs::symlink(&secret, &link).unwrap();
        assert!(read(&link).is_err());
        assert!(write(&link, b"forged").is_err());
        assert!(set_mode(&link, 0o644).is_err());
        assert!(!writable(&link));
        assert!(connect(&link).is_err());
        assert!(connect_with(&link, OpenFlags::SQLITE_OPEN_READ_ONLY).is_err());
        // A link to the folder above, in the middle of the path.
        let up = folder.path().join("up");
        std::os::unix::fs::symlink(folder.path(), &up).unwrap();
        assert!(connect(&up.join("instructor.db")).is_err());
        assert_eq!(std::fs::read(&secret).unwrap(), before, "untouched");
        let mode = std::fs::metadata(&secret).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        // The file itself, named directly, is read and written as asked.
        assert_eq!(read(&secret).unwrap(), before);
        let conn = connect(&secret).unwrap();
        let count: i64 = conn
            .query_row("SELECT count(*) FROM jobs", [], |row| row.get(0))
            .unwrap();
        assert_eq!(count, 1);
    }

    /// A FIFO where a file is expected is refused at once, never waited on.
    #[test]
    fn a_fifo_is_refused_without_waiting() {
        let folder = tempfile::tempdir().unwrap();
        let fifo = folder.path().join("jobs.db");
        let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo(3) reads the string, which lives for the call.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o644) }, 0);
        let started = std::time::Instant::now();
        let error = read(&fifo).unwrap_err();
        assert!(error.to_string().contains("not a regular file"), "{error}");
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }
}
