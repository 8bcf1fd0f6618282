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
//! the final file that the store kept its promises: the fencing property
//! with the library's own checker of it (`lease_lab::chaos::properties`)
//! and its model check (`lease_lab::chaos::linearize`), and what the logs
//! show beyond the properties with checks of its own.
//!
//! Bounded: each test runs a few seconds. For a soak, give the seconds:
//! `LEASE_LAB_SOAK_SECS=600 cargo test --release --test store faults:: -- --nocapture`.
//! `LEASE_LAB_SEED=N` replays the plans of a failed run (the seed is printed).

use lease_lab::backend::{answer, Backend};
use lease_lab::chaos::history::{Call, Returned};
use lease_lab::chaos::judge::Judgement;
use lease_lab::chaos::plan::{self, Faults, Settings};
use lease_lab::chaos::properties::Property;
use lease_lab::chaos::run::Record;
use lease_lab::chaos::sink::SinkReport;
use lease_lab::chaos::Verdict;
use lease_lab::operation::{Answer, Operation};
use lease_lab::{ErrorKind, Fence, Job};
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
    /// the two forms of the store. Each incarnation has a name of its own,
    /// as the fencing checks name workers (see [`fencing_violations`]),
    /// numbered from `w1` in the order started.
    fn spawn(&self, index: usize, generation: u64) -> Worker {
        let owner = plan::owner(self.workers.len());
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

/// One logged call: who made it, its number in the worker's log, the
/// operation with its arguments, and what came of it.
#[derive(Debug)]
struct Op {
    worker: String,
    seq: u64,
    operation: Operation,
    t0: u64,
    /// `None` when the worker was killed before the call returned.
    t1: Option<u64>,
    /// [`Returned::Unknown`] exactly when `t1` is `None`.
    returned: Returned,
}

impl Op {
    /// The operation's name: `claim`, `renew`, ...
    fn kind(&self) -> &'static str {
        self.operation.name()
    }

    fn job(&self) -> &str {
        self.operation.job_id().unwrap_or_default()
    }

    /// The fence the call carries (renew, complete, release).
    fn fence(&self) -> Option<i64> {
        match &self.operation {
            Operation::Renew { fence, .. }
            | Operation::Complete { fence, .. }
            | Operation::Release { fence, .. } => Some(fence.0),
            _ => None,
        }
    }

    /// The worker's clock at the call (claim, renew, complete).
    fn now(&self) -> Option<f64> {
        match &self.operation {
            Operation::Claim { now, .. }
            | Operation::Renew { now, .. }
            | Operation::Complete { now, .. } => Some(*now),
            _ => None,
        }
    }

    /// The lease's length asked for (claim, renew).
    fn ttl(&self) -> Option<f64> {
        match &self.operation {
            Operation::Claim { ttl, .. } | Operation::Renew { ttl, .. } => Some(*ttl),
            _ => None,
        }
    }

    fn answer(&self) -> Option<&Answer> {
        match &self.returned {
            Returned::Answer(answer) => Some(answer),
            _ => None,
        }
    }

    /// The fence a claim was granted.
    fn granted(&self) -> Option<i64> {
        match self.answer() {
            Some(Answer::Fence(Some(fence))) if self.kind() == "claim" => Some(fence.0),
            _ => None,
        }
    }

    /// Whether a claim was answered "no fence".
    fn refused_claim(&self) -> bool {
        self.kind() == "claim" && matches!(self.answer(), Some(Answer::Fence(None)))
    }

    fn answered(&self, value: bool) -> bool {
        self.answer() == Some(&Answer::Bool(value))
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
        let answer = match &self.returned {
            Returned::Unknown => "<killed before the answer>".to_string(),
            Returned::Answer(answer) => answer.to_json().to_string(),
            Returned::Error(kind) => format!("error: {}", kind.name()),
        };
        format!(
            "{}#{} {} -> {answer}",
            self.worker, self.seq, self.operation
        )
    }

    /// The call as `chaos::history` records it, made by worker `worker`.
    fn call(&self, worker: usize) -> Call {
        Call {
            worker,
            operation: self.operation.clone(),
            began: self.t0,
            ended: self.t1,
            returned: self.returned.clone(),
        }
    }
}

/// The operation of a log's `begin` line, as the lab's protocol writes it
/// (the operations a `fault-worker` makes).
fn operation_of(line: &Value) -> Result<Operation, String> {
    let text = |key: &str| {
        line[key]
            .as_str()
            .map(str::to_string)
            .ok_or(format!("no {key} in {line}"))
    };
    let number = |key: &str| line[key].as_f64().ok_or(format!("no {key} in {line}"));
    let fence = || {
        line["fence"]
            .as_i64()
            .map(lease_lab::Fence)
            .ok_or(format!("no fence in {line}"))
    };
    let job_id = text("job_id")?;
    Ok(match line["op"].as_str() {
        Some("enqueue") => Operation::Enqueue { job_id },
        Some("state") => Operation::State { job_id },
        Some("claim") => Operation::Claim {
            job_id,
            owner: text("owner")?,
            now: number("now")?,
            ttl: number("ttl")?,
        },
        Some("renew") => Operation::Renew {
            job_id,
            owner: text("owner")?,
            fence: fence()?,
            now: number("now")?,
            ttl: number("ttl")?,
        },
        Some("complete") => Operation::Complete {
            job_id,
            owner: text("owner")?,
            fence: fence()?,
            now: number("now")?,
            result: text("result")?,
        },
        Some("release") => Operation::Release {
            job_id,
            owner: text("owner")?,
            fence: fence()?,
        },
        _ => return Err(format!("an operation a worker does not make: {line}")),
    })
}

/// What a log's `end` line says the call returned.
fn returned_of(operation: &Operation, line: &Value) -> Result<Returned, String> {
    if let Some(answer) = line.get("answer") {
        return Answer::from_json(operation.answers(), answer)
            .map(Returned::Answer)
            .map_err(|bad| format!("answer {answer} to {operation}: {bad:?}"));
    }
    let kind = line["kind"].as_str().unwrap_or_default();
    ErrorKind::from_name(kind)
        .map(Returned::Error)
        .ok_or(format!("neither an answer nor an error's kind: {line}"))
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
        if value.get("op").is_some() {
            open.insert(seq, ops.len());
            ops.push(Op {
                worker: worker.to_string(),
                seq,
                operation: operation_of(&value).map_err(|e| format!("{worker}: {e}"))?,
                t0: value["t0"].as_u64().ok_or(format!("{worker}: no t0"))?,
                t1: None,
                returned: Returned::Unknown,
            });
        } else {
            let index = open
                .remove(&seq)
                .ok_or(format!("{worker}: an end line for seq {seq} with no begin"))?;
            let op = &mut ops[index];
            op.t1 = Some(value["t1"].as_u64().ok_or(format!("{worker}: no t1"))?);
            op.returned =
                returned_of(&op.operation, &value).map_err(|e| format!("{worker}: {e}"))?;
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

/// The stored rows by id, read with plain SQL.
fn read_rows(db: &Path) -> BTreeMap<String, Job> {
    let conn = Connection::open(db).expect("open the database to check it");
    let mut statement = conn
        .prepare("SELECT id, owner, until, fence, result, done FROM jobs")
        .expect("the jobs table");
    statement
        .query_map([], |row| {
            Ok((
                row.get(0)?,
                Job {
                    id: row.get(0)?,
                    owner: row.get(1)?,
                    until: row.get(2)?,
                    fence: lease_lab::Fence(row.get(3)?),
                    result: row.get(4)?,
                    done: row.get::<_, i64>(5)? != 0,
                },
            ))
        })
        .and_then(|rows| rows.collect())
        .expect("read the jobs")
}

/// SQLite's `PRAGMA integrity_check` of the file.
fn read_integrity(db: &Path) -> String {
    let conn = Connection::open(db).expect("open the database to check it");
    conn.query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .expect("run integrity_check")
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

/// Proves the store's promises from the logs, the final rows and the
/// file's `integrity`; returns every violation found, and the counts.
///
/// The fencing property is judged by the library's one checker of it,
/// `chaos::properties`, with the model check beside it, as `lab chaos`
/// judges a run (see [`fencing_violations`]); what the logs show beyond
/// the properties, by [`check_beyond_fencing`], which says in words much
/// of what the model check only finds.
fn check(ops: &[Op], rows: &BTreeMap<String, Job>, integrity: &str) -> (Vec<String>, Counts) {
    let mut violations = fencing_violations(ops, rows, integrity);
    let (beyond, counts) = check_beyond_fencing(ops, rows);
    violations.extend(beyond);
    (violations, counts)
}

/// The violations of the fencing property that the logged calls and the
/// final file show, judged as `lab chaos` judges a run ([`Judgement::of`]).
/// By `chaos::properties`: the file damaged, a call failed, a fence
/// handed out twice or going down in real time, a completion accepted from
/// a worker not holding the lease, a second completion or any change of a
/// done job accepted, a stored result that is not the accepted
/// completion's, an enqueued job lost. By the model check: answers that no
/// order of the calls explains under the worksheet's contract. (A model
/// check cut off by its step budget is no failure, as in `lab chaos`.)
///
/// Each is said with the calls that show it, as logged. The checker names
/// worker `i` [`plan::owner`]`(i)`, so every worker must be named so (the
/// runs here name each worker, and each incarnation of one, that way).
fn fencing_violations(ops: &[Op], rows: &BTreeMap<String, Job>, integrity: &str) -> Vec<String> {
    // In the order the calls began: a history lists its calls in the order
    // sent, and the checker compares the fences of two claims in that order.
    let mut sent: Vec<&Op> = ops.iter().collect();
    sent.sort_by_key(|op| op.t0);
    let calls: Vec<Call> = sent
        .iter()
        .map(|op| op.call(worker_of(&op.worker)))
        .collect();
    let workers = calls.iter().map(|call| call.worker + 1).max().unwrap_or(0);
    // The checker reads the calls, the rows and the integrity check; the
    // rest of a record describes a chaos run, which this is not.
    let record = Record {
        settings: Settings {
            workers,
            operations: calls.len(),
            seed: 0,
            faults: Faults::none(),
        },
        moments: Vec::new(),
        calls,
        rows: Ok(rows.values().cloned().collect()),
        integrity: integrity.to_string(),
        skews: vec![0.0; workers],
        kills: 0,
        restarts: 0,
        cut_off: 0,
        partitions: 0,
        on_a_server: false,
        sinks: SinkReport::default(),
        took: Duration::ZERO,
    };
    let judged = Judgement::of(record);
    let mut found: Vec<String> = judged
        .violations
        .iter()
        .map(|violation| {
            let mut said = format!(
                "{}: {} ({:?})",
                violation.job.as_deref().unwrap_or("the file"),
                violation.text,
                violation.property
            );
            let shown: Vec<String> = violation
                .calls
                .iter()
                .map(|index| sent[*index].describe())
                .collect();
            if !shown.is_empty() {
                said.push_str(&format!("; calls: {}", shown.join(" / ")));
            }
            said
        })
        .collect();
    let (said, call) = match &judged.model {
        Verdict::NotLinearizable {
            job_id,
            first_unplaceable,
            ..
        } => (
            format!(
                "{}: {} (NotLinearizable, the model check)",
                job_id.as_deref().unwrap_or("init_db"),
                Property::NotLinearizable.text()
            ),
            *first_unplaceable,
        ),
        Verdict::Malformed { call, .. } => (judged.model_text(), Some(*call)),
        Verdict::Linearizable { .. } | Verdict::Unknown { .. } => return found,
    };
    let call = call.map_or_else(String::new, |call| {
        format!("; the first call none explains: {}", sent[call].describe())
    });
    found.push(format!("{said}{call}"));
    found
}

/// The index of the worker named `name`: the `i` whose [`plan::owner`] it
/// is. Panics on any other name, which no run here gives.
fn worker_of(name: &str) -> usize {
    let index = name
        .strip_prefix('w')
        .and_then(|number| number.parse::<usize>().ok())
        .and_then(|number| number.checked_sub(1));
    match index {
        Some(index) if plan::owner(index) == name => index,
        _ => panic!("worker {name:?} is not named as the fencing checks name workers"),
    }
}

/// Proves from the logs and the final rows what `chaos::properties` does
/// not: returns every violation found, and the counts.
///
/// Per job:
/// - `state` answered this job's row, not another's;
/// - at most one enqueue answered true, and a stored job was enqueued;
/// - the fences handed out leave no gap but for claims whose outcome is
///   unknown;
/// - a claim took the lease only when the previous one was over (ended by
///   the claim's clock, or released);
/// - an accepted completion carries the highest fence of the job (also
///   against a claim that overlapped it in time, which the fencing checks
///   cannot order), and came within its worker's lease by its own clock;
/// - an accepted renewal or release came from the holder of a fence that no
///   claim had yet superseded, a renewal within its lease by its own clock,
///   a release from a worker handed that fence;
/// - a completion or renewal by the holder of the current fence, within its
///   lease, while no claim could have run, was accepted (the store does not
///   refuse what it must grant);
/// - the final row's fence, owner and lease are what those operations
///   leave, and a done row was completed by the holder of its fence (see
///   [`check_row`]).
///
/// An operation whose worker was killed during it may or may not have
/// landed; the check allows both outcomes, and nothing else.
fn check_beyond_fencing(ops: &[Op], rows: &BTreeMap<String, Job>) -> (Vec<String>, Counts) {
    let mut violations = Vec::new();
    let mut counts = Counts::default();

    // Each worker's view of its own leases at each of its calls.
    let mut held_at: HashMap<(String, u64), Lease> = HashMap::new();
    let mut leases: HashMap<(String, String, i64), Lease> = HashMap::new();
    for op in ops {
        let key = (
            op.worker.clone(),
            op.job().to_string(),
            op.fence().unwrap_or(0),
        );
        if let Some(lease) = leases.get(&key) {
            held_at.insert((op.worker.clone(), op.seq), *lease);
        }
        match op.kind() {
            "claim" => {
                if let Some(fence) = op.granted() {
                    let until = op.now().unwrap() + op.ttl().unwrap();
                    let lease = Lease {
                        until,
                        released: false,
                        completed: false,
                    };
                    leases.insert((op.worker.clone(), op.job().to_string(), fence), lease);
                }
            }
            // An accepted call on a lease the worker was never granted is
            // reported below (`check_own_lease`, the superseded checks).
            "renew" if op.answered(true) => {
                if let Some(lease) = leases.get_mut(&key) {
                    lease.until = op.now().unwrap() + op.ttl().unwrap();
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
        if let Some(Answer::Row(Some(row))) = op.answer() {
            if row.id != op.job() {
                violations.push(format!("state of another job's row: {}", op.describe()));
            }
        }
    }

    let mut by_job: BTreeMap<&str, Vec<&Op>> = BTreeMap::new();
    for op in ops {
        by_job.entry(op.job()).or_default().push(op);
    }

    for (job, job_ops) in &by_job {
        let of = |kind: &str| -> Vec<&Op> {
            job_ops
                .iter()
                .copied()
                .filter(|op| op.kind() == kind)
                .collect()
        };
        let enqueues = of("enqueue");
        let claims = of("claim");
        let granted: Vec<(&Op, i64)> = claims
            .iter()
            .filter_map(|op| op.granted().map(|f| (*op, f)))
            .collect();
        let unknown_claims: Vec<&Op> = claims.iter().copied().filter(|op| op.unknown()).collect();
        counts.claims_granted += granted.len();
        counts.claims_refused += claims.iter().filter(|op| op.refused_claim()).count();
        counts.takeovers += granted.iter().filter(|(_, f)| *f >= 2).count();
        let row = rows.get(*job);

        // Enqueue: only the first one adds the job. (A job enqueued and
        // gone is the fencing checks'.)
        let added = enqueues.iter().filter(|op| op.answered(true)).count();
        let maybe_added = enqueues.iter().any(|op| op.unknown());
        if added > 1 {
            violations.push(format!("{job}: {added} enqueues answered true"));
        }
        if row.is_some() && added == 0 && !maybe_added {
            violations.push(format!("{job}: exists though no enqueue added it"));
        }

        // Fences: no gap but unknown claims. (Distinct and rising in real
        // time is the fencing checks'.)
        let mut fences: Vec<i64> = granted.iter().map(|(_, f)| *f).collect();
        fences.sort_unstable();
        let max_granted = fences.last().copied().unwrap_or(0);
        // Saturating: a fence handed out twice makes more fences than
        // numbers, and is reported by the fencing checks rather than
        // overflowing here.
        let missing = usize::try_from(max_granted)
            .unwrap_or(0)
            .saturating_sub(fences.len());
        if fences.first().is_some_and(|f| *f < 1) || missing > unknown_claims.len() {
            violations.push(format!(
                "{job}: fences {fences:?} skip numbers no unknown claim explains"
            ));
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
            let now = claim.now().unwrap();
            let mut possible = vec![previous.now().unwrap() + previous.ttl().unwrap()];
            let changes = job_ops.iter().filter(|op| {
                op.worker == previous.worker
                    && op.fence() == Some(fence - 1)
                    && matches!(op.kind(), "renew" | "release")
                    && (op.answered(true) || op.unknown())
            });
            for op in changes {
                let until = if op.kind() == "release" {
                    0.0
                } else {
                    op.now().unwrap() + op.ttl().unwrap()
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
            let Some(fence) = op.fence() else { continue };
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
            } else if op.kind() == "complete"
                && job_ops.iter().any(|c| {
                    c.kind() == "complete"
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
        // A second completion accepted, and one from a worker never handed
        // its fence or after a newer fence was handed out, are the fencing
        // checks'. A claim that overlapped the accepted completion in time
        // and was handed a newer fence is wrong either way (before the
        // completion, it makes it stale; after, it changed a done job), but
        // only this check sees it.
        for op in &accepted {
            let fence = op.fence().unwrap();
            if fence != max_granted {
                violations.push(format!(
                    "{job}: accepted completion {} does not carry the highest fence handed out ({max_granted})",
                    op.describe()
                ));
            }
            check_own_lease(op, &held_at, &mut violations);
        }
        for op in completes.iter().filter(|op| op.answered(false)) {
            let fence = op.fence().unwrap();
            let lease = held_at.get(&(op.worker.clone(), op.seq));
            if superseded(op, fence).is_some() {
                counts.stale_refused += 1;
                if lease.is_some_and(|l| l.valid_at(op.now().unwrap())) {
                    counts.saved_by_fence += 1;
                }
            }
            must_have_been_granted(op, lease, may_be_superseded(op, fence), &mut violations);
        }

        // Renewals and releases.
        for kind in ["renew", "release"] {
            for op in of(kind) {
                let fence = op.fence().unwrap();
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
                    // One accepted after the job was done is the fencing
                    // checks'.
                } else if kind == "renew" && op.answered(false) {
                    let lease = held_at.get(&(op.worker.clone(), op.seq));
                    if lease.is_some_and(|l| !l.released && op.now().unwrap() >= l.until) {
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
        Some(lease) if lease.valid_at(op.now().unwrap()) => {}
        lease => violations.push(format!(
            "{}: accepted outside the worker's lease {lease:?}: {}",
            op.job(),
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
    if lease.valid_at(op.now().unwrap()) && !may_be_superseded {
        violations.push(format!(
            "{}: refused though the worker held the current lease until {}: {}",
            op.job(),
            lease.until,
            op.describe()
        ));
    }
}

/// The final row's fence, owner and lease must be what the logged
/// operations leave, allowing either outcome for the unknown ones; a done
/// row must have been completed by the holder of its fence, and hold that
/// holder's own result. (That its result is the accepted completion's, and
/// that a row not done holds none, the fencing checks prove.)
fn check_row(
    job: &str,
    row: &Job,
    granted: &[(&Op, i64)],
    unknown_claims: &[&Op],
    job_ops: &[&Op],
    leases: &HashMap<(String, String, i64), Lease>,
    violations: &mut Vec<String>,
) {
    let fence = row.fence.0;
    let max_granted = granted.iter().map(|(_, f)| *f).max().unwrap_or(0);
    let extra = i64::try_from(unknown_claims.len()).unwrap();
    if fence < max_granted || fence > max_granted + extra {
        violations.push(format!(
            "{job}: stored fence {} but {max_granted} handed out and {extra} unknown claims",
            fence
        ));
        return;
    }
    // Who may hold the stored fence: the worker granted it, or a worker
    // killed during a claim when the stored fence is beyond the logged ones.
    let holders: Vec<&str> = if fence == max_granted {
        granted
            .iter()
            .filter(|(_, f)| *f == fence)
            .map(|(op, _)| op.worker.as_str())
            .collect()
    } else {
        unknown_claims.iter().map(|op| op.worker.as_str()).collect()
    };
    let by_holder = |kind: &str, accepted_or_unknown: bool| {
        job_ops.iter().any(|op| {
            op.kind() == kind
                && op.fence() == Some(fence)
                && holders.contains(&op.worker.as_str())
                && (op.answered(true) || (accepted_or_unknown && op.unknown()))
        })
    };
    if row.done {
        let completed = by_holder("complete", true);
        let expected_result = row.owner.as_ref().map(|owner| format!("{owner}/{}", fence));
        if !completed
            || row.owner.as_deref().is_none_or(|o| !holders.contains(&o))
            || row.result != expected_result
        {
            violations.push(format!(
                "{job}: stored as done by {:?} with fence {} and result {:?}, which no accepted completion of the holder {holders:?} explains",
                row.owner, fence, row.result
            ));
        }
        return;
    }
    // A row not done after an accepted completion, or holding a result, is
    // the fencing checks'.
    match &row.owner {
        None if fence == 0 => {}
        None => {
            if !by_holder("release", true) || row.until != 0.0 {
                violations.push(format!(
                    "{job}: no owner (until {}) but the holder of fence {} never released it",
                    row.until, fence
                ));
            }
        }
        Some(owner) if !holders.contains(&owner.as_str()) => violations.push(format!(
            "{job}: stored owner {owner} was not handed fence {} ({holders:?} were)",
            fence
        )),
        Some(owner) => {
            // The lease end must be the holder's latest, unless the holder
            // died during a renewal or claim that may have landed.
            let key = (owner.clone(), job.to_string(), fence);
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

/// Reads every worker's log, the final rows and the file's integrity
/// check, and runs [`check`].
fn check_run(run: &Run, mut violations: Vec<String>) -> (Vec<String>, Counts) {
    let mut ops = Vec::new();
    for worker in &run.workers {
        match read_log(&worker.owner, &worker.log, worker.killed) {
            Ok(log) => ops.extend(log),
            Err(problem) => violations.push(problem),
        }
    }
    let rows = read_rows(&run.db);
    let integrity = read_integrity(&run.db);
    let (found, counts) = check(&ops, &rows, &integrity);
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
    // `check_run` judges the file's integrity check with the rest.
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
    /// Runs one of the operations a worker makes.
    fn call(&self, operation: &Operation) -> lease_lab::Result<Answer> {
        match self {
            ThreadClient::Path(store, db) => store.call(db, operation),
            ThreadClient::Handle(store) => answer(&KeptHandle(store), operation),
        }
    }
}

/// A worker thread's kept handle, with the operations a worker makes; a
/// worker thread neither creates the table nor races claims.
struct KeptHandle<'a>(&'a lease_lab::Store);

impl Backend for KeptHandle<'_> {
    type Error = lease_lab::StoreError;

    fn init_db(&self) -> lease_lab::Result<()> {
        unreachable!("a worker thread does not call init_db")
    }

    fn enqueue(&self, job_id: &str) -> lease_lab::Result<bool> {
        self.0.enqueue(job_id)
    }

    fn state(&self, _job_id: &str) -> lease_lab::Result<Option<Job>> {
        unreachable!("a worker thread does not call state")
    }

    fn claim(
        &self,
        job_id: &str,
        owner: &str,
        now: f64,
        ttl: f64,
    ) -> lease_lab::Result<Option<Fence>> {
        self.0.claim(job_id, owner, now, ttl)
    }

    fn renew(
        &self,
        job_id: &str,
        owner: &str,
        fence: Fence,
        now: f64,
        ttl: f64,
    ) -> lease_lab::Result<bool> {
        self.0.renew(job_id, owner, fence, now, ttl)
    }

    fn complete(
        &self,
        job_id: &str,
        owner: &str,
        fence: Fence,
        now: f64,
        result: &str,
    ) -> lease_lab::Result<bool> {
        self.0.complete(job_id, owner, fence, now, result)
    }

    fn release(&self, job_id: &str, owner: &str, fence: Fence) -> lease_lab::Result<bool> {
        self.0.release(job_id, owner, fence)
    }

    fn claim_many(
        &self,
        _job_id: &str,
        _owners: &[&str],
        _now: f64,
        _ttl: f64,
    ) -> lease_lab::Result<Vec<Option<Fence>>> {
        unreachable!("a worker thread does not call claim_many")
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

    /// Runs and logs one call; `None` when it failed. A call that fails
    /// after the power went off has an unknown outcome (it may have
    /// landed): it is logged as a killed worker's call is, without an
    /// answer, and the worker stops.
    fn call(&mut self, operation: Operation) -> Option<Answer> {
        let t0 = unix_nanos();
        let outcome = self.client.call(&operation);
        let t1 = unix_nanos();
        let (t1, returned) = match &outcome {
            Ok(answer) => (Some(t1), Returned::Answer(answer.clone())),
            Err(_) if self.powered_off() => (None, Returned::Unknown),
            Err(error) => (Some(t1), Returned::Error(error.kind())),
        };
        self.ops.push(Op {
            worker: self.owner.clone(),
            seq: self.ops.len() as u64,
            operation,
            t0,
            t1,
            returned,
        });
        outcome.ok()
    }

    /// Runs and logs a claim: the fence it was handed, if one; `None` when
    /// it failed.
    fn claim(&mut self, job: &str, now: f64, ttl: f64) -> Option<Option<lease_lab::Fence>> {
        let claim = Operation::Claim {
            job_id: job.into(),
            owner: self.owner.clone(),
            now,
            ttl,
        };
        match self.call(claim)? {
            Answer::Fence(fence) => Some(fence),
            _ => Some(None),
        }
    }

    /// Runs and logs a renewal.
    fn renew(&mut self, job: &str, fence: lease_lab::Fence, now: f64, ttl: f64) -> Option<()> {
        let renew = Operation::Renew {
            job_id: job.into(),
            owner: self.owner.clone(),
            fence,
            now,
            ttl,
        };
        self.call(renew).map(drop)
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
        let read = self.clock_ms();
        let job = format!("job-{}", read as u64 / SLOT_MS + cycle["offset"].as_u64()?);
        let job = job.as_str();
        self.call(Operation::Enqueue { job_id: job.into() })?;
        let (skew, ttl) = (number("skew"), number("ttl"));
        let now = read + skew;
        let Some(fence) = self.claim(job, now, ttl)? else {
            thread::sleep(Duration::from_millis(cycle["idle_ms"].as_u64()?));
            return Some(());
        };
        if let Some(pause) = cycle["renew_after_ms"].as_u64() {
            thread::sleep(Duration::from_millis(pause));
            let now = self.clock_ms() + skew;
            self.renew(job, fence, now, ttl)?;
        }
        thread::sleep(Duration::from_millis(cycle["stall_ms"].as_u64()?));
        let now = if cycle["stale_clock"] == json!(true) {
            now
        } else {
            self.clock_ms() + skew
        };
        if cycle["reclaim"] == json!(true) {
            let again = self.clock_ms() + skew;
            if let Some(newer) = self.claim(job, again, ttl)? {
                self.renew(job, fence, now, ttl)?;
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
        let complete = |result: String| Operation::Complete {
            job_id: job.into(),
            owner: owner.clone(),
            fence,
            now,
            result,
        };
        match cycle["finish"].as_str()? {
            "complete" => {
                self.call(complete(format!("{owner}/{}", fence.0)))?;
                if cycle["retry_complete"] == json!(true) {
                    self.call(complete(format!("{owner}/{}/again", fence.0)))?;
                }
            }
            "release" => {
                self.call(Operation::Release {
                    job_id: job.into(),
                    owner: owner.clone(),
                    fence,
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
    let mut last_rows: BTreeMap<String, Job> = BTreeMap::new();
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
                    // Named as the fencing checks name workers: a name of
                    // its own for each thread of each round.
                    let started = usize::try_from(round - 1).expect("a sane round");
                    let owner = plan::owner(started * POWER_WORKERS + index);
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
        let integrity = read_integrity(&db);
        let rows = read_rows(&db);
        let mut found = Vec::new();
        for (id, before) in &last_rows {
            match rows.get(id) {
                None => found.push(format!("{id}: gone after the reboot")),
                Some(now) if now.fence < before.fence || (before.done && !now.done) => found.push(
                    format!("{id}: went from {before:?} to {now:?} across a reboot"),
                ),
                Some(_) => {}
            }
        }
        // A check that panics on this history fails the run with the rest
        // of its findings, instead of ending it without them.
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            check(&ops, &rows, &integrity)
        })) {
            Ok((checked, counts)) => {
                found.extend(checked);
                summary.counts = counts;
            }
            Err(_) => found.push("the checker panicked on this history".into()),
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

// ---------------------------------------------------------------------------
// The check on hand-made logs: it can fail, and says who found what
// ---------------------------------------------------------------------------

/// A hand-made log's call: `worker`'s call number `seq`, made at `t0` and
/// answered `answer` a nanosecond later.
fn logged(worker: &str, seq: u64, t0: u64, operation: Operation, answer: Answer) -> Op {
    Op {
        worker: worker.into(),
        seq,
        operation,
        t0,
        t1: Some(t0 + 1),
        returned: Returned::Answer(answer),
    }
}

fn enqueue_of(worker: &str, t0: u64, added: bool) -> Op {
    let operation = Operation::Enqueue {
        job_id: "job-1".into(),
    };
    logged(worker, 0, t0, operation, Answer::Bool(added))
}

fn claim_of(worker: &str, t0: u64, now: f64, fence: Option<i64>) -> Op {
    let operation = Operation::Claim {
        job_id: "job-1".into(),
        owner: worker.into(),
        now,
        ttl: 50.0,
    };
    logged(
        worker,
        1,
        t0,
        operation,
        Answer::Fence(fence.map(lease_lab::Fence)),
    )
}

fn complete_of(worker: &str, t0: u64, fence: i64, now: f64, accepted: bool) -> Op {
    let operation = Operation::Complete {
        job_id: "job-1".into(),
        owner: worker.into(),
        fence: lease_lab::Fence(fence),
        now,
        result: format!("{worker}/{fence}"),
    };
    logged(worker, 2, t0, operation, Answer::Bool(accepted))
}

/// The stored row of `job-1`, done with `owner`'s result when `done`.
fn row_of(owner: &str, fence: i64, done: bool, result: Option<&str>) -> BTreeMap<String, Job> {
    let row = Job {
        id: "job-1".into(),
        owner: Some(owner.into()),
        until: 150.0,
        fence: lease_lab::Fence(fence),
        result: result.map(str::to_string),
        done,
    };
    BTreeMap::from([("job-1".to_string(), row)])
}

/// A sound log passes both the fencing checks and the checks beyond them:
/// the log's calls read back as the history the fencing checks expect.
#[test]
fn a_sound_log_passes_the_check() {
    let ops = [
        enqueue_of("w1", 0, true),
        claim_of("w1", 10, 0.0, Some(1)),
        enqueue_of("w2", 20, false),
        claim_of("w2", 30, 100.0, Some(2)),
        complete_of("w1", 40, 1, 10.0, false),
        complete_of("w2", 50, 2, 110.0, true),
    ];
    let (violations, counts) = check(&ops, &row_of("w2", 2, true, Some("w2/2")), "ok");
    assert_eq!(violations, Vec::<String>::new());
    assert_eq!((counts.takeovers, counts.stale_refused), (1, 1));
}

/// A stale completion accepted is found by `chaos::properties`, which
/// names the calls with the workers' own names, and by the model check.
#[test]
fn the_check_finds_a_stale_completion_with_the_fencing_checks() {
    let ops = [
        enqueue_of("w1", 0, true),
        claim_of("w1", 10, 0.0, Some(1)),
        claim_of("w2", 30, 100.0, Some(2)),
        complete_of("w1", 40, 1, 10.0, true),
    ];
    let rows = row_of("w1", 2, true, Some("w1/1"));
    let fencing = fencing_violations(&ops, &rows, "ok");
    assert_eq!(fencing.len(), 2, "{fencing:#?}");
    assert_eq!(
        fencing[1],
        "job-1: answers no order of the calls explains (NotLinearizable, the model check); \
         the first call none explains: \
         w1#2 complete(\"job-1\", \"w1\", fence=1, now=10, result=\"w1/1\") -> true"
    );
    assert!(
        fencing[0].contains("w1's completion with fence 1 was accepted after w2 had been handed fence 2 (StaleCompletion)")
            && fencing[0].contains("w1#2 complete(\"job-1\", \"w1\", fence=1, now=10"),
        "{fencing:#?}"
    );
    let (violations, _) = check(&ops, &rows, "ok");
    assert!(violations.starts_with(&fencing), "{violations:#?}");
}

/// A damaged file and a failed call are the fencing checks' too.
#[test]
fn the_check_finds_a_damaged_file_and_a_failed_call() {
    let mut busy = claim_of("w1", 10, 0.0, None);
    busy.returned = Returned::Error(ErrorKind::Busy);
    let ops = [enqueue_of("w1", 0, true), busy];
    let mut rows = row_of("w1", 0, false, None);
    let never_claimed = rows.get_mut("job-1").expect("the row");
    (never_claimed.owner, never_claimed.until) = (None, 0.0);
    let (violations, _) = check(&ops, &rows, "*** in database main ***");
    assert_eq!(
        violations,
        [
            "job-1: w1's claim failed with a busy error (CallFailed); \
             calls: w1#1 claim(\"job-1\", \"w1\", now=0, ttl=50) -> error: busy",
            "the file: PRAGMA integrity_check says: *** in database main *** (Integrity)",
        ]
    );
}

/// A claim that took a lease still valid by its own clock breaks none of
/// `chaos::properties` (the fences are sound): the model check finds it,
/// and the checks beyond the fencing property say what it did.
#[test]
fn the_check_finds_a_claim_of_a_valid_lease_beyond_the_fencing_checks() {
    let ops = [
        enqueue_of("w1", 0, true),
        claim_of("w1", 10, 0.0, Some(1)),
        claim_of("w2", 30, 10.0, Some(2)),
    ];
    let mut rows = row_of("w2", 2, false, None);
    rows.get_mut("job-1").expect("the row").until = 60.0;
    let fencing = fencing_violations(&ops, &rows, "ok");
    assert!(
        fencing.len() == 1 && fencing[0].contains("(NotLinearizable, the model check)"),
        "{fencing:#?}"
    );
    let (violations, _) = check(&ops, &rows, "ok");
    assert!(
        violations.len() == 2 && violations[1].contains("took fence 2 while w1's lease was valid"),
        "{violations:#?}"
    );
}
