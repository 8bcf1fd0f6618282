//! Where a run's jobs are kept, as the lab watches them: a SQLite file
//! (which the lab keeps open, reads with plain SQL, locks for a herd and
//! cuts the power of), or a schema on a PostgreSQL server (read by another
//! client, its rows locked for a herd, the server crashed).

use super::RunError;
use crate::external::ExternalStore;
use crate::job::Job;
use crate::job_store::JobStore;
use crate::pg_server::{Cluster, Hosts, OnServer};
use crate::race::Racers;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What the end of a run says of the integrity of jobs kept on a server:
/// there is no file of the lab's to check, and the server answers for its
/// own pages. [`crate::chaos::properties`] counts it as whole.
pub const ON_A_SERVER: &str = "not checked: the jobs are on a server, which keeps its own pages";

/// What a worker's command adds to keep its jobs at a [`Place`].
#[derive(Debug, Default)]
pub(super) struct WorkerWords {
    /// Before its program.
    pub(super) before: Vec<String>,
    /// After its arguments.
    pub(super) after: Vec<String>,
    /// Its environment.
    pub(super) env: Vec<(String, String)>,
}

/// Where a run's jobs are kept.
pub(super) enum Place {
    /// A SQLite file, `jobs.db` in the run's folder, with the undo log a
    /// power cut plays back, and a connection of the lab's own.
    File {
        db: PathBuf,
        log: PathBuf,
        keeper: Option<rusqlite::Connection>,
    },
    /// A schema of a PostgreSQL server, named for the path `db`, seen
    /// through the lab's own view of the store (`store`); with `hosts`, the
    /// server and each worker in a network namespace of their own.
    Server {
        db: PathBuf,
        store: Arc<OnServer>,
        hosts: Option<Arc<Hosts>>,
    },
}

impl Place {
    /// A new place in the run's folder `dir`: a file, or, for workers on a
    /// server, a schema there, on a cluster of the run's own when the run
    /// crashes its server (`crashes`), never on a server the lab was given;
    /// with `hosts` (the number of workers), that cluster and each worker
    /// run on hosts of their own.
    ///
    /// Errors: the hosts, or the cluster of the run's own, could not be
    /// made.
    pub(super) fn new(
        server: Option<&Arc<OnServer>>,
        crashes: bool,
        hosts: Option<usize>,
        dir: &Path,
    ) -> Result<Place, RunError> {
        let Some(store) = server else {
            return Ok(Place::File {
                db: dir.join("jobs.db"),
                log: dir.join("power.log"),
                keeper: None,
            });
        };
        let db = dir.join("jobs");
        let hosts = hosts
            .map(|workers| Hosts::make(workers).map(Arc::new))
            .transpose()
            .map_err(RunError::Hosts)?;
        if let Some(hosts) = &hosts {
            let cluster = Cluster::start_on(&std::env::temp_dir(), hosts)
                .map_err(|error| RunError::OwnServer(error.to_string()))?;
            store.adopt(&db, cluster).map_err(RunError::OwnServer)?;
        } else if crashes {
            if let Some(Err(why)) = store.server_of_its_own(&db) {
                return Err(RunError::OwnServer(why));
            }
        }
        Ok(Place::Server {
            db,
            store: Arc::clone(store),
            hosts,
        })
    }

    /// The hosts the workers and the server run on, if their own.
    pub(super) fn hosts(&self) -> Option<&Arc<Hosts>> {
        match self {
            Place::Server { hosts, .. } => hosts.as_ref(),
            Place::File { .. } => None,
        }
    }

    /// The path the workers' calls name.
    pub(super) fn db(&self) -> &Path {
        match self {
            Place::File { db, .. } | Place::Server { db, .. } => db,
        }
    }

    /// What worker `index`'s command line and environment add, to keep its
    /// jobs here: the words before its program (to enter its host), the
    /// words after (the shared disk when `power`, on a file; the schema, on
    /// a server), and its environment (the server's connection string,
    /// which stays off the command line).
    pub(super) fn worker_words(&self, power: bool, index: usize) -> WorkerWords {
        match self {
            Place::File { db, log, .. } if power => WorkerWords {
                after: vec![
                    "--power-db".into(),
                    db.to_string_lossy().into_owned(),
                    "--power-log".into(),
                    log.to_string_lossy().into_owned(),
                ],
                ..WorkerWords::default()
            },
            Place::File { .. } => WorkerWords::default(),
            Place::Server { db, store, hosts } => WorkerWords {
                before: hosts
                    .as_ref()
                    .map(|hosts| hosts.worker_prefix(index))
                    .unwrap_or_default(),
                after: vec!["--schema".into(), store.schema_of(db)],
                env: vec![(
                    crate::pg_server::DSN_VARIABLE.into(),
                    match hosts {
                        // Over TCP, from its host: a cut link is noticed
                        // within seconds (a connection attempt, a reply
                        // that does not come), not minutes.
                        Some(hosts) => format!(
                            "host={} port=5432 user=lab dbname=postgres connect_timeout=2 \
                             tcp_user_timeout=1 keepalives_idle=1 keepalives_interval=1 \
                             keepalives_retries=2",
                            hosts.server_address(index)
                        ),
                        None => store.dsn_of(db),
                    },
                )],
            },
        }
    }

    /// Starts watching, once the first worker made the table: a file is
    /// kept open by a connection of the lab's own (see [`open_keeper`]); a
    /// server that will crash writes the new table to disk (`CHECKPOINT`),
    /// as a table made long before a crash is, so that the crash takes
    /// only what the run wrote.
    ///
    /// Errors: the file could not be opened, or the server not checkpointed.
    pub(super) fn watch(&mut self, crashes: bool) -> Result<(), RunError> {
        match self {
            Place::File { db, keeper, .. } => *keeper = Some(open_keeper(db)?),
            Place::Server { db, store, .. } if crashes => store
                .plain_sql(db, "CHECKPOINT")
                .unwrap_or_else(|| Err("the server's store runs no SQL".into()))
                .map_err(RunError::OwnServer)?,
            Place::Server { .. } => {}
        }
        Ok(())
    }

    /// Stops watching: the lab's connection to a file closes.
    pub(super) fn stop_watching(&mut self) {
        if let Place::File { keeper, .. } = self {
            *keeper = None;
        }
    }

    /// The jobs kept here now, read by a client that is not a worker's,
    /// and the integrity check's answer (a file's `PRAGMA
    /// integrity_check`; [`ON_A_SERVER`] on a server).
    pub(super) fn read(&self) -> (Result<Vec<Job>, String>, String) {
        match self {
            Place::File { db, .. } => read_file(db),
            Place::Server { db, store, .. } => {
                let rows = store
                    .stored_rows(db)
                    .unwrap_or_else(|| Err("the server's store reads no rows".into()));
                (rows, ON_A_SERVER.into())
            }
        }
    }

    /// Runs `race` (a herd's calls) while the lab holds what their writes
    /// wait for, and lets it go once `writers` of them wait: a file's write
    /// lock (the waits seen as `racers` says), or every row of the
    /// server's table (the waits seen by the server).
    ///
    /// Errors: the lock could not be held, watched or let go.
    pub(super) fn behind_a_held_lock<T: Send>(
        &self,
        writers: usize,
        racers: &Racers,
        race: impl FnOnce() -> T + Send,
    ) -> Result<T, RunError> {
        match self {
            Place::File { db, .. } => crate::race::behind_a_held_lock(db, writers, racers, race)
                .map_err(|source| RunError::HeldLock {
                    db: db.clone(),
                    source,
                }),
            Place::Server { db, store, .. } => {
                let held = store
                    .hold_every_row(db)
                    .unwrap_or_else(|| Err("the server's store holds no rows".into()))
                    .map_err(RunError::HeldRows)?;
                crate::race::behind_held_rows(held, writers, race).map_err(RunError::HeldRows)
            }
        }
    }

    /// Whether a herd's call waits for the lock the lab holds: a write to
    /// a row does (and, on a file, a new job's too), a read never does, nor
    /// does `init_db` once the table is there.
    pub(super) fn waits_for_the_held_lock(&self, operation: &crate::operation::Operation) -> bool {
        use crate::operation::Operation;
        match operation {
            Operation::State { .. } | Operation::InitDb => false,
            // A new row is not among those held.
            Operation::Enqueue { .. } => matches!(self, Place::File { .. }),
            _ => true,
        }
    }

    /// The power fails (the workers `killed`) on a file: see [`cut`].
    ///
    /// Errors: the cut could not be played back, or `init_db` failed after.
    pub(super) fn cut_the_power(
        &mut self,
        stores: &[Arc<ExternalStore>],
        killed: &[u32],
    ) -> Result<(), RunError> {
        match self {
            Place::File { db, log, keeper } => cut(stores, killed, keeper, db, log),
            Place::Server { .. } => Err(RunError::PowerNeedsTheDiskModel),
        }
    }

    /// The server crashes (SIGKILL) and restarts, its calls in flight cut
    /// off; on a file, nothing.
    ///
    /// Errors: the server could not be crashed or did not come back.
    pub(super) fn crash_the_server(&self) -> Result<(), RunError> {
        match self {
            Place::File { .. } => Ok(()),
            Place::Server { db, store, .. } => store
                .crash_server(db)
                .unwrap_or_else(|| Err("the server's store cannot crash its server".into()))
                .map_err(RunError::ServerCrash),
        }
    }
}

impl Drop for Place {
    /// A schema on a server goes with the run, and the run's own cluster
    /// with it: a shrinking makes many runs.
    fn drop(&mut self) {
        if let Place::Server { db, store, .. } = self {
            store.let_go(db);
        }
        // (Then the hosts go, the server stopped.)
    }
}

/// The lab's own connection, open on the file for the whole run.
fn open_keeper(db: &Path) -> Result<rusqlite::Connection, RunError> {
    rusqlite::Connection::open(db)
        .and_then(|keeper| {
            // Its close must never checkpoint: at a power cut it closes
            // when the workers are dead, and a checkpoint would copy
            // writes no sync made durable into the database, unlogged.
            keeper.set_db_config(
                rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
                true,
            )?;
            keeper.query_row("SELECT count(*) FROM jobs", [], |row| row.get::<_, i64>(0))?;
            Ok(keeper)
        })
        .map_err(|source| RunError::Watch {
            db: db.to_path_buf(),
            source,
        })
}

/// After the power failed (the workers `killed`): every worker is dead,
/// the disk loses what no sync made durable (the shared undo log
/// replayed), the WAL index goes as after a reboot, and the workers start
/// again; the first runs `init_db`.
fn cut(
    stores: &[Arc<crate::external::ExternalStore>],
    killed: &[u32],
    keeper: &mut Option<rusqlite::Connection>,
    db: &Path,
    log: &Path,
) -> Result<(), RunError> {
    // A worker started after the kill (it cannot, as every one was
    // running, but a crash and restart could) dies with the rest.
    for store in stores {
        if store
            .program_pid()
            .is_some_and(|pid| !killed.contains(&pid))
        {
            store.abandon();
        }
    }
    for store in stores {
        store.abandon();
    }
    drop(keeper.take());
    crate::vfs_shim::replay(log).map_err(RunError::Replay)?;
    let shm = PathBuf::from(format!("{}-shm", db.display()));
    match std::fs::remove_file(&shm) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(source) => return Err(RunError::Remove { path: shm, source }),
    }
    stores[0].init_db(db).map_err(|source| RunError::InitDb {
        when: "after the power cut",
        source,
    })?;
    *keeper = Some(open_keeper(db)?);
    Ok(())
}

/// The file's rows and its integrity check, read with plain SQL.
fn read_file(db: &Path) -> (Result<Vec<Job>, String>, String) {
    let connection = match rusqlite::Connection::open(db) {
        Ok(connection) => connection,
        Err(error) => return (Err(error.to_string()), error.to_string()),
    };
    let integrity = connection
        .query_row("PRAGMA integrity_check", [], |row| row.get::<_, String>(0))
        .unwrap_or_else(|error| error.to_string());
    let rows = connection
        .prepare("SELECT id, owner, until, fence, result, done FROM jobs ORDER BY id")
        .and_then(|mut statement| {
            statement
                .query_map([], |row| {
                    Ok(Job {
                        id: row.get(0)?,
                        owner: row.get(1)?,
                        until: row.get(2)?,
                        fence: crate::job::Fence(row.get(3)?),
                        result: row.get(4)?,
                        done: row.get::<_, i64>(5)? != 0,
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()
        })
        .map_err(|error| error.to_string());
    (rows, integrity)
}
