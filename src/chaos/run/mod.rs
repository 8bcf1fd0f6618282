//! Carrying a chaos run out: one process per worker, each speaking the
//! lab's protocol (the Rust store and its mutants through `lab __serve`,
//! the store on PostgreSQL's variants through `lab __serve --on-server`,
//! the Python store and a student's program as themselves), driven round
//! by round from this process, every call recorded with its real-time
//! interval. A herd's calls queue behind a lock the lab holds (a file's
//! write lock, a server's rows) until each of them waits for it, so that a
//! check-then-act claim's race happens on every run rather than when the
//! scheduler allows.
//!
//! What the seed decides: each round's workers, their calls and their
//! clocks, the stalls, and which calls are killed and how long after they
//! were sent. What it cannot decide: the order in which the calls of one
//! round, sent at once, reach the database (the operating system schedules
//! the processes), and whether a kill lands before the call finished. A
//! replay makes the same calls as long as the answers are the same.
//!
//! `place` keeps the jobs (a file, or a schema on a server), `round`
//! plays the rounds, `call` makes one call; `apart` starts workers on hosts
//! of their own for a story told call by call.

use super::history::{Call, Noted};
use super::plan::Settings;
use super::sink::SinkReport;
use crate::external::{ImplCommand, Spares};
use crate::pg_server::OnServer;
use crate::runner::WorkerCommand;
use crate::status_line::StatusLine;
use crate::variant::{Engine, Variant};
use place::Place;
use round::Run;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use apart::Apart;
pub use place::ON_A_SERVER;

/// The longest one call may take before its worker counts as hung.
const CALL_LIMIT: Duration = Duration::from_secs(10);

/// How a chaos run's workers are started.
#[derive(Clone)]
pub struct Workers {
    command: ImplCommand,
    /// Whether the workers run on the lab's disk model (`lab __serve`),
    /// which a power cut needs.
    on_shim: bool,
    /// The store on a server the workers share, as the lab sees it: it
    /// names each run's schema, reads its rows and holds their locks.
    server: Option<Arc<OnServer>>,
    /// Whether the server and each worker run on hosts of their own
    /// ([`crate::pg_server::Hosts`]).
    hosts: bool,
    /// What must live while the workers run (a mutated copy of a store).
    _files: Option<Arc<dyn std::any::Any + Send + Sync>>,
    /// The workers' programs started ahead, for the runs whose workers'
    /// commands are all the same (a file without power cuts): a run, and
    /// the next, takes its workers' first programs and those that replace
    /// a killed one from them.
    spares: Arc<Spares>,
}

impl std::fmt::Debug for Workers {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Workers")
            .field("command", &self.command)
            .field("on_shim", &self.on_shim)
            .field("on_a_server", &self.server.is_some())
            .finish_non_exhaustive()
    }
}

impl Workers {
    /// The workers of `variant`: a program as itself, a compiled store
    /// through `lab __serve` (started with `lab`), the store on PostgreSQL
    /// through `lab __serve --on-server`.
    pub fn of(variant: &Variant, lab: &WorkerCommand) -> Workers {
        let serve = |extra: &[&str]| {
            let mut argv = vec![lab.program.to_string_lossy().into_owned()];
            argv.extend(["__serve".into(), "--variant".into(), variant.id.clone()]);
            argv.extend(extra.iter().map(|word| word.to_string()));
            ImplCommand {
                argv,
                dir: None,
                env: Vec::new(),
            }
        };
        let workers = |command: ImplCommand| Workers {
            spares: Spares::of(command.clone(), CALL_LIMIT),
            command,
            on_shim: false,
            server: None,
            hosts: false,
            _files: None,
        };
        match &variant.engine {
            Engine::Compiled(_) => Workers {
                on_shim: true,
                ..workers(serve(&[]))
            },
            Engine::Process(program) => Workers {
                _files: Some(Arc::clone(program) as Arc<dyn std::any::Any + Send + Sync>),
                ..workers(program.command.clone())
            },
            // The server's connection string reaches the workers in their
            // environment (`LEASE_LAB_PG`), never on a command line; the
            // schema of each run is added when it is made.
            Engine::Server(store) => Workers {
                server: Some(Arc::clone(store)),
                ..workers(serve(&["--on-server"]))
            },
        }
    }

    /// The same workers, each on a host of its own, the server on another,
    /// on a cluster of each run's own (see [`crate::pg_server::Hosts`]).
    ///
    /// Errors: the workers do not keep their jobs on a server.
    pub fn on_hosts(self) -> Result<Workers, RunError> {
        if self.server.is_none() {
            return Err(RunError::HostsNeedAServer);
        }
        Ok(Workers {
            hosts: true,
            ..self
        })
    }

    /// Worker `index`'s store, its jobs kept at `place`; with `power`, its
    /// process shares the disk of the file with the others.
    fn open(
        &self,
        place: &Place,
        power: bool,
        index: usize,
    ) -> Arc<crate::external::ExternalStore> {
        let mut command = self.command.clone();
        let words = place.worker_words(power, index);
        command.argv.splice(0..0, words.before);
        command.argv.extend(words.after);
        command.env.extend(words.env);
        // (The spares serve only a worker whose command is theirs.)
        Arc::new(crate::external::ExternalStore::new(command, CALL_LIMIT).with_spares(&self.spares))
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
        "power cuts need the lab's disk model in every worker; only the compiled stores on SQLite run on it (leave power out for a program, and use server-crash on a server)"
    )]
    PowerNeedsTheDiskModel,
    /// Hosts of their own were asked of workers that keep their jobs in a
    /// file.
    #[error("hosts of their own need workers on a server (--engine postgres)")]
    HostsNeedAServer,
    /// A partition was asked of workers that are not on hosts of their own.
    #[error("a partition cuts a worker's link to the server, and only workers on hosts of their own have one (add --hosts)")]
    PartitionNeedsHosts,
    /// The hosts could not be made: not root, no `ip`, or `ip` failed.
    #[error(transparent)]
    Hosts(crate::pg_server::HostsError),
    /// A link could not be cut or mended.
    #[error("the partition failed: {0}")]
    Partition(String),
    /// A server crash was asked of workers that keep their jobs in a file.
    #[error("a server crash needs workers on a server (--engine postgres); a file has no server to crash (use power or kills)")]
    CrashNeedsAServer,
    /// The cluster of the run's own, which its server crash may kill,
    /// could not be started.
    #[error("the run's own PostgreSQL cluster (for a server crash, or on a host of its own) could not be started: {0}")]
    OwnServer(String),
    /// The server could not be crashed, or did not come back.
    #[error("the server crash failed: {0}")]
    ServerCrash(String),
    /// A server's rows could not be held for a herd's calls, watched or
    /// let go.
    #[error("cannot hold the server's rows for a herd's calls: {0}")]
    HeldRows(String),
    /// The first worker's `init_db` failed, before the run or after a power cut.
    #[error("init_db failed {when}: {source}")]
    InitDb {
        /// When: "before the run began", "after the power cut".
        when: &'static str,
        /// The store's error.
        source: crate::error::StoreError,
    },
    /// The lab's own connection to the file could not be opened.
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

impl Record {
    /// What kept the jobs, in words: `the file`, `the server`.
    pub fn keeper_name(&self) -> &'static str {
        if self.on_a_server {
            "the server"
        } else {
            "the file"
        }
    }
}

/// A run's history and what it left: every call in the order it was
/// sent, the jobs' final rows, and what the side-effect sinks saw.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Record {
    /// The settings it ran with.
    pub settings: Settings,
    /// Every call, in the order sent.
    pub calls: Vec<Call>,
    /// The rows of the jobs at the end, read with plain SQL by a client
    /// that is not a worker's; `Err` says why they could not be read.
    pub rows: Result<Vec<crate::job::Job>, String>,
    /// SQLite's `PRAGMA integrity_check` of the file at the end, or
    /// [`ON_A_SERVER`].
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
    /// How many calls the server's crash or a partition cut off.
    pub cut_off: usize,
    /// How many times a worker's link was cut.
    pub partitions: usize,
    /// Whether the jobs were kept on a server (else in a file).
    pub on_a_server: bool,
    /// What the two side-effect sinks saw.
    pub sinks: SinkReport,
    /// How long the run took.
    #[serde(skip)]
    pub took: Duration,
}

/// Runs `settings` against `workers` on a new database in `scratch`.
///
/// Errors: the database could not be made, or a worker never started (the
/// implementation's own fault, said in its words).
pub fn run(workers: &Workers, settings: &Settings, scratch: &Path) -> Result<Record, RunError> {
    run_until(workers, settings, scratch, None, None, &Watch::hidden())
}

/// Who watches a run as it goes: a progress line, and what it calls the
/// run (`the run`, `shrinking, run 3`).
pub struct Watch<'a> {
    /// The line.
    pub progress: &'a StatusLine,
    /// The run's name on it.
    pub label: String,
}

impl Watch<'_> {
    /// Nobody: no line.
    pub fn hidden() -> Watch<'static> {
        static HIDDEN: std::sync::OnceLock<StatusLine> = std::sync::OnceLock::new();
        Watch {
            progress: HIDDEN.get_or_init(StatusLine::hidden),
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
/// returned is the one `stop` was shown, which says so; a run with a power
/// cut or a server crash is never stopped early, since where its cut or
/// crash falls depends on the number of calls.
///
/// A run still going at `deadline` stops after the round it is in, its
/// record that of the calls made (the run of that many calls, as above;
/// with a power cut or a server crash, one whose strike may not have
/// fallen yet).
pub fn run_until(
    workers: &Workers,
    settings: &Settings,
    scratch: &Path,
    mut stop: Option<&mut dyn FnMut(&Record) -> bool>,
    deadline: Option<Instant>,
    watch: &Watch,
) -> Result<Record, RunError> {
    if settings.faults.power || settings.faults.server_crash {
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
        if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            break;
        }
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

mod apart;
mod call;
mod place;
mod round;
#[cfg(test)]
mod tests;
