//! The shared contract suite: what every implementation of the store must do.
//!
//! The suite is grouped by the worksheet's steps and is cumulative: at step
//! N the tests of steps 1 to N are all in force. Each test takes the
//! implementation as a value (a [`Bench`] holding a [`JobStore`] and a fresh
//! database path), so the very same functions run under `cargo test` against
//! the library's store (`tests/contract.rs`) and inside `lab` against every
//! compiled mutant.
//!
//! Each step has its normal case, the input that must be rejected, and the
//! state left after a rejected call. Happy paths use times away from lease
//! boundaries, so that a boundary mutant is caught by the test aimed at that
//! boundary.
//!
//! [`JobStore`]: crate::job_store::JobStore

mod check;
pub mod step1;
pub mod step2;
pub mod step3;
pub mod step4;
pub mod step5;
pub mod step6;
pub mod step7;
pub mod step8;

pub use check::{
    completed, expect_eq, expect_error, expect_invalid, expect_that, fresh, held, Answered, Bench,
    Checked, Failure,
};

/// One test of the suite.
#[derive(Debug, Clone, Copy)]
pub struct Case {
    /// The test's name, which says what it observes.
    pub name: &'static str,
    /// The worksheet step it belongs to.
    pub step: u8,
    /// The test itself.
    pub run: fn(&Bench) -> Checked,
}

/// Calls `$callback!` with the whole suite, as `module (step) [test, ...]`
/// groups. The suite's table below and the `#[test]` functions of
/// `tests/contract.rs` are both generated from this one list.
#[macro_export]
macro_rules! for_each_suite_step {
    ($callback:ident) => {
        $callback! {
            step1 (1) [
                init_db_creates_the_jobs_table,
                init_db_creates_exactly_the_worksheet_schema,
                init_db_twice_keeps_jobs_and_fences,
                init_db_refuses_a_jobs_table_with_other_columns,
                init_db_refuses_a_file_that_is_not_a_database,
                init_db_in_a_missing_folder_is_an_error,
                init_db_on_a_directory_is_an_error,
                init_db_with_a_bare_file_name_uses_the_current_folder,
                init_db_with_an_empty_path_is_invalid,
            ],
            step2 (2) [
                enqueue_adds_a_job_in_the_default_state,
                enqueue_of_an_existing_job_answers_false,
                enqueue_of_a_claimed_job_keeps_its_lease_and_fence,
                enqueue_of_a_done_job_keeps_its_result,
                enqueue_of_an_empty_id_is_invalid,
                enqueue_without_a_database_is_an_error,
                enqueue_on_a_read_only_file_is_an_error,
                enqueue_into_a_foreign_or_missing_jobs_table_is_refused,
            ],
            step3 (3) [
                state_of_a_missing_job_is_none,
                state_of_a_new_job_is_the_default_row,
                state_returns_every_stored_column,
                state_tells_jobs_apart,
                state_sees_what_another_client_wrote,
                state_of_an_empty_id_is_invalid,
            ],
            step4 (4) [
                claim_of_a_new_job_returns_fence_1,
                claim_of_a_held_job_is_refused,
                claim_at_exact_expiry_is_reassigned,
                claim_just_before_expiry_is_refused,
                claim_after_expiry_raises_the_fence_by_one,
                claim_of_a_missing_job_is_none_and_creates_nothing,
                claim_of_a_done_job_is_refused,
                claim_touches_only_its_job,
                claim_with_ttl_zero_or_less_is_invalid,
                claim_with_non_finite_time_is_invalid,
                claim_with_an_empty_owner_or_id_is_invalid,
                claim_while_the_lock_is_held_is_a_busy_error,
                claim_with_a_ttl_lost_to_rounding_is_invalid,
                a_returned_fence_survives_a_power_cut,
            ],
            step5 (5) [
                renew_by_the_holder_extends_the_lease,
                renew_at_exact_expiry_is_refused,
                renew_after_expiry_is_refused,
                renew_by_another_owner_is_refused,
                renew_with_a_stale_fence_is_refused,
                renew_of_a_done_job_is_refused,
                renew_touches_only_its_job,
                renew_of_a_missing_job_is_refused,
                renew_with_an_invalid_ttl_or_time_is_invalid,
            ],
            step6 (6) [
                complete_by_the_holder_stores_the_result,
                stale_completion_after_takeover_is_refused,
                completion_with_a_stale_fence_of_the_same_owner_is_refused,
                second_completion_is_refused_and_keeps_the_result,
                completion_at_exact_expiry_is_refused,
                completion_after_expiry_is_refused_even_unclaimed,
                completion_by_another_owner_is_refused,
                completion_touches_only_its_job,
                completion_with_an_invalid_time_is_invalid,
            ],
            step7 (7) [
                release_by_the_holder_frees_the_lease_and_keeps_the_fence,
                claim_after_release_gets_the_next_fence,
                second_release_is_refused,
                release_by_another_owner_is_refused,
                release_with_a_stale_fence_is_refused,
                release_of_a_done_job_is_refused,
                release_touches_only_its_job,
                release_with_an_empty_owner_or_id_is_invalid,
            ],
            step8 (8) [
                claim_many_answers_every_owner_in_order,
                claim_many_on_a_held_job_gives_no_fence,
                claim_many_with_no_owners_answers_an_empty_list,
                claim_many_has_one_winner_under_contention,
                claims_queued_behind_a_writer_have_one_winner,
                claim_many_with_more_owners_than_threads,
                claim_many_with_an_invalid_ttl_is_invalid_and_claims_nothing,
            ],
        }
    };
}

macro_rules! case_table {
    ($($module:ident ($step:literal) [$($name:ident),* $(,)?]),* $(,)?) => {
        /// Every test of the suite, in step order.
        pub static CASES: &[Case] = &[
            $($(Case { name: stringify!($name), step: $step, run: $module::$name },)*)*
        ];
    };
}

for_each_suite_step!(case_table);

/// The test with this name, if any.
pub fn case(name: &str) -> Option<&'static Case> {
    CASES.iter().find(|case| case.name == name)
}

/// The tests in force at step `step`: those of steps 1 to `step`.
pub fn cases_through(step: u8) -> impl Iterator<Item = &'static Case> {
    CASES.iter().filter(move |case| case.step <= step)
}
