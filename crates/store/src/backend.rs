//! The eight operations as a trait ([`Backend`]), and the one function that
//! turns an [`Operation`] into a call of it and its [`Answer`]
//! ([`answer`]).
//!
//! Whatever carries the operations out (a store module's path functions on
//! a file, a connection to PostgreSQL, a kept handle) implements
//! [`Backend`] and hands its operations to [`answer`], so the match from an
//! operation to the method that runs it is written once.

use crate::job::{Fence, Job};
use crate::operation::{Answer, Operation};

/// The eight operations of the store, in the worksheet's order, on a
/// database the implementor already knows (a path it holds, a connection
/// it keeps): no method takes one.
///
/// Contract: each method does what the store's operation of that name does
/// and answers as it does, with the same arguments checked by the same
/// rules; an implementor adds no behaviour of its own beyond where it sends
/// the call. Errors are the implementor's [`Backend::Error`] (the store's
/// [`StoreError`](crate::error::StoreError) for every store of this crate),
/// as each operation documents them.
pub trait Backend {
    /// What a failed operation returns.
    type Error;

    /// Step 1: creates the `jobs` table if missing (idempotent).
    fn init_db(&self) -> Result<(), Self::Error>;

    /// Step 2: adds a job; `true` if new, `false` if it existed.
    fn enqueue(&self, job_id: &str) -> Result<bool, Self::Error>;

    /// Step 3: the stored row, if any.
    fn state(&self, job_id: &str) -> Result<Option<Job>, Self::Error>;

    /// Step 4: takes an expired lease: its new fence, or `None`.
    fn claim(
        &self,
        job_id: &str,
        owner: &str,
        now: f64,
        ttl: f64,
    ) -> Result<Option<Fence>, Self::Error>;

    /// Step 5: extends the current lease held by `owner` with `fence`.
    fn renew(
        &self,
        job_id: &str,
        owner: &str,
        fence: Fence,
        now: f64,
        ttl: f64,
    ) -> Result<bool, Self::Error>;

    /// Step 6: stores the result of the current lease held by `owner` with
    /// `fence`.
    fn complete(
        &self,
        job_id: &str,
        owner: &str,
        fence: Fence,
        now: f64,
        result: &str,
    ) -> Result<bool, Self::Error>;

    /// Step 7: gives up the current lease held by `owner` with `fence`.
    fn release(&self, job_id: &str, owner: &str, fence: Fence) -> Result<bool, Self::Error>;

    /// Step 8: the owners' claims of one job, raced: each one's fence or
    /// `None`, in the owners' order.
    fn claim_many(
        &self,
        job_id: &str,
        owners: &[&str],
        now: f64,
        ttl: f64,
    ) -> Result<Vec<Option<Fence>>, Self::Error>;
}

/// Runs `operation` on `backend`: the method of that operation, with the
/// operation's arguments, its result as the protocol answers it
/// ([`Answer::Done`] for `init_db`, and the answer of the operation's
/// kind, [`Operation::answers`], for the others).
///
/// Errors: the backend's, as it returned it.
pub fn answer<B: Backend + ?Sized>(backend: &B, operation: &Operation) -> Result<Answer, B::Error> {
    Ok(match operation {
        Operation::InitDb => {
            backend.init_db()?;
            Answer::Done
        }
        Operation::Enqueue { job_id } => Answer::Bool(backend.enqueue(job_id)?),
        Operation::State { job_id } => Answer::Row(backend.state(job_id)?),
        Operation::Claim {
            job_id,
            owner,
            now,
            ttl,
        } => Answer::Fence(backend.claim(job_id, owner, *now, *ttl)?),
        Operation::Renew {
            job_id,
            owner,
            fence,
            now,
            ttl,
        } => Answer::Bool(backend.renew(job_id, owner, *fence, *now, *ttl)?),
        Operation::Complete {
            job_id,
            owner,
            fence,
            now,
            result,
        } => Answer::Bool(backend.complete(job_id, owner, *fence, *now, result)?),
        Operation::Release {
            job_id,
            owner,
            fence,
        } => Answer::Bool(backend.release(job_id, owner, *fence)?),
        Operation::ClaimMany {
            job_id,
            owners,
            now,
            ttl,
        } => {
            let owners: Vec<&str> = owners.iter().map(String::as_str).collect();
            Answer::Fences(backend.claim_many(job_id, &owners, *now, *ttl)?)
        }
    })
}
