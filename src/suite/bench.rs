//! The bench a suite test works with: one implementation and one fresh
//! database path, and the calls and reads of stored rows a test makes on
//! it, each a [`Checked`] or an [`Answered`] value. The API a new test is
//! written against (see `src/suite/step1.rs` for examples).

use super::failure::*;
use super::reader::Reader;
use crate::error::StoreError;
use crate::immutable;
use crate::job::{Fence, Job};
use crate::job_store::JobStore;
use rusqlite::Connection;
use std::path::{Path, PathBuf};

/// One implementation of the store and a fresh database path for one test.
///
/// The path's folder exists and the file does not: each test begins by
/// calling `init_db` (or, to test bad input, by putting something else there).
pub struct Bench<'a> {
    store: &'a dyn JobStore,
    db: PathBuf,
    reader: Reader,
}

impl<'a> Bench<'a> {
    /// A bench for `store` on the database path `db`.
    pub fn new(store: &'a dyn JobStore, db: PathBuf) -> Bench<'a> {
        Bench {
            store,
            db,
            reader: Reader::default(),
        }
    }

    /// The implementation under test, for calls whose error is the point.
    pub fn store(&self) -> &'a dyn JobStore {
        self.store
    }

    /// The database path of this test.
    pub fn db(&self) -> &Path {
        &self.db
    }

    /// A path beside the database, for files a test makes itself.
    pub fn sibling(&self, name: &str) -> PathBuf {
        self.db.with_file_name(name)
    }

    fn answer<T>(&self, call: String, result: Result<T, StoreError>) -> Answered<T> {
        result.map_err(|error| Failure {
            check: call,
            expected: "an answer (the call is valid)".into(),
            actual: error_text(&error),
            state: None,
        })
    }

    /// `init_db` on the bench's database.
    pub fn init(&self) -> Answered<()> {
        self.answer("init_db".into(), self.store.init_db(&self.db))?;
        self.reader.keep(&self.db);
        Ok(())
    }

    /// Closes the bench's own idle read-only connection to the database
    /// (kept open from `init_db` on), before a power cut that no handle
    /// opened earlier may survive. The next [`Bench::init`] opens it again.
    pub fn let_go_of_the_file(&self) {
        self.reader.let_go();
    }

    /// `init_db` then `enqueue` of each job.
    pub fn init_with(&self, jobs: &[&str]) -> Answered<()> {
        self.init()?;
        for job in jobs {
            let added = self.enqueue(job)?;
            expect_eq(format!("enqueue({job:?}) of a new job"), added, true)?;
        }
        Ok(())
    }

    /// `enqueue(job)`.
    pub fn enqueue(&self, job: &str) -> Answered<bool> {
        self.answer(
            format!("enqueue({job:?})"),
            self.store.enqueue(&self.db, job),
        )
    }

    /// `state(job)`.
    pub fn state(&self, job: &str) -> Answered<Option<Job>> {
        self.answer(format!("state({job:?})"), self.store.state(&self.db, job))
    }

    /// `claim(job, owner, now, ttl)`.
    pub fn claim(&self, job: &str, owner: &str, now: f64, ttl: f64) -> Answered<Option<Fence>> {
        self.answer(
            format!("claim({job:?}, {owner:?}, now={now}, ttl={ttl})"),
            self.store.claim(&self.db, job, owner, now, ttl),
        )
    }

    /// `claim` that must hand out `expected`.
    pub fn claim_expecting(
        &self,
        job: &str,
        owner: &str,
        now: f64,
        ttl: f64,
        expected: Option<i64>,
    ) -> Checked {
        // The answer depends on the stored lease: a wrong one shows it.
        let met = self.row(job).ok().flatten();
        let fence = self.claim(job, owner, now, ttl)?;
        expect_eq(
            format!("claim({job:?}, {owner:?}, now={now}, ttl={ttl})"),
            fence,
            expected.map(Fence),
        )
        .map_err(|failure| match met {
            Some(row) => failure.with_state(RowState::Met {
                row: row.shown(),
                unchanged: false,
            }),
            None => failure,
        })
    }

    /// `renew(job, owner, fence, now, ttl)`.
    pub fn renew(&self, job: &str, owner: &str, fence: i64, now: f64, ttl: f64) -> Answered<bool> {
        self.answer(
            format!("renew({job:?}, {owner:?}, fence={fence}, now={now}, ttl={ttl})"),
            self.store
                .renew(&self.db, job, owner, Fence(fence), now, ttl),
        )
    }

    /// `complete(job, owner, fence, now, result)`.
    pub fn complete(
        &self,
        job: &str,
        owner: &str,
        fence: i64,
        now: f64,
        result: &str,
    ) -> Answered<bool> {
        self.answer(
            format!("complete({job:?}, {owner:?}, fence={fence}, now={now}, result={result:?})"),
            self.store
                .complete(&self.db, job, owner, Fence(fence), now, result),
        )
    }

    /// `release(job, owner, fence)`.
    pub fn release(&self, job: &str, owner: &str, fence: i64) -> Answered<bool> {
        self.answer(
            format!("release({job:?}, {owner:?}, fence={fence})"),
            self.store.release(&self.db, job, owner, Fence(fence)),
        )
    }

    /// `claim_many(job, owners, now, ttl)`.
    pub fn claim_many(
        &self,
        job: &str,
        owners: &[&str],
        now: f64,
        ttl: f64,
    ) -> Answered<Vec<Option<Fence>>> {
        self.answer(
            format!(
                "claim_many({job:?}, {} owners, now={now}, ttl={ttl})",
                owners.len()
            ),
            self.store.claim_many(&self.db, job, owners, now, ttl),
        )
    }

    /// Every stored row, read with plain SQL on a new connection, in id order.
    ///
    /// The checks of "the state left after a call" use this rather than the
    /// implementation's own `state`, so that they judge the file itself.
    pub fn rows(&self) -> Answered<Vec<Job>> {
        self.rows_at(&self.db)
    }

    /// Every stored row of the database at `db`, as [`Bench::rows`] reads them
    /// (from the server, for a store on one: [`JobStore::stored_rows`]).
    pub fn rows_at(&self, db: &Path) -> Answered<Vec<Job>> {
        if let Some(read) = self.store.stored_rows(db) {
            return read.map_err(|why| Failure {
                check: "reading the stored rows".into(),
                expected: "the jobs table".into(),
                actual: why,
                state: None,
            });
        }
        let read = |conn: &Connection| -> rusqlite::Result<Vec<Job>> {
            let mut statement =
                conn.prepare("SELECT id, owner, until, fence, result, done FROM jobs ORDER BY id")?;
            let rows = statement.query_map([], |row| {
                Ok(Job {
                    id: row.get(0)?,
                    owner: row.get(1)?,
                    until: row.get(2)?,
                    fence: Fence(row.get(3)?),
                    result: row.get(4)?,
                    done: row.get::<_, i64>(5)? != 0,
                })
            })?;
            rows.collect()
        };
        self.reader.read(db, read).map_err(|error| Failure {
            check: "reading the jobs table with plain SQL".into(),
            expected: "the stored rows".into(),
            actual: format!("Err({error})"),
            state: None,
        })
    }

    /// The stored row of one job, read with plain SQL.
    pub fn row(&self, job: &str) -> Answered<Option<Job>> {
        Ok(self.rows()?.into_iter().find(|row| row.id == job))
    }

    /// Checks that the stored rows are still `before`, after a call that
    /// should have changed nothing.
    pub fn expect_unchanged(&self, after: &str, before: &[Job]) -> Checked {
        expect_rows(
            format!("the stored rows after {after}"),
            self.rows()?,
            before.to_vec(),
        )
    }

    /// Checks the answer of a call the contract refuses, then that the
    /// stored rows are `before`, unchanged (as [`Bench::expect_unchanged`]).
    /// A wrong answer fails with the state the call left behind, against
    /// `before`: a refusal that wrote shows what it wrote.
    pub fn expect_refused<T: Shown + PartialEq>(
        &self,
        check: impl Into<String>,
        actual: T,
        expected: T,
        after: &str,
        before: &[Job],
    ) -> Checked {
        match expect_eq(check, actual, expected) {
            Ok(()) => self.expect_unchanged(after, before),
            // A refusal that wrote shows what it wrote; one that wrote
            // nothing, the row it met (a lease at its boundary, often).
            Err(failure) => match row_diff(before, &self.rows()?) {
                diff if diff.is_empty() => Err(failure.with_state(RowState::Met {
                    row: before.to_vec().shown(),
                    unchanged: true,
                })),
                diff => Err(failure.with_state(RowState::LeftBehind(diff))),
            },
        }
    }

    /// Checks one job's stored row.
    pub fn expect_row(&self, after: &str, expected: Job) -> Checked {
        let id = expected.id.clone();
        let found = self.row(&id)?;
        if found.as_ref() == Some(&expected) {
            return Ok(());
        }
        let state = RowState::Differs(row_diff(std::slice::from_ref(&expected), found.as_slice()));
        expect_eq(
            format!("the stored row of {id:?} after {after}"),
            found,
            Some(expected),
        )
        .map_err(|failure| failure.with_state(state))
    }

    /// A plain connection that holds the database's write lock
    /// (`BEGIN IMMEDIATE`), as another client would.
    fn take_write_lock(&self) -> Answered<Connection> {
        let holder = crate::shared_files::connect(&self.db).and_then(|conn| {
            conn.execute_batch("BEGIN IMMEDIATE")?;
            Ok(conn)
        });
        holder.map_err(|error| Failure {
            check: "taking the write lock with a plain connection".into(),
            expected: "the lock".into(),
            actual: format!("Err({error})"),
            state: None,
        })
    }

    /// Runs `race` on another thread while another client holds the
    /// database's write lock, and lets the lock go once `racers`
    /// connections are queued behind it (see [`crate::race`]): a claim
    /// that looks the lease up before locking is then caught on every run.
    pub fn behind_a_held_lock<T: Send>(
        &self,
        racers: usize,
        race: impl FnOnce() -> T + Send,
    ) -> Answered<T> {
        if let Some(held) = self.store.hold_every_row(&self.db) {
            let raced = held.and_then(|held| crate::race::behind_held_rows(held, racers, race));
            return raced.map_err(|error| Failure {
                check: "queueing the racing calls behind another client's row locks".into(),
                expected: "held row locks".into(),
                actual: error,
                state: None,
            });
        }
        crate::race::behind_a_held_lock(
            &self.db,
            racers,
            &crate::race::Racers::of(self.store),
            race,
        )
        .map_err(|error| Failure {
            check: "queueing the racing calls behind another client's write lock".into(),
            expected: "a held lock".into(),
            actual: error.to_string(),
            state: None,
        })
    }

    /// Calls `claim(job, owner, now, ttl)` for every owner at once, each on
    /// a thread and connection of its own, queued behind a held write lock
    /// (see [`Bench::behind_a_held_lock`]). Returns the answers in owner
    /// order.
    pub fn claims_behind_a_held_lock(
        &self,
        job: &str,
        owners: &[&str],
        now: f64,
        ttl: f64,
    ) -> Answered<Vec<Option<Fence>>> {
        let store = self.store;
        let db = self.db.as_path();
        let answers = self.behind_a_held_lock(owners.len(), || {
            std::thread::scope(|scope| {
                let calls: Vec<_> = owners
                    .iter()
                    .map(|owner| scope.spawn(move || store.claim(db, job, owner, now, ttl)))
                    .collect();
                calls
                    .into_iter()
                    .map(|call| {
                        call.join()
                            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                    })
                    .collect::<Vec<_>>()
            })
        })?;
        answers
            .into_iter()
            .zip(owners)
            .map(|(answer, owner)| {
                self.answer(
                    format!("claim({job:?}, {owner:?}, now={now}, ttl={ttl}) behind a held lock"),
                    answer,
                )
            })
            .collect()
    }

    /// `claim_many(job, owners, now, ttl)` queued behind a held write lock
    /// (see [`Bench::behind_a_held_lock`]): the claims race when it lets go.
    pub fn claim_many_behind_a_held_lock(
        &self,
        job: &str,
        owners: &[&str],
        now: f64,
        ttl: f64,
    ) -> Answered<Vec<Option<Fence>>> {
        let racers = owners.len().min(crate::store::MAX_CLAIM_THREADS);
        let answer = self.behind_a_held_lock(racers, || {
            self.store.claim_many(&self.db, job, owners, now, ttl)
        })?;
        self.answer(
            format!(
                "claim_many({job:?}, {} owners, now={now}, ttl={ttl}) behind a held lock",
                owners.len()
            ),
            answer,
        )
    }

    /// Runs `action` on another thread, whose calls wait at most `busy` for
    /// a lock, while this thread holds the write lock through a plain
    /// connection. Returns what `action` answered, or a failure if it had
    /// not answered within `limit` (the lock is then released so that the
    /// thread can finish, and the test fails instead of hanging).
    pub fn while_locked<T: Send>(
        &self,
        busy: std::time::Duration,
        limit: std::time::Duration,
        action: impl FnOnce() -> T + Send,
    ) -> Answered<T> {
        let holder = self.take_write_lock()?;
        let store = self.store;
        std::thread::scope(|scope| {
            let (sender, receiver) = std::sync::mpsc::channel();
            scope.spawn(move || {
                store.set_thread_busy_timeout(Some(busy));
                let _ = sender.send(action());
            });
            let answer = receiver.recv_timeout(limit);
            let _ = holder.execute_batch("ROLLBACK");
            answer.map_err(|_| Failure {
                check: format!("a call made while another client holds the write lock, with a busy timeout of {} ms", busy.as_millis()),
                expected: format!("an answer (a busy error) within {} ms", limit.as_millis()),
                actual: "no answer: the call kept waiting for the lock".into(),
                state: None,
            })
        })
    }

    /// Runs `action` while the database at `db` cannot be written: its file
    /// (and the log files beside it) read-only, and, since root ignores
    /// permission bits, also marked immutable (as `chattr +i` does) where
    /// this user can. Everything is made writable again afterwards.
    pub fn with_read_only_database<T>(&self, db: &Path, action: impl FnOnce() -> T) -> Answered<T> {
        // The kept index was mapped writable: the store's connection must
        // find the files as the new modes leave them.
        self.reader.let_go();
        let files: Vec<PathBuf> = ["", "-wal", "-shm"]
            .iter()
            .map(|suffix| PathBuf::from(format!("{}{suffix}", db.display())))
            .filter(|path| path.exists())
            .collect();
        let set_mode = |mode: u32| {
            for file in &files {
                let _ = crate::shared_files::set_mode(file, mode);
            }
        };
        let clear = || {
            for file in &files {
                immutable::set(file, false);
            }
        };
        set_mode(0o444);
        let writable = crate::shared_files::writable(db);
        // Every file is flagged, or (below) none stays flagged.
        let flagged = writable && files.iter().all(|file| immutable::set(file, true));
        if writable && !flagged {
            clear();
            set_mode(0o644);
            return Err(Failure {
                check: "making the database file read-only".into(),
                expected: "a file this user cannot write (mode 0444, or chattr +i for root)".into(),
                actual: "the file stayed writable: this file system has no immutable flag".into(),
                state: None,
            });
        }
        let result = action();
        if flagged {
            clear();
        }
        set_mode(0o644);
        Ok(result)
    }

    /// Writes a job's whole row with plain SQL (adding it if it is not
    /// there): a state the contract can
    /// reach (a lease held, a job done), set up without the operations of
    /// later steps, so that a step's tests call only the operations of
    /// that step and the ones before it, and a student who writes the steps
    /// in order sees each one pass as it is written.
    pub fn store_row(&self, row: &Job) -> Checked {
        if let Some(written) = self.store.store_row(&self.db, row) {
            return written.map_err(|error| Failure {
                check: format!("storing the row of {:?} with plain SQL", row.id),
                expected: "success".into(),
                actual: format!("Err({error})"),
                state: None,
            });
        }
        let write = || -> rusqlite::Result<usize> {
            let conn = crate::shared_files::connect(&self.db)?;
            conn.execute(
                "INSERT OR REPLACE INTO jobs (id, owner, until, fence, result, done) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                rusqlite::params![
                    row.id,
                    row.owner,
                    row.until,
                    row.fence.0,
                    row.result,
                    i64::from(row.done)
                ],
            )
        };
        write().map(|_| ()).map_err(|error| Failure {
            check: format!("storing the row of {:?} with plain SQL", row.id),
            expected: "success".into(),
            actual: format!("Err({error})"),
            state: None,
        })
    }

    /// Runs SQL on the file through a separate plain connection: another
    /// client, or a test preparing a file the store must refuse.
    pub fn raw_sql(&self, path: &Path, sql: &str) -> Checked {
        if let Some(ran) = self.store.plain_sql(path, sql) {
            return ran.map_err(|error| Failure {
                check: format!("preparing the table with plain SQL: {sql}"),
                expected: "success".into(),
                actual: format!("Err({error})"),
                state: None,
            });
        }
        let run = || -> rusqlite::Result<()> {
            let conn = crate::shared_files::connect(path)?;
            conn.execute_batch(sql)
        };
        run().map_err(|error| Failure {
            check: format!("preparing the file with plain SQL: {sql}"),
            expected: "success".into(),
            actual: format!("Err({error})"),
            state: None,
        })
    }
}

/// A row as `enqueue` leaves it.
pub fn fresh(id: &str) -> Job {
    Job {
        id: id.into(),
        ..Job::default()
    }
}

/// A row held by `owner` with `fence` until `until`.
pub fn held(id: &str, owner: &str, fence: i64, until: f64) -> Job {
    Job {
        id: id.into(),
        owner: Some(owner.into()),
        until,
        fence: Fence(fence),
        result: None,
        done: false,
    }
}

/// A row completed by `owner` with `fence`, lease until `until`, storing `result`.
pub fn completed(id: &str, owner: &str, fence: i64, until: f64, result: &str) -> Job {
    Job {
        result: Some(result.into()),
        done: true,
        ..held(id, owner, fence, until)
    }
}
