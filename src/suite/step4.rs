//! Step 4. Take an expired lease atomically: `claim` hands out the next
//! fence for a job nobody holds, and changes nothing otherwise.

use super::bench::*;
use super::failure::*;
use crate::error::StoreError;
use std::time::Duration;

/// Claiming a new job answers fence 1 and stores the owner and the lease end.
pub fn claim_of_a_new_job_returns_fence_1(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.claim_expecting("j", "A", 100.0, 10.0, Some(1))?;
    bench.expect_row("the claim", held("j", "A", 1, 110.0))
}

/// While the lease is valid another claim gets `None` and the row stays the same.
pub fn claim_of_a_held_job_is_refused(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.claim_expecting("j", "A", 100.0, 10.0, Some(1))?;
    let before = bench.rows()?;
    bench.claim_expecting("j", "B", 105.0, 10.0, None)?;
    bench.expect_unchanged("the refused claim", &before)
}

/// The lease is valid while now < until: at now == until it is over and
/// the job can be claimed again, with the next fence.
pub fn claim_at_exact_expiry_is_reassigned(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.claim_expecting("j", "A", 100.0, 10.0, Some(1))?;
    bench.claim_expecting("j", "B", 110.0, 5.0, Some(2))?;
    bench.expect_row("the claim at the lease's end", held("j", "B", 2, 115.0))
}

/// An instant before the lease ends, the job is still held.
pub fn claim_just_before_expiry_is_refused(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.claim_expecting("j", "A", 100.0, 10.0, Some(1))?;
    let before = bench.rows()?;
    bench.claim_expecting("j", "B", 109.999, 5.0, None)?;
    bench.expect_unchanged("the refused claim", &before)
}

/// Each claim after an expiry raises the fence by exactly one.
pub fn claim_after_expiry_raises_the_fence_by_one(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.claim_expecting("j", "A", 100.0, 10.0, Some(1))?;
    bench.claim_expecting("j", "B", 200.0, 10.0, Some(2))?;
    bench.claim_expecting("j", "C", 300.0, 10.0, Some(3))?;
    bench.expect_row("three claims", held("j", "C", 3, 310.0))
}

/// A job that does not exist cannot be claimed, and claiming does not create it.
pub fn claim_of_a_missing_job_is_none_and_creates_nothing(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    let before = bench.rows()?;
    bench.claim_expecting("other", "A", 100.0, 10.0, None)?;
    bench.expect_unchanged("the claim of a missing job", &before)
}

/// A done job is never claimed again, even long after its lease ended.
pub fn claim_of_a_done_job_is_refused(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.store_row(&completed("j", "A", 1, 110.0, "r"))?;
    let before = bench.rows()?;
    bench.claim_expecting("j", "B", 500.0, 10.0, None)?;
    bench.expect_unchanged("the claim of a done job", &before)
}

/// A claim decides on its own job's lease and changes only its own row.
pub fn claim_touches_only_its_job(bench: &Bench) -> Checked {
    bench.init_with(&["a", "b"])?;
    bench.claim_expecting("a", "A", 100.0, 10.0, Some(1))?;
    expect_eq(
        "the row of b after a's claim",
        bench.row("b")?,
        Some(fresh("b")),
    )?;
    bench.claim_expecting("b", "B", 105.0, 10.0, Some(1))?;
    expect_eq(
        "the stored rows",
        bench.rows()?,
        vec![held("a", "A", 1, 110.0), held("b", "B", 1, 115.0)],
    )
}

/// A ttl of zero or less is an invalid argument, and nothing changes.
pub fn claim_with_ttl_zero_or_less_is_invalid(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    let before = bench.rows()?;
    for ttl in [0.0, -0.0, -5.0, -f64::MIN_POSITIVE] {
        expect_invalid(
            format!("claim(\"j\", \"A\", now=100, ttl={ttl})"),
            bench.store().claim(bench.db(), "j", "A", 100.0, ttl),
        )?;
    }
    bench.expect_unchanged("the refused claims", &before)
}

/// A clock or ttl that is not a finite number, or a lease end that
/// overflows, is an invalid argument, and nothing changes.
pub fn claim_with_non_finite_time_is_invalid(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    let before = bench.rows()?;
    for (now, ttl) in [
        (f64::NAN, 10.0),
        (f64::INFINITY, 10.0),
        (f64::NEG_INFINITY, 10.0),
        (100.0, f64::NAN),
        (100.0, f64::INFINITY),
        (f64::MAX, f64::MAX),
    ] {
        expect_invalid(
            format!("claim(\"j\", \"A\", now={now}, ttl={ttl})"),
            bench.store().claim(bench.db(), "j", "A", now, ttl),
        )?;
    }
    bench.expect_unchanged("the refused claims", &before)
}

/// A claim must name its owner and its job.
pub fn claim_with_an_empty_owner_or_id_is_invalid(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    let before = bench.rows()?;
    expect_invalid(
        "claim with owner \"\"",
        bench.store().claim(bench.db(), "j", "", 100.0, 10.0),
    )?;
    expect_invalid(
        "claim of job \"\"",
        bench.store().claim(bench.db(), "", "A", 100.0, 10.0),
    )?;
    bench.expect_unchanged("the refused claims", &before)
}

/// While another client holds the write lock past the busy timeout, a claim
/// gives up with a busy error that says so, and nothing changes.
pub fn claim_while_the_lock_is_held_is_a_busy_error(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    let before = bench.rows()?;
    let busy = Duration::from_millis(50);
    let answer = bench.while_locked(busy, Duration::from_secs(3), || {
        bench.store().claim(bench.db(), "j", "A", 100.0, 10.0)
    })?;
    expect_error(
        "claim while another client holds the write lock",
        answer,
        "error busy, saying the database stayed locked for 50 ms",
        |error| {
            matches!(error, StoreError::Busy { waited, .. } if *waited == busy)
                && error
                    .to_string()
                    .contains("stayed locked by another connection for 50 ms")
        },
    )?;
    bench.expect_unchanged("the claim that gave up", &before)
}

/// A ttl too small to change `now` at its precision would give a lease that
/// ends as it starts: an invalid argument, and nothing changes.
pub fn claim_with_a_ttl_lost_to_rounding_is_invalid(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    let before = bench.rows()?;
    expect_invalid(
        "claim(\"j\", \"A\", now=1e17, ttl=1)",
        bench.store().claim(bench.db(), "j", "A", 1e17, 1.0),
    )?;
    bench.expect_unchanged("the refused claim", &before)
}

/// A fence, once returned, survives a power cut: the claim's commit reached
/// the disk before the claim answered. After the cut and a restarted
/// worker's `init_db`, the next claim hands out fence 2, never fence 1
/// again. (With `synchronous=NORMAL` the commit is still in the disk's
/// write cache when the power goes: B gets fence 1 too.) The power cut is
/// simulated by the power-loss shim, which becomes this process's default
/// SQLite VFS (see `crate::vfs_shim`).
pub fn a_returned_fence_survives_a_power_cut(bench: &Bench) -> Checked {
    use crate::vfs_shim::{install, Disk, ShimError};
    let shim = |check: &str, error: ShimError| Failure {
        check: check.into(),
        expected: "the power-loss shim at work".into(),
        actual: error.to_string(),
        state: None,
    };
    install().map_err(|error| shim("installing the power-loss shim", error))?;
    bench.init_with(&["j"])?;
    // Every handle opened before the cut dies with the power.
    bench.let_go_of_the_file();
    let disk = Disk::track(bench.db()).map_err(|error| shim("tracking the database", error))?;
    bench.claim_expecting("j", "A", 100.0, 10.0, Some(1))?;
    disk.cut()
        .map_err(|error| shim("cutting the power after A's claim", error))?;
    bench.init()?;
    bench.claim_expecting("j", "B", 120.0, 10.0, Some(2))?;
    bench.expect_row("B's claim after the power cut", held("j", "B", 2, 130.0))
}

/// A fence, once returned, survives a crash of the server: the claim's
/// commit reached the server's disk (its write-ahead log) before the claim
/// answered. The server, one of the test's own, is killed with SIGKILL
/// right after A's claim, with its backends and no shutdown, and started
/// again; the next claim hands out fence 2, never fence 1 again. (With
/// `synchronous_commit = off` the commit is answered before its log is
/// written, and dies with the server: the server's WAL writer, which would
/// write it out within 200 ms, is paused, so that it dies every time.) Run only on a server: on a file,
/// [`a_returned_fence_survives_a_power_cut`] is its counterpart.
pub fn a_returned_fence_survives_a_server_crash(bench: &Bench) -> Checked {
    let server = |check: &str, actual: String| Failure {
        check: check.into(),
        expected: "a server of the test's own, crashed and started again".into(),
        actual,
        state: None,
    };
    let on_a_server = |answer: Option<Result<(), String>>, check: &str| match answer {
        Some(Ok(())) => Ok(()),
        Some(Err(error)) => Err(server(check, error)),
        None => Err(server(check, "this store is not on a server".into())),
    };
    on_a_server(
        bench.store().server_of_its_own(bench.db()),
        "starting a server of the test's own",
    )?;
    bench.init_with(&["j"])?;
    // Another client's write, whose commit waits for its log, puts the
    // table and the job on disk whatever the store's commits do: what the
    // crash may take is A's claim alone.
    bench.store_row(&fresh("j"))?;
    bench.claim_expecting("j", "A", 100.0, 10.0, Some(1))?;
    on_a_server(
        bench.store().crash_server(bench.db()),
        "crashing the server after A's claim",
    )?;
    bench.init()?;
    bench.claim_expecting("j", "B", 120.0, 10.0, Some(2))?;
    bench.expect_row("B's claim after the crash", held("j", "B", 2, 130.0))
}
