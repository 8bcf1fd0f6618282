//! One call on a worker's process: killed in flight when the run says so,
//! its outcome unknown when its process died or its server crashed under it.

use crate::chaos::history::Returned;
use crate::error::{ErrorKind, StoreError};
use crate::external::ExternalStore;
use crate::job_store::JobStore;
use crate::operation::Operation;
use std::path::Path;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// What a worker's process answered: the outcome and the call's interval.
pub(super) struct Done {
    pub(super) worker: usize,
    pub(super) operation: Operation,
    pub(super) began: u64,
    pub(super) ended: Option<u64>,
    pub(super) returned: Returned,
    /// The outcome is unknown because the server crashed under the call,
    /// not because the worker died: it lives on, remembering its leases.
    pub(super) cut_off: bool,
}

/// One call on a worker's process, killed `kill_after` it was sent when
/// asked: its outcome is then unknown unless the answer came first. In the
/// round the server crashes in (`crashing`), a call that failed (but for a
/// refused argument) lost its connection: its outcome is unknown too.
pub(super) fn call(
    worker: usize,
    store: &Arc<ExternalStore>,
    db: &Path,
    operation: Operation,
    kill_after: Option<Duration>,
    crashing: bool,
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
    let mut cut_off = false;
    let (ended, returned) = match answer {
        Ok(answer) => (Some(nanos(ended)), Returned::Answer(answer)),
        // The process ended before answering: killed by the run, or it
        // crashed; either way the call may or may not have landed.
        Err(StoreError::Fault(_)) => (None, Returned::Unknown),
        // The server went down under the call: it may have committed
        // before the connection broke, or not.
        Err(error) if crashing && error.kind() != ErrorKind::InvalidArgument => {
            cut_off = true;
            (None, Returned::Unknown)
        }
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
        cut_off,
    }
}

/// Sends SIGKILL to `pid`.
pub(super) fn kill(pid: u32) {
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: kill(2) takes any pid and signal number and has no
        // memory effects; a pid that has gone away gives ESRCH.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
}
