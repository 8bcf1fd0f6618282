//! Races that end the same way every time: racing calls queued behind a
//! write lock that another client holds, and let go together once every
//! one of them is waiting for it.
//!
//! A claim that looks the lease up before it takes the write lock (the
//! check-then-act race of exercise 8b) wins twice only when two claims
//! both look before either writes. Left to the scheduler, that happens on
//! some runs and not on others. Queued behind a held lock, every claim has
//! looked by the time the lock is let go, so such a claim is caught on
//! every run, while a correct one still has exactly one winner.

use crate::vfs_shim::{ShimError, WriteLockWatch};
use rusqlite::Connection;
use std::path::Path;
use std::thread;
use std::time::Duration;

/// How long the lock stays held after the last racer queued, at least,
/// when fewer racers queue than were expected (an implementation that runs
/// fewer claims at once): no more are coming. The wait grows with the
/// machine's pace (see [`WriteLockWatch::wait_for`]): with a fixed 60 ms a
/// loaded machine let the lock go before 08b's racers had all looked, and
/// 08b survived one run in twenty.
const QUIET: Duration = Duration::from_millis(60);

/// The longest the lock is held in any case.
const LIMIT: Duration = Duration::from_secs(5);

/// How long the lock is held for racers the lab cannot see queue (those of
/// an implementation in another process): long enough for a program's
/// racing claims, too, to have all looked by the time it is let go on a
/// loaded machine.
const UNSEEN: Duration = Duration::from_millis(250);

/// Why a race could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum RaceError {
    /// The write lock could not be taken or let go.
    #[error("holding the write lock with a plain connection: {0}")]
    Lock(#[from] rusqlite::Error),
    /// The queue could not be watched.
    #[error(transparent)]
    Watch(#[from] ShimError),
    /// The watch did not see this process take the lock, so it could not
    /// see the racers queue behind it either.
    #[error("{}: the write-lock watch did not see the lock taken, so it cannot see racers queue; is every connection opened through the lab's VFS shim?", .0.display())]
    Unseen(std::path::PathBuf),
}

/// Runs `race` on another thread while a plain connection of this thread
/// holds the write lock of the database at `db` (`BEGIN IMMEDIATE`), and
/// lets the lock go once `racers` connections are queued behind it.
///
/// The queue is seen through the lab's VFS shim ([`WriteLockWatch`]),
/// which sees only this process's connections: with `seen` false (the
/// racers are another process's), the lock is let go after a fixed pause
/// instead. When fewer than `racers` queue, the lock is let go once none
/// has queued for a while. A panic in `race` is passed on.
pub fn behind_a_held_lock<T: Send>(
    db: &Path,
    racers: usize,
    seen: bool,
    race: impl FnOnce() -> T + Send,
) -> Result<T, RaceError> {
    let watch = seen.then(|| WriteLockWatch::new(db)).transpose()?;
    let holder = Connection::open(db)?;
    holder.execute_batch("BEGIN IMMEDIATE")?;
    if watch
        .as_ref()
        .is_some_and(|watch| !watch.saw_the_lock_taken())
    {
        // Waiting would only ever end at the limit, and the race would be
        // left to the scheduler: say so instead.
        return Err(RaceError::Unseen(db.to_path_buf()));
    }
    let (answer, released) = thread::scope(|scope| {
        let racing = scope.spawn(race);
        match &watch {
            Some(watch) => {
                watch.wait_for(racers, QUIET, LIMIT, &|| racing.is_finished());
            }
            None => thread::sleep(UNSEEN),
        }
        let released = holder.execute_batch("ROLLBACK");
        let answer = racing
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (answer, released)
    });
    released?;
    Ok(answer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variant::Variant;

    fn new_job(dir: &Path) -> std::path::PathBuf {
        let db = dir.join("jobs.db");
        crate::init_db(&db).unwrap();
        crate::enqueue(&db, "j").unwrap();
        db
    }

    #[test]
    fn a_check_then_act_claim_wins_more_than_once_every_time() {
        let racing = Variant::find("08b").unwrap().open(LIMIT);
        for _ in 0..5 {
            let dir = tempfile::tempdir().unwrap();
            let db = new_job(dir.path());
            let owners = ["A", "B", "C", "D"];
            let answers = behind_a_held_lock(&db, owners.len(), true, || {
                racing.claim_many(&db, "j", &owners, 100.0, 10.0)
            })
            .unwrap()
            .unwrap();
            assert!(answers.iter().flatten().count() > 1, "{answers:?}");
        }
    }

    #[test]
    fn a_correct_claim_still_has_one_winner() {
        let dir = tempfile::tempdir().unwrap();
        let db = new_job(dir.path());
        let owners = ["A", "B", "C", "D"];
        let answers = behind_a_held_lock(&db, owners.len(), true, || {
            crate::claim_many(&db, "j", &owners, 100.0, 10.0)
        })
        .unwrap()
        .unwrap();
        assert_eq!(answers.iter().flatten().count(), 1, "{answers:?}");
    }

    #[test]
    fn fewer_racers_than_expected_end_the_wait_early() {
        let dir = tempfile::tempdir().unwrap();
        let db = new_job(dir.path());
        let started = std::time::Instant::now();
        let fence = behind_a_held_lock(&db, 8, true, || crate::claim(&db, "j", "A", 100.0, 10.0))
            .unwrap()
            .unwrap();
        assert_eq!(fence.map(|fence| fence.0), Some(1));
        assert!(started.elapsed() < LIMIT, "{:?}", started.elapsed());
    }
}
