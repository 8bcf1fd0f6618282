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
use crate::frame::{Frame, Raised};
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
        let session = self.session()?;
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
        let value = session.ask(request)?;
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
mod tests {
    use super::*;
    use crate::error::Faulted;

    /// A store of a shell script that greets, then does what `script` says
    /// with each request line (`$line`).
    fn scripted(script: &str, limit: Duration) -> ExternalStore {
        let program = format!(
            "echo '{{\"protocol\":\"lease-lab\",\"version\":1,\"name\":\"script\"}}'; while read line; do {script}; done"
        );
        ExternalStore::new(
            ImplCommand {
                argv: vec!["sh".into(), "-c".into(), program],
                dir: None,
                env: Vec::new(),
            },
            limit,
        )
    }

    fn fault_of(store: &ExternalStore, operation: &Operation) -> ImplementationFault {
        store
            .ask(Path::new("x.db"), operation)
            .expect_err("the call faults")
    }

    /// A fault reaches the caller of `call` as a value: its message, and
    /// how long the call waited when the program hung.
    #[test]
    fn a_call_returns_the_programs_fault_as_an_error() {
        let store = scripted("echo not json", Duration::from_secs(5));
        match store.call(Path::new("x.db"), &enqueue()) {
            Err(StoreError::Fault(Faulted { message, hang })) => {
                assert!(message.contains("not json"), "{message}");
                assert_eq!(hang, None);
            }
            other => panic!("the call returns the fault, but it answered {other:?}"),
        }
        let silent = scripted("sleep 5", Duration::from_millis(200));
        match silent.call(Path::new("x.db"), &enqueue()) {
            Err(StoreError::Fault(Faulted { hang, .. })) => {
                assert_eq!(hang, Some(Duration::from_millis(200)));
            }
            other => panic!("the call returns the hang, but it answered {other:?}"),
        }
        silent.abandon();
    }

    fn enqueue() -> Operation {
        Operation::Enqueue { job_id: "j".into() }
    }

    #[test]
    fn answers_and_errors_come_back_as_the_store_s() {
        let store = scripted(
            r#"case "$line" in *enqueue*) echo '{"ok": true}';; *) echo '{"error": "invalid-argument", "message": "ttl must be above 0"}';; esac"#,
            Duration::from_secs(5),
        );
        assert!(store.enqueue(Path::new("x.db"), "j").unwrap());
        let error = store
            .claim(Path::new("x.db"), "j", "A", 1.0, 0.0)
            .unwrap_err();
        assert!(
            matches!(error, StoreError::InvalidArgument(message) if message == "ttl must be above 0")
        );
        assert_eq!(store.name().unwrap(), "script");
        assert!(!store.in_this_process());
    }

    #[test]
    fn every_way_of_breaking_the_protocol_is_a_fault_that_says_which() {
        let limit = Duration::from_millis(500);
        /// A script, the fault it must give, and words of its message.
        type Case<'a> = (&'a str, fn(&FaultKind) -> bool, &'a str);
        let cases: [Case; 5] = [
            (
                "echo 'not json'",
                |k| matches!(k, FaultKind::NotJson(_)),
                "not JSON: `not json`",
            ),
            (
                r#"echo '{"answer": 1}'"#,
                |k| matches!(k, FaultKind::WrongShape(_)),
                "is neither",
            ),
            (
                r#"echo '{"ok": "yes"}'"#,
                |k| matches!(k, FaultKind::WrongType { .. }),
                "enqueue answers expected true or false",
            ),
            (
                "sleep 5",
                |k| matches!(k, FaultKind::Hang(..)),
                "gave no answer within 500 ms",
            ),
            (
                "echo 'dying' >&2; exit 3",
                |k| matches!(k, FaultKind::Exited(_)),
                "exited with code 3 in the middle of the run",
            ),
        ];
        for (script, is_kind, says) in &cases {
            let store = scripted(script, limit);
            let fault = fault_of(&store, &enqueue());
            assert!(is_kind(&fault.kind), "{script}: {fault}");
            assert!(fault.to_string().contains(says), "{script}: {fault}");
            assert_eq!(
                fault.request.as_deref(),
                Some(r#"{"op":"enqueue","job_id":"j","path":"x.db"}"#),
                "{script}"
            );
        }
        let dying = fault_of(&scripted("echo 'dying' >&2; exit 3", limit), &enqueue());
        assert_eq!(dying.stderr, ["dying"], "{dying}");
    }

    /// What the program writes on standard error between the opening and
    /// the closing of a window is the window's, even across a restart; the
    /// lines before it are not.
    #[test]
    fn a_window_holds_what_the_program_wrote_on_standard_error_meanwhile() {
        let store = scripted(
            r#"case "$line" in *state*) echo "dying" >&2; exit 1;; *) echo "trace $line" >&2; echo '{"ok": true}';; esac"#,
            Duration::from_secs(5),
        );
        let db = Path::new("x.db");
        assert!(store.enqueue(db, "before").unwrap());
        store.open_stderr_window();
        assert!(store.enqueue(db, "during").unwrap());
        assert!(store.state(db, "j").is_err(), "it ends");
        assert!(store.enqueue(db, "again").unwrap(), "it starts again");
        let window = store.close_stderr_window(5);
        let during: Vec<&str> = window.last.iter().map(String::as_str).collect();
        assert_eq!(during.len(), 3, "{during:?}");
        assert!(during[0].contains(r#""job_id":"during""#), "{during:?}");
        assert_eq!(during[1], "dying");
        assert!(during[2].contains(r#""job_id":"again""#), "{during:?}");
        assert_eq!(window.earlier, 0);
        assert_eq!(
            store.close_stderr_window(5),
            StderrWindow::default(),
            "closed"
        );
        store.open_stderr_window();
        assert_eq!(
            store.close_stderr_window(5),
            StderrWindow::default(),
            "nothing written"
        );
    }

    #[test]
    fn a_line_that_answers_no_request_is_stray_output() {
        // A print after an answer is heard by the next call.
        let chatty = scripted(
            r#"echo '{"ok": true}'; echo 'done!'"#,
            Duration::from_secs(5),
        );
        assert!(chatty.enqueue(Path::new("x.db"), "j").unwrap());
        std::thread::sleep(Duration::from_millis(200));
        let fault = fault_of(&chatty, &enqueue());
        assert_eq!(fault.kind, FaultKind::NotJson("done!".into()), "{fault}");
        // An answer with an id no request has.
        let program = r#"echo '{"protocol":"lease-lab","version":1,"concurrent":true}'; while read line; do echo '{"id": 999, "ok": true}'; done"#;
        let wrong_id = ExternalStore::new(
            ImplCommand {
                argv: vec!["sh".into(), "-c".into(), program.into()],
                dir: None,
                env: Vec::new(),
            },
            Duration::from_secs(5),
        );
        let fault = fault_of(&wrong_id, &enqueue());
        assert_eq!(
            fault.kind,
            FaultKind::Stray(r#"{"id": 999, "ok": true}"#.into()),
            "{fault}"
        );
        assert!(
            fault.to_string().contains("print traces on standard error"),
            "{fault}"
        );
    }

    #[test]
    fn a_wrong_greeting_or_program_is_said_plainly() {
        let wrong = ExternalStore::new(
            ImplCommand {
                argv: vec!["sh".into(), "-c".into(), "echo hello; sleep 5".into()],
                dir: None,
                env: Vec::new(),
            },
            Duration::from_secs(5),
        );
        let fault = wrong.name().unwrap_err();
        assert_eq!(fault.kind, FaultKind::WrongGreeting("hello".into()));
        assert!(
            fault.to_string().contains("is it the right program?"),
            "{fault}"
        );
        let missing = ExternalStore::new(
            ImplCommand::parse("/no/such/program --flag").unwrap(),
            Duration::from_secs(1),
        );
        let fault = missing.name().unwrap_err();
        assert!(matches!(fault.kind, FaultKind::NotStarted(_)), "{fault}");
        assert!(
            fault
                .to_string()
                .starts_with("/no/such/program --flag could not be started"),
            "{fault}"
        );
    }

    /// A line after the last answer is told once, as a fault of the test
    /// that ran meanwhile, and the program starts again for the next.
    #[test]
    fn a_fault_between_calls_is_taken_once_and_ends_the_run() {
        let store = scripted(
            r#"echo '{"ok": true}'; echo 'done!'"#,
            Duration::from_secs(5),
        );
        assert_eq!(store.fault_between_calls(), None, "not started");
        assert!(store.enqueue(Path::new("x.db"), "j").unwrap());
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let fault = loop {
            if let Some(fault) = store.fault_between_calls() {
                break fault;
            }
            assert!(std::time::Instant::now() < deadline, "the line never came");
            std::thread::sleep(Duration::from_millis(5));
        };
        assert!(fault.message.contains("done!"), "{}", fault.message);
        assert_eq!(store.fault_between_calls(), None, "told once");
        assert!(store.program_pid().is_none(), "the run ended");
        assert!(
            store.enqueue(Path::new("x.db"), "j").unwrap(),
            "a new run answers"
        );
        assert!(store.program_pid().is_some());
    }

    #[test]
    fn after_a_fault_the_next_call_starts_the_program_again() {
        let store = scripted(
            r#"case "$line" in *state*) exit 1;; *) echo '{"ok": true}';; esac"#,
            Duration::from_secs(5),
        );
        let fault = fault_of(&store, &Operation::State { job_id: "j".into() });
        assert!(matches!(fault.kind, FaultKind::Exited(_)), "{fault}");
        assert!(
            store.enqueue(Path::new("x.db"), "j").unwrap(),
            "a new process answers"
        );
    }

    #[test]
    fn a_command_line_is_read_as_a_shell_would() {
        let command = ImplCommand::parse(r#"python3 "my store.py" --fast"#).unwrap();
        assert_eq!(command.argv, ["python3", "my store.py", "--fast"]);
        assert_eq!(command.display(), "python3 'my store.py' --fast");
        assert!(ImplCommand::parse("  ").is_err());
        assert!(ImplCommand::parse("python3 'open").is_err());
    }

    #[test]
    fn only_the_protocol_s_greeting_is_one() {
        assert_eq!(
            read_greeting(
                r#"{"protocol": "lease-lab", "version": 1, "name": "mine", "concurrent": true}"#
            ),
            Some(("mine".into(), true))
        );
        assert_eq!(
            read_greeting(r#"{"protocol": "lease-lab", "version": 1}"#),
            Some((String::new(), false))
        );
        assert_eq!(
            read_greeting(r#"{"protocol": "lease-lab", "version": 2}"#),
            None
        );
        assert_eq!(
            read_greeting(r#"{"protocol": "other", "version": 1}"#),
            None
        );
        assert_eq!(
            read_greeting(r#"{"protocol": "lease-lab", "version": 1, "concurrent": "yes"}"#),
            None
        );
        assert_eq!(read_greeting("hello"), None);
    }

    #[test]
    fn a_thread_s_busy_timeout_goes_with_its_requests() {
        let store = scripted(
            r#"case "$line" in *'"busy_timeout_ms":50'*) echo '{"ok": true}';; *) echo '{"ok": false}';; esac"#,
            Duration::from_secs(5),
        );
        assert!(!store.enqueue(Path::new("x.db"), "j").unwrap());
        store.set_thread_busy_timeout(Some(Duration::from_millis(50)));
        assert!(store.enqueue(Path::new("x.db"), "j").unwrap());
        store.set_thread_busy_timeout(None);
        assert!(!store.enqueue(Path::new("x.db"), "j").unwrap());
    }

    #[test]
    fn abandoning_a_program_ends_the_call_that_waits_on_it() {
        let store = std::sync::Arc::new(scripted("sleep 100", Duration::from_secs(20)));
        let waiting = std::sync::Arc::clone(&store);
        let call = std::thread::spawn(move || fault_of(&waiting, &enqueue()));
        // Abandon only once the call waits on the program: before, there
        // would be nothing to stop, however slow the machine is to start it.
        let waits = || {
            let session = store.session.lock().unwrap().clone();
            session.is_some_and(|session| !session.waiting.lock().unwrap().is_empty())
        };
        while !waits() {
            assert!(!call.is_finished(), "the call ended before it waited");
            std::thread::sleep(Duration::from_millis(10));
        }
        store.abandon();
        let fault = call.join().unwrap();
        assert!(
            matches!(&fault.kind, FaultKind::Exited(how) if how.starts_with("was stopped by the lab")),
            "the call ends when the program is stopped, not at its limit: {fault}"
        );
    }

    #[test]
    fn an_id_from_a_program_that_is_not_concurrent_answers_no_request() {
        // Its requests carry no id, so an answer with one (even the id the
        // lab numbered the call with inside) is not an answer to them.
        let store = scripted(r#"echo '{"id": 1, "ok": true}'"#, Duration::from_secs(5));
        let fault = fault_of(&store, &enqueue());
        assert_eq!(
            fault.kind,
            FaultKind::Stray(r#"{"id": 1, "ok": true}"#.into()),
            "{fault}"
        );
    }

    #[test]
    fn an_answer_without_an_id_from_a_concurrent_program_answers_no_request() {
        let program = r#"echo '{"protocol":"lease-lab","version":1,"concurrent":true}'; while read line; do echo '{"ok": true}'; done"#;
        let store = ExternalStore::new(
            ImplCommand {
                argv: vec!["sh".into(), "-c".into(), program.into()],
                dir: None,
                env: Vec::new(),
            },
            Duration::from_secs(5),
        );
        let fault = fault_of(&store, &enqueue());
        assert_eq!(
            fault.kind,
            FaultKind::Stray(r#"{"ok": true}"#.into()),
            "{fault}"
        );
    }

    #[test]
    fn a_program_that_is_not_concurrent_gets_one_request_at_a_time() {
        // Its answers carry no id: two requests in flight could not be told
        // apart, so calls from several threads wait their turn.
        let store = std::sync::Arc::new(scripted(
            r#"sleep 0.2; echo '{"ok": true}'"#,
            Duration::from_secs(10),
        ));
        let calls: Vec<_> = (0..2)
            .map(|_| {
                let store = std::sync::Arc::clone(&store);
                std::thread::spawn(move || store.enqueue(Path::new("x.db"), "j").unwrap())
            })
            .collect();
        for call in calls {
            assert!(call.join().expect("no fault: each call got its own answer"));
        }
    }
}
