//! The store's errors: each names what went wrong and what to do next.

use std::path::PathBuf;
use std::time::Duration;

/// The result type of every store operation.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Why a store operation did not run.
///
/// A `false` or `None` from an operation is an answer (the lease check said
/// no); an `Err` means the operation could not be carried out at all, and
/// in every case nothing stored was changed by the failed call.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// An argument breaks the contract (the worksheet's `ValueError`):
    /// a `ttl` that is not a finite number above zero, a `now` that is not
    /// finite, a lease end `now + ttl` that overflows, or an empty id.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// The folder that should hold the database does not exist.
    #[error("{}: the folder {} does not exist; create it or choose another path", path.display(), folder.display())]
    MissingFolder {
        /// The database path as given.
        path: PathBuf,
        /// Its parent folder, which is missing.
        folder: PathBuf,
    },

    /// No database file at the path (every operation but `init_db` needs one).
    #[error("{}: no database here; create it first with init_db (`lab db init --db {}`)", path.display(), path.display())]
    NoDatabase {
        /// The database path as given.
        path: PathBuf,
    },

    /// The path names a directory, not a file.
    #[error("{}: is a directory; give the path of a database file inside it", path.display())]
    IsADirectory {
        /// The database path as given.
        path: PathBuf,
    },

    /// The file exists but is not an SQLite database, or is damaged.
    #[error("{}: not a usable SQLite database ({detail}); point to a lease-lab database or a new file name", path.display())]
    NotADatabase {
        /// The database path as given.
        path: PathBuf,
        /// What SQLite reported.
        detail: String,
    },

    /// The database has no `jobs` table (an empty file, or another program's database).
    #[error("{}: there is no jobs table here; create it with init_db (`lab db init --db {}`)", path.display(), path.display())]
    NoJobsTable {
        /// The database path as given.
        path: PathBuf,
    },

    /// A `jobs` table exists but its columns are not the lease-lab schema.
    #[error("{}: the jobs table does not match the lease-lab schema: {detail}; nothing was changed: move the file aside or migrate the table", path.display())]
    IncompatibleSchema {
        /// The database path as given.
        path: PathBuf,
        /// The first difference found.
        detail: String,
    },

    /// The database file (or its folder) cannot be written.
    #[error("{}: the database is read-only ({detail}); check the file's and folder's permissions", path.display())]
    ReadOnly {
        /// The database path as given.
        path: PathBuf,
        /// What SQLite reported.
        detail: String,
    },

    /// Another connection held the lock for longer than the busy timeout.
    #[error("{}: the database stayed locked by another connection for {} ms (the busy timeout); retry, or find the process holding it", path.display(), waited.as_millis())]
    Busy {
        /// The database path as given.
        path: PathBuf,
        /// How long the operation waited before giving up.
        waited: Duration,
    },

    /// Any other SQLite failure.
    #[error("{}: {source}", path.display())]
    Sqlite {
        /// The database path as given.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: rusqlite::Error,
    },
}
