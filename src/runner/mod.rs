//! Runs the contract suite against variants: every test on its own fresh
//! database, each variant in a worker process of its own, several at once.
//!
//! A worker is the `lab` binary itself started with a hidden subcommand, so
//! nothing is built at run time. Inside the worker each test runs on a
//! thread with a time limit and its panics caught; a test that outlives its
//! limit is reported as a timeout and left behind, and the worker exits when
//! its tests are done. A variant that aborts the whole process (a stack
//! overflow, say) takes down only its worker: the test that was running is
//! reported as a crash and a new worker carries on with the rest.
//!
//! In three parts: `case`, one test on its own thread and the lanes of
//! this process; `protocol`, both sides of the worker process's JSON lines;
//! `schedule`, which variants run and how many workers at once. Their items
//! are this module's.

mod case;
mod protocol;
mod schedule;

pub use case::*;
pub use protocol::*;
pub use schedule::*;

use crate::outcome::{Outcome, TestRun};
use crate::variant::Variant;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::Duration;

/// The longest one test (or one probe) may run, unless told otherwise,
/// before it counts as a timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// How many workers run at once unless told otherwise: four per core,
/// since many tests wait (for a lock another client holds, for racing
/// claims to queue up) while others work.
pub fn default_jobs() -> usize {
    4 * thread::available_parallelism().map_or(2, usize::from)
}

/// How a run is carried out.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The longest one test may take before it counts as a timeout.
    pub timeout: Duration,
    /// Where the tests' temporary databases go.
    pub scratch: PathBuf,
    /// How many workers run at once.
    pub jobs: usize,
    /// After this many tests of one variant run out of time, the rest are
    /// not run but reported as crashes that say why: an implementation
    /// that hangs at every call would otherwise cost the time limit once
    /// per test. `None`: every test runs (the kill matrix needs them all).
    pub give_up_after_timeouts: Option<usize>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            timeout: DEFAULT_TIMEOUT,
            scratch: default_scratch(),
            jobs: default_jobs(),
            give_up_after_timeouts: None,
        }
    }
}

/// The folder for the tests' throwaway databases: `LEASE_LAB_SCRATCH` if set,
/// else the memory-backed `/dev/shm` where there is one (a suite run makes
/// thousands of small databases, and their durability is not what is being
/// tested), else the system's temporary folder.
pub fn default_scratch() -> PathBuf {
    if let Some(folder) = std::env::var_os("LEASE_LAB_SCRATCH") {
        return PathBuf::from(folder);
    }
    let shm = Path::new("/dev/shm");
    // A folder can be made in it only if it is a folder we may write to.
    if tempfile::tempdir_in(shm).is_ok() {
        return shm.to_path_buf();
    }
    std::env::temp_dir()
}

/// The outcomes of the suite's tests against one variant, in suite order.
#[derive(Debug, Clone)]
pub struct VariantRun {
    /// The variant.
    pub variant: Variant,
    /// One run per test asked for.
    pub runs: Vec<TestRun>,
}

impl VariantRun {
    /// The outcome of the test with this name, if it ran (or was not
    /// covered, and has the reference's: see [`TestRun::not_covered`]).
    pub fn outcome(&self, test: &str) -> Option<&Outcome> {
        self.test_run(test).map(|run| &run.outcome)
    }

    /// The run of the test with this name, if any.
    pub fn test_run(&self, test: &str) -> Option<&TestRun> {
        self.runs.iter().find(|run| run.test == test)
    }

    /// How many of its tests were not run because they cannot run the
    /// mutant's change.
    pub fn not_covered(&self) -> usize {
        self.runs.iter().filter(|run| run.not_covered).count()
    }
}

#[cfg(test)]
mod tests;
