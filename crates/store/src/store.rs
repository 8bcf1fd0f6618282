//! The job store: an ownership lease plus a fencing token, on SQLite.
//!
//! This file is the reference implementation. It reads top to bottom in the
//! worksheet's order: how a call reaches the file, then steps 1 to 8.
//!
//! Every operation exists twice with one contract: as a function taking the
//! database path, which opens its own connection for the one call (the
//! worksheet's form), and as a method of [`Store`], a handle that keeps its
//! connection for callers that make many calls. The function is always the
//! method called on a fresh handle, so both share every line that decides.
//!
//! Time is a caller-given clock in seconds (`now`), never read from the
//! machine. A lease is valid while `now < until`.

use crate::error::{Result, StoreError};
use crate::job::{Fence, Job};
use rusqlite::config::DbConfig;
use rusqlite::{named_params, Connection, ErrorCode, OpenFlags, OptionalExtension};
use rusqlite::{Transaction, TransactionBehavior};
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Barrier, OnceLock};
use std::thread;
use std::time::Duration;

/// How long a call waits for another connection's write lock, by default,
/// before it gives up with [`StoreError::Busy`].
///
/// Long enough that every thread of a [`claim_many`] gets its turn (each
/// turn is one short transaction), short enough that a stuck lock holder is
/// reported instead of hanging the caller.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The environment variable that overrides [`BUSY_TIMEOUT`], in milliseconds,
/// for every connection the process opens.
pub const BUSY_TIMEOUT_VARIABLE: &str = "LEASE_LAB_BUSY_TIMEOUT_MS";

thread_local! {
    static THREAD_BUSY_TIMEOUT: Cell<Option<Duration>> = const { Cell::new(None) };
}

/// Sets the busy timeout of the calls this thread makes (and of the claims
/// `claim_many` runs for it), over the environment and the default; `None`
/// goes back to them. For a caller that must not wait long, and for tests.
pub fn set_thread_busy_timeout(timeout: Option<Duration>) {
    THREAD_BUSY_TIMEOUT.with(|cell| cell.set(timeout));
}

/// The busy timeout in force on this thread: the one set with
/// [`set_thread_busy_timeout`], else [`BUSY_TIMEOUT_VARIABLE`] if it holds a
/// whole number of milliseconds, else [`BUSY_TIMEOUT`].
pub fn busy_timeout() -> Duration {
    THREAD_BUSY_TIMEOUT.with(Cell::get).unwrap_or_else(|| {
        std::env::var(BUSY_TIMEOUT_VARIABLE)
            .ok()
            .and_then(|text| text.trim().parse::<u64>().ok())
            .map_or(BUSY_TIMEOUT, Duration::from_millis)
    })
}

/// The longest nap between two tries for a lock.
const LONGEST_NAP: Duration = Duration::from_micros(1600);

/// The naps between the first tries for a lock; [`LONGEST_NAP`] after them.
const FIRST_NAPS: [Duration; 5] = [
    Duration::from_micros(50),
    Duration::from_micros(100),
    Duration::from_micros(200),
    Duration::from_micros(400),
    Duration::from_micros(800),
];

/// The nap after the `attempt`-th failed try.
fn nap(attempt: usize) -> Duration {
    *FIRST_NAPS.get(attempt).unwrap_or(&LONGEST_NAP)
}

/// How long a connection has waited for a lock after `attempts` naps,
/// counted in naps rather than read from a clock, so that the wait ends
/// after the same number of tries however busy the machine is.
fn waited_after(attempts: usize) -> Duration {
    (0..attempts).map(nap).sum()
}

/// SQLite's busy handler: nap and try again until the busy timeout is spent.
///
/// A claim holds the write lock for a fraction of a millisecond (plus one
/// fsync), but SQLite's own handler naps up to 100 ms between tries, so
/// under contention the lock would sit idle most of the time. Short naps
/// let a herd of racing claims through in a few milliseconds.
fn wait_for_lock(attempts: i32) -> bool {
    let attempts = usize::try_from(attempts).unwrap_or(0);
    if waited_after(attempts) >= busy_timeout() {
        return false;
    }
    thread::sleep(nap(attempts));
    true
}

/// The most threads [`claim_many`] runs at once; more owners share them.
///
/// SQLite lets one writer in at a time, so threads beyond a handful only
/// add connections that wait for the lock: 16 still race (more threads
/// than most machines have cores), while a claim of many owners opens 16
/// connections at once, not dozens, and each thread's connection waits
/// behind fewer others.
pub const MAX_CLAIM_THREADS: usize = 16;

// ---------------------------------------------------------------------------
// Reaching the file
// ---------------------------------------------------------------------------

/// A connection to one lease-lab database, kept for many operations.
///
/// The handle offers the eight operations with the same contract as the
/// path functions. It holds no cache: every read goes to the file, so what
/// another process wrote is always seen.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Opens an existing database made by [`init_db`].
    ///
    /// Errors: [`StoreError::NoDatabase`] when the file does not exist,
    /// [`StoreError::MissingFolder`] or [`StoreError::IsADirectory`] for a
    /// wrong path. A file that is not an SQLite database is reported by the
    /// first operation, which reads it.
    pub fn open(path: impl AsRef<Path>) -> Result<Store> {
        Store::connect(path.as_ref(), false)
    }

    fn connect(path: &Path, create: bool) -> Result<Store> {
        if path.as_os_str().is_empty() {
            return Err(invalid(
                "the database path must not be empty: name a database file".into(),
            ));
        }
        let path = path.to_path_buf();
        if path.is_dir() {
            return Err(StoreError::IsADirectory { path });
        }
        let folder = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !folder.is_dir() {
            return Err(StoreError::MissingFolder { path, folder });
        }
        if !create && !path.exists() {
            return Err(StoreError::NoDatabase { path });
        }
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE.union(OpenFlags::SQLITE_OPEN_NO_MUTEX);
        if create {
            flags.insert(OpenFlags::SQLITE_OPEN_CREATE);
        }
        let conn = Connection::open_with_flags(&path, flags).map_err(|e| fail(&path, e))?;
        let store = Store { conn, path };
        store
            .conn
            .busy_handler(Some(wait_for_lock))
            .map_err(|e| store.fail(e))?;
        // Each path function opens and closes a connection. By default the
        // last connection to close checkpoints the log into the database and
        // deletes it, so every call would pay for a checkpoint and for
        // rebuilding the log's index; the log is checkpointed automatically
        // as it grows instead. Durability is unchanged: commits are in the log.
        store
            .conn
            .set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)
            .map_err(|e| store.fail(e))?;
        // synchronous=FULL makes every commit wait until the write-ahead log
        // is on disk. With the default NORMAL, a commit in WAL mode can be
        // lost on power failure; the next claim would then hand out the lost
        // fence a second time, and two workers would hold the same token.
        store
            .conn
            .pragma_update(None, "synchronous", "FULL")
            .map_err(|e| store.fail(e))?;
        // Only a lease-lab table may be written: another program's `jobs`
        // table would take rows it cannot mean, or fail halfway with
        // SQLite's own words.
        if !create && !store.check_schema()? {
            return Err(StoreError::NoJobsTable { path: store.path });
        }
        Ok(store)
    }

    /// Starts the transaction that takes the database's write lock at once
    /// (`BEGIN IMMEDIATE`), waiting up to [`BUSY_TIMEOUT`] for it.
    fn begin_immediate(&self) -> Result<Transaction<'_>> {
        Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)
            .map_err(|e| self.fail(e))
    }

    fn fail(&self, error: rusqlite::Error) -> StoreError {
        fail(&self.path, error)
    }
}

/// Turns an SQLite error into one that names the file and what to do.
fn fail(path: &Path, error: rusqlite::Error) -> StoreError {
    let path = path.to_path_buf();
    match error.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => StoreError::Busy {
            path,
            waited: busy_timeout(),
        },
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => StoreError::NotADatabase {
            path,
            detail: error.to_string(),
        },
        Some(ErrorCode::ReadOnly) => StoreError::ReadOnly {
            path,
            detail: error.to_string(),
        },
        _ => StoreError::Sqlite {
            path,
            source: error,
        },
    }
}

fn invalid(message: String) -> StoreError {
    StoreError::InvalidArgument(message)
}

pub(crate) fn check_job_id(job_id: &str) -> Result<()> {
    if job_id.is_empty() {
        return Err(invalid("job id must not be empty".into()));
    }
    Ok(())
}

pub(crate) fn check_owner(owner: &str) -> Result<()> {
    if owner.is_empty() {
        return Err(invalid(
            "owner must not be empty: name the worker that holds the lease".into(),
        ));
    }
    Ok(())
}

pub(crate) fn check_now(now: f64) -> Result<()> {
    if !now.is_finite() {
        return Err(invalid(format!(
            "now must be a finite number of seconds (got {now})"
        )));
    }
    Ok(())
}

/// The checks shared by `claim` and `renew`: the lease would end at
/// `now + ttl`, which must be a finite time after `now`.
pub(crate) fn check_lease(job_id: &str, owner: &str, now: f64, ttl: f64) -> Result<f64> {
    check_job_id(job_id)?;
    check_owner(owner)?;
    check_now(now)?;
    if !ttl.is_finite() {
        return Err(invalid(format!(
            "ttl must be a finite number of seconds (got {ttl})"
        )));
    }
    let until = now + ttl;
    if !until.is_finite() {
        return Err(invalid(format!(
            "now + ttl overflows ({now} + {ttl}); use a smaller clock value or ttl"
        )));
    }
    // The lease must end after it starts: this refuses a ttl of 0 or less,
    // and also one below the clock's precision at `now`, which rounds away.
    if until <= now {
        return Err(invalid(format!(
            "ttl must be a number of seconds greater than 0 that moves the lease's end past now (got ttl {ttl} at now {now})"
        )));
    }
    Ok(until)
}

// ---------------------------------------------------------------------------
// Step 1. Create the lease state table
// ---------------------------------------------------------------------------

/// The columns `init_db` creates, and accepts in an existing table:
/// name, declared type, NOT NULL, default value, part of the primary key.
const COLUMNS: [(&str, &str, bool, Option<&str>, bool); 6] = [
    ("id", "TEXT", false, None, true),
    ("owner", "TEXT", false, None, false),
    ("until", "REAL", true, Some("0"), false),
    ("fence", "INTEGER", true, Some("0"), false),
    ("result", "TEXT", false, None, false),
    ("done", "INTEGER", true, Some("0"), false),
];

/// Creates the database file and its `jobs` table if they do not exist.
///
/// Idempotent: calling it again on a lease-lab database changes nothing,
/// and above all never resets a fence (a reset would make old tokens valid
/// again). It puts the file in WAL mode, so readers never wait for a writer.
///
/// Errors: an existing `jobs` table whose columns are not exactly the
/// schema gives [`StoreError::IncompatibleSchema`] and is left as it was; a
/// file that is not an SQLite database gives [`StoreError::NotADatabase`]
/// and is not written to.
pub fn init_db(path: impl AsRef<Path>) -> Result<()> {
    let store = Store::connect(path.as_ref(), true)?;
    // Refuse an incompatible file before the first write, which would
    // already change it (switching to WAL rewrites the file's header).
    store.check_schema()?;
    store.use_wal()?;
    let tx = store.begin_immediate()?;
    tx.execute(
        "CREATE TABLE IF NOT EXISTS jobs (id TEXT PRIMARY KEY, owner TEXT, \
         until REAL NOT NULL DEFAULT 0, fence INTEGER NOT NULL DEFAULT 0, \
         result TEXT, done INTEGER NOT NULL DEFAULT 0)",
        [],
    )
    .map_err(|e| store.fail(e))?;
    store.check_schema()?;
    tx.commit().map_err(|e| store.fail(e))?;
    // When the first write of a new file (the header that turns WAL on)
    // fails, SQLite commits through a rollback journal instead: the table
    // is stored, but the file is not in WAL mode. Switch it now, or fail.
    store.use_wal()
}

impl Store {
    /// Puts the file in WAL journal mode (a no-op when it is), or says
    /// why it cannot be.
    fn use_wal(&self) -> Result<()> {
        let mode: String = self
            .conn
            .query_row("PRAGMA journal_mode=WAL", [], |row| row.get(0))
            .map_err(|e| self.fail(e))?;
        if mode.eq_ignore_ascii_case("wal") {
            Ok(())
        } else {
            Err(StoreError::NotADatabase {
                path: self.path.clone(),
                detail: format!("it cannot use write-ahead logging (journal mode stays {mode})"),
            })
        }
    }

    /// Compares the `jobs` table with [`COLUMNS`], naming the first
    /// difference. Answers whether the table exists (a file without one
    /// passes the comparison: `init_db` makes it).
    fn check_schema(&self) -> Result<bool> {
        let mut statement = self
            .conn
            .prepare(
                "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info('jobs')",
            )
            .map_err(|e| self.fail(e))?;
        let found = statement
            .query_map([], |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, bool>(2)?,
                    row.get::<_, Option<String>>(3)?,
                    row.get::<_, i64>(4)? > 0,
                ))
            })
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(|e| self.fail(e))?;
        if found.is_empty() {
            return Ok(false);
        }
        let describe =
            |(name, kind, not_null, default, key): (&str, &str, bool, Option<&str>, bool)| {
                let mut text = format!("{name} {kind}");
                if key {
                    text.push_str(" PRIMARY KEY");
                }
                if not_null {
                    text.push_str(" NOT NULL");
                }
                if let Some(default) = default {
                    text.push_str(&format!(" DEFAULT {default}"));
                }
                text
            };
        for position in 0..found.len().max(COLUMNS.len()) {
            let expected = COLUMNS.get(position).copied();
            let actual = found
                .get(position)
                .map(|(name, kind, not_null, default, key)| {
                    (
                        name.as_str(),
                        kind.as_str(),
                        *not_null,
                        default.as_deref(),
                        *key,
                    )
                });
            let same = match (expected, actual) {
                (Some(e), Some(a)) => {
                    e.0 == a.0
                        && e.1.eq_ignore_ascii_case(a.1)
                        && e.2 == a.2
                        && e.3 == a.3
                        && e.4 == a.4
                }
                _ => false,
            };
            if !same {
                let detail = match (expected, actual) {
                    (Some(e), Some(a)) => format!(
                        "column {} is `{}`, expected `{}`",
                        position + 1,
                        describe(a),
                        describe(e)
                    ),
                    (Some(e), None) => format!("column `{}` is missing", describe(e)),
                    (None, Some(a)) => format!("unexpected extra column `{}`", describe(a)),
                    (None, None) => unreachable!("position is below one of the lengths"),
                };
                return Err(StoreError::IncompatibleSchema {
                    path: self.path.clone(),
                    detail,
                });
            }
        }
        Ok(true)
    }
}

// ---------------------------------------------------------------------------
// Step 2. Register only the first job
// ---------------------------------------------------------------------------

/// Adds a job in the default state (no owner, `until` 0, fence 0, not done).
///
/// Returns `true` when the job was added and `false` when a job with this id
/// already exists, which is then left exactly as it was: re-registering must
/// never reset a lease in progress or a fence.
pub fn enqueue(path: impl AsRef<Path>, job_id: &str) -> Result<bool> {
    Store::open(path)?.enqueue(job_id)
}

impl Store {
    /// [`enqueue`] on this handle's connection.
    pub fn enqueue(&self, job_id: &str) -> Result<bool> {
        check_job_id(job_id)?;
        let added = self
            .conn
            .execute(
                "INSERT OR IGNORE INTO jobs (id) VALUES (:id)",
                named_params! {":id": job_id},
            )
            .map_err(|e| self.fail(e))?;
        Ok(added == 1)
    }
}

// ---------------------------------------------------------------------------
// Step 3. Read the current state
// ---------------------------------------------------------------------------

/// The job's stored row, or `None` when no job has this id.
///
/// Reads through a connection opened for this call, so the answer is what
/// the file holds now, whoever wrote it.
pub fn state(path: impl AsRef<Path>, job_id: &str) -> Result<Option<Job>> {
    Store::open(path)?.state(job_id)
}

impl Store {
    /// [`state`] on this handle's connection.
    pub fn state(&self, job_id: &str) -> Result<Option<Job>> {
        check_job_id(job_id)?;
        let found = self
            .conn
            .query_row(
                "SELECT id, owner, until, fence, result, done FROM jobs WHERE id = :id",
                named_params! {":id": job_id},
                |row| {
                    Ok(Job {
                        id: row.get(0)?,
                        owner: row.get(1)?,
                        until: row.get(2)?,
                        fence: Fence(row.get(3)?),
                        result: row.get(4)?,
                        done: row.get::<_, i64>(5)? != 0,
                    })
                },
            )
            .optional()
            .map_err(|e| self.fail(e))?;
        Ok(found)
    }
}

// ---------------------------------------------------------------------------
// Step 4. Take an expired lease atomically
// ---------------------------------------------------------------------------

/// Takes the job's lease for `owner` until `now + ttl` and returns the new fence.
///
/// The lease can be taken when nobody holds it: never claimed, released, or
/// expired (`until <= now`: a lease ending exactly now is over). The fence
/// goes up by one. Returns `None`, changing nothing, for a missing job, a
/// done job, or a lease still valid (`until > now`).
///
/// Errors: [`StoreError::InvalidArgument`] when `ttl` is not a finite number
/// above zero, `now` is not finite, `now + ttl` overflows, or an id is empty.
pub fn claim(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    now: f64,
    ttl: f64,
) -> Result<Option<Fence>> {
    Store::open(path)?.claim(job_id, owner, now, ttl)
}

impl Store {
    /// [`claim`] on this handle's connection.
    pub fn claim(&self, job_id: &str, owner: &str, now: f64, ttl: f64) -> Result<Option<Fence>> {
        let until = check_lease(job_id, owner, now, ttl)?;
        // The lookup and the update run under one write lock. Were the lock
        // taken only for the update, two workers could both see the lease
        // expired and both take it.
        let tx = self.begin_immediate()?;
        let lease = self.read_lease(job_id)?;
        let Some((held_until, done)) = lease else {
            return Ok(None);
        };
        if done || held_until > now {
            return Ok(None);
        }
        let fence = tx
            .query_row(
                "UPDATE jobs SET owner = :owner, until = :until, fence = fence + 1 WHERE id = :id RETURNING fence",
                named_params! {":owner": owner, ":until": until, ":id": job_id},
                |row| row.get(0),
            )
            .map_err(|e| self.fail(e))?;
        tx.commit().map_err(|e| self.fail(e))?;
        Ok(Some(Fence(fence)))
    }

    /// The job's lease end and done flag, or `None` when it does not exist.
    fn read_lease(&self, job_id: &str) -> Result<Option<(f64, bool)>> {
        self.conn
            .query_row(
                "SELECT until, done FROM jobs WHERE id = :id",
                named_params! {":id": job_id},
                |row| Ok((row.get(0)?, row.get::<_, i64>(1)? != 0)),
            )
            .optional()
            .map_err(|e| self.fail(e))
    }
}

// ---------------------------------------------------------------------------
// Step 5. Only the current generation renews the lease
// ---------------------------------------------------------------------------

/// Extends the current lease to `now + ttl`.
///
/// Returns `true` only when `owner` and `fence` are the stored ones, the job
/// is not done, and the lease is still valid (`until > now`). An expired
/// lease cannot be revived: another worker may already have claimed it, or
/// may claim it at this very moment. Otherwise returns `false` and changes
/// nothing.
///
/// Errors: as for [`claim`].
pub fn renew(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    fence: Fence,
    now: f64,
    ttl: f64,
) -> Result<bool> {
    Store::open(path)?.renew(job_id, owner, fence, now, ttl)
}

impl Store {
    /// [`renew`] on this handle's connection.
    pub fn renew(
        &self,
        job_id: &str,
        owner: &str,
        fence: Fence,
        now: f64,
        ttl: f64,
    ) -> Result<bool> {
        let until = check_lease(job_id, owner, now, ttl)?;
        let renewed = self
            .conn
            .execute(
                "UPDATE jobs SET until = :until WHERE id = :id AND owner = :owner AND fence = :fence AND done = 0 AND until > :now",
                named_params! {":until": until, ":id": job_id, ":owner": owner, ":fence": fence.0, ":now": now},
            )
            .map_err(|e| self.fail(e))?;
        Ok(renewed == 1)
    }
}

// ---------------------------------------------------------------------------
// Step 6. Reject a stale completion
// ---------------------------------------------------------------------------

/// Stores `result` and marks the job done.
///
/// Returns `true` only for the current lease: `owner` and `fence` are the
/// stored ones, the job is not done yet, and `until > now`. A worker that
/// stalled past its lease and comes back with an older fence gets `false`,
/// and the stored result stays as it was.
///
/// Errors: [`StoreError::InvalidArgument`] when `now` is not finite or an
/// id is empty.
pub fn complete(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    fence: Fence,
    now: f64,
    result: &str,
) -> Result<bool> {
    Store::open(path)?.complete(job_id, owner, fence, now, result)
}

impl Store {
    /// [`complete`] on this handle's connection.
    pub fn complete(
        &self,
        job_id: &str,
        owner: &str,
        fence: Fence,
        now: f64,
        result: &str,
    ) -> Result<bool> {
        check_job_id(job_id)?;
        check_owner(owner)?;
        check_now(now)?;
        let completed = self
            .conn
            .execute(
                "UPDATE jobs SET result = :result, done = 1 WHERE id = :id AND owner = :owner AND fence = :fence AND done = 0 AND until > :now",
                named_params! {":result": result, ":id": job_id, ":owner": owner, ":fence": fence.0, ":now": now},
            )
            .map_err(|e| self.fail(e))?;
        Ok(completed == 1)
    }
}

// ---------------------------------------------------------------------------
// Step 7. Only the current worker returns the lease
// ---------------------------------------------------------------------------

/// Gives the lease back early: sets `owner` to NULL and `until` to 0.
///
/// Returns `true` only when `owner` and `fence` are the stored ones and the
/// job is not done. The fence is kept: were it reset, the next claim would
/// hand out a number an old worker may still hold. Otherwise returns
/// `false` and changes nothing.
pub fn release(path: impl AsRef<Path>, job_id: &str, owner: &str, fence: Fence) -> Result<bool> {
    Store::open(path)?.release(job_id, owner, fence)
}

impl Store {
    /// [`release`] on this handle's connection.
    pub fn release(&self, job_id: &str, owner: &str, fence: Fence) -> Result<bool> {
        check_job_id(job_id)?;
        check_owner(owner)?;
        let released = self
            .conn
            .execute(
                "UPDATE jobs SET owner = NULL, until = 0 WHERE id = :id AND owner = :owner AND fence = :fence AND done = 0",
                named_params! {":id": job_id, ":owner": owner, ":fence": fence.0},
            )
            .map_err(|e| self.fail(e))?;
        Ok(released == 1)
    }
}

// ---------------------------------------------------------------------------
// Step 8. There is one winner among concurrent claims
// ---------------------------------------------------------------------------

/// Runs [`claim`] for every owner at once and returns the answers in the
/// order of `owners`.
///
/// Each claim runs on its own thread and its own connection; the threads
/// (at most [`MAX_CLAIM_THREADS`], sharing the owners between them) wait at
/// a barrier and are released together, so the claims really race. For a
/// claimable job exactly one answer is a fence and the others are `None`.
///
/// Errors: the arguments are checked before any claim runs, as for
/// [`claim`]. If a claim fails (say the lock stayed busy), the first
/// failure in input order is returned; the other claims may have run.
pub fn claim_many(
    path: impl AsRef<Path>,
    job_id: &str,
    owners: &[&str],
    now: f64,
    ttl: f64,
) -> Result<Vec<Option<Fence>>> {
    let path = path.as_ref();
    for owner in owners {
        check_lease(job_id, owner, now, ttl)?;
    }
    let answers: Vec<OnceLock<Result<Option<Fence>>>> =
        owners.iter().map(|_| OnceLock::new()).collect();
    let next_owner = AtomicUsize::new(0);
    let threads = owners.len().min(MAX_CLAIM_THREADS);
    let start = Barrier::new(threads);
    let wait = busy_timeout();
    // A panic on a claiming thread (a bug, never an answer) is passed on
    // to the caller when the scope ends.
    thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                set_thread_busy_timeout(Some(wait));
                start.wait();
                loop {
                    let index = next_owner.fetch_add(1, Ordering::Relaxed);
                    let Some(owner) = owners.get(index) else {
                        break;
                    };
                    let _ = answers[index].set(claim(path, job_id, owner, now, ttl));
                }
            });
        }
    });
    answers
        .into_iter()
        .map(|answer| {
            answer
                .into_inner()
                .expect("every owner's claim ran to an answer")
        })
        .collect()
}
