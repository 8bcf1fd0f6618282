//! A bounded linearizability checker: the search of Wing and Gong, as Lowe
//! improved it (each configuration of the search is tried once), with the
//! contract's [`JobModel`] as the sequential specification.
//!
//! A configuration is the set of calls linearized so far (a bitset) and the
//! model's state after them; the search keeps every configuration it has
//! tried, so a state reached by two orders of the same calls is explored
//! once. The search is bounded by a number of steps, and a search cut off
//! says so ([`Verdict::Unknown`]): it never passes a history it has not
//! finished with.
//!
//! How the recorded calls become the search's entries:
//!
//! * An answered call must be placed inside its interval, with its answer.
//! * A call whose outcome is unknown ([`Returned::Unknown`], or an error
//!   that [`error_may_have_taken_effect`]) may be placed at any time after
//!   it began, with whatever the model answers, or left out.
//! * A call that failed without effect (any other error) has nothing to
//!   place, except an [`ErrorKind::InvalidArgument`] refusal of arguments
//!   the contract accepts, which is a wrong answer and must be placed (it
//!   never can be).
//! * `claim_many` is no single step: the store runs one claim transaction
//!   per owner, and another worker's call may fall between two of them. So
//!   each owner's claim is an entry of its own, over the whole call's
//!   interval, with that owner's fence as its answer. (Its arguments are
//!   checked before any claim runs, so a refused `claim_many` is still one
//!   call; an answer with the wrong number of fences is kept whole, and the
//!   model rejects it.)
//!
//! Two calls whose intervals only touch (one ends at the very nanosecond
//! the other begins) count as concurrent: on a coarse clock they may be.

use super::history::{error_may_have_taken_effect, Call, Returned};
use super::model::{check_arguments, Expected, JobModel};
use crate::error::ErrorKind;
use crate::operation::{Answer, Operation};
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// Where one step of a witness came from: a call of the history, or one
/// owner's claim inside a `claim_many` call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Placement {
    /// The call's index in the history given to [`check`].
    pub call: usize,
    /// For a `claim_many` call, the index of the owner whose claim this is.
    pub claim: Option<usize>,
}

/// One job's linearization: the order in which its calls took effect.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Witness {
    /// The job; `None` for the calls that name no job (`init_db`).
    pub job_id: Option<String>,
    /// The calls in the order the model ran them. Every answered call is
    /// in it; a call of unknown outcome only when the linearization found
    /// gives it an effect (never one whose effect would change nothing);
    /// a call that failed without effect never.
    pub order: Vec<Placement>,
}

/// What the contract expected of the first call that cannot be placed: the
/// answer it gives and the row it gives it from, in the order the search
/// found for the calls before that one (one such order: another may leave
/// another row).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Expectation {
    /// The contract's answer (in JSON the protocol's form: `false`, `2`,
    /// `null`); `None` when it refuses the arguments (in JSON the string
    /// `"invalid-argument"`).
    #[serde(serialize_with = "contract_answer_as_json")]
    pub answer: Option<Answer>,
    /// The stored row then; `None` when the job does not exist.
    pub row: Option<crate::job::Job>,
}

/// An [`Expectation`]'s answer as its JSON.
fn contract_answer_as_json<S: serde::Serializer>(
    answer: &Option<Answer>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match answer {
        Some(answer) => answer.to_json().serialize(serializer),
        None => serializer.serialize_str("invalid-argument"),
    }
}

/// What is wrong with a history before any search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Malformation {
    /// `ended` is before `began`.
    EndedBeforeBegan,
    /// The call has no end (its worker was killed) but a known outcome:
    /// only [`Returned::Unknown`] goes with `ended: None`.
    OutcomeWithoutEnd,
}

/// What the checker found.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum Verdict {
    /// Every job's calls have a linearization.
    Linearizable {
        /// One linearization per job, jobs in the order they first appear.
        witnesses: Vec<Witness>,
        /// The search steps it took, over all jobs.
        steps: usize,
    },
    /// One job's calls have no linearization: the contract cannot explain
    /// the answers, whatever instant each call took effect at.
    NotLinearizable {
        /// The job; `None` for the calls that name no job (`init_db`).
        job_id: Option<String>,
        /// The job's calls (indices in the history) in order of `began`,
        /// the order the prefixes below count in.
        calls: Vec<usize>,
        /// How many of those calls, from the first, were shown to have a
        /// linearization when every later call is taken as of unknown
        /// outcome (begun, perhaps taken effect): the longest valid prefix
        /// the search established.
        longest_prefix: usize,
        /// The fewest calls from the first shown to have none: the call at
        /// position `failing_prefix - 1` is one whose answer cannot be
        /// placed. One more than `longest_prefix`, unless the step budget
        /// ran out while narrowing the two down.
        failing_prefix: usize,
        /// The first call (an index in the history) that cannot be
        /// placed: the calls before it can all be explained, it cannot.
        /// `None` when the budget ran out before the search could tell.
        first_unplaceable: Option<usize>,
        /// What the contract answers to that call, and the row it answers
        /// from, in the order that explains the calls before it: `None`
        /// when there is no such call.
        expected: Option<Box<Expectation>>,
        /// The search steps it took, narrowing included.
        steps: usize,
    },
    /// The step budget ran out on one job before its search ended: nothing
    /// is known about that job, and no other job was found wrong.
    Unknown {
        /// The job whose search was cut off.
        job_id: Option<String>,
        /// The steps its search took: the budget.
        steps: usize,
    },
    /// The history cannot be judged as recorded.
    Malformed {
        /// The first bad call's index in the history.
        call: usize,
        /// What is wrong with it.
        problem: Malformation,
    },
}

/// Checks the whole history: each job's calls on their own, `init_db`
/// calls as one more group, each group's search bounded by `budget` steps.
///
/// The verdicts combine as linearizability does: a job with no
/// linearization makes the history wrong (the first such job is reported,
/// and the jobs after it are not searched); otherwise a job whose search
/// was cut off leaves it unknown; otherwise it is linearizable. A
/// malformed call is reported before any search.
///
/// A job found wrong is then narrowed down to its longest valid prefix,
/// with at most one more search per halving of its calls, each bounded by
/// `budget` as well.
pub fn check(history: &[Call], budget: usize) -> Verdict {
    if let Some(malformed) = malformation(history) {
        return malformed;
    }
    let mut groups: Vec<(Option<&str>, Vec<usize>)> = Vec::new();
    let mut group_of: HashMap<Option<&str>, usize> = HashMap::new();
    for (index, call) in history.iter().enumerate() {
        let job = call.operation.job_id();
        let group = *group_of.entry(job).or_insert_with(|| {
            groups.push((job, Vec::new()));
            groups.len() - 1
        });
        groups[group].1.push(index);
    }
    let mut witnesses = Vec::new();
    let mut steps = 0;
    let mut cut_off = None;
    for (job, calls) in groups {
        match check_group(history, job, calls, budget) {
            Verdict::Linearizable {
                witnesses: found,
                steps: taken,
            } => {
                witnesses.extend(found);
                steps += taken;
            }
            unknown @ Verdict::Unknown { .. } => {
                cut_off.get_or_insert(unknown);
            }
            wrong => return wrong,
        }
    }
    cut_off.unwrap_or(Verdict::Linearizable { witnesses, steps })
}

/// Checks only the calls of `history` that name the job `job_id` (`None`:
/// the `init_db` calls), as [`check`] checks each job. Indices in the
/// verdict are still the history's.
pub fn check_job(history: &[Call], job_id: Option<&str>, budget: usize) -> Verdict {
    if let Some(malformed) = malformation(history) {
        return malformed;
    }
    let calls = (0..history.len())
        .filter(|&index| history[index].operation.job_id() == job_id)
        .collect();
    check_group(history, job_id, calls, budget)
}

fn malformation(history: &[Call]) -> Option<Verdict> {
    history.iter().enumerate().find_map(|(call, recorded)| {
        let problem = match recorded.ended {
            Some(ended) if ended < recorded.began => Malformation::EndedBeforeBegan,
            None if recorded.returned != Returned::Unknown => Malformation::OutcomeWithoutEnd,
            _ => return None,
        };
        Some(Verdict::Malformed { call, problem })
    })
}

/// One group's verdict: the full search, then, if it fails, the narrowing
/// down to the longest valid prefix.
fn check_group(
    history: &[Call],
    job: Option<&str>,
    mut calls: Vec<usize>,
    budget: usize,
) -> Verdict {
    let job_id = job.map(str::to_string);
    calls.sort_by_key(|&index| (history[index].began, index));
    let full = search(&entries(history, &calls, calls.len()), budget);
    let mut steps = full.steps;
    match full.end {
        End::Found(order) => Verdict::Linearizable {
            witnesses: vec![Witness { job_id, order }],
            steps,
        },
        End::OutOfSteps => Verdict::Unknown { job_id, steps },
        End::Impossible => {
            // With the calls from `k` on taken as unknown, a prefix that
            // has a linearization keeps one when it is shortened (the call
            // that leaves it may still be placed where it was), so the
            // valid prefixes are those below one length: halve towards it.
            // The empty prefix is valid: leaving every call out explains it.
            let (mut valid, mut failing) = (0, calls.len());
            // The order found for the longest valid prefix so far.
            let mut explained = Vec::new();
            // Each round halves the span, so a usize's bits of rounds are
            // enough; the cap only keeps a broken halving from going on
            // for ever.
            for _ in 0..usize::BITS {
                if failing - valid <= 1 {
                    break;
                }
                let middle = valid + (failing - valid) / 2;
                let tried = search(&entries(history, &calls, middle), budget);
                steps += tried.steps;
                match tried.end {
                    End::Found(order) => {
                        valid = middle;
                        explained = order;
                    }
                    End::Impossible => failing = middle,
                    End::OutOfSteps => break,
                }
            }
            let first_unplaceable = (failing - valid == 1).then(|| calls[valid]);
            let expected = first_unplaceable.and_then(|call| {
                expectation(history, &entries(history, &calls, valid), &explained, call)
                    .map(Box::new)
            });
            Verdict::NotLinearizable {
                job_id,
                first_unplaceable,
                expected,
                calls,
                longest_prefix: valid,
                failing_prefix: failing,
                steps,
            }
        }
    }
}

/// What the contract answers to call `unplaceable` after the placements of
/// `order` (found over `entries`) that come before it, and the row then:
/// `None` if the order cannot be replayed (it always can: the search found
/// it with the same model).
fn expectation(
    history: &[Call],
    entries: &[Entry],
    order: &[Placement],
    unplaceable: usize,
) -> Option<Expectation> {
    let mut state = JobModel::default();
    for placement in order
        .iter()
        .take_while(|placement| placement.call != unplaceable)
    {
        let entry = entries.iter().find(|entry| entry.placement == *placement)?;
        state = match &entry.observed {
            Some(observed) => state.step(&entry.operation, observed)?,
            None => state.apply(&entry.operation).0,
        };
    }
    let operation = &history[unplaceable].operation;
    let answer = match state.apply(operation).1 {
        Expected::Answer(answer) => Some(answer),
        Expected::InvalidArgument => None,
    };
    Some(Expectation {
        answer,
        row: operation.job_id().and_then(|job| state.row(job)),
    })
}

/// One thing the search places: a call, or one owner's claim of a
/// `claim_many` call.
#[derive(Debug, Clone)]
struct Entry {
    placement: Placement,
    operation: Operation,
    /// The outcome it must have; `None` when it may have any, or none.
    observed: Option<Expected>,
    began: u64,
    /// When it must have taken effect by; `None` for an entry that need
    /// not take effect at all.
    ended: Option<u64>,
}

impl Entry {
    fn required(&self) -> bool {
        self.observed.is_some()
    }
}

/// The search's entries for the group's `calls` (in order of `began`):
/// the first `known` as recorded, the rest as of unknown outcome.
fn entries(history: &[Call], calls: &[usize], known: usize) -> Vec<Entry> {
    let mut entries = Vec::new();
    for (position, &index) in calls.iter().enumerate() {
        let call = &history[index];
        let returned = if position < known {
            &call.returned
        } else {
            &Returned::Unknown
        };
        let accepted = check_arguments(&call.operation).is_ok();
        let whole = |observed: Option<Expected>| Entry {
            placement: Placement {
                call: index,
                claim: None,
            },
            operation: call.operation.clone(),
            ended: observed.as_ref().and(call.ended),
            observed,
            began: call.began,
        };
        match returned {
            Returned::Answer(answer) => match claims(index, call, Some(answer)) {
                Some(parts) if accepted => entries.extend(parts),
                _ => entries.push(whole(Some(Expected::Answer(answer.clone())))),
            },
            Returned::Error(ErrorKind::InvalidArgument) => {
                if accepted {
                    entries.push(whole(Some(Expected::InvalidArgument)));
                }
            }
            Returned::Error(kind) if !error_may_have_taken_effect(*kind) => {}
            Returned::Error(_) | Returned::Unknown => {
                // Refused arguments change nothing, whatever the outcome.
                if accepted {
                    match claims(index, call, None) {
                        Some(parts) => entries.extend(parts),
                        None => entries.push(whole(None)),
                    }
                }
            }
        }
    }
    entries
}

/// A `claim_many` call as one claim per owner, each with its fence from
/// `answer` (or of unknown outcome when `answer` is `None`); `None` when
/// the call is no `claim_many`, or its answer is not one fence per owner.
fn claims(index: usize, call: &Call, answer: Option<&Answer>) -> Option<Vec<Entry>> {
    let Operation::ClaimMany {
        job_id,
        owners,
        now,
        ttl,
    } = &call.operation
    else {
        return None;
    };
    let fences = match answer {
        Some(Answer::Fences(fences)) if fences.len() == owners.len() => Some(fences),
        Some(_) => return None,
        None => None,
    };
    let parts = owners
        .iter()
        .enumerate()
        .map(|(owner_index, owner)| {
            let observed =
                fences.map(|fences| Expected::Answer(Answer::Fence(fences[owner_index])));
            Entry {
                placement: Placement {
                    call: index,
                    claim: Some(owner_index),
                },
                operation: Operation::Claim {
                    job_id: job_id.clone(),
                    owner: owner.clone(),
                    now: *now,
                    ttl: *ttl,
                },
                ended: observed.as_ref().and(call.ended),
                observed,
                began: call.began,
            }
        })
        .collect();
    Some(parts)
}

/// How a search ended.
enum End {
    /// A linearization: the placements in order.
    Found(Vec<Placement>),
    /// None exists.
    Impossible,
    /// The budget ran out first.
    OutOfSteps,
}

struct Search {
    end: End,
    steps: usize,
}

/// A set of entries, by index.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Bitset(Vec<u64>);

impl Bitset {
    fn new(size: usize) -> Bitset {
        Bitset(vec![0; size.div_ceil(64)])
    }

    fn insert(&mut self, index: usize) {
        self.0[index / 64] |= 1 << (index % 64);
    }

    fn remove(&mut self, index: usize) {
        self.0[index / 64] &= !(1 << (index % 64));
    }
}

/// The events of the entries in time order, as a doubly linked list from
/// which an entry's events are lifted while it is linearized and put back,
/// in reverse order, when the search backtracks over it.
struct Events {
    /// Per event: the entry it belongs to, and whether it is its call (or
    /// its return). Node 0 is the head and node `len + 1` the tail.
    entry: Vec<usize>,
    is_call: Vec<bool>,
    next: Vec<usize>,
    previous: Vec<usize>,
    /// Per entry: its call's node and its return's node, if it has one.
    call_node: Vec<usize>,
    return_node: Vec<Option<usize>>,
}

const HEAD: usize = 0;

impl Events {
    fn new(entries: &[Entry]) -> Events {
        // (time, calls before returns at one instant, entry): a call that
        // begins when another ends overlaps it.
        let mut order: Vec<(u64, u8, usize)> = Vec::new();
        for (index, entry) in entries.iter().enumerate() {
            order.push((entry.began, 0, index));
            if let Some(ended) = entry.ended {
                order.push((ended, 1, index));
            }
        }
        order.sort_unstable();
        let nodes = order.len() + 2;
        let mut events = Events {
            entry: vec![usize::MAX; nodes],
            is_call: vec![false; nodes],
            next: (1..=nodes).collect(),
            previous: (0..nodes).map(|node| node.wrapping_sub(1)).collect(),
            call_node: vec![0; entries.len()],
            return_node: vec![None; entries.len()],
        };
        for (position, &(_, kind, index)) in order.iter().enumerate() {
            let node = position + 1;
            events.entry[node] = index;
            events.is_call[node] = kind == 0;
            if kind == 0 {
                events.call_node[index] = node;
            } else {
                events.return_node[index] = Some(node);
            }
        }
        events
    }

    fn tail(&self) -> usize {
        self.entry.len() - 1
    }

    fn unlink(&mut self, node: usize) {
        let (previous, next) = (self.previous[node], self.next[node]);
        self.next[previous] = next;
        self.previous[next] = previous;
    }

    fn relink(&mut self, node: usize) {
        let (previous, next) = (self.previous[node], self.next[node]);
        self.next[previous] = node;
        self.previous[next] = node;
    }

    fn lift(&mut self, entry: usize) {
        self.unlink(self.call_node[entry]);
        if let Some(node) = self.return_node[entry] {
            self.unlink(node);
        }
    }

    fn unlift(&mut self, entry: usize) {
        if let Some(node) = self.return_node[entry] {
            self.relink(node);
        }
        self.relink(self.call_node[entry]);
    }
}

/// A linearized entry on the search's stack, with the state before it.
struct Frame {
    entry: usize,
    before: JobModel,
}

/// The search: walk the events from the first; at a call, try to run its
/// entry on the model next (and lift it, and start again from the first
/// event); at a return, whose call could not be placed before it, undo the
/// latest placement and try the call after it instead. Done when every
/// required entry is placed; impossible when a return is met with nothing
/// to undo. Each event visited is one step.
fn search(entries: &[Entry], budget: usize) -> Search {
    let mut events = Events::new(entries);
    let mut state = JobModel::default();
    let mut linearized = Bitset::new(entries.len());
    let mut tried: HashSet<(Bitset, JobModel)> = HashSet::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut pending = entries.iter().filter(|entry| entry.required()).count();
    let mut steps = 0;
    let mut node = events.next[HEAD];
    loop {
        if pending == 0 {
            let order = stack
                .iter()
                .map(|frame| entries[frame.entry].placement)
                .collect();
            return Search {
                end: End::Found(order),
                steps,
            };
        }
        if steps >= budget {
            return Search {
                end: End::OutOfSteps,
                steps,
            };
        }
        steps += 1;
        // Past the last event, or at a return: the entries placed so far
        // lead nowhere (the tail is only reached with a required entry
        // unplaced, which its return would have stopped at; treated alike).
        if node != events.tail() && events.is_call[node] {
            let index = events.entry[node];
            let entry = &entries[index];
            let after = match &entry.observed {
                Some(observed) => state.step(&entry.operation, observed),
                // An entry that may be left out is worth placing only when
                // it changes the state: placed without effect, it only
                // makes the search longer.
                None => {
                    let (after, _) = state.apply(&entry.operation);
                    (after != state).then_some(after)
                }
            };
            if let Some(after) = after {
                let mut placed = linearized.clone();
                placed.insert(index);
                if tried.insert((placed.clone(), after.clone())) {
                    stack.push(Frame {
                        entry: index,
                        before: std::mem::replace(&mut state, after),
                    });
                    linearized = placed;
                    events.lift(index);
                    if entry.required() {
                        pending -= 1;
                    }
                    node = events.next[HEAD];
                    continue;
                }
            }
            node = events.next[node];
        } else {
            let Some(frame) = stack.pop() else {
                return Search {
                    end: End::Impossible,
                    steps,
                };
            };
            state = frame.before;
            linearized.remove(frame.entry);
            events.unlift(frame.entry);
            if entries[frame.entry].required() {
                pending += 1;
            }
            node = events.next[events.call_node[frame.entry]];
        }
    }
}

#[cfg(test)]
mod tests;
