//! The store on a PostgreSQL server as the suite and the lab's runs see
//! it: a [`JobStore`] whose database paths are schemas of one server.

use super::{Cluster, Server, ServerStore, REFERENCE};
use crate::job::Job;
use crate::job_store::{HeldLock, JobStore};
use crate::operation::{Answer, Operation};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The store on a PostgreSQL server as the suite and the lab's runs see it
/// (a [`JobStore`]): each database path a schema of its own, made on its
/// first call, so that every test has a fresh table; each call on a
/// connection of its own; the stored rows read on another.
pub struct OnServer {
    /// The server, kept running while the store is used.
    server: Arc<Server>,
    /// The operations: the reference's or a mutant's.
    store: &'static ServerStore,
    /// The schema of each database path seen.
    schemas: Mutex<HashMap<PathBuf, String>>,
    /// The one schema every path is in, when it shares another process's
    /// (see [`OnServer::sharing`]); that process made it, and drops it.
    shared: Option<String>,
    /// The next schema's number.
    next: AtomicUsize,
    /// The database paths on a server of their own (see
    /// [`JobStore::server_of_its_own`]), each with its cluster's connection
    /// string.
    own: Mutex<HashMap<PathBuf, OwnServer>>,
}

/// A throwaway cluster of one database path's own, which its test may
/// crash.
struct OwnServer {
    /// How to connect to it.
    dsn: String,
    cluster: Arc<Mutex<Cluster>>,
}

impl OnServer {
    /// The reference store on the server at `dsn`.
    pub fn new(dsn: &str) -> OnServer {
        OnServer::of(Arc::new(Server::given(dsn)), &REFERENCE)
    }

    /// The store whose operations are `store`'s on `server`.
    pub fn of(server: Arc<Server>, store: &'static ServerStore) -> OnServer {
        OnServer {
            server,
            store,
            schemas: Mutex::new(HashMap::new()),
            shared: None,
            next: AtomicUsize::new(0),
            own: Mutex::new(HashMap::new()),
        }
    }

    /// The same store on the same server, with every database path in
    /// `schema`, which another process (the lab, for the workers of a
    /// chaos run) named and drops: several processes then share one table.
    pub fn sharing(&self, schema: &str) -> OnServer {
        let mut store = OnServer::of(Arc::clone(&self.server), self.store);
        store.shared = Some(schema.to_string());
        store
    }

    /// Puts `db` on `cluster`, a server of its own from now on (see
    /// [`JobStore::server_of_its_own`]), its WAL writer paused so that a
    /// crash takes what no commit flushed, every time.
    ///
    /// Errors: the WAL writer could not be paused.
    pub fn adopt(&self, db: &Path, mut cluster: Cluster) -> Result<(), String> {
        cluster.pause_wal_writer()?;
        let dsn = cluster.dsn().to_string();
        self.own
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(
                db.to_path_buf(),
                OwnServer {
                    dsn,
                    cluster: Arc::new(Mutex::new(cluster)),
                },
            );
        Ok(())
    }

    /// Lets go of `db`: its schema is dropped on a server the lab was
    /// given (a throwaway cluster goes whole at the end), and its server of
    /// its own, if it had one, stops and is removed. A path used again
    /// afterwards is a new database.
    pub fn let_go(&self, db: &Path) {
        let own = self
            .own
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(db);
        let schema = self
            .schemas
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(db);
        // (On a cluster of its own, the schema goes with the cluster.)
        if let (Some(schema), None) = (schema, own) {
            if !self.server.is_throwaway() {
                drop_schemas(self.server.dsn(), &[schema]);
            }
        }
    }

    /// The connection string of the server `db` is on: one of its own
    /// ([`JobStore::server_of_its_own`]), or the store's.
    pub fn dsn_of(&self, db: &Path) -> String {
        self.own
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(db)
            .map_or_else(|| self.server.dsn().to_string(), |own| own.dsn.clone())
    }

    /// The server it runs on.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The schema of `db`: a new one for a path not seen before
    /// (`lab_PID_N`, so that two runs on one server never share one), or
    /// the one it shares ([`OnServer::sharing`]).
    pub fn schema_of(&self, db: &Path) -> String {
        if let Some(shared) = &self.shared {
            return shared.clone();
        }
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

    /// The schema of `db`, and a new connection to the server that is not
    /// the store's: another client's. (Before `init_db` the schema is not
    /// there, and what it reads or writes fails, as on a file with no
    /// table.)
    fn plain_client(&self, db: &Path) -> Result<(String, postgres::Client), String> {
        let schema = self.schema_of(db);
        let client = postgres::Client::connect(&self.dsn_of(db), postgres::NoTls)
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
    /// The operation on the schema of `db`, on a connection of its own for
    /// this call, as the worksheet's path functions open one: calls from
    /// several threads race on the server as several workers' would.
    fn call(&self, db: &Path, operation: &Operation) -> crate::error::Result<Answer> {
        (self.store.run)(&self.dsn_of(db), Some(&self.schema_of(db)), operation)
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
            Ok(rows.iter().map(lease_lab_store::variants::job_of).collect())
        };
        Some(read())
    }

    fn server_of_its_own(&self, db: &Path) -> Option<Result<(), String>> {
        Some(
            Cluster::start(&std::env::temp_dir())
                .map_err(|error| error.to_string())
                .and_then(|cluster| self.adopt(db, cluster)),
        )
    }

    fn crash_server(&self, db: &Path) -> Option<Result<(), String>> {
        let cluster = self
            .own
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(db)
            .map(|own| Arc::clone(&own.cluster));
        Some(match cluster {
            None => Err(format!(
                "{} is on the server every test shares, which a test must not crash; \
                 ask for a server of its own first",
                db.display()
            )),
            Some(cluster) => cluster
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .crash_and_restart()
                .map_err(|error| error.to_string()),
        })
    }
}

impl Drop for OnServer {
    /// Drops the schemas this store made, so that a server it was given
    /// keeps nothing of the run (a throwaway cluster goes whole).
    fn drop(&mut self) {
        let schemas: Vec<String> = self
            .schemas
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .drain()
            .map(|(_, schema)| schema)
            .collect();
        if schemas.is_empty() || self.server.is_throwaway() {
            return;
        }
        drop_schemas(self.server.dsn(), &schemas);
    }
}

/// Drops `schemas` and what they hold on the server at `dsn`, as well as it
/// can: a server that cannot be reached keeps them.
fn drop_schemas(dsn: &str, schemas: &[String]) {
    if let Ok(mut client) = postgres::Client::connect(dsn, postgres::NoTls) {
        let _ = client.batch_execute(&format!(
            "DROP SCHEMA IF EXISTS {} CASCADE",
            schemas.join(", ")
        ));
    }
}
