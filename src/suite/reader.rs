//! The bench's own connection to a test's database: another client that
//! keeps the file open between the implementation's calls, and reads the
//! stored rows for the checks.
//!
//! Why it is kept: the worksheet's operations take a path, so each call
//! opens and closes a connection of its own. When the last connection of a
//! process to a WAL database closes, SQLite lets go of the shared-memory
//! index (`-shm`), and the next connection maps it again, empties it and
//! rebuilds it from the log: several system calls, page faults and a read
//! of the whole log, for every call of every test. While one idle
//! connection stays open, each call's connection finds the index mapped
//! and current. An idle connection holds no lock on the database and no
//! transaction, so the contract holds exactly as it does without it: a
//! store must behave the same whether or not another client has the file
//! open.
//!
//! What it must not outlive: a simulated power cut, after which no handle
//! opened before it may survive (every process died with the power), and
//! a change of the files' permissions, after which the kept index would be
//! one the new modes forbid. Tests that do either let it go first
//! ([`Reader::let_go`]).

use rusqlite::{Connection, OpenFlags};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::{Mutex, PoisonError};

/// Which file a path named when the reader opened it: a test that put
/// another file at the path is read from the new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileId {
    device: u64,
    inode: u64,
}

impl FileId {
    fn of(path: &Path) -> Option<FileId> {
        let meta = std::fs::metadata(path).ok()?;
        Some(FileId {
            device: meta.dev(),
            inode: meta.ino(),
        })
    }
}

/// A kept read-only connection, and the file it was opened on.
struct Kept {
    conn: Connection,
    file: FileId,
}

/// The bench's reader: at most one kept connection, to the bench's
/// database, opened once `init_db` has made it.
#[derive(Default)]
pub(crate) struct Reader {
    kept: Mutex<Option<Kept>>,
}

impl Reader {
    /// Keeps a connection to `db` open from now on, if none is kept for
    /// the file there now. Opening may fail (an implementation's `init_db`
    /// may have left no database there): then nothing is kept, and every
    /// read opens a connection of its own, as without a reader.
    pub(crate) fn keep(&self, db: &Path) {
        let Some(file) = FileId::of(db) else { return };
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.as_ref().is_some_and(|kept| kept.file == file) {
            return;
        }
        *kept = open(db).map(|conn| Kept { conn, file });
    }

    /// Closes the kept connection, if any.
    pub(crate) fn let_go(&self) {
        *self.kept.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// Runs `read` on a connection to `db`: the kept one when it was
    /// opened on the file that is there now, else a new read-only
    /// connection for this read alone. Each read is its own transaction,
    /// so it sees everything committed before it.
    pub(crate) fn read<T>(
        &self,
        db: &Path,
        read: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T> {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        match kept.as_ref() {
            Some(kept) if FileId::of(db) == Some(kept.file) => read(&kept.conn),
            _ => {
                drop(kept);
                read(&crate::shared_files::connect_with(
                    db,
                    OpenFlags::SQLITE_OPEN_READ_ONLY,
                )?)
            }
        }
    }
}

/// A read-only connection to `db` that has read it once, so that it holds
/// the shared-memory index of a WAL database mapped; `None` if `db` cannot
/// be read as a database.
fn open(db: &Path) -> Option<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY.union(OpenFlags::SQLITE_OPEN_NO_MUTEX);
    let conn = crate::shared_files::connect_with(db, flags).ok()?;
    conn.query_row("PRAGMA schema_version", [], |row| row.get::<_, i64>(0))
        .ok()?;
    Some(conn)
}
