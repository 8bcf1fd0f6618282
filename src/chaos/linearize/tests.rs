use super::*;
use crate::chaos::testing::SplitMix;
use crate::job::{Fence, Job};

const BUDGET: usize = 1_000_000;

fn enqueue(job: &str) -> Operation {
    Operation::Enqueue { job_id: job.into() }
}

fn claim(owner: &str, now: f64, ttl: f64) -> Operation {
    Operation::Claim {
        job_id: "j".into(),
        owner: owner.into(),
        now,
        ttl,
    }
}

fn renew(owner: &str, fence: i64, now: f64, ttl: f64) -> Operation {
    Operation::Renew {
        job_id: "j".into(),
        owner: owner.into(),
        fence: Fence(fence),
        now,
        ttl,
    }
}

fn complete(owner: &str, fence: i64, now: f64, result: &str) -> Operation {
    Operation::Complete {
        job_id: "j".into(),
        owner: owner.into(),
        fence: Fence(fence),
        now,
        result: result.into(),
    }
}

fn release(owner: &str, fence: i64) -> Operation {
    Operation::Release {
        job_id: "j".into(),
        owner: owner.into(),
        fence: Fence(fence),
    }
}

fn claim_many(owners: &[&str], now: f64, ttl: f64) -> Operation {
    Operation::ClaimMany {
        job_id: "j".into(),
        owners: owners.iter().map(|owner| owner.to_string()).collect(),
        now,
        ttl,
    }
}

fn call(worker: usize, operation: Operation, began: u64, ended: u64, returned: Returned) -> Call {
    Call {
        worker,
        operation,
        began,
        ended: Some(ended),
        returned,
    }
}

fn answered(worker: usize, operation: Operation, began: u64, ended: u64, answer: Answer) -> Call {
    call(worker, operation, began, ended, Returned::Answer(answer))
}

fn killed(worker: usize, operation: Operation, began: u64) -> Call {
    Call {
        worker,
        operation,
        began,
        ended: None,
        returned: Returned::Unknown,
    }
}

fn fence(value: i64) -> Answer {
    Answer::Fence(Some(Fence(value)))
}

const NO_FENCE: Answer = Answer::Fence(None);
const TRUE: Answer = Answer::Bool(true);
const FALSE: Answer = Answer::Bool(false);

/// The start every history here shares: the job is enqueued.
fn enqueued() -> Call {
    answered(0, enqueue("j"), 0, 10, TRUE)
}

/// Checks that `witness` is a linearization of `history`: it respects
/// real time, places every answered call, and the model run in its
/// order gives every recorded answer.
fn assert_witness(history: &[Call], witnesses: &[Witness]) {
    for witness in witnesses {
        let mut state = JobModel::default();
        for (position, placement) in witness.order.iter().enumerate() {
            let recorded = &history[placement.call];
            assert_eq!(recorded.operation.job_id(), witness.job_id.as_deref());
            for later in &witness.order[position + 1..] {
                let ended = history[later.call].ended;
                assert!(
                    ended.is_none_or(|ended| ended >= recorded.began),
                    "{later:?} ended before {placement:?} began, but is placed after it"
                );
            }
            let (operation, answer) =
                match (&recorded.operation, &recorded.returned, placement.claim) {
                    (
                        Operation::ClaimMany {
                            job_id,
                            owners,
                            now,
                            ttl,
                        },
                        returned,
                        Some(owner),
                    ) => {
                        let operation = Operation::Claim {
                            job_id: job_id.clone(),
                            owner: owners[owner].clone(),
                            now: *now,
                            ttl: *ttl,
                        };
                        let answer = match returned {
                            Returned::Answer(Answer::Fences(fences)) => {
                                Some(Answer::Fence(fences[owner]))
                            }
                            _ => None,
                        };
                        (operation, answer)
                    }
                    (operation, Returned::Answer(answer), None) => {
                        (operation.clone(), Some(answer.clone()))
                    }
                    (operation, _, None) => (operation.clone(), None),
                    (_, _, Some(_)) => {
                        panic!("{placement:?} names a claim of a call that has none")
                    }
                };
            let (after, expected) = state.apply(&operation);
            if let Some(answer) = answer {
                assert_eq!(expected, Expected::Answer(answer), "at {placement:?}");
            }
            state = after;
        }
    }
    for (index, recorded) in history.iter().enumerate() {
        if let Returned::Answer(_) = recorded.returned {
            let placed = witnesses
                .iter()
                .flat_map(|witness| &witness.order)
                .any(|placement| placement.call == index);
            assert!(
                placed,
                "the answered call {index} is missing from the witness"
            );
        }
    }
}

fn assert_linearizable(history: &[Call]) {
    match check(history, BUDGET) {
        Verdict::Linearizable { witnesses, .. } => assert_witness(history, &witnesses),
        other => panic!("expected a linearizable history, got {other:?}"),
    }
}

/// The first call that cannot be placed, when the history is wrong.
fn first_unplaceable(history: &[Call]) -> Option<usize> {
    match check(history, BUDGET) {
        Verdict::NotLinearizable {
            first_unplaceable, ..
        } => first_unplaceable,
        other => panic!("expected a history that is not linearizable, got {other:?}"),
    }
}

/// Workers that overlap, with answers that hold only in some orders of
/// the overlapping calls: B's second claim finds the lease free only
/// after A's release, which began earlier and ended later.
fn correct_history() -> Vec<Call> {
    vec![
        enqueued(),
        answered(1, claim("A", 100.0, 10.0), 20, 40, fence(1)),
        answered(2, claim("B", 101.0, 10.0), 25, 45, NO_FENCE),
        answered(1, renew("A", 1, 105.0, 10.0), 50, 60, TRUE),
        // Only after the renewal (until 115), not before (until 110).
        answered(2, claim("B", 112.0, 10.0), 55, 65, NO_FENCE),
        answered(1, release("A", 1), 70, 200, TRUE),
        answered(2, claim("B", 113.0, 10.0), 80, 90, fence(2)),
        answered(2, complete("B", 2, 115.0, "b"), 95, 100, TRUE),
        answered(
            0,
            Operation::State { job_id: "j".into() },
            210,
            220,
            Answer::Row(Some(Job {
                id: "j".into(),
                owner: Some("B".into()),
                until: 123.0,
                fence: Fence(2),
                result: Some("b".into()),
                done: true,
            })),
        ),
    ]
}

#[test]
fn a_correct_concurrent_history_is_linearizable() {
    let history = correct_history();
    assert_linearizable(&history);
    let Verdict::Linearizable { witnesses, .. } = check(&history, BUDGET) else {
        unreachable!("checked above");
    };
    let order: Vec<usize> = witnesses[0]
        .order
        .iter()
        .map(|placement| placement.call)
        .collect();
    assert_eq!(order, [0, 1, 2, 3, 4, 5, 6, 7, 8]);
}

#[test]
fn the_same_fence_handed_out_twice_is_not_linearizable() {
    let history = vec![
        enqueued(),
        answered(1, claim("A", 100.0, 10.0), 20, 50, fence(1)),
        answered(2, claim("B", 100.0, 10.0), 30, 60, fence(1)),
    ];
    let Verdict::NotLinearizable {
        job_id,
        calls,
        longest_prefix,
        failing_prefix,
        first_unplaceable,
        ..
    } = check(&history, BUDGET)
    else {
        panic!("the same fence was handed out twice");
    };
    assert_eq!(job_id.as_deref(), Some("j"));
    assert_eq!(calls, [0, 1, 2]);
    // The enqueue and A's claim are explained; B's claim is not.
    assert_eq!((longest_prefix, failing_prefix), (2, 3));
    assert_eq!(first_unplaceable, Some(2));
}

#[test]
fn two_workers_holding_a_valid_lease_at_once_is_not_linearizable() {
    let history = vec![
        enqueued(),
        answered(1, claim("A", 100.0, 10.0), 20, 30, fence(1)),
        // A's lease runs to 110: at 105 it is still valid.
        answered(2, claim("B", 105.0, 10.0), 40, 50, fence(2)),
    ];
    assert_eq!(first_unplaceable(&history), Some(2));
    // At the boundary the lease is over, and B may take it.
    let mut at_boundary = history;
    at_boundary[2].operation = claim("B", 110.0, 10.0);
    assert_linearizable(&at_boundary);
}

#[test]
fn a_stale_completion_accepted_is_not_linearizable() {
    let stale = |returned: Answer, began: u64, now: f64| {
        vec![
            enqueued(),
            answered(1, claim("A", 100.0, 10.0), 20, 30, fence(1)),
            answered(2, claim("B", 110.0, 10.0), 40, 50, fence(2)),
            answered(1, complete("A", 1, now, "a"), began, began + 10, returned),
        ]
    };
    // B's claim finished before A's completion began.
    assert_eq!(first_unplaceable(&stale(TRUE, 60, 112.0)), Some(3));
    assert_linearizable(&stale(FALSE, 60, 112.0));
    // Overlapping B's claim, at a time A's lease was valid, A's
    // completion may have come first: accepted, and then B's claim
    // finds the job done, so B cannot have got fence 2.
    let overlapping = stale(TRUE, 45, 109.0);
    assert_eq!(first_unplaceable(&overlapping), Some(3));
    let mut b_refused = overlapping;
    b_refused[2].returned = Returned::Answer(NO_FENCE);
    assert_linearizable(&b_refused);
}

#[test]
fn a_call_of_unknown_outcome_may_explain_an_answer() {
    let with = |release_call: Option<Call>| {
        let mut history = vec![
            enqueued(),
            answered(1, claim("A", 100.0, 10.0), 20, 30, fence(1)),
            answered(2, claim("B", 105.0, 10.0), 40, 50, fence(2)),
        ];
        history.extend(release_call);
        history
    };
    assert_eq!(first_unplaceable(&with(None)), Some(2));
    // A was killed while releasing: the release may have taken effect.
    let history = with(Some(killed(1, release("A", 1), 35)));
    assert_linearizable(&history);
    let Verdict::Linearizable { witnesses, .. } = check(&history, BUDGET) else {
        unreachable!("checked above");
    };
    let order: Vec<usize> = witnesses[0]
        .order
        .iter()
        .map(|placement| placement.call)
        .collect();
    assert_eq!(order, [0, 1, 3, 2]);
    // ... but not before it began.
    assert_eq!(
        first_unplaceable(&with(Some(killed(1, release("A", 1), 55)))),
        Some(2)
    );
    // An error that may come after the commit leaves the outcome open;
    // a busy lock promises that nothing changed.
    let errored = |kind| Some(call(1, release("A", 1), 35, 38, Returned::Error(kind)));
    assert_linearizable(&with(errored(ErrorKind::Other)));
    assert_eq!(first_unplaceable(&with(errored(ErrorKind::Busy))), Some(2));
    assert_eq!(
        first_unplaceable(&with(errored(ErrorKind::Sqlite))),
        Some(2)
    );
    // An unknown call is never required: left out, it explains itself.
    let mut unexplained = correct_history();
    unexplained.push(killed(3, claim("C", 100.0, 10.0), 5));
    assert_linearizable(&unexplained);
}

#[test]
fn a_budget_too_small_gives_unknown_never_a_pass() {
    let history = correct_history();
    assert_eq!(
        check(&history, 1),
        Verdict::Unknown {
            job_id: Some("j".into()),
            steps: 1
        }
    );
    // A wrong job found within the budget still decides the history.
    let mut wrong_elsewhere = history.clone();
    wrong_elsewhere.push(answered(3, enqueue("k"), 0, 10, FALSE));
    assert!(matches!(
        check(&wrong_elsewhere, 3),
        Verdict::NotLinearizable { job_id: Some(job), .. } if job == "k"
    ));
    // Enough steps decide it.
    let Verdict::Linearizable { steps, .. } = check(&history, BUDGET) else {
        panic!("the history is linearizable");
    };
    assert!(matches!(
        check(&history, steps),
        Verdict::Linearizable { .. }
    ));
    assert!(matches!(
        check(&history, steps - 1),
        Verdict::Unknown { .. }
    ));
}

#[test]
fn a_refusal_is_checked_against_the_arguments_and_other_errors_change_nothing() {
    let refused = Returned::Error(ErrorKind::InvalidArgument);
    let mut history = vec![
        enqueued(),
        call(1, claim("A", 100.0, 0.0), 20, 30, refused.clone()),
        call(1, claim("A", 100.0, -1.0), 20, 30, refused.clone()),
        call(
            2,
            claim("B", 100.0, 10.0),
            20,
            30,
            Returned::Error(ErrorKind::Busy),
        ),
        answered(1, claim("A", 100.0, 10.0), 40, 50, fence(1)),
    ];
    assert_linearizable(&history);
    history.push(answered(1, renew("A", 1, 101.0, 0.0), 60, 70, TRUE));
    assert_eq!(first_unplaceable(&history), Some(5));
    history[5].returned = refused.clone();
    assert_linearizable(&history);
    history.push(call(1, renew("A", 1, 101.0, 5.0), 80, 90, refused));
    assert_eq!(first_unplaceable(&history), Some(6));
}

#[test]
fn claim_many_is_one_claim_per_owner_over_the_calls_interval() {
    let race = |answer: Vec<Option<i64>>| {
        answered(
            1,
            claim_many(&["A", "B"], 100.0, 10.0),
            20,
            60,
            Answer::Fences(answer.into_iter().map(|f| f.map(Fence)).collect()),
        )
    };
    assert_linearizable(&[enqueued(), race(vec![None, Some(1)])]);
    assert_eq!(
        first_unplaceable(&[enqueued(), race(vec![Some(1), Some(1)])]),
        Some(1)
    );
    assert_eq!(
        first_unplaceable(&[enqueued(), race(vec![Some(1), Some(2)])]),
        Some(1)
    );
    assert_eq!(
        first_unplaceable(&[enqueued(), race(vec![Some(1)])]),
        Some(1)
    );
    // A release that falls between the two claims lets both win.
    let both = [
        enqueued(),
        race(vec![Some(1), Some(2)]),
        answered(2, release("A", 1), 30, 40, TRUE),
    ];
    assert_linearizable(&both);
    // A claim_many that failed may have run some of its claims.
    let failed = [
        enqueued(),
        call(
            1,
            claim_many(&["A", "B"], 100.0, 10.0),
            20,
            30,
            Returned::Error(ErrorKind::Other),
        ),
        answered(2, claim("C", 100.0, 10.0), 40, 50, NO_FENCE),
    ];
    assert_linearizable(&failed);
}

#[test]
fn jobs_are_judged_apart_and_init_db_answers_done() {
    let mut history = correct_history();
    history.push(answered(3, Operation::InitDb, 0, 300, Answer::Done));
    history.push(answered(3, enqueue("k"), 0, 10, TRUE));
    history.push(answered(3, enqueue("k"), 20, 30, FALSE));
    assert_linearizable(&history);
    let Verdict::Linearizable { witnesses, .. } = check(&history, BUDGET) else {
        unreachable!("checked above");
    };
    let jobs: Vec<Option<&str>> = witnesses
        .iter()
        .map(|witness| witness.job_id.as_deref())
        .collect();
    assert_eq!(jobs, [Some("j"), None, Some("k")]);
    history.push(answered(3, Operation::InitDb, 400, 410, TRUE));
    assert!(matches!(
        check(&history, BUDGET),
        Verdict::NotLinearizable {
            job_id: None,
            first_unplaceable: Some(12),
            ..
        }
    ));
    assert!(matches!(
        check_job(&history, Some("k"), BUDGET),
        Verdict::Linearizable { .. }
    ));
}

#[test]
fn a_malformed_call_is_named_before_any_search() {
    let mut history = correct_history();
    history[3].ended = Some(history[3].began - 1);
    assert_eq!(
        check(&history, BUDGET),
        Verdict::Malformed {
            call: 3,
            problem: Malformation::EndedBeforeBegan
        }
    );
    let mut history = correct_history();
    history[4].ended = None;
    assert_eq!(
        check(&history, BUDGET),
        Verdict::Malformed {
            call: 4,
            problem: Malformation::OutcomeWithoutEnd
        }
    );
}

/// A random operation on job `j` or `k` (no refused arguments: those
/// are the model's differential test's).
fn random_operation(rng: &mut SplitMix, clock: f64) -> Operation {
    let job_id = rng.pick(&["j", "k"]).to_string();
    let owner = rng.pick(&["A", "B", "C"]).to_string();
    let fence = Fence(*rng.pick(&[1, 1, 2, 2, 3]));
    let now = clock + *rng.pick(&[-2.0, 0.0, 0.0, 1.0]);
    let ttl = *rng.pick(&[1.0, 2.0, 5.0]);
    match rng.below(7) {
        0 => Operation::Enqueue { job_id },
        1 => Operation::State { job_id },
        2 => Operation::Claim {
            job_id,
            owner,
            now,
            ttl,
        },
        3 => Operation::Renew {
            job_id,
            owner,
            fence,
            now,
            ttl,
        },
        4 => Operation::Complete {
            job_id,
            owner,
            fence,
            now,
            result: "r".into(),
        },
        5 => Operation::Release {
            job_id,
            owner,
            fence,
        },
        _ => Operation::ClaimMany {
            job_id,
            owners: vec![owner, "D".into()],
            now,
            ttl,
        },
    }
}

/// A history that is linearizable by construction: the model runs the
/// calls in order, each took effect at its instant `1000 * i`, and
/// its interval is drawn around that instant. `killed` percent of the
/// calls are killed: those took effect or not, at random.
fn constructed_history(rng: &mut SplitMix, length: usize, killed: usize) -> Vec<Call> {
    let mut states: HashMap<String, JobModel> = HashMap::new();
    let mut history = Vec::new();
    for index in 0..length {
        let clock = 100.0 + index as f64;
        let operation = random_operation(rng, clock);
        let job_id = operation.job_id().unwrap_or_default().to_string();
        let state = states.get(&job_id).cloned().unwrap_or_default();
        let (after, expected) = state.apply(&operation);
        let instant = 5_000 + 1_000 * index as u64;
        let began = instant - rng.below(3_000) as u64;
        let ended = instant + rng.below(3_000) as u64;
        let recorded = if rng.chance(killed) {
            if rng.chance(50) {
                states.insert(job_id, after);
            }
            Call {
                worker: index % 4,
                operation,
                began,
                ended: None,
                returned: Returned::Unknown,
            }
        } else {
            states.insert(job_id, after);
            let Expected::Answer(answer) = expected else {
                panic!("{operation} is refused, but its arguments are valid");
            };
            answered(index % 4, operation, began, ended, answer)
        };
        history.push(recorded);
    }
    history
}

/// The steps a history of 30 calls (a tenth of them killed) may take. Each
/// configuration is tried once, so the search of one takes a few hundred
/// steps (under 800 on the seeds below); a search that tried one again
/// would run out of this budget, and fail, in moments.
const CONSTRUCTED_BUDGET: usize = 10_000;

#[test]
fn histories_linearizable_by_construction_are_found_so() {
    for seed in 0..200 {
        let mut rng = SplitMix::new(seed);
        let history = constructed_history(&mut rng, 30, 10);
        match check(&history, CONSTRUCTED_BUDGET) {
            Verdict::Linearizable { witnesses, .. } => assert_witness(&history, &witnesses),
            other => panic!("seed {seed}: {other:?}"),
        }
    }
}

#[test]
fn in_a_sequential_history_the_first_wrong_answer_is_the_first_unplaceable_call() {
    let mut wrong = 0;
    for seed in 0..100 {
        let mut rng = SplitMix::new(seed);
        let mut history = constructed_history(&mut rng, 25, 0);
        // One after another: each call ends before the next begins.
        for (index, recorded) in history.iter_mut().enumerate() {
            recorded.began = 1_000 * index as u64;
            recorded.ended = Some(1_000 * index as u64 + 10);
        }
        let flippable: Vec<usize> = (0..history.len())
            .filter(|&index| matches!(history[index].returned, Returned::Answer(Answer::Bool(_))))
            .collect();
        let Some(&flipped) = flippable.get(rng.below(flippable.len().max(1))) else {
            continue;
        };
        if let Returned::Answer(Answer::Bool(flag)) = &mut history[flipped].returned {
            *flag = !*flag;
        }
        let verdict = check(&history, BUDGET);
        let Verdict::NotLinearizable {
            job_id,
            calls,
            longest_prefix,
            first_unplaceable,
            ..
        } = verdict
        else {
            panic!("seed {seed}: flipping call {flipped} went unnoticed: {verdict:?}");
        };
        assert_eq!(first_unplaceable, Some(flipped), "seed {seed}");
        assert_eq!(calls[longest_prefix], flipped, "seed {seed}");
        assert_eq!(
            job_id.as_deref(),
            history[flipped].operation.job_id(),
            "seed {seed}"
        );
        wrong += 1;
    }
    assert!(wrong >= 90, "only {wrong} histories had an answer to flip");
}

/// A call may end at the very nanosecond it began (on a coarse clock it
/// does): it is well formed, and judged as any other.
#[test]
fn a_call_that_ends_as_it_begins_is_well_formed() {
    let history = vec![
        answered(0, enqueue("j"), 5, 5, TRUE),
        answered(1, claim("A", 100.0, 10.0), 20, 20, fence(1)),
    ];
    assert_linearizable(&history);
}

/// A verdict's steps count every search it made: for a history found
/// wrong, the full search's and those of the narrowing down to its
/// longest valid prefix.
#[test]
fn the_steps_of_a_wrong_history_count_the_narrowing_too() {
    // The job is enqueued twice, both answered true: the second cannot be
    // placed, and the narrowing makes one search, of the first call with
    // the second as of unknown outcome.
    let history = vec![enqueued(), answered(1, enqueue("j"), 20, 30, TRUE)];
    let Verdict::NotLinearizable {
        steps,
        longest_prefix,
        failing_prefix,
        ..
    } = check(&history, BUDGET)
    else {
        panic!("the job was enqueued twice");
    };
    assert_eq!((longest_prefix, failing_prefix), (1, 2));
    // The full search alone: the fewest steps that decide the history.
    let full = (1..BUDGET)
        .find(|&budget| !matches!(check(&history, budget), Verdict::Unknown { .. }))
        .expect("a budget that decides it");
    let mut narrowed = history.clone();
    narrowed[1] = killed(1, enqueue("j"), 20);
    let Verdict::Linearizable {
        steps: narrowing, ..
    } = check(&narrowed, BUDGET)
    else {
        panic!("a second enqueue of unknown outcome explains itself");
    };
    assert_eq!(steps, full + narrowing, "{full} + {narrowing}");
}
