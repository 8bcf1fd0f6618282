//! A watch on who waits for a database's write lock.
//!
//! In WAL mode a connection that begins a write transaction takes the
//! WAL's write lock (`xShmLock` on slot 0, exclusive); while another
//! connection holds it, the attempt is refused (`SQLITE_BUSY`) and the
//! connection's busy handler tries again. The shim notes every such
//! refusal on a watched database, by the file handle refused, so a test
//! that holds the lock itself can tell when every racer it started is
//! queued behind it: a claim that looks the lease up before taking the
//! lock has looked by then, so letting them go shows the race every time.
//! The shim also notes when the lock is granted, so that the test can
//! check that the watch sees its own holder take it: a watch that cannot
//! see the lock taken cannot see racers queue either.

use super::disk::{installed_name, ShimError};
use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

/// The watches alive now, and how many (so that unwatched I/O costs one
/// atomic load).
static WATCHES: Mutex<Vec<Weak<Watched>>> = Mutex::new(Vec::new());
static WATCH_COUNT: AtomicUsize = AtomicUsize::new(0);

/// One watched database.
struct Watched {
    /// The full name of its main file, as SQLite opens it.
    name: Vec<u8>,
    /// The file handles refused its write lock so far.
    refused: Mutex<BTreeSet<u64>>,
    /// Signalled at each new refused handle.
    changed: Condvar,
    /// Whether any connection has been granted the write lock.
    granted: AtomicBool,
}

/// What the write lock's owner answered a connection that asked for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LockAnswer {
    /// The connection holds the write lock now.
    Granted,
    /// Another connection holds it (`SQLITE_BUSY`).
    Refused,
}

/// Notes that the file handle `handle`, opened under `name`, asked for
/// the write lock and got `answer`. Called by the shim's `xShmLock`.
pub(super) fn note_write_lock(name: &[u8], handle: u64, answer: LockAnswer) {
    if WATCH_COUNT.load(Ordering::Acquire) == 0 {
        return;
    }
    let watches = WATCHES.lock().unwrap_or_else(PoisonError::into_inner);
    for watched in watches.iter().filter_map(Weak::upgrade) {
        if watched.name != name {
            continue;
        }
        match answer {
            LockAnswer::Granted => watched.granted.store(true, Ordering::Release),
            LockAnswer::Refused => {
                let mut refused = watched
                    .refused
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                if refused.insert(handle) {
                    watched.changed.notify_all();
                }
            }
        }
    }
}

/// Counts the connections refused a database's write lock, from
/// [`WriteLockWatch::new`] until it is dropped.
pub struct WriteLockWatch {
    watched: Arc<Watched>,
    db: PathBuf,
}

impl WriteLockWatch {
    /// Installs the shim (see [`super::install`]) and starts watching the
    /// database at `db`. Only connections opened through the shim are seen.
    ///
    /// Errors: [`ShimError::NoDatabase`] when no database file is there
    /// (a watch on it would see nothing, and a race would wait in vain).
    pub fn new(db: impl AsRef<Path>) -> Result<WriteLockWatch, ShimError> {
        let path = db.as_ref();
        let name = installed_name(path)?;
        // Checked under the name the shim will know the file by, so that a
        // watch is only ever set on a file SQLite can open under it.
        if !Path::new(OsStr::from_bytes(&name)).is_file() {
            return Err(ShimError::NoDatabase {
                path: path.to_path_buf(),
            });
        }
        let watched = Arc::new(Watched {
            name,
            refused: Mutex::new(BTreeSet::new()),
            changed: Condvar::new(),
            granted: AtomicBool::new(false),
        });
        let mut watches = WATCHES.lock().unwrap_or_else(PoisonError::into_inner);
        watches.retain(|watch| watch.strong_count() > 0);
        watches.push(Arc::downgrade(&watched));
        WATCH_COUNT.store(watches.len(), Ordering::Release);
        Ok(WriteLockWatch {
            watched,
            db: path.to_path_buf(),
        })
    }

    /// Whether the watch has seen a connection granted the write lock: a
    /// test that takes the lock itself checks this to know the watch can
    /// see the database's lock at all.
    pub fn saw_the_lock_taken(&self) -> bool {
        self.watched.granted.load(Ordering::Acquire)
    }

    /// How many distinct connections have been refused the write lock.
    pub fn refused(&self) -> usize {
        self.watched
            .refused
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Waits until `count` connections have been refused the write lock;
    /// or until `finished()` says no more can come (the racing calls have
    /// all returned); or, once one has come, until none has newly come for
    /// `quiet` or for three times the longest wait between arrivals so far,
    /// whichever is longer (the machine's own pace: on a loaded machine the
    /// racers arrive slowly, and fewer than `count` come when the
    /// implementation runs fewer claims at once); or until `limit` has
    /// passed. Answers how many were refused.
    pub fn wait_for(
        &self,
        count: usize,
        quiet: Duration,
        limit: Duration,
        finished: &dyn Fn() -> bool,
    ) -> usize {
        let started = Instant::now();
        let mut refused = self
            .watched
            .refused
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mut last_change = started;
        let mut seen = refused.len();
        // Racers that queued before the wait began arrived with no gap.
        let mut longest_gap = (seen > 0).then_some(Duration::ZERO);
        while refused.len() < count && !finished() {
            let now = Instant::now();
            let until_limit = limit.saturating_sub(now - started);
            let until_quiet = match longest_gap {
                None => until_limit,
                Some(gap) => quiet.max(gap * 3).saturating_sub(now - last_change),
            };
            if until_quiet.is_zero() || until_limit.is_zero() {
                break;
            }
            refused = self
                .watched
                .changed
                .wait_timeout(refused, until_quiet.min(until_limit).min(POLL))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
            if refused.len() != seen {
                let now = Instant::now();
                longest_gap = Some(longest_gap.unwrap_or_default().max(now - last_change));
                seen = refused.len();
                last_change = now;
            }
        }
        refused.len()
    }

    /// The database watched, as given.
    pub fn db(&self) -> &Path {
        &self.db
    }
}

impl Drop for WriteLockWatch {
    fn drop(&mut self) {
        let mut watches = WATCHES.lock().unwrap_or_else(PoisonError::into_inner);
        watches.retain(|watch| {
            watch
                .upgrade()
                .is_some_and(|watched| !Arc::ptr_eq(&watched, &self.watched))
        });
        WATCH_COUNT.store(watches.len(), Ordering::Release);
    }
}

/// How often a wait looks whether the racing calls have all returned.
const POLL: Duration = Duration::from_millis(5);

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::Connection;
    use std::thread;

    /// A new database in `dir`, a watch on it, and a plain connection
    /// holding its write lock.
    fn held_lock(dir: &Path) -> (PathBuf, WriteLockWatch, Connection) {
        let db = dir.join("jobs.db");
        crate::init_db(&db).unwrap();
        let watch = WriteLockWatch::new(&db).unwrap();
        let holder = Connection::open(&db).unwrap();
        holder.execute_batch("BEGIN IMMEDIATE").unwrap();
        (db, watch, holder)
    }

    #[test]
    fn every_connection_queued_behind_the_lock_is_counted_once() {
        let dir = tempfile::tempdir().unwrap();
        let (db, watch, holder) = held_lock(dir.path());
        thread::scope(|scope| {
            for _ in 0..3 {
                scope.spawn(|| {
                    let conn = Connection::open(&db).unwrap();
                    conn.busy_timeout(Duration::from_secs(25)).unwrap();
                    conn.execute_batch("BEGIN IMMEDIATE; COMMIT").unwrap();
                });
            }
            let started = Instant::now();
            let queued =
                watch.wait_for(3, Duration::from_secs(20), Duration::from_secs(30), &|| {
                    false
                });
            assert_eq!(queued, 3);
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the wait ends once all have come, not after the quiet: {:?}",
                started.elapsed()
            );
            holder.execute_batch("ROLLBACK").unwrap();
        });
        assert_eq!(
            watch.refused(),
            3,
            "each connection once, however often it retried"
        );
    }

    #[test]
    fn the_quiet_grows_with_the_gaps_between_arrivals() {
        let dir = tempfile::tempdir().unwrap();
        let (db, watch, holder) = held_lock(dir.path());
        let racer = || {
            let conn = Connection::open(&db).unwrap();
            conn.busy_timeout(Duration::from_secs(10)).unwrap();
            conn.execute_batch("BEGIN IMMEDIATE; COMMIT").unwrap();
        };
        thread::scope(|scope| {
            // A slow machine's pace: the first racer comes 300 ms after the
            // wait began, the second 300 ms after the first. A fixed quiet
            // of 50 ms would let the lock go before the second; three times
            // the longest gap (900 ms and more) waits for it.
            scope.spawn(|| {
                thread::sleep(Duration::from_millis(300));
                scope.spawn(racer);
                thread::sleep(Duration::from_millis(300));
                scope.spawn(racer);
            });
            let queued = watch.wait_for(
                3,
                Duration::from_millis(50),
                Duration::from_secs(30),
                &|| false,
            );
            assert_eq!(queued, 2);
            holder.execute_batch("ROLLBACK").unwrap();
        });
    }

    #[test]
    fn a_dropped_watch_is_forgotten_and_the_others_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let (one, two) = (dir.path().join("one.db"), dir.path().join("two.db"));
        crate::init_db(&one).unwrap();
        crate::init_db(&two).unwrap();
        let (first, second) = (
            WriteLockWatch::new(&one).unwrap(),
            WriteLockWatch::new(&two).unwrap(),
        );
        let (dropped, kept) = (
            Arc::downgrade(&first.watched),
            Arc::downgrade(&second.watched),
        );
        drop(first);
        let watches = WATCHES.lock().unwrap_or_else(PoisonError::into_inner);
        assert!(!watches.iter().any(|watch| watch.ptr_eq(&dropped)));
        assert!(watches.iter().any(|watch| watch.ptr_eq(&kept)));
    }

    #[test]
    fn a_wait_for_more_than_come_ends_when_all_is_quiet() {
        let dir = tempfile::tempdir().unwrap();
        let (db, watch, holder) = held_lock(dir.path());
        thread::scope(|scope| {
            scope.spawn(|| {
                let conn = Connection::open(&db).unwrap();
                conn.busy_timeout(Duration::from_secs(20)).unwrap();
                conn.execute_batch("BEGIN IMMEDIATE; COMMIT").unwrap();
            });
            let started = Instant::now();
            let queued = watch.wait_for(
                2,
                Duration::from_millis(50),
                Duration::from_secs(10),
                &|| false,
            );
            assert_eq!(queued, 1);
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "{:?}",
                started.elapsed()
            );
            holder.execute_batch("ROLLBACK").unwrap();
        });
        assert_eq!(watch.db(), db.as_path());
    }

    #[test]
    fn a_racer_that_queued_before_the_wait_began_counts_as_come() {
        let dir = tempfile::tempdir().unwrap();
        let (db, watch, holder) = held_lock(dir.path());
        thread::scope(|scope| {
            scope.spawn(|| {
                let conn = Connection::open(&db).unwrap();
                conn.busy_timeout(Duration::from_secs(20)).unwrap();
                conn.execute_batch("BEGIN IMMEDIATE; COMMIT").unwrap();
            });
            // Bounded, so that a watch that sees nothing fails the test
            // instead of hanging it.
            let deadline = Instant::now() + Duration::from_secs(10);
            while watch.refused() == 0 {
                assert!(
                    Instant::now() < deadline,
                    "the watch never saw the queued racer"
                );
                thread::sleep(Duration::from_millis(1));
            }
            let started = Instant::now();
            let queued = watch.wait_for(
                2,
                Duration::from_millis(50),
                Duration::from_secs(10),
                &|| false,
            );
            assert_eq!(queued, 1);
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "{:?}",
                started.elapsed()
            );
            holder.execute_batch("ROLLBACK").unwrap();
        });
    }

    #[test]
    fn the_watch_sees_the_lock_taken() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("jobs.db");
        crate::init_db(&db).unwrap();
        let watch = WriteLockWatch::new(&db).unwrap();
        assert!(!watch.saw_the_lock_taken(), "nothing has asked for it yet");
        let holder = Connection::open(&db).unwrap();
        holder.execute_batch("BEGIN IMMEDIATE").unwrap();
        assert!(watch.saw_the_lock_taken());
        assert_eq!(watch.refused(), 0);
        holder.execute_batch("ROLLBACK").unwrap();
    }

    #[test]
    fn a_database_that_is_not_there_cannot_be_watched() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("jobs.db");
        let error = WriteLockWatch::new(&db).err().expect("an error");
        assert_eq!(error, ShimError::NoDatabase { path: db.clone() });
        assert!(error.to_string().contains("init_db"), "{error}");
        crate::init_db(&db).unwrap();
        assert_eq!(WriteLockWatch::new(&db).unwrap().db(), db.as_path());
    }

    #[test]
    fn a_wait_ends_when_the_racing_calls_have_returned() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("jobs.db");
        crate::init_db(&db).unwrap();
        let watch = WriteLockWatch::new(&db).unwrap();
        let started = Instant::now();
        let queued = watch.wait_for(
            2,
            Duration::from_millis(50),
            Duration::from_secs(10),
            &|| true,
        );
        assert_eq!(queued, 0);
        assert!(started.elapsed() < Duration::from_secs(1));
    }

    #[test]
    fn before_the_first_racer_comes_only_the_limit_ends_the_wait() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("jobs.db");
        crate::init_db(&db).unwrap();
        let watch = WriteLockWatch::new(&db).unwrap();
        let started = Instant::now();
        let queued = watch.wait_for(
            1,
            Duration::from_millis(10),
            Duration::from_millis(300),
            &|| false,
        );
        assert_eq!(queued, 0);
        assert!(started.elapsed() >= Duration::from_millis(300));
    }
}
