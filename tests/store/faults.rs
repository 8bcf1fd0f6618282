//! The store under many processes and crashes: nothing stale ever lands.
//!
//! Eight `fault-worker` processes (half on the path functions, half on a
//! kept `Store` handle) work one database file at once. Each loops enqueue →
//! claim → (renew) → stall, sometimes past its lease → complete, release or
//! walk away, on jobs that all workers crowd at the same time, with clocks
//! that disagree by up to ±20 ms, so leases overlap and are taken over all
//! the time. The test writes each worker's plan from a seeded generator;
//! each worker logs every operation and its answer (see
//! `src/bin/fault-worker.rs`). Afterwards [`check`] proves from the logs and
//! the final file that the store kept its promises.
//!
//! Bounded: each test runs a few seconds. For a soak, give the seconds:
//! `LEASE_LAB_SOAK_SECS=600 cargo test --release --test store faults:: -- --nocapture`.
//! `LEASE_LAB_SEED=N` replays the plans of a failed run (the seed is printed).

use rusqlite::Connection;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How many worker processes share the file.
const WORKERS: usize = 8;
/// How long each job is the newest one. Jobs open about as fast as the
/// workers can finish them (each commit waits for an fsync), so each job
/// sees several claims, and there is always work.
const SLOT_MS: u64 = 100;
/// How many jobs a worker chooses from: the current slot's and the next ones.
const WINDOW: u64 = 3;
/// The seed used when `LEASE_LAB_SEED` is not set: runs are reproducible.
const DEFAULT_SEED: u64 = 0x1ea5_e1ab;

fn seed() -> u64 {
    match std::env::var("LEASE_LAB_SEED") {
        Ok(text) => text
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("LEASE_LAB_SEED={text:?} is not a whole number")),
        Err(_) => DEFAULT_SEED,
    }
}

/// The run's length: `LEASE_LAB_SOAK_SECS` if set, else the CI default.
fn run_length(default: Duration) -> Duration {
    match std::env::var("LEASE_LAB_SOAK_SECS") {
        Ok(text) => Duration::from_secs(
            text.trim()
                .parse()
                .unwrap_or_else(|_| panic!("LEASE_LAB_SOAK_SECS={text:?} is not whole seconds")),
        ),
        Err(_) => default,
    }
}

fn unix_nanos() -> u64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("the system clock is after 1970");
    u64::try_from(since.as_nanos()).expect("fits until 2554")
}

// ---------------------------------------------------------------------------
// Plans
// ---------------------------------------------------------------------------

/// How a run's workers behave.
#[derive(Debug, Clone, Copy)]
enum Profile {
    /// Stalls of every length, about a third of them past the lease.
    Race,
    /// Most cycles do not stall and workers poll quickly, so that a worker
    /// is often inside an operation and kills land in the middle of one.
    Crash,
}

/// The plan of one worker: an endless stream of cycles from its own seed.
struct Plan {
    rng: fastrand::Rng,
    profile: Profile,
}

impl Plan {
    fn next_cycle(&mut self) -> Value {
        let rng = &mut self.rng;
        let ttl = rng.u64(40..160);
        let offset = rng.u64(0..WINDOW);
        let skew = rng.f64() * 40.0 - 20.0;
        // Renewals come at any time up to one and a half leases in: a
        // third of them after the lease has ended, and must be refused.
        let renew_after_ms = (rng.f64() < 0.25).then(|| rng.u64(0..ttl * 3 / 2));
        // A worker that will claim its job again stalls past its lease:
        // before the lease ends, its own lease would refuse the claim.
        let reclaim = rng.f64() < 0.15;
        let stall_ms = match (self.profile, rng.f64()) {
            _ if reclaim => rng.u64(ttl..2 * ttl),
            (Profile::Race, p) if p < 0.5 => rng.u64(0..10),
            (Profile::Race, p) if p < 0.83 => rng.u64(10..ttl / 2),
            (Profile::Crash, p) if p < 0.9 => rng.u64(0..3),
            _ => rng.u64(ttl..2 * ttl),
        };
        let finish = match rng.f64() {
            p if p < 0.7 => "complete",
            p if p < 0.9 => "release",
            _ => "abandon",
        };
        let stale_clock = rng.f64() < 0.35;
        let retry_complete = rng.f64() < 0.15;
        let meddle = rng.f64() < 0.1;
        let idle_ms = match self.profile {
            Profile::Race => rng.u64(5..30),
            Profile::Crash => rng.u64(1..5),
        };
        json!({
            "offset": offset,
            "skew": skew,
            "ttl": ttl as f64,
            "renew_after_ms": renew_after_ms,
            "stall_ms": stall_ms,
            "finish": finish,
            "stale_clock": stale_clock,
            "retry_complete": retry_complete,
            "reclaim": reclaim,
            "meddle": meddle,
            "idle_ms": idle_ms,
        })
    }
}

// ---------------------------------------------------------------------------
// Workers
// ---------------------------------------------------------------------------

/// One running `fault-worker` process and the thread feeding its plan.
struct Worker {
    owner: String,
    log: PathBuf,
    child: Child,
    feeder: Option<JoinHandle<()>>,
    killed: bool,
    status: Option<ExitStatus>,
}

impl Worker {
    /// Kills the process with SIGKILL (what `Child::kill` sends on Unix).
    fn kill(&mut self) {
        self.child.kill().expect("kill a worker");
        self.status = Some(self.child.wait().expect("reap a killed worker"));
        self.killed = true;
    }

    /// Kills the worker inside a call that writes, a random moment into it.
    ///
    /// Waits, up to `limit`, until the log ends in the `begin` line of a
    /// claim, renewal, completion or release (a call that takes the write
    /// lock), lets the call run up to a millisecond, then freezes the
    /// process (SIGSTOP) and reads the log again. Still inside a write: the
    /// frozen process is killed there. The call has ended: the process goes
    /// on (SIGCONT) and the next call is aimed at. Freezing first is what
    /// makes the kill land: on a fast disk a call takes less time than the
    /// delay, and a kill sent after it would strike between calls. Past
    /// `limit`, the worker is killed wherever it is.
    fn kill_inside_write(&mut self, rng: &mut fastrand::Rng, limit: Duration) {
        let give_up = Instant::now() + limit;
        while Instant::now() < give_up {
            if !self.inside_write() {
                thread::sleep(Duration::from_micros(200));
                continue;
            }
            thread::sleep(Duration::from_micros(rng.u64(0..1_000)));
            if !self.freeze() || self.inside_write() {
                break;
            }
            self.signal(libc::SIGCONT);
        }
        self.kill();
    }

    /// Whether the log ends in the `begin` line of a call that writes.
    fn inside_write(&self) -> bool {
        last_line(&self.log)
            .and_then(|line| serde_json::from_str::<Value>(&line).ok())
            .is_some_and(|line| {
                matches!(
                    line["op"].as_str(),
                    Some("claim" | "renew" | "complete" | "release")
                )
            })
    }

    /// Stops the process with SIGSTOP and waits until it has stopped, so
    /// that its log no longer moves. False when it exited instead.
    fn freeze(&self) -> bool {
        self.signal(libc::SIGSTOP);
        let pid = libc::id_t::from(self.child.id());
        // SAFETY: waitid(2) writes only into `info`, which lives on this
        // stack; WNOWAIT leaves the child's state for `Child::wait` to reap.
        let (rc, code) = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let rc = libc::waitid(
                libc::P_PID,
                pid,
                &mut info,
                libc::WSTOPPED | libc::WEXITED | libc::WNOWAIT,
            );
            (rc, info.si_code)
        };
        rc == 0 && code == libc::CLD_STOPPED
    }

    fn signal(&self, signal: libc::c_int) {
        let pid = libc::pid_t::try_from(self.child.id()).expect("a pid fits pid_t");
        // SAFETY: kill(2) has no memory effects; a pid that has exited but
        // not been reaped (the child is ours) still names it.
        unsafe {
            libc::kill(pid, signal);
        }
    }

    /// Waits for the worker to stop by itself, up to `limit`.
    fn wait(&mut self, limit: Duration) -> Option<ExitStatus> {
        let give_up = Instant::now() + limit;
        while self.status.is_none() && Instant::now() < give_up {
            self.status = self.child.try_wait().expect("poll a worker");
            thread::sleep(Duration::from_millis(20));
        }
        self.status
    }
}

impl Drop for Worker {
    /// A test that panics half-way must not leave processes behind.
    fn drop(&mut self) {
        if self.status.is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        if let Some(feeder) = self.feeder.take() {
            let _ = feeder.join();
        }
    }
}

/// One run: a database, its shared clock, and the workers on it.
struct Run {
    dir: tempfile::TempDir,
    db: PathBuf,
    seed: u64,
    profile: Profile,
    epoch_ms: u64,
    deadline_ms: u64,
    workers: Vec<Worker>,
}

impl Run {
    fn start(name: &str, profile: Profile, length: Duration) -> Run {
        let dir = tempfile::Builder::new()
            .prefix(&format!("lease-lab-{name}-"))
            .tempdir()
            .expect("a temporary folder");
        let db = dir.path().join("jobs.db");
        lease_lab::init_db(&db).expect("init_db");
        let epoch_ms = unix_nanos() / 1_000_000;
        let mut run = Run {
            dir,
            db,
            seed: seed(),
            profile,
            epoch_ms,
            deadline_ms: u64::try_from(length.as_millis()).expect("a sane length"),
            workers: Vec::new(),
        };
        eprintln!(
            "{name}: seed {} (LEASE_LAB_SEED), {} s, {WORKERS} workers, files in {}",
            run.seed,
            length.as_secs(),
            run.dir.path().display()
        );
        for index in 0..WORKERS {
            let worker = run.spawn(index, 0);
            run.workers.push(worker);
        }
        run
    }

    /// Starts worker `index` (its `generation`-th incarnation), alternating
    /// the two forms of the store.
    fn spawn(&self, index: usize, generation: u64) -> Worker {
        let owner = if generation == 0 {
            format!("w{index}")
        } else {
            format!("w{index}.{generation}")
        };
        let log = self.dir.path().join(format!("{owner}.log"));
        let stderr = fs::File::create(self.dir.path().join(format!("{owner}.stderr")))
            .expect("a file for the worker's stderr");
        let api = if index.is_multiple_of(2) {
            "path"
        } else {
            "handle"
        };
        let mut child = Command::new(env!("CARGO_BIN_EXE_fault-worker"))
            .arg("--db")
            .arg(&self.db)
            .args(["--owner", &owner, "--api", api])
            .args(["--epoch-ms", &self.epoch_ms.to_string()])
            .args(["--deadline-ms", &self.deadline_ms.to_string()])
            .args(["--slot-ms", &SLOT_MS.to_string()])
            .arg("--log")
            .arg(&log)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .expect("start fault-worker");
        let mut stdin = child.stdin.take().expect("the worker's stdin");
        // Each worker incarnation gets its own stream of the run's seed.
        let mut plan = Plan {
            rng: fastrand::Rng::with_seed(self.seed ^ ((index as u64) << 32) ^ generation),
            profile: self.profile,
        };
        // The pipe's buffer keeps the feeder a few hundred cycles ahead; it
        // stops when the worker exits and the write fails.
        let feeder = thread::spawn(move || loop {
            let mut line = plan.next_cycle().to_string();
            line.push('\n');
            if stdin.write_all(line.as_bytes()).is_err() {
                break;
            }
        });
        Worker {
            owner,
            log,
            child,
            feeder: Some(feeder),
            killed: false,
            status: None,
        }
    }

    /// Milliseconds on the run's shared clock.
    fn clock_ms(&self) -> u64 {
        (unix_nanos() / 1_000_000).saturating_sub(self.epoch_ms)
    }

    /// Waits for every live worker to reach the deadline and stop, and
    /// returns a violation for each that did not stop cleanly.
    fn finish(&mut self) -> Vec<String> {
        let remaining = Duration::from_millis(self.deadline_ms.saturating_sub(self.clock_ms()));
        let mut problems = Vec::new();
        for worker in self.workers.iter_mut().filter(|w| !w.killed) {
            // A cycle can stall for at most two leases (320 ms) past the
            // deadline; the rest is room for a slow, loaded machine.
            match worker.wait(remaining + Duration::from_secs(30)) {
                Some(status) if status.success() => {}
                Some(status) => problems.push(format!(
                    "worker {} ended with {status}; see its .stderr file",
                    worker.owner
                )),
                None => problems.push(format!(
                    "worker {} did not stop within 30 s of the deadline",
                    worker.owner
                )),
            }
        }
        problems
    }

    /// On failure, keeps the files for a look and names everything needed
    /// to reproduce.
    fn fail(self, test: &str, violations: &[String]) -> ! {
        let seed = self.seed;
        let workers: Vec<String> = self.workers.iter().map(|w| w.owner.clone()).collect();
        drop(self.workers);
        let kept = self.dir.keep();
        let shown: Vec<&String> = violations.iter().take(30).collect();
        panic!(
            "{test}: {} violation(s) with LEASE_LAB_SEED={seed}; logs and database kept in {} \
             (workers {workers:?}):\n  {}",
            violations.len(),
            kept.display(),
            shown
                .iter()
                .map(|v| v.as_str())
                .collect::<Vec<_>>()
                .join("\n  ")
        );
    }
}

// ---------------------------------------------------------------------------
// A reader watching the file while the run goes on
// ---------------------------------------------------------------------------

/// Reads every job's fence, done flag and result every few milliseconds on
/// its own connection and reports any that goes backwards: a job that
/// disappears, a fence that shrinks, a done job that is undone, a stored
/// result that changes. This sees the file between crashes, which the
/// final check cannot.
struct Watcher {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<(Vec<String>, u64)>,
}

impl Watcher {
    fn start(db: &Path) -> Watcher {
        let stop = Arc::new(AtomicBool::new(false));
        let db = db.to_path_buf();
        let flag = Arc::clone(&stop);
        let thread = thread::spawn(move || {
            let conn = Connection::open(&db).expect("the watcher's connection");
            conn.busy_timeout(Duration::from_secs(5))
                .expect("a busy timeout for the watcher");
            let mut seen: HashMap<String, (i64, bool, Option<String>)> = HashMap::new();
            let mut problems = Vec::new();
            let mut samples = 0;
            while !flag.load(Ordering::Relaxed) {
                let rows = conn
                    .prepare_cached("SELECT id, fence, done, result FROM jobs")
                    .and_then(|mut statement| {
                        statement
                            .query_map([], |row| {
                                Ok((
                                    row.get::<_, String>(0)?,
                                    (row.get(1)?, row.get::<_, i64>(2)? != 0, row.get(3)?),
                                ))
                            })?
                            .collect::<rusqlite::Result<Vec<_>>>()
                    });
                match rows {
                    Ok(rows) => {
                        if rows.len() < seen.len() {
                            let ids: Vec<&String> = rows.iter().map(|(id, _)| id).collect();
                            let gone: Vec<&String> =
                                seen.keys().filter(|id| !ids.contains(id)).collect();
                            problems.push(format!("watcher: jobs {gone:?} disappeared"));
                        }
                        for (id, now) in rows {
                            if let Some(before) = seen.get(&id) {
                                let backwards = now.0 < before.0
                                    || (before.1 && !now.1)
                                    || (before.1 && now.2 != before.2);
                                if backwards {
                                    problems.push(format!(
                                        "watcher: {id} went from (fence, done, result) {before:?} to {now:?}"
                                    ));
                                }
                            }
                            seen.insert(id, now);
                        }
                        samples += 1;
                    }
                    Err(error) => {
                        problems.push(format!("watcher: reading the jobs failed: {error}"))
                    }
                }
                thread::sleep(Duration::from_millis(10));
            }
            (problems, samples)
        });
        Watcher { stop, thread }
    }

    /// Stops the watcher; returns its violations and how many reads it made.
    fn stop(self) -> (Vec<String>, u64) {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().expect("the watcher does not panic")
    }
}

// ---------------------------------------------------------------------------
// Logs
// ---------------------------------------------------------------------------

/// One logged operation and what came of it.
#[derive(Debug)]
struct Op {
    worker: String,
    seq: u64,
    op: String,
    job: String,
    fence: Option<i64>,
    now: Option<f64>,
    ttl: Option<f64>,
    t0: u64,
    /// `None` when the worker was killed before the call returned.
    t1: Option<u64>,
    /// The answer: `Some(json)`, or `None` when unknown or an error.
    answer: Option<Value>,
    error: Option<String>,
}

impl Op {
    /// The fence a claim was granted.
    fn granted(&self) -> Option<i64> {
        (self.op == "claim")
            .then(|| self.answer.as_ref().and_then(Value::as_i64))
            .flatten()
    }

    fn answered(&self, value: bool) -> bool {
        self.answer == Some(Value::Bool(value))
    }

    /// Whether the call's outcome is unknown (the worker died during it).
    fn unknown(&self) -> bool {
        self.t1.is_none()
    }

    /// When the call returned, or "never" for an unknown outcome.
    fn end(&self) -> u64 {
        self.t1.unwrap_or(u64::MAX)
    }

    fn describe(&self) -> String {
        let answer = match (&self.answer, &self.error, self.t1) {
            (_, _, None) => "<killed before the answer>".to_string(),
            (Some(answer), _, _) => answer.to_string(),
            (None, Some(error), _) => format!("error: {error}"),
            (None, None, _) => "<nothing>".to_string(),
        };
        format!(
            "{}#{} {}({}, fence={:?}, now={:?}, ttl={:?}) -> {answer}",
            self.worker, self.seq, self.op, self.job, self.fence, self.now, self.ttl
        )
    }
}

/// The last whole line of a log, read from its end.
fn last_line(path: &Path) -> Option<String> {
    let mut file = fs::File::open(path).ok()?;
    let length = file.metadata().ok()?.len();
    file.seek(SeekFrom::Start(length.saturating_sub(1024)))
        .ok()?;
    let mut tail = String::new();
    file.read_to_string(&mut tail).ok()?;
    tail.lines().last().map(str::to_string)
}

/// Reads a worker's log. A killed worker's last line may be cut short.
fn read_log(worker: &str, path: &Path, killed: bool) -> Result<Vec<Op>, String> {
    let text = fs::read_to_string(path).map_err(|e| format!("{worker}: no log: {e}"))?;
    let lines: Vec<&str> = text.lines().collect();
    let mut ops: Vec<Op> = Vec::new();
    let mut open: BTreeMap<u64, usize> = BTreeMap::new();
    for (number, line) in lines.iter().enumerate() {
        let value: Value = match serde_json::from_str(line) {
            Ok(value) => value,
            Err(_) if killed && number + 1 == lines.len() => break,
            Err(e) => return Err(format!("{worker}: log line {}: {e}", number + 1)),
        };
        let seq = value["seq"].as_u64().ok_or(format!("{worker}: no seq"))?;
        if let Some(op) = value["op"].as_str() {
            open.insert(seq, ops.len());
            ops.push(Op {
                worker: worker.to_string(),
                seq,
                op: op.to_string(),
                job: value["job_id"].as_str().unwrap_or_default().to_string(),
                fence: value["fence"].as_i64(),
                now: value["now"].as_f64(),
                ttl: value["ttl"].as_f64(),
                t0: value["t0"].as_u64().ok_or(format!("{worker}: no t0"))?,
                t1: None,
                answer: None,
                error: None,
            });
        } else {
            let index = open
                .remove(&seq)
                .ok_or(format!("{worker}: an end line for seq {seq} with no begin"))?;
            let op = &mut ops[index];
            op.t1 = value["t1"].as_u64();
            op.answer = value.get("answer").cloned();
            op.error = value["error"].as_str().map(str::to_string);
        }
    }
    if !killed && !open.is_empty() {
        return Err(format!(
            "{worker}: stopped by itself yet operations {:?} have no answer",
            open.keys().collect::<Vec<_>>()
        ));
    }
    Ok(ops)
}

// ---------------------------------------------------------------------------
// The check
// ---------------------------------------------------------------------------

/// A stored row, read with plain SQL.
#[derive(Debug)]
struct Row {
    owner: Option<String>,
    until: f64,
    fence: i64,
    result: Option<String>,
    done: bool,
}

fn read_rows(db: &Path) -> BTreeMap<String, Row> {
    let conn = Connection::open(db).expect("open the database to check it");
    let mut statement = conn
        .prepare("SELECT id, owner, until, fence, result, done FROM jobs")
        .expect("the jobs table");
    statement
        .query_map([], |row| {
            Ok((
                row.get(0)?,
                Row {
                    owner: row.get(1)?,
                    until: row.get(2)?,
                    fence: row.get(3)?,
                    result: row.get(4)?,
                    done: row.get::<_, i64>(5)? != 0,
                },
            ))
        })
        .and_then(|rows| rows.collect())
        .expect("read the jobs")
}

/// How often each interesting event happened, so that a run proves it
/// exercised what it claims to.
#[derive(Debug, Default)]
struct Counts {
    claims_granted: usize,
    claims_refused: usize,
    takeovers: usize,
    renewals: usize,
    completions: usize,
    releases: usize,
    /// Completions refused after a newer fence had been handed out.
    stale_refused: usize,
    /// Of those, the ones whose lease had not run out by the worker's own
    /// clock: only the fence stopped them.
    saved_by_fence: usize,
    /// Renewals refused because the worker's own lease had ended.
    expired_renewals_refused: usize,
    /// Completions refused to a worker that had completed the job already.
    retries_refused: usize,
    /// Calls refused to a worker using a fence handed to another.
    impostors_refused: usize,
    /// Calls refused to a worker using its own older fence after it had
    /// claimed the job again.
    late_refused: usize,
    unknown_outcomes: usize,
}

/// What a worker believes about one of its leases when it makes a call:
/// when it ends, and whether the worker already gave it back or completed
/// the job with it.
#[derive(Debug, Clone, Copy)]
struct Lease {
    until: f64,
    released: bool,
    completed: bool,
}

impl Lease {
    /// Whether the lease lets its holder act at `now`, by its own account.
    fn valid_at(&self, now: f64) -> bool {
        !self.released && !self.completed && now < self.until
    }
}

/// Proves the store's promises from the logs and the final rows; returns
/// every violation found, and the counts.
///
/// Per job:
/// - `state` answered this job's row, not another's;
/// - every enqueue but one answered false, and the job exists;
/// - the fences handed out are distinct, rise in real time (a claim that
///   returned before another began got the smaller fence), and leave no gap
///   but for claims whose outcome is unknown;
/// - a claim took the lease only when the previous one was over (ended by
///   the claim's clock, or released);
/// - at most one completion was accepted, from the worker that was handed
///   the highest fence of the job, within its lease by its own clock;
/// - an accepted renewal or release came from the holder of a fence that no
///   claim had yet superseded;
/// - a completion or renewal by the holder of the current fence, within its
///   lease, while no claim could have run, was accepted (the store does not
///   refuse what it must grant);
/// - the final row is what those operations leave.
///
/// An operation whose worker was killed during it may or may not have
/// landed; the check allows both outcomes, and nothing else.
fn check(ops: &[Op], rows: &BTreeMap<String, Row>) -> (Vec<String>, Counts) {
    let mut violations = Vec::new();
    let mut counts = Counts::default();

    // Each worker's view of its own leases at each of its calls.
    let mut held_at: HashMap<(String, u64), Lease> = HashMap::new();
    let mut leases: HashMap<(String, String, i64), Lease> = HashMap::new();
    for op in ops {
        let key = (op.worker.clone(), op.job.clone(), op.fence.unwrap_or(0));
        if let Some(lease) = leases.get(&key) {
            held_at.insert((op.worker.clone(), op.seq), *lease);
        }
        match op.op.as_str() {
            "claim" => {
                if let Some(fence) = op.granted() {
                    let until = op.now.unwrap() + op.ttl.unwrap();
                    let lease = Lease {
                        until,
                        released: false,
                        completed: false,
                    };
                    leases.insert((op.worker.clone(), op.job.clone(), fence), lease);
                }
            }
            // An accepted call on a lease the worker was never granted is
            // reported below (`check_own_lease`, the superseded checks).
            "renew" if op.answered(true) => {
                if let Some(lease) = leases.get_mut(&key) {
                    lease.until = op.now.unwrap() + op.ttl.unwrap();
                }
            }
            "release" if op.answered(true) => {
                if let Some(lease) = leases.get_mut(&key) {
                    lease.released = true;
                }
            }
            "complete" if op.answered(true) => {
                if let Some(lease) = leases.get_mut(&key) {
                    lease.completed = true;
                }
            }
            _ => {}
        }
    }

    for op in ops {
        if op.unknown() {
            counts.unknown_outcomes += 1;
        }
        // `state` answers the row of the job asked for, or nothing.
        let answered_id = op.answer.as_ref().and_then(|row| row.get("id"));
        if op.op == "state" && answered_id.is_some_and(|id| id != op.job.as_str()) {
            violations.push(format!("state of another job's row: {}", op.describe()));
        }
        if let Some(error) = &op.error {
            violations.push(format!("an operation failed: {} ({error})", op.describe()));
        }
    }

    let mut by_job: BTreeMap<&str, Vec<&Op>> = BTreeMap::new();
    for op in ops {
        by_job.entry(op.job.as_str()).or_default().push(op);
    }

    for (job, job_ops) in &by_job {
        let of = |kind: &str| -> Vec<&Op> {
            job_ops.iter().copied().filter(|op| op.op == kind).collect()
        };
        let enqueues = of("enqueue");
        let claims = of("claim");
        let granted: Vec<(&Op, i64)> = claims
            .iter()
            .filter_map(|op| op.granted().map(|f| (*op, f)))
            .collect();
        let unknown_claims: Vec<&Op> = claims.iter().copied().filter(|op| op.unknown()).collect();
        counts.claims_granted += granted.len();
        counts.claims_refused += claims
            .iter()
            .filter(|op| op.answer == Some(Value::Null))
            .count();
        counts.takeovers += granted.iter().filter(|(_, f)| *f >= 2).count();
        let row = rows.get(*job);

        // Enqueue: only the first one adds the job, and the job stays.
        let added = enqueues.iter().filter(|op| op.answered(true)).count();
        let maybe_added = enqueues.iter().any(|op| op.unknown());
        if added > 1 {
            violations.push(format!("{job}: {added} enqueues answered true"));
        }
        match row {
            None if added > 0 => violations.push(format!("{job}: was enqueued and is gone")),
            Some(_) if added == 0 && !maybe_added => {
                violations.push(format!("{job}: exists though no enqueue added it"))
            }
            _ => {}
        }

        // Fences: distinct, rising in real time, no gap but unknown claims.
        let mut fences: Vec<i64> = granted.iter().map(|(_, f)| *f).collect();
        fences.sort_unstable();
        let max_granted = fences.last().copied().unwrap_or(0);
        if fences.windows(2).any(|w| w[0] == w[1]) {
            violations.push(format!("{job}: a fence was handed out twice: {fences:?}"));
        }
        // Saturating: a fence handed out twice makes more fences than
        // numbers, and is reported above rather than overflowing here.
        let missing = usize::try_from(max_granted)
            .unwrap_or(0)
            .saturating_sub(fences.len());
        if fences.first().is_some_and(|f| *f < 1) || missing > unknown_claims.len() {
            violations.push(format!(
                "{job}: fences {fences:?} skip numbers no unknown claim explains"
            ));
        }
        for (a, fa) in &granted {
            for (b, fb) in &granted {
                if a.end() < b.t0 && fa >= fb {
                    violations.push(format!(
                        "{job}: fence went backwards: {} returned before {} began",
                        a.describe(),
                        b.describe()
                    ));
                }
            }
        }
        // A claim may only take a lease that is over. The lease it took is
        // the previous fence's: over if, at the claim, its end was at or
        // before the claim's `now`, or it had been released. Its end moves
        // with its holder's renewals, so every state the lease may have
        // been in at the claim is considered, and the claim is wrong only
        // when the lease was valid in all of them.
        for (claim, fence) in &granted {
            let Some((previous, _)) = granted.iter().find(|(_, f)| *f == fence - 1) else {
                continue; // handed out by a claim whose answer is unknown
            };
            let now = claim.now.unwrap();
            let mut possible = vec![previous.now.unwrap() + previous.ttl.unwrap()];
            let changes = job_ops.iter().filter(|op| {
                op.worker == previous.worker
                    && op.fence == Some(fence - 1)
                    && matches!(op.op.as_str(), "renew" | "release")
                    && (op.answered(true) || op.unknown())
            });
            for op in changes {
                let until = if op.op == "release" {
                    0.0
                } else {
                    op.now.unwrap() + op.ttl.unwrap()
                };
                if op.end() < claim.t0 {
                    possible = vec![until]; // certainly before the claim
                } else if op.t0 < claim.end() {
                    possible.push(until); // perhaps before it
                }
            }
            if possible.iter().all(|until| *until > now) {
                violations.push(format!(
                    "{job}: {} took fence {fence} while {}'s lease was valid (it ends at {possible:?})",
                    claim.describe(),
                    previous.worker
                ));
            }
        }

        // The highest fence handed out before `op` began, by a claim that
        // returned before then.
        let superseded = |op: &Op, fence: i64| {
            granted
                .iter()
                .find(|(claim, f)| *f > fence && claim.end() < op.t0)
                .map(|(claim, _)| claim.describe())
        };
        // Whether some claim that could have taken the job over may have run
        // before `op` returned.
        let may_be_superseded = |op: &Op, fence: i64| {
            claims.iter().any(|claim| {
                claim.t0 < op.end()
                    && (claim.unknown() || claim.granted().is_some_and(|f| f > fence))
            })
        };

        // Refusals of the kinds the plans provoke, counted to prove the
        // run provoked them.
        for op in job_ops.iter().filter(|op| op.answered(false)) {
            let Some(fence) = op.fence else { continue };
            let own = |f: i64| {
                granted
                    .iter()
                    .any(|(c, g)| *g == f && c.worker == op.worker)
            };
            if !own(fence) {
                counts.impostors_refused += 1;
            } else if granted
                .iter()
                .any(|(c, g)| *g > fence && c.worker == op.worker && c.end() < op.t0)
            {
                counts.late_refused += 1;
            } else if op.op == "complete"
                && job_ops.iter().any(|c| {
                    c.op == "complete"
                        && c.worker == op.worker
                        && c.answered(true)
                        && c.seq < op.seq
                })
            {
                counts.retries_refused += 1;
            }
        }

        // Completions.
        let completes = of("complete");
        let accepted: Vec<&Op> = completes
            .iter()
            .copied()
            .filter(|op| op.answered(true))
            .collect();
        counts.completions += accepted.len();
        if accepted.len() > 1 {
            violations.push(format!(
                "{job}: {} completions accepted: {:?}",
                accepted.len(),
                accepted.iter().map(|op| op.describe()).collect::<Vec<_>>()
            ));
        }
        for op in &accepted {
            let fence = op.fence.unwrap();
            if !granted
                .iter()
                .any(|(c, f)| *f == fence && c.worker == op.worker)
            {
                violations.push(format!(
                    "{job}: accepted completion by a worker never handed its fence: {}",
                    op.describe()
                ));
            }
            if fence != max_granted {
                violations.push(format!(
                    "{job}: accepted completion {} does not carry the highest fence handed out ({max_granted})",
                    op.describe()
                ));
            }
            if let Some(claim) = superseded(op, fence) {
                violations.push(format!(
                    "{job}: stale completion accepted: {} began after {claim}",
                    op.describe()
                ));
            }
            check_own_lease(op, &held_at, &mut violations);
        }
        for op in completes.iter().filter(|op| op.answered(false)) {
            let fence = op.fence.unwrap();
            let lease = held_at.get(&(op.worker.clone(), op.seq));
            if superseded(op, fence).is_some() {
                counts.stale_refused += 1;
                if lease.is_some_and(|l| l.valid_at(op.now.unwrap())) {
                    counts.saved_by_fence += 1;
                }
            }
            must_have_been_granted(op, lease, may_be_superseded(op, fence), &mut violations);
        }

        // Renewals and releases.
        for kind in ["renew", "release"] {
            for op in of(kind) {
                let fence = op.fence.unwrap();
                if op.answered(true) {
                    if kind == "renew" {
                        counts.renewals += 1;
                        check_own_lease(op, &held_at, &mut violations);
                    } else {
                        counts.releases += 1;
                        if !granted
                            .iter()
                            .any(|(c, f)| *f == fence && c.worker == op.worker)
                        {
                            violations.push(format!(
                                "{job}: accepted release by a worker never handed its fence: {}",
                                op.describe()
                            ));
                        }
                    }
                    if let Some(claim) = superseded(op, fence) {
                        violations.push(format!(
                            "{job}: {kind} of a superseded fence accepted: {} began after {claim}",
                            op.describe()
                        ));
                    }
                    if let Some(done) = accepted.iter().find(|c| c.end() < op.t0) {
                        violations.push(format!(
                            "{job}: {kind} accepted after the job was done: {} after {}",
                            op.describe(),
                            done.describe()
                        ));
                    }
                } else if kind == "renew" && op.answered(false) {
                    let lease = held_at.get(&(op.worker.clone(), op.seq));
                    if lease.is_some_and(|l| !l.released && op.now.unwrap() >= l.until) {
                        counts.expired_renewals_refused += 1;
                    }
                    must_have_been_granted(
                        op,
                        lease,
                        may_be_superseded(op, fence),
                        &mut violations,
                    );
                }
            }
        }

        if let Some(row) = row {
            check_row(
                job,
                row,
                &granted,
                &unknown_claims,
                job_ops,
                &leases,
                &mut violations,
            );
        }
    }
    for id in rows.keys() {
        if !by_job.contains_key(id.as_str()) {
            violations.push(format!("{id}: a row that no worker ever enqueued"));
        }
    }
    (violations, counts)
}

/// An accepted renewal or completion must come within the worker's lease
/// by its own clock, and before it gave the lease back.
fn check_own_lease(op: &Op, held_at: &HashMap<(String, u64), Lease>, violations: &mut Vec<String>) {
    match held_at.get(&(op.worker.clone(), op.seq)) {
        Some(lease) if lease.valid_at(op.now.unwrap()) => {}
        lease => violations.push(format!(
            "{}: accepted outside the worker's lease {lease:?}: {}",
            op.job,
            op.describe()
        )),
    }
}

/// A refused renewal or completion is a violation when the worker held the
/// current lease by every account: within it by its clock, not given back,
/// and no claim could have taken the job over before the call returned.
fn must_have_been_granted(
    op: &Op,
    lease: Option<&Lease>,
    may_be_superseded: bool,
    violations: &mut Vec<String>,
) {
    let Some(lease) = lease else { return };
    if lease.valid_at(op.now.unwrap()) && !may_be_superseded {
        violations.push(format!(
            "{}: refused though the worker held the current lease until {}: {}",
            op.job,
            lease.until,
            op.describe()
        ));
    }
}

/// The final row must be what the logged operations leave, allowing either
/// outcome for the unknown ones.
fn check_row(
    job: &str,
    row: &Row,
    granted: &[(&Op, i64)],
    unknown_claims: &[&Op],
    job_ops: &[&Op],
    leases: &HashMap<(String, String, i64), Lease>,
    violations: &mut Vec<String>,
) {
    let max_granted = granted.iter().map(|(_, f)| *f).max().unwrap_or(0);
    let extra = i64::try_from(unknown_claims.len()).unwrap();
    if row.fence < max_granted || row.fence > max_granted + extra {
        violations.push(format!(
            "{job}: stored fence {} but {max_granted} handed out and {extra} unknown claims",
            row.fence
        ));
        return;
    }
    // Who may hold the stored fence: the worker granted it, or a worker
    // killed during a claim when the stored fence is beyond the logged ones.
    let holders: Vec<&str> = if row.fence == max_granted {
        granted
            .iter()
            .filter(|(_, f)| *f == row.fence)
            .map(|(op, _)| op.worker.as_str())
            .collect()
    } else {
        unknown_claims.iter().map(|op| op.worker.as_str()).collect()
    };
    let by_holder = |kind: &str, accepted_or_unknown: bool| {
        job_ops.iter().any(|op| {
            op.op == kind
                && op.fence == Some(row.fence)
                && holders.contains(&op.worker.as_str())
                && (op.answered(true) || (accepted_or_unknown && op.unknown()))
        })
    };
    if row.done {
        let completed = by_holder("complete", true);
        let expected_result = row
            .owner
            .as_ref()
            .map(|owner| format!("{owner}/{}", row.fence));
        if !completed
            || row.owner.as_deref().is_none_or(|o| !holders.contains(&o))
            || row.result != expected_result
        {
            violations.push(format!(
                "{job}: stored as done by {:?} with fence {} and result {:?}, which no accepted completion of the holder {holders:?} explains",
                row.owner, row.fence, row.result
            ));
        }
        return;
    }
    if job_ops
        .iter()
        .any(|op| op.op == "complete" && op.answered(true))
    {
        violations.push(format!(
            "{job}: a completion was accepted but the row is not done"
        ));
    }
    if row.result.is_some() {
        violations.push(format!(
            "{job}: not done yet holds a result {:?}",
            row.result
        ));
    }
    match &row.owner {
        None if row.fence == 0 => {}
        None => {
            if !by_holder("release", true) || row.until != 0.0 {
                violations.push(format!(
                    "{job}: no owner (until {}) but the holder of fence {} never released it",
                    row.until, row.fence
                ));
            }
        }
        Some(owner) if !holders.contains(&owner.as_str()) => violations.push(format!(
            "{job}: stored owner {owner} was not handed fence {} ({holders:?} were)",
            row.fence
        )),
        Some(owner) => {
            // The lease end must be the holder's latest, unless the holder
            // died during a renewal or claim that may have landed.
            let key = (owner.clone(), job.to_string(), row.fence);
            let uncertain = job_ops.iter().any(|op| op.unknown() && op.worker == *owner);
            if let Some(lease) = leases.get(&key) {
                if lease.released || (row.until != lease.until && !uncertain) {
                    violations.push(format!(
                        "{job}: stored lease of {owner} ends at {}, the worker's last lease {lease:?}",
                        row.until
                    ));
                }
            }
        }
    }
}

/// Reads every worker's log, the final rows, and runs [`check`].
fn check_run(run: &Run, mut violations: Vec<String>) -> (Vec<String>, Counts) {
    let mut ops = Vec::new();
    for worker in &run.workers {
        match read_log(&worker.owner, &worker.log, worker.killed) {
            Ok(log) => ops.extend(log),
            Err(problem) => violations.push(problem),
        }
    }
    let rows = read_rows(&run.db);
    let (found, counts) = check(&ops, &rows);
    violations.extend(found);
    (violations, counts)
}

/// Fails when an event that the run is meant to exercise never happened:
/// then the run proved nothing about it.
fn require_exercised(counts: &Counts, what: &[(&str, usize)], violations: &mut Vec<String>) {
    for (name, count) in what {
        if *count == 0 {
            violations.push(format!(
                "the run never exercised {name} ({counts:?}); the check proved nothing about it"
            ));
        }
    }
}

// ---------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------

/// Eight processes race over shared jobs with overlapping leases and
/// stalls past them. Proves, from every logged answer and the final file:
/// fences per job distinct and rising, never reused; at most one accepted
/// completion per job, from the holder of its highest fence; no stale
/// completion, renewal or release accepted; no call refused that had to be
/// granted; no error at this contention; every job still there.
#[test]
fn racing_processes_never_land_a_stale_result() {
    let mut run = Run::start("race", Profile::Race, run_length(Duration::from_secs(12)));
    let watcher = Watcher::start(&run.db);
    let mut violations = run.finish();
    let (watched, samples) = watcher.stop();
    violations.extend(watched);
    let (violations, counts) = check_run(&run, violations);
    let mut violations = violations;
    require_exercised(
        &counts,
        &[
            ("a granted claim", counts.claims_granted),
            ("a refused claim", counts.claims_refused),
            ("a takeover (fence above 1)", counts.takeovers),
            ("an accepted renewal", counts.renewals),
            ("an accepted completion", counts.completions),
            ("an accepted release", counts.releases),
            ("a stale completion refused", counts.stale_refused),
            (
                "a stale completion stopped only by the fence",
                counts.saved_by_fence,
            ),
            ("a second completion refused", counts.retries_refused),
            (
                "a renewal after the lease ended refused",
                counts.expired_renewals_refused,
            ),
            (
                "a call with another worker's fence refused",
                counts.impostors_refused,
            ),
            (
                "a late call with an older fence of the same worker refused",
                counts.late_refused,
            ),
            ("a watcher read", usize::try_from(samples).unwrap()),
        ],
        &mut violations,
    );
    if counts.unknown_outcomes > 0 {
        violations.push(format!(
            "{} operations have no answer though no worker was killed",
            counts.unknown_outcomes
        ));
    }
    eprintln!("race: {counts:?}, {samples} watcher reads");
    if !violations.is_empty() {
        run.fail("racing_processes_never_land_a_stale_result", &violations);
    }
}

/// Workers are killed with SIGKILL at random moments, most of them inside
/// an operation (a transaction, a commit's fsync, a connection being
/// opened), and replaced. Proves: `PRAGMA integrity_check` is ok; a reader
/// never saw a fence shrink, a done job undone or a result change; every
/// answered operation holds up as in the race test, whatever the killed
/// calls did; the workers that were not killed, and the replacements, go
/// on working after the kills.
#[test]
fn killed_workers_leave_a_sound_file_and_the_rest_carry_on() {
    let length = run_length(Duration::from_secs(8));
    let mut run = Run::start("crash", Profile::Crash, length);
    let watcher = Watcher::start(&run.db);
    let mut rng = fastrand::Rng::with_seed(run.seed);
    let mut generations = [0u64; WORKERS];
    // Where worker `index`'s live incarnation sits in `run.workers`.
    let mut live: Vec<usize> = (0..WORKERS).collect();
    let mut kills = 0;
    let mut mid_operation = 0;
    let mut last_kill_nanos = 0;
    // Leave the last 1.5 s without kills (a pause is up to 0.3 s), to see
    // the survivors carry on.
    while run.clock_ms() + 1_800 < run.deadline_ms {
        thread::sleep(Duration::from_millis(rng.u64(100..300)));
        let index = rng.usize(0..WORKERS);
        let victim = live[index];
        // Two kills in three land inside a call that writes, a random
        // moment into it, so kills strike transactions and commits. The
        // others strike at any moment.
        if rng.u8(0..3) > 0 {
            run.workers[victim].kill_inside_write(&mut rng, Duration::from_secs(1));
        } else {
            run.workers[victim].kill();
        }
        last_kill_nanos = unix_nanos();
        kills += 1;
        let ops = read_log(&run.workers[victim].owner, &run.workers[victim].log, true)
            .unwrap_or_default();
        if ops.last().is_some_and(Op::unknown) {
            mid_operation += 1;
        }
        generations[index] += 1;
        let replacement = run.spawn(index, generations[index]);
        live[index] = run.workers.len();
        run.workers.push(replacement);
    }
    let mut violations = run.finish();
    let (watched, samples) = watcher.stop();
    violations.extend(watched);

    let conn = Connection::open(&run.db).expect("open the database after the run");
    let integrity: String = conn
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .expect("run integrity_check");
    if integrity != "ok" {
        violations.push(format!("integrity_check: {integrity}"));
    }
    drop(conn);

    let (violations, counts) = check_run(&run, violations);
    let mut violations = violations;
    for worker in run.workers.iter().filter(|w| !w.killed) {
        let ops = read_log(&worker.owner, &worker.log, false).unwrap_or_default();
        if !ops.iter().any(|op| op.t0 > last_kill_nanos) {
            violations.push(format!(
                "{} made no call after the last kill: it did not carry on",
                worker.owner
            ));
        }
    }
    require_exercised(
        &counts,
        &[
            ("a kill", kills),
            ("a kill in the middle of an operation", mid_operation),
            ("an accepted completion", counts.completions),
            ("a takeover (fence above 1)", counts.takeovers),
            ("a watcher read", usize::try_from(samples).unwrap()),
        ],
        &mut violations,
    );
    eprintln!(
        "crash: {kills} kills, {mid_operation} inside an operation, {counts:?}, {samples} watcher reads"
    );
    if !violations.is_empty() {
        run.fail(
            "killed_workers_leave_a_sound_file_and_the_rest_carry_on",
            &violations,
        );
    }
}

// ---------------------------------------------------------------------------
// Power cuts: worker threads on the power-loss shim
// ---------------------------------------------------------------------------

/// How many worker threads share the file in the power-cut tests. (The
/// shim's memory of unsynced writes lives in this process, so the workers
/// are threads here, not processes.)
const POWER_WORKERS: usize = 4;

/// A store under the power-cut test: path functions, and whether the odd
/// workers keep a `Store` handle (the library's own store only).
#[derive(Clone, Copy)]
struct PowerSubject {
    store: &'static dyn lease_lab::job_store::JobStore,
    handles: bool,
}

/// How a worker thread reaches the store.
enum ThreadClient<'a> {
    Path(&'static dyn lease_lab::job_store::JobStore, &'a Path),
    Handle(lease_lab::Store),
}

impl ThreadClient<'_> {
    fn enqueue(&self, job: &str) -> lease_lab::Result<bool> {
        match self {
            ThreadClient::Path(store, db) => store.enqueue(db, job),
            ThreadClient::Handle(store) => store.enqueue(job),
        }
    }

    fn claim(
        &self,
        job: &str,
        owner: &str,
        now: f64,
        ttl: f64,
    ) -> lease_lab::Result<Option<lease_lab::Fence>> {
        match self {
            ThreadClient::Path(store, db) => store.claim(db, job, owner, now, ttl),
            ThreadClient::Handle(store) => store.claim(job, owner, now, ttl),
        }
    }

    fn renew(
        &self,
        job: &str,
        owner: &str,
        fence: lease_lab::Fence,
        now: f64,
        ttl: f64,
    ) -> lease_lab::Result<bool> {
        match self {
            ThreadClient::Path(store, db) => store.renew(db, job, owner, fence, now, ttl),
            ThreadClient::Handle(store) => store.renew(job, owner, fence, now, ttl),
        }
    }

    fn complete(
        &self,
        job: &str,
        owner: &str,
        fence: lease_lab::Fence,
        now: f64,
        result: &str,
    ) -> lease_lab::Result<bool> {
        match self {
            ThreadClient::Path(store, db) => store.complete(db, job, owner, fence, now, result),
            ThreadClient::Handle(store) => store.complete(job, owner, fence, now, result),
        }
    }

    fn release(&self, job: &str, owner: &str, fence: lease_lab::Fence) -> lease_lab::Result<bool> {
        match self {
            ThreadClient::Path(store, db) => store.release(db, job, owner, fence),
            ThreadClient::Handle(store) => store.release(job, owner, fence),
        }
    }
}

/// One worker thread of one power generation: it follows its plan, as a
/// `fault-worker` process does, logs every call as an [`Op`], and stops at
/// the first call that shows the power went off.
struct ThreadWorker<'a> {
    owner: String,
    client: ThreadClient<'a>,
    disk: &'a lease_lab::vfs_shim::Disk,
    /// The disk's cut count when this worker booted.
    booted_after: usize,
    epoch_ms: u64,
    ops: Vec<Op>,
}

impl ThreadWorker<'_> {
    fn clock_ms(&self) -> f64 {
        unix_nanos() as f64 / 1e6 - self.epoch_ms as f64
    }

    /// Whether the power was cut since this worker booted.
    fn powered_off(&self) -> bool {
        self.disk.cut_count() != self.booted_after
    }

    /// Runs and logs one call. A call that fails after the power went off
    /// has an unknown outcome (it may have landed): it is logged as a
    /// killed worker's call is, without an answer, and the worker stops.
    fn call<T: serde::Serialize>(
        &mut self,
        op: &str,
        job: &str,
        fence: Option<lease_lab::Fence>,
        (now, ttl): (Option<f64>, Option<f64>),
        call: impl FnOnce(&ThreadClient) -> lease_lab::Result<T>,
    ) -> Option<T> {
        let t0 = unix_nanos();
        let outcome = call(&self.client);
        let t1 = unix_nanos();
        let mut logged = Op {
            worker: self.owner.clone(),
            seq: self.ops.len() as u64,
            op: op.to_string(),
            job: job.to_string(),
            fence: fence.map(|f| f.0),
            now,
            ttl,
            t0,
            t1: Some(t1),
            answer: None,
            error: None,
        };
        let answer = match outcome {
            Ok(answer) => {
                logged.answer = Some(json!(answer));
                Some(answer)
            }
            Err(_) if self.powered_off() => {
                logged.t1 = None;
                None
            }
            Err(error) => {
                logged.error = Some(error.to_string());
                None
            }
        };
        self.ops.push(logged);
        answer
    }

    /// Works cycles of `plan` until the power goes off or `stop_ms`.
    fn run(mut self, mut plan: Plan, stop_ms: f64) -> Vec<Op> {
        while !self.powered_off() && self.clock_ms() < stop_ms {
            let cycle = plan.next_cycle();
            if self.cycle(&cycle).is_none() {
                break;
            }
        }
        self.ops
    }

    /// One cycle, as `fault-worker` runs it (without meddling); `None`
    /// when a call failed.
    fn cycle(&mut self, cycle: &Value) -> Option<()> {
        let number = |key: &str| cycle[key].as_f64().unwrap_or_default();
        let owner = self.owner.clone();
        let read = self.clock_ms();
        let job = format!("job-{}", read as u64 / SLOT_MS + cycle["offset"].as_u64()?);
        let job = job.as_str();
        self.call("enqueue", job, None, (None, None), |c| c.enqueue(job))?;
        let (skew, ttl) = (number("skew"), number("ttl"));
        let now = read + skew;
        let claimed = self.call("claim", job, None, (Some(now), Some(ttl)), |c| {
            c.claim(job, &owner, now, ttl)
        })?;
        let Some(fence) = claimed else {
            thread::sleep(Duration::from_millis(cycle["idle_ms"].as_u64()?));
            return Some(());
        };
        if let Some(pause) = cycle["renew_after_ms"].as_u64() {
            thread::sleep(Duration::from_millis(pause));
            let now = self.clock_ms() + skew;
            self.call("renew", job, Some(fence), (Some(now), Some(ttl)), |c| {
                c.renew(job, &owner, fence, now, ttl)
            })?;
        }
        thread::sleep(Duration::from_millis(cycle["stall_ms"].as_u64()?));
        let now = if cycle["stale_clock"] == json!(true) {
            now
        } else {
            self.clock_ms() + skew
        };
        if cycle["reclaim"] == json!(true) {
            let again = self.clock_ms() + skew;
            let reclaimed = self.call("claim", job, None, (Some(again), Some(ttl)), |c| {
                c.claim(job, &owner, again, ttl)
            })?;
            if let Some(newer) = reclaimed {
                self.call("renew", job, Some(fence), (Some(now), Some(ttl)), |c| {
                    c.renew(job, &owner, fence, now, ttl)
                })?;
                self.finish(cycle, job, fence, now)?;
                return self.finish(cycle, job, newer, again);
            }
        }
        self.finish(cycle, job, fence, now)
    }

    fn finish(
        &mut self,
        cycle: &Value,
        job: &str,
        fence: lease_lab::Fence,
        now: f64,
    ) -> Option<()> {
        let owner = self.owner.clone();
        match cycle["finish"].as_str()? {
            "complete" => {
                let result = format!("{owner}/{}", fence.0);
                self.call("complete", job, Some(fence), (Some(now), None), |c| {
                    c.complete(job, &owner, fence, now, &result)
                })?;
                if cycle["retry_complete"] == json!(true) {
                    let result = format!("{owner}/{}/again", fence.0);
                    self.call("complete", job, Some(fence), (Some(now), None), |c| {
                        c.complete(job, &owner, fence, now, &result)
                    })?;
                }
            }
            "release" => {
                self.call("release", job, Some(fence), (None, None), |c| {
                    c.release(job, &owner, fence)
                })?;
            }
            _ => {}
        }
        Some(())
    }
}

/// What a power-cut run did.
#[derive(Debug, Default)]
struct PowerSummary {
    cuts: usize,
    at_sync_points: usize,
    torn_writes: usize,
    unknown_outcomes: usize,
    operations: usize,
    counts: Counts,
}

/// Several worker threads work one file through `subject` on the
/// power-loss shim; the power is cut at a random sync point (before or
/// after it takes effect, with or without torn writes) several times, or
/// between calls when a round ends before its sync point. After each cut
/// every worker is gone; a restarted worker calls `init_db`, and the
/// checker proves from every answer so far and the file: integrity ok,
/// fences per job never reused, never going backwards, none lost, accepted
/// completions kept, and what the fault tests above prove of the answers.
/// Then new workers boot, under new names.
fn power_cut_run(
    name: &str,
    subject: PowerSubject,
    length: Duration,
    keep_on_failure: bool,
) -> (Vec<String>, PowerSummary) {
    use lease_lab::vfs_shim::{CutPoint, Disk, Tearing};
    lease_lab::vfs_shim::install().expect("install the power-loss shim");
    let shm = Path::new("/dev/shm");
    let prefix = format!("lease-lab-{name}-");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix);
    let dir = if shm.is_dir() {
        builder.tempdir_in(shm)
    } else {
        builder.tempdir()
    }
    .expect("a temporary folder");
    let db = dir.path().join("jobs.db");
    subject.store.init_db(&db).expect("init_db");
    let disk = Disk::track(&db).expect("track the database");
    let seed = seed();
    eprintln!(
        "{name}: seed {seed} (LEASE_LAB_SEED), {:.1} s, {POWER_WORKERS} worker threads",
        length.as_secs_f64()
    );
    let mut rng = fastrand::Rng::with_seed(seed ^ 0x0ff_0ff);
    let epoch_ms = unix_nanos() / 1_000_000;
    let started = Instant::now();
    let mut ops: Vec<Op> = Vec::new();
    let mut violations: Vec<String> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    let mut last_rows: BTreeMap<String, Row> = BTreeMap::new();
    let mut summary = PowerSummary::default();
    let mut round = 0u64;
    while started.elapsed() < length || round < 2 {
        round += 1;
        let next = disk.counts().syncs + rng.u64(1..40);
        let point = if rng.bool() {
            CutPoint::BeforeSync(next)
        } else {
            CutPoint::AfterSync(next)
        };
        let tearing = match rng.u8(0..3) {
            0 => Tearing::None,
            1 => Tearing::LastWrite { seed: rng.u64(..) },
            _ => Tearing::AnySector { seed: rng.u64(..) },
        };
        disk.cut_at(point, tearing);
        let booted_after = disk.cut_count();
        let stop_ms = (unix_nanos() / 1_000_000 - epoch_ms + rng.u64(200..600)) as f64;
        let logs: Vec<Vec<Op>> = thread::scope(|scope| {
            let workers: Vec<_> = (0..POWER_WORKERS)
                .map(|index| {
                    let owner = format!("w{index}.{round}");
                    let plan = Plan {
                        rng: fastrand::Rng::with_seed(seed ^ ((index as u64) << 32) ^ round),
                        profile: Profile::Race,
                    };
                    let (db, disk) = (&db, &disk);
                    scope.spawn(move || {
                        let client = if subject.handles && index % 2 == 1 {
                            match lease_lab::Store::open(db) {
                                Ok(store) => ThreadClient::Handle(store),
                                Err(_) => return Vec::new(), // the power went off already
                            }
                        } else {
                            ThreadClient::Path(subject.store, db)
                        };
                        let worker = ThreadWorker {
                            owner,
                            client,
                            disk,
                            booted_after,
                            epoch_ms,
                            ops: Vec::new(),
                        };
                        worker.run(plan, stop_ms)
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|worker| worker.join().expect("a worker thread does not panic"))
                .collect()
        });
        ops.extend(logs.into_iter().flatten());
        // Every worker is gone. If the armed cut has not fallen, the power
        // goes off now, between calls.
        if disk.cut_count() > booted_after {
            summary.at_sync_points += 1;
        } else {
            disk.disarm();
            if let Err(error) = disk.cut_tearing(tearing) {
                violations.push(format!("cut {round}: {error}"));
            }
        }
        // The reboot: a restarted worker's init_db, then the checks.
        if let Err(error) = subject.store.init_db(&db) {
            violations.push(format!(
                "cut {round}: init_db after the reboot failed: {error}"
            ));
            break;
        }
        let conn = Connection::open(&db).expect("open the database after the reboot");
        let integrity: String = conn
            .query_row("PRAGMA integrity_check", [], |row| row.get(0))
            .expect("run integrity_check");
        drop(conn);
        let rows = read_rows(&db);
        let mut found = Vec::new();
        if integrity != "ok" {
            found.push(format!("integrity_check: {integrity}"));
        }
        for (id, before) in &last_rows {
            match rows.get(id) {
                None => found.push(format!("{id}: gone after the reboot")),
                Some(now) if now.fence < before.fence || (before.done && !now.done) => found.push(
                    format!("{id}: went from {before:?} to {now:?} across a reboot"),
                ),
                Some(_) => {}
            }
        }
        // `check` subtracts the fences handed out from the highest one, and
        // panics when a fence was handed out twice: that is a violation too.
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&ops, &rows))) {
            Ok((checked, counts)) => {
                found.extend(checked);
                summary.counts = counts;
            }
            Err(_) => found.push("the checker panicked: a fence was handed out twice".into()),
        }
        for problem in found {
            if seen.insert(problem.clone()) {
                violations.push(format!("after cut {round}: {problem}"));
            }
        }
        last_rows = rows;
    }
    for report in disk.cuts() {
        summary.cuts += 1;
        summary.torn_writes += report.writes_torn;
    }
    summary.operations = ops.len();
    summary.unknown_outcomes = ops.iter().filter(|op| op.unknown()).count();
    if !violations.is_empty() && keep_on_failure {
        eprintln!(
            "{name}: {} violation(s) with LEASE_LAB_SEED={seed}; database kept in {}",
            violations.len(),
            dir.keep().display()
        );
    }
    (violations, summary)
}

/// Worker threads share a file while the power is cut at random sync
/// points several times; after each cut and reboot, every answer given
/// before it still holds (see [`power_cut_run`]). Honours
/// `LEASE_LAB_SOAK_SECS` and `LEASE_LAB_SEED`.
#[test]
fn power_cuts_at_random_sync_points_lose_no_answer() {
    let subject = PowerSubject {
        store: &lease_lab::variant::ACTIVE,
        handles: true,
    };
    let (mut violations, summary) =
        power_cut_run("power", subject, run_length(Duration::from_secs(3)), true);
    let counts = &summary.counts;
    require_exercised(
        counts,
        &[
            ("a cut at a sync point", summary.at_sync_points),
            ("a call cut short by the power", summary.unknown_outcomes),
            ("an accepted completion", counts.completions),
            ("a takeover (fence above 1)", counts.takeovers),
            ("a stale completion refused", counts.stale_refused),
        ],
        &mut violations,
    );
    eprintln!("power: {summary:?}");
    assert!(
        violations.is_empty(),
        "{} violation(s):\n  {}",
        violations.len(),
        violations.join("\n  ")
    );
}

/// The proof that the power-cut run can fail: on mutant h04g
/// (`synchronous=NORMAL`) a cut loses commits whose answers were given.
#[test]
fn power_cuts_catch_a_store_with_synchronous_normal() {
    let mutant = lease_lab::variant::compiled_mutant("h04g").expect("mutant h04g is compiled in");
    let subject = PowerSubject {
        store: &mutant.store,
        handles: false,
    };
    let (violations, summary) =
        power_cut_run("power-h04g", subject, Duration::from_millis(1500), false);
    eprintln!(
        "power-h04g: {} violations, e.g. {:?}; {summary:?}",
        violations.len(),
        violations.first()
    );
    assert!(
        !violations.is_empty(),
        "no cut lost an answered call on h04g: {summary:?}"
    );
}
