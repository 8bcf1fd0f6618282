use super::*;
use crate::chaos::history::{Noted, Returned};
use crate::chaos::plan::Moment;
use crate::chaos::properties::Property;
use crate::chaos::testing::{call, claim, complete, enqueue, record, row};
use crate::job::Fence;
use crate::operation::{Answer, Operation};

/// w1 claims `j` (fence 1), stalls, claims it again (fence 2) and its
/// stalled attempt completes with fence 1, accepted: the store's answers,
/// with the moments of the story when `told`.
pub(super) fn stale_completion_after_a_stall(told: bool) -> Judgement {
    let calls = vec![
        enqueue(0),
        claim(0, 10, 1.0, Some(1)),
        claim(0, 20, 4.0, Some(2)),
        complete(0, 30, 1, true),
    ];
    let mut record = record(calls, vec![row("w1", 1, true)]);
    if told {
        let noted = |before, moment| Noted {
            worker: 0,
            before,
            at: before as u64 * 10 - 5,
            moment,
        };
        record.moments = vec![
            noted(
                2,
                Moment::Stalled {
                    job: "j".into(),
                    fence: Fence(1),
                    whole: false,
                },
            ),
            noted(
                3,
                Moment::CameBack {
                    job: "j".into(),
                    fence: Fence(1),
                    now: 1.0,
                    stale: true,
                },
            ),
        ];
    }
    Judgement::of(record)
}

/// A stale completion that came back from a stall is told as a story, the
/// stale clock named; without the moments, or for another finding, there
/// is no story to tell.
#[test]
fn a_stale_completion_back_from_a_stall_is_told_as_a_story() {
    let judged = stale_completion_after_a_stall(true);
    assert_eq!(
        judged.violations.first().map(|found| found.property),
        Some(Property::StaleCompletion)
    );
    assert_eq!(
        judged.story().as_deref(),
        Some(
            "w1 stalled holding fence 1; fence 2 was handed out to w1's next attempt; the \
             stalled attempt came back, its clock still at 1, and its completion with fence 1 \
             was accepted"
        )
    );
    assert_eq!(stale_completion_after_a_stall(false).story(), None);
    // Handed to another worker, the fence is named with that worker.
    let mut record = stale_completion_after_a_stall(true).record;
    record.calls[2] = claim(1, 20, 4.0, Some(2));
    let judged = Judgement::of(record);
    assert!(
        judged
            .story()
            .is_some_and(|story| story.contains("fence 2 was handed out to w2;")),
        "{:?}",
        judged.story()
    );
    let fenced = Judgement::of(crate::chaos::testing::record(
        vec![enqueue(0), claim(0, 10, 1.0, Some(1))],
        vec![row("w2", 1, false)],
    ));
    assert_eq!(fenced.story(), None);
}

/// A model-check finding names the call that cannot be placed with what it
/// answered, what the contract answers there and the row it answers from;
/// a refused claim at a lease's last instant is named as the convention it
/// shows.
#[test]
fn a_model_check_finding_says_what_the_contract_expected() {
    let calls = vec![
        enqueue(0),
        claim(0, 10, 1.0, Some(1)),
        // The lease ends at 3: a claim at 3 must get fence 2.
        claim(1, 20, 3.0, None),
    ];
    let judged = Judgement::of(record(calls, vec![row("w1", 1, false)]));
    assert!(judged.violations.is_empty());
    let text = judged.model_text();
    assert!(
        text.contains(
            "call 3, w2's claim j now=3 ttl=2, cannot be placed: it answered none, where the \
             contract answers 2 to the row owner w1, fence 1, until 3, not done: at now == \
             until this store keeps the lease through its last instant"
        ),
        "{text}"
    );
    // Before the last instant, the refusal is right and nothing is found.
    let mut record = judged.record;
    record.calls[2] = claim(1, 20, 2.5, None);
    assert!(!Judgement::of(record.clone()).failed());

    // A state answered with another lease end: both rows are named.
    record.calls[2] = call(
        1,
        20,
        Operation::State { job_id: "j".into() },
        Returned::Answer(Answer::Row(Some(crate::job::Job {
            until: 9.0,
            ..row("w1", 1, false)
        }))),
    );
    let text = Judgement::of(record).model_text();
    assert!(
        text.ends_with(
            "it answered the row owner w1, fence 1, until 9, not done, where the contract \
             answers the row owner w1, fence 1, until 3, not done"
        ),
        "{text}"
    );
}

/// A finding of `property` on `job`, shown by `calls`.
fn finding(property: Property, job: Option<&str>, calls: &[usize]) -> Violation {
    Violation {
        property,
        step: 6,
        job: job.map(str::to_string),
        calls: calls.to_vec(),
        text: String::new(),
    }
}

/// A model check that explains every answer.
fn explained() -> Verdict {
    Verdict::Linearizable {
        witnesses: Vec::new(),
        steps: 5,
    }
}

/// A model check that cannot place call `first` (an index) of `job`.
fn unplaceable(job: Option<&str>, first: Option<usize>) -> Verdict {
    Verdict::NotLinearizable {
        job_id: job.map(str::to_string),
        calls: Vec::new(),
        longest_prefix: 3,
        failing_prefix: 4,
        first_unplaceable: first,
        expected: None,
        steps: 7,
    }
}

/// A run fails when a property broke or no order of the calls explains
/// its answers; fencing breaks only with a fencing property, the contract
/// with any finding; a model check cut off is neither a pass nor a failure.
#[test]
fn a_run_fails_on_any_finding_and_breaks_fencing_only_on_a_fencing_one() {
    let run = stale_completion_after_a_stall(false).record;
    let judged = |violations, model| Judgement::with(run.clone(), violations, model);

    let clean = judged(Vec::new(), explained());
    assert!(!clean.failed());
    assert_eq!((clean.fencing, clean.contract), (Held::Held, Held::Held));

    let lost = judged(
        vec![finding(Property::JobLost, Some("j"), &[0])],
        explained(),
    );
    assert!(!Property::JobLost.breaks_fencing());
    assert!(lost.failed());
    assert_eq!((lost.fencing, lost.contract), (Held::Held, Held::Broken));

    let stale = judged(
        vec![
            finding(Property::JobLost, Some("j"), &[0]),
            finding(Property::StaleCompletion, Some("j"), &[2, 3]),
        ],
        explained(),
    );
    assert_eq!(
        (stale.fencing, stale.contract),
        (Held::Broken, Held::Broken)
    );

    let model = judged(Vec::new(), unplaceable(Some("j"), Some(2)));
    assert!(model.failed());
    assert_eq!((model.fencing, model.contract), (Held::Held, Held::Broken));
    let malformed = Verdict::Malformed {
        call: 1,
        problem: linearize::Malformation::EndedBeforeBegan,
    };
    assert!(judged(Vec::new(), malformed).failed());
    let cut_off = judged(
        Vec::new(),
        Verdict::Unknown {
            job_id: Some("j".into()),
            steps: 9,
        },
    );
    assert!(!cut_off.failed());
    assert_eq!(cut_off.contract, Held::Held);
}

/// The first finding names the job, the step and the calls that show it:
/// a property's own, else the model check's first call it cannot place
/// (step 4 when it could not tell which).
#[test]
fn the_first_finding_names_its_job_step_and_calls() {
    let run = stale_completion_after_a_stall(false).record;
    let judged = |violations, model| Judgement::with(run.clone(), violations, model);

    let property = judged(
        vec![
            finding(Property::DoneChanged, None, &[3]),
            finding(Property::JobLost, Some("j"), &[0]),
        ],
        unplaceable(Some("k"), Some(1)),
    );
    assert_eq!(property.job(), None);
    assert_eq!(
        property.finding_text(),
        format!("{} (step 6)", Property::DoneChanged.text())
    );
    assert_eq!(property.culprits(), [3]);

    let model = judged(Vec::new(), unplaceable(Some("k"), Some(3)));
    assert_eq!(model.job(), Some("k"));
    assert_eq!(model.culprits(), [3]);
    let not_linearizable = Property::NotLinearizable.text();
    assert_eq!(model.finding_text(), format!("{not_linearizable} (step 6)"));
    let at_the_claim = judged(Vec::new(), unplaceable(Some("k"), Some(0)));
    assert_eq!(
        at_the_claim.finding_text(),
        format!("{not_linearizable} (step 2)")
    );
    let untold = judged(Vec::new(), unplaceable(None, None));
    assert_eq!(untold.job(), None);
    assert!(untold.culprits().is_empty());
    assert_eq!(
        untold.finding_text(),
        format!("{not_linearizable} (step 4)")
    );

    let cut_off = judged(
        Vec::new(),
        Verdict::Unknown {
            job_id: Some("k".into()),
            steps: 9,
        },
    );
    assert_eq!(cut_off.job(), None);
    assert!(cut_off.culprits().is_empty());
}

/// The story needs the stalled worker's own moments of that lease, before
/// its completion: a stall holding the completion's fence, then a return
/// after it. Any other moment tells none.
#[test]
fn a_story_is_told_only_from_the_stalled_lease_s_own_moments() {
    let told = stale_completion_after_a_stall(true);
    assert!(told.story().is_some());
    let with_moments = |change: &dyn Fn(&mut Vec<Noted>)| {
        let mut record = told.record.clone();
        change(&mut record.moments);
        Judgement::of(record).story()
    };
    // Another worker's stall.
    assert_eq!(with_moments(&|moments| moments[0].worker = 1), None);
    // A return noted after the completion.
    assert_eq!(with_moments(&|moments| moments[1].before = 4), None);
    // A stall noted after the completion.
    assert_eq!(with_moments(&|moments| moments[0].before = 4), None);
    // A return noted with the stall, not after it.
    assert_eq!(with_moments(&|moments| moments[1].before = 2), None);
    // Another fence's stall, or another fence's return.
    let other_fence = |moment: &mut Moment| match moment {
        Moment::Stalled { fence, .. } | Moment::CameBack { fence, .. } => *fence = Fence(2),
        _ => unreachable!("a stall or a return"),
    };
    assert_eq!(
        with_moments(&|moments| other_fence(&mut moments[0].moment)),
        None
    );
    assert_eq!(
        with_moments(&|moments| other_fence(&mut moments[1].moment)),
        None
    );
    // Another job's moments.
    let other_job = |moment: &mut Moment| match moment {
        Moment::Stalled { job, .. } | Moment::CameBack { job, .. } => *job = "k".into(),
        _ => unreachable!("a stall or a return"),
    };
    assert_eq!(
        with_moments(&|moments| {
            other_job(&mut moments[0].moment);
            other_job(&mut moments[1].moment);
        }),
        None
    );
    // A return with a fresh clock: the story says no clock.
    let fresh = with_moments(&|moments| {
        if let Moment::CameBack { stale, .. } = &mut moments[1].moment {
            *stale = false;
        }
    })
    .expect("a story");
    assert!(
        fresh.contains("the stalled attempt came back, and its completion"),
        "{fresh}"
    );
    // The same story at the start of a longer run, moments placed as
    // they came: noted before call 3 of 5.
    let mut record = told.record.clone();
    record.calls.push(claim(1, 40, 9.0, Some(3)));
    assert!(Judgement::of(record).story().is_some());
}

/// A run where job `j` makes more calls than a timeline shows: a restart
/// of an involved worker between the calls that show the finding, another
/// job's calls and an uninvolved worker's restart, a granted claim, a
/// refused one, and a call sent after the last that shows it but begun
/// while it ran.
fn crowded_run(property: Property) -> Judgement {
    let state = |worker, at, job: &str| {
        call(
            worker,
            at,
            Operation::State { job_id: job.into() },
            Returned::Answer(Answer::Row(None)),
        )
    };
    let init = |worker, at| {
        call(
            worker,
            at,
            Operation::InitDb,
            Returned::Answer(Answer::Done),
        )
    };
    let mut calls = vec![
        init(0, 0),
        enqueue(10),
        claim(1, 20, 1.0, Some(1)),
        state(2, 30, "k"),
        init(1, 40),
        init(2, 50),
    ];
    for index in 6..18 {
        calls.push(match index {
            7 => claim(0, 70, 4.0, Some(2)),
            8 => claim(0, 80, 4.0, None),
            _ => state(0, index as u64 * 10, "j"),
        });
    }
    calls.push(complete(1, 180, 1, true));
    calls.push(state(0, 180, "j"));
    calls.push(state(0, 200, "j"));
    assert_eq!(calls.len(), 21);
    Judgement::with(
        record(calls, vec![row("w2", 1, true)]),
        vec![finding(property, Some("j"), &[2, 18])],
        explained(),
    )
}

/// The calls shown for a finding: its job's, through the last call that
/// shows it and those begun while it ran, with the restarts of the
/// workers involved; at most 12, keeping the calls that show it, a
/// restart between them, the granted claims and then the latest.
#[test]
fn a_crowded_finding_shows_its_calls_restarts_claims_and_latest() {
    let judged = crowded_run(Property::DoneChanged);
    assert_eq!(
        judged.involved(),
        [1, 2, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]
    );
    assert_eq!(
        judged.shown(),
        [2, 4, 7, 11, 12, 13, 14, 15, 16, 17, 18, 19]
    );
    assert_eq!(judged.not_shown(), 5);
    // A call begun as the last call that shows the finding ended ran after
    // it, not with it.
    let begun_at = |began| {
        let mut run = judged.record.clone();
        run.calls[20].began = began;
        Judgement::with(run, judged.violations.clone(), explained()).involved()
    };
    assert_eq!(begun_at(181).last(), Some(&19));
    assert_eq!(begun_at(180).last(), Some(&20));
    assert_eq!(judged.last_needed(), Some(18));
    assert_eq!(through_failure(&judged), 19);

    // A lost job is found at the end of the run: every call is needed.
    let lost = crowded_run(Property::JobLost);
    assert_eq!(lost.last_needed(), Some(20));
    assert_eq!(through_failure(&lost), 21);
    assert_eq!(lost.involved().last(), Some(&20));

    // Without a finding, every call is the run's own.
    let clean = Judgement::with(judged.record.clone(), Vec::new(), explained());
    assert_eq!(clean.last_needed(), None);
    assert_eq!(through_failure(&clean), 21);
    assert_eq!(clean.involved(), (0..21).collect::<Vec<_>>());
    assert_eq!(clean.shown().len(), MOST_SHOWN);

    // Few enough calls are all shown.
    let few = Judgement::with(
        judged.record.clone(),
        vec![finding(Property::DoneChanged, Some("j"), &[1, 2])],
        explained(),
    );
    assert_eq!(few.involved(), [1, 2]);
    assert_eq!(few.shown(), [1, 2]);
    assert_eq!(few.not_shown(), 0);
}

/// The longest valid prefix ends at the earliest finding's last call, or
/// the model check's first unplaceable call, whichever comes first.
#[test]
fn the_longest_valid_prefix_ends_at_the_first_finding() {
    let run = crowded_run(Property::DoneChanged).record;
    let judged = |violations, model| Judgement::with(run.clone(), violations, model);
    let both = vec![
        finding(Property::DoneChanged, Some("j"), &[2, 18]),
        finding(Property::StaleCompletion, Some("j"), &[9, 3]),
    ];
    assert_eq!(judged(both.clone(), explained()).longest_valid_prefix(), 9);
    assert_eq!(
        judged(both.clone(), unplaceable(Some("j"), Some(12))).longest_valid_prefix(),
        9
    );
    assert_eq!(
        judged(both, unplaceable(Some("j"), Some(4))).longest_valid_prefix(),
        4
    );
    let model = judged(Vec::new(), unplaceable(Some("j"), Some(1)));
    assert_eq!(model.longest_valid_prefix(), 1);
    assert_eq!(model.valid_prefix_text(), "the first call of this run");
    let at_once = judged(Vec::new(), unplaceable(Some("j"), Some(0)));
    assert_eq!(at_once.valid_prefix_text(), "none of this run's calls");
    let clean = judged(Vec::new(), unplaceable(Some("j"), None));
    assert_eq!(clean.longest_valid_prefix(), 21);
    assert_eq!(clean.valid_prefix_text(), "the first 21 calls of this run");
}

/// The model check's verdicts in words: explained, cut off, malformed,
/// and not linearizable with or without a call it could name.
#[test]
fn the_model_check_s_verdict_is_said_in_a_sentence() {
    let run = stale_completion_after_a_stall(false).record;
    let judged = |model| Judgement::with(run.clone(), Vec::new(), model);
    assert_eq!(
        judged(explained()).model_text(),
        "linearizable: an order of the calls explains every answer (5 search steps)"
    );
    assert_eq!(
        judged(Verdict::Unknown {
            job_id: None,
            steps: 9
        })
        .model_text(),
        "unknown: the search on init_db stopped after 9 steps (no wrong answer found)"
    );
    assert_eq!(
        judged(Verdict::Malformed {
            call: 2,
            problem: linearize::Malformation::OutcomeWithoutEnd,
        })
        .model_text(),
        "the history cannot be judged: call 3 is OutcomeWithoutEnd"
    );
    assert_eq!(
        judged(unplaceable(None, None)).model_text(),
        "not linearizable on init_db (no order of its calls, each taking effect at one \
         instant while it ran, gives every answer): its first 3 calls can be explained"
    );
    let mut refused = unplaceable(Some("j"), Some(3));
    if let Verdict::NotLinearizable { expected, .. } = &mut refused {
        *expected = Some(Box::new(linearize::Expectation {
            answer: None,
            row: None,
        }));
    }
    assert!(judged(refused).model_text().ends_with(
        "calls can be explained; call 4, w1's complete j fence=1 now=1, cannot be placed: it \
         answered true, where the contract refuses its arguments"
    ));
}

/// The model check's sentence is told beside the run's timeline: the call
/// it cites is one the timeline shows. When the first finding is a
/// property's and the model check's first unplaceable call is of another
/// job, after the finding, the sentence names no call; of the finding's own
/// job, it names it.
#[test]
fn a_model_check_sentence_cites_only_a_call_the_timeline_shows() {
    let mut run = stale_completion_after_a_stall(false).record;
    run.calls.push(call(
        1,
        40,
        Operation::State { job_id: "k".into() },
        Returned::Answer(Answer::Row(None)),
    ));
    let stale = Judgement::of(run.clone()).violations;
    assert_eq!(stale[0].property, Property::StaleCompletion);
    let judged = |model| Judgement::with(run.clone(), stale.clone(), model);

    let elsewhere = judged(unplaceable(Some("k"), Some(4)));
    assert_eq!(elsewhere.shown(), [0, 1, 2, 3]);
    let text = elsewhere.model_text();
    assert!(
        text.ends_with("its first 3 calls can be explained") && !text.contains("call 5"),
        "{text}"
    );
    let here = judged(unplaceable(Some("j"), Some(3))).model_text();
    assert!(
        here.contains("; call 4, w1's complete j fence=1 now=1, cannot be placed"),
        "{here}"
    );
    // A malformed call the timeline leaves out is not named either.
    let malformed = judged(Verdict::Malformed {
        call: 4,
        problem: linearize::Malformation::OutcomeWithoutEnd,
    });
    assert_eq!(
        malformed.model_text(),
        "the history cannot be judged: a call is OutcomeWithoutEnd"
    );
}

/// The last instant's convention is named only where the answer kept the
/// lease at `now == until` of a held, unfinished row: a claim refused, a
/// renew or completion accepted.
#[test]
fn the_last_instant_is_named_only_where_the_store_kept_the_lease() {
    let held = linearize::Expectation {
        answer: Some(Answer::Bool(false)),
        row: Some(row("w1", 1, false)),
    };
    let renew = |now: f64, accepted: bool| {
        call(
            0,
            10,
            Operation::Renew {
                job_id: "j".into(),
                owner: "w1".into(),
                fence: Fence(1),
                now,
                ttl: 2.0,
            },
            Returned::Answer(Answer::Bool(accepted)),
        )
    };
    assert!(at_the_last_instant(&renew(3.0, true), &held).is_some());
    assert_eq!(at_the_last_instant(&renew(3.0, false), &held), None);
    assert_eq!(at_the_last_instant(&renew(2.5, true), &held), None);
    let mut completion = complete(0, 10, 1, true);
    if let Operation::Complete { now, .. } = &mut completion.operation {
        *now = 3.0;
    }
    assert!(at_the_last_instant(&completion, &held).is_some());
    assert!(at_the_last_instant(&claim(1, 10, 3.0, None), &held).is_some());
    assert_eq!(
        at_the_last_instant(&claim(1, 10, 3.0, Some(2)), &held),
        None
    );
    let done = linearize::Expectation {
        row: Some(row("w1", 1, true)),
        ..held.clone()
    };
    assert_eq!(at_the_last_instant(&renew(3.0, true), &done), None);
    let free = linearize::Expectation {
        row: Some(crate::job::Job {
            owner: None,
            ..row("w1", 1, false)
        }),
        ..held.clone()
    };
    assert_eq!(at_the_last_instant(&renew(3.0, true), &free), None);
    let gone = linearize::Expectation {
        row: None,
        ..held.clone()
    };
    assert_eq!(at_the_last_instant(&renew(3.0, true), &gone), None);
    assert_eq!(at_the_last_instant(&enqueue(10), &held), None);
    let unanswered = call(
        0,
        10,
        Operation::Renew {
            job_id: "j".into(),
            owner: "w1".into(),
            fence: Fence(1),
            now: 3.0,
            ttl: 2.0,
        },
        Returned::Unknown,
    );
    assert_eq!(at_the_last_instant(&unanswered, &held), None);
    assert_eq!(row_text(None), "no row");
    assert_eq!(
        row_text(Some(&row("w1", 1, true))),
        "the row owner w1, fence 1, until 3, done"
    );
    assert_eq!(
        row_text(Some(&crate::job::Job {
            owner: None,
            ..row("w1", 1, false)
        })),
        "the row owner none, fence 1, until 3, not done"
    );
}

/// A worker that restarts more times between the calls that show a
/// finding than a timeline holds: the timeline keeps the calls that show
/// it and as many restarts as fit, never more than [`MOST_SHOWN`] calls.
#[test]
fn restarts_between_the_finding_s_calls_fill_the_timeline_no_further() {
    let init = |at| call(1, at, Operation::InitDb, Returned::Answer(Answer::Done));
    let mut calls = vec![enqueue(0), claim(1, 10, 1.0, Some(1))];
    calls.extend((0..20).map(|restart| init(20 + restart * 10)));
    calls.push(complete(1, 300, 1, true));
    let last = calls.len() - 1;
    let judged = Judgement::with(
        record(calls, vec![row("w2", 1, true)]),
        vec![finding(Property::DoneChanged, Some("j"), &[1, last])],
        explained(),
    );
    assert_eq!(judged.involved().len(), 23);
    let shown = judged.shown();
    assert_eq!(shown.len(), MOST_SHOWN);
    assert!(shown.contains(&1) && shown.contains(&last), "{shown:?}");
    assert_eq!(&shown[..3], [1, 2, 3]);
    assert_eq!(judged.not_shown(), 23 - MOST_SHOWN);
    assert_eq!(judged.calls().len(), last + 1);
    assert_eq!(judged.calls()[last], judged.record.calls[last]);
}

/// More granted claims than a timeline holds: it keeps the calls that
/// show the finding and the latest claims, never more than
/// [`MOST_SHOWN`] calls.
#[test]
fn granted_claims_fill_the_timeline_no_further() {
    let mut calls = vec![enqueue(0)];
    calls
        .extend((1..=15).map(|fence| claim(0, fence as u64 * 10, fence as f64 * 3.0, Some(fence))));
    calls.push(complete(0, 200, 1, true));
    let last = calls.len() - 1;
    let judged = Judgement::with(
        record(calls, vec![row("w1", 1, true)]),
        vec![finding(Property::StaleCompletion, Some("j"), &[1, last])],
        explained(),
    );
    assert_eq!(judged.involved().len(), 17);
    let shown = judged.shown();
    assert_eq!(shown.len(), MOST_SHOWN);
    let mut latest: Vec<usize> = (6..=last).collect();
    latest.insert(0, 1);
    assert_eq!(shown, latest);
}
