//! The eight operations as one interface, whatever carries them out: the
//! reference store, a compiled mutant, the kept-connection handle, or a
//! program speaking the lab's protocol.

use crate::child_process::StderrWindow;
use crate::error::Result;
use crate::job::{Fence, Job};
use crate::operation::{Answer, Operation};
use std::path::Path;
use std::time::Duration;

/// Another client's lock on a server's rows, held while a race queues
/// behind it.
pub trait HeldLock: Send {
    /// How many sessions wait for a lock now.
    fn waiting(&self) -> std::result::Result<usize, String>;
    /// Lets the lock go.
    fn let_go(self: Box<Self>) -> std::result::Result<(), String>;
}

/// One implementation of the store, path-based as the worksheet's contract
/// is. The contract suite takes an implementation as a value of this
/// trait, so one test runs against any of them.
///
/// An implementation provides [`JobStore::call`]; the eight typed methods
/// are built on it.
pub trait JobStore: Send + Sync {
    /// Runs `operation` on the database at `db`.
    ///
    /// Contract: an `Ok` answer is of the kind the operation gives
    /// ([`Operation::answers`]): the typed methods rely on it.
    fn call(&self, db: &Path, operation: &Operation) -> Result<Answer>;

    /// The rows stored for the database `db`, read on a connection of
    /// their own, when they are not in an SQLite file at `db` (a store on a
    /// server): `None` for a store on the file, whose rows the suite reads
    /// from the file itself. `Err` says why they could not be read.
    fn stored_rows(&self, _db: &Path) -> Option<std::result::Result<Vec<Job>, String>> {
        None
    }

    /// Writes `row` (adding it or replacing it) on a connection of its own,
    /// for a store on a server, as [`JobStore::stored_rows`] reads them:
    /// `None` for a store on the file, which the suite writes itself.
    fn store_row(&self, _db: &Path, _row: &Job) -> Option<std::result::Result<(), String>> {
        None
    }

    /// Runs `sql` on a connection of its own, for a store on a server, as
    /// another client would: `None` for a store on the file.
    fn plain_sql(&self, _db: &Path, _sql: &str) -> Option<std::result::Result<(), String>> {
        None
    }

    /// For a store on a server, another client's lock on every row of the
    /// table, held until it is let go (see [`HeldLock`]): `None` for a store
    /// on the file, whose write lock the suite takes itself.
    fn hold_every_row(&self, _db: &Path) -> Option<std::result::Result<Box<dyn HeldLock>, String>> {
        None
    }

    /// For a store on a server: from now on the database `db` is on a
    /// server of its own, which [`JobStore::crash_server`] may crash
    /// without touching the one other tests run on. `None` for a store on
    /// a file, whose crash the suite simulates itself (a power cut, see the
    /// power-loss shim).
    fn server_of_its_own(&self, _db: &Path) -> Option<std::result::Result<(), String>> {
        None
    }

    /// For a store on a server: kills the server of `db` (one of its own,
    /// see [`JobStore::server_of_its_own`]) at once, with no shutdown, and
    /// starts it again. `None` for a store on a file.
    fn crash_server(&self, _db: &Path) -> Option<std::result::Result<(), String>> {
        None
    }

    /// How long this thread's calls wait for a lock (`None`: the default).
    /// An implementation without such a setting ignores it.
    fn set_thread_busy_timeout(&self, _timeout: Option<Duration>) {}

    /// Whether the implementation's database connections are this
    /// process's own (so that the lab's VFS shim sees them).
    fn in_this_process(&self) -> bool {
        true
    }

    /// A fault the implementation showed while no call waited for it (a
    /// line on standard output that answers no request, an exit after its
    /// last answer), taken so that it is told once: the test that ran
    /// meanwhile is the one it belongs to. `None` for one that has none.
    fn fault_between_calls(&self) -> Option<crate::error::Faulted> {
        None
    }

    /// The process id of the program that carries the calls out, while it
    /// runs; `None` for an implementation in this process.
    fn program_pid(&self) -> Option<u32> {
        None
    }

    /// A test that used this implementation ran out of time and was left
    /// behind: whatever it left running is stopped, so that the next test
    /// starts afresh (an implementation in another program is started
    /// again). An implementation that keeps nothing running does nothing.
    fn abandon(&self) {}

    /// Opens a window on what the implementation writes on its standard
    /// error (a test starts): [`JobStore::close_stderr_window`] gives what
    /// it wrote from now on. An implementation in this process has no
    /// standard error of its own, and does nothing.
    fn open_stderr_window(&self) {}

    /// Closes the window [`JobStore::open_stderr_window`] opened (the test
    /// ended): the last `at_most` lines the implementation wrote on
    /// standard error since, and how many came before them. Empty when no
    /// window is open.
    fn close_stderr_window(&self, _at_most: usize) -> StderrWindow {
        StderrWindow::default()
    }

    /// The errors with frames (see [`crate::frame::Raised`]) the
    /// implementation answered since the window on its standard error
    /// opened, taken: an implementation in this process answers none.
    fn take_raised(&self) -> Vec<crate::frame::Raised> {
        Vec::new()
    }

    /// The call the implementation left unanswered since the window on its
    /// standard error opened, taken: an implementation in this process
    /// answers every call (a panic is its own outcome).
    fn take_unanswered(&self) -> Option<crate::frame::Unanswered> {
        None
    }

    /// `init_db(path)`.
    fn init_db(&self, db: &Path) -> Result<()> {
        let answer = self.call(db, &Operation::InitDb)?;
        match answer {
            Answer::Done => Ok(()),
            other => wrong_kind("init_db", &other),
        }
    }

    /// `enqueue(path, job_id)`.
    fn enqueue(&self, db: &Path, job_id: &str) -> Result<bool> {
        let job_id = job_id.to_string();
        boolean(self.call(db, &Operation::Enqueue { job_id })?, "enqueue")
    }

    /// `state(path, job_id)`.
    fn state(&self, db: &Path, job_id: &str) -> Result<Option<Job>> {
        let job_id = job_id.to_string();
        match self.call(db, &Operation::State { job_id })? {
            Answer::Row(row) => Ok(row),
            other => wrong_kind("state", &other),
        }
    }

    /// `claim(path, job_id, owner, now, ttl)`.
    fn claim(
        &self,
        db: &Path,
        job_id: &str,
        owner: &str,
        now: f64,
        ttl: f64,
    ) -> Result<Option<Fence>> {
        let operation = Operation::Claim {
            job_id: job_id.into(),
            owner: owner.into(),
            now,
            ttl,
        };
        match self.call(db, &operation)? {
            Answer::Fence(fence) => Ok(fence),
            other => wrong_kind("claim", &other),
        }
    }

    /// `renew(path, job_id, owner, fence, now, ttl)`.
    fn renew(
        &self,
        db: &Path,
        job_id: &str,
        owner: &str,
        fence: Fence,
        now: f64,
        ttl: f64,
    ) -> Result<bool> {
        let operation = Operation::Renew {
            job_id: job_id.into(),
            owner: owner.into(),
            fence,
            now,
            ttl,
        };
        boolean(self.call(db, &operation)?, "renew")
    }

    /// `complete(path, job_id, owner, fence, now, result)`.
    fn complete(
        &self,
        db: &Path,
        job_id: &str,
        owner: &str,
        fence: Fence,
        now: f64,
        result: &str,
    ) -> Result<bool> {
        let operation = Operation::Complete {
            job_id: job_id.into(),
            owner: owner.into(),
            fence,
            now,
            result: result.into(),
        };
        boolean(self.call(db, &operation)?, "complete")
    }

    /// `release(path, job_id, owner, fence)`.
    fn release(&self, db: &Path, job_id: &str, owner: &str, fence: Fence) -> Result<bool> {
        let operation = Operation::Release {
            job_id: job_id.into(),
            owner: owner.into(),
            fence,
        };
        boolean(self.call(db, &operation)?, "release")
    }

    /// `claim_many(path, job_id, owners, now, ttl)`.
    fn claim_many(
        &self,
        db: &Path,
        job_id: &str,
        owners: &[&str],
        now: f64,
        ttl: f64,
    ) -> Result<Vec<Option<Fence>>> {
        let operation = Operation::ClaimMany {
            job_id: job_id.into(),
            owners: owners.iter().map(|owner| owner.to_string()).collect(),
            now,
            ttl,
        };
        match self.call(db, &operation)? {
            Answer::Fences(fences) => Ok(fences),
            other => wrong_kind("claim_many", &other),
        }
    }
}

fn boolean(answer: Answer, operation: &str) -> Result<bool> {
    match answer {
        Answer::Bool(flag) => Ok(flag),
        other => wrong_kind(operation, &other),
    }
}

/// An implementation broke [`JobStore::call`]'s contract: a bug in it,
/// never an answer, so it is not returned as one.
fn wrong_kind<T>(operation: &str, answer: &Answer) -> T {
    panic!(
        "{operation} was answered with {answer:?}: JobStore::call must answer each operation with the kind of answer it gives"
    )
}

pub use lease_lab_store::variants::CompiledStore;

/// A store compiled into this binary (the reference, or a mutant's copy of
/// it, see [`CompiledStore`]): each operation goes to the module's path
/// function.
impl JobStore for CompiledStore {
    fn call(&self, db: &Path, operation: &Operation) -> Result<Answer> {
        CompiledStore::call(self, db, operation)
    }

    fn set_thread_busy_timeout(&self, timeout: Option<Duration>) {
        CompiledStore::set_thread_busy_timeout(self, timeout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variant::Variant;

    #[test]
    fn a_compiled_store_runs_in_this_process() {
        let store = Variant::reference().open(Duration::from_secs(1));
        assert!(store.in_this_process());
    }
}
