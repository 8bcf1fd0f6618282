//! The store's errors: each names what went wrong and what to do next.

use std::path::PathBuf;
use std::time::Duration;

/// The result type of every store operation.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// A program's failure to answer, as [`StoreError::Fault`] carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Faulted {
    /// What the program did, the request it was asked and the last lines
    /// it wrote on standard error.
    pub message: String,
    /// How long the call waited for an answer, when the program hung;
    /// `None` for any other fault.
    pub hang: Option<Duration>,
}

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

    /// A database server (the store on PostgreSQL) failed the call: it could
    /// not be reached, refused the connection, or reported an error.
    #[error("{server}: {detail}")]
    Server {
        /// The server, as the lab names it: its connection string without
        /// any password.
        server: String,
        /// What the server or its client reported, and what to do.
        detail: String,
    },

    /// The implementation, a program over the lab's protocol, failed to
    /// answer at all: it could not start, greeted wrongly, ended, hung, or
    /// wrote something that is not an answer. Not an answer of the store:
    /// the suite's verdict is a crash (a timeout for a hang), and a command
    /// reports it as its failure. (Self-contained, with no type of the lab's
    /// protocol in it: this file is also compiled into a student's Rust
    /// project.)
    #[error("{}", .0.message)]
    Fault(Faulted),

    /// An error that an implementation outside this program reported (over
    /// the lab's protocol), other than an invalid argument.
    #[error("{message}")]
    Reported {
        /// The kind it named.
        kind: ErrorKind,
        /// Its message.
        message: String,
    },
}

/// The kinds of [`StoreError`], by the names that probes and the lab's
/// protocol use (`error invalid-argument`), plus two that only other
/// implementations report: an operation not written yet, and anything else.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKind {
    /// [`StoreError::InvalidArgument`]: the worksheet's `ValueError`.
    InvalidArgument,
    /// [`StoreError::MissingFolder`].
    MissingFolder,
    /// [`StoreError::NoDatabase`].
    NoDatabase,
    /// [`StoreError::IsADirectory`].
    IsADirectory,
    /// [`StoreError::NotADatabase`].
    NotADatabase,
    /// [`StoreError::NoJobsTable`].
    NoJobsTable,
    /// [`StoreError::IncompatibleSchema`].
    IncompatibleSchema,
    /// [`StoreError::ReadOnly`].
    ReadOnly,
    /// [`StoreError::Busy`].
    Busy,
    /// [`StoreError::Sqlite`].
    Sqlite,
    /// An operation the implementation does not carry out yet.
    NotImplemented,
    /// Any other failure an implementation reported.
    Other,
}

impl ErrorKind {
    /// Every kind, in the order of [`ErrorKind::name`]s listed in messages.
    pub const ALL: [ErrorKind; 12] = [
        ErrorKind::InvalidArgument,
        ErrorKind::MissingFolder,
        ErrorKind::NoDatabase,
        ErrorKind::IsADirectory,
        ErrorKind::NotADatabase,
        ErrorKind::NoJobsTable,
        ErrorKind::IncompatibleSchema,
        ErrorKind::ReadOnly,
        ErrorKind::Busy,
        ErrorKind::Sqlite,
        ErrorKind::NotImplemented,
        ErrorKind::Other,
    ];

    /// The kind's name: `invalid-argument`, `busy`, ...
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::InvalidArgument => "invalid-argument",
            ErrorKind::MissingFolder => "missing-folder",
            ErrorKind::NoDatabase => "no-database",
            ErrorKind::IsADirectory => "is-a-directory",
            ErrorKind::NotADatabase => "not-a-database",
            ErrorKind::NoJobsTable => "no-jobs-table",
            ErrorKind::IncompatibleSchema => "incompatible-schema",
            ErrorKind::ReadOnly => "read-only",
            ErrorKind::Busy => "busy",
            ErrorKind::Sqlite => "sqlite",
            ErrorKind::NotImplemented => "not-implemented",
            ErrorKind::Other => "other",
        }
    }

    /// The kind with this name, if any.
    pub fn from_name(name: &str) -> Option<ErrorKind> {
        ErrorKind::ALL.into_iter().find(|kind| kind.name() == name)
    }
}

impl StoreError {
    /// The error's kind.
    pub fn kind(&self) -> ErrorKind {
        match self {
            StoreError::InvalidArgument(_) => ErrorKind::InvalidArgument,
            StoreError::MissingFolder { .. } => ErrorKind::MissingFolder,
            StoreError::NoDatabase { .. } => ErrorKind::NoDatabase,
            StoreError::IsADirectory { .. } => ErrorKind::IsADirectory,
            StoreError::NotADatabase { .. } => ErrorKind::NotADatabase,
            StoreError::NoJobsTable { .. } => ErrorKind::NoJobsTable,
            StoreError::IncompatibleSchema { .. } => ErrorKind::IncompatibleSchema,
            StoreError::ReadOnly { .. } => ErrorKind::ReadOnly,
            StoreError::Busy { .. } => ErrorKind::Busy,
            StoreError::Sqlite { .. } => ErrorKind::Sqlite,
            StoreError::Reported { kind, .. } => *kind,
            StoreError::Server { .. } | StoreError::Fault(_) => ErrorKind::Other,
        }
    }

    /// What went wrong without the database's path, where the error has a
    /// detail of its own (a test's temporary path says nothing).
    pub fn detail(&self) -> String {
        match self {
            StoreError::InvalidArgument(message) => message.clone(),
            StoreError::NotADatabase { detail, .. }
            | StoreError::IncompatibleSchema { detail, .. }
            | StoreError::ReadOnly { detail, .. }
            | StoreError::Server { detail, .. } => detail.clone(),
            StoreError::Busy { waited, .. } => {
                format!("stayed locked for {} ms", waited.as_millis())
            }
            StoreError::Sqlite { source, .. } => source.to_string(),
            StoreError::Reported { message, .. } => message.clone(),
            StoreError::MissingFolder { .. }
            | StoreError::NoDatabase { .. }
            | StoreError::IsADirectory { .. }
            | StoreError::NoJobsTable { .. }
            | StoreError::Fault(_) => self.to_string(),
        }
    }
}

/// A connection string without its password (`password=...` or the
/// `user:password@` of a URL), safe to print: the
/// server a [`StoreError::Server`] names.
pub fn without_password(dsn: &str) -> String {
    if let Some((scheme, rest)) = dsn.split_once("://") {
        if let Some((credentials, host)) = rest.split_once('@') {
            let user = credentials.split(':').next().unwrap_or_default();
            return format!("{scheme}://{user}@{host}");
        }
        return dsn.to_string();
    }
    dsn.split_whitespace()
        .filter(|part| !part.starts_with("password="))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connection string is printed without its password, in either
    /// form; one without a password is printed as it is.
    #[test]
    fn a_server_is_named_without_its_password() {
        assert_eq!(
            without_password("postgresql://lab:secret@db.example:5432/lab"),
            "postgresql://lab@db.example:5432/lab"
        );
        assert_eq!(
            without_password("postgresql://db.example/lab"),
            "postgresql://db.example/lab"
        );
        assert_eq!(
            without_password("host=/tmp/x user=lab password=secret dbname=lab"),
            "host=/tmp/x user=lab dbname=lab"
        );
    }
}
