//! The job store on PostgreSQL: the same lease and fence as
//! [`crate::store`], on a database server that workers on other machines
//! reach over a network.
//!
//! This file is the reference implementation for the server. It reads top
//! to bottom in the worksheet's order: how a call reaches the server, then
//! steps 1 to 8. The table is the worksheet's `jobs`, with `until` a
//! `double precision`; the arguments are checked by the same rules as the
//! file store's ([`crate::store`]).
//!
//! What changes on a server is how "one winner" is kept: PostgreSQL's
//! default isolation is READ COMMITTED, where a `SELECT` then an `UPDATE`
//! can both see the lease expired. So a claim is one `UPDATE ... WHERE`
//! the lease is over `... RETURNING fence`: two claims of one row queue on
//! its row lock, and the second re-reads the row the first committed and
//! finds the lease taken. `synchronous_commit` is left on, so an answered
//! claim's fence survives the server's crash.
//!
//! Time is a caller-given clock in seconds (`now`), never the server's
//! `now()`: the workers' clocks are what the lease is judged by, as on the
//! file.

use crate::error::StoreError;
use crate::job::{Fence, Job};
use crate::store::{check_job_id, check_lease, check_now, check_owner, MAX_CLAIM_THREADS};
use postgres::{Client, NoTls};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex, OnceLock};
use std::thread;

/// The result of a call on the server.
pub type Result<T> = std::result::Result<T, StoreError>;

// ---------------------------------------------------------------------------
// How a call reaches the server
// ---------------------------------------------------------------------------

/// A connection to the server, kept for many calls: every operation is a
/// method. One call at a time goes through it; `claim_many` opens one
/// connection per racing thread, as separate workers would.
pub struct Postgres {
    /// The connection string, for `claim_many`'s own connections.
    dsn: String,
    /// The schema that holds the `jobs` table, when not the server's
    /// default (`public`): each test of a suite gets one of its own.
    schema: Option<String>,
    /// The server as errors name it: the connection string without a
    /// password.
    server: String,
    client: Mutex<Client>,
}

impl Postgres {
    /// Connects to the server at `dsn` (a PostgreSQL connection string,
    /// `host=/tmp/socket user=lab dbname=lab` or `postgresql://...`).
    ///
    /// Errors: [`StoreError::Server`] when the server cannot be reached or
    /// refuses the connection, saying so and what to check.
    pub fn connect(dsn: &str) -> Result<Postgres> {
        Postgres::connect_in(dsn, None)
    }

    /// Connects to the server at `dsn`, with the `jobs` table in `schema`
    /// (made if missing; a name of letters, digits and `_`), or in the
    /// server's default schema when `None`.
    ///
    /// Errors: as for [`Postgres::connect`], and an invalid schema name.
    pub fn connect_in(dsn: &str, schema: Option<&str>) -> Result<Postgres> {
        let server = crate::error::without_password(dsn);
        let cannot = |error: &postgres::Error| {
            StoreError::Server {
            detail: format!(
                "cannot connect ({}); check that the server runs and that the connection string names it",
                reason(error)
            ),
            server: server.clone(),
        }
        };
        let mut client = Client::connect(dsn, NoTls).map_err(|error| cannot(&error))?;
        if let Some(schema) = schema {
            if schema.is_empty()
                || !schema
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                return Err(StoreError::InvalidArgument(format!(
                    "a schema's name is letters, digits and _ (got {schema:?})"
                )));
            }
            client
                .batch_execute(&format!(
                    "CREATE SCHEMA IF NOT EXISTS {schema}; SET search_path TO {schema}"
                ))
                .map_err(|error| cannot(&error))?;
        }
        Ok(Postgres {
            dsn: dsn.to_string(),
            schema: schema.map(str::to_string),
            server,
            client: Mutex::new(client),
        })
    }

    /// Runs `body` on the connection.
    fn with<T>(
        &self,
        body: impl FnOnce(&mut Client) -> std::result::Result<T, postgres::Error>,
    ) -> Result<T> {
        // A panic while the connection was held leaves it usable: the
        // server rolls back whatever the call had begun.
        let mut client = self
            .client
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        body(&mut client).map_err(|error| self.fail(&error))
    }

    /// A server error as the lab says it, with what to do.
    fn fail(&self, error: &postgres::Error) -> StoreError {
        let detail = match error.code().map(postgres::error::SqlState::code) {
            Some("42P01") => {
                "there is no jobs table here; create it with init_db (`lab db init --engine postgres`)"
                    .to_string()
            }
            _ => reason(error),
        };
        StoreError::Server {
            server: self.server.clone(),
            detail,
        }
    }
}

/// What the server or the client said, in one line: the server's message
/// and its code, or the client's error and its cause (`error connecting to
/// server: No such file or directory (os error 2)`).
fn reason(error: &postgres::Error) -> String {
    match (error.as_db_error(), std::error::Error::source(error)) {
        (Some(db), _) => format!("{} ({})", db.message(), db.code().code()),
        (None, Some(cause)) => format!("{error}: {cause}"),
        (None, None) => error.to_string(),
    }
}

// ---------------------------------------------------------------------------
// Step 1. Create the lease state table
// ---------------------------------------------------------------------------

impl Postgres {
    /// Creates the `jobs` table if it does not exist. Idempotent: a second
    /// call changes nothing, and keeps every job and fence.
    pub fn init_db(&self) -> Result<()> {
        self.with(|client| {
            client.batch_execute(
                "CREATE TABLE IF NOT EXISTS jobs (
                    id TEXT PRIMARY KEY,
                    owner TEXT,
                    until DOUBLE PRECISION NOT NULL DEFAULT 0,
                    fence BIGINT NOT NULL DEFAULT 0,
                    result TEXT,
                    done INTEGER NOT NULL DEFAULT 0
                )",
            )
        })
    }
}

// ---------------------------------------------------------------------------
// Step 2. Enqueue a job
// ---------------------------------------------------------------------------

impl Postgres {
    /// Adds the job in the default state. Returns `false`, changing
    /// nothing, when the id exists already.
    ///
    /// Errors: [`StoreError::InvalidArgument`] for an empty id.
    pub fn enqueue(&self, job_id: &str) -> Result<bool> {
        check_job_id(job_id)?;
        let added = self.with(|client| {
            client.execute(
                "INSERT INTO jobs (id) VALUES ($1) ON CONFLICT (id) DO NOTHING",
                &[&job_id],
            )
        })?;
        Ok(added == 1)
    }
}

// ---------------------------------------------------------------------------
// Step 3. Read a job's state
// ---------------------------------------------------------------------------

impl Postgres {
    /// The job's stored row, or `None` when it does not exist.
    ///
    /// Errors: [`StoreError::InvalidArgument`] for an empty id.
    pub fn state(&self, job_id: &str) -> Result<Option<Job>> {
        check_job_id(job_id)?;
        let row = self.with(|client| {
            client.query_opt(
                "SELECT id, owner, until, fence, result, done FROM jobs WHERE id = $1",
                &[&job_id],
            )
        })?;
        Ok(row.as_ref().map(job_of))
    }
}

/// A row of `SELECT id, owner, until, fence, result, done FROM jobs` as a
/// [`Job`].
pub(crate) fn job_of(row: &postgres::Row) -> Job {
    Job {
        id: row.get(0),
        owner: row.get(1),
        until: row.get(2),
        fence: Fence(row.get(3)),
        result: row.get(4),
        done: row.get::<_, i32>(5) != 0,
    }
}

// ---------------------------------------------------------------------------
// Step 4. Claim only an expired lease, and raise the fence
// ---------------------------------------------------------------------------

impl Postgres {
    /// Takes the job's lease for `owner` until `now + ttl` and returns the
    /// new fence, when nobody holds it (`until <= now`) and it is not done;
    /// `None`, changing nothing, otherwise.
    ///
    /// One statement: a concurrent claim of the row waits for this one's
    /// row lock, then re-reads the row and finds the lease taken.
    ///
    /// Errors: as for [`crate::store::claim`].
    pub fn claim(&self, job_id: &str, owner: &str, now: f64, ttl: f64) -> Result<Option<Fence>> {
        let until = check_lease(job_id, owner, now, ttl)?;
        let row = self.with(|client| {
            client.query_opt(
                "UPDATE jobs SET owner = $1, until = $2, fence = fence + 1 \
                 WHERE id = $3 AND done = 0 AND until <= $4 RETURNING fence",
                &[&owner, &until, &job_id, &now],
            )
        })?;
        Ok(row.map(|row| Fence(row.get(0))))
    }
}

// ---------------------------------------------------------------------------
// Step 5. Only the current generation renews the lease
// ---------------------------------------------------------------------------

impl Postgres {
    /// Extends the current lease to `now + ttl`: `true` only when `owner`
    /// and `fence` are the stored ones, the job is not done and the lease
    /// is still valid (`until > now`).
    ///
    /// Errors: as for [`crate::store::claim`].
    pub fn renew(
        &self,
        job_id: &str,
        owner: &str,
        fence: Fence,
        now: f64,
        ttl: f64,
    ) -> Result<bool> {
        let until = check_lease(job_id, owner, now, ttl)?;
        let renewed = self.with(|client| {
            client.execute(
                "UPDATE jobs SET until = $1 \
                 WHERE id = $2 AND owner = $3 AND fence = $4 AND done = 0 AND until > $5",
                &[&until, &job_id, &owner, &fence.0, &now],
            )
        })?;
        Ok(renewed == 1)
    }
}

// ---------------------------------------------------------------------------
// Step 6. Reject a stale completion
// ---------------------------------------------------------------------------

impl Postgres {
    /// Stores `result` and marks the job done: `true` only for the current
    /// lease (`owner` and `fence` the stored ones, not done, `until > now`).
    ///
    /// Errors: [`StoreError::InvalidArgument`] when `now` is not finite or
    /// an id is empty.
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
        let completed = self.with(|client| {
            client.execute(
                "UPDATE jobs SET result = $1, done = 1 \
                 WHERE id = $2 AND owner = $3 AND fence = $4 AND done = 0 AND until > $5",
                &[&result, &job_id, &owner, &fence.0, &now],
            )
        })?;
        Ok(completed == 1)
    }
}

// ---------------------------------------------------------------------------
// Step 7. Only the current worker returns the lease
// ---------------------------------------------------------------------------

impl Postgres {
    /// Gives the lease back early (owner NULL, until 0), keeping the fence:
    /// `true` only when `owner` and `fence` are the stored ones and the job
    /// is not done.
    ///
    /// Errors: [`StoreError::InvalidArgument`] for an empty id or owner.
    pub fn release(&self, job_id: &str, owner: &str, fence: Fence) -> Result<bool> {
        check_job_id(job_id)?;
        check_owner(owner)?;
        let released = self.with(|client| {
            client.execute(
                "UPDATE jobs SET owner = NULL, until = 0 \
                 WHERE id = $1 AND owner = $2 AND fence = $3 AND done = 0",
                &[&job_id, &owner, &fence.0],
            )
        })?;
        Ok(released == 1)
    }
}

// ---------------------------------------------------------------------------
// Step 8. There is one winner among concurrent claims
// ---------------------------------------------------------------------------

impl Postgres {
    /// Runs [`Postgres::claim`] for every owner at once, each thread on a
    /// connection of its own (at most [`MAX_CLAIM_THREADS`] threads, which
    /// share the owners), released together at a barrier so that the claims
    /// really race; the answers in the order of `owners`.
    ///
    /// Errors: the arguments are checked before any claim runs; if a claim
    /// fails, the first failure in input order is returned (the other
    /// claims may have run).
    pub fn claim_many(
        &self,
        job_id: &str,
        owners: &[&str],
        now: f64,
        ttl: f64,
    ) -> Result<Vec<Option<Fence>>> {
        for owner in owners {
            check_lease(job_id, owner, now, ttl)?;
        }
        let answers: Vec<OnceLock<Result<Option<Fence>>>> =
            owners.iter().map(|_| OnceLock::new()).collect();
        let next_owner = AtomicUsize::new(0);
        let threads = owners.len().min(MAX_CLAIM_THREADS);
        let start = Barrier::new(threads);
        thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| {
                    // Connected before the barrier, so that the claims, not
                    // the connections, race.
                    let connection = Postgres::connect_in(&self.dsn, self.schema.as_deref());
                    start.wait();
                    loop {
                        let index = next_owner.fetch_add(1, Ordering::SeqCst);
                        let Some(owner) = owners.get(index) else {
                            break;
                        };
                        let answer = match &connection {
                            Ok(store) => store.claim(job_id, owner, now, ttl),
                            Err(error) => Err(StoreError::Server {
                                server: self.server.clone(),
                                detail: error.detail(),
                            }),
                        };
                        let _ = answers[index].set(answer);
                    }
                });
            }
        });
        answers
            .into_iter()
            .map(|answer| answer.into_inner().expect("every owner's claim ran"))
            .collect()
    }
}
