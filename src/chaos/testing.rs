//! What the chaos tests share: a small seeded random number generator, so
//! that a failing case is reproduced by its seed alone, and the calls and
//! records of small histories on one job, `j`.

use super::history::{Call, Returned};
use super::plan::{Faults, Settings};
use super::run::Record;
use super::sink::SinkReport;
use crate::job::{Fence, Job};
use crate::operation::{Answer, Operation};
use std::time::Duration;

/// SplitMix64: one 64-bit word of state, every seed a full-period stream.
pub(crate) struct SplitMix(u64);

impl SplitMix {
    pub(crate) fn new(seed: u64) -> SplitMix {
        SplitMix(seed)
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..bound` (`bound` above 0); the slight bias of the
    /// modulo does not matter to a test.
    pub(crate) fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound as u64) as usize
    }

    /// `true` with probability `percent` / 100.
    pub(crate) fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// A call of `worker` on job `j`, begun at `at`, ended a nanosecond later
/// unless its outcome is unknown.
pub(crate) fn call(worker: usize, at: u64, operation: Operation, returned: Returned) -> Call {
    Call {
        worker,
        operation,
        began: at,
        ended: (returned != Returned::Unknown).then_some(at + 1),
        returned,
    }
}

/// A claim of `j` by `worker` at `now` for 2 s, answered `fence`.
pub(crate) fn claim(worker: usize, at: u64, now: f64, fence: Option<i64>) -> Call {
    call(
        worker,
        at,
        Operation::Claim {
            job_id: "j".into(),
            owner: crate::chaos::plan::owner(worker),
            now,
            ttl: 2.0,
        },
        Returned::Answer(Answer::Fence(fence.map(Fence))),
    )
}

/// A completion of `j` by `worker` with `fence` at `now` 1, answered `answer`.
pub(crate) fn complete(worker: usize, at: u64, fence: i64, answer: bool) -> Call {
    let owner = crate::chaos::plan::owner(worker);
    call(
        worker,
        at,
        Operation::Complete {
            job_id: "j".into(),
            owner: owner.clone(),
            fence: Fence(fence),
            now: 1.0,
            result: format!("{owner}/{fence}"),
        },
        Returned::Answer(Answer::Bool(answer)),
    )
}

/// Worker 0's enqueue of `j`, answered `true`.
pub(crate) fn enqueue(at: u64) -> Call {
    call(
        0,
        at,
        Operation::Enqueue { job_id: "j".into() },
        Returned::Answer(Answer::Bool(true)),
    )
}

/// A record of two workers' `calls` that left `rows`, with no fault.
pub(crate) fn record(calls: Vec<Call>, rows: Vec<Job>) -> Record {
    Record {
        settings: Settings {
            workers: 2,
            operations: calls.len(),
            seed: 0,
            faults: Faults::none(),
        },
        moments: Vec::new(),
        calls,
        rows: Ok(rows),
        integrity: "ok".into(),
        skews: vec![0.0, 0.0],
        kills: 0,
        restarts: 0,
        cut_off: 0,
        partitions: 0,
        on_a_server: false,
        sinks: SinkReport::default(),
        took: Duration::ZERO,
    }
}

/// The row of `j` held by `owner` with `fence` until 3, done with
/// `owner/fence` as its result when `done`.
pub(crate) fn row(owner: &str, fence: i64, done: bool) -> Job {
    Job {
        id: "j".into(),
        owner: Some(owner.into()),
        until: 3.0,
        fence: Fence(fence),
        result: done.then(|| format!("{owner}/{fence}")),
        done,
    }
}
