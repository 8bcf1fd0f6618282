//! A PostgreSQL server for the lab: the one it is given (`--dsn`, or
//! `LEASE_LAB_PG`), or a throwaway cluster it starts and removes.
//!
//! A throwaway cluster is PostgreSQL's own `initdb` and `postgres` on a
//! Unix socket in a temporary folder, listening on no network address, run
//! as the `postgres` user when the lab runs as root (PostgreSQL refuses to
//! run as root). It is stopped and its folder removed when the
//! [`Cluster`] is dropped, however the run ends short of a kill of the lab
//! itself; and even then the server, whose parent was the lab, finds its
//! folder gone at its next checkpoint.

use crate::job::Job;
use crate::job_store::{HeldLock, JobStore};
use crate::operation::{Answer, Operation};
use crate::store_postgres::Postgres;
use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// The environment variable that names the server to use.
pub const DSN_VARIABLE: &str = "LEASE_LAB_PG";

/// How often a new cluster is tried until it accepts a connection.
const TRY_EVERY: Duration = Duration::from_millis(50);

/// How many times it is tried: for 30 s in all.
const TRIES: u32 = 600;

/// Why no server could be had.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// PostgreSQL's programs are not installed.
    #[error(
        "PostgreSQL is not installed: `{program}` was found neither on the PATH nor in \
         /usr/lib/postgresql/*/bin; install the server (on Debian or Ubuntu: \
         `apt-get install postgresql`), or give the lab a server with --dsn URL or {DSN_VARIABLE}"
    )]
    NotInstalled {
        /// The program looked for.
        program: &'static str,
    },
    /// A step of making the cluster failed.
    #[error("the throwaway PostgreSQL cluster could not be made: {step} failed: {detail}")]
    Step {
        /// The step: `initdb`, `starting postgres`, ...
        step: &'static str,
        /// What went wrong, with the program's own words.
        detail: String,
    },
}

/// A throwaway cluster, running until dropped.
#[derive(Debug)]
pub struct Cluster {
    /// The server's process.
    server: Child,
    /// Its folder: the data directory and the socket's.
    folder: tempfile::TempDir,
    /// How to connect to it.
    dsn: String,
}

impl Cluster {
    /// Makes a cluster in a new folder under `scratch` and starts it.
    ///
    /// Errors: PostgreSQL is not installed, or a step failed (its output
    /// said).
    pub fn start(scratch: &Path) -> Result<Cluster, ServerError> {
        let initdb = find("initdb")?;
        let postgres = find("postgres")?;
        let step = |step: &'static str| {
            move |error: std::io::Error| ServerError::Step {
                step,
                detail: error.to_string(),
            }
        };
        let folder = tempfile::Builder::new()
            .prefix("lease-lab-pg-")
            .tempdir_in(scratch)
            .map_err(step("making its folder"))?;
        let data = folder.path().join("data");
        let owner = server_user();
        if let Some((uid, gid)) = owner {
            // The server's user must own its folder, and reach it.
            chown(folder.path(), uid, gid).map_err(step("handing its folder to postgres"))?;
            std::fs::set_permissions(folder.path(), std::fs::Permissions::from_mode(0o700))
                .map_err(step("handing its folder to postgres"))?;
        }
        let mut init = Command::new(&initdb);
        init.args([
            "--auth=trust",
            "--username=lab",
            "--encoding=UTF8",
            "--no-sync",
            "-D",
        ])
        .arg(&data);
        let output = as_server_user(&mut init, owner)
            .output()
            .map_err(step("initdb"))?;
        if !output.status.success() {
            return Err(ServerError::Step {
                step: "initdb",
                detail: String::from_utf8_lossy(&output.stderr).trim().to_string(),
            });
        }
        let mut run = Command::new(&postgres);
        run.arg("-D")
            .arg(&data)
            .args(["-c", "listen_addresses=", "-c"])
            .arg(format!(
                "unix_socket_directories={}",
                folder.path().display()
            ))
            .args(["-c", "fsync=on", "-c", "synchronous_commit=on"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let server = as_server_user(&mut run, owner)
            .spawn()
            .map_err(step("starting postgres"))?;
        let dsn = format!("host={} user=lab dbname=postgres", folder.path().display());
        let mut cluster = Cluster {
            server,
            folder,
            dsn,
        };
        cluster.wait_until_ready()?;
        Ok(cluster)
    }

    /// How to connect to it.
    pub fn dsn(&self) -> &str {
        &self.dsn
    }

    /// The folder that holds it.
    pub fn folder(&self) -> &Path {
        self.folder.path()
    }

    /// Waits until the server accepts a connection: tries every
    /// [`TRY_EVERY`], [`TRIES`] times at most.
    fn wait_until_ready(&mut self) -> Result<(), ServerError> {
        for _ in 0..TRIES {
            if postgres::Client::connect(&self.dsn, postgres::NoTls).is_ok() {
                return Ok(());
            }
            if let Ok(Some(status)) = self.server.try_wait() {
                let mut said = String::new();
                if let Some(mut stderr) = self.server.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut stderr, &mut said);
                }
                return Err(ServerError::Step {
                    step: "starting postgres",
                    detail: format!("it ended ({status}): {}", said.trim()),
                });
            }
            std::thread::sleep(TRY_EVERY);
        }
        Err(ServerError::Step {
            step: "starting postgres",
            detail: format!(
                "it accepted no connection in {} s",
                (TRY_EVERY * TRIES).as_secs()
            ),
        })
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // SIGINT: PostgreSQL's fast shutdown (the clients are cut off, the
        // server ends at once); then the folder goes with `folder`.
        if let Ok(pid) = libc::pid_t::try_from(self.server.id()) {
            // SAFETY: kill(2) has no memory effects; a pid gone gives ESRCH.
            unsafe {
                libc::kill(pid, libc::SIGINT);
            }
        }
        let _ = self.server.wait();
    }
}

/// `operation` on the PostgreSQL store `store`, as the protocol answers it.
/// (`init_db` takes no path: the server holds the table.)
///
/// Errors: the store's, as each operation documents them.
pub fn call(
    store: &crate::store_postgres::Postgres,
    operation: &Operation,
) -> crate::store_postgres::Result<Answer> {
    Ok(match operation {
        Operation::InitDb => {
            store.init_db()?;
            Answer::Done
        }
        Operation::Enqueue { job_id } => Answer::Bool(store.enqueue(job_id)?),
        Operation::State { job_id } => Answer::Row(store.state(job_id)?),
        Operation::Claim {
            job_id,
            owner,
            now,
            ttl,
        } => Answer::Fence(store.claim(job_id, owner, *now, *ttl)?),
        Operation::Renew {
            job_id,
            owner,
            fence,
            now,
            ttl,
        } => Answer::Bool(store.renew(job_id, owner, *fence, *now, *ttl)?),
        Operation::Complete {
            job_id,
            owner,
            fence,
            now,
            result,
        } => Answer::Bool(store.complete(job_id, owner, *fence, *now, result)?),
        Operation::Release {
            job_id,
            owner,
            fence,
        } => Answer::Bool(store.release(job_id, owner, *fence)?),
        Operation::ClaimMany {
            job_id,
            owners,
            now,
            ttl,
        } => {
            let owners: Vec<&str> = owners.iter().map(String::as_str).collect();
            Answer::Fences(store.claim_many(job_id, &owners, *now, *ttl)?)
        }
    })
}

/// The store on a PostgreSQL server as the suite and the lab's runs see it
/// (a [`JobStore`]): each database path a schema of its own, made on its
/// first call, so that every test has a fresh table; each call on a
/// connection of its own; the stored rows read on another.
pub struct OnServer {
    dsn: String,
    /// The schema of each database path seen.
    schemas: Mutex<HashMap<PathBuf, String>>,
    /// The next schema's number.
    next: AtomicUsize,
}

impl OnServer {
    /// The store on the server at `dsn`.
    pub fn new(dsn: &str) -> OnServer {
        OnServer {
            dsn: dsn.to_string(),
            schemas: Mutex::new(HashMap::new()),
            next: AtomicUsize::new(0),
        }
    }

    /// The schema of `db`: a new one for a path not seen before
    /// (`lab_PID_N`, so that two runs on one server never share one).
    fn schema(&self, db: &Path) -> String {
        let mut schemas = self
            .schemas
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        schemas
            .entry(db.to_path_buf())
            .or_insert_with(|| {
                format!(
                    "lab_{}_{}",
                    std::process::id(),
                    self.next.fetch_add(1, Ordering::SeqCst)
                )
            })
            .clone()
    }

    /// The schema of `db`, and a store on it with a connection of its own
    /// for one call, as the worksheet's path functions open one: calls
    /// from several threads race on the server as several workers' would.
    ///
    /// Errors: the server cannot be reached.
    fn on(&self, db: &Path) -> crate::error::Result<(String, Postgres)> {
        let schema = self.schema(db);
        let store = Postgres::connect_in(&self.dsn, Some(&schema))?;
        Ok((schema, store))
    }
}

impl OnServer {
    /// The schema of `db`, and a new connection to the server that is not
    /// the store's: another client's. (Before `init_db` the schema is not
    /// there, and what it reads or writes fails, as on a file with no
    /// table.)
    fn plain_client(&self, db: &Path) -> Result<(String, postgres::Client), String> {
        let schema = self.schema(db);
        let client = postgres::Client::connect(&self.dsn, postgres::NoTls)
            .map_err(|error| error.to_string())?;
        Ok((schema, client))
    }
}

/// Every row of a table locked by another client (`SELECT ... FOR UPDATE`
/// in an open transaction), and a third client that watches who waits.
struct RowsHeld {
    holder: postgres::Client,
    watcher: Mutex<postgres::Client>,
}

impl HeldLock for RowsHeld {
    fn waiting(&self) -> Result<usize, String> {
        let mut watcher = self
            .watcher
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let row = watcher
            .query_one(
                "SELECT count(*) FROM pg_stat_activity \
                 WHERE wait_event_type = 'Lock' AND datname = current_database()",
                &[],
            )
            .map_err(|error| error.to_string())?;
        Ok(usize::try_from(row.get::<_, i64>(0)).unwrap_or(0))
    }

    fn let_go(self: Box<Self>) -> Result<(), String> {
        let mut holder = self.holder;
        holder
            .batch_execute("ROLLBACK")
            .map_err(|error| error.to_string())
    }
}

impl JobStore for OnServer {
    fn call(&self, db: &Path, operation: &Operation) -> crate::error::Result<Answer> {
        call(&self.on(db)?.1, operation)
    }

    fn store_row(&self, db: &Path, row: &Job) -> Option<Result<(), String>> {
        let write = || -> Result<(), String> {
            let (schema, mut client) = self.plain_client(db)?;
            client
                .execute(
                    &format!(
                        "INSERT INTO {schema}.jobs (id, owner, until, fence, result, done) \
                         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO UPDATE SET \
                         owner = $2, until = $3, fence = $4, result = $5, done = $6"
                    ),
                    &[
                        &row.id,
                        &row.owner,
                        &row.until,
                        &row.fence.0,
                        &row.result,
                        &i32::from(row.done),
                    ],
                )
                .map(|_| ())
                .map_err(|error| error.to_string())
        };
        Some(write())
    }

    fn plain_sql(&self, db: &Path, sql: &str) -> Option<Result<(), String>> {
        let run = || -> Result<(), String> {
            let (schema, mut client) = self.plain_client(db)?;
            client
                .batch_execute(&format!("SET search_path TO {schema}; {sql}"))
                .map_err(|error| error.to_string())
        };
        Some(run())
    }

    fn hold_every_row(&self, db: &Path) -> Option<Result<Box<dyn HeldLock>, String>> {
        let hold = || -> Result<Box<dyn HeldLock>, String> {
            let (schema, mut holder) = self.plain_client(db)?;
            holder
                .batch_execute(&format!("BEGIN; SELECT id FROM {schema}.jobs FOR UPDATE"))
                .map_err(|error| error.to_string())?;
            let (_, watcher) = self.plain_client(db)?;
            Ok(Box::new(RowsHeld {
                holder,
                watcher: Mutex::new(watcher),
            }))
        };
        Some(hold())
    }

    fn stored_rows(&self, db: &Path) -> Option<Result<Vec<Job>, String>> {
        let read = || -> Result<Vec<Job>, String> {
            let (schema, mut client) = self.plain_client(db)?;
            let rows = client
                .query(
                    &format!(
                        "SELECT id, owner, until, fence, result, done FROM {schema}.jobs ORDER BY id"
                    ),
                    &[],
                )
                .map_err(|error| error.to_string())?;
            Ok(rows.iter().map(crate::store_postgres::job_of).collect())
        };
        Some(read())
    }
}

/// The server to use: `dsn` when given, else the environment's
/// [`DSN_VARIABLE`], else `None` (then the lab starts a [`Cluster`]).
pub fn given(dsn: Option<&str>) -> Option<String> {
    dsn.map(str::to_string).or_else(|| {
        std::env::var(DSN_VARIABLE)
            .ok()
            .filter(|dsn| !dsn.is_empty())
    })
}

/// A connection string without its password (`password=...` or the
/// `user:password@` of a URL), safe to print.
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

/// PostgreSQL's `program`, on the PATH or where Debian installs it.
fn find(program: &'static str) -> Result<PathBuf, ServerError> {
    let on_path = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .unwrap_or_default();
    let mut debian: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|versions| {
            versions
                .filter_map(|version| version.ok().map(|entry| entry.path().join("bin")))
                .collect()
        })
        .unwrap_or_default();
    // The newest version first.
    debian.sort();
    debian.reverse();
    on_path
        .into_iter()
        .chain(debian)
        .map(|folder| folder.join(program))
        .find(|candidate| candidate.is_file())
        .ok_or(ServerError::NotInstalled { program })
}

/// The `postgres` user's uid and gid when the lab runs as root (the server
/// refuses to run as root), else `None`: the server runs as the lab's user.
fn server_user() -> Option<(u32, u32)> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    let name = std::ffi::CString::new("postgres").ok()?;
    // SAFETY: getpwnam takes a NUL-terminated name and answers a pointer to
    // static storage or null; it is read at once.
    let entry = unsafe { libc::getpwnam(name.as_ptr()) };
    if entry.is_null() {
        return None;
    }
    // SAFETY: `entry` is a valid passwd record (checked non-null above).
    Some(unsafe { ((*entry).pw_uid, (*entry).pw_gid) })
}

/// `command` run as `owner` (uid, gid) when there is one.
fn as_server_user(command: &mut Command, owner: Option<(u32, u32)>) -> &mut Command {
    if let Some((uid, gid)) = owner {
        command.uid(uid).gid(gid).env("HOME", "/tmp");
    }
    command
}

/// Gives `path` to `uid` and `gid`.
fn chown(path: &Path, uid: u32, gid: u32) -> std::io::Result<()> {
    std::os::unix::fs::chown(path, Some(uid), Some(gid))
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

    /// The server to use: the one given, else the environment's, else none.
    #[test]
    fn the_server_given_comes_before_the_environment_s() {
        assert_eq!(given(Some("host=/a")).as_deref(), Some("host=/a"));
    }
}
