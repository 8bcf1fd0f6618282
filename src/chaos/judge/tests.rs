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
fn stale_completion_after_a_stall(told: bool) -> Judgement {
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

/// The shrink keeps the headline: a candidate counts only when it breaks
/// the failing run's first property (or, when it broke none, only the
/// model check), and the candidate's findings are reordered so that its
/// first finding is that one.
#[test]
fn a_shrink_candidate_counts_only_with_the_headline_s_finding() {
    let stale = stale_completion_after_a_stall(false);
    let headline = Headline::of(&stale);
    assert_eq!(headline, Headline::Property(Property::StaleCompletion));
    assert!(headline.shown_by(&stale));

    let other = |property| crate::chaos::properties::Violation {
        property,
        step: 2,
        job: Some("j".into()),
        calls: vec![0],
        text: String::new(),
    };
    let lost_only = Judgement::with(
        stale.record.clone(),
        vec![other(Property::JobLost)],
        stale.model.clone(),
    );
    assert!(!headline.shown_by(&lost_only));

    let mut both = stale.violations.clone();
    both.insert(0, other(Property::JobLost));
    let both = Judgement::with(stale.record.clone(), both, stale.model.clone());
    assert!(headline.shown_by(&both));
    let first = headline.first_in(both);
    let order: Vec<Property> = first
        .violations
        .iter()
        .map(|found| found.property)
        .collect();
    assert_eq!(order, [Property::StaleCompletion, Property::JobLost]);

    // A run that broke only the model check: a candidate that breaks a
    // property instead, or nothing, does not count.
    let model_only = Judgement::with(stale.record.clone(), Vec::new(), stale.model.clone());
    assert_eq!(Headline::of(&model_only), Headline::Model);
    assert!(matches!(stale.model, Verdict::NotLinearizable { .. }));
    assert!(Headline::Model.shown_by(&model_only));
    assert!(!Headline::Model.shown_by(&stale));
    let passing = Judgement::of(crate::chaos::testing::record(
        vec![enqueue(0)],
        vec![crate::job::Job {
            id: "j".into(),
            ..Default::default()
        }],
    ));
    assert!(!passing.failed());
    assert!(!Headline::Model.shown_by(&passing));
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
            "call 3, w2's claim j now=3 ttl=2, cannot be placed: it answered null, where the \
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
