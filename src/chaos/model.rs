//! The worksheet's contract as a sequential specification of one job: what
//! each operation answers in each state, and the state it leaves, in
//! memory and with no SQLite.
//!
//! The comparisons are the reference store's (`crates/store/src/store.rs`), one for one:
//! a lease is valid while `now < until`, so the boundary `now == until` is
//! claimable; `renew` and `complete` need the stored owner and fence, a job
//! not done, and a valid lease; `release` needs the owner and fence and a
//! job not done, but not a valid lease. The differential test below runs
//! random sequences through the reference store and this model side by side.

use crate::job::{Fence, Job};
use crate::operation::{Answer, Operation};
use std::hash::{Hash, Hasher};

/// What the contract says a call comes to.
#[derive(Debug, Clone, PartialEq)]
pub enum Expected {
    /// The call runs and gives this answer.
    Answer(Answer),
    /// The contract refuses the arguments (the worksheet's `ValueError`,
    /// the store's [`ErrorKind::InvalidArgument`](crate::error::ErrorKind)):
    /// nothing changes.
    InvalidArgument,
}

/// Why the contract refuses an operation's arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    /// The rule the arguments break, in a few words.
    pub reason: &'static str,
}

/// One job's stored row, without its id (the operation names the job).
///
/// Two rows are equal, and hash alike, when every column is the same, the
/// lease end compared bit for bit: the checker keeps sets of rows, and a
/// float's `==` is no equivalence. (`until` is always finite: the contract
/// refuses a lease end that is not.)
#[derive(Debug, Clone)]
pub struct Row {
    /// The worker holding or last holding the lease; `None` when released
    /// or never claimed.
    pub owner: Option<String>,
    /// When the lease ends, on the callers' clock; `0` when nobody holds it.
    pub until: f64,
    /// The fence of the latest claim; `0` before the first.
    pub fence: Fence,
    /// The result the accepted completion stored.
    pub result: Option<String>,
    /// Whether a completion was accepted.
    pub done: bool,
}

impl Row {
    /// The row `enqueue` adds: no owner, `until` 0, fence 0, not done.
    fn enqueued() -> Row {
        Row {
            owner: None,
            until: 0.0,
            fence: Fence(0),
            result: None,
            done: false,
        }
    }

    /// The row as `state` answers it for the job `job_id`.
    fn job(&self, job_id: &str) -> Job {
        Job {
            id: job_id.to_string(),
            owner: self.owner.clone(),
            until: self.until,
            fence: self.fence,
            result: self.result.clone(),
            done: self.done,
        }
    }

    /// Whether `owner` with `fence` holds the current generation of a job
    /// not done: the condition of `release`, and of `renew` and `complete`
    /// together with a valid lease. An owner of `None` (released) is
    /// nobody's, as SQL's `owner = ?` is never true of NULL.
    fn held_by(&self, owner: &str, fence: Fence) -> bool {
        self.owner.as_deref() == Some(owner) && self.fence == fence && !self.done
    }

    /// Whether the lease is valid at `now`: it ends strictly later.
    fn valid_at(&self, now: f64) -> bool {
        self.until > now
    }
}

impl PartialEq for Row {
    fn eq(&self, other: &Row) -> bool {
        self.owner == other.owner
            && self.until.to_bits() == other.until.to_bits()
            && self.fence == other.fence
            && self.result == other.result
            && self.done == other.done
    }
}

impl Eq for Row {}

impl Hash for Row {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.owner.hash(state);
        self.until.to_bits().hash(state);
        self.fence.hash(state);
        self.result.hash(state);
        self.done.hash(state);
    }
}

/// The state of one job: not enqueued, or its row.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub enum JobModel {
    /// No job has this id.
    #[default]
    Absent,
    /// The job's row.
    Present(Row),
}

impl JobModel {
    /// What `operation` answers in this state and the state it leaves.
    ///
    /// The operation is taken to name this model's job (keep one model per
    /// job id; [`Operation::job_id`] says which job an operation names); `init_db`
    /// names none and is a no-op that answers [`Answer::Done`]. Arguments
    /// the contract refuses ([`check_arguments`]) give
    /// [`Expected::InvalidArgument`] and change nothing, whatever the state.
    ///
    /// Exactly the reference store's answer, but for one operation:
    /// `claim_many` runs its claims at once, so which owner wins a
    /// claimable job is up to the threads. This answer gives the lease to
    /// the first owner; [`JobModel::step`] accepts any single winner.
    pub fn apply(&self, operation: &Operation) -> (JobModel, Expected) {
        if check_arguments(operation).is_err() {
            return (self.clone(), Expected::InvalidArgument);
        }
        let unchanged = |answer| (self.clone(), Expected::Answer(answer));
        match operation {
            Operation::InitDb => unchanged(Answer::Done),
            Operation::Enqueue { .. } => match self {
                JobModel::Absent => (
                    JobModel::Present(Row::enqueued()),
                    Expected::Answer(Answer::Bool(true)),
                ),
                JobModel::Present(_) => unchanged(Answer::Bool(false)),
            },
            Operation::State { job_id } => unchanged(Answer::Row(self.row(job_id))),
            Operation::Claim {
                owner, now, ttl, ..
            } => match self.claimed(owner, *now, *ttl) {
                Some((next, fence)) => (next, Expected::Answer(Answer::Fence(Some(fence)))),
                None => unchanged(Answer::Fence(None)),
            },
            Operation::Renew {
                owner,
                fence,
                now,
                ttl,
                ..
            } => match self {
                JobModel::Present(row) if row.held_by(owner, *fence) && row.valid_at(*now) => {
                    let renewed = Row {
                        until: now + ttl,
                        ..row.clone()
                    };
                    (
                        JobModel::Present(renewed),
                        Expected::Answer(Answer::Bool(true)),
                    )
                }
                _ => unchanged(Answer::Bool(false)),
            },
            Operation::Complete {
                owner,
                fence,
                now,
                result,
                ..
            } => match self {
                JobModel::Present(row) if row.held_by(owner, *fence) && row.valid_at(*now) => {
                    let completed = Row {
                        result: Some(result.clone()),
                        done: true,
                        ..row.clone()
                    };
                    (
                        JobModel::Present(completed),
                        Expected::Answer(Answer::Bool(true)),
                    )
                }
                _ => unchanged(Answer::Bool(false)),
            },
            Operation::Release { owner, fence, .. } => match self {
                // No lease check: an owner whose lease ran out, and which
                // nobody has claimed since, may still give it back.
                JobModel::Present(row) if row.held_by(owner, *fence) => {
                    let released = Row {
                        owner: None,
                        until: 0.0,
                        ..row.clone()
                    };
                    (
                        JobModel::Present(released),
                        Expected::Answer(Answer::Bool(true)),
                    )
                }
                _ => unchanged(Answer::Bool(false)),
            },
            Operation::ClaimMany {
                owners, now, ttl, ..
            } => {
                // The claims one after another, in owner order: the first
                // takes a claimable lease and every later one finds it valid.
                let mut state = self.clone();
                let mut fences = Vec::with_capacity(owners.len());
                for owner in owners {
                    match state.claimed(owner, *now, *ttl) {
                        Some((next, fence)) => {
                            state = next;
                            fences.push(Some(fence));
                        }
                        None => fences.push(None),
                    }
                }
                (state, Expected::Answer(Answer::Fences(fences)))
            }
        }
    }

    /// The state after `operation` came to `observed`, or `None` when the
    /// contract does not allow that outcome in this state.
    ///
    /// For every operation but `claim_many` this is [`JobModel::apply`]'s
    /// outcome compared with `observed`. For `claim_many` any one owner may
    /// win a claimable job: the answer must have one entry per owner, the
    /// new fence at exactly one of them and `None` at the others (all
    /// `None` when the job is not claimable), and that owner holds the lease.
    pub fn step(&self, operation: &Operation, observed: &Expected) -> Option<JobModel> {
        match operation {
            Operation::ClaimMany {
                owners, now, ttl, ..
            } if check_arguments(operation).is_ok() => {
                let Expected::Answer(Answer::Fences(fences)) = observed else {
                    return None;
                };
                if fences.len() != owners.len() {
                    return None;
                }
                let mut winners = fences
                    .iter()
                    .zip(owners)
                    .filter_map(|(fence, owner)| fence.map(|fence| (fence, owner)));
                let winner = winners.next();
                if winners.next().is_some() {
                    return None;
                }
                match (winner, owners.first()) {
                    (None, None) => Some(self.clone()),
                    // The first owner's claim is the model's stand-in for
                    // "whichever ran first": it wins exactly when any would.
                    (None, Some(first)) => self
                        .claimed(first, *now, *ttl)
                        .is_none()
                        .then(|| self.clone()),
                    (Some((fence, owner)), _) => self
                        .claimed(owner, *now, *ttl)
                        .and_then(|(next, granted)| (granted == fence).then_some(next)),
                }
            }
            _ => {
                let (next, expected) = self.apply(operation);
                (expected == *observed).then_some(next)
            }
        }
    }

    /// The row as `state` answers it, for the job `job_id`.
    pub fn row(&self, job_id: &str) -> Option<Job> {
        match self {
            JobModel::Absent => None,
            JobModel::Present(row) => Some(row.job(job_id)),
        }
    }

    /// A claim by `owner` at `now` for `ttl`: the state it leaves and the
    /// fence it hands out, or `None` when the job is missing, done, or its
    /// lease is still valid. The arguments are already checked.
    fn claimed(&self, owner: &str, now: f64, ttl: f64) -> Option<(JobModel, Fence)> {
        let JobModel::Present(row) = self else {
            return None;
        };
        if row.done || row.valid_at(now) {
            return None;
        }
        // Reaching i64::MAX takes 2^63 claims from a fence of 0, the only
        // fence a model starts from: saturating never changes an answer.
        let fence = Fence(row.fence.0.saturating_add(1));
        let claimed = Row {
            owner: Some(owner.to_string()),
            until: now + ttl,
            fence,
            ..row.clone()
        };
        Some((JobModel::Present(claimed), fence))
    }
}

/// Whether the contract accepts the operation's arguments, whatever the
/// state: the store's checks, in its order, before it reads anything.
///
/// Refused: an empty job id or owner, a `now` that is not finite, and for
/// a lease (`claim`, `renew`, each owner of `claim_many`) a `ttl` that is
/// not finite or whose end `now + ttl` overflows or is not after `now`
/// (a `ttl` of 0 or less, or one too small to move the end at `now`).
/// A `claim_many` with no owners checks nothing, as the store's does.
pub fn check_arguments(operation: &Operation) -> Result<(), Refusal> {
    match operation {
        Operation::InitDb => Ok(()),
        Operation::Enqueue { job_id } | Operation::State { job_id } => job_id_given(job_id),
        Operation::Claim {
            job_id,
            owner,
            now,
            ttl,
        }
        | Operation::Renew {
            job_id,
            owner,
            now,
            ttl,
            ..
        } => lease_accepted(job_id, owner, *now, *ttl),
        Operation::Complete {
            job_id, owner, now, ..
        } => {
            job_id_given(job_id)?;
            owner_given(owner)?;
            now_finite(*now)
        }
        Operation::Release { job_id, owner, .. } => {
            job_id_given(job_id)?;
            owner_given(owner)
        }
        Operation::ClaimMany {
            job_id,
            owners,
            now,
            ttl,
        } => owners
            .iter()
            .try_for_each(|owner| lease_accepted(job_id, owner, *now, *ttl)),
    }
}

fn refused(reason: &'static str) -> Result<(), Refusal> {
    Err(Refusal { reason })
}

fn job_id_given(job_id: &str) -> Result<(), Refusal> {
    if job_id.is_empty() {
        return refused("the job id is empty");
    }
    Ok(())
}

fn owner_given(owner: &str) -> Result<(), Refusal> {
    if owner.is_empty() {
        return refused("the owner is empty");
    }
    Ok(())
}

fn now_finite(now: f64) -> Result<(), Refusal> {
    if !now.is_finite() {
        return refused("now is not finite");
    }
    Ok(())
}

fn lease_accepted(job_id: &str, owner: &str, now: f64, ttl: f64) -> Result<(), Refusal> {
    job_id_given(job_id)?;
    owner_given(owner)?;
    now_finite(now)?;
    if !ttl.is_finite() {
        return refused("ttl is not finite");
    }
    let until = now + ttl;
    if !until.is_finite() {
        return refused("now + ttl overflows");
    }
    if until <= now {
        return refused("the lease would not end after now");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chaos::testing::SplitMix;
    use crate::error::ErrorKind;
    use crate::job_store::JobStore;
    use crate::variant::Variant;
    use std::collections::HashMap;
    use std::path::Path;
    use std::time::Duration;

    const JOBS: [&str; 3] = ["a", "b", "c"];
    const OWNERS: [&str; 3] = ["A", "B", "C"];

    /// A random operation on one of [`JOBS`], aimed at the boundaries: the
    /// job's own owner and fence half the time (so that renewals and
    /// completions are accepted, not only refused), a `now` exactly at the
    /// lease's end, a `ttl` of 0, below 0, or too small to count, and now
    /// and then an argument the contract refuses.
    fn random_operation(
        rng: &mut SplitMix,
        models: &HashMap<String, JobModel>,
        clock: &mut f64,
    ) -> Operation {
        *clock += rng.pick(&[0.0, 0.0, 0.5, 1.0, 2.0, 5.0]);
        let job_id = if rng.chance(2) { "" } else { rng.pick(&JOBS) }.to_string();
        let row = match models.get(&job_id) {
            Some(JobModel::Present(row)) => Some(row.clone()),
            _ => None,
        };
        let owner = match (&row, rng.chance(50)) {
            (
                Some(Row {
                    owner: Some(owner), ..
                }),
                true,
            ) => owner.clone(),
            _ if rng.chance(2) => String::new(),
            _ => rng.pick(&OWNERS).to_string(),
        };
        let stored_fence = row.as_ref().map_or(0, |row| row.fence.0);
        let fence = if rng.chance(50) {
            Fence(stored_fence)
        } else {
            Fence(stored_fence + *rng.pick(&[-2, -1, 1, 2]))
        };
        let until = row.as_ref().map_or(0.0, |row| row.until);
        let now = match rng.below(20) {
            0..=4 => until,
            5 => until - 0.5,
            6 => *clock - 3.0,
            7 => *rng.pick(&[f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e308]),
            _ => *clock,
        };
        let ttl = match rng.below(20) {
            0 => -1.0,
            1 => 0.0,
            2 => 1e-300,
            3 => *rng.pick(&[f64::NAN, f64::INFINITY, 1e308]),
            _ => *rng.pick(&[0.5, 1.0, 2.0, 3.0, 5.0, 10.0]),
        };
        match rng.below(20) {
            0 => Operation::InitDb,
            1 | 2 => Operation::Enqueue { job_id },
            3 | 4 => Operation::State { job_id },
            5..=8 => Operation::Claim {
                job_id,
                owner,
                now,
                ttl,
            },
            9..=11 => Operation::Renew {
                job_id,
                owner,
                fence,
                now,
                ttl,
            },
            12..=14 => Operation::Complete {
                job_id,
                owner,
                fence,
                now,
                result: format!("r{}", rng.below(100)),
            },
            15..=17 => Operation::Release {
                job_id,
                owner,
                fence,
            },
            _ => {
                let owners = (0..rng.below(4))
                    .map(|_| rng.pick(&OWNERS).to_string())
                    .collect();
                Operation::ClaimMany {
                    job_id,
                    owners,
                    now,
                    ttl,
                }
            }
        }
    }

    /// What the reference store made of `operation`: its answer, or the
    /// contract's refusal. Any other error is a broken test environment.
    fn reference_outcome(store: &dyn JobStore, db: &Path, operation: &Operation) -> Expected {
        match store.call(db, operation) {
            Ok(answer) => Expected::Answer(answer),
            Err(error) if error.kind() == ErrorKind::InvalidArgument => Expected::InvalidArgument,
            Err(error) => panic!("{operation} failed in the reference store: {error}"),
        }
    }

    #[test]
    fn the_model_answers_as_the_reference_store_does_at_every_step() {
        const SEQUENCES: u64 = 40;
        const LENGTH: usize = 100;
        let store = Variant::reference().open(Duration::from_secs(5));
        let mut checked = 0;
        let mut accepted = HashMap::<&str, usize>::new();
        for seed in 0..SEQUENCES {
            let dir = tempfile::tempdir().expect("a temporary folder");
            let db = dir.path().join("jobs.db");
            store.init_db(&db).expect("init_db on a new file");
            let mut rng = SplitMix::new(seed);
            let mut models: HashMap<String, JobModel> = HashMap::new();
            let mut clock = 100.0;
            for step in 0..LENGTH {
                let operation = random_operation(&mut rng, &models, &mut clock);
                let at = format!("seed {seed}, step {step}: {operation}");
                let observed = reference_outcome(store.as_ref(), &db, &operation);
                let job_id = operation.job_id().unwrap_or_default().to_string();
                let model = models.get(&job_id).cloned().unwrap_or_default();
                let next = model.step(&operation, &observed);
                assert!(
                    next.is_some(),
                    "{at}: the store answered {observed:?}, which the model does not allow in {model:?}"
                );
                if !matches!(operation, Operation::ClaimMany { .. }) {
                    let (applied, expected) = model.apply(&operation);
                    assert_eq!(observed, expected, "{at}: the answers differ in {model:?}");
                    assert_eq!(
                        next.as_ref(),
                        Some(&applied),
                        "{at}: step and apply disagree"
                    );
                }
                if matches!(
                    observed,
                    Expected::Answer(Answer::Bool(true) | Answer::Fence(Some(_)))
                ) {
                    *accepted.entry(operation.name()).or_default() += 1;
                }
                let next = next.unwrap_or_default();
                // Every answer matched; the rows must too, including what
                // no answer shows (a refused call's untouched row).
                if !job_id.is_empty() {
                    let read = Operation::State {
                        job_id: job_id.clone(),
                    };
                    assert_eq!(
                        reference_outcome(store.as_ref(), &db, &read),
                        Expected::Answer(Answer::Row(next.row(&job_id))),
                        "{at}: the stored row differs from the model's"
                    );
                }
                models.insert(job_id, next);
                checked += 1;
            }
        }
        assert_eq!(checked, 4000);
        // The sequences reach the accepting branches, not only refusals.
        for name in ["enqueue", "claim", "renew", "complete", "release"] {
            assert!(
                accepted.get(name).copied().unwrap_or(0) >= 10,
                "too few accepted {name} calls: {accepted:?}"
            );
        }
    }

    /// Two rows are equal exactly when every column is, the lease end
    /// compared bit for bit (`0.0` and `-0.0` are two ends): the checker
    /// keeps sets of states, and a state must equal its own copy.
    #[test]
    fn rows_are_equal_exactly_when_every_column_is() {
        let row = Row {
            owner: Some("A".into()),
            until: 3.0,
            fence: Fence(2),
            result: Some("r".into()),
            done: true,
        };
        assert_eq!(row, row.clone());
        assert_eq!(Row::enqueued(), Row::enqueued());
        for other in [
            Row {
                owner: Some("B".into()),
                ..row.clone()
            },
            Row {
                owner: None,
                ..row.clone()
            },
            Row {
                until: 4.0,
                ..row.clone()
            },
            Row {
                fence: Fence(3),
                ..row.clone()
            },
            Row {
                result: None,
                ..row.clone()
            },
            Row {
                done: false,
                ..row.clone()
            },
        ] {
            assert_ne!(row, other);
            assert_ne!(other, row);
        }
        let negative_zero = Row {
            until: -0.0,
            ..Row::enqueued()
        };
        assert_ne!(Row::enqueued(), negative_zero);
    }

    #[test]
    fn claim_many_may_be_won_by_any_one_owner() {
        let enqueued = JobModel::Present(Row::enqueued());
        let race = Operation::ClaimMany {
            job_id: "j".into(),
            owners: vec!["A".into(), "B".into()],
            now: 1.0,
            ttl: 1.0,
        };
        let answer = |fences: Vec<Option<i64>>| {
            Expected::Answer(Answer::Fences(
                fences.into_iter().map(|f| f.map(Fence)).collect(),
            ))
        };
        let won_by_b = enqueued.step(&race, &answer(vec![None, Some(1)]));
        assert_eq!(
            won_by_b
                .and_then(|state| state.row("j"))
                .and_then(|job| job.owner),
            Some("B".to_string())
        );
        for wrong in [
            vec![Some(1), Some(1)],
            vec![None, None],
            vec![Some(2), None],
            vec![Some(1)],
        ] {
            assert_eq!(
                enqueued.step(&race, &answer(wrong.clone())),
                None,
                "{wrong:?}"
            );
        }
        assert_eq!(
            JobModel::Absent.step(&race, &answer(vec![None, None])),
            Some(JobModel::Absent)
        );
    }
}
