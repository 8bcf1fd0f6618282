//! `fault-worker`: one worker process of the fault tests (`tests/store/faults.rs`).
//!
//! It does what its plan says and writes down everything that happened. The
//! plan arrives on standard input, one JSON object per work cycle, written
//! by the test from a seeded random generator, so all the randomness of a
//! run lives in the test and is reproduced by its seed. Each cycle:
//!
//! 1. reads the shared clock: milliseconds since `--epoch-ms`, the same for
//!    every worker of a run, so that leases really overlap between workers;
//! 2. picks the job `job-N`, N being the clock's current slot (`--slot-ms`)
//!    plus the plan's offset, so all workers crowd the same few jobs;
//! 3. enqueues it (only the first enqueue of a job adds it), then claims it
//!    with `now` = clock + the plan's skew;
//! 4. without a fence, idles a while; with one: maybe renews after a
//!    pause, stalls (sometimes past its lease), then completes, releases or
//!    walks away. A worker with a
//!    "stale clock" completes with the `now` it read before stalling, as a
//!    process that was paused between reading the clock and writing would:
//!    then only the fence can stop it. A worker may also complete twice,
//!    as one that retries after losing the first answer would (and renew
//!    and release after that, as a heartbeat that outlived the work and a
//!    `finally` block would), or claim the job
//!    again after its lease ran out and then send its first attempt's
//!    renewal and finish late, with the old fence.
//!
//! Some cycles first meddle: read the job and, if another worker holds it,
//! complete, release or renew it with that worker's fence under this
//! worker's own name, as a confused or malicious client would.
//!
//! Every operation is logged to `--log` as two JSON lines, one written
//! before the call (`begin`: the operation as the lab's protocol writes
//! it, with `seq` and `t0`) and one after it (`end`, with the answer, or
//! the error and its kind's name), each by one unbuffered write: when the
//! test kills the worker, a `begin` without its `end` marks the operation
//! whose outcome is unknown. Times `t0`/`t1` are nanoseconds of the system
//! clock, comparable between processes.
//!
//! The worker stops at `--deadline-ms` on the shared clock, or when its
//! plan ends. It exits 0 when it ran to the end (store errors are answers to
//! log, not reasons to stop), 2 for bad arguments or a plan line it cannot
//! read, 1 when it cannot open its database or write its log.

use clap::{Parser, ValueEnum};
use lease_lab::handle::HandleStore;
use lease_lab::job_store::JobStore;
use lease_lab::operation::{Answer, Operation};
use lease_lab::variant::ACTIVE;
use lease_lab::{Fence, Job};
use serde::Deserialize;
use serde_json::{json, Value};
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

#[derive(Debug, Parser)]
#[command(about = "A worker of the lease-lab fault tests: follows a plan read on stdin")]
struct Args {
    /// The shared database (made by the test with init_db).
    #[arg(long)]
    db: PathBuf,
    /// The owner name this worker claims under; unique in a run.
    #[arg(long)]
    owner: String,
    /// Which form of the store to call.
    #[arg(long, value_enum)]
    api: Api,
    /// The run's shared clock starts at this UNIX time, in milliseconds.
    #[arg(long)]
    epoch_ms: u64,
    /// Stop taking cycles at this time of the shared clock.
    #[arg(long)]
    deadline_ms: u64,
    /// How long each job is the current one, in milliseconds of the clock.
    #[arg(long)]
    slot_ms: u64,
    /// Where to append the log of operations.
    #[arg(long)]
    log: PathBuf,
}

/// The form of the store a worker uses.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum Api {
    /// The path functions: a connection per call.
    Path,
    /// One kept `Store` handle.
    Handle,
}

/// One work cycle, as the test plans it.
#[derive(Debug, Deserialize)]
struct Cycle {
    /// Added to the clock's slot to choose the job.
    offset: u64,
    /// Added to the clock to give this cycle's `now`: workers' clocks differ.
    skew: f64,
    /// The lease's length, in milliseconds of the clock.
    ttl: f64,
    /// Pause this long, then renew; `None`: no renewal.
    renew_after_ms: Option<u64>,
    /// Pause this long before finishing (past the lease when longer than `ttl`).
    stall_ms: u64,
    /// How the cycle ends.
    finish: Finish,
    /// When the claim is refused: pause this long before the next cycle, as
    /// a worker polling for work would.
    idle_ms: u64,
    /// Finish with the `now` of the claim instead of a fresh clock reading.
    stale_clock: bool,
    /// After completing, complete again with another result, as a worker
    /// that did not hear the first answer would, then renew, as a
    /// heartbeat that outlived the work would, then release, as a
    /// `finally` block would: the store must refuse all three.
    retry_complete: bool,
    /// After the stall, claim the job again; if that succeeds, first renew
    /// and finish with the old fence (messages from the first attempt
    /// arriving late), then finish with the new one.
    reclaim: bool,
    /// Before claiming, read the job and act with its holder's fence under
    /// this worker's name (see [`meddle`]).
    meddle: bool,
}

#[derive(Debug, Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum Finish {
    Complete,
    Release,
    Abandon,
}

/// The store, either form, and the database it works on.
struct Client {
    store: Box<dyn JobStore>,
    db: PathBuf,
}

/// The log of operations: two flushed lines per operation.
struct Log {
    file: File,
    next_seq: u64,
}

impl Log {
    fn open(path: &Path) -> io::Result<Log> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Log { file, next_seq: 0 })
    }

    /// Logs `begin`, runs `operation` with `client`, logs `end` with its
    /// answer, and returns the answer (`None` when the store returned an
    /// error).
    fn record(&mut self, client: &Client, operation: Operation) -> io::Result<Option<Answer>> {
        let seq = self.next_seq;
        self.next_seq += 1;
        let mut line = serde_json::to_value(&operation).map_err(io::Error::other)?;
        line["seq"] = json!(seq);
        line["t0"] = json!(unix_nanos());
        self.write(&line)?;
        let outcome = client.store.call(&client.db, &operation);
        let t1 = unix_nanos();
        match outcome {
            Ok(answer) => {
                self.write(&json!({"seq": seq, "t1": t1, "answer": answer.to_json()}))?;
                Ok(Some(answer))
            }
            Err(error) => {
                let kind = error.kind().name();
                self.write(
                    &json!({"seq": seq, "t1": t1, "error": error.to_string(), "kind": kind}),
                )?;
                Ok(None)
            }
        }
    }

    /// [`Log::record`] of a claim: the fence it was granted, if any.
    fn claim(
        &mut self,
        client: &Client,
        job_id: &str,
        owner: &str,
        now: f64,
        ttl: f64,
    ) -> io::Result<Option<Fence>> {
        let operation = Operation::Claim {
            job_id: job_id.into(),
            owner: owner.into(),
            now,
            ttl,
        };
        Ok(match self.record(client, operation)? {
            Some(Answer::Fence(fence)) => fence,
            _ => None,
        })
    }

    /// One line in one `write` call, so that a kill leaves whole lines.
    fn write(&mut self, line: &Value) -> io::Result<()> {
        let mut text = line.to_string();
        text.push('\n');
        self.file.write_all(text.as_bytes())
    }
}

fn unix_nanos() -> u64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("the system clock is after 1970");
    u64::try_from(since.as_nanos()).expect("nanoseconds since 1970 fit in u64 until 2554")
}

/// The worker's view of the run's shared clock.
struct Clock {
    epoch_nanos: u64,
}

impl Clock {
    /// Milliseconds since the run's epoch.
    fn now_ms(&self) -> f64 {
        (unix_nanos().saturating_sub(self.epoch_nanos)) as f64 / 1e6
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("fault-worker {}: cannot write the log: {error}", args.owner);
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> io::Result<ExitCode> {
    let store: Box<dyn JobStore> = match args.api {
        Api::Path => Box::new(ACTIVE),
        Api::Handle => Box::new(HandleStore::new()),
    };
    let client = Client {
        store,
        db: args.db.clone(),
    };
    let mut log = Log::open(&args.log)?;
    let clock = Clock {
        epoch_nanos: args.epoch_ms * 1_000_000,
    };
    let owner = args.owner.as_str();
    for line in io::stdin().lock().lines() {
        let line = line?;
        if clock.now_ms() >= args.deadline_ms as f64 {
            break;
        }
        let cycle: Cycle = match serde_json::from_str(&line) {
            Ok(cycle) => cycle,
            Err(error) => {
                eprintln!("fault-worker {owner}: unreadable plan line {line:?}: {error}");
                return Ok(ExitCode::from(2));
            }
        };
        run_cycle(&client, &mut log, &clock, args, &cycle)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn run_cycle(
    client: &Client,
    log: &mut Log,
    clock: &Clock,
    args: &Args,
    cycle: &Cycle,
) -> io::Result<()> {
    let owner = args.owner.as_str();
    let read = clock.now_ms();
    let job = format!("job-{}", read as u64 / args.slot_ms + cycle.offset);
    let job = job.as_str();
    log.record(client, Operation::Enqueue { job_id: job.into() })?;
    let now = read + cycle.skew;
    let ttl = cycle.ttl;
    if cycle.meddle {
        meddle(client, log, job, owner, now, cycle)?;
    }
    let Some(fence) = log.claim(client, job, owner, now, ttl)? else {
        thread::sleep(Duration::from_millis(cycle.idle_ms));
        return Ok(());
    };
    if let Some(pause) = cycle.renew_after_ms {
        thread::sleep(Duration::from_millis(pause));
        let now = clock.now_ms() + cycle.skew;
        log.record(client, renew(job, owner, fence, now, ttl))?;
    }
    thread::sleep(Duration::from_millis(cycle.stall_ms));
    let now = if cycle.stale_clock {
        now
    } else {
        clock.now_ms() + cycle.skew
    };
    if cycle.reclaim {
        let again = clock.now_ms() + cycle.skew;
        if let Some(newer) = log.claim(client, job, owner, again, ttl)? {
            // The first attempt's heartbeat and finish arrive late, after
            // the newer claim.
            log.record(client, renew(job, owner, fence, now, ttl))?;
            finish(client, log, job, owner, fence, now, cycle)?;
            return finish(client, log, job, owner, newer, again, cycle);
        }
    }
    finish(client, log, job, owner, fence, now, cycle)
}

fn renew(job: &str, owner: &str, fence: Fence, now: f64, ttl: f64) -> Operation {
    Operation::Renew {
        job_id: job.into(),
        owner: owner.into(),
        fence,
        now,
        ttl,
    }
}

fn complete(job: &str, owner: &str, fence: Fence, now: f64, result: String) -> Operation {
    Operation::Complete {
        job_id: job.into(),
        owner: owner.into(),
        fence,
        now,
        result,
    }
}

fn release(job: &str, owner: &str, fence: Fence) -> Operation {
    Operation::Release {
        job_id: job.into(),
        owner: owner.into(),
        fence,
    }
}

/// Ends a cycle's lease as the plan says.
fn finish(
    client: &Client,
    log: &mut Log,
    job: &str,
    owner: &str,
    fence: Fence,
    now: f64,
    cycle: &Cycle,
) -> io::Result<()> {
    match cycle.finish {
        Finish::Complete => {
            log.record(
                client,
                complete(job, owner, fence, now, format!("{owner}/{fence}")),
            )?;
            if cycle.retry_complete {
                let again = format!("{owner}/{fence}/again");
                log.record(client, complete(job, owner, fence, now, again))?;
                // A heartbeat still running after the work is done, and a
                // release in a `finally` block.
                log.record(client, renew(job, owner, fence, now, cycle.ttl))?;
                log.record(client, release(job, owner, fence))?;
            }
        }
        Finish::Release => {
            log.record(client, release(job, owner, fence))?;
        }
        Finish::Abandon => {}
    }
    Ok(())
}

/// Reads the job and, if another worker holds it, uses that worker's fence
/// under this worker's name: the store must refuse, since the fence is not
/// this owner's. The call is the plan's finish (a renewal for "abandon").
fn meddle(
    client: &Client,
    log: &mut Log,
    job: &str,
    owner: &str,
    now: f64,
    cycle: &Cycle,
) -> io::Result<()> {
    let Some(Answer::Row(Some(row))) =
        log.record(client, Operation::State { job_id: job.into() })?
    else {
        return Ok(());
    };
    let row: Job = row;
    if row.done || row.owner.is_none() || row.owner.as_deref() == Some(owner) {
        return Ok(());
    }
    let fence = row.fence;
    let operation = match cycle.finish {
        Finish::Complete => complete(job, owner, fence, now, format!("{owner}/meddled")),
        Finish::Release => release(job, owner, fence),
        Finish::Abandon => renew(job, owner, fence, now, cycle.ttl),
    };
    log.record(client, operation)?;
    Ok(())
}
