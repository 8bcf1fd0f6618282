//! The fencing properties, checked on histories made for each.
use super::*;
use crate::chaos::testing::{claim, complete, enqueue, record, row};

fn properties(record: &Record) -> Vec<Property> {
    check(record)
        .iter()
        .map(|violation| violation.property)
        .collect()
}

/// The longest valid prefix is said in words, one call in the
/// singular and none as none.
#[test]
fn the_longest_valid_prefix_is_said_in_words() {
    let calls = vec![
        enqueue(0),
        claim(0, 10, 1.0, Some(1)),
        claim(1, 20, 5.0, Some(2)),
    ];
    let judged = |breaking: Option<usize>| {
        crate::chaos::judge::Judgement::with(
            record(calls.clone(), vec![row("w2", 2, false)]),
            breaking
                .map(|call| Violation {
                    property: Property::FenceTwice,
                    step: 4,
                    job: Some("j".into()),
                    calls: vec![call],
                    text: String::new(),
                })
                .into_iter()
                .collect(),
            crate::chaos::linearize::check(&calls, 1000),
        )
    };
    assert_eq!(
        judged(Some(0)).valid_prefix_text(),
        "none of this run's calls"
    );
    assert_eq!(
        judged(Some(1)).valid_prefix_text(),
        "the first call of this run"
    );
    assert_eq!(
        judged(Some(2)).valid_prefix_text(),
        "the first 2 calls of this run"
    );
    assert_eq!(
        judged(None).valid_prefix_text(),
        "the first 3 calls of this run"
    );
}

#[test]
fn a_sound_history_breaks_nothing() {
    let calls = vec![
        enqueue(0),
        claim(0, 10, 1.0, Some(1)),
        claim(1, 20, 5.0, Some(2)),
        complete(0, 30, 1, false),
        complete(1, 40, 2, true),
    ];
    assert_eq!(properties(&record(calls, vec![row("w2", 2, true)])), vec![]);
}

#[test]
fn a_fence_handed_out_twice_is_found() {
    let calls = vec![
        enqueue(0),
        claim(0, 10, 1.0, Some(1)),
        claim(1, 20, 5.0, Some(1)),
    ];
    let found = check(&record(calls, vec![row("w2", 1, false)]));
    assert_eq!(found[0].property, Property::FenceTwice);
    assert_eq!(found[0].calls, vec![1, 2]);
}

#[test]
fn a_fence_going_down_is_found() {
    let calls = vec![
        enqueue(0),
        claim(0, 10, 1.0, Some(3)),
        claim(1, 20, 5.0, Some(2)),
    ];
    assert_eq!(
        properties(&record(calls, vec![row("w2", 2, false)])),
        vec![Property::FenceDown]
    );
}

#[test]
fn a_completion_with_a_fence_never_handed_to_its_worker_breaks_the_contract_not_fencing() {
    // w1 holds fence 1; w2, never handed it, completes with it.
    let calls = vec![
        enqueue(0),
        claim(0, 10, 1.0, Some(1)),
        complete(1, 30, 1, true),
    ];
    let mut stored = row("w2", 1, true);
    stored.owner = Some("w1".into());
    let found = check(&record(calls, vec![stored]));
    assert_eq!(found[0].property, Property::UnhandedFence);
    assert_eq!(
        found[0].text,
        "w2's completion with fence 1 was accepted, but no claim handed w2 that fence: \
         this store takes the token alone as the credential, whoever sends it"
    );
    assert!(!Property::UnhandedFence.breaks_fencing());
    for fencing in [
        Property::FenceTwice,
        Property::FenceDown,
        Property::StaleCompletion,
        Property::DoneChanged,
    ] {
        assert!(fencing.breaks_fencing(), "{fencing:?}");
    }
    for contract in [
        Property::WrongResult,
        Property::JobLost,
        Property::Integrity,
        Property::CallFailed,
        Property::NotLinearizable,
    ] {
        assert!(!contract.breaks_fencing(), "{contract:?}");
    }
}

/// A finding's headline fits one line of the text report's 80 columns
/// on a job of the first hundred, and is filled to them on any.
#[test]
fn every_headline_fits_80_columns() {
    for property in [
        Property::FenceTwice,
        Property::FenceDown,
        Property::StaleCompletion,
        Property::UnhandedFence,
        Property::WrongResult,
        Property::DoneChanged,
        Property::JobLost,
        Property::Integrity,
        Property::CallFailed,
        Property::NotLinearizable,
    ] {
        let headline = |job: &str| {
            crate::terminal::fill(
                &format!("✗ {} (step {}), on {job}", property.text(), property.step()),
                80,
                "",
                "  ",
            )
        };
        assert_eq!(
            headline("job-99").lines().count(),
            1,
            "{}",
            headline("job-99")
        );
        let long = headline("job-123456");
        assert!(
            long.lines().all(|line| line.chars().count() <= 80),
            "{long}"
        );
    }
}

#[test]
fn a_stale_completion_and_the_result_it_leaves_are_found() {
    let calls = vec![
        enqueue(0),
        claim(0, 10, 1.0, Some(1)),
        claim(1, 20, 5.0, Some(2)),
        complete(0, 30, 1, true),
    ];
    let mut stored = row("w1", 2, true);
    stored.result = Some("w1/1".into());
    let found = properties(&record(calls, vec![stored]));
    assert_eq!(found, vec![Property::StaleCompletion]);
    let calls = vec![
        enqueue(0),
        claim(0, 10, 1.0, Some(1)),
        complete(0, 30, 1, true),
    ];
    assert_eq!(
        properties(&record(calls, vec![row("w1", 1, false)])),
        vec![Property::WrongResult]
    );
}

#[test]
fn a_done_job_changing_and_a_lost_job_are_found() {
    let calls = vec![
        enqueue(0),
        claim(0, 10, 1.0, Some(1)),
        complete(0, 20, 1, true),
        claim(1, 30, 9.0, Some(2)),
    ];
    let found = properties(&record(calls.clone(), vec![row("w1", 1, true)]));
    assert_eq!(found, vec![Property::DoneChanged]);
    assert_eq!(
        properties(&record(calls[..1].to_vec(), vec![])),
        vec![Property::JobLost]
    );
}

/// A lost job is found in the file at the end: the timeline shows its
/// calls after the enqueue too, one of which took the row away, and
/// a shrink keeps the calls through the run's end.
#[test]
fn a_lost_job_shows_every_call_on_it() {
    let calls = vec![
        enqueue(0),
        claim(0, 10, 1.0, Some(1)),
        complete(0, 20, 1, true),
        claim(1, 30, 9.0, None),
    ];
    let judged = crate::chaos::judge::Judgement::of(record(calls, vec![]));
    assert_eq!(judged.culprits(), vec![0]);
    assert_eq!(judged.shown(), vec![0, 1, 2, 3]);
    assert_eq!(judged.not_shown(), 0);
}

/// A claim whose worker was killed may have taken the fence the stored
/// row shows: an unknown outcome is never counted on.
#[test]
fn an_unknown_call_explains_what_it_may_have_done() {
    let mut killed = complete(0, 30, 1, true);
    killed.returned = Returned::Unknown;
    killed.ended = None;
    let calls = vec![enqueue(0), claim(0, 10, 1.0, Some(1)), killed];
    assert_eq!(properties(&record(calls, vec![row("w1", 1, true)])), vec![]);
}

#[test]
fn a_damaged_file_is_found() {
    let mut damaged = record(vec![], vec![]);
    damaged.integrity = "*** in database main ***".into();
    assert_eq!(properties(&damaged), vec![Property::Integrity]);
}

/// Every property, in the order of [`Property`].
const PROPERTIES: [Property; 10] = [
    Property::FenceTwice,
    Property::FenceDown,
    Property::StaleCompletion,
    Property::UnhandedFence,
    Property::WrongResult,
    Property::DoneChanged,
    Property::JobLost,
    Property::Integrity,
    Property::CallFailed,
    Property::NotLinearizable,
];

/// `call` as it is recorded when its worker is killed during it: no
/// answer, no end.
fn killed(mut call: Call) -> Call {
    call.returned = Returned::Unknown;
    call.ended = None;
    call
}

/// `worker`'s renewal of `j` with `fence` at `at`, answered `answer`.
fn renew(worker: usize, at: u64, fence: i64, answer: bool) -> Call {
    crate::chaos::testing::call(
        worker,
        at,
        Operation::Renew {
            job_id: "j".into(),
            owner: crate::chaos::plan::owner(worker),
            fence: Fence(fence),
            now: 2.0,
            ttl: 2.0,
        },
        Returned::Answer(Answer::Bool(answer)),
    )
}

/// `worker`'s release of `j` with `fence` at `at`, answered `answer`.
fn release(worker: usize, at: u64, fence: i64, answer: bool) -> Call {
    crate::chaos::testing::call(
        worker,
        at,
        Operation::Release {
            job_id: "j".into(),
            owner: crate::chaos::plan::owner(worker),
            fence: Fence(fence),
        },
        Returned::Answer(Answer::Bool(answer)),
    )
}

/// Each finding belongs to the worksheet step whose contract it breaks:
/// the fences to claim (4), the completion's rules to complete (6), a
/// lost job to enqueue (2), a damaged file and a failed call to the
/// first (1), and answers no order explains to claim (4).
#[test]
fn each_property_belongs_to_the_step_whose_contract_it_breaks() {
    let steps: Vec<u8> = PROPERTIES.iter().map(|property| property.step()).collect();
    assert_eq!(steps, [4, 4, 6, 6, 6, 6, 2, 1, 1, 4]);
}

/// Each property is said in words of its own: no two findings read
/// alike, and none is blank.
#[test]
fn each_property_is_said_in_words_of_its_own() {
    let texts: std::collections::BTreeSet<&str> =
        PROPERTIES.iter().map(|property| property.text()).collect();
    assert_eq!(texts.len(), PROPERTIES.len(), "{texts:?}");
    assert!(texts.iter().all(|text| !text.trim().is_empty()));
}

/// A fence handed out twice names who was handed it: one worker twice,
/// or the two workers.
#[test]
fn a_fence_handed_out_twice_names_who_was_handed_it() {
    let twice = |second: usize| {
        let calls = vec![
            enqueue(0),
            claim(0, 10, 1.0, Some(1)),
            claim(second, 20, 5.0, Some(1)),
        ];
        check(&record(calls, vec![row("w1", 1, false)]))
    };
    assert_eq!(twice(1)[0].text, "w1 and w2 were both handed fence 1");
    assert_eq!(twice(0)[0].text, "w1 was handed fence 1 twice");
}

/// Two calls whose intervals only touch (one ended at the nanosecond the
/// other began) may have run in either order, as the model check takes
/// them: a lower fence handed to a claim that began as the higher one's
/// ended has not gone down, a completion that began as a newer claim
/// ended is not stale, and a claim that began as the completion ended
/// has not changed a done job.
#[test]
fn calls_whose_intervals_only_touch_may_have_run_in_either_order() {
    // `claim(_, at, ..)` and `complete(_, at, ..)` end at `at + 1`.
    let lower = vec![
        enqueue(0),
        claim(0, 10, 1.0, Some(3)),
        claim(1, 11, 5.0, Some(2)),
    ];
    assert_eq!(
        properties(&record(lower.clone(), vec![row("w2", 2, false)])),
        vec![]
    );
    let mut after = lower;
    after[2].began = 12;
    assert_eq!(
        properties(&record(after, vec![row("w2", 2, false)])),
        vec![Property::FenceDown]
    );

    let late = |began| {
        vec![
            enqueue(0),
            claim(0, 10, 1.0, Some(1)),
            claim(1, 20, 5.0, Some(2)),
            complete(0, began, 1, true),
        ]
    };
    assert_eq!(
        properties(&record(late(21), vec![row("w1", 1, true)])),
        vec![]
    );
    assert_eq!(
        properties(&record(late(22), vec![row("w1", 1, true)])),
        vec![Property::StaleCompletion]
    );

    let claim_after_done = |began| {
        vec![
            enqueue(0),
            claim(0, 10, 1.0, Some(1)),
            complete(0, 20, 1, true),
            claim(1, began, 9.0, Some(2)),
        ]
    };
    assert_eq!(
        properties(&record(claim_after_done(21), vec![row("w1", 1, true)])),
        vec![]
    );
    assert_eq!(
        properties(&record(claim_after_done(22), vec![row("w1", 1, true)])),
        vec![Property::DoneChanged]
    );
}

/// Once the job is done, an accepted renewal or release changes it, as
/// a claim handed a fence does; a refused one changes nothing.
#[test]
fn a_renewal_or_release_accepted_after_the_completion_changes_a_done_job() {
    for (late, changed) in [
        (renew(0, 30, 1, true), true),
        (release(0, 30, 1, true), true),
        (renew(0, 30, 1, false), false),
        (release(0, 30, 1, false), false),
    ] {
        let calls = vec![
            enqueue(0),
            claim(0, 10, 1.0, Some(1)),
            complete(0, 20, 1, true),
            late.clone(),
        ];
        let found = check(&record(calls, vec![row("w1", 1, true)]));
        let expected: Vec<Violation> = if changed {
            vec![Violation {
                property: Property::DoneChanged,
                step: 6,
                job: Some("j".into()),
                calls: vec![2, 3],
                text: format!("{} of the done job was accepted", late.operation.name()),
            }]
        } else {
            Vec::new()
        };
        assert_eq!(found, expected, "{late:?}");
    }
}

/// A claim of unknown outcome may have handed its worker the fence that
/// worker then completes with; another worker's unknown claim handed
/// this one nothing.
#[test]
fn only_the_workers_own_unknown_claim_explains_its_unhanded_fence() {
    let completed_after = |claimer: usize| {
        let calls = vec![
            enqueue(0),
            killed(claim(claimer, 10, 1.0, None)),
            complete(0, 30, 1, true),
        ];
        properties(&record(calls, vec![row("w1", 1, true)]))
    };
    assert_eq!(completed_after(0), vec![]);
    assert_eq!(completed_after(1), vec![Property::UnhandedFence]);
}

/// A lost job's finding names the enqueue that added the job, not one
/// answered `false` that found it there; and when the rows could not
/// be read at the end, that is the finding, not a job lost.
#[test]
fn a_lost_job_is_named_by_the_enqueue_that_added_it_and_only_when_the_rows_were_read() {
    let refused = crate::chaos::testing::call(
        1,
        0,
        Operation::Enqueue { job_id: "j".into() },
        Returned::Answer(Answer::Bool(false)),
    );
    let found = check(&record(vec![refused, enqueue(1)], vec![]));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].property, Property::JobLost);
    assert_eq!(found[0].calls, vec![1]);
    assert_eq!(
        found[0].text,
        "the job was added, and the file no longer holds it"
    );

    let mut unread = record(vec![enqueue(0)], vec![]);
    unread.rows = Err("disk I/O error".into());
    assert_eq!(properties(&unread), vec![Property::Integrity]);
}

/// With no completion accepted, a stored row that is done, or that
/// holds a result, is a wrong result, whichever of the two it shows;
/// a completion of unknown outcome explains only a done row holding
/// its own result.
#[test]
fn a_row_done_or_holding_a_result_with_no_completion_accepted_is_wrong() {
    let calls = vec![enqueue(0), claim(0, 10, 1.0, Some(1))];
    let mut done_only = row("w1", 1, true);
    done_only.result = None;
    let mut result_only = row("w1", 1, false);
    result_only.result = Some("w1/1".into());
    for stored in [done_only, result_only.clone()] {
        let found = check(&record(calls.clone(), vec![stored.clone()]));
        assert_eq!(found.len(), 1, "{stored:?}: {found:?}");
        assert_eq!(found[0].property, Property::WrongResult);
    }
    assert_eq!(
        check(&record(calls.clone(), vec![result_only]))[0].text,
        "the stored row holds result \"w1/1\" (done: false), but no completion was accepted"
    );

    let mut with_killed = calls;
    with_killed.push(killed(complete(0, 30, 1, true)));
    let mut other_result = row("w1", 1, true);
    other_result.result = Some("w2/7".into());
    let mut not_done = row("w1", 1, false);
    not_done.result = Some("w1/1".into());
    for stored in [other_result, not_done] {
        assert_eq!(
            properties(&record(with_killed.clone(), vec![stored.clone()])),
            vec![Property::WrongResult],
            "{stored:?}"
        );
    }
    assert_eq!(
        properties(&record(with_killed, vec![row("w1", 1, true)])),
        vec![]
    );
}

/// A stored row that is not done with the first accepted completion's
/// result is a wrong result, which names that completion and the later
/// accepted ones whose result the row holds (not a refused one).
#[test]
fn a_wrong_result_names_the_first_accepted_completion_and_the_one_stored() {
    let calls = vec![
        enqueue(0),
        claim(0, 10, 1.0, Some(1)),
        complete(0, 20, 1, true),
        claim(1, 30, 9.0, Some(2)),
        complete(1, 40, 2, true),
        complete(1, 50, 2, false),
    ];
    let found = check(&record(calls.clone(), vec![row("w2", 2, true)]));
    let wrong: Vec<&Violation> = found
        .iter()
        .filter(|violation| violation.property == Property::WrongResult)
        .collect();
    assert_eq!(wrong.len(), 1, "{found:?}");
    assert_eq!(wrong[0].calls, vec![2, 4]);
    assert_eq!(
        wrong[0].text,
        "the stored row is done with result \"w2/2\", not the first accepted completion's \"w1/1\""
    );
    // Done with another result than any completion's: still wrong.
    let mut other = row("w1", 1, true);
    other.result = Some("w9/9".into());
    assert_eq!(
        properties(&record(calls[..3].to_vec(), vec![other])),
        vec![Property::WrongResult]
    );
}
