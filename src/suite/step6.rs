//! Step 6. Reject a stale completion: `complete` writes only for the current
//! lease, and a refused completion keeps the stored result.

use super::bench::*;
use super::failure::*;
use crate::job::Fence;

/// The holder completes within its lease: `true`, the result is stored and
/// the job is done.
pub fn complete_by_the_holder_stores_the_result(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.claim_expecting("j", "A", 100.0, 10.0, Some(1))?;
    expect_eq(
        "complete by the holder at 105",
        bench.complete("j", "A", 1, 105.0, "A's result")?,
        true,
    )?;
    bench.expect_row(
        "the completion",
        completed("j", "A", 1, 110.0, "A's result"),
    )
}

/// The worksheet's story: A stalls past its lease, B claims with fence 2 and
/// completes; A's late completion with fence 1 is refused and B's result stays.
pub fn stale_completion_after_takeover_is_refused(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.claim_expecting("j", "A", 100.0, 10.0, Some(1))?;
    bench.claim_expecting("j", "B", 115.0, 10.0, Some(2))?;
    expect_eq(
        "complete by B at 117",
        bench.complete("j", "B", 2, 117.0, "B's result")?,
        true,
    )?;
    let before = bench.rows()?;
    bench.expect_refused(
        "A's late complete with fence 1",
        bench.complete("j", "A", 1, 118.0, "A's result")?,
        false,
        "the refused completion",
        &before,
    )
}

/// The commonest real bug: A stalls past its lease and B claims with fence 2;
/// A's late completion with fence 1 comes while B still holds the job and is
/// refused; B's completion is then accepted and the row holds B's result. A
/// store that checks only that the job is running (held, not done) lets A's
/// write land here, where the worksheet's story, B first, cannot tell.
pub fn stale_completion_while_the_new_owner_works_is_refused(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.claim_expecting("j", "A", 100.0, 10.0, Some(1))?;
    bench.claim_expecting("j", "B", 115.0, 10.0, Some(2))?;
    let before = bench.rows()?;
    bench.expect_refused(
        "A's late complete with fence 1 while B holds the job",
        bench.complete("j", "A", 1, 117.0, "A's result")?,
        false,
        "the refused completion",
        &before,
    )?;
    expect_eq(
        "complete by B at 118",
        bench.complete("j", "B", 2, 118.0, "B's result")?,
        true,
    )?;
    bench.expect_row(
        "B's completion",
        completed("j", "B", 2, 125.0, "B's result"),
    )
}

/// A restarted worker with the same name but the fence of its earlier claim is refused.
pub fn completion_with_a_stale_fence_of_the_same_owner_is_refused(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.claim_expecting("j", "A", 100.0, 10.0, Some(1))?;
    bench.claim_expecting("j", "A", 150.0, 10.0, Some(2))?;
    let before = bench.rows()?;
    bench.expect_refused(
        "complete by A with the old fence 1",
        bench.complete("j", "A", 1, 152.0, "stale")?,
        false,
        "the refused completion",
        &before,
    )
}

/// A second completion by the holder is refused and the first result stays.
pub fn second_completion_is_refused_and_keeps_the_result(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.claim_expecting("j", "A", 100.0, 10.0, Some(1))?;
    expect_eq(
        "first complete at 105",
        bench.complete("j", "A", 1, 105.0, "first")?,
        true,
    )?;
    let before = bench.rows()?;
    bench.expect_refused(
        "second complete at 106",
        bench.complete("j", "A", 1, 106.0, "second")?,
        false,
        "the refused second completion",
        &before,
    )
}

/// At now == until the lease is over: the holder's completion is refused.
pub fn completion_at_exact_expiry_is_refused(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.claim_expecting("j", "A", 100.0, 10.0, Some(1))?;
    let before = bench.rows()?;
    bench.expect_refused(
        "complete by the holder at 110",
        bench.complete("j", "A", 1, 110.0, "late")?,
        false,
        "the refused completion",
        &before,
    )
}

/// After expiry the holder's completion is refused even if nobody claimed the job.
pub fn completion_after_expiry_is_refused_even_unclaimed(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.claim_expecting("j", "A", 100.0, 10.0, Some(1))?;
    let before = bench.rows()?;
    bench.expect_refused(
        "complete by the holder at 150",
        bench.complete("j", "A", 1, 150.0, "late")?,
        false,
        "the refused completion",
        &before,
    )
}

/// Another worker presenting the current fence cannot complete.
pub fn completion_by_another_owner_is_refused(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.claim_expecting("j", "A", 100.0, 10.0, Some(1))?;
    let before = bench.rows()?;
    bench.expect_refused(
        "complete by B with fence 1",
        bench.complete("j", "B", 1, 105.0, "B's")?,
        false,
        "the refused completion",
        &before,
    )
}

/// Completing one job leaves the caller's other jobs as they were.
pub fn completion_touches_only_its_job(bench: &Bench) -> Checked {
    bench.init_with(&["a", "b"])?;
    bench.claim_expecting("a", "A", 100.0, 10.0, Some(1))?;
    bench.claim_expecting("b", "A", 100.0, 10.0, Some(1))?;
    expect_eq(
        "complete of a",
        bench.complete("a", "A", 1, 105.0, "a's")?,
        true,
    )?;
    expect_eq(
        "the stored rows",
        bench.rows()?,
        vec![
            completed("a", "A", 1, 110.0, "a's"),
            held("b", "A", 1, 110.0),
        ],
    )
}

/// A time that is not finite, or an empty owner, is an invalid argument and
/// the holder's job stays unfinished.
pub fn completion_with_an_invalid_time_is_invalid(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.claim_expecting("j", "A", 100.0, 10.0, Some(1))?;
    let before = bench.rows()?;
    for now in [f64::NAN, f64::NEG_INFINITY, f64::INFINITY] {
        expect_invalid(
            format!("complete(\"j\", \"A\", fence=1, now={now})"),
            bench
                .store()
                .complete(bench.db(), "j", "A", Fence(1), now, "r"),
        )?;
    }
    expect_invalid(
        "complete with owner \"\"",
        bench
            .store()
            .complete(bench.db(), "j", "", Fence(1), 105.0, "r"),
    )?;
    expect_invalid(
        "complete of job \"\"",
        bench
            .store()
            .complete(bench.db(), "", "A", Fence(1), 105.0, "r"),
    )?;
    bench.expect_unchanged("the refused completions", &before)
}
