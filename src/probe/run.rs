//! Running a probe: its lines in order against one implementation, on a
//! fresh database, on a thread of its own with a time limit.

use super::line::{Probe, ProbeLine};
use super::reply::Reply;
use crate::job_store::JobStore;
use crate::operation::Operation;
use crate::race;
use serde::Serialize;
use std::io;
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

impl ProbeLine {
    /// Runs the line's call on `store` with the database `db`. The claims
    /// of `claim-many` queue behind another client's write lock and race
    /// when it is let go (see [`crate::race`]), so that a probe's verdict
    /// on a racing mutant is the same on every run.
    pub fn call(&self, store: &dyn JobStore, db: &Path) -> Reply {
        let call = || Reply::of(store.call(db, &self.operation));
        match &self.operation {
            Operation::ClaimMany { owners, .. } => {
                let racers = owners.len().min(crate::store::MAX_CLAIM_THREADS);
                race::behind_a_held_lock(db, racers, &race::Racers::of(store), call).unwrap_or_else(
                    |error| Reply::Crash {
                        message: format!("the probe could not queue the claims: {error}"),
                    },
                )
            }
            _ => call(),
        }
    }
}

/// One line's answer in a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LineRun {
    /// The line's number (0 for the implicit `init_db`).
    pub line: usize,
    /// What the call replied.
    pub answer: Reply,
    /// Whether the line's expectation accepted it.
    pub holds: bool,
}

/// A probe's run against one implementation: the lines in order, up to and
/// including the first that did not hold (a run stops there, since every
/// later answer would follow from a state the student did not predict).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProbeRun {
    /// The lines that ran.
    pub lines: Vec<LineRun>,
}

impl ProbeRun {
    /// The line that did not hold, if any.
    pub fn failure(&self) -> Option<&LineRun> {
        self.lines.iter().find(|line| !line.holds)
    }

    /// The reply of the line with this number, if it ran.
    pub fn answer(&self, line: usize) -> Option<&Reply> {
        self.lines
            .iter()
            .find(|run| run.line == line)
            .map(|run| &run.answer)
    }
}

/// Runs `probe` against `store` on a new database in a new folder under
/// `scratch`, on a thread of its own.
///
/// A panic in the store is the reply [`Reply::Crash`], and a probe still
/// running after `timeout` gets [`Reply::Timeout`] for the line it was on
/// (its thread is left behind, and so is its folder, which it may still use).
///
/// Errors: only when the folder or the thread cannot be made.
pub fn run(
    probe: &Probe,
    store: Arc<dyn JobStore>,
    scratch: &Path,
    timeout: Duration,
) -> io::Result<ProbeRun> {
    let folder = tempfile::Builder::new()
        .prefix("lease-lab-probe-")
        .tempdir_in(scratch)?;
    let db = folder.path().join("jobs.db");
    let lines = probe.lines.clone();
    let (sender, receiver) = mpsc::channel();
    thread::Builder::new()
        .name(format!("probe {}", probe.file_name))
        .spawn(move || {
            for line in &lines {
                let answer =
                    panic::catch_unwind(AssertUnwindSafe(|| line.call(store.as_ref(), &db)))
                        .unwrap_or_else(|payload| Reply::of_panic(payload.as_ref()));
                let holds = line.expectation.holds(&answer);
                let sent = sender.send(LineRun {
                    line: line.number,
                    answer,
                    holds,
                });
                if sent.is_err() || !holds {
                    return;
                }
            }
        })?;
    let deadline = Instant::now() + timeout;
    let mut runs: Vec<LineRun> = Vec::new();
    loop {
        match receiver.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(line) => runs.push(line),
            Err(RecvTimeoutError::Disconnected) => break,
            Err(RecvTimeoutError::Timeout) => {
                runs.push(LineRun {
                    line: probe.lines[runs.len()].number,
                    answer: Reply::Timeout {
                        limit_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
                    },
                    holds: false,
                });
                let _ = folder.keep();
                break;
            }
        }
    }
    Ok(ProbeRun { lines: runs })
}
