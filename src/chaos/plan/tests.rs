//! The workers' plans as the seed decides them: their steps, their
//! stalls, and the faults' names.

use super::*;

fn settings(faults: Faults) -> Settings {
    Settings {
        workers: 4,
        operations: 100,
        seed: 3,
        faults,
    }
}

/// A worker enqueues a job before it claims it, completes with the
/// fence it was handed, and its clock never goes back.
#[test]
fn a_worker_enqueues_claims_and_completes_with_its_fence() {
    let settings = settings(Faults::none());
    let mut worker = Worker::new(0, &settings);
    let jobs = vec!["j1".to_string()];
    assert_eq!(
        worker.step(1, &jobs, &settings, false),
        Step::Call(Operation::InitDb)
    );
    assert_eq!(
        worker.step(2, &jobs, &settings, false),
        Step::Call(Operation::Enqueue {
            job_id: "j1".into()
        })
    );
    let mut claimed = false;
    for round in 3..200 {
        match worker.step(round, &jobs, &settings, false) {
            Step::Call(operation @ Operation::Claim { .. }) if !claimed => {
                worker.learn(round, &operation, Some(&Answer::Fence(Some(Fence(4)))));
                claimed = true;
            }
            Step::ReportAndComplete(Operation::Complete { fence, result, .. }) => {
                assert!(claimed);
                assert_eq!(fence, Fence(4));
                assert_eq!(result, "w1/4");
                return;
            }
            _ => {}
        }
    }
    panic!("the worker never completed");
}

/// A stall, of the whole worker or of one attempt, lasts past the
/// lease, and the stuck attempt then completes with its old fence.
#[test]
fn a_skewed_worker_keeps_its_skew_and_a_stall_outlasts_the_lease() {
    let settings = settings(Faults::all(false));
    let skews: Vec<f64> = (0..4).map(|i| Worker::new(i, &settings).skew).collect();
    assert!(skews.iter().all(|skew| skew.abs() <= TTL));
    assert!(skews.iter().any(|skew| *skew != 0.0));
    let jobs = ["j".to_string()];
    let held = Lease {
        job: "j".into(),
        fence: Fence(1),
        until: 100.0,
        reported: false,
    };
    let mut shapes = HashSet::new();
    for index in 0..4 {
        let mut worker = Worker::new(index, &settings);
        let Some(stalled) = (1..1000).find(|round| {
            worker.lease.get_or_insert_with(|| held.clone());
            worker.step(*round, &jobs, &settings, false) == Step::Stall
        }) else {
            panic!("worker {index} never stalled");
        };
        let paused = worker.stalled_in(stalled + 1);
        shapes.insert(paused);
        let lease_rounds = (TTL / TICK) as usize;
        let woke = (stalled + 1..stalled + 100)
            .find(|round| {
                !worker.stalled_in(*round)
                    && matches!(
                        worker.step(*round, &jobs, &settings, false),
                        Step::ReportAndComplete(Operation::Complete {
                            fence: Fence(1),
                            ..
                        }) | Step::Call(
                            Operation::Renew {
                                fence: Fence(1),
                                ..
                            } | Operation::Release {
                                fence: Fence(1),
                                ..
                            }
                        )
                    )
            })
            .expect("the stuck attempt comes back with its old fence");
        assert!(
            woke - stalled > lease_rounds,
            "woke after {} rounds",
            woke - stalled
        );
    }
    assert!(!shapes.is_empty());
}
