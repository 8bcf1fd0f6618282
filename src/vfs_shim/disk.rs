//! The disk under one tracked database: power cuts and injected I/O
//! errors, on the model of [`super::model`].

use super::model::{self, CutPoint, CutReport, IoCounts, IoFault, Tearing, Tracked};
use super::{names, vfs};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why the shim could not be installed or a database not tracked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShimError {
    /// The shim could not be registered as SQLite's default VFS.
    #[error("the VFS shim could not become SQLite's default VFS: {0}")]
    Install(String),
    /// SQLite could not turn the path into the name it opens files under.
    #[error("{}: SQLite cannot name this database path ({detail})", path.display())]
    Path {
        /// The path as given.
        path: PathBuf,
        /// What failed.
        detail: String,
    },
    /// There is no database file to watch at this path.
    #[error("{}: no database here to watch; create it first (init_db)", path.display())]
    NoDatabase {
        /// The path as given.
        path: PathBuf,
    },
    /// Another [`Disk`] tracks this database already.
    #[error("{}: another Disk tracks this database already; drop it first", path.display())]
    AlreadyTracked {
        /// The database's full path.
        path: PathBuf,
    },
    /// The undo log shared with other processes could not be opened.
    #[error("{}: the shared undo log cannot be opened ({reason})", path.display())]
    Log {
        /// The log's path.
        path: PathBuf,
        /// Why not.
        reason: String,
    },
    /// A cut could not put a file back as it was at its last sync.
    #[error("the power cut could not restore a file: {0}")]
    Restore(String),
}

/// Registers the shim as the process's default SQLite VFS, once.
///
/// Idempotent and thread-safe: every call after the first answers the same.
/// From then on every connection that names no VFS (rusqlite's
/// `Connection::open*`, the store and its compiled mutants) goes through
/// the shim; connections already open are not affected. Fails when the
/// default VFS is not SQLite's `unix` one.
pub fn install() -> Result<(), ShimError> {
    vfs::install().map_err(ShimError::Install)
}

/// Installs the shim (see [`install`]) and gives the name SQLite opens
/// the database at `path` under, by which the shim knows its files.
pub(super) fn installed_name(path: &Path) -> Result<Vec<u8>, ShimError> {
    install()?;
    names::full_pathname(path.as_os_str().as_bytes()).map_err(|detail| ShimError::Path {
        path: path.to_path_buf(),
        detail,
    })
}

/// The disk under one database's files (the database, `-wal`, `-journal`),
/// tracked by the shim from [`Disk::track`] until the `Disk` is dropped.
///
/// After dropping it, the files pass straight through again; drop it only
/// once the connections opened before its last cut are closed.
#[derive(Debug)]
pub struct Disk {
    tracked: Arc<Tracked>,
}

impl std::fmt::Debug for Tracked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tracked({})", self.db_path().display())
    }
}

impl Disk {
    /// Installs the shim (see [`install`]) and starts tracking the database
    /// at `db`, which need not exist yet. Everything its files hold now
    /// counts as durable. Handles already open on them through the shim are
    /// tracked from their next call.
    ///
    /// Errors: [`ShimError::AlreadyTracked`] when another `Disk`
    /// tracks the same database.
    pub fn track(db: impl AsRef<Path>) -> Result<Disk, ShimError> {
        let name = installed_name(db.as_ref())?;
        let tracked = Arc::new(Tracked::new(&name));
        if !model::register(&tracked) {
            return Err(ShimError::AlreadyTracked {
                path: tracked.db_path(),
            });
        }
        Ok(Disk { tracked })
    }

    /// Like [`Disk::track`], and shares the disk with other processes:
    /// before each change to a file of the database, and after each sync,
    /// a record is appended to the undo log at `log`, which
    /// [`super::replay`] replays as a power cut of every process at once.
    ///
    /// Errors: as [`Disk::track`], or the log cannot be opened.
    pub fn track_shared(db: impl AsRef<Path>, log: &Path) -> Result<Disk, ShimError> {
        let shared = super::SharedLog::open(log).map_err(|e| ShimError::Log {
            path: log.to_path_buf(),
            reason: e.to_string(),
        })?;
        let disk = Disk::track(db)?;
        disk.tracked.lock().share(shared);
        Ok(disk)
    }

    /// The database's path, as SQLite names it (absolute, links resolved).
    pub fn db(&self) -> PathBuf {
        self.tracked.db_path()
    }

    /// Cuts the power now, losing every unsynced write whole.
    ///
    /// Every handle open on the database dies; close them all before
    /// opening the database again (the reboot rule, in the module docs).
    pub fn cut(&self) -> Result<CutReport, ShimError> {
        self.cut_tearing(Tearing::None)
    }

    /// Cuts the power now, letting `tearing` choose the unsynced sectors
    /// that reach the disk after all.
    pub fn cut_tearing(&self, tearing: Tearing) -> Result<CutReport, ShimError> {
        let mut state = self.tracked.lock();
        let report = self.tracked.cut(&mut state, None, tearing);
        match &report.error {
            Some(error) => Err(ShimError::Restore(error.clone())),
            None => Ok(report),
        }
    }

    /// Arms a power cut at `point` (replacing any cut armed before). It
    /// falls inside the I/O call that reaches the point, which then fails;
    /// see [`Disk::cuts`] for whether it has.
    pub fn cut_at(&self, point: CutPoint, tearing: Tearing) {
        self.tracked.lock().arm_cut(point, tearing);
    }

    /// Disarms the armed cut, if it has not fallen yet.
    pub fn disarm(&self) {
        self.tracked.lock().disarm_cut();
    }

    /// Arms an injected I/O error (several may be armed; each fires once).
    pub fn fail_at(&self, fault: IoFault) {
        self.tracked.lock().arm_fault(fault);
    }

    /// The I/O calls counted so far.
    pub fn counts(&self) -> IoCounts {
        self.tracked.lock().counts()
    }

    /// How many armed faults have fired.
    pub fn faults_fired(&self) -> u64 {
        self.tracked.lock().faults_fired()
    }

    /// Every cut so far, oldest first (armed ones that fell, and [`Disk::cut`]s).
    pub fn cuts(&self) -> Vec<CutReport> {
        self.tracked.lock().reports().to_vec()
    }

    /// How many cuts have happened so far.
    pub fn cut_count(&self) -> usize {
        self.tracked.lock().reports().len()
    }
}

impl Drop for Disk {
    fn drop(&mut self) {
        model::unregister(&self.tracked);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A database made before tracking starts, so all of it is durable.
    fn new_db(dir: &Path) -> PathBuf {
        let db = dir.join("jobs.db");
        crate::init_db(&db).unwrap();
        db
    }

    /// Through a shared disk, an unsynced commit is undone by the replay
    /// and a synced one kept: the log saw every write and sync SQLite made.
    #[test]
    fn a_shared_disk_logs_what_a_replay_needs_to_lose_only_unsynced_commits() {
        install().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let db = new_db(dir.path());
        let log = dir.path().join("power.log");
        let disk = Disk::track_shared(&db, &log).unwrap();
        let count = |connection: &rusqlite::Connection| -> i64 {
            connection
                .query_row("SELECT count(*) FROM jobs", [], |row| row.get(0))
                .unwrap()
        };
        let connection = rusqlite::Connection::open(&db).unwrap();
        connection
            .execute_batch(
                "PRAGMA synchronous=FULL; \
                 INSERT INTO jobs (id, owner, until, fence, result, done) \
                   VALUES ('kept', NULL, 0, 0, NULL, 0); \
                 PRAGMA synchronous=OFF; \
                 INSERT INTO jobs (id, owner, until, fence, result, done) \
                   VALUES ('lost', NULL, 0, 0, NULL, 0);",
            )
            .unwrap();
        assert_eq!(count(&connection), 2);
        assert!(
            std::fs::metadata(&log).unwrap().len() > 0,
            "the log saw writes"
        );
        // The process dies with the power: its connection never closes
        // (closing would checkpoint, and sync, what the cut must lose).
        std::mem::forget(connection);
        drop(disk);
        let replayed = crate::vfs_shim::replay(&log).unwrap();
        assert!(replayed.undone > 0, "{replayed:?}");
        // Read a copy: this process's SQLite still holds the dead
        // connection's view of the files, which no new process would.
        let copy = dir.path().join("after.db");
        std::fs::copy(&db, &copy).unwrap();
        std::fs::copy(
            format!("{}-wal", db.display()),
            format!("{}-wal", copy.display()),
        )
        .unwrap();
        let after = rusqlite::Connection::open(&copy).unwrap();
        assert_eq!(
            after
                .query_row("SELECT group_concat(id) FROM jobs", [], |row| row
                    .get::<_, String>(0))
                .unwrap(),
            "kept"
        );
    }

    #[test]
    fn a_disk_names_its_database_as_sqlite_does() {
        let dir = tempfile::tempdir().unwrap();
        let disk = Disk::track(dir.path().join("jobs.db")).unwrap();
        let named = std::fs::canonicalize(dir.path()).unwrap().join("jobs.db");
        assert_eq!(disk.db(), named);
        assert_eq!(
            format!("{disk:?}"),
            format!("Disk {{ tracked: Tracked({}) }}", named.display())
        );
    }

    #[test]
    fn a_database_is_tracked_by_one_disk_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("jobs.db");
        let disk = Disk::track(&db).unwrap();
        let error = Disk::track(&db).unwrap_err();
        assert_eq!(error, ShimError::AlreadyTracked { path: disk.db() });
        drop(disk);
        Disk::track(&db).expect("tracked again once the first disk is dropped");
    }

    #[test]
    fn a_disarmed_cut_does_not_fall_and_an_armed_one_does() {
        let dir = tempfile::tempdir().unwrap();
        let db = new_db(dir.path());
        let disk = Disk::track(&db).unwrap();
        disk.cut_at(CutPoint::BeforeSync(1), Tearing::None);
        disk.disarm();
        crate::enqueue(&db, "j").unwrap();
        assert_eq!(disk.cut_count(), 0);
        disk.cut_at(CutPoint::BeforeSync(disk.counts().syncs + 1), Tearing::None);
        assert!(crate::enqueue(&db, "k").is_err());
        assert_eq!(disk.cut_count(), 1);
    }

    #[test]
    fn after_a_cut_nothing_opens_until_every_handle_from_before_is_closed() {
        let dir = tempfile::tempdir().unwrap();
        let db = new_db(dir.path());
        let disk = Disk::track(&db).unwrap();
        let count = |conn: &rusqlite::Connection| {
            conn.query_row("SELECT count(*) FROM jobs", [], |row| row.get::<_, i64>(0))
        };
        let before = rusqlite::Connection::open(&db).unwrap();
        assert_eq!(count(&before).unwrap(), 0);
        disk.cut().unwrap();
        let refused = rusqlite::Connection::open(&db).and_then(|conn| count(&conn));
        assert!(
            refused.is_err(),
            "opened beside a handle from before the cut"
        );
        drop(before);
        let after = rusqlite::Connection::open(&db).unwrap();
        assert_eq!(count(&after).unwrap(), 0);
    }

    #[test]
    fn the_reboot_rule_holds_whatever_other_databases_were_cut_since() {
        let dir = tempfile::tempdir().unwrap();
        let (one, two) = (dir.path().join("one.db"), dir.path().join("two.db"));
        crate::init_db(&one).unwrap();
        crate::init_db(&two).unwrap();
        let (disk, other) = (Disk::track(&one).unwrap(), Disk::track(&two).unwrap());
        let before = rusqlite::Connection::open(&one).unwrap();
        before.execute_batch("SELECT count(*) FROM jobs").unwrap();
        disk.cut().unwrap();
        other.cut().unwrap();
        assert!(
            rusqlite::Connection::open(&one)
                .and_then(|conn| conn.execute_batch("SELECT count(*) FROM jobs"))
                .is_err(),
            "opened beside a handle from before its own cut"
        );
        drop(before);
        rusqlite::Connection::open(&one)
            .unwrap()
            .execute_batch("SELECT count(*) FROM jobs")
            .unwrap();
    }

    #[test]
    fn only_a_fault_that_fired_is_counted() {
        let dir = tempfile::tempdir().unwrap();
        let db = new_db(dir.path());
        let disk = Disk::track(&db).unwrap();
        disk.fail_at(IoFault::Write(1_000_000));
        crate::enqueue(&db, "j").unwrap();
        assert_eq!(disk.faults_fired(), 0);
        disk.fail_at(IoFault::Write(disk.counts().writes + 1));
        assert!(crate::enqueue(&db, "k").is_err());
        assert_eq!(disk.faults_fired(), 1);
    }
}
