//! One call on a worker's process: killed in flight when the run says so,
//! its outcome unknown when its process died or its server crashed under it.

use crate::chaos::history::Returned;
use crate::error::{ErrorKind, StoreError};
use crate::external::ExternalStore;
use crate::job_store::JobStore;
use crate::operation::Operation;
use crate::pg_server::Hosts;
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
    /// or its link was cut, not because the worker died: it lives on,
    /// remembering its leases.
    pub(super) cut_off: bool,
    /// Its worker's link was cut during the call, and stays cut.
    pub(super) partitioned: bool,
}

/// What every call of a round shares: the path the calls name, the hosts
/// (when the workers are on hosts of their own), whether the server
/// crashes during the round, and the run's start (the intervals' zero).
#[derive(Clone, Copy)]
pub(super) struct Round<'r> {
    pub(super) db: &'r Path,
    pub(super) hosts: Option<&'r Hosts>,
    pub(super) crashing: bool,
    pub(super) started: Instant,
}

/// What befalls a call in flight, some time after it was sent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Interrupt {
    /// Its worker's process is killed.
    Kill(Duration),
    /// Its worker's link to the server is cut (and left cut).
    Cut(Duration),
}

/// One call on a worker's process, interrupted as asked: killed, its
/// outcome is unknown unless the answer came first; its link cut, or in
/// the round the server crashes in (`crashing`), a call that failed (but
/// for a refused argument) lost its connection, and its outcome is unknown
/// too.
pub(super) fn call(
    worker: usize,
    store: &Arc<ExternalStore>,
    operation: Operation,
    interrupt: Option<Interrupt>,
    round: &Round,
) -> Done {
    let Round {
        db,
        hosts,
        crashing,
        started,
    } = *round;
    let kill_after = match interrupt {
        Some(Interrupt::Kill(delay)) => Some(delay),
        _ => None,
    };
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
    let (answer, link_cut) = thread::scope(|scope| {
        let cutter = match (interrupt, hosts) {
            (Some(Interrupt::Cut(delay)), Some(hosts)) => Some(scope.spawn(move || {
                thread::sleep(delay);
                hosts.cut(worker)
            })),
            _ => None,
        };
        let answer = store.call(db, &operation);
        (answer, cutter.map(|cutter| cutter.join()))
    });
    let ended = Instant::now();
    let killed = killer.map(|killer| killer.join().is_ok()).unwrap_or(false);
    let partitioned = matches!(link_cut, Some(Ok(Ok(()))));
    let crashing = crashing || partitioned;
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
        partitioned,
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
