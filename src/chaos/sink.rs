//! What leases do not promise: a side effect outside the store ("send the
//! job's report"), which a worker carries out just before it completes the
//! job, received by two external systems.
//!
//! - The trusting sink takes every report it is sent.
//! - The fenced sink does what the worksheet's last section asks of systems
//!   outside the store: it checks the fence at the moment of writing, and
//!   refuses a report whose fence is lower than one it already took for
//!   that job.
//!
//! A stalled worker, or one whose clock is behind, still believes it holds
//! the lease after another took it over; the store refuses its completion,
//! but its report was already sent. A *stale report* is one that lands
//! after a newer generation's report of the same job: the trusting sink
//! takes them, the fenced sink takes none. Neither promises exactly once:
//! a report sent by a worker whose lease then ran out is sent again by the
//! next holder, in generation order, as at-least-once delivery does.

use crate::job::Fence;
use crate::operation::Operation;
use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

/// One report a worker sent.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Report {
    /// The worker that sent it.
    pub worker: usize,
    /// The job it reports.
    pub job: String,
    /// The fence of the lease the worker believed it held.
    pub fence: Fence,
    /// Whether a report with a higher fence for the job had been taken
    /// before it: the trusting sink takes it all the same.
    pub stale: bool,
}

/// What the two sinks saw.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct SinkReport {
    /// Every report sent, in order (both sinks were sent each).
    pub reports: Vec<Report>,
}

impl SinkReport {
    /// Reports the trusting sink took: all of them.
    pub fn trusting_taken(&self) -> usize {
        self.reports.len()
    }

    /// Stale reports the trusting sink took.
    pub fn trusting_stale(&self) -> usize {
        stale_among(self.reports.iter())
    }

    /// Stale reports the fenced sink took, counted over what it took in
    /// the order it took it, as for the trusting sink: none, if its check
    /// at the moment of writing holds.
    pub fn fenced_stale(&self) -> usize {
        stale_among(self.reports.iter().filter(|report| !report.stale))
    }

    /// Reports the fenced sink took: every one that was not stale.
    pub fn fenced_taken(&self) -> usize {
        self.reports.len() - self.fenced_refused()
    }

    /// Reports the fenced sink refused when they arrived.
    pub fn fenced_refused(&self) -> usize {
        self.reports.iter().filter(|report| report.stale).count()
    }

    /// Jobs whose report the fenced sink took more than once, each time
    /// from a newer generation: at-least-once, which no lease prevents.
    pub fn fenced_resent(&self) -> usize {
        let mut taken: BTreeMap<&str, usize> = BTreeMap::new();
        for report in self.reports.iter().filter(|report| !report.stale) {
            *taken.entry(&report.job).or_default() += 1;
        }
        taken.values().filter(|count| **count > 1).count()
    }
}

/// How many of `taken`, reports a sink took in the order it took them,
/// arrived after one of the same job with a higher fence.
fn stale_among<'a>(taken: impl Iterator<Item = &'a Report>) -> usize {
    let mut highest: BTreeMap<&str, Fence> = BTreeMap::new();
    let mut stale = 0;
    for report in taken {
        let before = highest.entry(&report.job).or_insert(report.fence);
        if *before > report.fence {
            stale += 1;
        } else {
            *before = report.fence;
        }
    }
    stale
}

/// The two sinks of a run, taking reports from every worker's thread.
#[derive(Debug, Default)]
pub struct Sinks {
    /// The highest fence a report of each job carried, and every report.
    seen: Mutex<(BTreeMap<String, Fence>, Vec<Report>)>,
}

impl Sinks {
    /// Sinks that have seen nothing yet.
    pub fn new() -> Sinks {
        Sinks::default()
    }

    /// Worker `worker` sends the report of the job its `complete` is
    /// about, with that call's fence; any other operation sends nothing.
    pub fn report(&self, worker: usize, complete: &Operation) {
        let Operation::Complete { job_id, fence, .. } = complete else {
            return;
        };
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        let (highest, reports) = &mut *seen;
        let stale = highest.get(job_id).is_some_and(|taken| taken > fence);
        if !stale {
            highest.insert(job_id.clone(), *fence);
        }
        reports.push(Report {
            worker,
            job: job_id.clone(),
            fence: *fence,
            stale,
        });
    }

    /// What they saw.
    pub fn report_of(&self) -> SinkReport {
        let seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        SinkReport {
            reports: seen.1.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn complete(job: &str, fence: i64) -> Operation {
        Operation::Complete {
            job_id: job.into(),
            owner: "w".into(),
            fence: Fence(fence),
            now: 1.0,
            result: "r".into(),
        }
    }

    /// An older generation's report after a newer one's is stale: the
    /// trusting sink takes it, the fenced sink refuses it; a newer
    /// generation's report after an older one's is taken by both.
    #[test]
    fn a_report_older_than_one_taken_is_stale() {
        let sinks = Sinks::new();
        sinks.report(0, &complete("a", 1));
        sinks.report(1, &complete("a", 2));
        sinks.report(0, &complete("a", 1));
        sinks.report(2, &complete("b", 1));
        sinks.report(3, &Operation::InitDb);
        let seen = sinks.report_of();
        assert_eq!(seen.reports.len(), 4);
        assert_eq!(seen.trusting_taken(), 4);
        assert_eq!(seen.trusting_stale(), 1);
        assert_eq!(seen.fenced_taken(), 3);
        assert_eq!(seen.fenced_refused(), 1);
        assert_eq!(seen.fenced_stale(), 0);
        assert_eq!(seen.fenced_resent(), 1);
        assert!(seen.reports[2].stale);
    }

    /// The stale reports a sink took are counted from the order it took
    /// them in, not from its own flags: a fenced sink that let an older
    /// report through would show it.
    #[test]
    fn a_sink_that_took_an_older_report_shows_it_as_stale() {
        let report = |fence, stale| Report {
            worker: 0,
            job: "a".into(),
            fence: Fence(fence),
            stale,
        };
        let leaky = SinkReport {
            reports: vec![report(2, false), report(1, false), report(3, false)],
        };
        assert_eq!((leaky.fenced_stale(), leaky.trusting_stale()), (1, 1));
        assert_eq!(leaky.fenced_refused(), 0);
    }
}
