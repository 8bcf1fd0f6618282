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

use crate::job_store::JobStore;
use crate::program_threads::ProgramThreads;
use crate::vfs_shim::{ShimError, WriteLockWatch};
use std::collections::BTreeSet;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

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
/// a program whose threads this system does not show, or that wait for a
/// lock without sleeping in `nanosleep`): long enough for a program's
/// racing claims, too, to have all looked by the time it is let go on a
/// loaded machine.
const UNSEEN: Duration = Duration::from_millis(250);

/// How often another program's threads are looked at while racers queue.
const LOOK_EVERY: Duration = Duration::from_micros(500);

/// Where the racing calls' connections are, and so how the lab sees them
/// queue behind the held lock.
#[derive(Debug)]
pub enum Racers {
    /// In this process: each is seen queue through the lab's VFS shim.
    InThisProcess,
    /// In other programs whose threads can be looked at (one, or one
    /// per worker): each is seen queue when a new thread of one of them
    /// sleeps in SQLite's busy handler.
    InPrograms(Vec<ProgramThreads>),
    /// In another program that cannot be looked at: the lock is held for a
    /// fixed pause, a quarter of a second.
    Unseen,
}

impl Racers {
    /// Where the calls of `store` run, and how they can be seen.
    pub fn of(store: &dyn JobStore) -> Racers {
        Racers::of_all(&[store])
    }

    /// Where the calls of `stores` run: in this process when all of them
    /// do, else in the programs of those whose threads can be looked at
    /// (a program not started yet is not seen), else unseen.
    pub fn of_all(stores: &[&dyn JobStore]) -> Racers {
        if stores.iter().all(|store| store.in_this_process()) {
            return Racers::InThisProcess;
        }
        let programs: Vec<ProgramThreads> = stores
            .iter()
            .filter_map(|store| store.program_pid().and_then(ProgramThreads::of))
            .collect();
        if programs.is_empty() {
            Racers::Unseen
        } else {
            Racers::InPrograms(programs)
        }
    }
}

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
/// The queue is seen as [`Racers`] says: through the lab's VFS shim
/// ([`WriteLockWatch`]) for this process's connections, through another
/// program's sleeping threads for its, else not at all (the lock is then
/// let go after a fixed pause). When fewer than `racers` queue, the lock
/// is let go once none has queued for a while. A panic in `race` is passed
/// on.
pub fn behind_a_held_lock<T: Send>(
    db: &Path,
    racers: usize,
    seen: &Racers,
    race: impl FnOnce() -> T + Send,
) -> Result<T, RaceError> {
    let watch = matches!(seen, Racers::InThisProcess)
        .then(|| WriteLockWatch::new(db))
        .transpose()?;
    let holder = crate::shared_files::connect(db)?;
    holder.execute_batch("BEGIN IMMEDIATE")?;
    if watch
        .as_ref()
        .is_some_and(|watch| !watch.saw_the_lock_taken())
    {
        // Waiting would only ever end at the limit, and the race would be
        // left to the scheduler: say so instead.
        return Err(RaceError::Unseen(db.to_path_buf()));
    }
    // Threads of the program that sleep before the race are not racers.
    let asleep_before = match seen {
        Racers::InPrograms(programs) => napping(programs),
        _ => BTreeSet::new(),
    };
    let (answer, released) = thread::scope(|scope| {
        let racing = scope.spawn(race);
        match (&watch, seen) {
            (Some(watch), _) => {
                watch.wait_for(racers, QUIET, LIMIT, &|| racing.is_finished());
            }
            (None, Racers::InPrograms(programs)) => {
                wait_for_napping(programs, &asleep_before, racers, &|| racing.is_finished());
            }
            (None, _) => thread::sleep(UNSEEN),
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

/// Runs `race` on another thread while `held` (another client's lock on a
/// server's rows) is held, and lets it go once `racers` sessions wait for a
/// lock, or fewer have come and the wait ends as the file's does: the
/// server's form of [`behind_a_held_lock`]. A panic in `race` is passed on.
///
/// Errors: the lock could not be watched or let go.
pub fn behind_held_rows<T: Send>(
    held: Box<dyn crate::job_store::HeldLock>,
    racers: usize,
    race: impl FnOnce() -> T + Send,
) -> Result<T, String> {
    let mut failed = None;
    let (answer, released) = thread::scope(|scope| {
        let racing = scope.spawn(race);
        let mut waiting = || match held.waiting() {
            Ok(waiting) => waiting,
            // Nothing more can be seen: stop waiting, and say why.
            Err(error) => {
                failed.get_or_insert(error);
                racers
            }
        };
        wait_for_arrivals(racers, &mut waiting, &|| racing.is_finished());
        let released = held.let_go();
        let answer = racing
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (answer, released)
    });
    if let Some(error) = failed {
        return Err(error);
    }
    released?;
    Ok(answer)
}

/// The threads of `programs` asleep in a timed sleep right now.
fn napping(programs: &[ProgramThreads]) -> BTreeSet<crate::program_threads::ThreadId> {
    programs.iter().flat_map(ProgramThreads::napping).collect()
}

/// Waits until `racers` threads of the programs that were not asleep
/// before (`asleep_before`) have been seen asleep, or the race finished, as
/// [`wait_for_arrivals`] waits (the rule of [`WriteLockWatch::wait_for`];
/// none coming at all is a program that cannot be seen). Answers how many
/// came.
fn wait_for_napping(
    programs: &[ProgramThreads],
    asleep_before: &BTreeSet<crate::program_threads::ThreadId>,
    racers: usize,
    finished: &dyn Fn() -> bool,
) -> usize {
    let mut came = BTreeSet::new();
    let mut count = || {
        came.extend(
            napping(programs)
                .into_iter()
                .filter(|thread| !asleep_before.contains(thread)),
        );
        came.len()
    };
    wait_for_arrivals(racers, &mut count, finished)
}

/// Waits until `racers` have come, `count` saying how many have so far
/// (looked at every [`LOOK_EVERY`]), or the race `finished`. When fewer
/// come, the wait ends once none has come for [`QUIET`] or three times the
/// longest gap between arrivals; when none comes at all, after [`UNSEEN`];
/// and after [`LIMIT`] in any case. Answers how many came.
fn wait_for_arrivals(
    racers: usize,
    count: &mut dyn FnMut() -> usize,
    finished: &dyn Fn() -> bool,
) -> usize {
    let started = Instant::now();
    let mut came = 0;
    let mut last_change = started;
    let mut longest_gap: Option<Duration> = None;
    while came < racers && !finished() {
        let now = Instant::now();
        let waited = match longest_gap {
            None => now - started >= UNSEEN,
            Some(gap) => now - last_change >= QUIET.max(gap * 3),
        };
        if waited || now - started >= LIMIT {
            break;
        }
        thread::sleep(LOOK_EVERY);
        let now_came = count();
        if now_came != came {
            let now = Instant::now();
            longest_gap = Some(longest_gap.unwrap_or_default().max(now - last_change));
            last_change = now;
            came = now_came;
        }
    }
    came
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
            let answers = behind_a_held_lock(&db, owners.len(), &Racers::InThisProcess, || {
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
        let answers = behind_a_held_lock(&db, owners.len(), &Racers::InThisProcess, || {
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
        let fence = behind_a_held_lock(&db, 8, &Racers::InThisProcess, || {
            crate::claim(&db, "j", "A", 100.0, 10.0)
        })
        .unwrap()
        .unwrap();
        assert_eq!(fence.map(|fence| fence.0), Some(1));
        assert!(started.elapsed() < LIMIT, "{:?}", started.elapsed());
    }
}
