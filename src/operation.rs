//! A store operation with its arguments: what `lab db` runs from the shell
//! and what one line of a probe runs.

use serde::Serialize;
use std::time::Duration;

/// A store operation with its arguments.
#[derive(Debug, Clone, PartialEq)]
pub enum Operation {
    /// `init_db`.
    Init,
    /// `enqueue(job)`.
    Enqueue {
        /// The job id.
        job: String,
    },
    /// `state(job)`, whole or one field.
    State {
        /// The job id.
        job: String,
        /// The field looked at, or `None` for the whole row.
        field: Option<Field>,
    },
    /// `claim(job, owner, now, ttl)`.
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
    /// `renew(job, owner, fence, now, ttl)`.
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
    /// `complete(job, owner, fence, now, result)`.
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
    /// `release(job, owner, fence)`.
    Release {
        /// The job id.
        job: String,
        /// Who releases.
        owner: String,
        /// The fence of its claim.
        fence: i64,
    },
    /// `claim_many(job, owners, now, ttl)`.
    ClaimMany {
        /// The job id.
        job: String,
        /// Who claims, all at once.
        owners: Vec<String>,
        /// The caller's clock.
        now: f64,
        /// The lease's length.
        ttl: f64,
        /// `lock-ms=N`: how long another client holds the database's write
        /// lock while the claims start, so that they queue up behind it.
        hold_lock: Option<Duration>,
    },
}

/// A column of the `jobs` table, as named in probes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Field {
    /// `id`.
    Id,
    /// `owner`.
    Owner,
    /// `until`.
    Until,
    /// `fence`.
    Fence,
    /// `result`.
    Result,
    /// `done`.
    Done,
}
