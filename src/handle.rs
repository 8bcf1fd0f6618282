//! The store's [`Store`] handle seen through the path-based [`JobStore`]
//! trait, so the contract suite can run against kept connections too.
//!
//! [`HandleStore`] keeps one open [`Store`] per database path and sends
//! every operation to it, which is how a caller making many calls uses the
//! store. `init_db` has no handle form (it creates the file a handle needs)
//! and `claim_many` races separate connections by contract, so those two go
//! through the path functions.

use crate::backend::{answer, Backend};
use crate::error::{Result, StoreError};
use crate::job::{Fence, Job};
use crate::job_store::JobStore;
use crate::operation::{Answer, Operation};
use crate::Store;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// A [`JobStore`] that runs each operation on a kept [`Store`] handle.
///
/// A handle is opened on a path's first operation and kept until
/// `init_db` is called on that path again. A failed open (no
/// file yet, say) is returned as the operation's error and not kept, so the
/// next call tries again.
///
/// [`Store`] is `Send` but not `Sync`: a connection must not be used by two
/// threads at once. The handles therefore sit behind one mutex, and calls
/// through the same `HandleStore` take turns; `claim_many` does not, since
/// it opens its own connections.
#[derive(Debug, Default)]
pub struct HandleStore {
    handles: Mutex<HashMap<PathBuf, Store>>,
}

impl HandleStore {
    /// An adapter with no handle open yet.
    pub fn new() -> HandleStore {
        HandleStore::default()
    }

    /// The handles, even if a thread panicked while holding them: a
    /// connection holds no state that a panic could leave half-changed
    /// (an unfinished transaction is rolled back when it is dropped).
    fn lock(&self) -> MutexGuard<'_, HashMap<PathBuf, Store>> {
        self.handles.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `operation` on the handle for `path`, opening it if needed.
    fn with_handle<T>(
        &self,
        path: &Path,
        operation: impl FnOnce(&Store) -> Result<T>,
    ) -> Result<T> {
        let mut handles = self.lock();
        if !handles.contains_key(path) {
            let store = Store::open(path)?;
            handles.insert(path.to_path_buf(), store);
        }
        operation(&handles[path])
    }
}

impl JobStore for HandleStore {
    /// Runs each operation on the handle kept for `db`, except two:
    ///
    /// - `init_db` runs the path function, then forgets any handle kept for
    ///   `db`: the file may have been replaced since it was opened, and a
    ///   kept connection would go on using the old one;
    /// - `claim_many` runs the path function: each claim needs its own
    ///   connection to race at all, and one kept handle would make the
    ///   claims take turns.
    fn call(&self, db: &Path, operation: &Operation) -> Result<Answer> {
        answer(&Kept { handles: self, db }, operation)
    }

    /// The kept connections wait through the store's busy handler, which
    /// reads the calling thread's timeout, so the thread's setting applies.
    fn set_thread_busy_timeout(&self, timeout: Option<std::time::Duration>) {
        crate::variant::active::set_thread_busy_timeout(timeout)
    }
}

/// The operations of a [`HandleStore`] on one database, as
/// [`JobStore::call`] documents them.
struct Kept<'a> {
    handles: &'a HandleStore,
    db: &'a Path,
}

impl Backend for Kept<'_> {
    type Error = StoreError;

    fn init_db(&self) -> Result<()> {
        self.handles.lock().remove(self.db);
        crate::init_db(self.db)
    }

    fn enqueue(&self, job_id: &str) -> Result<bool> {
        self.handles
            .with_handle(self.db, |store| store.enqueue(job_id))
    }

    fn state(&self, job_id: &str) -> Result<Option<Job>> {
        self.handles
            .with_handle(self.db, |store| store.state(job_id))
    }

    fn claim(&self, job_id: &str, owner: &str, now: f64, ttl: f64) -> Result<Option<Fence>> {
        self.handles
            .with_handle(self.db, |store| store.claim(job_id, owner, now, ttl))
    }

    fn renew(&self, job_id: &str, owner: &str, fence: Fence, now: f64, ttl: f64) -> Result<bool> {
        self.handles
            .with_handle(self.db, |store| store.renew(job_id, owner, fence, now, ttl))
    }

    fn complete(
        &self,
        job_id: &str,
        owner: &str,
        fence: Fence,
        now: f64,
        result: &str,
    ) -> Result<bool> {
        self.handles.with_handle(self.db, |store| {
            store.complete(job_id, owner, fence, now, result)
        })
    }

    fn release(&self, job_id: &str, owner: &str, fence: Fence) -> Result<bool> {
        self.handles
            .with_handle(self.db, |store| store.release(job_id, owner, fence))
    }

    fn claim_many(
        &self,
        job_id: &str,
        owners: &[&str],
        now: f64,
        ttl: f64,
    ) -> Result<Vec<Option<Fence>>> {
        crate::claim_many(self.db, job_id, owners, now, ttl)
    }
}
