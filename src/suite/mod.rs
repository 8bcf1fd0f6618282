//! The shared contract suite: what every implementation of the store must do.
//!
//! The suite is grouped by the worksheet's steps and is cumulative: at step
//! N the tests of steps 1 to N are all in force. Each test takes the
//! implementation as a value (a [`Bench`] holding a [`JobStore`] and a fresh
//! database path), so the very same functions run under `cargo test` against
//! the library's store (`tests/contract/`) and inside `lab` against every
//! compiled mutant.
//!
//! Each step has its normal case, the input that must be rejected, and the
//! state left after a rejected call. Happy paths use times away from lease
//! boundaries, so that a boundary mutant is caught by the test aimed at that
//! boundary.
//!
//! [`JobStore`]: crate::job_store::JobStore

mod bench;
mod failure;
pub(crate) mod reader;
pub mod step1;
pub mod step2;
pub mod step3;
pub mod step4;
pub mod step5;
pub mod step6;
pub mod step7;
pub mod step8;

pub use bench::{completed, fresh, held, Bench};
pub use failure::{
    error_text, expect_eq, expect_error, expect_invalid, expect_rows, expect_that, row_diff,
    Answered, Checked, Failure, RowState,
};

mod descriptions {
    include!(concat!(env!("OUT_DIR"), "/test_descriptions.rs"));
}

/// What the test `name` checks, from its documentation in `src/suite/`,
/// on one line.
pub fn description(name: &str) -> Option<&'static str> {
    descriptions::DESCRIPTIONS
        .iter()
        .find(|(test, _)| *test == name)
        .map(|(_, text)| *text)
}

/// Whether the test `name` waits on purpose: for a lock another client
/// holds, a busy timeout to run out, or racing claims to queue behind a
/// held lock. Found by the build in the test's body, so it cannot go stale.
pub fn waits(name: &str) -> bool {
    descriptions::WAITING.contains(&name)
}

/// One test of the suite.
#[derive(Debug, Clone, Copy)]
pub struct Case {
    /// The test's name, which says what it observes.
    pub name: &'static str,
    /// The worksheet step it belongs to.
    pub step: u8,
    /// Whose promise it checks.
    pub tag: Tag,
    /// The test itself.
    pub run: fn(&Bench) -> Checked,
}

impl Case {
    /// Whether the test judges every implementation, a program over the
    /// protocol included: the worksheet's contract does; a promise of the
    /// Rust store's own ([`Tag::Reference`]) judges only the stores
    /// compiled into the lab. The one rule for "only contract tests judge
    /// a program".
    pub fn judges_programs(&self) -> bool {
        self.tag == Tag::Contract
    }
}

/// Whose promise a test checks, and so which implementations it judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tag {
    /// What the worksheet promises: every implementation must do it.
    Contract,
    /// A stricter promise of the Rust store's own (typed errors for a
    /// foreign table, a read-only file or a busy lock; empty ids refused;
    /// durability across a power cut; ...): beyond the worksheet, so it
    /// does not count against another implementation.
    Reference,
}

impl Tag {
    /// `contract` or `reference`.
    pub fn name(self) -> &'static str {
        match self {
            Tag::Contract => "contract",
            Tag::Reference => "reference",
        }
    }
}

/// Calls `$callback!` with the whole suite, as `module (step) [tag test,
/// ...]` groups, the tag `contract` or `reference` (see [`Tag`]). The
/// suite's table below and the `#[test]` functions of `tests/contract/`
/// (`contract.rs` and `handle.rs`) are all generated from this one list.
#[macro_export]
macro_rules! for_each_suite_step {
    ($callback:ident) => {
        $callback! {
            step1 (1) [
                contract init_db_creates_the_jobs_table,
                contract init_db_creates_exactly_the_worksheet_schema,
                reference init_db_puts_the_file_in_wal_mode,
                contract init_db_twice_keeps_jobs_and_fences,
                contract init_db_twice_keeps_the_fence_of_a_job_nobody_holds,
                reference init_db_refuses_a_jobs_table_with_other_columns,
                reference init_db_refuses_a_file_that_is_not_a_database,
                reference init_db_in_a_missing_folder_is_an_error,
                reference init_db_on_a_directory_is_an_error,
                reference init_db_with_a_bare_file_name_uses_the_current_folder,
                reference init_db_with_an_empty_path_is_invalid,
            ],
            step2 (2) [
                contract enqueue_adds_a_job_in_the_default_state,
                contract enqueue_of_an_existing_job_answers_false,
                contract enqueue_of_a_claimed_job_keeps_its_lease_and_fence,
                contract enqueue_of_a_done_job_keeps_its_result,
                reference enqueue_of_an_empty_id_is_invalid,
                reference enqueue_without_a_database_is_an_error,
                reference enqueue_on_a_read_only_file_is_an_error,
                reference enqueue_into_a_foreign_or_missing_jobs_table_is_refused,
            ],
            step3 (3) [
                contract state_of_a_missing_job_is_none,
                contract state_of_a_new_job_is_the_default_row,
                contract state_returns_every_stored_column,
                contract state_tells_jobs_apart,
                contract state_sees_what_another_client_wrote,
                reference state_of_an_empty_id_is_invalid,
            ],
            step4 (4) [
                contract claim_of_a_new_job_returns_fence_1,
                contract claim_of_a_held_job_is_refused,
                contract claim_at_exact_expiry_is_reassigned,
                contract claim_just_before_expiry_is_refused,
                contract claim_after_expiry_raises_the_fence_by_one,
                contract claim_of_a_missing_job_is_none_and_creates_nothing,
                contract claim_of_a_done_job_is_refused,
                contract claim_touches_only_its_job,
                contract claim_with_ttl_zero_or_less_is_invalid,
                reference claim_with_non_finite_time_is_invalid,
                reference claim_with_an_empty_owner_or_id_is_invalid,
                reference claim_while_the_lock_is_held_is_a_busy_error,
                reference claim_with_a_ttl_lost_to_rounding_is_invalid,
                reference a_returned_fence_survives_a_power_cut,
            ],
            step5 (5) [
                contract renew_by_the_holder_extends_the_lease,
                contract renew_at_exact_expiry_is_refused,
                contract renew_after_expiry_is_refused,
                contract renew_by_another_owner_is_refused,
                contract renew_with_a_stale_fence_is_refused,
                contract renew_of_a_done_job_is_refused,
                contract renew_touches_only_its_job,
                contract renew_of_a_missing_job_is_refused,
                contract renew_with_ttl_zero_or_less_is_invalid,
                reference renew_with_non_finite_time_or_an_empty_owner_is_invalid,
            ],
            step6 (6) [
                contract complete_by_the_holder_stores_the_result,
                contract stale_completion_after_takeover_is_refused,
                contract stale_completion_while_the_new_owner_works_is_refused,
                contract completion_with_a_stale_fence_of_the_same_owner_is_refused,
                contract second_completion_is_refused_and_keeps_the_result,
                contract completion_at_exact_expiry_is_refused,
                contract completion_after_expiry_is_refused_even_unclaimed,
                contract completion_by_another_owner_is_refused,
                contract completion_touches_only_its_job,
                reference completion_with_an_invalid_time_is_invalid,
            ],
            step7 (7) [
                contract release_by_the_holder_frees_the_lease_and_keeps_the_fence,
                contract claim_after_release_gets_the_next_fence,
                contract second_release_is_refused,
                contract release_by_another_owner_is_refused,
                contract release_with_a_stale_fence_is_refused,
                contract release_of_a_done_job_is_refused,
                contract release_touches_only_its_job,
                reference release_with_an_empty_owner_or_id_is_invalid,
            ],
            step8 (8) [
                contract claim_many_answers_every_owner_in_order,
                contract claim_many_on_a_held_job_gives_no_fence,
                contract claim_many_with_no_owners_answers_an_empty_list,
                contract claim_many_has_one_winner_under_contention,
                contract claims_queued_behind_a_writer_have_one_winner,
                contract claim_many_with_more_owners_than_threads,
                contract claim_many_with_an_invalid_ttl_is_invalid_and_claims_nothing,
                reference claim_many_with_an_empty_owner_is_invalid_and_claims_nothing,
            ],
        }
    };
}

macro_rules! tag {
    (contract) => {
        Tag::Contract
    };
    (reference) => {
        Tag::Reference
    };
}

macro_rules! case_table {
    ($($module:ident ($step:literal) [$($tag:ident $name:ident),* $(,)?]),* $(,)?) => {
        /// Every test of the suite, in step order.
        pub static CASES: &[Case] = &[
            $($(Case { name: stringify!($name), step: $step, tag: tag!($tag), run: $module::$name },)*)*
        ];
    };
}

for_each_suite_step!(case_table);

/// The contract tests that only mean something for a file, each with why:
/// on a server (the store on PostgreSQL) they are not run, nor counted.
/// (Every `reference` test is a promise of the Rust store on its file, and
/// none is run on a server either.)
pub const ON_A_FILE_ONLY: [(&str, &str); 1] = [(
    "init_db_creates_exactly_the_worksheet_schema",
    "it reads SQLite's own description of the table (PRAGMA table_info), in SQLite's type names",
)];

/// The tests that can only be asked of a store in the lab's own process,
/// each with why: a program (the Python store, a student's own) is never
/// asked them, nor counted for them, nor described as failing them.
pub const IN_THE_LAB_ONLY: [(&str, &str); 1] = [(
    "init_db_with_a_bare_file_name_uses_the_current_folder",
    "a program's current folder is its own, which the test cannot choose",
)];

/// The tests a program (a store over the lab's protocol) runs, in step
/// order: the suite less those only a store in the lab's process can be
/// asked ([`IN_THE_LAB_ONLY`]).
pub fn for_programs() -> Vec<&'static Case> {
    CASES
        .iter()
        .filter(|case| !IN_THE_LAB_ONLY.iter().any(|(name, _)| *name == case.name))
        .collect()
}

/// The number of the test `name` as `lab tests` and every screen number
/// it (its place in [`CASES`], from 1), whatever tests a store runs; 0 for
/// a test that is not in the suite.
pub fn number(name: &str) -> usize {
    CASES
        .iter()
        .position(|case| case.name == name)
        .map_or(0, |at| at + 1)
}

/// The tests that only mean something on a server, beyond the worksheet:
/// run on a server besides the contract, never on a file (where each has a
/// counterpart of its own, which its documentation names).
pub static ON_A_SERVER_ONLY: &[Case] = &[Case {
    name: "a_returned_fence_survives_a_server_crash",
    step: 4,
    tag: Tag::Reference,
    run: step4::a_returned_fence_survives_a_server_crash,
}];

/// The tests a store on a server runs, in step order: the contract's,
/// less those that only mean something for a file ([`ON_A_FILE_ONLY`]),
/// and those that only mean something on a server ([`ON_A_SERVER_ONLY`]).
pub fn on_a_server() -> Vec<&'static Case> {
    let mut cases: Vec<&'static Case> = CASES
        .iter()
        .filter(|case| {
            case.tag == Tag::Contract && !ON_A_FILE_ONLY.iter().any(|(name, _)| *name == case.name)
        })
        .chain(ON_A_SERVER_ONLY)
        .collect();
    // Stable: each step's server tests come after its contract tests.
    cases.sort_by_key(|case| case.step);
    cases
}

/// The test with this name, if any.
pub fn case(name: &str) -> Option<&'static Case> {
    CASES
        .iter()
        .chain(ON_A_SERVER_ONLY)
        .find(|case| case.name == name)
}

/// The tests in force at step `step`: those of steps 1 to `step`.
pub fn cases_through(step: u8) -> impl Iterator<Item = &'static Case> {
    CASES.iter().filter(move |case| case.step <= step)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store on a server runs the contract less the file's own tests,
    /// and the server's own, in step order; a worker finds each by name,
    /// and a file never runs the server's.
    #[test]
    fn a_server_runs_the_contract_less_the_file_s_tests_and_its_own() {
        let cases = on_a_server();
        let names: Vec<&str> = cases.iter().map(|case| case.name).collect();
        for (name, _) in ON_A_FILE_ONLY {
            assert!(!names.contains(&name), "{name}");
        }
        for own in ON_A_SERVER_ONLY {
            assert!(names.contains(&own.name), "{}", own.name);
            assert_eq!(case(own.name).map(|case| case.step), Some(own.step));
            assert!(!CASES.iter().any(|case| case.name == own.name));
            assert!(description(own.name).is_some(), "{}", own.name);
        }
        assert!(cases.windows(2).all(|pair| pair[0].step <= pair[1].step));
        let contract = CASES.iter().filter(|case| case.tag == Tag::Contract);
        assert_eq!(
            cases.len(),
            contract.count() - ON_A_FILE_ONLY.len() + ON_A_SERVER_ONLY.len()
        );
        assert!(cases.iter().all(|case| case.tag == Tag::Contract
            || ON_A_SERVER_ONLY.iter().any(|own| own.name == case.name)));
        let crash = names
            .iter()
            .position(|name| *name == "a_returned_fence_survives_a_server_crash")
            .unwrap();
        assert_eq!(cases[crash - 1].step, 4);
        assert_eq!(cases[crash + 1].step, 5);
    }

    /// The tests that hold a lock against the store or race claims behind
    /// one wait; the others do not; every one named is a test.
    #[test]
    fn the_tests_that_wait_are_the_lock_and_race_tests() {
        for name in [
            "claim_while_the_lock_is_held_is_a_busy_error",
            "claims_queued_behind_a_writer_have_one_winner",
            "claim_many_with_more_owners_than_threads",
        ] {
            assert!(waits(name), "{name}");
        }
        assert!(!waits("init_db_creates_the_jobs_table"));
        assert!(!waits("stale_completion_after_takeover_is_refused"));
        assert!(descriptions::WAITING
            .iter()
            .all(|name| case(name).is_some()));
    }

    #[test]
    fn every_test_says_what_it_checks() {
        for case in CASES {
            let text = description(case.name)
                .unwrap_or_else(|| panic!("{} has no documentation in src/suite/", case.name));
            assert!(text.ends_with('.'), "{}: {text}", case.name);
        }
        assert_eq!(
            description("enqueue_of_an_existing_job_answers_false"),
            Some("Enqueueing an id that exists answers `false`.")
        );
        assert_eq!(description("no_such_test"), None);
    }
}
