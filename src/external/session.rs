//! One run of a program that speaks the lab's protocol: its greeting, the
//! requests sent to it and the answers handed to the calls that wait for
//! them, and the fault that ends it.

use super::{read_greeting, ImplCommand};
use crate::child_process::{LineChild, Mark, NoLine, OutputCaps};
use crate::fault::{FaultKind, ImplementationFault};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

/// One run of the program: its greeting, and the calls waiting for answers.
pub(super) struct Session {
    pub(super) implementation: String,
    pub(super) name: String,
    pub(super) concurrent: bool,
    pub(super) limit: Duration,
    pub(super) child: Mutex<LineChild>,
    /// The calls waiting for an answer, by request id.
    pub(super) waiting: Arc<Mutex<HashMap<u64, Sender<Arrived>>>>,
    /// Taken by a call from sending its request to receiving its answer,
    /// when the program answers one request at a time.
    pub(super) one_at_a_time: Mutex<()>,
    pub(super) next_id: AtomicU64,
    /// Set once the program broke: the next call starts it again.
    pub(super) failed: Mutex<Option<ImplementationFault>>,
    /// A fault seen while no call waited (a line after the last answer),
    /// reported to the next call.
    pub(super) unheard: Arc<Mutex<Option<FaultKind>>>,
    /// Where the program's own lines on standard error end, once the lab
    /// asked it where it hung: what came after is the dump it asked for.
    pub(super) dumped_at: Mutex<Option<Mark>>,
}

/// What arrives for a waiting call: its answer line, or the fault that
/// means it never will.
pub(super) type Arrived = std::result::Result<(String, Value), FaultKind>;

impl Session {
    /// Starts the program and reads its greeting.
    pub(super) fn start(
        command: &ImplCommand,
        limit: Duration,
    ) -> std::result::Result<Session, ImplementationFault> {
        let implementation = command.display();
        let fault = |kind: FaultKind, child: Option<&mut LineChild>| ImplementationFault {
            implementation: implementation.clone(),
            kind,
            request: None,
            stderr: child.map(LineChild::stderr_tail).unwrap_or_default(),
        };
        let mut child = super::launch::command(command)
            .and_then(|mut prepared| {
                let caps = crate::sandbox::Limits::default();
                let caps = OutputCaps {
                    line: caps.line,
                    total: caps.output,
                };
                let start = if crate::sandbox::confined().is_some() {
                    crate::sandbox::spawn_for_life
                } else {
                    Command::spawn
                };
                let mut child = LineChild::spawn_with(&mut prepared.command, true, caps, start)?;
                child.set_program(prepared.program_id());
                Ok(child)
            })
            .map_err(|error| {
                fault(
                    FaultKind::NotStarted(format!("{}: {error}", command.argv[0])),
                    None,
                )
            })?;
        let greeting = match child.next_line(limit) {
            Ok(line) => line,
            Err(NoLine::Timeout) => {
                child.kill();
                return Err(fault(FaultKind::Hang(limit, Vec::new()), Some(&mut child)));
            }
            Err(NoLine::Closed) if child.too_large().is_some() => {
                child.kill();
                let how = child.too_large().unwrap_or_default();
                return Err(fault(FaultKind::TooLarge(how), Some(&mut child)));
            }
            Err(NoLine::Closed) => {
                let how = child.wait();
                return Err(fault(
                    FaultKind::Exited(format!("{how} before it greeted the lab")),
                    Some(&mut child),
                ));
            }
        };
        let Some((name, concurrent)) = read_greeting(&greeting) else {
            child.kill();
            return Err(fault(FaultKind::WrongGreeting(greeting), Some(&mut child)));
        };
        super::launch::learn(command, child.id());
        let lines = child.take_lines();
        let session = Session {
            implementation,
            name,
            concurrent,
            limit,
            child: Mutex::new(child),
            waiting: Arc::new(Mutex::new(HashMap::new())),
            one_at_a_time: Mutex::new(()),
            next_id: AtomicU64::new(1),
            failed: Mutex::new(None),
            unheard: Arc::new(Mutex::new(None)),
            dumped_at: Mutex::new(None),
        };
        session.dispatch(lines);
        Ok(session)
    }

    /// Reads the program's lines on a thread of its own and hands each
    /// answer to the call waiting for it; a line that answers no call, or
    /// the end of the program, fails every waiting call.
    pub(super) fn dispatch(&self, lines: Receiver<String>) {
        let waiting = Arc::clone(&self.waiting);
        let unheard = Arc::clone(&self.unheard);
        let concurrent = self.concurrent;
        thread::spawn(move || {
            let fail_all = |kind: FaultKind| {
                let mut waiting = waiting.lock().unwrap_or_else(PoisonError::into_inner);
                if waiting.is_empty() {
                    unheard
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .get_or_insert(kind.clone());
                }
                for (_, call) in waiting.drain() {
                    let _ = call.send(Err(kind.clone()));
                }
            };
            for line in lines.iter() {
                let value: Value = match serde_json::from_str(&line) {
                    Ok(value @ Value::Object(_)) => value,
                    _ => {
                        fail_all(FaultKind::NotJson(line));
                        continue;
                    }
                };
                let mut waiting = waiting.lock().unwrap_or_else(PoisonError::into_inner);
                let call = match value.get("id").and_then(Value::as_u64) {
                    Some(id) if concurrent => waiting.remove(&id),
                    None if !concurrent && waiting.len() == 1 => {
                        let id = *waiting.keys().next().expect("one call waits");
                        waiting.remove(&id)
                    }
                    _ => None,
                };
                drop(waiting);
                match call {
                    Some(call) => {
                        let _ = call.send(Ok((line, value)));
                    }
                    None => fail_all(FaultKind::Stray(line)),
                }
            }
            fail_all(FaultKind::Exited(String::new()));
        });
    }

    pub(super) fn broken(&self) -> bool {
        self.failed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// Sends a request and waits for its answer line.
    pub(super) fn ask(
        &self,
        mut request: Value,
    ) -> std::result::Result<Value, ImplementationFault> {
        let _turn = (!self.concurrent).then(|| {
            self.one_at_a_time
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
        });
        let unheard = self
            .unheard
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(kind) = unheard {
            return Err(self.fail(kind, None));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        if self.concurrent {
            request["id"] = json!(id);
        }
        let line = request.to_string();
        let (sender, receiver) = mpsc::channel();
        self.waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, sender);
        let sent = self
            .child
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .send_line(&line);
        let arrived = match sent {
            Ok(()) => receiver
                .recv_timeout(self.limit)
                .map_err(|error| match error {
                    mpsc::RecvTimeoutError::Timeout => FaultKind::Hang(self.limit, Vec::new()),
                    mpsc::RecvTimeoutError::Disconnected => FaultKind::Exited(String::new()),
                }),
            Err(_) => Err(FaultKind::Exited(String::new())),
        };
        match arrived.and_then(|arrived| arrived) {
            Ok((_, value)) => Ok(value),
            Err(kind) => Err(self.fail(kind, Some(line))),
        }
    }

    /// Marks the session broken with `kind`, stops the program, and gives
    /// the fault with the program's last words.
    pub(super) fn fail(&self, kind: FaultKind, request: Option<String>) -> ImplementationFault {
        self.waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        let mut child = self.child.lock().unwrap_or_else(PoisonError::into_inner);
        let mut stderr = None;
        let kind = match kind {
            // Its output ended for the lab because it passed the caps.
            FaultKind::Exited(how) if how.is_empty() && child.too_large().is_some() => {
                child.kill();
                FaultKind::TooLarge(child.too_large().unwrap_or_default())
            }
            FaultKind::Exited(how) if how.is_empty() => {
                let ended = child.ended_within(Duration::from_millis(500));
                let how = ended.unwrap_or_else(|| {
                    child.kill();
                    "closed its standard output".to_string()
                });
                FaultKind::Exited(format!("{how} in the middle of the run"))
            }
            FaultKind::Hang(limit, _) => {
                // Where it hung, asked before the kill; the dump is the
                // lab's, not the program's own lines.
                let (before, dump) = child.dump_stacks();
                *self
                    .dumped_at
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = before;
                child.kill();
                stderr = before.map(|before| child.stderr_tail_until(before));
                FaultKind::Hang(limit, crate::frame::hung_in(&dump))
            }
            other => {
                child.kill();
                other
            }
        };
        let fault = ImplementationFault {
            implementation: self.implementation.clone(),
            kind,
            request,
            stderr: stderr.unwrap_or_else(|| child.stderr_tail()),
        };
        *self.failed.lock().unwrap_or_else(PoisonError::into_inner) = Some(fault.clone());
        fault
    }
}
