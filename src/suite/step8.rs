//! Step 8. There is one winner among concurrent claims: `claim_many` races
//! one claim per owner and answers every owner, in order.

use super::bench::*;
use super::failure::*;
use crate::job::Fence;

/// Checks the answers of racing claims (`claim_many`'s, or `claim`'s on
/// threads of their own, as `race` says): one entry per owner, exactly one
/// fence, and the stored owner is the one whose entry holds it.
fn expect_one_winner(
    bench: &Bench,
    job: &str,
    owners: &[&str],
    (race, answers): (&str, &[Option<Fence>]),
    fence: i64,
) -> Checked {
    expect_eq(
        format!(
            "the number of answers of {race} with {} owners",
            owners.len()
        ),
        answers.len(),
        owners.len(),
    )?;
    let winners: Vec<usize> = (0..answers.len())
        .filter(|&i| answers[i].is_some())
        .collect();
    expect_that(
        format!("the owners that got a fence from {race} on {job:?}"),
        winners.len() == 1,
        "exactly one owner with a fence",
        crate::operation::race_text(owners, answers),
    )?;
    let winner = winners[0];
    expect_eq(
        format!("the winner's fence on {job:?}"),
        answers[winner],
        Some(Fence(fence)),
    )?;
    let row = bench.row(job)?;
    expect_eq(
        format!("the stored owner and fence of {job:?}"),
        row.map(|row| (row.owner, row.fence)),
        Some((Some(owners[winner].to_string()), Fence(fence))),
    )
}

/// Every owner gets an answer, in input order: one fence, the rest `None`.
/// The claims queue behind another client's write and race when it ends.
pub fn claim_many_answers_every_owner_in_order(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    let owners = ["A", "B", "C", "D"];
    let answers = bench.claim_many_behind_a_held_lock("j", &owners, 100.0, 10.0)?;
    expect_one_winner(bench, "j", &owners, ("claim_many", &answers), 1)
}

/// A job whose lease is held gives every owner `None`, and stays as it was.
pub fn claim_many_on_a_held_job_gives_no_fence(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    bench.claim_expecting("j", "X", 100.0, 10.0, Some(1))?;
    let before = bench.rows()?;
    bench.expect_refused(
        "claim_many(\"j\", [A, B, C]) while X holds the lease",
        bench.claim_many("j", &["A", "B", "C"], 105.0, 10.0)?,
        vec![None, None, None],
        "claim_many on a held job",
        &before,
    )
}

/// No owners, no claims: an empty list, and nothing changes.
pub fn claim_many_with_no_owners_answers_an_empty_list(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    let before = bench.rows()?;
    bench.expect_refused(
        "claim_many with no owners",
        bench.claim_many("j", &[], 100.0, 10.0)?,
        vec![],
        "claim_many with no owners",
        &before,
    )
}

/// 16 claims queued behind another client's write race for one new job
/// when it ends: exactly one wins.
pub fn claim_many_has_one_winner_under_contention(bench: &Bench) -> Checked {
    let owners: Vec<String> = (0..16).map(|i| format!("worker-{i:02}")).collect();
    let owners: Vec<&str> = owners.iter().map(String::as_str).collect();
    bench.init_with(&["j"])?;
    let answers = bench.claim_many_behind_a_held_lock("j", &owners, 100.0, 10.0)?;
    expect_one_winner(bench, "j", &owners, ("claim_many", &answers), 1)
}

/// 16 claims for one new job, each on its own thread and connection, all
/// made while another client holds the write lock, so that every claim
/// reaches the job before any of them can take the lock. A claim that
/// looks the lease up before it locks lets them all see the job free and
/// all win; exactly one may.
pub fn claims_queued_behind_a_writer_have_one_winner(bench: &Bench) -> Checked {
    let owners: Vec<String> = (0..16).map(|i| format!("queued-{i:02}")).collect();
    let owners: Vec<&str> = owners.iter().map(String::as_str).collect();
    bench.init_with(&["j"])?;
    let answers = bench.claims_behind_a_held_lock("j", &owners, 100.0, 10.0)?;
    expect_one_winner(
        bench,
        "j",
        &owners,
        ("claims on threads of their own", &answers),
        1,
    )
}

/// More owners than threads: every owner still gets its answer, and one
/// wins (the claims queue behind another client's write, as above).
pub fn claim_many_with_more_owners_than_threads(bench: &Bench) -> Checked {
    let owners: Vec<String> = (0..=crate::store::MAX_CLAIM_THREADS)
        .map(|i| format!("w{i}"))
        .collect();
    let owners: Vec<&str> = owners.iter().map(String::as_str).collect();
    bench.init_with(&["j"])?;
    let answers = bench.claim_many_behind_a_held_lock("j", &owners, 100.0, 10.0)?;
    expect_one_winner(bench, "j", &owners, ("claim_many", &answers), 1)
}

/// An invalid ttl is refused before any claim runs: nothing changes.
pub fn claim_many_with_an_invalid_ttl_is_invalid_and_claims_nothing(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    let before = bench.rows()?;
    expect_invalid(
        "claim_many(\"j\", [A, B], now=100, ttl=0)",
        bench
            .store()
            .claim_many(bench.db(), "j", &["A", "B"], 100.0, 0.0),
    )?;
    bench.expect_unchanged("the refused claim_many", &before)
}

/// An empty owner is refused before any claim runs: nothing changes.
pub fn claim_many_with_an_empty_owner_is_invalid_and_claims_nothing(bench: &Bench) -> Checked {
    bench.init_with(&["j"])?;
    let before = bench.rows()?;
    expect_invalid(
        "claim_many(\"j\", [A, \"\"], now=100, ttl=10)",
        bench
            .store()
            .claim_many(bench.db(), "j", &["A", ""], 100.0, 10.0),
    )?;
    bench.expect_unchanged("the refused claim_many", &before)
}
