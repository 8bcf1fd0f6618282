//! What an implementation in another program can do wrong, besides
//! answering wrongly: end, hang, or break the protocol.
//!
//! A fault is not an answer to the call: [`ExternalStore`] returns it as
//! [`StoreError::Fault`] (its message, and how long the call waited when
//! the program hung), and whoever runs the test (the lab's runner, a
//! probe) turns it into the test's verdict: a timeout for a hang, a crash
//! otherwise, with the message below. A command that drives a program
//! reports it as its failure.
//!
//! [`ExternalStore`]: crate::external::ExternalStore
//! [`StoreError::Fault`]: crate::error::StoreError::Fault

use crate::error::{Faulted, Result, StoreError};
use crate::job_store::JobStore;
use crate::operation::{Answer, Operation, NAMES};
use std::fmt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// What went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaultKind {
    /// The program could not be started.
    NotStarted(String),
    /// Its first line was not the protocol's greeting.
    WrongGreeting(String),
    /// It ended (how, in words).
    Exited(String),
    /// It gave no answer within the time limit; where its calls were then,
    /// as far as the lab could tell (see [`crate::frame::hung_in`]).
    Hang(Duration, Vec<crate::frame::Frame>),
    /// A line that is not a JSON object.
    NotJson(String),
    /// A JSON object that is not an answer (`{"ok": ..}` or `{"error": .., "message": ..}`).
    WrongShape(String),
    /// An answer whose value is not of the operation's kind.
    WrongType {
        /// The line.
        line: String,
        /// What the operation answers.
        expected: String,
    },
    /// A line that answers no request (a debugging print, an unknown id).
    Stray(String),
    /// Output past what the lab reads (how, in words): what it wrote is no
    /// longer read, and it is stopped.
    TooLarge(String),
}

/// How the lines of a program's standard error are indented in a fault's
/// message, under its first line.
pub const STDERR_INDENT: &str = "    ";

/// What introduces the lines of standard error in a fault's message, at
/// the end of its first line.
pub const STDERR_INTRO: &str = "; its standard error ended with:";

/// A fault of the implementation, with what the lab had asked and the last
/// lines the program wrote on standard error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImplementationFault {
    /// The implementation, as the lab names it (its command line).
    pub implementation: String,
    /// What went wrong.
    pub kind: FaultKind,
    /// The request being answered, if any, as sent.
    pub request: Option<String>,
    /// The last lines of its standard error, oldest first.
    pub stderr: Vec<String>,
}

impl ImplementationFault {
    /// Whether the fault is a hang (its verdict is a timeout).
    pub fn hang(&self) -> Option<Duration> {
        match self.kind {
            FaultKind::Hang(limit, _) => Some(limit),
            _ => None,
        }
    }
}

impl fmt::Display for ImplementationFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let who = &self.implementation;
        match &self.kind {
            FaultKind::NotStarted(why) => write!(f, "{who} could not be started: {why}")?,
            FaultKind::WrongGreeting(line) => write!(
                f,
                "{who} did not greet the lab with the protocol's first line ({{\"protocol\": \"lease-lab\", \"version\": 1, ...}}): it wrote `{line}`; is it the right program?"
            )?,
            FaultKind::Exited(how) => write!(f, "{who} {how}")?,
            FaultKind::Hang(limit, hung_in) => {
                write!(f, "{who} gave no answer within {}", seconds(*limit))?;
                let places: Vec<String> = hung_in.iter().map(ToString::to_string).collect();
                if !places.is_empty() {
                    write!(f, "; the call hung {}", places.join("; another "))?;
                }
            }
            FaultKind::NotJson(line) => write!(
                f,
                "{who} broke the protocol: a line that is not JSON: `{line}` (a debugging print? standard output carries only the protocol: print traces on standard error)"
            )?,
            FaultKind::WrongShape(line) => write!(
                f,
                "{who} broke the protocol: `{line}` is neither {{\"ok\": VALUE}} nor {{\"error\": KIND, \"message\": TEXT}}"
            )?,
            FaultKind::WrongType { line, expected } => write!(
                f,
                "{who} answered with a value of the wrong type: `{line}` ({expected})"
            )?,
            FaultKind::Stray(line) => write!(
                f,
                "{who} wrote a line that answers no request: `{line}` (print traces on standard error, not standard output)"
            )?,
            FaultKind::TooLarge(how) => write!(
                f,
                "{who} was stopped: output too large ({how}); the lab reads no more than that"
            )?,
        }
        match (&self.request, &self.kind) {
            // A line that is no answer may have been written before the
            // request was even read: it came while the lab waited.
            (Some(request), FaultKind::NotJson(_) | FaultKind::Stray(_)) => write!(
                f,
                "; it came while the lab waited for the answer to `{}`",
                spaced(request)
            )?,
            (Some(request), _) => write!(f, "; the request was `{}`", spaced(request))?,
            (None, _) => {}
        }
        // Each line of standard error on a line of its own, as written: a
        // traceback's caret stays under the column it points at.
        if !self.stderr.is_empty() {
            f.write_str(STDERR_INTRO)?;
            for line in &self.stderr {
                write!(f, "\n{STDERR_INDENT}{line}")?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for ImplementationFault {}

/// A duration as a person reads a time limit: `10 s`, `9.5 s`, `400 ms`.
pub fn seconds(duration: Duration) -> String {
    let millis = duration.as_millis();
    match millis {
        0..=999 => format!("{millis} ms"),
        _ if millis.is_multiple_of(1000) => format!("{} s", millis / 1000),
        _ => format!("{:.1} s", duration.as_secs_f64()),
    }
}

/// A request line with a space after each of its fields, so that a screen
/// can wrap it between fields rather than run it past its edge, and
/// without the `id` the lab numbered it with: the JSON stays as sent
/// otherwise. A line that is not a JSON object stays as it is.
fn spaced(request: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(request) {
        Ok(serde_json::Value::Object(fields)) => {
            let fields: Vec<String> = fields
                .iter()
                .filter(|(name, _)| *name != "id")
                .map(|(name, value)| format!("{}:{value}", serde_json::Value::from(name.as_str())))
                .collect();
            format!("{{{}}}", fields.join(", "))
        }
        _ => request.to_string(),
    }
}

/// A store that remembers the first fault of the program behind it, and
/// from then on answers every call with that fault at once, without asking
/// the program: once a program failed to answer, the test's verdict is the
/// fault's (see [`crate::runner::outcome_of_fault`]), and waiting on a
/// program that hung again for every later call would only slow it down.
///
/// It also notes which operations the test called (see
/// [`FaultRecorder::operations`]), for the kill matrix to skip the tests
/// that cannot run a mutant's change.
pub struct FaultRecorder<'a> {
    inner: &'a dyn JobStore,
    first: Mutex<Option<Faulted>>,
    /// Which operations were called, by step (`init_db` first).
    called: [AtomicBool; 8],
}

impl From<ImplementationFault> for StoreError {
    fn from(fault: ImplementationFault) -> StoreError {
        StoreError::Fault(Faulted {
            message: fault.to_string(),
            hang: fault.hang(),
        })
    }
}

impl<'a> FaultRecorder<'a> {
    /// Records the faults of `inner`.
    pub fn new(inner: &'a dyn JobStore) -> FaultRecorder<'a> {
        FaultRecorder {
            inner,
            first: Mutex::new(None),
            called: Default::default(),
        }
    }

    /// The operations called through the recorder so far, by name, each
    /// once, in [`NAMES`] order: every call counts, one that answered a
    /// fault too.
    pub fn operations(&self) -> Vec<String> {
        NAMES
            .iter()
            .zip(&self.called)
            .filter(|(_, called)| called.load(Ordering::Relaxed))
            .map(|(name, _)| name.to_string())
            .collect()
    }

    /// The first fault a call met, if any.
    pub fn first_fault(&self) -> Option<Faulted> {
        self.first
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl JobStore for FaultRecorder<'_> {
    fn call(&self, db: &Path, operation: &Operation) -> Result<Answer> {
        self.called[usize::from(operation.step()) - 1].store(true, Ordering::Relaxed);
        if let Some(fault) = self.first_fault() {
            return Err(StoreError::Fault(fault));
        }
        let answer = self.inner.call(db, operation);
        if let Err(StoreError::Fault(fault)) = &answer {
            self.first
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get_or_insert_with(|| fault.clone());
        }
        answer
    }

    fn set_thread_busy_timeout(&self, timeout: Option<Duration>) {
        self.inner.set_thread_busy_timeout(timeout);
    }

    fn stored_rows(&self, db: &Path) -> Option<std::result::Result<Vec<crate::job::Job>, String>> {
        self.inner.stored_rows(db)
    }

    fn store_row(
        &self,
        db: &Path,
        row: &crate::job::Job,
    ) -> Option<std::result::Result<(), String>> {
        self.inner.store_row(db, row)
    }

    fn plain_sql(&self, db: &Path, sql: &str) -> Option<std::result::Result<(), String>> {
        self.inner.plain_sql(db, sql)
    }

    fn hold_every_row(
        &self,
        db: &Path,
    ) -> Option<std::result::Result<Box<dyn crate::job_store::HeldLock>, String>> {
        self.inner.hold_every_row(db)
    }

    fn server_of_its_own(&self, db: &Path) -> Option<std::result::Result<(), String>> {
        self.inner.server_of_its_own(db)
    }

    fn crash_server(&self, db: &Path) -> Option<std::result::Result<(), String>> {
        self.inner.crash_server(db)
    }

    fn in_this_process(&self) -> bool {
        self.inner.in_this_process()
    }

    fn program_pid(&self) -> Option<u32> {
        self.inner.program_pid()
    }

    fn abandon(&self) {
        self.inner.abandon();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fault_quotes_the_line_the_request_and_standard_error() {
        let fault = ImplementationFault {
            implementation: "python3 mine.py".into(),
            kind: FaultKind::NotJson("hello".into()),
            request: Some(r#"{"op":"init_db","path":"x.db"}"#.into()),
            stderr: vec![
                "Traceback (most recent call last):".into(),
                "KeyError: 'x'".into(),
            ],
        };
        assert_eq!(
            fault.to_string(),
            r#"python3 mine.py broke the protocol: a line that is not JSON: `hello` (a debugging print? standard output carries only the protocol: print traces on standard error); it came while the lab waited for the answer to `{"op":"init_db", "path":"x.db"}`; its standard error ended with:
    Traceback (most recent call last):
    KeyError: 'x'"#
        );
        assert_eq!(fault.hang(), None);
        let hang = ImplementationFault {
            kind: FaultKind::Hang(
                Duration::from_millis(300),
                vec![crate::frame::Frame {
                    file: "mine.py".into(),
                    line: 12,
                    function: Some("renew".into()),
                    code: Some("while True:".into()),
                }],
            ),
            request: None,
            stderr: Vec::new(),
            ..fault
        };
        assert_eq!(
            hang.to_string(),
            "python3 mine.py gave no answer within 300 ms; the call hung in renew, line 12 of mine.py, at `while True:`"
        );
        assert_eq!(seconds(Duration::from_millis(9500)), "9.5 s");
        assert_eq!(seconds(Duration::from_secs(10)), "10 s");
        assert_eq!(hang.hang(), Some(Duration::from_millis(300)));
    }

    /// A store in another program, as far as the recorder can tell: its
    /// calls answer from a list, and it notes what it is asked besides.
    struct Scripted {
        answers: Mutex<Vec<Result<Answer>>>,
        calls: std::sync::atomic::AtomicUsize,
        busy_timeouts: Mutex<Vec<Option<Duration>>>,
        abandoned: std::sync::atomic::AtomicBool,
    }

    impl JobStore for Scripted {
        fn call(&self, _db: &Path, _operation: &Operation) -> Result<Answer> {
            self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            self.answers.lock().unwrap().remove(0)
        }

        fn set_thread_busy_timeout(&self, timeout: Option<Duration>) {
            self.busy_timeouts.lock().unwrap().push(timeout);
        }

        fn in_this_process(&self) -> bool {
            false
        }

        fn abandon(&self) {
            self.abandoned
                .store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }

    /// The first fault is kept, and every later call answers it at once,
    /// without asking the program again.
    #[test]
    fn the_recorder_keeps_the_first_fault_and_answers_it_from_then_on() {
        let fault = |message: &str, hang| {
            StoreError::Fault(Faulted {
                message: message.into(),
                hang,
            })
        };
        let inner = Scripted {
            answers: Mutex::new(vec![
                Ok(Answer::Done),
                Err(fault("it hung", Some(Duration::from_millis(5)))),
                Err(fault("it ended", None)),
            ]),
            calls: 0.into(),
            busy_timeouts: Mutex::new(Vec::new()),
            abandoned: false.into(),
        };
        let recorder = FaultRecorder::new(&inner);
        let db = Path::new("x.db");
        assert!(matches!(
            recorder.call(db, &Operation::InitDb),
            Ok(Answer::Done)
        ));
        assert_eq!(recorder.first_fault(), None);
        assert!(recorder.call(db, &Operation::InitDb).is_err());
        let first = Faulted {
            message: "it hung".into(),
            hang: Some(Duration::from_millis(5)),
        };
        assert_eq!(recorder.first_fault(), Some(first.clone()));
        match recorder.call(db, &Operation::InitDb) {
            Err(StoreError::Fault(fault)) => assert_eq!(fault, first),
            other => panic!("the first fault again, but {other:?}"),
        }
        assert_eq!(inner.calls.load(std::sync::atomic::Ordering::SeqCst), 2);
        assert_eq!(recorder.operations(), ["init_db"]);
        // Everything else goes to the store behind it.
        assert!(!recorder.in_this_process());
        recorder.set_thread_busy_timeout(Some(Duration::from_millis(50)));
        assert_eq!(
            *inner.busy_timeouts.lock().unwrap(),
            [Some(Duration::from_millis(50))]
        );
        recorder.abandon();
        assert!(inner.abandoned.load(std::sync::atomic::Ordering::SeqCst));
    }
}
