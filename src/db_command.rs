//! `lab db`: the store's eight operations from the shell, answering JSON.

use crate::error::StoreError;
use crate::job::Fence;
use crate::variant::JobStore;
use serde_json::{json, Value};
use std::path::Path;

/// One store operation with its arguments, as typed after `lab db`.
#[derive(Debug, Clone, PartialEq)]
pub enum DbOperation {
    /// `init`
    Init,
    /// `enqueue JOB`
    Enqueue {
        /// The job id.
        job: String,
    },
    /// `state JOB`
    State {
        /// The job id.
        job: String,
    },
    /// `claim JOB OWNER --now N --ttl T`
    Claim {
        /// The job id.
        job: String,
        /// Who claims.
        owner: String,
        /// The caller's clock.
        now: f64,
        /// The lease's length.
        ttl: f64,
    },
    /// `renew JOB OWNER FENCE --now N --ttl T`
    Renew {
        /// The job id.
        job: String,
        /// Who renews.
        owner: String,
        /// The fence of its claim.
        fence: i64,
        /// The caller's clock.
        now: f64,
        /// The new lease's length.
        ttl: f64,
    },
    /// `complete JOB OWNER FENCE --now N --result R`
    Complete {
        /// The job id.
        job: String,
        /// Who completes.
        owner: String,
        /// The fence of its claim.
        fence: i64,
        /// The caller's clock.
        now: f64,
        /// The result to store.
        result: String,
    },
    /// `release JOB OWNER FENCE`
    Release {
        /// The job id.
        job: String,
        /// Who releases.
        owner: String,
        /// The fence of its claim.
        fence: i64,
    },
    /// `claim-many JOB OWNER... --now N --ttl T`
    ClaimMany {
        /// The job id.
        job: String,
        /// Who claims, all at once.
        owners: Vec<String>,
        /// The caller's clock.
        now: f64,
        /// The lease's length.
        ttl: f64,
    },
}

/// Runs the operation with `store` (the reference, or a mutant to watch it
/// misbehave) and returns its answer as JSON: `true`/`false`, a fence or
/// `null`, a row object (`done` a boolean) or `null`, or an array of fences
/// and `null`s.
pub fn run(store: &dyn JobStore, db: &Path, operation: &DbOperation) -> Result<Value, StoreError> {
    let fence_json = |fence: Option<Fence>| fence.map_or(Value::Null, |f| json!(f.0));
    Ok(match operation {
        DbOperation::Init => {
            store.init_db(db)?;
            json!(true)
        }
        DbOperation::Enqueue { job } => json!(store.enqueue(db, job)?),
        DbOperation::State { job } => json!(store.state(db, job)?),
        DbOperation::Claim {
            job,
            owner,
            now,
            ttl,
        } => fence_json(store.claim(db, job, owner, *now, *ttl)?),
        DbOperation::Renew {
            job,
            owner,
            fence,
            now,
            ttl,
        } => {
            json!(store.renew(db, job, owner, Fence(*fence), *now, *ttl)?)
        }
        DbOperation::Complete {
            job,
            owner,
            fence,
            now,
            result,
        } => {
            json!(store.complete(db, job, owner, Fence(*fence), *now, result)?)
        }
        DbOperation::Release { job, owner, fence } => {
            json!(store.release(db, job, owner, Fence(*fence))?)
        }
        DbOperation::ClaimMany {
            job,
            owners,
            now,
            ttl,
        } => {
            let owners: Vec<&str> = owners.iter().map(String::as_str).collect();
            Value::Array(
                store
                    .claim_many(db, job, &owners, *now, *ttl)?
                    .into_iter()
                    .map(fence_json)
                    .collect(),
            )
        }
    })
}

/// The process exit code for an operation's outcome: 0 when it ran (a
/// `false` or `null` is an answer), 2 for invalid arguments, 1 otherwise.
pub fn exit_code(outcome: &Result<Value, StoreError>) -> i32 {
    match outcome {
        Ok(_) => 0,
        Err(StoreError::InvalidArgument(_)) => 2,
        Err(_) => 1,
    }
}
