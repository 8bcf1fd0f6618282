//! Step 1. Create the lease state table: `init_db` is idempotent, creates
//! exactly the schema, and refuses what it cannot use without touching it.

use super::bench::*;
use super::failure::*;
use crate::error::StoreError;
use crate::job::{Fence, Job};
use crate::shared_files as files;
use std::fs;

/// A new database has an empty `jobs` table whose rows start in the default state.
/// No mutant kills it: a mutant of a column or a default would fail
/// init_db's own check of the schema, and every test with it; the step's
/// worksheet mutant changes only what a second init_db does.
pub fn init_db_creates_the_jobs_table(bench: &Bench) -> Checked {
    bench.init()?;
    expect_eq("the stored rows of a new database", bench.rows()?, vec![])?;
    bench.raw_sql(bench.db(), "INSERT INTO jobs (id) VALUES ('j')")?;
    bench.expect_row("inserting only an id", fresh("j"))
}

/// The table has exactly the worksheet's columns, so any SQLite client can use the file.
/// No mutant kills it: a mutant of a column would fail init_db's own check
/// of the schema, and every test with it; the step's worksheet mutant
/// changes only what a second init_db does.
pub fn init_db_creates_exactly_the_worksheet_schema(bench: &Bench) -> Checked {
    bench.init()?;
    let conn = crate::shared_files::connect(bench.db()).map_err(|e| Failure {
        check: "opening the database with plain SQLite".into(),
        expected: "a connection".into(),
        actual: e.to_string(),
        state: None,
    })?;
    let columns: rusqlite::Result<Vec<String>> = conn
        .prepare("SELECT name || ' ' || type || ' notnull=' || \"notnull\" || ' default=' || ifnull(dflt_value, 'none') || ' pk=' || pk FROM pragma_table_info('jobs')")
        .and_then(|mut statement| statement.query_map([], |row| row.get(0))?.collect());
    expect_eq(
        "the columns of jobs",
        columns.map_err(|e| e.to_string()),
        Ok(vec![
            "id TEXT notnull=0 default=none pk=1".to_string(),
            "owner TEXT notnull=0 default=none pk=0".to_string(),
            "until REAL notnull=1 default=0 pk=0".to_string(),
            "fence INTEGER notnull=1 default=0 pk=0".to_string(),
            "result TEXT notnull=0 default=none pk=0".to_string(),
            "done INTEGER notnull=1 default=0 pk=0".to_string(),
        ]),
    )
}

/// The store keeps its file in WAL mode, so that readers never wait for a
/// writer (the Rust store's promise; the worksheet does not ask it).
pub fn init_db_puts_the_file_in_wal_mode(bench: &Bench) -> Checked {
    bench.init()?;
    let mode = crate::shared_files::connect(bench.db())
        .and_then(|conn| conn.query_row("PRAGMA journal_mode", [], |row| row.get::<_, String>(0)));
    expect_eq(
        "the journal mode of the file",
        mode.map_err(|e| e.to_string()),
        Ok("wal".to_string()),
    )
}

/// A second `init_db`, as after a worker's restart, succeeds and resets
/// nothing: a job held with fence 1 keeps its owner, lease and fence (a
/// reset fence would make old tokens valid again).
pub fn init_db_twice_keeps_jobs_and_fences(bench: &Bench) -> Checked {
    bench.init()?;
    bench.store_row(&held("j", "A", 1, 110.0))?;
    bench.init()?;
    bench.expect_row("a second init_db", held("j", "A", 1, 110.0))
}

/// A second `init_db` keeps the fence of a job nobody holds (released,
/// owner NULL, fence 3): the fence is the store's memory of every token it
/// handed out, not state of a running worker to tidy up at a restart, or
/// the next claim would hand out fence 1 again.
pub fn init_db_twice_keeps_the_fence_of_a_job_nobody_holds(bench: &Bench) -> Checked {
    bench.init()?;
    let released = Job {
        fence: Fence(3),
        ..fresh("j")
    };
    bench.store_row(&released)?;
    bench.init()?;
    bench.expect_row("a second init_db", released)
}

/// An existing `jobs` table that differs from the schema in any one way (a
/// column's name, type, NOT NULL, default or key; a column missing or extra)
/// is refused, and the file is left exactly as it was.
pub fn init_db_refuses_a_jobs_table_with_other_columns(bench: &Bench) -> Checked {
    const COLUMNS: [&str; 6] = [
        "id TEXT PRIMARY KEY",
        "owner TEXT",
        "until REAL NOT NULL DEFAULT 0",
        "fence INTEGER NOT NULL DEFAULT 0",
        "result TEXT",
        "done INTEGER NOT NULL DEFAULT 0",
    ];
    let variations: [(&str, usize, &str); 7] = [
        ("a renamed column", 2, "lease_end REAL NOT NULL DEFAULT 0"),
        (
            "a column of another type",
            3,
            "fence TEXT NOT NULL DEFAULT 0",
        ),
        ("a column that may be NULL", 2, "until REAL DEFAULT 0"),
        (
            "a column with another default",
            5,
            "done INTEGER NOT NULL DEFAULT 1",
        ),
        ("an id that is not the key", 0, "id TEXT"),
        ("a missing column", 5, ""),
        ("an extra column", 6, "note TEXT"),
    ];
    for (number, (what, position, column)) in variations.into_iter().enumerate() {
        let mut columns: Vec<&str> = COLUMNS.to_vec();
        match (column.is_empty(), position < columns.len()) {
            (true, _) => {
                columns.remove(position);
            }
            (false, true) => columns[position] = column,
            (false, false) => columns.push(column),
        }
        let path = bench.sibling(&format!("foreign-{number}.db"));
        bench.raw_sql(
            &path,
            &format!("CREATE TABLE jobs ({})", columns.join(", ")),
        )?;
        let before = files::read(&path).unwrap_or_default();
        expect_error(
            format!("init_db on a file whose jobs table has {what}"),
            bench.store().init_db(&path),
            "error incompatible-schema",
            |e| matches!(e, StoreError::IncompatibleSchema { .. }),
        )?;
        expect_eq(
            format!("whether the file with {what} is unchanged after the refused init_db"),
            files::read(&path).unwrap_or_default() == before,
            true,
        )?;
    }
    Ok(())
}

/// A file that is not an SQLite database is refused and not written to.
pub fn init_db_refuses_a_file_that_is_not_a_database(bench: &Bench) -> Checked {
    let bytes: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    files::write(bench.db(), &bytes).map_err(|e| Failure {
        check: "writing a file of random bytes".into(),
        expected: "success".into(),
        actual: e.to_string(),
        state: None,
    })?;
    expect_error(
        "init_db on a file of random bytes",
        bench.store().init_db(bench.db()),
        "error not-a-database",
        |e| matches!(e, StoreError::NotADatabase { .. }),
    )?;
    expect_eq(
        "the file's bytes after the refused init_db",
        files::read(bench.db()).unwrap_or_default() == bytes,
        true,
    )
}

/// A path in a folder that does not exist is an error naming the folder; nothing is created.
pub fn init_db_in_a_missing_folder_is_an_error(bench: &Bench) -> Checked {
    let path = bench.sibling("no-such-folder").join("jobs.db");
    expect_error(
        "init_db in a folder that does not exist",
        bench.store().init_db(&path),
        "error missing-folder",
        |e| matches!(e, StoreError::MissingFolder { folder, .. } if folder == path.parent().unwrap()),
    )?;
    expect_eq(
        "whether the folder exists afterwards",
        path.parent().unwrap().exists(),
        false,
    )
}

/// A directory given as the database path is refused.
pub fn init_db_on_a_directory_is_an_error(bench: &Bench) -> Checked {
    let folder = bench.sibling("a-folder");
    fs::create_dir(&folder).map_err(|e| Failure {
        check: "creating a folder".into(),
        expected: "success".into(),
        actual: e.to_string(),
        state: None,
    })?;
    expect_error(
        "init_db on a directory",
        bench.store().init_db(&folder),
        "error is-a-directory",
        |e| matches!(e, StoreError::IsADirectory { .. }),
    )
}

/// A bare file name is a database in the current folder (as `lab db`'s
/// default `lease-lab.db` is), not a file in a missing folder.
///
/// Checked only on a store in the lab's process: a program's current
/// folder is its own, one the lab cannot move it out of, and a bare name
/// would leave a database in whatever folder the student started the lab.
pub fn init_db_with_a_bare_file_name_uses_the_current_folder(bench: &Bench) -> Checked {
    if !bench.store().in_this_process() {
        return Err(Failure {
            check: "init_db(\"bare.db\") in the current folder".into(),
            expected: "a store in the lab's process, whose current folder the test can choose"
                .into(),
            actual: "a program, whose current folder is its own: not checked".into(),
            state: None,
        });
    }
    let folder = bench.sibling("cwd");
    let moving = |to: &std::path::Path| {
        std::env::set_current_dir(to).map_err(|e| Failure {
            check: format!("moving into {}", to.display()),
            expected: "success".into(),
            actual: e.to_string(),
            state: None,
        })
    };
    let home = std::env::current_dir().map_err(|e| Failure {
        check: "reading the current folder".into(),
        expected: "success".into(),
        actual: e.to_string(),
        state: None,
    })?;
    fs::create_dir(&folder).map_err(|e| Failure {
        check: "making a folder".into(),
        expected: "success".into(),
        actual: e.to_string(),
        state: None,
    })?;
    moving(&folder)?;
    // Every other suite test uses absolute paths, so changing this
    // process's folder cannot disturb a test running beside this one. It
    // moves back before checking: the folder goes with the test, and a
    // program the lab starts later must not start in a deleted folder.
    let answer = bench.store().init_db(std::path::Path::new("bare.db"));
    moving(&home)?;
    expect_eq(
        "init_db(\"bare.db\") in the current folder",
        answer.map_err(|e| e.to_string()),
        Ok(()),
    )?;
    expect_eq(
        "whether bare.db was made in the current folder",
        folder.join("bare.db").is_file(),
        true,
    )
}

/// An empty path names no file: an invalid argument, not some other error.
pub fn init_db_with_an_empty_path_is_invalid(bench: &Bench) -> Checked {
    expect_invalid(
        "init_db(\"\")",
        bench.store().init_db(std::path::Path::new("")),
    )
}
