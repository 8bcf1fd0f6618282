use super::*;
use crate::chaos::history::{Call, Returned};
use crate::chaos::judge::tests::stale_completion_after_a_stall;
use crate::chaos::properties::Property;
use crate::chaos::testing::{call, claim, complete, enqueue, record, row};
use crate::operation::{Answer, Operation};
use std::time::Duration;

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

/// The index of the last call of a scripted failing run: its stale
/// completion. A run of fewer calls cannot show it.
const STALE_AT: usize = 29;

/// The record of a scripted run of `settings`, cut after `calls` calls:
/// when `failing`, w1 claims `j` (fence 1), claims it again (fence 2) at
/// call 29 and its stale completion with fence 1 is accepted at call 30,
/// among state calls on a job never enqueued; else only those state calls.
fn scripted_record(settings: &Settings, failing: bool, calls: usize) -> Record {
    scripted_record_at(settings, failing.then_some(STALE_AT), calls)
}

/// [`scripted_record`] with the stale completion at call `stale_at` (an
/// index), when there is one.
fn scripted_record_at(settings: &Settings, stale_at: Option<usize>, calls: usize) -> Record {
    let (failing, at) = (stale_at.is_some(), stale_at.unwrap_or(STALE_AT));
    let filler = |index: usize| {
        call(
            0,
            index as u64 * 10,
            Operation::State { job_id: "k".into() },
            Returned::Answer(Answer::Row(None)),
        )
    };
    let made: Vec<Call> = (0..calls)
        .map(|index| match index {
            0 if failing => enqueue(0),
            1 if failing => claim(0, 10, 1.0, Some(1)),
            i if failing && i == at - 1 => claim(0, i as u64 * 10, 4.0, Some(2)),
            i if failing && i == at => complete(0, i as u64 * 10, 1, true),
            i => filler(i),
        })
        .collect();
    let rows = match calls {
        _ if !failing => Vec::new(),
        0 => Vec::new(),
        1 => vec![crate::job::Job {
            id: "j".into(),
            ..Default::default()
        }],
        n if n < at => vec![row("w1", 1, false)],
        n if n == at => vec![crate::job::Job {
            until: 6.0,
            ..row("w1", 2, false)
        }],
        _ => vec![row("w1", 1, true)],
    };
    // As a lab's run's record: the settings of the run of that many calls.
    Record {
        settings: Settings {
            operations: calls,
            ..settings.clone()
        },
        ..record(made, rows)
    }
}

/// A shrink's runs of a script's making: a run fails (see
/// [`scripted_record`]) when it has more calls than [`STALE_AT`] and
/// `fails` says so of its settings and its number among the runs (from 1).
/// A run that may stop early is asked after every 8 calls, as the lab's
/// runs are asked between rounds, and stops there when told to. Each call
/// takes `per_call` on the script's clock, and a run still going when the
/// clock reaches the time it is given is cut there (after whole calls,
/// the clock at that time).
struct Scripted<F> {
    fails: F,
    /// Each run's settings, and whether it could stop early.
    made: Vec<(Settings, bool)>,
    /// Each run's name on the progress line.
    labels: Vec<String>,
    /// After how many calls each run stopped early, if it did.
    stopped_at: Vec<Option<usize>>,
    /// Whether a failing run's stale completion is its last call (else
    /// call [`STALE_AT`]).
    at_the_end: bool,
    /// The time the shrink has taken, on the script's clock.
    clock: Duration,
    /// What one call costs on it.
    per_call: Duration,
}

impl<F: FnMut(&Settings, usize) -> bool> Scripted<F> {
    fn new(fails: F) -> Scripted<F> {
        Scripted {
            fails,
            made: Vec::new(),
            labels: Vec::new(),
            stopped_at: Vec::new(),
            at_the_end: false,
            clock: Duration::ZERO,
            per_call: Duration::from_millis(1),
        }
    }

    /// Each run as (workers, calls, could stop early).
    fn made(&self) -> Vec<(usize, usize, bool)> {
        self.made
            .iter()
            .map(|(settings, stops)| (settings.workers, settings.operations, *stops))
            .collect()
    }
}

impl<F: FnMut(&Settings, usize) -> bool> CandidateRuns for Scripted<F> {
    fn run(
        &mut self,
        settings: &Settings,
        stop: Option<&mut dyn FnMut(&Record) -> bool>,
        until: Duration,
        label: String,
    ) -> Result<Record, RunError> {
        let record = self.record(settings, stop, until, label);
        self.clock += self.per_call * u32::try_from(record.calls.len()).expect("few calls");
        if record.calls.len() < settings.operations && self.stopped_at.last() == Some(&None) {
            // Cut at `until`, as a lab's run is once its round ends.
            self.clock = self.clock.max(until);
        }
        Ok(record)
    }

    fn elapsed(&self) -> Duration {
        self.clock
    }
}

impl<F: FnMut(&Settings, usize) -> bool> Scripted<F> {
    /// The record of a run of `settings` (see [`Scripted`]).
    fn record(
        &mut self,
        settings: &Settings,
        stop: Option<&mut dyn FnMut(&Record) -> bool>,
        until: Duration,
        label: String,
    ) -> Record {
        // No candidate has more calls than the run that failed first (100
        // in every test here): a search that proposes more is wrong, and
        // fails at once rather than running for ever.
        assert!(
            settings.operations <= 100,
            "a candidate of {} calls, more than the run that failed first",
            settings.operations
        );
        self.made.push((settings.clone(), stop.is_some()));
        self.labels.push(label);
        self.stopped_at.push(None);
        let at = if self.at_the_end {
            settings.operations.saturating_sub(1)
        } else {
            STALE_AT
        };
        let failing = settings.operations > at && at > 2 && (self.fails)(settings, self.made.len());
        let stale_at = failing.then_some(at);
        // The calls made by `until`.
        let affordable = until.saturating_sub(self.clock).as_nanos() / self.per_call.as_nanos();
        let calls = settings
            .operations
            .min(usize::try_from(affordable).unwrap_or(usize::MAX));
        if let Some(stop) = stop {
            for so_far in (8..calls).step_by(8) {
                let record = scripted_record_at(settings, stale_at, so_far);
                if stop(&record) {
                    *self.stopped_at.last_mut().expect("pushed") = Some(so_far);
                    return record;
                }
            }
        }
        scripted_record_at(settings, stale_at, calls)
    }
}

/// A run of 3 workers and 100 calls with every fault but the power cut,
/// seed 7, that failed.
fn failed_with_kills() -> Judgement {
    let settings = Settings {
        workers: 3,
        operations: 100,
        seed: 7,
        faults: crate::chaos::plan::Faults::all(false),
    };
    let judged = Judgement::of(scripted_record(&settings, true, 100));
    assert_eq!(
        judged.violations.first().map(|found| found.property),
        Some(Property::StaleCompletion)
    );
    judged
}

/// The shrink drops the kills, then takes the fewest workers, then the
/// fewest calls, each candidate run three times in a row (twice for one
/// worker without kills), each run stopped as soon as it has failed, and
/// confirms the smallest with three runs more, made to their end.
#[test]
fn a_shrink_finds_the_fewest_workers_and_calls_that_fail_and_confirms_them() {
    let failing = failed_with_kills();
    let mut runs = Scripted::new(|settings: &Settings, _| settings.workers >= 2);
    let shrunk = shrink_with(&mut runs, &failing).expect("scripted runs are made");
    let timed = failing.record.settings.faults.timed_only();
    assert!(timed.untimed().is_empty() && timed.stalls);
    assert_eq!(
        shrunk.judged.record.settings,
        Settings {
            workers: 2,
            operations: STALE_AT + 1,
            seed: 7,
            faults: timed,
        }
    );
    assert_eq!(shrunk.judged.record.calls.len(), STALE_AT + 1);
    assert_eq!(shrunk.runs, 17);
    assert_eq!(
        runs.made(),
        [
            // Without the kills, as many calls: fails three times.
            (3, 100, true),
            (3, 100, true),
            (3, 100, true),
            // One worker passes; two fail three times.
            (1, 100, true),
            (2, 100, true),
            (2, 100, true),
            (2, 100, true),
            // Fewer calls, from the 30 that show the failure: each shorter
            // run passes, and the run of 30 is made.
            (2, 15, true),
            (2, 23, true),
            (2, 27, true),
            (2, 29, true),
            (2, 30, true),
            (2, 30, true),
            (2, 30, true),
            // Confirmed, each run made to its end.
            (2, 30, false),
            (2, 30, false),
            (2, 30, false),
        ]
    );
    assert!(runs
        .made
        .iter()
        .all(|(settings, _)| settings.seed == 7 && settings.faults == timed));
    // Every failing candidate's run stopped at the first look after the
    // call that shows the failure.
    assert_eq!(
        runs.stopped_at[..7],
        [
            Some(32),
            Some(32),
            Some(32),
            None,
            Some(32),
            Some(32),
            Some(32)
        ]
    );
    assert_eq!(runs.labels[0], "shrink: run 1 of at most 49, 3 workers");
    assert_eq!(runs.labels[3], "shrink: run 4 of at most 49, 1 worker");
    assert!(!shrunk.out_of_time);
}

/// A candidate that failed its runs but not the confirming ones is not
/// the counterexample: the one before it is, once it has failed three
/// confirming runs of its own (it stopped once it had failed, after 32
/// calls: its replay of 32 calls must fail again).
#[test]
fn a_shrunk_run_that_does_not_fail_again_gives_way_to_the_one_before() {
    let failing = failed_with_kills();
    let mut runs = Scripted::new(|settings: &Settings, run| {
        settings.workers >= 2 && !(settings.operations == STALE_AT + 1 && run >= 15)
    });
    let shrunk = shrink_with(&mut runs, &failing).expect("scripted runs are made");
    assert_eq!(shrunk.runs, 18);
    assert_eq!(
        runs.made()[14..],
        [
            (2, 30, false),
            (2, 32, false),
            (2, 32, false),
            (2, 32, false)
        ]
    );
    assert_eq!(
        (
            shrunk.judged.record.settings.workers,
            shrunk.judged.record.settings.operations
        ),
        (2, 32)
    );
    assert!(shrunk.judged.record.settings.faults.untimed().is_empty());
}

/// A run whose candidates all pass is its own counterexample: every
/// candidate made once, kills and all.
#[test]
fn a_failure_that_no_candidate_shows_again_is_the_counterexample() {
    let failing = failed_with_kills();
    let mut runs = Scripted::new(|_: &Settings, _| false);
    let shrunk = shrink_with(&mut runs, &failing).expect("scripted runs are made");
    assert_eq!(
        runs.made(),
        [
            // Each could stop once it had failed; none did. The run that
            // failed first keeps its kills.
            (3, 100, true),
            (1, 100, true),
            (2, 100, true),
            (3, 100, true),
            (3, 15, true),
            (3, 23, true),
            (3, 27, true),
            (3, 29, true),
            (3, 30, true),
        ]
    );
    assert_eq!(shrunk.runs, 9);
    assert_eq!(shrunk.judged.record.settings, failing.record.settings);
    assert_eq!(runs.made[4].0.faults, failing.record.settings.faults);
}

/// A one-worker run without kills replays as its seed says: it stops at
/// the first look that shows the failure, and that shorter record is the
/// candidate's.
#[test]
fn a_run_that_replays_exactly_stops_once_it_has_failed() {
    let failing = failed_with_kills();
    let mut runs = Scripted::new(|_: &Settings, _| true);
    let shrunk = shrink_with(&mut runs, &failing).expect("scripted runs are made");
    // One worker fails: its runs stop at the first look after call 30.
    assert_eq!(&runs.made()[3..5], [(1, 100, true), (1, 100, true)]);
    assert_eq!(shrunk.judged.record.settings.workers, 1);
    assert_eq!(shrunk.judged.record.settings.operations, STALE_AT + 1);
    assert_eq!(&runs.stopped_at[3..5], [Some(32), Some(32)]);
    // Each shorter candidate of the search passes once, and the smallest,
    // which replays exactly, fails twice and needs no confirming runs.
    assert_eq!(shrunk.runs, 3 + 2 + 4 + 2);
    assert_eq!(shrunk.judged.record.calls.len(), STALE_AT + 1);
}

/// A shrink makes at most 40 runs in its search: with many workers to try,
/// it stops there and keeps the best it had, confirmed.
#[test]
fn a_shrink_stops_after_forty_runs() {
    let settings = Settings {
        workers: 40,
        ..failed_with_kills().record.settings
    };
    let failing = Judgement::of(scripted_record(&settings, true, 100));
    let mut runs = Scripted::new(|settings: &Settings, _| settings.workers >= 39);
    let shrunk = shrink_with(&mut runs, &failing).expect("scripted runs are made");
    // The search's runs: 40 workers without kills fail three times, each
    // stopped after 32 calls; then 1 to 37 workers pass, one run each.
    assert_eq!(runs.made()[MOST_SHRINK_RUNS - 1], (37, 100, true));
    assert!(runs.stopped_at[3..MOST_SHRINK_RUNS]
        .iter()
        .all(Option::is_none));
    // Then the three that confirm the candidate of 40 workers and 32 calls.
    assert_eq!(shrunk.runs, MOST_SHRINK_RUNS + 3);
    assert_eq!(runs.made()[MOST_SHRINK_RUNS..], [(40, 32, false); 3]);
    assert_eq!(
        (
            shrunk.judged.record.settings.workers,
            shrunk.judged.record.settings.operations
        ),
        (40, 32)
    );
    assert!(!shrunk.out_of_time);
}

/// A failure at the last call of every run that fails: each shorter
/// candidate that fails shows it at its own last call, and the search ends
/// on the shortest of them, with no run more.
#[test]
fn a_search_that_ends_on_a_run_it_made_makes_no_run_more() {
    let settings = Settings {
        workers: 2,
        operations: 100,
        seed: 7,
        faults: crate::chaos::plan::Faults::all(false).timed_only(),
    };
    let failing = Judgement::of(scripted_record_at(&settings, Some(99), 100));
    assert_eq!(through_failure(&failing), 100);
    let mut runs =
        Scripted::new(|settings: &Settings, _| settings.workers >= 2 && settings.operations >= 20);
    runs.at_the_end = true;
    let shrunk = shrink_with(&mut runs, &failing).expect("scripted runs are made");
    let calls: Vec<usize> = runs.made().iter().map(|made| made.1).collect();
    // One worker passes (once); then the search: 50, 25 and 22, 21 and 20
    // fail (three runs each), 13 and 19 pass.
    assert_eq!(
        calls,
        [100, 50, 50, 50, 25, 25, 25, 13, 19, 22, 22, 22, 21, 21, 21, 20, 20, 20, 20, 20, 20]
    );
    assert_eq!(shrunk.judged.record.settings.operations, 20);
}

/// The confirming runs have a limit of their own: 9 more than the
/// search's 40. Candidates that keep failing a confirming run use them up,
/// and the first candidate with as many calls as the run that failed first
/// is then taken as it is.
#[test]
fn confirming_runs_stop_at_nine_past_the_search_s() {
    let settings = Settings {
        workers: 20,
        ..failed_with_kills().record.settings
    };
    let failing = Judgement::of(scripted_record_at(&settings, Some(99), 100));
    // 15 workers and 20 calls fail; of the confirming runs (from run 38),
    // every third passes.
    let mut runs = Scripted::new(|settings: &Settings, run| {
        settings.workers >= 15 && settings.operations >= 20 && !(run > 37 && (run - 37) % 3 == 0)
    });
    runs.at_the_end = true;
    let shrunk = shrink_with(&mut runs, &failing).expect("scripted runs are made");
    assert_eq!(shrunk.runs, MOST_SHRINK_RUNS + MOST_CONFIRMING_RUNS);
    let confirming: Vec<usize> = runs.made()[37..].iter().map(|made| made.1).collect();
    assert_eq!(confirming, [20, 20, 20, 21, 21, 21, 22, 22, 22, 25, 25, 25]);
    assert_eq!(
        (
            shrunk.judged.record.settings.workers,
            shrunk.judged.record.settings.operations
        ),
        (15, 100)
    );
}

/// Out of time in its search, the shrink makes no candidate's run past
/// [`SEARCH_BUDGET`] (the one under way is cut there), confirms the
/// smallest candidate it found in the rest of [`BUDGET`], and answers it,
/// saying that its time ran out.
#[test]
fn out_of_time_the_shrink_answers_the_smallest_candidate_confirmed() {
    let failing = failed_with_kills();
    let mut runs = Scripted::new(|settings: &Settings, _| settings.workers >= 2);
    // 32 calls take 1.12 s, 100 calls 3.5 s.
    runs.per_call = Duration::from_millis(35);
    let shrunk = shrink_with(&mut runs, &failing).expect("scripted runs are made");
    assert_eq!(
        runs.made(),
        [
            // Without the kills: fails, stopped after 32 calls (3.36 s).
            (3, 100, true),
            (3, 100, true),
            (3, 100, true),
            // One worker passes (6.86 s); two fail (10.22 s).
            (1, 100, true),
            (2, 100, true),
            (2, 100, true),
            (2, 100, true),
            // Fewer calls: 15 and 23 pass (11.55 s); 27 is cut at 12 s,
            // after 12 calls.
            (2, 15, true),
            (2, 23, true),
            (2, 27, true),
            // The candidate of 2 workers and 32 calls, confirmed.
            (2, 32, false),
            (2, 32, false),
            (2, 32, false),
        ]
    );
    assert_eq!(runs.stopped_at[9], None);
    // The confirming runs began at 12 s and took 3.36 s.
    assert_eq!(runs.clock, Duration::from_millis(15_360));
    assert!(shrunk.out_of_time);
    assert_eq!(shrunk.runs, 13);
    let settings = &shrunk.judged.record.settings;
    assert_eq!((settings.workers, settings.operations), (2, 32));
    assert!(shrunk.judged.failed());
}

/// When the rest of the budget does not confirm the smallest candidate,
/// its last confirming run is cut at [`BUDGET`], and the run that failed
/// first is the counterexample: nothing smaller was confirmed.
#[test]
fn out_of_time_with_nothing_confirmed_the_run_that_failed_first_is_kept() {
    let failing = failed_with_kills();
    let mut runs = Scripted::new(|settings: &Settings, _| settings.workers >= 2);
    // 32 calls take 1.6 s, 100 calls 5 s.
    runs.per_call = Duration::from_millis(50);
    let shrunk = shrink_with(&mut runs, &failing).expect("scripted runs are made");
    assert_eq!(
        runs.made(),
        [
            // Without the kills (4.8 s); one worker passes (9.8 s); two
            // fail once (11.4 s), and their second run is cut at 12 s.
            (3, 100, true),
            (3, 100, true),
            (3, 100, true),
            (1, 100, true),
            (2, 100, true),
            (2, 100, true),
            // Confirming 3 workers without kills, 32 calls: the third run
            // is cut at 16 s.
            (3, 32, false),
            (3, 32, false),
            (3, 32, false),
        ]
    );
    assert_eq!(runs.clock, BUDGET);
    assert!(shrunk.out_of_time);
    assert_eq!(shrunk.judged.record.settings, failing.record.settings);
}
