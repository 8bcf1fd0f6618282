//! Step 5. Only the current generation renews the lease: `renew` needs the
//! stored owner and fence, a job not done, and a lease still valid.

use super::bench::*;
use super::failure::*;

/// The holder renews a valid lease: `true`, and the lease ends at now + ttl.
pub fn renew_by_the_holder_extends_the_lease(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.claim_expecting("j", "A", 100.0, 10.0, Some(1))?;
    expect_eq(
        "renew by the holder at 105",
        bench.renew("j", "A", 1, 105.0, 20.0)?,
        true,
    )?;
    bench.expect_row("the renewal", held("j", "A", 1, 125.0))?;
    bench.claim_expecting("j", "B", 120.0, 10.0, None)
}

/// At now == until the lease is over: renew answers `false` and the lease
/// end stays where it was.
pub fn renew_at_exact_expiry_is_refused(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.claim_expecting("j", "A", 100.0, 10.0, Some(1))?;
    let before = bench.rows()?;
    bench.expect_refused(
        "renew by the holder at 110",
        bench.renew("j", "A", 1, 110.0, 20.0)?,
        false,
        "the refused renewal",
        &before,
    )
}

/// Long after expiry, even with nobody else claiming, the lease is not revived.
pub fn renew_after_expiry_is_refused(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.claim_expecting("j", "A", 100.0, 10.0, Some(1))?;
    let before = bench.rows()?;
    bench.expect_refused(
        "renew by the holder at 150",
        bench.renew("j", "A", 1, 150.0, 20.0)?,
        false,
        "the refused renewal",
        &before,
    )
}

/// Another worker that presents the current fence cannot renew.
pub fn renew_by_another_owner_is_refused(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.claim_expecting("j", "A", 100.0, 10.0, Some(1))?;
    let before = bench.rows()?;
    bench.expect_refused(
        "renew by B with fence 1",
        bench.renew("j", "B", 1, 105.0, 20.0)?,
        false,
        "the refused renewal",
        &before,
    )
}

/// The same owner with the fence of an earlier claim cannot renew.
pub fn renew_with_a_stale_fence_is_refused(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.claim_expecting("j", "A", 100.0, 10.0, Some(1))?;
    bench.claim_expecting("j", "A", 150.0, 10.0, Some(2))?;
    let before = bench.rows()?;
    bench.expect_refused(
        "renew by A with the old fence 1",
        bench.renew("j", "A", 1, 152.0, 20.0)?,
        false,
        "the refused renewal",
        &before,
    )
}

/// A done job's lease is not renewed.
pub fn renew_of_a_done_job_is_refused(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.store_row(&completed("j", "A", 1, 110.0, "r"))?;
    let before = bench.rows()?;
    bench.expect_refused(
        "renew of the done job",
        bench.renew("j", "A", 1, 106.0, 20.0)?,
        false,
        "the refused renewal",
        &before,
    )
}

/// Renewing one job leaves the caller's other jobs as they were.
pub fn renew_touches_only_its_job(bench: &Bench) -> Checked {
    bench.init_with(&["a", "b"])?;
    bench.claim_expecting("a", "A", 100.0, 10.0, Some(1))?;
    bench.claim_expecting("b", "A", 100.0, 10.0, Some(1))?;
    expect_eq("renew of a", bench.renew("a", "A", 1, 105.0, 20.0)?, true)?;
    expect_eq(
        "the stored rows",
        bench.rows()?,
        vec![held("a", "A", 1, 125.0), held("b", "A", 1, 110.0)],
    )
}

/// Renewing a job that does not exist answers `false` and creates nothing.
pub fn renew_of_a_missing_job_is_refused(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    let before = bench.rows()?;
    bench.expect_refused(
        "renew of a missing job",
        bench.renew("other", "A", 1, 105.0, 20.0)?,
        false,
        "the refused renewal",
        &before,
    )
}

/// A ttl of zero or less is an invalid argument (the worksheet's
/// `ValueError`), and nothing changes.
pub fn renew_with_ttl_zero_or_less_is_invalid(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.claim_expecting("j", "A", 100.0, 10.0, Some(1))?;
    let before = bench.rows()?;
    for ttl in [0.0, -1.0] {
        expect_invalid(
            format!("renew(\"j\", \"A\", fence=1, now=105, ttl={ttl})"),
            bench
                .store()
                .renew(bench.db(), "j", "A", crate::job::Fence(1), 105.0, ttl),
        )?;
    }
    bench.expect_unchanged("the refused renewals", &before)
}

/// A clock or ttl that is not a finite number, a lease end that overflows,
/// or an empty owner is an invalid argument, and nothing changes.
pub fn renew_with_non_finite_time_or_an_empty_owner_is_invalid(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.claim_expecting("j", "A", 100.0, 10.0, Some(1))?;
    let before = bench.rows()?;
    for (now, ttl) in [
        (105.0, f64::NAN),
        (105.0, f64::INFINITY),
        (f64::NAN, 10.0),
        (f64::NEG_INFINITY, 10.0),
        (f64::MAX, f64::MAX),
    ] {
        expect_invalid(
            format!("renew(\"j\", \"A\", fence=1, now={now}, ttl={ttl})"),
            bench
                .store()
                .renew(bench.db(), "j", "A", crate::job::Fence(1), now, ttl),
        )?;
    }
    expect_invalid(
        "renew with owner \"\"",
        bench
            .store()
            .renew(bench.db(), "j", "", crate::job::Fence(1), 105.0, 10.0),
    )?;
    bench.expect_unchanged("the refused renewals", &before)
}
