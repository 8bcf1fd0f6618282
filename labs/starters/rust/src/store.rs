//! Your job store: an ownership lease plus a fencing token, on SQLite.
//!
//! Fill in the eight functions in order, one worksheet step each, and run
//! `lab check` after each step. Each function takes the database path and
//! opens its own connection for the one call (`rusqlite::Connection::open`,
//! or `open_with_flags` where no file may be created). Time is a number of
//! seconds given by the caller (`now`), never read from the machine: a lease
//! is valid while `now < until`, and over at `now == until`.
//!
//! Keep the signatures: `main.rs` calls these functions when the lab sends a
//! request, and answers each [`StoreError`] as its kind in the lab's
//! protocol. The argument checks, the schema and every SQL statement are
//! yours to write. Errors:
//!
//! - `Err(StoreError::InvalidArgument(..))` where the contract says an
//!   argument is invalid (the worksheet's `ValueError`);
//! - the error of its kind where a call cannot be carried out:
//!   `StoreError::NoDatabase { path }` for a missing file,
//!   `MissingFolder`, `IsADirectory`, `NoJobsTable`, or
//!   `IncompatibleSchema { path, detail }` for a `jobs` table with other
//!   columns;
//! - an SQLite error as it is:
//!   `.map_err(|source| StoreError::Sqlite { path: path.to_path_buf(), source })`;
//!   `main.rs` answers a lock that stayed busy, a read-only file and a file
//!   that is not a database as their own kinds, from SQLite's code;
//! - a `todo!()` still in place answers "not implemented", and the lab's
//!   tests of that step say so.
//!
//! A `false` or `None` is an answer (the lease check said no), not an error.

// The stubs use none of their arguments yet: delete this line when they do.
#![allow(unused_variables, unused_imports)]

use crate::error::{Result, StoreError};
use crate::job::{Fence, Job};
use std::path::Path;

/// Step 1. Create the lease state table.
///
/// Creates the database file if it is missing and, if it does not exist yet,
/// the table `jobs(id TEXT PRIMARY KEY, owner TEXT, until REAL NOT NULL
/// DEFAULT 0, fence INTEGER NOT NULL DEFAULT 0, result TEXT, done INTEGER NOT
/// NULL DEFAULT 0)`, and puts the file in WAL journal mode (readers never
/// wait for a writer).
///
/// Idempotent: calling it again on a lease-lab database changes nothing, and
/// above all never resets a fence (a reset would make old tokens valid
/// again). An existing `jobs` table with other columns, or a file that is not
/// an SQLite database, is an error and the file is left as it was. An empty
/// path is an invalid argument.
pub fn init_db(path: impl AsRef<Path>) -> Result<()> {
    todo!("step 1: create the jobs table, idempotently")
}

/// Step 2. Register only the first job.
///
/// Inserts a job with this id in the default state (no owner, `until` 0,
/// fence 0, no result, not done) and returns `true`. If a job with this id
/// already exists, returns `false` and leaves it exactly as it was:
/// re-registering must never reset a lease in progress or a fence.
///
/// An empty `job_id` is an invalid argument. The database must exist
/// (`init_db`): no file is created here.
pub fn enqueue(path: impl AsRef<Path>, job_id: &str) -> Result<bool> {
    todo!("step 2: add a job that does not exist yet")
}

/// Step 3. Read the current state.
///
/// Returns the job's stored row (`id`, `owner`, `until`, `fence`, `result`,
/// `done`), or `None` when no job has this id. It reads through a connection
/// opened for this call, so the answer is what the file holds now, whoever
/// wrote it.
///
/// An empty `job_id` is an invalid argument.
pub fn state(path: impl AsRef<Path>, job_id: &str) -> Result<Option<Job>> {
    todo!("step 3: read the job's row")
}

/// Step 4. Take an expired lease atomically.
///
/// `ttl <= 0` is an invalid argument (so are an empty `job_id` or `owner`, a
/// `now` or `ttl` that is not finite, and a `now + ttl` that overflows or
/// rounds back to `now`); nothing is written. A job that does not exist, a
/// completed job, or a job whose lease is still valid (`until > now`) gives
/// `None` and changes nothing. Otherwise it stores `owner` and
/// `until = now + ttl`, increments `fence` by exactly 1, and returns the new
/// fence.
///
/// The boundary `now == until` can be reassigned: a lease is over at its
/// end. The lookup and the update run inside one `BEGIN IMMEDIATE`
/// transaction, so no other claim can slip in between them.
pub fn claim(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    now: f64,
    ttl: f64,
) -> Result<Option<Fence>> {
    todo!("step 4: take an expired lease and return the next fence")
}

/// Step 5. Only the current generation renews the lease.
///
/// `ttl <= 0` is an invalid argument, as for [`claim`]. Only when `owner`
/// and `fence` are the stored ones, the job is not done (`done = 0`) and the
/// lease is still valid (`until > now`) does it set `until = now + ttl` and
/// return `true`; otherwise it returns `false` and changes nothing. At
/// `now == until` the lease is over and cannot be revived: another worker
/// may claim it at that very instant.
pub fn renew(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    fence: Fence,
    now: f64,
    ttl: f64,
) -> Result<bool> {
    todo!("step 5: extend the current lease")
}

/// Step 6. Reject a stale completion.
///
/// Stores `result`, sets `done = 1` and returns `true` only for the current
/// lease: `owner` and `fence` are the stored ones, the job is not done yet
/// (`done = 0`), and `until > now`. Otherwise returns `false` and the stored
/// row, its result above all, stays exactly as it was: a worker that stalled
/// past its lease and comes back with an older fence cannot overwrite the
/// newer owner's result, and a job is completed at most once.
///
/// An empty `job_id` or `owner`, or a `now` that is not finite, is an
/// invalid argument.
pub fn complete(
    path: impl AsRef<Path>,
    job_id: &str,
    owner: &str,
    fence: Fence,
    now: f64,
    result: &str,
) -> Result<bool> {
    todo!("step 6: store the result for the current lease only")
}

/// Step 7. Only the current worker returns the lease.
///
/// When `owner` and `fence` are the stored ones and the job is not done
/// (`done = 0`), sets `owner` to NULL and `until` to 0 and returns `true`;
/// the job is then claimable at once. The fence is kept: were it reset, the
/// next claim would hand out a number an old worker may still hold.
/// Otherwise returns `false` and changes nothing.
///
/// An empty `job_id` or `owner` is an invalid argument.
pub fn release(path: impl AsRef<Path>, job_id: &str, owner: &str, fence: Fence) -> Result<bool> {
    todo!("step 7: give the lease back, keeping the fence")
}

/// Step 8. There is one winner among concurrent claims.
///
/// Calls [`claim`] for every owner concurrently, each on a thread and a
/// connection of its own (`std::thread::scope` helps), and returns their
/// answers in the order of `owners`: one entry per owner, an empty vector
/// for no owners. For a claimable job exactly one entry is a fence and the
/// rest are `None`.
///
/// The arguments are checked for every owner before any claim runs: an
/// invalid argument (`ttl <= 0`, an empty owner) claims nothing. If a claim
/// fails, the first failure in the order of `owners` is returned.
pub fn claim_many(
    path: impl AsRef<Path>,
    job_id: &str,
    owners: &[&str],
    now: f64,
    ttl: f64,
) -> Result<Vec<Option<Fence>>> {
    todo!("step 8: race one claim per owner, answers in owner order")
}
