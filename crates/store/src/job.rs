//! The values the store hands out: a job's stored row and the fencing token.

use serde::Serialize;
use std::fmt;

/// A fencing token: the generation number of a job's lease.
///
/// Every successful `claim` increments it by one, and nothing else ever
/// changes it, so a larger fence always means a later owner. A write that
/// carries a smaller fence than the stored one comes from a worker whose
/// lease was taken over, and the store refuses it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct Fence(pub i64);

impl fmt::Display for Fence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A fence written as a whole number, as on the command line.
impl std::str::FromStr for Fence {
    type Err = std::num::ParseIntError;

    fn from_str(text: &str) -> Result<Fence, Self::Err> {
        text.parse().map(Fence)
    }
}

/// One row of the `jobs` table, exactly as stored.
///
/// `until` is the end of the current lease on the caller's clock (`0` when
/// nobody holds it); the lease is valid while `now < until`.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Job {
    /// The job's id (the primary key).
    pub id: String,
    /// The worker holding or last holding the lease; `None` when released or never claimed.
    pub owner: Option<String>,
    /// When the current lease ends, in the caller's clock.
    pub until: f64,
    /// The fence of the latest claim; `0` before the first claim.
    pub fence: Fence,
    /// The result stored by the accepted completion, if any.
    pub result: Option<String>,
    /// Whether a completion has been accepted; a done job is never claimed again.
    pub done: bool,
}
