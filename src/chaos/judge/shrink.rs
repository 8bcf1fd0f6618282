//! A failing run shrunk to a counterexample a student can read: the fewest
//! workers and calls that still show its first finding, with the same seed,
//! found within a budget of runs and of time.

use super::{properties, Judgement};
use crate::chaos::linearize::Verdict;
use crate::chaos::plan::Settings;
use crate::chaos::run::{run_until, Record, RunError, Watch, Workers};
use crate::status_line::StatusLine;
use std::path::Path;
use std::time::{Duration, Instant};

/// The most runs a shrink makes to find its smallest candidate.
const MOST_SHRINK_RUNS: usize = 40;

/// The most runs a shrink makes, after those, to confirm that a candidate
/// the operating system can steer fails again (see [`shrink`]).
const MOST_CONFIRMING_RUNS: usize = 9;

/// The most runs a shrink makes in all, its confirming runs included: the
/// `n` of its progress line's `run k of at most n`.
pub const MOST_RUNS: usize = MOST_SHRINK_RUNS + MOST_CONFIRMING_RUNS;

/// The longest a shrink may take, its confirming runs included: a run
/// under way when it is reached stops after its round. A run of a
/// student's program costs far more than one of the lab's compiled stores
/// (a process that answers a few hundred calls a second, a second or so
/// to start eight of them), and the shrink must leave `lab chaos` on such
/// a program within half a minute, its own first run included.
pub const BUDGET: Duration = Duration::from_secs(16);

/// How much of [`BUDGET`] the search for the smallest candidate may use:
/// the rest is kept for the runs that confirm it.
const SEARCH_BUDGET: Duration = Duration::from_secs(12);

/// A failing run, shrunk.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Shrunk {
    /// The smallest failing run found.
    pub judged: Judgement,
    /// How many runs the shrink made.
    pub runs: usize,
    /// Whether the shrink's time ran out (`BUDGET`, of which the search
    /// has `SEARCH_BUDGET`) before it ended: the counterexample is then
    /// the smallest confirmed by then.
    pub out_of_time: bool,
}

/// The finding a shrink keeps: the first property the failing run broke,
/// or, when it broke none, the model check's. A candidate that breaks
/// something else does not count, so the counterexample shows what the
/// report's headline says.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Headline {
    /// A property's violation.
    Property(properties::Property),
    /// The model check's: no order of the calls explains the answers.
    Model,
}

impl Headline {
    /// The headline of `failing`.
    fn of(failing: &Judgement) -> Headline {
        failing
            .violations
            .first()
            .map_or(Headline::Model, |violation| {
                Headline::Property(violation.property)
            })
    }

    /// Whether `judged` shows this finding.
    fn shown_by(self, judged: &Judgement) -> bool {
        match self {
            Headline::Property(property) => judged
                .violations
                .iter()
                .any(|violation| violation.property == property),
            // Only the model check's: a property broken would lead the
            // candidate's report instead.
            Headline::Model => {
                judged.violations.is_empty()
                    && matches!(
                        judged.model,
                        Verdict::NotLinearizable { .. } | Verdict::Malformed { .. }
                    )
            }
        }
    }

    /// `judged` with this finding's violations first (the others after
    /// them, each in the order of its calls), so that its first finding, the
    /// one its report shows, is this one.
    fn first_in(self, mut judged: Judgement) -> Judgement {
        if let Headline::Property(property) = self {
            judged
                .violations
                .sort_by_key(|violation| violation.property != property);
        }
        judged
    }
}

/// Whether a run of `settings` takes the same course every time: one
/// worker has no herd whose calls race, and without kills, a power cut, a
/// server crash or a cut link nothing lands when the operating system lets
/// it.
fn replays_exactly(settings: &Settings) -> bool {
    settings.workers == 1 && !settings.faults.power && settings.faults.untimed().is_empty()
}

/// Shrinks `failing`: first to the fewest workers that still show its
/// headline's finding (the first property it broke, or the model check
/// alone; given as many calls), then to the fewest calls, each candidate
/// run two or three times in a row before it counts (a herd's race and a
/// kill's moment are the operating system's). Every run has the same seed,
/// and a candidate's run stops as soon as it has failed ([`run_until`]).
/// The counterexample chosen, when the operating system can steer it, has
/// failed three more runs in a row, each made to its end as its printed
/// replay is, or it is the run that failed first.
///
/// The shrink makes at most `MOST_RUNS` runs and takes at most
/// `BUDGET`: when its time runs out, the smallest candidate confirmed by
/// then is the counterexample ([`Shrunk::out_of_time`]).
///
/// Errors: a run that could not be made.
pub fn shrink(
    workers: &Workers,
    failing: &Judgement,
    scratch: &Path,
    progress: &StatusLine,
) -> Result<Shrunk, RunError> {
    let mut runs = LabRuns {
        workers,
        scratch,
        progress,
        began: Instant::now(),
    };
    shrink_with(&mut runs, failing)
}

/// How a shrink makes its candidates' runs: the lab's workers in
/// [`shrink`]; the module's tests give runs (and a clock) of their own
/// making.
trait CandidateRuns {
    /// Runs `settings`, stopped early when `stop` says so (see
    /// [`run_until`]) or once the shrink has taken `until`, named `label`
    /// on the progress line.
    fn run(
        &mut self,
        settings: &Settings,
        stop: Option<&mut dyn FnMut(&Record) -> bool>,
        until: Duration,
        label: String,
    ) -> Result<Record, RunError>;

    /// How long the shrink has taken so far.
    fn elapsed(&self) -> Duration;
}

/// The runs of [`shrink`]: the lab's workers, each run said on `progress`.
struct LabRuns<'a> {
    workers: &'a Workers,
    scratch: &'a Path,
    progress: &'a StatusLine,
    /// When the shrink began.
    began: Instant,
}

impl CandidateRuns for LabRuns<'_> {
    fn run(
        &mut self,
        settings: &Settings,
        stop: Option<&mut dyn FnMut(&Record) -> bool>,
        until: Duration,
        label: String,
    ) -> Result<Record, RunError> {
        let watch = Watch {
            progress: self.progress,
            label,
        };
        let deadline = Some(self.began + until);
        run_until(self.workers, settings, self.scratch, stop, deadline, &watch)
    }

    fn elapsed(&self) -> Duration {
        self.began.elapsed()
    }
}

/// [`shrink`], each candidate run by `maker`.
fn shrink_with(maker: &mut dyn CandidateRuns, failing: &Judgement) -> Result<Shrunk, RunError> {
    let mut shrinking = Shrinking {
        maker,
        headline: Headline::of(failing),
        runs: 0,
        calls: failing.record.settings.operations,
        chosen: Vec::new(),
        out_of_time: false,
    };
    // Without the kills: where the seed's plan fails without them, the
    // counterexample replays exactly (a kill lands when the operating
    // system lets it). As many calls as the failing run: without its
    // kills the run takes another course, and may fail later in it.
    // (A candidate that failed stopped there: the next candidates, with
    // fewer workers or without kills, take another course and are given
    // the calls of the run that failed first.)
    let best = shrinking.without_kills(failing.clone())?;
    let best = shrinking.fewer_workers(best)?;
    // Once more with fewer workers: many workers' herds race, and the
    // operating system's order of a race can keep a run from failing
    // twice; a single worker's run takes the seed's course every time.
    let best = shrinking.without_kills(best)?;
    shrinking.fewer_calls(best)?;
    let judged = shrinking.confirmed()?.unwrap_or_else(|| failing.clone());
    Ok(Shrunk {
        judged,
        runs: shrinking.runs,
        out_of_time: shrinking.out_of_time,
    })
}

/// How many calls of `judged` it takes to show its failure: through the
/// last call the finding needs, or all of them.
pub fn through_failure(judged: &Judgement) -> usize {
    judged
        .last_needed()
        .map_or(judged.record.calls.len(), |last| last + 1)
}

/// What a run of a shrink is for.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Trial {
    /// A candidate of the search: it stops once it has failed, and no run
    /// is made past [`MOST_SHRINK_RUNS`] runs or [`SEARCH_BUDGET`].
    Candidate,
    /// A run that confirms the chosen candidate: made to its end, as its
    /// printed replay is; none past [`MOST_RUNS`] runs or [`BUDGET`].
    Confirming,
}

impl Trial {
    /// The most runs of the shrink, and its time, after which no run of
    /// this kind is made.
    fn limits(self) -> (usize, Duration) {
        match self {
            Trial::Candidate => (MOST_SHRINK_RUNS, SEARCH_BUDGET),
            Trial::Confirming => (MOST_RUNS, BUDGET),
        }
    }
}

/// A shrink under way: how many runs it has made, and every candidate
/// that counted, smallest last.
struct Shrinking<'a> {
    /// Makes each candidate's run.
    maker: &'a mut dyn CandidateRuns,
    /// The finding every candidate must show.
    headline: Headline,
    /// The runs made so far.
    runs: usize,
    /// How many calls the run that failed first made.
    calls: usize,
    /// Every candidate that counted, smallest last.
    chosen: Vec<Judgement>,
    /// Whether a run was left unmade, or cut, for want of time.
    out_of_time: bool,
}

impl Shrinking<'_> {
    /// Runs the candidate `settings`: answers its judgement, its headline's
    /// finding first, when it showed the headline's finding (see
    /// [`Headline`]) in every one of a few runs in a row, `None` when one
    /// passed or the shrink reached its limits for a `trial` of this kind.
    ///
    /// A candidate counts only when it fails in every one of a few runs in
    /// a row, so that the printed replay shows the failure again (a failure
    /// that needs one lucky interleaving of a round is not shrunk to):
    /// twice for a run that takes the seed's course every time, three times
    /// for one the operating system can steer (see [`replays_exactly`]).
    ///
    /// Errors: a run that could not be made.
    fn attempt(&mut self, settings: Settings, trial: Trial) -> Result<Option<Judgement>, RunError> {
        let mut failing = None;
        let tries = if replays_exactly(&settings) { 2 } else { 3 };
        let until = trial.limits().1;
        for _ in 0..tries {
            if self.exhausted(trial) {
                self.out_of_time |= self.maker.elapsed() >= until;
                return Ok(None);
            }
            self.runs += 1;
            let Some(judged) = self.tried(&settings, trial, until)? else {
                return Ok(None);
            };
            failing.get_or_insert(self.headline.first_in(judged));
        }
        Ok(failing)
    }

    /// One run of `settings` for `trial`, cut at `until`: its judgement
    /// when it showed the headline's finding.
    ///
    /// A candidate's run stops once it has failed: only whether it fails,
    /// and where, is wanted of it, and a run stopped there is the run of
    /// that many calls. (The pause to look at the run so far may change
    /// how the next round's calls race: a failure found right after one
    /// may not come again in a replay, so a confirming run, which is the
    /// replay's proof, goes to its end without looking.) The judgement
    /// that stopped a run is the run's.
    ///
    /// Errors: a run that could not be made.
    fn tried(
        &mut self,
        settings: &Settings,
        trial: Trial,
        until: Duration,
    ) -> Result<Option<Judgement>, RunError> {
        let mut stopped_by = None;
        let headline = self.headline;
        let mut failed_so_far = |so_far: &Record| {
            let judged = Judgement::of(so_far.clone());
            let failed = headline.shown_by(&judged);
            stopped_by = failed.then_some(judged);
            failed
        };
        let stop = (trial == Trial::Candidate)
            .then_some(&mut failed_so_far as &mut dyn FnMut(&Record) -> bool);
        let label = format!(
            "shrink: run {} of at most {MOST_RUNS}, {}",
            self.runs,
            crate::terminal::plural(settings.workers, "worker")
        );
        let record = self.maker.run(settings, stop, until, label)?;
        let judged = match stopped_by {
            Some(judged) => judged,
            None => {
                // Fewer calls than asked, and not for a failure: cut at `until`.
                self.out_of_time |= record.calls.len() < settings.operations;
                Judgement::of(record)
            }
        };
        Ok(self.headline.shown_by(&judged).then_some(judged))
    }

    /// Whether the shrink has reached its limits for a `trial` of this
    /// kind, in runs or in time.
    fn exhausted(&self, trial: Trial) -> bool {
        let (most, until) = trial.limits();
        self.runs >= most || self.maker.elapsed() >= until
    }

    /// Keeps `judged` among the candidates that counted; answers it.
    fn choose(&mut self, judged: Judgement) -> Judgement {
        self.chosen.push(judged.clone());
        judged
    }

    /// `best` without its kills (and cut links and server crash, which
    /// land as they do), with as many calls as the run that failed first,
    /// when that still fails; else `best` as it is.
    ///
    /// Errors: a run that could not be made.
    fn without_kills(&mut self, best: Judgement) -> Result<Judgement, RunError> {
        if best.record.settings.faults.untimed().is_empty() {
            return Ok(best);
        }
        let mut settings = best.record.settings.clone();
        settings.faults = settings.faults.timed_only();
        settings.operations = self.calls;
        Ok(match self.attempt(settings, Trial::Candidate)? {
            Some(judged) => self.choose(judged),
            None => best,
        })
    }

    /// `best` with the fewest workers that still fail it, with as many
    /// calls as the run that failed first; else `best` as it is.
    ///
    /// Errors: a run that could not be made.
    fn fewer_workers(&mut self, best: Judgement) -> Result<Judgement, RunError> {
        // Given the calls of the run that failed first: `best` may be a
        // candidate stopped once it had failed, and with fewer workers the
        // run takes another course, which may fail later in it.
        for fewer in 1..best.record.settings.workers {
            let settings = Settings {
                workers: fewer,
                operations: self.calls,
                ..best.record.settings.clone()
            };
            if let Some(judged) = self.attempt(settings, Trial::Candidate)? {
                return Ok(self.choose(judged));
            }
        }
        Ok(best)
    }

    /// Searches for the fewest calls of `best` that still fail, keeping
    /// each candidate that counted.
    ///
    /// Errors: a run that could not be made.
    fn fewer_calls(&mut self, mut best: Judgement) -> Result<(), RunError> {
        let (mut low, mut high) = (1, through_failure(&best));
        while low < high {
            let middle = low + (high - low) / 2;
            let settings = Settings {
                operations: middle,
                ..best.record.settings.clone()
            };
            match self.attempt(settings, Trial::Candidate)? {
                Some(judged) => {
                    high = through_failure(&judged).min(middle);
                    best = self.choose(judged);
                }
                None => low = middle + 1,
            }
            if self.exhausted(Trial::Candidate) {
                break;
            }
        }
        // The search ends on the fewest calls that still show the finding;
        // when no run that short has been made yet (every shorter one passed),
        // make it, so that the replay printed is that short (unless the
        // shrink has made its runs or spent its time: `attempt` makes none
        // past them).
        if high < best.record.settings.operations {
            let settings = Settings {
                operations: high,
                ..best.record.settings.clone()
            };
            if let Some(judged) = self.attempt(settings, Trial::Candidate)? {
                self.chosen.push(judged);
            }
        }
        Ok(())
    }

    /// The counterexample: the smallest candidate that is confirmed, or
    /// `None` when none is (the run that failed first is then taken).
    ///
    /// The last candidate was picked among many, and one the operating
    /// system can steer may have passed its three runs by luck: one that
    /// shows the failure only when one herd's race falls one way (two
    /// workers, the calls cut soon after that herd) can fail in fewer than
    /// half its runs (08b's of 130 calls failed 3 replays of 8, and a test
    /// that replays it six times failed about once in 25). So it must fail
    /// three more runs in a row, or the one before it is taken (more calls
    /// or workers: more rounds where the race can fall that way), back to
    /// the run that failed first, which is what happened. A candidate with
    /// as many calls as that run is taken as it is: it has as many herds
    /// (08b's of 2,000 calls with 2 workers failed 7 and 8 replays of 8),
    /// and confirming it would cost three whole runs. When the shrink's
    /// time runs out, no candidate is confirmed any more: the smallest
    /// one confirmed already, or that needs no confirming, is taken.
    ///
    /// Errors: a run that could not be made.
    fn confirmed(&mut self) -> Result<Option<Judgement>, RunError> {
        for candidate in std::mem::take(&mut self.chosen).into_iter().rev() {
            let settings = &candidate.record.settings;
            if replays_exactly(settings)
                || settings.operations >= self.calls
                || self.attempt(settings.clone(), Trial::Confirming)?.is_some()
            {
                return Ok(Some(candidate));
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests;
