//! Carrying a chaos run out: one process per worker, each speaking the
//! lab's protocol (the Rust store and its mutants through `lab __serve`,
//! the Python store and a student's program as themselves), driven round
//! by round from this process, every call recorded with its real-time
//! interval. A herd's calls queue behind a write lock the lab holds until
//! each of them waits for it, so that a check-then-act claim's race
//! happens on every run rather than when the scheduler allows.
//!
//! What the seed decides: each round's workers, their calls and their
//! clocks, the stalls, and which calls are killed and how long after they
//! were sent. What it cannot decide: the order in which the calls of one
//! round, sent at once, reach the database (the operating system schedules
//! the processes), and whether a kill lands before the call finished. A
//! replay makes the same calls as long as the answers are the same.

use super::history::{Call, Noted, Returned};
use super::plan::{Moment, Settings, Step, Worker};
use super::rng::Rng;
use super::sink::{SinkReport, Sinks};
use crate::error::StoreError;
use crate::external::ImplCommand;
use crate::job_store::JobStore;
use crate::operation::{Answer, Operation};
use crate::progress::Progress;
use crate::runner::WorkerCommand;
use crate::variant::{Engine, Variant};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::sync::Barrier;
use std::thread;
use std::time::{Duration, Instant};

/// How many workers act in an ordinary round, at most.
const FEW: usize = 3;

/// The chance that a round lets every ready worker act at once.
const HERD_CHANCE: f64 = 0.15;

/// The longest one call may take before its worker counts as hung.
const CALL_LIMIT: Duration = Duration::from_secs(10);

/// The chance that a call, when kills are on, is killed.
const KILL_CHANCE: f64 = 0.03;

/// The chance that a worker about to act, when restarts are on, is
/// stopped and started again instead.
const RESTART_CHANCE: f64 = 0.004;

/// The longest a kill waits after its call was sent.
const LONGEST_KILL_DELAY_MICROS: u64 = 400;

/// How a chaos run's workers are started.
#[derive(Debug, Clone)]
pub struct Workers {
    command: ImplCommand,
    /// Whether the workers run on the lab's disk model (`lab __serve`),
    /// which a power cut needs.
    on_shim: bool,
    /// What must live while the workers run (a mutated copy of a store).
    _files: Option<Arc<dyn std::any::Any + Send + Sync>>,
}

impl Workers {
    /// The workers of `variant`: a program as itself, a compiled store
    /// through `lab __serve` (started with `lab`).
    pub fn of(variant: &Variant, lab: &WorkerCommand) -> Workers {
        match &variant.engine {
            Engine::Compiled(_) => {
                let mut argv = vec![lab.program.to_string_lossy().into_owned()];
                argv.extend(["__serve".into(), "--variant".into(), variant.id.clone()]);
                Workers {
                    command: ImplCommand { argv, dir: None },
                    on_shim: true,
                    _files: None,
                }
            }
            Engine::Process(program) => Workers {
                command: program.command.clone(),
                on_shim: false,
                _files: Some(Arc::clone(program) as Arc<dyn std::any::Any + Send + Sync>),
            },
            // The server's connection string reaches the workers in their
            // environment (`LEASE_LAB_PG`), never on a command line.
            Engine::Server(store) => {
                let mut argv = vec![lab.program.to_string_lossy().into_owned()];
                argv.extend(["__serve".into(), "--variant".into(), variant.id.clone()]);
                argv.push("--on-server".into());
                Workers {
                    command: ImplCommand { argv, dir: None },
                    on_shim: false,
                    _files: Some(Arc::clone(store) as Arc<dyn std::any::Any + Send + Sync>),
                }
            }
        }
    }

    /// A worker's store; with `power`, its process shares the disk of
    /// the database `db` through the undo log `log`.
    fn open(&self, power: Option<(&Path, &Path)>) -> Arc<crate::external::ExternalStore> {
        let mut command = self.command.clone();
        if let Some((db, log)) = power {
            command.argv.extend([
                "--power-db".into(),
                db.to_string_lossy().into_owned(),
                "--power-log".into(),
                log.to_string_lossy().into_owned(),
            ]);
        }
        Arc::new(crate::external::ExternalStore::new(command, CALL_LIMIT))
    }
}

/// Why a run could not be made or carried on. A run that breaks the
/// fencing property is a result ([`Record`], judged), not an error.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// No folder for the run's database could be made in the scratch folder.
    #[error("cannot make a folder in {}: {source}", .scratch.display())]
    Folder {
        /// The scratch folder.
        scratch: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Power cuts were asked of workers that are not on the lab's disk model.
    #[error(
        "power cuts need the lab's disk model in every worker; only the compiled stores run on it (leave power out for a program)"
    )]
    PowerNeedsTheDiskModel,
    /// The first worker's `init_db` failed, before the run or after a power cut.
    #[error("init_db failed {when}: {source}")]
    InitDb {
        /// When: "before the run began", "after the power cut".
        when: &'static str,
        /// The store's error.
        source: crate::error::StoreError,
    },
    /// The lab's own connection to the database could not be opened.
    #[error("cannot open {} to watch it: {source}", .db.display())]
    Watch {
        /// The database.
        db: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// The write lock a herd's calls queue behind could not be held.
    #[error("cannot hold the write lock of {} for a herd's calls: {source}", .db.display())]
    HeldLock {
        /// The database.
        db: PathBuf,
        /// Why.
        source: crate::race::RaceError,
    },
    /// The disk model could not play back what a power cut loses.
    #[error("the power cut could not be replayed: {0}")]
    Replay(#[source] std::io::Error),
    /// A file a reboot loses could not be removed.
    #[error("cannot remove {}: {source}", .path.display())]
    Remove {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// A run's history and what it left: every call in the order it was
/// sent, the final file's rows, and what the side-effect sinks saw.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Record {
    /// The settings it ran with.
    pub settings: Settings,
    /// Every call, in the order sent.
    pub calls: Vec<Call>,
    /// The rows of the file at the end, read with plain SQL; `Err` says
    /// why they could not be read.
    pub rows: Result<Vec<crate::job::Job>, String>,
    /// SQLite's `PRAGMA integrity_check` of the file at the end.
    pub integrity: String,
    /// The moments of the workers' stories (stalls, returns, kills and
    /// restarts), in the order they came, placed among the calls.
    pub moments: Vec<Noted>,
    /// Each worker's clock skew, in seconds.
    pub skews: Vec<f64>,
    /// How many workers were killed.
    pub kills: usize,
    /// How many times a worker was stopped between calls and started again.
    pub restarts: usize,
    /// What the two side-effect sinks saw.
    pub sinks: SinkReport,
    /// How long the run took.
    #[serde(skip)]
    pub took: Duration,
}

/// What a worker's process answered: the outcome and the call's interval.
struct Done {
    worker: usize,
    operation: Operation,
    began: u64,
    ended: Option<u64>,
    returned: Returned,
}

/// Runs `settings` against `workers` on a new database in `scratch`.
///
/// Errors: the database could not be made, or a worker never started (the
/// implementation's own fault, said in its words).
pub fn run(workers: &Workers, settings: &Settings, scratch: &Path) -> Result<Record, RunError> {
    run_until(workers, settings, scratch, None, &Watch::hidden())
}

/// Who watches a run as it goes: a progress line, and what it calls the
/// run (`the run`, `shrinking, run 3`).
pub struct Watch<'a> {
    /// The line.
    pub progress: &'a Progress,
    /// The run's name on it.
    pub label: String,
}

impl Watch<'_> {
    /// Nobody: no line.
    pub fn hidden() -> Watch<'static> {
        static HIDDEN: std::sync::OnceLock<Progress> = std::sync::OnceLock::new();
        Watch {
            progress: HIDDEN.get_or_init(Progress::hidden),
            label: String::new(),
        }
    }
}

/// How often the progress line is said again, at most: the calls made and
/// the faults are counted as they come.
const SAY_EVERY: Duration = Duration::from_millis(100);

/// How often the findings so far are counted, at most: each count reads the
/// file and checks the history so far.
const COUNT_FINDINGS_EVERY: Duration = Duration::from_millis(400);

/// After how many calls a run that may stop early first looks at what it
/// has made; it looks again each time it has made twice as many, and at
/// most [`LONGEST_UNCHECKED`] calls later.
const FIRST_CHECK: usize = 32;

/// See [`FIRST_CHECK`].
const LONGEST_UNCHECKED: usize = 512;

/// [`run`], stopped early when `stop` says so of the run so far: it is
/// asked between two rounds, when no call is in flight, after 32 calls,
/// twice as many, and so on (at most 512 calls apart), with the rows the
/// file holds then. A run stopped after N calls is the run of the same settings
/// with N calls (the seed makes the same calls up to there), and the record
/// returned is the one `stop` was shown, which says so; a run with power cuts is never stopped early, since where its
/// cut falls depends on the number of calls.
pub fn run_until(
    workers: &Workers,
    settings: &Settings,
    scratch: &Path,
    mut stop: Option<&mut dyn FnMut(&Record) -> bool>,
    watch: &Watch,
) -> Result<Record, RunError> {
    if settings.faults.power {
        stop = None;
    }
    let mut next_check = FIRST_CHECK;
    // The record `stop` was shown when it said to stop: the run's own.
    let mut stopped = None;
    let dir = tempfile::Builder::new()
        .prefix("lease-lab-chaos-")
        .tempdir_in(scratch)
        .map_err(|source| RunError::Folder {
            scratch: scratch.to_path_buf(),
            source,
        })?;
    let mut run = Run::start(workers, settings, dir.path())?;
    let mut round = 0;
    let mut said = Instant::now();
    let mut counted = (Instant::now(), 0);
    while run.calls.len() < settings.operations {
        round += 1;
        if !run.round(round)? {
            continue;
        }
        if said.elapsed() >= SAY_EVERY {
            said = Instant::now();
            // (Made only when a line is shown: counting reads the file.)
            watch.progress.say(|| {
                if counted.0.elapsed() >= COUNT_FINDINGS_EVERY {
                    let so_far = run.record_now(run.calls.clone());
                    counted = (Instant::now(), super::properties::check(&so_far).len());
                }
                run.progress_text(&watch.label, counted.1)
            });
        }
        if let Some(stop) = stop.as_mut().filter(|_| run.calls.len() >= next_check) {
            next_check = run.calls.len() + run.calls.len().min(LONGEST_UNCHECKED);
            let so_far = run.record_now(run.calls.clone());
            if stop(&so_far) {
                stopped = Some(so_far);
                break;
            }
        }
    }
    Ok(run.finish(stopped))
}

/// One call a round makes: the worker, its operation, and when it is
/// killed after it was sent, if it is.
type RoundCall = (usize, Operation, Option<Duration>);

/// A run under way: its workers' processes, what the lab watches the file
/// with, the seed's generator of the run's own choices, and every call so
/// far.
struct Run<'a> {
    settings: &'a Settings,
    db: PathBuf,
    log: PathBuf,
    started: Instant,
    stores: Vec<Arc<crate::external::ExternalStore>>,
    /// The lab's own connection (see [`Run::start`]).
    keeper: Option<rusqlite::Connection>,
    /// The power fails once, in the first round that begins with this
    /// many calls made.
    cut_at: Option<usize>,
    team: Vec<Worker>,
    rng: Rng,
    calls: Vec<Call>,
    moments: Vec<Noted>,
    done_jobs: BTreeSet<String>,
    next_job: usize,
    open_jobs: Vec<String>,
    kills: usize,
    restarts: usize,
    sinks: Sinks,
}

impl<'a> Run<'a> {
    /// A run of `settings` on a new database in `dir`, its workers started
    /// and the database made by the first; nothing called yet.
    ///
    /// Errors: power cuts asked of workers off the lab's disk model, or the
    /// database could not be made or watched.
    fn start(workers: &Workers, settings: &'a Settings, dir: &Path) -> Result<Run<'a>, RunError> {
        let db = dir.join("jobs.db");
        let log = dir.join("power.log");
        if settings.faults.power && !workers.on_shim {
            return Err(RunError::PowerNeedsTheDiskModel);
        }
        let power = settings
            .faults
            .power
            .then_some((db.as_path(), log.as_path()));
        let started = Instant::now();
        let stores: Vec<_> = (0..settings.workers).map(|_| workers.open(power)).collect();
        stores[0].init_db(&db).map_err(|source| RunError::InitDb {
            when: "before the run began",
            source,
        })?;
        // A connection of the lab's own stays open on the file for the whole
        // run, as a long-lived process's would. Without one, a worker's call
        // is often the only connection, and the only one rebuilds the log's
        // index from the whole log when it opens and cannot restart the log
        // (the Rust store keeps the log past the last close): every call got
        // slower than the one before.
        let keeper = Some(open_keeper(&db)?);
        let cut_at = power.map(|_| {
            let mut rng = Rng::part(settings.seed, u64::MAX);
            settings.operations / 4 + rng.below(settings.operations / 2 + 1)
        });
        let team: Vec<Worker> = (0..settings.workers)
            .map(|index| Worker::new(index, settings))
            .collect();
        Ok(Run {
            settings,
            db,
            log,
            started,
            stores,
            keeper,
            cut_at,
            team,
            rng: Rng::part(settings.seed, 0),
            calls: Vec::with_capacity(settings.operations),
            moments: Vec::new(),
            done_jobs: BTreeSet::new(),
            next_job: 0,
            open_jobs: Vec::new(),
            kills: 0,
            restarts: 0,
            sinks: Sinks::new(),
        })
    }

    /// The record of the run so far, with `calls` and the rows the file
    /// holds now: a run ends when it has made as many calls as its
    /// settings say, or when it was stopped, as the run of that many calls.
    fn record_now(&self, calls: Vec<Call>) -> Record {
        let (rows, integrity) = read_file(&self.db);
        Record {
            settings: Settings {
                operations: calls.len(),
                ..self.settings.clone()
            },
            moments: self
                .moments
                .iter()
                .filter(|noted| noted.before <= calls.len())
                .cloned()
                .collect(),
            calls,
            rows,
            integrity,
            skews: self.team.iter().map(|worker| worker.skew).collect(),
            kills: self.kills,
            restarts: self.restarts,
            sinks: self.sinks.report_of(),
            took: self.started.elapsed(),
        }
    }

    /// The run's record: `stopped` (the one `stop` was shown), or else
    /// the whole run's, read once the workers are gone and the lab's
    /// connection closed.
    fn finish(mut self, stopped: Option<Record>) -> Record {
        self.stores.clear();
        self.keeper = None;
        stopped.unwrap_or_else(|| {
            let calls = std::mem::take(&mut self.calls);
            self.record_now(calls)
        })
    }

    /// Plays `round`: its workers, their calls sent and answered, a power
    /// cut when it is due. Answers whether any worker was ready to act.
    ///
    /// Errors: the power cut could not be carried out.
    fn round(&mut self, round: usize) -> Result<bool, RunError> {
        self.open_jobs.retain(|job| !self.done_jobs.contains(job));
        while self.open_jobs.len() < self.settings.jobs() {
            self.next_job += 1;
            self.open_jobs.push(format!("job-{}", self.next_job));
        }
        let ready: Vec<usize> = (0..self.team.len())
            .filter(|index| !self.team[*index].stalled_in(round))
            .collect();
        if ready.is_empty() {
            return Ok(false);
        }
        let (herd, acting) = self.acting(ready);
        let cut_now = self.cut_at.is_some_and(|at| self.calls.len() >= at);
        if cut_now {
            self.cut_at = None;
            // Every worker must be running, so that the cut kills them
            // all and none starts during it.
            for store in &self.stores {
                let _ = store.name();
            }
        }
        let round_calls = self.round_calls(round, &acting, herd, cut_now);
        let (finished, cut_pids) = if herd && !cut_now {
            (self.send_behind_a_held_lock(round_calls)?, Vec::new())
        } else {
            self.send(round_calls, cut_now, cut_now)
        };
        if cut_now {
            cut(
                &self.stores,
                &cut_pids,
                &mut self.keeper,
                &self.db,
                &self.log,
            )?;
        }
        self.learn(round, finished);
        if cut_now {
            // Every worker died with the power: none remembers a lease.
            for worker in &mut self.team {
                worker.restart();
            }
        }
        Ok(true)
    }

    /// Which of the `ready` workers act this round, in index order, and
    /// whether they are a herd.
    fn acting(&mut self, mut ready: Vec<usize>) -> (bool, Vec<usize>) {
        // Mostly a few workers at once; now and then a herd of them, which
        // is where a claim that reads before it locks is caught. (Each call
        // that finds the write lock taken sleeps in SQLite's busy handler
        // for a millisecond or more, so a herd in every round would cost
        // most of the run's time.)
        let herd = self.rng.chance(HERD_CHANCE);
        let at_once = if herd {
            1 + self.rng.below(ready.len())
        } else {
            1 + self.rng.below(ready.len().min(FEW))
        };
        let mut acting = Vec::with_capacity(at_once);
        for _ in 0..at_once {
            acting.push(ready.swap_remove(self.rng.below(ready.len())));
        }
        acting.sort_unstable();
        (herd, acting)
    }

    /// The round's calls, decided first (in the seed's order): each acting
    /// worker's step, unless it stalls, idles or is restarted, with the
    /// moment of its kill when it is to be killed.
    fn round_calls(
        &mut self,
        round: usize,
        acting: &[usize],
        herd: bool,
        cut_now: bool,
    ) -> Vec<RoundCall> {
        let settings = self.settings;
        let mut round_calls = Vec::with_capacity(acting.len());
        for &index in acting {
            if self.calls.len() + round_calls.len() >= settings.operations {
                break;
            }
            // (Not in the round the power fails in, which must find
            // every worker running.)
            if settings.faults.restarts && !cut_now && self.rng.chance(RESTART_CHANCE) {
                // Between two calls: nothing is in flight, so the
                // seed replays this exactly. Its next call starts the
                // process again, which sets up as a new worker does.
                self.stores[index].abandon();
                self.team[index].restart();
                self.restarts += 1;
                self.note(index, Moment::Restarted);
                continue;
            }
            let step = self.team[index].step(round, &self.open_jobs, settings, herd);
            for moment in self.team[index].take_moments() {
                self.note(index, moment);
            }
            let operation = match step {
                Step::Stall | Step::Idle => continue,
                Step::Call(operation) => operation,
                Step::ReportAndComplete(operation) => {
                    self.sinks.report(index, &operation);
                    operation
                }
            };
            let kill_after = (settings.faults.kills && self.rng.chance(KILL_CHANCE))
                .then(|| Duration::from_micros(self.rng.next_u64() % LONGEST_KILL_DELAY_MICROS));
            round_calls.push((index, operation, kill_after));
        }
        round_calls
    }

    /// Sends a herd's `round_calls` at once while the lab holds the write
    /// lock, and lets it go once every call that writes waits for it
    /// ([`crate::race::behind_a_held_lock`]): every claim of the herd has
    /// then looked at the lease, so a claim that looks before it locks
    /// (exercise 8b) wins more than once whenever two of the herd claim
    /// one expired job, on a loaded machine as on an idle one; left to the
    /// scheduler, the two looks met on some runs only.
    ///
    /// Errors: the lock could not be taken or let go.
    fn send_behind_a_held_lock(
        &mut self,
        round_calls: Vec<RoundCall>,
    ) -> Result<Vec<Done>, RunError> {
        // The calls that queue for the lock: those that write a row, but
        // not one the run kills (its process may die before it queues).
        // (A read does not wait, nor does `init_db` once the table is
        // there.)
        let writers = round_calls
            .iter()
            .filter(|(_, operation, kill_after)| {
                kill_after.is_none()
                    && !matches!(operation, Operation::State { .. } | Operation::InitDb)
            })
            .count();
        if writers < 2 {
            return Ok(self.send(round_calls, true, false).0);
        }
        // A worker just restarted starts its program first, so that its
        // threads can be seen queue.
        let stores: Vec<&dyn JobStore> = round_calls
            .iter()
            .map(|(index, _, _)| {
                let store = &self.stores[*index];
                if store.program_pid().is_none() {
                    let _ = store.name();
                }
                store.as_ref() as &dyn JobStore
            })
            .collect();
        let racers = crate::race::Racers::of_all(&stores);
        let db = self.db.clone();
        crate::race::behind_a_held_lock(&db, writers, &racers, || {
            self.send(round_calls, true, false).0
        })
        .map_err(|source| RunError::HeldLock { db, source })
    }

    /// Sends `round_calls` and answers what came back, with the workers'
    /// pids the power cut killed when `cut_now`.
    ///
    /// `at_once` (a herd, and the round the power fails in): the calls
    /// are sent together: every call's thread waits for the others before
    /// it sends, so that the calls reach the store as close together as
    /// the operating system lets them, and two claims really race. In any
    /// other round they are made one after another in the seed's order,
    /// so that the seed, not the operating system, decides how they
    /// interleave, and a replay takes the same course.
    fn send(
        &mut self,
        round_calls: Vec<RoundCall>,
        at_once: bool,
        cut_now: bool,
    ) -> (Vec<Done>, Vec<u32>) {
        let sent = round_calls.len();
        let entered = AtomicUsize::new(0);
        let together = Barrier::new(if at_once { sent } else { 1 });
        let (sender, receiver) = mpsc::channel();
        let mut cut_pids = Vec::new();
        let started = self.started;
        thread::scope(|scope| {
            for (index, operation, kill_after) in round_calls {
                let store = Arc::clone(&self.stores[index]);
                let sender = sender.clone();
                let db = self.db.clone();
                let (entered, together) = (&entered, &together);
                let sending = scope.spawn(move || {
                    together.wait();
                    entered.fetch_add(1, Ordering::SeqCst);
                    let _ = sender.send(call(index, &store, &db, operation, kill_after, started));
                });
                if !at_once {
                    // (A call cannot panic: `call` answers every outcome.)
                    let _ = sending.join();
                }
            }
            if cut_now {
                // The power fails for every worker at once, once the
                // round's calls are under way.
                let delay = Duration::from_micros(self.rng.next_u64() % LONGEST_CUT_DELAY_MICROS);
                while entered.load(Ordering::SeqCst) < sent {
                    thread::yield_now();
                }
                thread::sleep(delay);
                cut_pids = self
                    .stores
                    .iter()
                    .filter_map(|store| store.program_pid())
                    .collect();
                for pid in &cut_pids {
                    kill(*pid);
                }
            }
        });
        drop(sender);
        (receiver.iter().collect(), cut_pids)
    }

    /// The progress line's text: `label`, the calls made, the faults so
    /// far, and `findings` (the named checks' findings so far; the model
    /// check comes at the end): `the run: 290/2000 calls; 9 stalls, 3
    /// killed; 0 findings`.
    fn progress_text(&self, label: &str, findings: usize) -> String {
        let stalls = self
            .moments
            .iter()
            .filter(|noted| matches!(noted.moment, Moment::Stalled { .. }))
            .count();
        let mut faults = vec![
            crate::terminal::plural(stalls, "stall"),
            format!("{} killed", self.kills),
        ];
        if self.settings.faults.restarts {
            faults.push(format!("{} restarted", self.restarts));
        }
        format!(
            "{label}: {}/{} calls; {}; {}",
            self.calls.len(),
            self.settings.operations,
            faults.join(", "),
            crate::terminal::plural(findings, "finding")
        )
    }

    /// Notes `moment` of worker `index` now, before the calls not yet sent.
    fn note(&mut self, index: usize, moment: Moment) {
        self.moments.push(Noted {
            worker: index,
            before: self.calls.len(),
            at: u64::try_from(self.started.elapsed().as_nanos()).unwrap_or(u64::MAX),
            moment,
        });
    }

    /// Takes in the round's `finished` calls in the order they began: each
    /// worker learns its answer (or restarts after a kill), an accepted
    /// completion closes its job, and each call joins the history.
    fn learn(&mut self, round: usize, mut finished: Vec<Done>) {
        finished.sort_by_key(|done| done.began);
        for done in finished {
            let worker = &mut self.team[done.worker];
            match &done.returned {
                Returned::Unknown => {
                    self.kills += 1;
                    worker.restart();
                    self.moments.push(Noted {
                        worker: done.worker,
                        before: self.calls.len() + 1,
                        at: done.began,
                        moment: Moment::Killed,
                    });
                }
                Returned::Answer(answer) => {
                    if matches!(
                        (&done.operation, answer),
                        (Operation::Complete { .. }, Answer::Bool(true))
                    ) {
                        self.done_jobs
                            .insert(done.operation.job_id().unwrap_or_default().to_string());
                    }
                    worker.learn(round, &done.operation, Some(answer));
                }
                Returned::Error(_) => worker.learn(round, &done.operation, None),
            }
            self.calls.push(Call {
                worker: done.worker,
                operation: done.operation,
                began: done.began,
                ended: done.ended,
                returned: done.returned,
            });
        }
    }
}

/// The longest the power cut waits once a round's calls are sent.
const LONGEST_CUT_DELAY_MICROS: u64 = 400;

/// The lab's own connection, open on the file for the whole run.
fn open_keeper(db: &Path) -> Result<rusqlite::Connection, RunError> {
    rusqlite::Connection::open(db)
        .and_then(|keeper| {
            // Its close must never checkpoint: at a power cut it closes
            // when the workers are dead, and a checkpoint would copy
            // writes no sync made durable into the database, unlogged.
            keeper.set_db_config(
                rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
                true,
            )?;
            keeper.query_row("SELECT count(*) FROM jobs", [], |row| row.get::<_, i64>(0))?;
            Ok(keeper)
        })
        .map_err(|source| RunError::Watch {
            db: db.to_path_buf(),
            source,
        })
}

/// After the power failed (the workers `killed`): every worker is dead,
/// the disk loses what no sync made durable (the shared undo log
/// replayed), the WAL index goes as after a reboot, and the workers start
/// again; the first runs `init_db`.
fn cut(
    stores: &[Arc<crate::external::ExternalStore>],
    killed: &[u32],
    keeper: &mut Option<rusqlite::Connection>,
    db: &Path,
    log: &Path,
) -> Result<(), RunError> {
    // A worker started after the kill (it cannot, as every one was
    // running, but a crash and restart could) dies with the rest.
    for store in stores {
        if store
            .program_pid()
            .is_some_and(|pid| !killed.contains(&pid))
        {
            store.abandon();
        }
    }
    for store in stores {
        store.abandon();
    }
    drop(keeper.take());
    crate::vfs_shim::replay(log).map_err(RunError::Replay)?;
    let shm = PathBuf::from(format!("{}-shm", db.display()));
    match std::fs::remove_file(&shm) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(source) => return Err(RunError::Remove { path: shm, source }),
    }
    stores[0].init_db(db).map_err(|source| RunError::InitDb {
        when: "after the power cut",
        source,
    })?;
    *keeper = Some(open_keeper(db)?);
    Ok(())
}

/// One call on a worker's process, killed `kill_after` it was sent when
/// asked: its outcome is then unknown unless the answer came first.
fn call(
    worker: usize,
    store: &Arc<crate::external::ExternalStore>,
    db: &Path,
    operation: Operation,
    kill_after: Option<Duration>,
    started: Instant,
) -> Done {
    let nanos = |at: Instant| u64::try_from(at.duration_since(started).as_nanos()).unwrap_or(0);
    // The program must be running to be killed during the call: a call on
    // a worker just restarted starts it first.
    let pid = kill_after.and_then(|_| {
        if store.program_pid().is_none() {
            let _ = store.name();
        }
        store.program_pid()
    });
    let began = Instant::now();
    let killer = kill_after.zip(pid).map(|(delay, pid)| {
        thread::spawn(move || {
            thread::sleep(delay);
            kill(pid);
        })
    });
    let answer = store.call(db, &operation);
    let ended = Instant::now();
    let killed = killer.map(|killer| killer.join().is_ok()).unwrap_or(false);
    let (ended, returned) = match answer {
        Ok(answer) => (Some(nanos(ended)), Returned::Answer(answer)),
        // The process ended before answering: killed by the run, or it
        // crashed; either way the call may or may not have landed.
        Err(StoreError::Fault(_)) => (None, Returned::Unknown),
        Err(error) => (Some(nanos(ended)), Returned::Error(error.kind())),
    };
    if killed && returned != Returned::Unknown {
        // The kill came after the answer: the worker died between calls,
        // and its next call starts it again, remembering nothing.
        store.abandon();
    }
    Done {
        worker,
        operation,
        began: nanos(began),
        ended,
        returned,
    }
}

/// Sends SIGKILL to `pid`.
fn kill(pid: u32) {
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: kill(2) takes any pid and signal number and has no
        // memory effects; a pid that has gone away gives ESRCH.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
}

/// The file's rows and its integrity check, read with plain SQL.
fn read_file(db: &PathBuf) -> (Result<Vec<crate::job::Job>, String>, String) {
    let connection = match rusqlite::Connection::open(db) {
        Ok(connection) => connection,
        Err(error) => return (Err(error.to_string()), error.to_string()),
    };
    let integrity = connection
        .query_row("PRAGMA integrity_check", [], |row| row.get::<_, String>(0))
        .unwrap_or_else(|error| error.to_string());
    let rows = connection
        .prepare("SELECT id, owner, until, fence, result, done FROM jobs ORDER BY id")
        .and_then(|mut statement| {
            statement
                .query_map([], |row| {
                    Ok(crate::job::Job {
                        id: row.get(0)?,
                        owner: row.get(1)?,
                        until: row.get(2)?,
                        fence: crate::job::Fence(row.get(3)?),
                        result: row.get(4)?,
                        done: row.get::<_, i64>(5)? != 0,
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()
        })
        .map_err(|error| error.to_string());
    (rows, integrity)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chaos::plan::Faults;
    use crate::subject::Subject;

    /// The Python store's workers: a program as itself, which a unit test
    /// can start (the compiled stores' workers are the `lab` binary).
    fn python_workers() -> Workers {
        let variant = Subject::Python.reference().expect("the Python store");
        let unused = WorkerCommand {
            program: PathBuf::from("the-lab-binary-is-not-used"),
            args: Vec::new(),
        };
        Workers::of(&variant, &unused)
    }

    /// A run that cannot be made says why, naming what was wrong: a
    /// scratch folder that is not there, power cuts asked of a program.
    #[test]
    fn a_run_that_cannot_be_made_says_why() {
        let workers = python_workers();
        let settings = Settings {
            workers: 1,
            operations: 10,
            seed: 1,
            faults: Faults::none(),
        };
        let missing = Path::new("/no/such/scratch/folder");
        let error = run(&workers, &settings, missing).expect_err("no folder");
        assert!(matches!(error, RunError::Folder { .. }), "{error:?}");
        assert!(
            error
                .to_string()
                .starts_with("cannot make a folder in /no/such/scratch/folder: "),
            "{error}"
        );
        let power = Settings {
            faults: Faults {
                power: true,
                ..Faults::none()
            },
            ..settings
        };
        let scratch = tempfile::tempdir().expect("a folder");
        let error = run(&workers, &power, scratch.path()).expect_err("a program has no disk model");
        assert!(
            matches!(error, RunError::PowerNeedsTheDiskModel),
            "{error:?}"
        );
        assert!(
            error.to_string().contains("leave power out for a program"),
            "{error}"
        );
    }

    /// A run told to stop is asked after 32 calls, then after twice as
    /// many, between rounds; stopped, its record says how many calls it
    /// made, and a run of the same settings with that many calls makes the
    /// same calls with the same answers.
    #[test]
    fn a_run_stopped_after_n_calls_is_the_run_of_n_calls() {
        let workers = python_workers();
        let scratch = tempfile::tempdir().expect("a folder");
        let settings = Settings {
            workers: 1,
            operations: 400,
            seed: 5,
            faults: Faults {
                stalls: true,
                restarts: true,
                skew: 2.0,
                ..Faults::none()
            },
        };
        let mut asked = Vec::new();
        let mut stop = |so_far: &Record| {
            asked.push(so_far.calls.len());
            assert_eq!(so_far.settings.operations, so_far.calls.len());
            so_far.calls.len() >= 100
        };
        let stopped = run_until(
            &workers,
            &settings,
            scratch.path(),
            Some(&mut stop),
            &Watch::hidden(),
        )
        .expect("the run is made");
        assert_eq!(asked.len(), 3, "asked after {asked:?} calls");
        assert!((32..64).contains(&asked[0]), "{asked:?}");
        assert!((64..128).contains(&asked[1]), "{asked:?}");
        assert!(asked[2] >= 128, "{asked:?}");
        let made = stopped.calls.len();
        assert_eq!(made, asked[2]);
        assert_eq!(stopped.settings.operations, made);
        assert!(stopped.rows.is_ok(), "{:?}", stopped.rows);

        let whole = run(
            &workers,
            &Settings {
                operations: made,
                ..settings
            },
            scratch.path(),
        )
        .expect("the run is made");
        let course = |record: &Record| -> Vec<(usize, Operation, Returned)> {
            record
                .calls
                .iter()
                .map(|call| (call.worker, call.operation.clone(), call.returned.clone()))
                .collect()
        };
        assert_eq!(course(&whole), course(&stopped));
        assert_eq!(whole.rows, stopped.rows);
    }

    /// A run never told to stop goes to its end.
    #[test]
    fn a_run_that_is_not_stopped_makes_every_call() {
        let scratch = tempfile::tempdir().expect("a folder");
        let settings = Settings {
            workers: 2,
            operations: 120,
            seed: 1,
            faults: Faults::none(),
        };
        let mut asked = 0;
        let mut never = |_: &Record| {
            asked += 1;
            false
        };
        let record = run_until(
            &python_workers(),
            &settings,
            scratch.path(),
            Some(&mut never),
            &Watch::hidden(),
        )
        .expect("the run is made");
        assert_eq!(record.calls.len(), 120);
        assert_eq!(record.settings.operations, 120);
        assert_eq!(asked, 2, "asked after 32 and 64 calls, not after 120");
    }
}
