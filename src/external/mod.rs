//! An implementation of the store in another program, in any language,
//! driven over the lab's protocol (`labs/protocol.md`): one long-lived
//! process, one JSON request a line on its standard input, one answer a
//! line on its standard output.
//!
//! [`ExternalStore`] is a [`JobStore`], so every test of the suite runs
//! against such a program unchanged. It never trusts the program: a crash,
//! an exit, a hang, a line that is not an answer, an answer of the wrong
//! type, stray output or a wrong greeting is an [`ImplementationFault`],
//! which the call returns as [`StoreError::Fault`] (the test's verdict says
//! what happened), and the next call starts the program again.

pub use crate::fault::{FaultKind, ImplementationFault};

mod error_answer;
mod launch;
mod session;
mod spares;

use crate::child_process::{Mark, StderrWindow};
use crate::error::{ErrorKind, Result, StoreError};
use crate::frame::{Frame, Raised, Unanswered};
use crate::job_store::JobStore;
use crate::operation::{Answer, Operation};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use session::{Arrived, Session};
pub use spares::Spares;
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// The protocol's name and version, as the greeting gives them.
pub const PROTOCOL: &str = "lease-lab";
/// See [`PROTOCOL`].
pub const VERSION: u64 = 1;

thread_local! {
    static THREAD_BUSY_TIMEOUT: Cell<Option<Duration>> = const { Cell::new(None) };
}

/// How to start an implementation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImplCommand {
    /// The program and its arguments.
    pub argv: Vec<String>,
    /// The folder to start it in, if not the lab's own.
    pub dir: Option<PathBuf>,
    /// Variables set in its environment besides the lab's own: how a
    /// server's connection string, password and all, reaches a worker
    /// without showing on its command line.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<(String, String)>,
}

/// What `--impl` names cannot run: an empty or unbalanced command line, a
/// folder without `Cargo.toml`. The message says what to give instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidImpl(pub String);

impl ImplCommand {
    /// A command line as a person types it (`python3 my_store.py`, with
    /// quotes for arguments that hold spaces).
    ///
    /// Errors: an empty line, or unbalanced quotes.
    pub fn parse(line: &str) -> std::result::Result<ImplCommand, InvalidImpl> {
        let argv = shell_words::split(line).map_err(|error| {
            InvalidImpl(format!("cannot read the command line {line:?}: {error}"))
        })?;
        if argv.is_empty() {
            return Err(InvalidImpl(
                "the command line is empty: name the program that runs your store".into(),
            ));
        }
        Ok(ImplCommand {
            argv,
            dir: None,
            env: Vec::new(),
        })
    }

    /// The command line, for messages.
    pub fn display(&self) -> String {
        shell_words::join(&self.argv)
    }
}

/// A run of the program within a window on its standard error, with the
/// mark the window opened at (`None`: the run started within the window).
type WindowRun = (Arc<Session>, Option<Mark>);

/// The store of a program that speaks the lab's protocol.
pub struct ExternalStore {
    command: ImplCommand,
    /// The longest a call waits for its answer.
    limit: Duration,
    session: Mutex<Option<Arc<Session>>>,
    /// The runs of the program since the window on its standard error
    /// opened, each with the mark it was opened at (`None`: the run started
    /// within the window); `None` while no window is open.
    window: Mutex<Option<Vec<WindowRun>>>,
    /// The errors with frames answered since the window opened.
    raised: Mutex<Vec<Raised>>,
    /// The first call left unanswered since the window opened.
    unanswered: Mutex<Option<Unanswered>>,
    /// What must outlive the store: the folder of the files the program
    /// runs from (a mutated copy of a store), when it has one.
    _kept: Option<Arc<dyn std::any::Any + Send + Sync>>,
    /// Runs of its command started ahead, which a start takes first.
    spares: Option<Arc<Spares>>,
}

impl ExternalStore {
    /// The implementation `command` runs; each call waits at most `limit`
    /// for its answer. The program starts at the first call.
    pub fn new(command: ImplCommand, limit: Duration) -> ExternalStore {
        ExternalStore {
            command,
            limit,
            session: Mutex::new(None),
            window: Mutex::new(None),
            raised: Mutex::new(Vec::new()),
            unanswered: Mutex::new(None),
            _kept: None,
            spares: None,
        }
    }

    /// The same store, keeping `files` (the folder the program runs from)
    /// for as long as the store lives, so that a store opened from a
    /// variant runs even after the variant is gone.
    pub fn keeping(self, files: Arc<dyn std::any::Any + Send + Sync>) -> ExternalStore {
        ExternalStore {
            _kept: Some(files),
            ..self
        }
    }

    /// The name the program gives itself in its greeting, starting it if
    /// it is not running.
    ///
    /// Errors: the fault that kept it from greeting.
    pub fn name(&self) -> std::result::Result<String, ImplementationFault> {
        Ok(self.session()?.name.clone())
    }

    /// The running session, or a new one when there is none or the last
    /// one broke.
    fn session(&self) -> std::result::Result<Arc<Session>, ImplementationFault> {
        let mut current = self.session.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(session) = current.as_ref().filter(|session| !session.broken()) {
            return Ok(Arc::clone(session));
        }
        let spare = self.spares.as_ref().and_then(Spares::take);
        let session = match spare {
            Some(session) => Arc::new(session),
            None => Arc::new(Session::start(&self.command, self.limit)?),
        };
        *current = Some(Arc::clone(&session));
        if let Some(window) = self
            .window
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_mut()
        {
            window.push((Arc::clone(&session), None));
        }
        Ok(session)
    }

    /// Sends `operation` on `db` and waits for its answer.
    fn ask(
        &self,
        db: &Path,
        operation: &Operation,
    ) -> std::result::Result<Result<Answer>, ImplementationFault> {
        let session = self
            .session()
            .inspect_err(|fault| self.note_unanswered(operation, fault))?;
        let mut request = serde_json::to_value(operation).expect("an operation is JSON");
        request["path"] = json!(db.to_string_lossy());
        if let Some(timeout) = THREAD_BUSY_TIMEOUT.with(Cell::get) {
            request["busy_timeout_ms"] = json!(timeout.as_millis());
        }
        let sent = request.to_string();
        // The wait a busy answer reports when it gives none: the one asked
        // for, else the one the program inherits (the default, or the
        // environment's).
        let asked = THREAD_BUSY_TIMEOUT
            .with(Cell::get)
            .unwrap_or_else(crate::store::busy_timeout);
        let value = session
            .ask(request)
            .inspect_err(|fault| self.note_unanswered(operation, fault))?;
        let answer =
            decode(operation, &value, db, asked).map_err(|kind| session.fail(kind, Some(sent)))?;
        let frames = Frame::from_answer(&value);
        if let (Err(error), false) = (&answer, frames.is_empty()) {
            let raised = Raised {
                error: crate::suite::error_text(error),
                frames: frames.into_iter().map(Frame::with_code).collect(),
            };
            self.raised
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(raised);
        }
        Ok(answer)
    }
}

impl ExternalStore {
    /// Notes the first call left unanswered by `fault` since the window
    /// opened: the operation, whether it hung, and where.
    fn note_unanswered(&self, operation: &Operation, fault: &ImplementationFault) {
        let hung_in = match &fault.kind {
            FaultKind::Hang(_, frames) => frames.clone(),
            _ => Vec::new(),
        };
        self.unanswered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_or_insert(Unanswered {
                operation: operation.name().to_string(),
                hung: fault.hang().is_some(),
                waited_ms: fault
                    .hang()
                    .map(|waited| u64::try_from(waited.as_millis()).unwrap_or(u64::MAX)),
                hung_in,
            });
    }
}

impl JobStore for ExternalStore {
    /// The program's answer. A fault of the program (see the module's
    /// documentation) is [`StoreError::Fault`].
    fn call(&self, db: &Path, operation: &Operation) -> Result<Answer> {
        self.ask(db, operation)
            .unwrap_or_else(|fault| Err(StoreError::from(fault)))
    }

    fn in_this_process(&self) -> bool {
        false
    }

    /// The fault is the session's end: the next call starts the program
    /// again, as after a fault a call meets.
    fn fault_between_calls(&self) -> Option<crate::error::Faulted> {
        let session = self
            .session
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .filter(|session| !session.broken())?;
        let kind = session
            .unheard
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()?;
        match StoreError::from(session.fail(kind, None)) {
            StoreError::Fault(faulted) => Some(faulted),
            _ => None,
        }
    }

    /// The running program's, if it runs and has not broken.
    fn program_pid(&self) -> Option<u32> {
        let session = self
            .session
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()?;
        if session.broken() {
            return None;
        }
        let pid = session
            .child
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .program_id();
        Some(pid)
    }

    /// The requests this thread sends from now on carry
    /// `"busy_timeout_ms"`, which a program may honour (the Python store
    /// does) and is free to ignore.
    fn set_thread_busy_timeout(&self, timeout: Option<Duration>) {
        THREAD_BUSY_TIMEOUT.with(|cell| cell.set(timeout));
    }

    /// The window starts at a mark in the running program's standard
    /// error; a program started later is in it from its start.
    fn open_stderr_window(&self) {
        let running = self
            .session
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let opened = running
            .and_then(|session| {
                let mark = session
                    .child
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .mark_stderr()?;
                Some(vec![(session, Some(mark))])
            })
            .unwrap_or_default();
        *self.window.lock().unwrap_or_else(PoisonError::into_inner) = Some(opened);
        self.raised
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        *self
            .unanswered
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = None;
    }

    fn take_unanswered(&self) -> Option<Unanswered> {
        self.unanswered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// Every run of the program within the window, in order, up to a mark
    /// written now: what each wrote before its answers came is in it.
    fn close_stderr_window(&self, at_most: usize) -> StderrWindow {
        let runs = self
            .window
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
            .unwrap_or_default();
        runs.into_iter()
            .fold(StderrWindow::default(), |seen, (session, from)| {
                let mut child = session.child.lock().unwrap_or_else(PoisonError::into_inner);
                let dumped_at = session
                    .dumped_at
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .take();
                match dumped_at.or_else(|| child.mark_stderr()) {
                    Some(to) => seen.then(child.stderr_window(from, to, at_most), at_most),
                    None => seen,
                }
            })
    }

    fn take_raised(&self) -> Vec<Raised> {
        std::mem::take(&mut *self.raised.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Stops the program: a call left waiting on it gets a fault, and the
    /// next call starts the program again.
    fn abandon(&self) {
        let session = self
            .session
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(session) = session {
            // The waiting calls are told first, then the program stopped:
            // stopped first, its end could reach them as a crash (killed by
            // a signal) before they heard that the lab stopped it; and a
            // process the program started may hold its output open, so the
            // end of the output may never come at all.
            let waiting: Vec<Sender<Arrived>> = session
                .waiting
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .drain()
                .map(|(_, call)| call)
                .collect();
            for call in waiting {
                let _ = call.send(Err(FaultKind::Exited(
                    "was stopped by the lab (the test ran out of time)".into(),
                )));
            }
            session
                .child
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .kill();
        }
    }
}

/// The name and whether requests may overlap, from a greeting line; `None`
/// when the line is not the protocol's greeting.
fn read_greeting(line: &str) -> Option<(String, bool)> {
    let greeting: Value = serde_json::from_str(line).ok()?;
    if greeting.get("protocol")? != PROTOCOL || greeting.get("version")?.as_u64()? != VERSION {
        return None;
    }
    let name = greeting
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let concurrent = match greeting.get("concurrent") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(flag)) => *flag,
        Some(_) => return None,
    };
    Some((name, concurrent))
}

/// The answer line `value` to `operation` on the database `db`, as the
/// store's answer or error (see [`error_answer::reported`]; `asked` is the
/// wait a `busy` answer without `waited_ms` reports); `Err` when it is no
/// answer to it.
fn decode(
    operation: &Operation,
    value: &Value,
    db: &Path,
    asked: Duration,
) -> std::result::Result<Result<Answer>, FaultKind> {
    let line = || {
        let mut value = value.clone();
        if let Some(object) = value.as_object_mut() {
            object.remove("id");
        }
        value.to_string()
    };
    if let Some(ok) = value.get("ok") {
        return match Answer::from_json(operation.answers(), ok) {
            Ok(answer) => Ok(Ok(answer)),
            Err(expected) => Err(FaultKind::WrongType {
                line: line(),
                expected: format!("{} answers {expected}", operation.name()),
            }),
        };
    }
    let kind = value
        .get("error")
        .and_then(Value::as_str)
        .and_then(ErrorKind::from_name);
    let message = value.get("message").and_then(Value::as_str);
    let waited = value
        .get("waited_ms")
        .and_then(Value::as_u64)
        .map_or(asked, Duration::from_millis);
    match (kind, message) {
        (Some(kind), Some(message)) => Ok(Err(error_answer::reported(kind, message, waited, db))),
        _ => Err(FaultKind::WrongShape(line())),
    }
}

#[cfg(test)]
mod tests;
