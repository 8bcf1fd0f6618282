//! `lab demo`: the worksheet's story replayed on a real database.
//!
//! A claims the job and stalls; its lease runs out; B claims it with the
//! next fence and completes; A comes back and tries to complete with its
//! old fence. The reference refuses A and keeps B's result. Replayed with a
//! mutant, the same story shows where that protection breaks.

use crate::error::StoreError;
use crate::job::{Fence, Job};
use crate::variant::JobStore;
use std::path::Path;

/// One moment of the story.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// The caller's clock.
    pub time: f64,
    /// Who acts: `A`, `B`, or `-` for the clock itself.
    pub actor: &'static str,
    /// What happens.
    pub action: String,
    /// The store's answer, as shown.
    pub answer: String,
}

/// The whole story as it happened on one implementation.
#[derive(Debug, Clone, PartialEq)]
pub struct Story {
    /// The events, in time order.
    pub events: Vec<Event>,
    /// The job's row at the end.
    pub final_row: Option<Job>,
    /// Whether A's late write replaced B's result.
    pub stale_write_landed: bool,
}

const JOB: &str = "report";
const B_RESULT: &str = "B's result";
const A_RESULT: &str = "A's stale result";

/// Plays the story on `store` with a new database at `db`.
pub fn play(store: &dyn JobStore, db: &Path) -> Result<Story, StoreError> {
    let mut events = Vec::new();
    let mut note = |time: f64, actor: &'static str, action: String, answer: String| {
        events.push(Event {
            time,
            actor,
            action,
            answer,
        });
    };
    store.init_db(db)?;
    let added = store.enqueue(db, JOB)?;
    note(0.0, "-", format!("enqueue({JOB:?})"), added.to_string());

    let a_fence = store.claim(db, JOB, "A", 100.0, 10.0)?;
    note(100.0, "A", "claim, ttl 10".into(), show_fence(a_fence));
    note(
        101.0,
        "A",
        "stalls (a long pause: GC, swap, a network partition)".into(),
        String::new(),
    );
    note(
        110.0,
        "-",
        "A's lease runs out (until = 110)".into(),
        String::new(),
    );

    let b_fence = store.claim(db, JOB, "B", 110.0, 10.0)?;
    note(110.0, "B", "claim, ttl 10".into(), show_fence(b_fence));
    let b_done = match b_fence {
        Some(fence) => store.complete(db, JOB, "B", fence, 112.0, B_RESULT)?,
        None => false,
    };
    note(
        112.0,
        "B",
        format!("complete with {}, result {B_RESULT:?}", show_fence(b_fence)),
        accepted(b_done),
    );

    let stale = a_fence.unwrap_or(Fence(1));
    let a_done = store.complete(db, JOB, "A", stale, 113.0, A_RESULT)?;
    note(
        113.0,
        "A",
        format!("wakes up, complete with its old fence {stale}, result {A_RESULT:?}"),
        accepted(a_done),
    );
    let final_row = store.state(db, JOB)?;
    let stale_write_landed =
        final_row.as_ref().and_then(|row| row.result.as_deref()) == Some(A_RESULT);
    Ok(Story {
        events,
        final_row,
        stale_write_landed,
    })
}

fn show_fence(fence: Option<Fence>) -> String {
    fence.map_or("none".into(), |fence| format!("fence {fence}"))
}

fn accepted(done: bool) -> String {
    if done { "accepted" } else { "refused" }.to_string()
}
