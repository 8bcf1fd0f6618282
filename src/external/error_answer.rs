//! An error answer of the lab's protocol, `{"error": KIND, "message": ...}`,
//! as the store's own error.

use crate::error::{ErrorKind, StoreError};
use std::path::Path;
use std::time::Duration;

/// The error that an answer of kind `kind` with `message` reports for a
/// request on the database `db`; `waited` is how long a `busy` call waited
/// for the lock (the answer's `waited_ms`, else the wait the request asked
/// for).
///
/// Every kind the Rust store has becomes the very [`StoreError`] variant the
/// Rust store returns, so that a suite test that expects, say,
/// [`StoreError::NoDatabase`] judges a program as it judges the Rust store.
/// The variant's path is `db`, and `missing-folder`'s folder is `db`'s.
/// For `not-a-database`, `incompatible-schema` and `read-only`, the message
/// is the variant's detail, less a leading `DB: ` (the variant's own text
/// names the file). `sqlite`, `not-implemented` and `other` keep the
/// message as it came, in [`StoreError::Reported`].
pub(super) fn reported(kind: ErrorKind, message: &str, waited: Duration, db: &Path) -> StoreError {
    let path = db.to_path_buf();
    let detail = || {
        let prefix = format!("{}: ", db.display());
        message.strip_prefix(&prefix).unwrap_or(message).to_string()
    };
    match kind {
        ErrorKind::InvalidArgument => StoreError::InvalidArgument(message.to_string()),
        ErrorKind::MissingFolder => StoreError::MissingFolder {
            folder: db.parent().unwrap_or(Path::new(".")).to_path_buf(),
            path,
        },
        ErrorKind::NoDatabase => StoreError::NoDatabase { path },
        ErrorKind::IsADirectory => StoreError::IsADirectory { path },
        ErrorKind::NotADatabase => StoreError::NotADatabase {
            path,
            detail: detail(),
        },
        ErrorKind::NoJobsTable => StoreError::NoJobsTable { path },
        ErrorKind::IncompatibleSchema => StoreError::IncompatibleSchema {
            path,
            detail: detail(),
        },
        ErrorKind::ReadOnly => StoreError::ReadOnly {
            path,
            detail: detail(),
        },
        ErrorKind::Busy => StoreError::Busy { path, waited },
        ErrorKind::Sqlite | ErrorKind::NotImplemented | ErrorKind::Other => StoreError::Reported {
            kind,
            message: message.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind comes back as the error of that kind, with the path of
    /// the request's database: the suite's tests match the variant.
    #[test]
    fn every_kind_is_the_store_s_own_error_of_that_kind() {
        let db = Path::new("/t/jobs.db");
        let wait = Duration::from_millis(50);
        for kind in ErrorKind::ALL {
            let error = reported(kind, "/t/jobs.db: what went wrong", wait, db);
            assert_eq!(error.kind(), kind, "{error}");
            let named = error.to_string();
            let reported = matches!(error, StoreError::Reported { .. });
            let expected_reported = matches!(
                kind,
                ErrorKind::Sqlite | ErrorKind::NotImplemented | ErrorKind::Other
            );
            assert_eq!(reported, expected_reported, "{kind:?}: {error:?}");
            if kind != ErrorKind::InvalidArgument {
                assert!(named.starts_with("/t/jobs.db: "), "{kind:?}: {named}");
            }
        }
    }

    #[test]
    fn the_variants_carry_the_folder_the_detail_and_the_wait() {
        let db = Path::new("/t/jobs.db");
        let wait = Duration::from_millis(50);
        let error = reported(ErrorKind::MissingFolder, "gone", wait, db);
        assert!(
            matches!(&error, StoreError::MissingFolder { folder, path }
                if folder == Path::new("/t") && path == db),
            "{error:?}"
        );
        let bare = reported(ErrorKind::MissingFolder, "gone", wait, Path::new(""));
        assert!(
            matches!(&bare, StoreError::MissingFolder { folder, .. } if folder == Path::new(".")),
            "{bare:?}"
        );
        let schema = reported(
            ErrorKind::IncompatibleSchema,
            "/t/jobs.db: column 2 is `payload TEXT`",
            wait,
            db,
        );
        assert_eq!(schema.detail(), "column 2 is `payload TEXT`");
        let read_only = reported(ErrorKind::ReadOnly, "readonly database", wait, db);
        assert_eq!(read_only.detail(), "readonly database");
        let damaged = reported(ErrorKind::NotADatabase, "/t/jobs.db: not a db", wait, db);
        assert_eq!(damaged.detail(), "not a db");
        let busy = reported(ErrorKind::Busy, "database is locked", wait, db);
        assert!(
            busy.to_string()
                .contains("stayed locked by another connection for 50 ms"),
            "{busy}"
        );
        let invalid = reported(ErrorKind::InvalidArgument, "ttl must be above 0", wait, db);
        assert!(
            matches!(&invalid, StoreError::InvalidArgument(message) if message == "ttl must be above 0")
        );
        let other = reported(ErrorKind::Other, "/t/jobs.db: KeyError", wait, db);
        assert_eq!(other.detail(), "/t/jobs.db: KeyError", "kept as it came");
    }

    /// A busy answer's wait is its `waited_ms`, else the one the request
    /// asked for; the kind and message come from the answer line.
    #[test]
    fn an_answer_line_gives_the_error_its_wait_and_its_path() {
        use crate::operation::Operation;
        use serde_json::json;
        let claim = Operation::Claim {
            job_id: "j".into(),
            owner: "A".into(),
            now: 100.0,
            ttl: 10.0,
        };
        let db = Path::new("/t/jobs.db");
        let asked = Duration::from_millis(50);
        let busy = |line: serde_json::Value| match super::super::decode(&claim, &line, db, asked) {
            Ok(Err(StoreError::Busy { waited, path })) if path == db => waited,
            other => panic!("a busy error on {}, not {other:?}", db.display()),
        };
        let told = json!({"error": "busy", "message": "locked", "waited_ms": 70});
        assert_eq!(busy(told), Duration::from_millis(70));
        assert_eq!(busy(json!({"error": "busy", "message": "locked"})), asked);
        let unknown = json!({"error": "no-such-kind", "message": "m"});
        assert!(super::super::decode(&claim, &unknown, db, asked).is_err());
    }
}
