//! The other side of the lab's protocol (`labs/protocol.md`): one of the
//! lab's compiled stores served on standard input and output, as a
//! student's program serves its own.
//!
//! `lab __serve --variant ID` runs this, so that what is run as a separate
//! process (each worker of `lab chaos`, which may be killed in the middle of
//! a call) is the same for the Rust store and its mutants as for the Python
//! store and a student's program: a program speaking the protocol.

use crate::command::CommandError;
use crate::error::StoreError;
use crate::job::Fence;
use crate::job_store::JobStore;
use crate::operation::Operation;
use serde_json::{json, Map, Value};
use std::io::{self, BufRead, Write};
use std::path::PathBuf;
use std::time::Duration;

/// `lab __serve`'s arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// The compiled variant to serve: `reference` or a mutant id.
    #[arg(long)]
    pub variant: String,
    /// Share the disk of this database with the other workers through the
    /// undo log `--power-log`, so that the run can cut the power of all.
    #[arg(long, requires = "power_log")]
    pub power_db: Option<PathBuf>,
    /// The undo log shared by every worker (see `--power-db`).
    #[arg(long, requires = "power_db")]
    pub power_log: Option<PathBuf>,
    /// Serve the store on PostgreSQL's variant, on the server whose
    /// connection string is in LEASE_LAB_PG.
    #[arg(long, conflicts_with = "power_db")]
    pub on_server: bool,
    /// With --on-server: keep the jobs in this schema, which the lab made
    /// for a chaos run and shares among its workers.
    #[arg(long, requires = "on_server")]
    pub schema: Option<String>,
}

/// `lab __serve`: serves the variant `args` names on standard input and
/// output until input ends.
///
/// Errors: no such variant (a usage error), a disk that cannot be shared,
/// or standard input or output failing.
pub fn serve_variant(args: &ServeArgs) -> Result<(), CommandError> {
    let variant = if args.on_server {
        let variant = crate::variant::Variant::find_on_the_server_of_the_environment(&args.variant)
            .map_err(CommandError::Usage)?;
        match &args.schema {
            Some(schema) => variant.in_schema(schema),
            None => variant,
        }
    } else {
        crate::variant::Variant::find(&args.variant).ok_or_else(|| {
            CommandError::Usage(format!(
                "no compiled variant {:?}; `lab tests --variants` lists them",
                args.variant
            ))
        })?
    };
    // The disk stays shared while the process lives.
    let _disk = match (&args.power_db, &args.power_log) {
        (Some(db), Some(log)) => Some(
            crate::vfs_shim::install()
                .and_then(|()| crate::vfs_shim::Disk::track_shared(db, log))
                .map_err(|error| CommandError::Failed(error.to_string()))?,
        ),
        _ => None,
    };
    let store = variant.open(Duration::from_secs(60));
    let name = format!("the lab's Rust store, variant {}", variant.id);
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    Ok(serve(store.as_ref(), &name, stdin, stdout)?)
}

/// One request, read: the database, the operation, and the busy wait it
/// asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The database file the operation runs on.
    pub path: PathBuf,
    /// The operation with its arguments.
    pub operation: Operation,
    /// `busy_timeout_ms`, when the request carries it.
    pub busy_timeout: Option<Duration>,
}

/// Serves `store` under `name` on `input` and `output` until `input` ends:
/// the greeting, then one answer line per request line, in order (the
/// greeting does not claim `concurrent`). A request that cannot be read is
/// answered with an `other` error that says why, and the next is served.
///
/// Errors: only those of reading `input` or writing `output`.
pub fn serve(
    store: &dyn JobStore,
    name: &str,
    input: impl BufRead,
    mut output: impl Write,
) -> io::Result<()> {
    let greeting = json!({"protocol": "lease-lab", "version": 1, "name": name});
    writeln!(output, "{greeting}")?;
    output.flush()?;
    for line in input.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let answer = match parse_request(&line) {
            Ok(request) => {
                store.set_thread_busy_timeout(request.busy_timeout);
                match store.call(&request.path, &request.operation) {
                    Ok(answer) => json!({"ok": answer.to_json()}),
                    Err(error) => error_answer(&error),
                }
            }
            Err(why) => json!({"error": "other", "message": why.0}),
        };
        writeln!(output, "{answer}")?;
        output.flush()?;
    }
    Ok(())
}

/// The protocol's error answer for `error`: its kind's name and its text.
fn error_answer(error: &StoreError) -> Value {
    let mut answer = json!({"error": error.kind().name(), "message": error.to_string()});
    if let StoreError::Busy { waited, .. } = error {
        answer["waited_ms"] = json!(u64::try_from(waited.as_millis()).unwrap_or(u64::MAX));
    }
    answer
}

/// A request line that is not one the protocol allows: what was wrong,
/// in the words of the protocol's fields.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadRequest(pub String);

/// Reads one request line; `Err` says what was wrong with it, in the
/// words of the protocol's fields.
pub fn parse_request(line: &str) -> Result<Request, BadRequest> {
    let value: Value = serde_json::from_str(line)
        .map_err(|error| BadRequest(format!("not a JSON request: {error}")))?;
    let Value::Object(fields) = value else {
        return Err(BadRequest("a request is a JSON object".into()));
    };
    let fields = Fields(&fields);
    let path = PathBuf::from(fields.string("path")?);
    let busy_timeout = match fields.0.get("busy_timeout_ms") {
        None | Some(Value::Null) => None,
        Some(value) => Some(Duration::from_millis(value.as_u64().ok_or_else(|| {
            BadRequest("busy_timeout_ms must be a whole number of milliseconds".into())
        })?)),
    };
    let operation = match fields.string("op")?.as_str() {
        "init_db" => Operation::InitDb,
        "enqueue" => Operation::Enqueue {
            job_id: fields.string("job_id")?,
        },
        "state" => Operation::State {
            job_id: fields.string("job_id")?,
        },
        "claim" => Operation::Claim {
            job_id: fields.string("job_id")?,
            owner: fields.string("owner")?,
            now: fields.number("now")?,
            ttl: fields.number("ttl")?,
        },
        "renew" => Operation::Renew {
            job_id: fields.string("job_id")?,
            owner: fields.string("owner")?,
            fence: fields.fence()?,
            now: fields.number("now")?,
            ttl: fields.number("ttl")?,
        },
        "complete" => Operation::Complete {
            job_id: fields.string("job_id")?,
            owner: fields.string("owner")?,
            fence: fields.fence()?,
            now: fields.number("now")?,
            result: fields.string("result")?,
        },
        "release" => Operation::Release {
            job_id: fields.string("job_id")?,
            owner: fields.string("owner")?,
            fence: fields.fence()?,
        },
        "claim_many" => Operation::ClaimMany {
            job_id: fields.string("job_id")?,
            owners: fields.strings("owners")?,
            now: fields.number("now")?,
            ttl: fields.number("ttl")?,
        },
        other => return Err(BadRequest(format!("unknown op {other:?}"))),
    };
    Ok(Request {
        path,
        operation,
        busy_timeout,
    })
}

/// A request's fields, read with errors that name the field.
struct Fields<'a>(&'a Map<String, Value>);

impl Fields<'_> {
    fn get(&self, name: &str) -> Result<&Value, BadRequest> {
        self.0
            .get(name)
            .ok_or_else(|| BadRequest(format!("the request has no {name:?}")))
    }

    fn string(&self, name: &str) -> Result<String, BadRequest> {
        self.get(name)?
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| BadRequest(format!("{name:?} must be a string")))
    }

    fn strings(&self, name: &str) -> Result<Vec<String>, BadRequest> {
        let wrong = || BadRequest(format!("{name:?} must be a list of strings"));
        self.get(name)?
            .as_array()
            .ok_or_else(wrong)?
            .iter()
            .map(|item| item.as_str().map(str::to_string).ok_or_else(wrong))
            .collect()
    }

    /// A number; `null` stands for one that is not finite (JSON has none).
    fn number(&self, name: &str) -> Result<f64, BadRequest> {
        match self.get(name)? {
            Value::Null => Ok(f64::NAN),
            value => value
                .as_f64()
                .ok_or_else(|| BadRequest(format!("{name:?} must be a number"))),
        }
    }

    fn fence(&self) -> Result<Fence, BadRequest> {
        self.get("fence")?
            .as_i64()
            .map(Fence)
            .ok_or_else(|| BadRequest("\"fence\" must be an integer".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variant::Variant;

    fn served(lines: &[String]) -> Vec<Value> {
        let store = Variant::reference().open(Duration::from_secs(5));
        let input = lines.join("\n");
        let mut output = Vec::new();
        serve(
            store.as_ref(),
            "the reference",
            input.as_bytes(),
            &mut output,
        )
        .expect("served");
        String::from_utf8(output)
            .expect("UTF-8")
            .lines()
            .map(|line| serde_json::from_str(line).expect("JSON lines"))
            .collect()
    }

    /// Every operation serialised as the lab's client sends it reads back
    /// as the same operation.
    #[test]
    fn every_operation_reads_back_as_sent() {
        let operations = [
            Operation::InitDb,
            Operation::Enqueue { job_id: "j".into() },
            Operation::State { job_id: "j".into() },
            Operation::Claim {
                job_id: "j".into(),
                owner: "A".into(),
                now: 100.5,
                ttl: 10.0,
            },
            Operation::Renew {
                job_id: "j".into(),
                owner: "A".into(),
                fence: Fence(3),
                now: 101.0,
                ttl: 5.0,
            },
            Operation::Complete {
                job_id: "j".into(),
                owner: "A".into(),
                fence: Fence(3),
                now: 102.0,
                result: "r".into(),
            },
            Operation::Release {
                job_id: "j".into(),
                owner: "A".into(),
                fence: Fence(3),
            },
            Operation::ClaimMany {
                job_id: "j".into(),
                owners: vec!["A".into(), "B".into()],
                now: 1.0,
                ttl: 2.0,
            },
        ];
        for operation in operations {
            let mut request = serde_json::to_value(&operation).expect("JSON");
            request["path"] = json!("/tmp/x.db");
            request["busy_timeout_ms"] = json!(25);
            let read = parse_request(&request.to_string()).expect("readable");
            assert_eq!(read.operation, operation);
            assert_eq!(read.path, PathBuf::from("/tmp/x.db"));
            assert_eq!(read.busy_timeout, Some(Duration::from_millis(25)));
        }
    }

    #[test]
    fn a_null_number_is_not_finite_and_the_store_refuses_it() {
        let request =
            r#"{"op":"claim","path":"/tmp/x.db","job_id":"j","owner":"A","now":null,"ttl":1}"#;
        match parse_request(request).expect("readable").operation {
            Operation::Claim { now, .. } => assert!(now.is_nan()),
            other => panic!("read as {other:?}"),
        }
    }

    #[test]
    fn an_unreadable_request_names_what_is_wrong() {
        let cases = [
            ("nonsense", "not a JSON request"),
            ("[1]", "a request is a JSON object"),
            (
                r#"{"op":"claim","path":"p"}"#,
                "the request has no \"job_id\"",
            ),
            (r#"{"op":"fly","path":"p"}"#, "unknown op \"fly\""),
            (
                r#"{"op":"release","path":"p","job_id":"j","owner":"A","fence":1.5}"#,
                "\"fence\" must be an integer",
            ),
            (
                r#"{"op":"state","job_id":"j"}"#,
                "the request has no \"path\"",
            ),
            (
                r#"{"op":"claim_many","path":"p","job_id":"j","owners":[1],"now":1,"ttl":1}"#,
                "\"owners\" must be a list of strings",
            ),
        ];
        for (line, why) in cases {
            let error = parse_request(line).expect_err(line);
            assert!(error.0.starts_with(why), "{line}: {error}");
        }
    }

    /// The greeting first, then one answer per request in order: values,
    /// a contract error by its kind, and a broken request that does not end
    /// the serving.
    #[test]
    fn serving_greets_and_answers_each_request_in_order() {
        let dir = tempfile::tempdir().expect("a folder");
        let db = dir.path().join("jobs.db");
        let db = db.to_str().expect("UTF-8");
        let lines = [
            json!({"op": "init_db", "path": db}).to_string(),
            json!({"op": "enqueue", "path": db, "job_id": "j"}).to_string(),
            json!({"op": "claim", "path": db, "job_id": "j", "owner": "A", "now": 100, "ttl": 0})
                .to_string(),
            "not json".to_string(),
            json!({"op": "claim", "path": db, "job_id": "j", "owner": "A", "now": 100, "ttl": 10})
                .to_string(),
            json!({"op": "state", "path": db, "job_id": "j"}).to_string(),
        ];
        let answers = served(&lines);
        assert_eq!(answers[0]["protocol"], "lease-lab");
        assert_eq!(answers[0]["version"], 1);
        assert_eq!(answers[1], json!({"ok": true}));
        assert_eq!(answers[2], json!({"ok": true}));
        assert_eq!(answers[3]["error"], "invalid-argument");
        assert_eq!(answers[4]["error"], "other");
        assert_eq!(answers[5], json!({"ok": 1}));
        assert_eq!(answers[6]["ok"]["owner"], "A");
        assert_eq!(answers.len(), 7);
    }
}
