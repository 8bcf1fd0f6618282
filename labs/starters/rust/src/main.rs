//! The lab's protocol around your store: nothing here needs changing.
//!
//! `lab check` starts this program, writes requests to its standard input and
//! reads answers from its standard output, one JSON object a line (the lab's
//! `labs/protocol.md` describes them). Each request becomes one call of a
//! function of `store.rs`, and its answer, its error or its panic becomes one
//! answer line.
//!
//! Standard output carries only the protocol. Print your own traces with
//! `eprintln!`, never `println!`: the lab would take the line for a broken
//! answer. Standard error is free, and the lab shows its last lines when a
//! test goes wrong.
//!
//! By hand: `printf '%s\n' '{"op":"init_db","path":"/tmp/x.db"}' | cargo run -q`

// The lab writes error.rs and job.rs beside this file; not every error or
// item of theirs needs to be used.
#[allow(dead_code)]
mod error;
#[allow(dead_code)]
mod job;
#[allow(dead_code)]
mod store;

use crate::error::{ErrorKind, StoreError};
use crate::job::Fence;
use rusqlite::ErrorCode;
use serde::{Deserialize, Deserializer};
use serde_json::{json, Value};
use std::cell::RefCell;
use std::io::{self, BufRead, Write};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Mutex;
use std::thread;

/// The name this implementation gives in its greeting.
const NAME: &str = concat!(env!("CARGO_PKG_NAME"), " ", env!("CARGO_PKG_VERSION"));

/// One request of the protocol: the operation in `op`, its arguments by name.
#[derive(Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
enum Request {
    InitDb {
        path: String,
    },
    Enqueue {
        path: String,
        job_id: String,
    },
    State {
        path: String,
        job_id: String,
    },
    Claim {
        path: String,
        job_id: String,
        owner: String,
        #[serde(deserialize_with = "number")]
        now: f64,
        #[serde(deserialize_with = "number")]
        ttl: f64,
    },
    Renew {
        path: String,
        job_id: String,
        owner: String,
        fence: i64,
        #[serde(deserialize_with = "number")]
        now: f64,
        #[serde(deserialize_with = "number")]
        ttl: f64,
    },
    Complete {
        path: String,
        job_id: String,
        owner: String,
        fence: i64,
        #[serde(deserialize_with = "number")]
        now: f64,
        result: String,
    },
    Release {
        path: String,
        job_id: String,
        owner: String,
        fence: i64,
    },
    ClaimMany {
        path: String,
        job_id: String,
        owners: Vec<String>,
        #[serde(deserialize_with = "number")]
        now: f64,
        #[serde(deserialize_with = "number")]
        ttl: f64,
    },
}

/// A time or a ttl. JSON cannot carry NaN or an infinity, so the lab sends
/// such a number as `null`; it arrives here as NaN, which is not finite
/// either, and the store refuses it as the contract says.
fn number<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(deserializer)?.unwrap_or(f64::NAN))
}

/// Makes the call the request names and returns what goes under `"ok"`.
fn call(request: Request) -> Result<Value, StoreError> {
    let value = match request {
        Request::InitDb { path } => {
            store::init_db(&path)?;
            json!(true)
        }
        Request::Enqueue { path, job_id } => json!(store::enqueue(&path, &job_id)?),
        Request::State { path, job_id } => json!(store::state(&path, &job_id)?),
        Request::Claim {
            path,
            job_id,
            owner,
            now,
            ttl,
        } => json!(store::claim(&path, &job_id, &owner, now, ttl)?),
        Request::Renew {
            path,
            job_id,
            owner,
            fence,
            now,
            ttl,
        } => json!(store::renew(
            &path,
            &job_id,
            &owner,
            Fence(fence),
            now,
            ttl
        )?),
        Request::Complete {
            path,
            job_id,
            owner,
            fence,
            now,
            result,
        } => json!(store::complete(
            &path,
            &job_id,
            &owner,
            Fence(fence),
            now,
            &result
        )?),
        Request::Release {
            path,
            job_id,
            owner,
            fence,
        } => json!(store::release(&path, &job_id, &owner, Fence(fence))?),
        Request::ClaimMany {
            path,
            job_id,
            owners,
            now,
            ttl,
        } => {
            let owners: Vec<&str> = owners.iter().map(String::as_str).collect();
            json!(store::claim_many(&path, &job_id, &owners, now, ttl)?)
        }
    };
    Ok(value)
}

/// An error answer of the given kind.
fn error(kind: &str, message: impl Into<String>) -> Value {
    json!({"error": kind, "message": message.into()})
}

/// The error answer of a store's error: its kind and what went wrong.
///
/// Each [`StoreError`] answers its own kind (`no-database`, `busy`, ...),
/// and an SQLite error returned as [`StoreError::Sqlite`] the kind of its
/// code: a lock that stayed busy, a read-only file, a file that is not a
/// database. The message is the error's detail: the lab puts it in its own
/// sentence, which names the file.
fn store_error(problem: &StoreError) -> Value {
    let kind = match problem {
        StoreError::Sqlite { source, .. } => match source.sqlite_error_code() {
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => ErrorKind::Busy,
            Some(ErrorCode::ReadOnly) => ErrorKind::ReadOnly,
            Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => {
                ErrorKind::NotADatabase
            }
            _ => ErrorKind::Sqlite,
        },
        other => other.kind(),
    };
    let mut reply = error(kind.name(), problem.detail());
    if let StoreError::Busy { waited, .. } = problem {
        reply["waited_ms"] = json!(waited.as_millis());
    }
    reply
}

/// The text of a panic: what `panic!`, `todo!` or `unwrap` said.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        text.to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_string()
    }
}

thread_local! {
    /// Where a panic of the request this thread answers happened, as the
    /// answer's `"frames"`; `None` while the thread answers no request.
    static PANICKED_AT: RefCell<Option<Value>> = const { RefCell::new(None) };
}

/// Notes where a panic of a request happened, for its answer, rather than
/// printing it: the lab shows the file and line with the failing test. Any
/// other panic (on a thread of your own) is printed as usual.
fn note_panics() {
    let print = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        let answering = PANICKED_AT.with(|at| at.borrow().is_some());
        let Some(at) = info.location().filter(|_| answering) else {
            return print(info);
        };
        // The program runs in its project's folder, where the file is.
        let code = std::fs::read_to_string(at.file()).ok().and_then(|text| {
            let line = text.lines().nth(usize::try_from(at.line()).ok()? - 1)?;
            Some(line.trim().to_string())
        });
        let file = std::env::current_dir().map_or(at.file().into(), |dir| dir.join(at.file()));
        let frame = json!({"file": file, "line": at.line(), "code": code});
        PANICKED_AT.with(|noted| *noted.borrow_mut() = Some(json!([frame])));
    }));
}

/// The answer to one request, with the request's `"id"` when it has one.
///
/// A panic is caught here, so that one bad request never ends the program:
/// a `todo!()` answers `not-implemented`, any other panic `other`.
fn answer(request: Value) -> Value {
    let id = request.get("id").filter(|id| !id.is_null()).cloned();
    let mut reply = match Request::deserialize(&request) {
        Err(problem) => match request.get("op").and_then(Value::as_str) {
            Some(op) => error("other", format!("bad request: {op}: {problem}")),
            None => error("other", format!("bad request: {problem}")),
        },
        Ok(request) => {
            PANICKED_AT.with(|at| *at.borrow_mut() = Some(json!([])));
            let answered = panic::catch_unwind(AssertUnwindSafe(|| call(request)));
            let frames = PANICKED_AT.with(|at| at.borrow_mut().take());
            match answered {
                Ok(Ok(value)) => json!({ "ok": value }),
                Ok(Err(problem)) => store_error(&problem),
                Err(payload) => {
                    let message = panic_message(payload.as_ref());
                    if let Some(rest) = message.strip_prefix("not yet implemented") {
                        let rest = rest.trim_start_matches([':', ' ']);
                        error("not-implemented", if rest.is_empty() { "not written yet" } else { rest })
                    } else {
                        let mut reply = error("other", format!("panicked: {message}"));
                        reply["frames"] = frames.unwrap_or_default();
                        reply
                    }
                }
            }
        }
    };
    if let Some(id) = id {
        reply["id"] = id;
    }
    reply
}

fn main() {
    note_panics();
    let out = Mutex::new(io::stdout());
    // One line at a time, whole: answers written by several threads never mix.
    let send = |message: Value| {
        let mut out = out.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        // A failed write means the lab has gone; reading ends when stdin closes.
        let _ = writeln!(out, "{message}").and_then(|()| out.flush());
    };
    send(json!({
        "protocol": "lease-lab",
        "version": 1,
        "name": NAME,
        "concurrent": true,
    }));

    let mut input = io::stdin().lock();
    let mut line = Vec::new();
    // A request with an "id" runs on a thread of its own, beside the others;
    // one without (as typed by hand) is answered before the next line is read.
    // The scope ends, and the program with status 0, once standard input is
    // closed and every answer is written.
    thread::scope(|scope| loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let Ok(text) = std::str::from_utf8(&line) else {
            send(error("other", "bad request: the line is not UTF-8"));
            continue;
        };
        let text = text.trim_end_matches(['\n', '\r']);
        if text.trim().is_empty() {
            continue;
        }
        let request: Value = match serde_json::from_str(text) {
            Ok(request) => request,
            Err(problem) => {
                let shown: String = text.chars().take(200).collect();
                send(error(
                    "other",
                    format!("bad request: not a JSON line ({problem}): {shown:?}"),
                ));
                continue;
            }
        };
        if request.get("id").is_some_and(|id| !id.is_null()) {
            let send = &send;
            scope.spawn(move || send(answer(request)));
        } else {
            send(answer(request));
        }
    });
}
