//! Step 2. Register only the first job: `enqueue` adds a new id and never
//! changes an existing one.

use super::bench::*;
use super::failure::*;
use crate::error::StoreError;
use crate::shared_files as files;

/// A new id is added in the default state and the answer is `true`.
pub fn enqueue_adds_a_job_in_the_default_state(bench: &Bench) -> Checked {
    bench.init()?;
    expect_eq("enqueue(\"j\") of a new id", bench.enqueue("j")?, true)?;
    expect_eq("the stored rows", bench.rows()?, vec![fresh("j")])
}

/// Enqueueing an id that exists answers `false`.
pub fn enqueue_of_an_existing_job_answers_false(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    expect_eq("enqueue(\"j\") a second time", bench.enqueue("j")?, false)?;
    expect_eq("the stored rows", bench.rows()?, vec![fresh("j")])
}

/// Re-registering a job that is being worked on keeps its owner, lease and fence.
pub fn enqueue_of_a_claimed_job_keeps_its_lease_and_fence(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.store_row(&held("j", "A", 1, 110.0))?;
    let before = bench.rows()?;
    bench.expect_refused(
        "enqueue(\"j\") of a claimed job",
        bench.enqueue("j")?,
        false,
        "enqueue of a claimed job",
        &before,
    )
}

/// Re-registering a done job keeps its result.
pub fn enqueue_of_a_done_job_keeps_its_result(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.store_row(&completed("j", "A", 1, 110.0, "r"))?;
    let before = bench.rows()?;
    bench.expect_refused(
        "enqueue(\"j\") of a done job",
        bench.enqueue("j")?,
        false,
        "enqueue of a done job",
        &before,
    )
}

/// An empty id is an invalid argument and adds nothing.
pub fn enqueue_of_an_empty_id_is_invalid(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    let before = bench.rows()?;
    expect_invalid("enqueue(\"\")", bench.store().enqueue(bench.db(), ""))?;
    bench.expect_unchanged("the refused enqueue", &before)
}

/// Without `init_db` there is no database: an error, and no file is created.
pub fn enqueue_without_a_database_is_an_error(bench: &Bench) -> Checked {
    expect_error(
        "enqueue before init_db",
        bench.store().enqueue(bench.db(), "j"),
        "error no-database",
        |e| matches!(e, StoreError::NoDatabase { .. }),
    )?;
    expect_eq("whether a file was created", bench.db().exists(), false)
}

/// A database file that cannot be written: enqueue fails with a read-only
/// error and the rows stay as they were. The file is made on the system's
/// temporary folder, a real disk: a memory file system (where the lab keeps
/// its test databases) has no immutable flag to stop root from writing.
pub fn enqueue_on_a_read_only_file_is_an_error(bench: &Bench) -> Checked {
    let folder = tempfile::tempdir().map_err(|e| Failure {
        check: "making a folder in the system's temporary folder".into(),
        expected: "a folder".into(),
        actual: e.to_string(),
        state: None,
    })?;
    let db = folder.path().join("jobs.db");
    // Made with plain SQL, so the store under test first meets the file
    // when it is already read-only (a handle opened earlier would instead
    // see its file change under it).
    bench.raw_sql(
        &db,
        "CREATE TABLE jobs (id TEXT PRIMARY KEY, owner TEXT, until REAL NOT NULL DEFAULT 0, \
         fence INTEGER NOT NULL DEFAULT 0, result TEXT, done INTEGER NOT NULL DEFAULT 0); \
         INSERT INTO jobs (id) VALUES ('j');",
    )?;
    let store = bench.store();
    let before = bench.rows_at(&db)?;
    let answer = bench.with_read_only_database(&db, || store.enqueue(&db, "k"))?;
    expect_error(
        "enqueue(\"k\") on a read-only file",
        answer,
        "error read-only",
        |e| matches!(e, StoreError::ReadOnly { .. }),
    )?;
    expect_eq(
        "the stored rows after the refused enqueue",
        bench.rows_at(&db)?,
        before,
    )
}

/// A `jobs` table that is not lease-lab's (another program's), or no table
/// at all, is refused by enqueue, which then writes nothing.
pub fn enqueue_into_a_foreign_or_missing_jobs_table_is_refused(bench: &Bench) -> Checked {
    let foreign = bench.sibling("foreign.db");
    bench.raw_sql(
        &foreign,
        "CREATE TABLE jobs (id TEXT PRIMARY KEY, payload TEXT); INSERT INTO jobs VALUES ('a', 'x');",
    )?;
    let empty = bench.sibling("empty.db");
    files::write(&empty, b"").map_err(|e| Failure {
        check: "making an empty file".into(),
        expected: "success".into(),
        actual: e.to_string(),
        state: None,
    })?;
    let unchanged = |what: &str, path: &std::path::Path, before: Vec<u8>| {
        expect_eq(
            format!("whether {what} is unchanged after the refused enqueue"),
            files::read(path).unwrap_or_default() == before,
            true,
        )
    };
    let before = files::read(&foreign).unwrap_or_default();
    expect_error(
        "enqueue(\"new\") into another program's jobs table",
        bench.store().enqueue(&foreign, "new"),
        "error incompatible-schema",
        |e| matches!(e, StoreError::IncompatibleSchema { .. }),
    )?;
    unchanged("another program's jobs table", &foreign, before)?;
    expect_error(
        "enqueue(\"new\") into an empty file",
        bench.store().enqueue(&empty, "new"),
        "error no-jobs-table",
        |e| matches!(e, StoreError::NoJobsTable { .. }),
    )?;
    unchanged("the empty file", &empty, Vec::new())
}
