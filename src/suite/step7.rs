//! Step 7. Only the current worker returns the lease: `release` frees the
//! lease of the stored owner and fence, and keeps the fence.

use super::bench::*;
use super::failure::*;
use crate::job::Fence;

/// The holder releases: `true`, no owner, until 0, and the fence is kept.
pub fn release_by_the_holder_frees_the_lease_and_keeps_the_fence(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.claim_expecting("j", "A", 100.0, 10.0, Some(1))?;
    expect_eq("release by the holder", bench.release("j", "A", 1)?, true)?;
    bench.expect_row(
        "the release",
        crate::job::Job {
            fence: Fence(1),
            ..fresh("j")
        },
    )
}

/// After a release the job is claimable at once, with the next fence, never an old one.
pub fn claim_after_release_gets_the_next_fence(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.claim_expecting("j", "A", 100.0, 10.0, Some(1))?;
    expect_eq("release by the holder", bench.release("j", "A", 1)?, true)?;
    bench.claim_expecting("j", "B", 105.0, 10.0, Some(2))
}

/// Once released, the lease cannot be released again.
pub fn second_release_is_refused(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.claim_expecting("j", "A", 100.0, 10.0, Some(1))?;
    expect_eq("release by the holder", bench.release("j", "A", 1)?, true)?;
    let before = bench.rows()?;
    bench.expect_refused(
        "a second release",
        bench.release("j", "A", 1)?,
        false,
        "the refused release",
        &before,
    )
}

/// Another worker presenting the current fence cannot release.
pub fn release_by_another_owner_is_refused(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.claim_expecting("j", "A", 100.0, 10.0, Some(1))?;
    let before = bench.rows()?;
    bench.expect_refused(
        "release by B with fence 1",
        bench.release("j", "B", 1)?,
        false,
        "the refused release",
        &before,
    )
}

/// The same owner with the fence of an earlier claim cannot release.
pub fn release_with_a_stale_fence_is_refused(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.claim_expecting("j", "A", 100.0, 10.0, Some(1))?;
    bench.claim_expecting("j", "A", 150.0, 10.0, Some(2))?;
    let before = bench.rows()?;
    bench.expect_refused(
        "release by A with the old fence 1",
        bench.release("j", "A", 1)?,
        false,
        "the refused release",
        &before,
    )
}

/// A done job's row is final: release answers `false` and changes nothing.
pub fn release_of_a_done_job_is_refused(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.claim_expecting("j", "A", 100.0, 10.0, Some(1))?;
    expect_eq(
        "complete by the holder",
        bench.complete("j", "A", 1, 105.0, "r")?,
        true,
    )?;
    let before = bench.rows()?;
    bench.expect_refused(
        "release of the done job",
        bench.release("j", "A", 1)?,
        false,
        "the refused release",
        &before,
    )
}

/// Releasing one job leaves the caller's other jobs held.
pub fn release_touches_only_its_job(bench: &Bench) -> Checked {
    bench.init_with(&["a", "b"])?;
    bench.claim_expecting("a", "A", 100.0, 10.0, Some(1))?;
    bench.claim_expecting("b", "A", 100.0, 10.0, Some(1))?;
    expect_eq("release of a", bench.release("a", "A", 1)?, true)?;
    expect_eq(
        "the stored rows",
        bench.rows()?,
        vec![
            crate::job::Job {
                fence: Fence(1),
                ..fresh("a")
            },
            held("b", "A", 1, 110.0),
        ],
    )
}

/// An empty owner or id is an invalid argument and the lease stays held.
pub fn release_with_an_empty_owner_or_id_is_invalid(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.claim_expecting("j", "A", 100.0, 10.0, Some(1))?;
    let before = bench.rows()?;
    expect_invalid(
        "release with owner \"\"",
        bench.store().release(bench.db(), "j", "", Fence(1)),
    )?;
    expect_invalid(
        "release of job \"\"",
        bench.store().release(bench.db(), "", "A", Fence(1)),
    )?;
    bench.expect_unchanged("the refused releases", &before)
}
