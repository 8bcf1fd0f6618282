//! Step 3. Read the current state: `state` answers the stored row, or `None`
//! for a job that does not exist.

use super::bench::*;
use super::failure::*;
use crate::job::{Fence, Job};

/// A job that was never enqueued has no state: `None`, not an empty row.
pub fn state_of_a_missing_job_is_none(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    expect_eq("state(\"other\")", bench.state("other")?, None)
}

/// A new job's state is the default row.
pub fn state_of_a_new_job_is_the_default_row(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    expect_eq(
        "state(\"j\") of a new job",
        bench.state("j")?,
        Some(fresh("j")),
    )
}

/// Every column comes back as stored: owner, until, fence, result and done.
pub fn state_returns_every_stored_column(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.store_row(&completed("j", "A", 1, 110.5, "the result"))?;
    expect_eq(
        "state(\"j\") of a completed job",
        bench.state("j")?,
        Some(completed("j", "A", 1, 110.5, "the result")),
    )
}

/// With two jobs stored, each id answers its own row.
pub fn state_tells_jobs_apart(bench: &Bench) -> Checked {
    bench.init_with(&["a", "b"])?;
    bench.store_row(&held("b", "B", 1, 110.0))?;
    expect_eq("state(\"a\")", bench.state("a")?, Some(fresh("a")))?;
    expect_eq(
        "state(\"b\")",
        bench.state("b")?,
        Some(held("b", "B", 1, 110.0)),
    )
}

/// What another client wrote to the file is seen at once: state reads the file, not a cache.
pub fn state_sees_what_another_client_wrote(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    expect_eq("state(\"j\") before", bench.state("j")?, Some(fresh("j")))?;
    bench.raw_sql(
        bench.db(),
        "UPDATE jobs SET owner = 'other-client', until = 42.5, fence = 7 WHERE id = 'j'",
    )?;
    expect_eq(
        "state(\"j\") after another client's update",
        bench.state("j")?,
        Some(Job {
            owner: Some("other-client".into()),
            until: 42.5,
            fence: Fence(7),
            ..fresh("j")
        }),
    )
}

/// An empty id is an invalid argument.
pub fn state_of_an_empty_id_is_invalid(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    expect_invalid("state(\"\")", bench.store().state(bench.db(), ""))
}
