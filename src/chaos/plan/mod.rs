//! What a chaos run does: its settings, the faults it injects, and each
//! worker's loop (claim, work, renew, complete or release), decided by the
//! seed and by the answers the worker got.
//!
//! Time is the run's own: round `r` is at `r × TICK` seconds, and each
//! worker passes its own `now` (that time plus its clock's skew) to the
//! store, as the worksheet's callers do. A stall is a worker that misses
//! rounds while the others go on, so no real time is spent waiting for a
//! lease to run out.

mod faults;

use super::rng::Rng;
use crate::job::Fence;
use crate::operation::{Answer, Operation};
use std::collections::HashSet;

/// The run's time between two rounds, in the store's seconds.
pub const TICK: f64 = 0.25;

/// How long a claimed or renewed lease lasts, in the store's seconds: eight
/// rounds.
pub const TTL: f64 = 2.0;

pub use faults::{Faults, Place, FAULT_NAMES};

/// A chaos run's settings: with the same settings, a run makes the same
/// calls in the same rounds (see [`super::run`] for what the operating
/// system decides).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Settings {
    /// How many workers run at once.
    pub workers: usize,
    /// How many store calls the run makes in all.
    pub operations: usize,
    /// The seed of every random choice.
    pub seed: u64,
    /// The faults injected.
    pub faults: Faults,
}

/// How many workers a chaos run has unless told otherwise (`lab chaos`,
/// `lab matrix --chaos`).
pub const DEFAULT_WORKERS: u16 = 8;

/// How many store calls a chaos run makes unless told otherwise.
pub const DEFAULT_CALLS: u32 = 2000;

impl Settings {
    /// The settings of a run beside the kill matrix (`lab matrix --chaos`):
    /// the default workers and calls, seed 1, every fault (no skew), so
    /// that every variant meets the same run.
    pub fn beside_the_matrix() -> Settings {
        Settings {
            workers: usize::from(DEFAULT_WORKERS),
            operations: DEFAULT_CALLS as usize,
            seed: 1,
            faults: Faults::all(false),
        }
    }

    /// How many jobs the workers crowd at a time: few, so that leases are
    /// taken over all the time.
    pub fn jobs(&self) -> usize {
        (self.workers / 2).max(1)
    }
}

/// A worker's name: reused across its lives, as a restarted worker reuses
/// its name.
pub fn owner(worker: usize) -> String {
    format!("w{}", worker + 1)
}

/// A lease a worker believes it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Lease {
    /// The job.
    pub job: String,
    /// The fence its claim returned.
    pub fence: Fence,
    /// When it ends, on the worker's own clock.
    pub until: f64,
    /// Whether the worker sent the job's report (its side effect) already.
    pub reported: bool,
}

/// What a worker does in one round.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// One store call.
    Call(Operation),
    /// Sends the job's report (the side effect outside the store), then
    /// completes the job: two things, as a real worker does them.
    ReportAndComplete(Operation),
    /// Nothing this round: it stalls.
    Stall,
    /// Nothing this round: it backs off after a refused claim.
    Idle,
}

/// A moment of a worker's story that its calls alone do not show: where it
/// stalled, came back, or was killed or stopped and started again. The
/// timeline marks each, so that a counterexample reads as a story.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "moment")]
pub enum Moment {
    /// It stalled past its lease holding `fence` on `job`: the whole worker
    /// paused (`whole`), or one attempt got stuck while the worker went on.
    Stalled {
        /// The job of the lease.
        job: String,
        /// The fence it held.
        fence: Fence,
        /// Whether the whole worker paused.
        whole: bool,
    },
    /// The stalled attempt came back to `job` with `fence`, its clock saying
    /// `now`: the clock it read before the stall when `stale`.
    CameBack {
        /// The job of the lease.
        job: String,
        /// The fence it still holds, it believes.
        fence: Fence,
        /// The `now` its call carries.
        now: f64,
        /// Whether `now` was read before the stall.
        stale: bool,
    },
    /// It was killed in the middle of a call and starts again, remembering
    /// nothing.
    Killed,
    /// It was stopped between two calls and starts again, remembering
    /// nothing.
    Restarted,
    /// Its call in flight was cut off as the server crashed or its link
    /// went down: it may or may not have landed. The worker lives on,
    /// remembering what it knew.
    CutOff,
    /// Its link to the server was cut: it hears nothing until past its
    /// lease, then goes on with what it held.
    Partitioned,
}

/// A stall: until the round it wakes up in, and the `now` it will use
/// then when its clock is stale (it read the clock before stalling).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Stall {
    wake: usize,
    stale_now: Option<f64>,
}

/// One worker: what it remembers (lost when it is killed), its clock, and
/// its stalls.
///
/// A stall takes one of two shapes, as in real workers: the whole worker
/// stops (a pause of its process), or one attempt gets stuck on a thread
/// of its own (parked) while the worker goes on and may claim the same job
/// again. Either way the stuck attempt, when it wakes, completes with the
/// fence it had: the worksheet's story, and its variant where the late
/// write carries the worker's own name.
#[derive(Debug, Clone)]
pub struct Worker {
    /// Its index.
    pub index: usize,
    /// Its owner name.
    pub owner: String,
    /// How far its clock is off.
    pub skew: f64,
    /// The `now` of its last call: its clock never goes back.
    pub clock: f64,
    /// The lease it believes it holds.
    pub lease: Option<Lease>,
    /// The jobs it enqueued in this life.
    known: HashSet<String>,
    /// While the whole worker stalls.
    stall: Option<Stall>,
    /// An attempt stuck on a thread of its own, with its lease.
    parked: Option<(Lease, Stall)>,
    /// After a refused claim, it waits until this round before it claims
    /// again, as a polling worker backs off.
    backoff_until: usize,
    /// The job of its parked attempt: the one it goes back to first, as a
    /// worker whose attempt timed out picks the job up again.
    retry_job: Option<String>,
    /// Whether it ran its set-up (`init_db`) in this life: every worker
    /// does when it starts, as real workers make sure of their table.
    set_up: bool,
    /// Its last accepted completion, which it sends once more now and then,
    /// as a worker that lost the first answer retries.
    retry: Option<Operation>,
    /// Another worker's lease it read (job and fence): now and then it
    /// meddles with it under its own name, as a confused client would.
    spotted: Option<(String, Fence)>,
    /// The moments of its story since they were last taken
    /// ([`Worker::take_moments`]).
    moments: Vec<Moment>,
    rng: Rng,
}

impl Worker {
    /// Worker `index` of a run with `settings`.
    pub fn new(index: usize, settings: &Settings) -> Worker {
        let mut rng = Rng::part(settings.seed, 1 + index as u64);
        // Whole milliseconds, so that every `now` in a timeline is short.
        let skew = if settings.faults.skew > 0.0 {
            ((rng.unit() * 2.0 - 1.0) * settings.faults.skew * 1000.0).round() / 1000.0
        } else {
            0.0
        };
        Worker {
            index,
            owner: owner(index),
            skew,
            clock: 0.0,
            lease: None,
            known: HashSet::new(),
            stall: None,
            parked: None,
            backoff_until: 0,
            retry_job: None,
            set_up: false,
            retry: None,
            spotted: None,
            moments: Vec::new(),
            rng,
        }
    }

    /// The moments of its story since they were last taken, oldest first.
    pub fn take_moments(&mut self) -> Vec<Moment> {
        std::mem::take(&mut self.moments)
    }

    /// Its link to the server was cut in `round`: the whole worker waits,
    /// hearing nothing, until past any lease it holds, then finishes what
    /// it started with the fence it had, as a stalled worker does. Answers
    /// the round its link is mended in.
    pub fn partitioned(&mut self, round: usize) -> usize {
        let wake = round + (TTL / TICK) as usize + 1 + self.rng.below(6);
        self.stall = Some(Stall {
            wake,
            stale_now: None,
        });
        self.moments.push(Moment::Partitioned);
        wake
    }

    /// Whether the whole worker stalls in `round`.
    pub fn stalled_in(&self, round: usize) -> bool {
        self.stall.is_some_and(|stall| round < stall.wake)
    }

    /// Its clock in `round`: the run's time plus its skew, in whole
    /// milliseconds, never going back.
    fn read_clock(&mut self, round: usize) -> f64 {
        let now = ((round as f64 * TICK + self.skew) * 1000.0).round() / 1000.0;
        self.clock = now.max(self.clock);
        self.clock
    }

    /// Its step in `round`, on `jobs` (the jobs still open, by id, oldest
    /// first). In a `herd` round every idle worker wakes up and claims the
    /// oldest job at once, as polling workers do when it comes free.
    pub fn step(&mut self, round: usize, jobs: &[String], settings: &Settings, herd: bool) -> Step {
        let clock = self.read_clock(round);
        if !self.set_up {
            self.set_up = true;
            return Step::Call(Operation::InitDb);
        }
        if let Some(step) = self.after_completion(clock) {
            return step;
        }
        if let Some(stall) = self.stall.take() {
            // Back from a pause: it finishes what it started, unaware.
            if let Some(lease) = self.lease.clone() {
                let now = stall.stale_now.unwrap_or(clock);
                self.came_back(&lease, now, stall.stale_now.is_some());
                return self.report_and_complete(&lease, now);
            }
        }
        if let Some(step) = self.unpark(round, clock) {
            return step;
        }
        let now = clock;
        let Some(lease) = self.lease.clone() else {
            return self.without_lease(round, jobs, herd, now);
        };
        if settings.faults.stalls && self.parked.is_none() && self.rng.chance(0.12) {
            return self.stall_past(lease, round, now);
        }
        self.with_lease(&lease, now)
    }

    /// The call that follows its last accepted completion now and then, at
    /// `clock`: `None` when none does (or there was no such completion).
    fn after_completion(&mut self, clock: f64) -> Option<Step> {
        let complete = self.retry.take()?;
        // Just after an accepted completion, now and then: the answer
        // was lost and it sends the completion again; or its heartbeat,
        // racing the completion, fires once more; or its clean-up (a
        // `finally`) gives the lease back. The store refuses the last
        // two: the job is done.
        if let Operation::Complete {
            job_id,
            owner,
            fence,
            ..
        } = &complete
        {
            let (job_id, owner, fence) = (job_id.clone(), owner.clone(), *fence);
            match self.rng.below(20) {
                0..=2 => return Some(Step::Call(complete)),
                3 => {
                    return Some(Step::Call(Operation::Renew {
                        job_id,
                        owner,
                        fence,
                        now: clock,
                        ttl: TTL,
                    }))
                }
                4 => {
                    return Some(Step::Call(Operation::Release {
                        job_id,
                        owner,
                        fence,
                    }))
                }
                _ => {}
            }
        }
        None
    }

    /// The call of its parked attempt when it comes unstuck in `round`
    /// (its `now` the stale one, or `clock`): `None` while it stays stuck,
    /// or when none is parked.
    fn unpark(&mut self, round: usize, clock: f64) -> Option<Step> {
        let (lease, stall) = self.parked.clone()?;
        // Its worker took the job back, with a newer fence: the moment
        // a stuck attempt does most harm, and a rare one if left to
        // chance, so the attempt often comes unstuck right then (as one
        // blocked on what the retry frees would).
        let retaken = self
            .lease
            .as_ref()
            .is_some_and(|held| held.job == lease.job && held.fence > lease.fence);
        if !(round >= stall.wake || (retaken && self.rng.chance(0.5))) {
            return None;
        }
        self.parked = None;
        let now = stall.stale_now.unwrap_or(clock);
        self.came_back(&lease, now, stall.stale_now.is_some());
        // Mostly it completes; or its heartbeat, which outlived the
        // work, renews; or its clean-up gives the lease back.
        let (job_id, owner, fence) = (lease.job.clone(), self.owner.clone(), lease.fence);
        // After a retake the stuck heartbeat and clean-up matter as
        // much as the late completion: each gets its equal share.
        let ways = if retaken { 3 } else { 5 };
        Some(match self.rng.below(ways) {
            0 => Step::Call(Operation::Renew {
                job_id,
                owner,
                fence,
                now,
                ttl: TTL,
            }),
            1 => Step::Call(Operation::Release {
                job_id,
                owner,
                fence,
            }),
            _ => Step::ReportAndComplete(self.complete(&lease, now)),
        })
    }

    /// Its step at `now` in `round` when it believes it holds no lease:
    /// meddling with a lease it spotted, backing off, or a call on one of
    /// `jobs` (enqueue, state or claim; the oldest in a `herd`).
    fn without_lease(&mut self, round: usize, jobs: &[String], herd: bool, now: f64) -> Step {
        if let Some((job, fence)) = self.spotted.take() {
            if jobs.contains(&job) && self.rng.chance(0.5) {
                return Step::Call(self.meddle(job, fence, now));
            }
        }
        if round < self.backoff_until && !herd {
            return Step::Idle;
        }
        let retry = self.retry_job.clone().filter(|job| jobs.contains(job));
        let job = match retry {
            _ if herd => jobs[0].clone(),
            Some(job) if self.rng.chance(0.8) => job,
            _ => jobs[self.rng.below(jobs.len())].clone(),
        };
        if self.known.insert(job.clone()) {
            return Step::Call(Operation::Enqueue { job_id: job });
        }
        if self.rng.chance(0.1) {
            return Step::Call(Operation::State { job_id: job });
        }
        Step::Call(Operation::Claim {
            job_id: job,
            owner: self.owner.clone(),
            now,
            ttl: TTL,
        })
    }

    /// A stall past `lease`, begun at `now` in `round`: the whole worker
    /// pauses, or the attempt is parked while the worker goes on. Answers
    /// [`Step::Stall`].
    fn stall_past(&mut self, lease: Lease, round: usize, now: f64) -> Step {
        // Past its lease: at least a lease's worth of rounds.
        let stall = Stall {
            wake: round + (TTL / TICK) as usize + 1 + self.rng.below(6),
            stale_now: self.rng.chance(0.5).then_some(now),
        };
        let whole = self.rng.chance(1.0 / 3.0);
        self.moments.push(Moment::Stalled {
            job: lease.job.clone(),
            fence: lease.fence,
            whole,
        });
        if whole {
            self.stall = Some(stall);
        } else {
            // A stuck attempt may stay stuck longer: long enough, often,
            // for its worker to claim the job again and hold it.
            let stall = Stall {
                wake: stall.wake + self.rng.below(12),
                ..stall
            };
            // It gives up on the attempt and goes back to the job when
            // the lease it knows of runs out, as a worker retries a job
            // after its visibility timeout.
            let left = ((lease.until - now) / TICK).ceil().max(0.0) as usize;
            self.backoff_until = round + left + 1;
            self.retry_job = Some(lease.job.clone());
            self.parked = Some((lease, stall));
            self.lease = None;
        }
        Step::Stall
    }

    /// Its step at `now` on the `lease` it holds: renew, release, read its
    /// state, or report and complete.
    fn with_lease(&mut self, lease: &Lease, now: f64) -> Step {
        let roll = self.rng.unit();
        if roll < 0.45 {
            Step::Call(Operation::Renew {
                job_id: lease.job.clone(),
                owner: self.owner.clone(),
                fence: lease.fence,
                now,
                ttl: TTL,
            })
        } else if roll < 0.55 {
            Step::Call(Operation::Release {
                job_id: lease.job.clone(),
                owner: self.owner.clone(),
                fence: lease.fence,
            })
        } else if roll < 0.65 {
            Step::Call(Operation::State {
                job_id: lease.job.clone(),
            })
        } else {
            self.report_and_complete(lease, now)
        }
    }

    /// Notes that the stalled attempt on `lease` came back, its call
    /// carrying `now` (`stale`: read before the stall).
    fn came_back(&mut self, lease: &Lease, now: f64, stale: bool) {
        self.moments.push(Moment::CameBack {
            job: lease.job.clone(),
            fence: lease.fence,
            now,
            stale,
        });
    }

    /// A call on another worker's lease (`fence` of `job`) under this
    /// worker's own name: the store must refuse each.
    fn meddle(&mut self, job: String, fence: Fence, now: f64) -> Operation {
        let owner = self.owner.clone();
        match self.rng.below(3) {
            0 => Operation::Renew {
                job_id: job,
                owner,
                fence,
                now,
                ttl: TTL,
            },
            1 => Operation::Release {
                job_id: job,
                owner,
                fence,
            },
            _ => Operation::Complete {
                result: format!("{owner}/{fence}"),
                job_id: job,
                owner,
                fence,
                now,
            },
        }
    }

    /// The completion of `lease` at `now`, with the result that names the
    /// worker and the fence.
    fn complete(&self, lease: &Lease, now: f64) -> Operation {
        Operation::Complete {
            job_id: lease.job.clone(),
            owner: self.owner.clone(),
            fence: lease.fence,
            now,
            result: format!("{}/{}", self.owner, lease.fence),
        }
    }

    fn report_and_complete(&mut self, lease: &Lease, now: f64) -> Step {
        if let Some(held) = self.lease.as_mut() {
            held.reported = true;
        }
        Step::ReportAndComplete(self.complete(lease, now))
    }

    /// What the worker learns from the answer to its `operation`: `None`
    /// when the call's outcome is unknown or it failed. An answer about
    /// another lease than the one it holds (a parked attempt's) leaves
    /// that one alone.
    pub fn learn(&mut self, round: usize, operation: &Operation, answer: Option<&Answer>) {
        if let (Operation::Complete { .. }, Some(Answer::Bool(true))) = (operation, answer) {
            self.retry = Some(operation.clone());
        }
        if let (Operation::State { job_id }, Some(Answer::Row(Some(row)))) = (operation, answer) {
            let held_by_another = !row.done
                && row.fence.0 > 0
                && row
                    .owner
                    .as_deref()
                    .is_some_and(|owner| owner != self.owner);
            if held_by_another {
                self.spotted = Some((job_id.clone(), row.fence));
            }
            return;
        }
        if let (Operation::Claim { .. }, Some(Answer::Fence(None))) = (operation, answer) {
            // Half a lease to a lease, so a lease runs out after a poll or two.
            let rounds = (TTL / TICK) as usize;
            self.backoff_until = round + rounds / 2 + self.rng.below(rounds / 2 + 1);
            return;
        }
        if let (
            Operation::Claim {
                job_id, now, ttl, ..
            },
            Some(Answer::Fence(Some(fence))),
        ) = (operation, answer)
        {
            self.lease = Some(Lease {
                job: job_id.clone(),
                fence: *fence,
                until: now + ttl,
                reported: false,
            });
            return;
        }
        let (job, fence) = match operation {
            Operation::Renew { job_id, fence, .. }
            | Operation::Complete { job_id, fence, .. }
            | Operation::Release { job_id, fence, .. } => (job_id, fence),
            _ => return,
        };
        let Some(lease) = self.lease.as_mut() else {
            return;
        };
        if lease.job != *job || lease.fence != *fence {
            return;
        }
        match (operation, answer) {
            (Operation::Renew { now, ttl, .. }, Some(Answer::Bool(true))) => {
                lease.until = now + ttl;
            }
            (Operation::Renew { .. }, Some(Answer::Bool(false)))
            | (Operation::Complete { .. } | Operation::Release { .. }, Some(_)) => {
                self.lease = None;
            }
            // A store error (busy, say): it tries again in a later round.
            _ => {}
        }
    }

    /// Killed and started again: the same name, nothing remembered.
    pub fn restart(&mut self) {
        self.lease = None;
        self.known.clear();
        self.stall = None;
        self.parked = None;
        self.backoff_until = 0;
        self.retry_job = None;
        self.set_up = false;
        self.retry = None;
        self.spotted = None;
    }
}

/// A seed that differs from run to run.
pub fn seed_from_clock() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    u64::try_from(nanos % 1_000_000).unwrap_or(0)
}

#[cfg(test)]
mod tests;
