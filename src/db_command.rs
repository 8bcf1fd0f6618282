//! `lab db`: the store's eight operations from the shell, answering JSON.

use crate::error::StoreError;
use crate::job::Fence;
use crate::operation::Operation;
use crate::variant::JobStore;
use serde_json::{json, Value};
use std::path::Path;

/// Runs the operation with `store` (the reference, or a mutant to watch it
/// misbehave) and returns its answer as JSON: `true`/`false`, a fence or
/// `null`, a row object (`done` a boolean; one field's value when the
/// operation names a field) or `null`, or an array of fences and `null`s.
///
/// Errors: the store's, and an invalid argument for a `claim-many` that
/// asks to hold the write lock, which only probes can do.
pub fn run(store: &dyn JobStore, db: &Path, operation: &Operation) -> Result<Value, StoreError> {
    let fence_json = |fence: Option<Fence>| fence.map_or(Value::Null, |f| json!(f.0));
    Ok(match operation {
        Operation::Init => {
            store.init_db(db)?;
            json!(true)
        }
        Operation::Enqueue { job } => json!(store.enqueue(db, job)?),
        Operation::State { job, field } => {
            let row = json!(store.state(db, job)?);
            match field {
                Some(field) if !row.is_null() => row[field.name()].clone(),
                _ => row,
            }
        }
        Operation::Claim { job, owner, now, ttl } => fence_json(store.claim(db, job, owner, *now, *ttl)?),
        Operation::Renew { job, owner, fence, now, ttl } => {
            json!(store.renew(db, job, owner, Fence(*fence), *now, *ttl)?)
        }
        Operation::Complete { job, owner, fence, now, result } => {
            json!(store.complete(db, job, owner, Fence(*fence), *now, result)?)
        }
        Operation::Release { job, owner, fence } => json!(store.release(db, job, owner, Fence(*fence))?),
        Operation::ClaimMany { hold_lock: Some(_), .. } => {
            return Err(StoreError::InvalidArgument(
                "holding the write lock while claims race is a probe's test device, not a store operation".into(),
            ))
        }
        Operation::ClaimMany { job, owners, now, ttl, hold_lock: None } => {
            let owners: Vec<&str> = owners.iter().map(String::as_str).collect();
            Value::Array(store.claim_many(db, job, &owners, *now, *ttl)?.into_iter().map(fence_json).collect())
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
