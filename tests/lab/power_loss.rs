//! Power cuts and I/O errors under the store, on the power-loss shim
//! (`lease_lab::vfs_shim`).
//!
//! - SQLite's WAL recovery really runs after a cut: commits never synced
//!   are gone, and a torn frame fails its checksum.
//! - A history of enqueues, claims, renewals, completions, releases, a
//!   `claim_many` and a checkpoint, on the path functions and on a kept
//!   `Store`, is replayed from the same file and cut at every sync point
//!   (before and after it takes effect), after every write between them,
//!   and at its end, whole and with torn writes. After each cut and a
//!   reboot, no fence that was returned is lost or handed out again, no
//!   accepted completion is lost, and the file is sound. The same history
//!   on mutant h04g (`synchronous=NORMAL`) must break these promises.
//! - Every read, write, sync and truncation of each operation fails in
//!   turn (`SQLITE_IOERR_*`, `SQLITE_FULL`): the call answers an error
//!   naming the file, or an answer the file holds, and the file holds the
//!   whole operation or none of it.

use lease_lab::job_store::JobStore;
use lease_lab::variant;
use lease_lab::vfs_shim::{self, CutPoint, Disk, IoFault, Tearing};
use lease_lab::{Fence, Job, Store, StoreError};
use rusqlite::Connection;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

/// A folder for test databases, in memory (`/dev/shm`) when there is one:
/// the shim decides what is durable, so real syncs need not be slow.
fn scratch() -> tempfile::TempDir {
    let builder = tempfile::Builder::new().prefix("power-loss-").to_owned();
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        builder.tempdir_in(shm).expect("a folder in /dev/shm")
    } else {
        builder.tempdir().expect("a temporary folder")
    }
}

/// The files of the database at `db`, by suffix, as they are now.
fn snapshot(db: &Path) -> Vec<(&'static str, Vec<u8>)> {
    ["", "-wal"]
        .into_iter()
        .filter_map(|suffix| {
            std::fs::read(format!("{}{suffix}", db.display()))
                .ok()
                .map(|bytes| (suffix, bytes))
        })
        .collect()
}

/// Writes a snapshot as the database at `db` (no `-shm`: a fresh start).
fn restore(files: &[(&'static str, Vec<u8>)], db: &Path) {
    for (suffix, bytes) in files {
        std::fs::write(format!("{}{suffix}", db.display()), bytes).expect("write a database file");
    }
}

fn journal_mode(db: &Path) -> String {
    Connection::open(db)
        .and_then(|conn| conn.query_row("PRAGMA journal_mode", [], |row| row.get(0)))
        .unwrap_or_else(|error| format!("journal_mode failed: {error}"))
}

fn integrity(db: &Path) -> String {
    Connection::open(db)
        .and_then(|conn| conn.query_row("PRAGMA integrity_check", [], |row| row.get(0)))
        .unwrap_or_else(|error| format!("integrity_check failed: {error}"))
}

/// Every stored row, read with plain SQL; `None` when there is no table.
fn read_rows(db: &Path) -> Option<Vec<Job>> {
    let conn = Connection::open(db).ok()?;
    let mut statement = conn
        .prepare("SELECT id, owner, until, fence, result, done FROM jobs ORDER BY id")
        .ok()?;
    let rows = statement
        .query_map([], |row| {
            Ok(Job {
                id: row.get(0)?,
                owner: row.get(1)?,
                until: row.get(2)?,
                fence: Fence(row.get(3)?),
                result: row.get(4)?,
                done: row.get::<_, i64>(5)? != 0,
            })
        })
        .ok()?;
    rows.collect::<rusqlite::Result<Vec<Job>>>().ok()
}

// ---------------------------------------------------------------------------
// WAL recovery after a cut
// ---------------------------------------------------------------------------

/// The valid frames of the log, as recovery rebuilt the index from it.
fn log_frames(conn: &Connection) -> i64 {
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| row.get(1))
        .expect("wal_checkpoint")
}

/// A database with one synced commit (row 1), and a second commit of
/// three pages (row 2) written to the log with `synchronous=OFF`, so that
/// its frames are still unsynced; the cut happens with `tearing`.
/// Answers the cut's report, the rows and the log's frames after reboot.
fn cut_an_unsynced_commit(
    tearing: Tearing,
) -> (lease_lab::vfs_shim::CutReport, Vec<i64>, i64, i64) {
    vfs_shim::install().expect("install the shim");
    let dir = scratch();
    let db = dir.path().join("t.db");
    let conn = Connection::open(&db).unwrap();
    conn.execute_batch(
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;
         CREATE TABLE t (id INTEGER PRIMARY KEY, pad BLOB);
         INSERT INTO t VALUES (1, zeroblob(100));",
    )
    .unwrap();
    // Counted from the log's length: a checkpoint now would make the next
    // commit restart the log instead of appending to it.
    let wal = std::fs::metadata(format!("{}-wal", db.display()))
        .unwrap()
        .len();
    let frames_before = i64::try_from((wal - 32) / (24 + 4096)).unwrap();
    let disk = Disk::track(&db).unwrap();
    conn.execute_batch("PRAGMA synchronous=OFF; INSERT INTO t VALUES (2, randomblob(10000));")
        .unwrap();
    let report = disk.cut_tearing(tearing).unwrap();
    drop(conn);
    let conn = Connection::open(&db).unwrap();
    let ids: Vec<i64> = conn
        .prepare("SELECT id FROM t ORDER BY id")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    let frames_after = log_frames(&conn);
    drop(conn);
    assert_eq!(integrity(&db), "ok", "{tearing:?}");
    (report, ids, frames_before, frames_after)
}

/// A page overwritten in place and never synced is put back as it was: the
/// shim keeps what the file held under each unsynced write, not only how
/// long the file was. (A rollback journal with `synchronous=OFF` makes
/// SQLite overwrite the database's pages with no sync.)
#[test]
fn an_unsynced_overwrite_in_place_is_undone_byte_for_byte() {
    vfs_shim::install().expect("install the shim");
    let dir = scratch();
    let db = dir.path().join("t.db");
    let conn = Connection::open(&db).unwrap();
    conn.execute_batch(
        "PRAGMA journal_mode=DELETE; PRAGMA synchronous=FULL;
         CREATE TABLE t (id INTEGER PRIMARY KEY, pad BLOB);
         INSERT INTO t VALUES (1, randomblob(3000)), (2, randomblob(3000)), (3, randomblob(3000));",
    )
    .unwrap();
    let synced = std::fs::read(&db).unwrap();
    let disk = Disk::track(&db).unwrap();
    conn.execute_batch("PRAGMA synchronous=OFF; UPDATE t SET pad = randomblob(3000) WHERE id = 2;")
        .unwrap();
    assert_ne!(
        std::fs::read(&db).unwrap(),
        synced,
        "the update reached the file"
    );
    disk.cut().unwrap();
    drop(conn);
    assert!(
        std::fs::read(&db).unwrap() == synced,
        "the file holds what it held at its last sync"
    );
    assert_eq!(integrity(&db), "ok");
}

/// Commits whose frames were never synced are gone after a cut, and the
/// WAL index is rebuilt from the log (its frame count is the synced one).
/// With torn writes, a commit frame whose header reached the disk but not
/// all of its page fails its checksum, and recovery drops the commit; a
/// commit that happened to reach the disk whole survives.
#[test]
fn wal_recovery_drops_unsynced_and_torn_commits() {
    let (report, ids, before, after) = cut_an_unsynced_commit(Tearing::None);
    assert!(report.writes_lost >= 6, "{report:?}");
    assert_eq!(ids, [1], "the unsynced commit must be gone");
    assert_eq!(
        after, before,
        "the rebuilt index holds the synced frames only"
    );

    let (mut torn_dropped, mut whole_kept) = (0, 0);
    for seed in 0..64 {
        let tearing = Tearing::AnySector { seed };
        let (report, ids, before, after) = cut_an_unsynced_commit(tearing);
        if report.writes_lost == 0 && report.writes_torn == 0 {
            // Every sector reached the disk: the commit is whole.
            assert_eq!(ids, [1, 2], "{report:?}");
            assert!(after > before, "{report:?}");
            whole_kept += 1;
        } else {
            // Some sector of the commit is missing: recovery must drop it
            // (it is the log's last commit), whatever else reached the disk.
            assert_eq!(ids, [1], "{report:?}");
            assert_eq!(after, before, "{report:?}");
            if report.writes_torn > 0 && report.writes_kept > 0 {
                torn_dropped += 1;
            }
        }
    }
    assert!(
        torn_dropped > 0,
        "no seed tore a frame whose header was kept"
    );
    eprintln!(
        "wal recovery: 64 torn cuts, {torn_dropped} dropped a commit with torn frames and kept headers, {whole_kept} kept a commit that reached the disk whole"
    );
}

// ---------------------------------------------------------------------------
// A history, cut at every sync point
// ---------------------------------------------------------------------------

/// Which form of the store a step goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Via {
    /// The path function (a connection per call).
    Path,
    /// The kept `Store` handle (the path function when the variant has none).
    Handle,
}

/// One step of the history.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Step {
    InitDb,
    Enqueue(&'static str),
    State(&'static str),
    Claim(&'static str, &'static str, f64, f64),
    Renew(&'static str, &'static str, i64, f64, f64),
    Complete(&'static str, &'static str, i64, f64, &'static str),
    Release(&'static str, &'static str, i64),
    ClaimMany(&'static str, &'static [&'static str], f64, f64),
    OpenHandle,
    CloseHandle,
    /// A plain connection checkpoints the log, truncates it, and closes;
    /// being the last connection, it also deletes the log.
    Checkpoint,
}

/// What a step answered.
#[derive(Debug, Clone, PartialEq)]
enum Answer {
    Done,
    Bool(bool),
    Fence(Option<i64>),
    Fences(Vec<Option<i64>>),
    Row(Option<Job>),
}

use Step::*;
use Via::{Handle as H, Path as P};

/// The history, with the answers the contract promises (`claim_many`: one
/// winner, whichever it is).
const HISTORY: &[(Via, Step)] = &[
    (P, Enqueue("a")),
    (P, Enqueue("b")),
    (P, Enqueue("c")),
    (P, Claim("a", "A", 100.0, 10.0)),
    (P, Renew("a", "A", 1, 105.0, 10.0)),
    (P, Claim("b", "B", 100.0, 10.0)),
    (P, Complete("a", "A", 1, 106.0, "a by A")),
    (P, Release("b", "B", 1)),
    (P, Claim("b", "C", 107.0, 10.0)),
    (P, State("b")),
    (H, OpenHandle),
    (H, Claim("c", "D", 108.0, 10.0)),
    (H, Renew("c", "D", 1, 109.0, 10.0)),
    (H, Complete("b", "C", 2, 110.0, "b by C")),
    (H, Claim("a", "X", 200.0, 10.0)),
    (H, CloseHandle),
    (P, Checkpoint),
    (P, Claim("c", "E", 120.0, 10.0)),
    (P, Complete("c", "D", 1, 121.0, "late")),
    (P, ClaimMany("c", &["F", "G", "H"], 131.0, 10.0)),
    (P, Enqueue("d")),
    (P, Claim("d", "A", 130.0, 5.0)),
    (H, OpenHandle),
    (H, Release("d", "A", 1)),
    (H, Claim("d", "B", 140.0, 5.0)),
    (H, Complete("d", "B", 2, 141.0, "d by B")),
    (H, CloseHandle),
    (P, State("d")),
];

/// The answers a clean run must give, step by step.
fn expected(step: usize) -> Option<Answer> {
    use Answer::{Bool, Fence as F};
    Some(match HISTORY[step].1 {
        Enqueue(_) => Bool(true),
        Claim("a", "X", ..) => F(None),
        Claim("a" | "b" | "c" | "d", _, now, _) => F(Some(match now {
            100.0 | 108.0 | 130.0 => 1,
            _ => 2,
        })),
        Renew(..) | Release(..) => Bool(true),
        Complete(_, _, _, _, result) => Bool(result != "late"),
        InitDb | OpenHandle | CloseHandle | Checkpoint => Answer::Done,
        _ => return None, // states and claim_many: checked by `check_answer`
    })
}

/// A store to run the history on: a variant's path functions, and, for the
/// library's own store, its kept `Store` handle.
struct Subject {
    name: &'static str,
    store: &'static dyn JobStore,
    handles: bool,
}

/// How a run of the history went.
#[derive(Debug, Default)]
struct Run {
    /// The steps that answered, with their answers.
    answered: Vec<(usize, Answer)>,
    /// The step during which the power was cut, if any (its outcome is
    /// unknown unless it answered).
    cut_during: Option<usize>,
    /// A step that failed though no cut happened.
    failure: Option<String>,
}

fn run_step(
    subject: &Subject,
    db: &Path,
    handle: &mut Option<Store>,
    via: Via,
    step: Step,
) -> Result<Answer, String> {
    let text = |error: StoreError| error.to_string();
    let kept = match (via, subject.handles) {
        (Via::Handle, true) => handle.as_ref(),
        _ => None,
    };
    let store = subject.store;
    Ok(match step {
        InitDb => {
            store.init_db(db).map_err(text)?;
            Answer::Done
        }
        Enqueue(job) => Answer::Bool(
            match kept {
                Some(h) => h.enqueue(job),
                None => store.enqueue(db, job),
            }
            .map_err(text)?,
        ),
        State(job) => Answer::Row(
            match kept {
                Some(h) => h.state(job),
                None => store.state(db, job),
            }
            .map_err(text)?,
        ),
        Claim(job, owner, now, ttl) => Answer::Fence(
            match kept {
                Some(h) => h.claim(job, owner, now, ttl),
                None => store.claim(db, job, owner, now, ttl),
            }
            .map_err(text)?
            .map(|f| f.0),
        ),
        Renew(job, owner, fence, now, ttl) => Answer::Bool(
            match kept {
                Some(h) => h.renew(job, owner, Fence(fence), now, ttl),
                None => store.renew(db, job, owner, Fence(fence), now, ttl),
            }
            .map_err(text)?,
        ),
        Complete(job, owner, fence, now, result) => Answer::Bool(
            match kept {
                Some(h) => h.complete(job, owner, Fence(fence), now, result),
                None => store.complete(db, job, owner, Fence(fence), now, result),
            }
            .map_err(text)?,
        ),
        Release(job, owner, fence) => Answer::Bool(
            match kept {
                Some(h) => h.release(job, owner, Fence(fence)),
                None => store.release(db, job, owner, Fence(fence)),
            }
            .map_err(text)?,
        ),
        ClaimMany(job, owners, now, ttl) => Answer::Fences(
            store
                .claim_many(db, job, owners, now, ttl)
                .map_err(text)?
                .into_iter()
                .map(|f| f.map(|f| f.0))
                .collect(),
        ),
        OpenHandle => {
            if subject.handles {
                *handle = Some(Store::open(db).map_err(text)?);
            }
            Answer::Done
        }
        CloseHandle => {
            *handle = None;
            Answer::Done
        }
        Checkpoint => {
            let conn = Connection::open(db).map_err(|e| e.to_string())?;
            conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| {
                row.get::<_, i64>(0)
            })
            .map_err(|e| e.to_string())?;
            conn.close().map_err(|(_, e)| e.to_string())?;
            Answer::Done
        }
    })
}

/// Runs the history on `db` until it ends or the power is cut.
fn run_history(subject: &Subject, db: &Path, disk: &Disk) -> Run {
    let mut run = Run::default();
    let mut handle = None;
    for (index, (via, step)) in HISTORY.iter().enumerate() {
        let cuts = disk.cut_count();
        let answer = run_step(subject, db, &mut handle, *via, *step);
        let cut = disk.cut_count() > cuts;
        match answer {
            Ok(answer) => run.answered.push((index, answer)),
            Err(error) if !cut => {
                run.failure = Some(format!("step {index} {step:?} failed: {error}"));
                return run;
            }
            Err(_) => {}
        }
        if cut {
            run.cut_during = Some(index);
            return run;
        }
    }
    run
}

/// Checks the clean run's answers against the contract.
fn check_answers(run: &Run) -> Vec<String> {
    let mut problems = Vec::new();
    if let Some(failure) = &run.failure {
        problems.push(failure.clone());
    }
    if run.answered.len() != HISTORY.len() {
        problems.push(format!("only {} steps answered", run.answered.len()));
    }
    for (index, answer) in &run.answered {
        let good = match (HISTORY[*index].1, answer) {
            (ClaimMany(..), Answer::Fences(fences)) => {
                fences.iter().flatten().collect::<Vec<_>>() == [&3]
            }
            (State(_), Answer::Row(row)) => row.is_some(),
            _ => expected(*index).as_ref() == Some(answer),
        };
        if !good {
            problems.push(format!(
                "step {index} {:?} answered {answer:?}",
                HISTORY[*index].1
            ));
        }
    }
    problems
}

/// After a cut: a restarted worker's `init_db`, then the promises about
/// every answer given before the cut. Returns the broken ones.
fn check_after_reboot(subject: &Subject, db: &Path, run: &Run) -> Vec<String> {
    let mut problems = Vec::new();
    if let Some(failure) = &run.failure {
        problems.push(failure.clone());
    }
    if let Err(error) = subject.store.init_db(db) {
        problems.push(format!("init_db after the reboot failed: {error}"));
        return problems;
    }
    let integrity = integrity(db);
    if integrity != "ok" {
        problems.push(format!("integrity_check: {integrity}"));
    }
    let rows: BTreeMap<String, Job> = read_rows(db)
        .unwrap_or_default()
        .into_iter()
        .map(|row| (row.id.clone(), row))
        .collect();
    let mut returned: BTreeMap<&str, Vec<i64>> = BTreeMap::new();
    let mut completed: BTreeMap<&str, &str> = BTreeMap::new();
    for (index, answer) in &run.answered {
        match (HISTORY[*index].1, answer) {
            (Enqueue(job), Answer::Bool(true)) if !rows.contains_key(job) => {
                problems.push(format!("job {job} was enqueued and is gone"));
            }
            (Claim(job, ..), Answer::Fence(Some(fence))) => {
                returned.entry(job).or_default().push(*fence);
            }
            (ClaimMany(job, ..), Answer::Fences(fences)) => {
                returned
                    .entry(job)
                    .or_default()
                    .extend(fences.iter().flatten());
            }
            (Complete(job, _, _, _, result), Answer::Bool(true)) => {
                completed.insert(job, result);
            }
            _ => {}
        }
    }
    for (job, fences) in &returned {
        let highest = fences.iter().max().copied().unwrap_or(0);
        let Some(row) = rows.get(*job) else {
            problems.push(format!(
                "job {job} was handed fences {fences:?} and is gone"
            ));
            continue;
        };
        if row.fence.0 < highest {
            problems.push(format!(
                "job {job}: fence {highest} was returned, the file holds {}",
                row.fence.0
            ));
        }
        if !row.done {
            match subject.store.claim(db, job, "next", 1e6, 10.0) {
                Ok(Some(Fence(next))) if next <= highest || fences.contains(&next) => problems
                    .push(format!(
                        "job {job}: the next claim handed out fence {next} again (returned before the cut: {fences:?})"
                    )),
                Ok(_) => {}
                Err(error) => problems.push(format!("job {job}: the next claim failed: {error}")),
            }
        }
    }
    for (job, result) in completed {
        match rows.get(job) {
            Some(row) if row.done && row.result.as_deref() == Some(result) => {}
            row => problems.push(format!(
                "job {job}: the completion with {result:?} was accepted, the file holds {row:?}"
            )),
        }
    }
    problems
}

/// What one subject's sweep of cuts found.
#[derive(Debug, Default)]
struct Sweep {
    syncs: u64,
    writes: u64,
    histories: usize,
    cuts: usize,
    torn_writes: usize,
    broken: Vec<String>,
}

/// Replays the history from the same starting file, cut at every sync
/// point (before and after it takes effect), after every write, and after
/// the last step, once whole and once per tearing in `tearings`.
fn sweep(subject: &Subject, tearings: &[fn(u64) -> Tearing]) -> Sweep {
    vfs_shim::install().expect("install the shim");
    let dir = scratch();
    let start = dir.path().join("start.db");
    subject.store.init_db(&start).expect("init_db");
    let files = snapshot(&start);
    let mut sweep = Sweep::default();

    let fresh = |name: &str| {
        let db = dir.path().join(format!("{name}.db"));
        restore(&files, &db);
        db
    };
    let db = fresh("clean");
    let disk = Disk::track(&db).expect("track");
    let run = run_history(subject, &db, &disk);
    let counts = disk.counts();
    drop(disk);
    sweep.histories += 1;
    sweep.syncs = counts.syncs;
    sweep.writes = counts.writes;
    if subject.handles {
        let problems = check_answers(&run);
        assert!(
            problems.is_empty(),
            "{}: the clean run: {problems:#?}",
            subject.name
        );
    }

    let mut points: Vec<Option<CutPoint>> = Vec::new();
    for k in 1..=counts.syncs {
        points.extend([Some(CutPoint::BeforeSync(k)), Some(CutPoint::AfterSync(k))]);
    }
    points.extend((1..=counts.writes).map(|j| Some(CutPoint::AfterWrite(j))));
    points.push(None); // after the last step
    let mut variants: Vec<(Option<CutPoint>, Tearing)> =
        points.iter().map(|p| (*p, Tearing::None)).collect();
    for (n, point) in points.iter().enumerate() {
        // A sync that took effect leaves nothing to tear in its file.
        if !matches!(point, Some(CutPoint::AfterSync(_))) {
            for tearing in tearings {
                variants.push((*point, tearing(n as u64)));
            }
        }
    }
    for (n, (point, tearing)) in variants.into_iter().enumerate() {
        let db = fresh(&format!("cut{n}"));
        let disk = Disk::track(&db).expect("track");
        if let Some(point) = point {
            disk.cut_at(point, tearing);
        }
        let mut run = run_history(subject, &db, &disk);
        if disk.cut_count() == 0 {
            disk.cut_tearing(tearing).expect("cut");
            run.cut_during = None;
        }
        sweep.histories += 1;
        for report in disk.cuts() {
            sweep.cuts += 1;
            sweep.torn_writes += report.writes_torn;
            if let Some(error) = report.error {
                sweep.broken.push(format!("{point:?} {tearing:?}: {error}"));
            }
        }
        let problems = check_after_reboot(subject, &db, &run);
        drop(disk);
        for problem in problems {
            sweep.broken.push(format!(
                "cut at {point:?} ({tearing:?}, during step {:?}): {problem}",
                run.cut_during.map(|i| (i, HISTORY[i].1))
            ));
        }
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
        }
    }
    sweep
}

fn reference() -> Subject {
    Subject {
        name: "the library's store",
        store: &variant::ACTIVE,
        handles: true,
    }
}

fn h04g() -> Subject {
    Subject {
        name: "mutant h04g (synchronous=NORMAL)",
        store: &variant::compiled_mutant("h04g")
            .expect("mutants/h04g-claim-synchronous-normal.toml is compiled in")
            .store,
        handles: false,
    }
}

/// Every promise holds at every cut of the history, whole writes lost.
#[test]
fn every_returned_fence_and_completion_survives_a_cut_at_every_sync_point() {
    let started = Instant::now();
    let sweep = sweep(&reference(), &[]);
    eprintln!(
        "reference, whole writes lost: {} sync points and {} writes in the history; {} histories run, {} cuts, in {:.2?}",
        sweep.syncs,
        sweep.writes,
        sweep.histories,
        sweep.cuts,
        started.elapsed()
    );
    assert!(sweep.syncs >= 20, "{sweep:?}");
    assert!(sweep.broken.is_empty(), "{:#?}", sweep.broken);
}

/// The same with the last write torn, or any unsynced sectors kept.
#[test]
fn every_promise_survives_torn_writes() {
    let started = Instant::now();
    let sweep = sweep(
        &reference(),
        &[
            |seed| Tearing::LastWrite { seed },
            |seed| Tearing::AnySector { seed },
        ],
    );
    eprintln!(
        "reference, torn writes: {} histories run, {} cuts, {} writes torn, in {:.2?}",
        sweep.histories,
        sweep.cuts,
        sweep.torn_writes,
        started.elapsed()
    );
    assert!(sweep.torn_writes > 0, "{sweep:?}");
    assert!(sweep.broken.is_empty(), "{:#?}", sweep.broken);
}

/// The proof that the sweep can fail: with `synchronous=NORMAL`, a commit
/// is not synced, a cut loses it, and a fence is handed out twice.
#[test]
fn the_sweep_catches_a_store_with_synchronous_normal() {
    let started = Instant::now();
    let sweep = sweep(&h04g(), &[]);
    eprintln!(
        "h04g: {} sync points and {} writes in the history; {} histories run, {} promises broken, in {:.2?}; e.g. {:?}",
        sweep.syncs,
        sweep.writes,
        sweep.histories,
        sweep.broken.len(),
        started.elapsed(),
        sweep.broken.iter().find(|p| p.contains("again"))
    );
    assert!(
        sweep.broken.iter().any(|p| p.contains("again")),
        "no cut made h04g hand out a fence twice: {sweep:?}"
    );
}

// ---------------------------------------------------------------------------
// Injected I/O errors
// ---------------------------------------------------------------------------

/// One operation of the matrix: the steps that prepare its file (run
/// before tracking; none: no file at all) and the call itself.
struct Operation {
    name: &'static str,
    setup: &'static [Step],
    call: Step,
}

const CLAIMED: &[Step] = &[InitDb, Enqueue("j"), Claim("j", "A", 100.0, 10.0)];
const ENQUEUED: &[Step] = &[InitDb, Enqueue("j")];
const OWNERS: &[&str] = &["A", "B"];

const OPERATIONS: &[Operation] = &[
    Operation {
        name: "init_db (new file)",
        setup: &[],
        call: InitDb,
    },
    Operation {
        name: "init_db (existing file)",
        setup: CLAIMED,
        call: InitDb,
    },
    Operation {
        name: "enqueue",
        setup: &[InitDb],
        call: Enqueue("j"),
    },
    Operation {
        name: "state",
        setup: CLAIMED,
        call: State("j"),
    },
    Operation {
        name: "claim",
        setup: ENQUEUED,
        call: Claim("j", "A", 100.0, 10.0),
    },
    Operation {
        name: "renew",
        setup: CLAIMED,
        call: Renew("j", "A", 1, 105.0, 10.0),
    },
    Operation {
        name: "complete",
        setup: CLAIMED,
        call: Complete("j", "A", 1, 106.0, "done"),
    },
    Operation {
        name: "release",
        setup: CLAIMED,
        call: Release("j", "A", 1),
    },
    Operation {
        name: "claim_many",
        setup: ENQUEUED,
        call: ClaimMany("j", OWNERS, 100.0, 10.0),
    },
];

/// Whether `after` holds the whole operation, given the clean run's rows.
/// A race's winner is any of its owners.
fn holds_whole(call: Step, after: &Option<Vec<Job>>, clean: &Option<Vec<Job>>) -> bool {
    match (call, after, clean) {
        (ClaimMany(job, owners, ..), Some(after), Some(clean)) => {
            let anonymous = |rows: &[Job]| -> Vec<Job> {
                rows.iter()
                    .map(|row| Job {
                        owner: if row.id == job {
                            None
                        } else {
                            row.owner.clone()
                        },
                        ..row.clone()
                    })
                    .collect()
            };
            anonymous(after) == anonymous(clean)
                && after
                    .iter()
                    .filter(|row| row.id == job)
                    .all(|row| row.owner.as_deref().is_some_and(|o| owners.contains(&o)))
        }
        _ => after == clean,
    }
}

/// Whether an answer is the one the clean run gave and the file holds it.
fn answer_holds(call: Step, answer: &Answer, clean: &Answer, after: &Option<Vec<Job>>) -> bool {
    match (call, answer) {
        (ClaimMany(job, owners, ..), Answer::Fences(fences)) => {
            let winners: Vec<usize> = (0..fences.len()).filter(|i| fences[*i].is_some()).collect();
            let row = after.iter().flatten().find(|row| row.id == job);
            winners.len() == 1
                && row.is_some_and(|row| {
                    Some(row.fence.0) == fences[winners[0]]
                        && row.owner.as_deref() == Some(owners[winners[0]])
                })
        }
        _ => answer == clean,
    }
}

/// Every operation, with every read, write, sync and truncation it makes
/// failing in turn (`SQLITE_IOERR_*`, and `SQLITE_FULL` for writes): the
/// call answers an error naming the file, or an answer the file holds;
/// reopened without faults, the file is sound and holds the whole
/// operation or none of it, and a restarted worker's init_db works.
#[test]
fn every_injected_io_error_leaves_the_whole_operation_or_none() {
    let started = Instant::now();
    vfs_shim::install().expect("install the shim");
    let subject = reference();
    let dir = scratch();
    let mut problems = Vec::new();
    let (mut cells, mut errors, mut answered, mut unfired) = (0, 0, 0, 0);
    let mut totals = vfs_shim::IoCounts::default();
    for (number, operation) in OPERATIONS.iter().enumerate() {
        let start = dir.path().join(format!("op{number}.db"));
        let mut none = None;
        for step in operation.setup {
            run_step(&subject, &start, &mut none, Via::Path, *step).expect("setup");
        }
        let files = snapshot(&start);
        let before = read_rows(&start);
        let fresh = |name: String| {
            let db = dir.path().join(name);
            restore(&files, &db);
            db
        };

        let db = fresh(format!("op{number}-clean.db"));
        let disk = Disk::track(&db).expect("track");
        let clean = run_step(&subject, &db, &mut none, Via::Path, operation.call)
            .unwrap_or_else(|error| panic!("{}: the clean call failed: {error}", operation.name));
        let counts = disk.counts();
        drop(disk);
        let clean_rows = read_rows(&db);

        let mut faults: Vec<IoFault> = (1..=counts.reads).map(IoFault::Read).collect();
        faults.extend((1..=counts.writes).flat_map(|n| [IoFault::Write(n), IoFault::DiskFull(n)]));
        faults.extend((1..=counts.syncs).map(IoFault::Sync));
        faults.extend((1..=counts.truncates).map(IoFault::Truncate));
        totals.reads += counts.reads;
        totals.writes += counts.writes;
        totals.syncs += counts.syncs;
        totals.truncates += counts.truncates;
        eprintln!(
            "{}: {} reads, {} writes, {} syncs, {} truncations -> {} faults",
            operation.name,
            counts.reads,
            counts.writes,
            counts.syncs,
            counts.truncates,
            faults.len()
        );
        for (n, fault) in faults.into_iter().enumerate() {
            cells += 1;
            let db = fresh(format!("op{number}-{n}.db"));
            let shown = db.display().to_string();
            let disk = Disk::track(&db).expect("track");
            disk.fail_at(fault);
            let result = run_step(&subject, &db, &mut none, Via::Path, operation.call);
            let fired = disk.faults_fired() == 1;
            drop(disk);
            let mut problem = |text: String| {
                problems.push(format!("{} with {fault:?}: {text}", operation.name));
            };
            if !fired {
                unfired += 1;
                if !matches!(operation.call, ClaimMany(..)) {
                    problem(
                        "the fault never fired (the I/O calls differ from the clean run's)".into(),
                    );
                }
            }
            let integrity = integrity(&db);
            if integrity != "ok" {
                problem(format!("integrity_check: {integrity}"));
            }
            let after = read_rows(&db);
            let whole = holds_whole(operation.call, &after, &clean_rows);
            match &result {
                Err(error) => {
                    errors += 1;
                    if !error.contains(&shown) {
                        problem(format!("the error does not name the file: {error}"));
                    }
                    if !whole && after != before {
                        problem(format!("neither none nor all of it: {after:#?}"));
                    }
                }
                Ok(answer) => {
                    answered += 1;
                    if !answer_holds(operation.call, answer, &clean, &after) || !whole {
                        problem(format!("answered {answer:?}; the file holds {after:#?}"));
                    }
                    // When the first write of a new file (the header that
                    // turns on WAL) fails, SQLite commits the table through
                    // the rollback journal instead: init_db must then
                    // switch the file to WAL itself before it answers Ok.
                    if operation.call == InitDb && journal_mode(&db) != "wal" {
                        problem(
                            "init_db answered Ok on a file left in rollback-journal mode".into(),
                        );
                    }
                }
            }
            if let Err(error) = subject.store.init_db(&db) {
                problem(format!("init_db without faults afterwards failed: {error}"));
            }
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
            }
        }
    }
    eprintln!(
        "I/O-error matrix: {} operations x their {} I/O calls ({} reads, {} writes, {} syncs, {} truncations) x kinds (IOERR_READ; IOERR_WRITE and FULL; IOERR_FSYNC; IOERR_TRUNCATE) = {cells} cases: {errors} answered an error naming the file, {answered} answered (and the file holds it), {unfired} faults did not fire (claim_many's racing reads), in {:.2?}",
        OPERATIONS.len(),
        totals.reads + totals.writes + totals.syncs + totals.truncates,
        totals.reads,
        totals.writes,
        totals.syncs,
        totals.truncates,
        started.elapsed()
    );
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
    assert!(
        errors > 0 && cells > 100,
        "the matrix is too small to mean anything"
    );
}
