//! A run's rounds: which workers act, their calls sent and answered, the
//! power cut or the server crash when it is due, and what each worker
//! learns.

use super::call::{call, kill, Done, Interrupt, Round};
use super::place::Place;
use super::{Record, RunError, Workers};
use crate::chaos::history::{Call, Noted, Returned};
use crate::chaos::plan::{Moment, Settings, Step, Worker};
use crate::chaos::rng::Rng;
use crate::chaos::sink::Sinks;
use crate::job_store::JobStore;
use crate::operation::{Answer, Operation};
use crate::pg_server::Hosts;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::sync::Barrier;
use std::thread;
use std::time::{Duration, Instant};

/// How many workers act in an ordinary round, at most.
const FEW: usize = 3;

/// The chance that a round lets every ready worker act at once.
const HERD_CHANCE: f64 = 0.15;

/// The chance that a call, when kills are on, is killed.
const KILL_CHANCE: f64 = 0.03;

/// The chance that a worker about to act, when restarts are on, is
/// stopped and started again instead.
const RESTART_CHANCE: f64 = 0.004;

/// The longest a kill waits after its call was sent.
const LONGEST_KILL_DELAY_MICROS: u64 = 400;

/// The chance that a call, when partitions are on, has its worker's link
/// cut while it is in flight. (Each costs a few seconds: the time a cut
/// call takes to fail.)
const PARTITION_CHANCE: f64 = 0.003;

/// The longest a cut waits after its call was sent.
const LONGEST_PARTITION_DELAY_MICROS: u64 = 2_000;

/// One call a round makes: the worker, its operation, and what befalls it
/// in flight, if anything.
type RoundCall = (usize, Operation, Option<Interrupt>);

/// The strike that falls on every worker at once in one round.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Strike {
    /// The power fails: every worker dies, the file loses what no sync
    /// made durable.
    PowerCut,
    /// The server is killed and restarts; the workers live on, their calls
    /// in flight cut off.
    ServerCrash,
}

/// A run under way: its workers' processes, where the jobs are kept, the
/// seed's generator of the run's own choices, and every call so far.
pub(super) struct Run<'a> {
    settings: &'a Settings,
    place: Place,
    started: Instant,
    stores: Vec<Arc<crate::external::ExternalStore>>,
    /// The strike falls once, in the first round that begins with this
    /// many calls made.
    strike_at: Option<(usize, Strike)>,
    team: Vec<Worker>,
    rng: Rng,
    pub(super) calls: Vec<Call>,
    moments: Vec<Noted>,
    done_jobs: BTreeSet<String>,
    next_job: usize,
    open_jobs: Vec<String>,
    kills: usize,
    restarts: usize,
    cut_off: usize,
    /// The workers whose link is cut, each with the round it is mended in.
    links_cut: Vec<(usize, usize)>,
    partitions: usize,
    sinks: Sinks,
}

impl<'a> Run<'a> {
    /// A run of `settings` on a new database in `dir` (a file, or a schema
    /// on the workers' server), its workers started and the database made
    /// by the first; nothing called yet.
    ///
    /// Errors: a power cut asked of workers off the lab's disk model, a
    /// server crash of workers on a file, or the database could not be
    /// made or watched.
    pub(super) fn start(
        workers: &Workers,
        settings: &'a Settings,
        dir: &Path,
    ) -> Result<Run<'a>, RunError> {
        if settings.faults.power && !workers.on_shim {
            return Err(RunError::PowerNeedsTheDiskModel);
        }
        if settings.faults.server_crash && workers.server.is_none() {
            return Err(RunError::CrashNeedsAServer);
        }
        if settings.faults.partition && !workers.hosts {
            return Err(RunError::PartitionNeedsHosts);
        }
        let mut place = Place::new(
            workers.server.as_ref(),
            settings.faults.server_crash,
            workers.hosts.then_some(settings.workers),
            dir,
        )?;
        let started = Instant::now();
        let stores: Vec<_> = (0..settings.workers)
            .map(|index| workers.open(&place, settings.faults.power, index))
            .collect();
        // Every worker's program starts at once, rather than one after
        // another as each makes its first call: a student's program takes
        // a tenth of a second or more to start.
        for store in &stores {
            store.start_ahead();
        }
        stores[0]
            .init_db(place.db())
            .map_err(|source| RunError::InitDb {
                when: "before the run began",
                source,
            })?;
        place.watch(settings.faults.server_crash)?;
        let strike = if settings.faults.power {
            Some(Strike::PowerCut)
        } else if settings.faults.server_crash {
            Some(Strike::ServerCrash)
        } else {
            None
        };
        let strike_at = strike.map(|strike| {
            let mut rng = Rng::part(settings.seed, u64::MAX);
            (
                settings.operations / 4 + rng.below(settings.operations / 2 + 1),
                strike,
            )
        });
        let team: Vec<Worker> = (0..settings.workers)
            .map(|index| Worker::new(index, settings))
            .collect();
        Ok(Run {
            settings,
            place,
            started,
            stores,
            strike_at,
            team,
            rng: Rng::part(settings.seed, 0),
            calls: Vec::with_capacity(settings.operations),
            moments: Vec::new(),
            done_jobs: BTreeSet::new(),
            next_job: 0,
            open_jobs: Vec::new(),
            kills: 0,
            restarts: 0,
            cut_off: 0,
            links_cut: Vec::new(),
            partitions: 0,
            sinks: Sinks::new(),
        })
    }

    /// The record of the run so far, with `calls` and the rows the file
    /// holds now: a run ends when it has made as many calls as its
    /// settings say, or when it was stopped, as the run of that many calls.
    pub(super) fn record_now(&self, calls: Vec<Call>) -> Record {
        let (rows, integrity) = self.place.read();
        Record {
            settings: Settings {
                operations: calls.len(),
                ..self.settings.clone()
            },
            moments: self
                .moments
                .iter()
                .filter(|noted| noted.before <= calls.len())
                .cloned()
                .collect(),
            calls,
            rows,
            integrity,
            skews: self.team.iter().map(|worker| worker.skew).collect(),
            kills: self.kills,
            restarts: self.restarts,
            cut_off: self.cut_off,
            partitions: self.partitions,
            on_a_server: matches!(self.place, Place::Server { .. }),
            sinks: self.sinks.report_of(),
            took: self.started.elapsed(),
        }
    }

    /// The run's record: `stopped` (the one `stop` was shown), or else
    /// the whole run's, read once the workers are gone and the lab's
    /// connection closed.
    pub(super) fn finish(mut self, stopped: Option<Record>) -> Record {
        // The workers' programs are let go all at once: each is given a
        // moment to exit once its input ends, and eight of them one after
        // another took a fifth of a second.
        thread::scope(|scope| {
            for store in self.stores.drain(..) {
                scope.spawn(move || drop(store));
            }
        });
        self.place.stop_watching();
        stopped.unwrap_or_else(|| {
            let calls = std::mem::take(&mut self.calls);
            self.record_now(calls)
        })
    }

    /// Plays `round`: its workers, their calls sent and answered, a power
    /// cut when it is due. Answers whether any worker was ready to act.
    ///
    /// Errors: the power cut could not be carried out.
    pub(super) fn round(&mut self, round: usize) -> Result<bool, RunError> {
        self.mend_links(round)?;
        self.open_jobs.retain(|job| !self.done_jobs.contains(job));
        while self.open_jobs.len() < self.settings.jobs() {
            self.next_job += 1;
            self.open_jobs.push(format!("job-{}", self.next_job));
        }
        let ready: Vec<usize> = (0..self.team.len())
            .filter(|index| !self.team[*index].stalled_in(round))
            .collect();
        if ready.is_empty() {
            return Ok(false);
        }
        let (herd, acting) = self.acting(ready);
        let strike = self
            .strike_at
            .filter(|(at, _)| self.calls.len() >= *at)
            .map(|(_, strike)| strike);
        if strike.is_some() {
            self.strike_at = None;
            // Every worker must be running, so that the strike finds each
            // one as it is and none starts during it.
            for store in &self.stores {
                let _ = store.name();
            }
        }
        let round_calls = self.round_calls(round, &acting, herd, strike.is_some());
        let (finished, cut_pids) = if herd && strike.is_none() {
            (self.send_behind_a_held_lock(round_calls)?, Vec::new())
        } else {
            self.send(round_calls, strike)?
        };
        if strike == Some(Strike::PowerCut) {
            self.place.cut_the_power(&self.stores, &cut_pids)?;
        }
        self.learn(round, finished);
        if strike == Some(Strike::PowerCut) {
            // Every worker died with the power: none remembers a lease.
            for worker in &mut self.team {
                worker.restart();
            }
        }
        Ok(true)
    }

    /// Mends the links cut until `round`, before their workers act again.
    ///
    /// Errors: a link could not be mended.
    fn mend_links(&mut self, round: usize) -> Result<(), RunError> {
        let Some(hosts) = self.place.hosts() else {
            return Ok(());
        };
        let mut result = Ok(());
        self.links_cut.retain(|&(worker, mended_in)| {
            if round < mended_in {
                return true;
            }
            if let Err(error) = hosts.mend(worker) {
                result = Err(RunError::Partition(error.to_string()));
            }
            false
        });
        result
    }

    /// Which of the `ready` workers act this round, in index order, and
    /// whether they are a herd.
    fn acting(&mut self, mut ready: Vec<usize>) -> (bool, Vec<usize>) {
        // Mostly a few workers at once; now and then a herd of them, which
        // is where a claim that reads before it locks is caught. (Each call
        // that finds the write lock taken sleeps in SQLite's busy handler
        // for a millisecond or more, so a herd in every round would cost
        // most of the run's time.)
        let herd = self.rng.chance(HERD_CHANCE);
        let at_once = if herd {
            1 + self.rng.below(ready.len())
        } else {
            1 + self.rng.below(ready.len().min(FEW))
        };
        let mut acting = Vec::with_capacity(at_once);
        for _ in 0..at_once {
            acting.push(ready.swap_remove(self.rng.below(ready.len())));
        }
        acting.sort_unstable();
        (herd, acting)
    }

    /// The round's calls, decided first (in the seed's order): each acting
    /// worker's step, unless it stalls, idles or is restarted, with the
    /// moment of its kill when it is to be killed.
    fn round_calls(
        &mut self,
        round: usize,
        acting: &[usize],
        herd: bool,
        striking: bool,
    ) -> Vec<RoundCall> {
        let settings = self.settings;
        let mut round_calls = Vec::with_capacity(acting.len());
        for &index in acting {
            if self.calls.len() + round_calls.len() >= settings.operations {
                break;
            }
            // (Not in the round the strike falls in, which must find
            // every worker running.)
            if settings.faults.restarts && !striking && self.rng.chance(RESTART_CHANCE) {
                // Between two calls: nothing is in flight, so the
                // seed replays this exactly. Its next call starts the
                // process again, which sets up as a new worker does.
                self.stores[index].abandon();
                self.stores[index].start_ahead();
                self.team[index].restart();
                self.restarts += 1;
                self.note(index, Moment::Restarted);
                continue;
            }
            let step = self.team[index].step(round, &self.open_jobs, settings, herd);
            for moment in self.team[index].take_moments() {
                self.note(index, moment);
            }
            let operation = match step {
                Step::Stall | Step::Idle => continue,
                Step::Call(operation) => operation,
                Step::ReportAndComplete(operation) => {
                    self.sinks.report(index, &operation);
                    operation
                }
            };
            let kill_after = (settings.faults.kills && self.rng.chance(KILL_CHANCE))
                .then(|| Duration::from_micros(self.rng.next_u64() % LONGEST_KILL_DELAY_MICROS));
            // (Drawn only when partitions are on: a run without them
            // makes the same choices as before they were.)
            let interrupt = match kill_after {
                Some(delay) => Some(Interrupt::Kill(delay)),
                None => {
                    (settings.faults.partition && self.rng.chance(PARTITION_CHANCE)).then(|| {
                        Interrupt::Cut(Duration::from_micros(
                            self.rng.next_u64() % LONGEST_PARTITION_DELAY_MICROS,
                        ))
                    })
                }
            };
            round_calls.push((index, operation, interrupt));
        }
        round_calls
    }

    /// Sends a herd's `round_calls` at once while the lab holds the write
    /// lock, and lets it go once every call that writes waits for it
    /// ([`crate::race::behind_a_held_lock`]): every claim of the herd has
    /// then looked at the lease, so a claim that looks before it locks
    /// (exercise 8b) wins more than once whenever two of the herd claim
    /// one expired job, on a loaded machine as on an idle one; left to the
    /// scheduler, the two looks met on some runs only.
    ///
    /// Errors: the lock could not be taken or let go.
    fn send_behind_a_held_lock(
        &mut self,
        round_calls: Vec<RoundCall>,
    ) -> Result<Vec<Done>, RunError> {
        // The calls that queue for the lock: those that write a row it
        // holds, but not one the run kills (its process may die before it
        // queues).
        let writers = round_calls
            .iter()
            .filter(|(_, operation, interrupt)| {
                interrupt.is_none() && self.place.waits_for_the_held_lock(operation)
            })
            .count();
        if writers < 2 {
            return Ok(self.send(round_calls, None)?.0);
        }
        // A worker just restarted starts its program first, so that its
        // threads can be seen queue.
        let stores: Vec<&dyn JobStore> = round_calls
            .iter()
            .map(|(index, _, _)| {
                let store = &self.stores[*index];
                if store.program_pid().is_none() {
                    let _ = store.name();
                }
                store.as_ref() as &dyn JobStore
            })
            .collect();
        let racers = crate::race::Racers::of_all(&stores);
        let sending = self.sending();
        self.place.behind_a_held_lock(writers, &racers, || {
            sending.send(round_calls, true, false, || {})
        })
    }

    /// What the round's calls are sent with.
    fn sending(&self) -> Sending<'_> {
        Sending {
            stores: &self.stores,
            db: self.place.db(),
            started: self.started,
            hosts: self.place.hosts(),
        }
    }

    /// Sends `round_calls` (see [`Sending::send`]) and answers what came
    /// back, with the workers' pids the power cut killed. With a `strike`,
    /// the calls are sent at once, and the strike falls on every worker
    /// once they are all under way: the power fails for each, or the
    /// server crashes under them.
    ///
    /// Errors: the server could not be crashed or did not come back.
    fn send(
        &mut self,
        round_calls: Vec<RoundCall>,
        strike: Option<Strike>,
    ) -> Result<(Vec<Done>, Vec<u32>), RunError> {
        let strike = strike.map(|strike| {
            let delay = Duration::from_micros(self.rng.next_u64() % LONGEST_CUT_DELAY_MICROS);
            (strike, delay)
        });
        let mut cut_pids = Vec::new();
        let mut crashed = Ok(());
        let crashing = matches!(strike, Some((Strike::ServerCrash, _)));
        let (stores, place) = (&self.stores, &self.place);
        let finished = self
            .sending()
            .send(round_calls, strike.is_some(), crashing, || {
                let Some((strike, delay)) = strike else {
                    return;
                };
                thread::sleep(delay);
                match strike {
                    Strike::PowerCut => {
                        cut_pids = stores
                            .iter()
                            .filter_map(|store| store.program_pid())
                            .collect();
                        for pid in &cut_pids {
                            kill(*pid);
                        }
                    }
                    Strike::ServerCrash => crashed = place.crash_the_server(),
                }
            });
        crashed?;
        Ok((finished, cut_pids))
    }

    /// The progress line's text: `label`, the calls made, the faults so
    /// far, and `findings` (the named checks' findings so far; the model
    /// check comes at the end): `the run: 290/2000 calls; 9 stalls, 3
    /// killed; 0 findings`.
    pub(super) fn progress_text(&self, label: &str, findings: usize) -> String {
        let stalls = self
            .moments
            .iter()
            .filter(|noted| matches!(noted.moment, Moment::Stalled { .. }))
            .count();
        let mut faults = vec![
            crate::terminal::plural(stalls, "stall"),
            format!("{} killed", self.kills),
        ];
        if self.settings.faults.restarts {
            faults.push(format!("{} restarted", self.restarts));
        }
        format!(
            "{label}: {}/{} calls; {}; {}",
            self.calls.len(),
            self.settings.operations,
            faults.join(", "),
            crate::terminal::plural(findings, "finding")
        )
    }

    /// Notes `moment` of worker `index` now, before the calls not yet sent.
    fn note(&mut self, index: usize, moment: Moment) {
        self.moments.push(Noted {
            worker: index,
            before: self.calls.len(),
            at: u64::try_from(self.started.elapsed().as_nanos()).unwrap_or(u64::MAX),
            moment,
        });
    }

    /// Takes in the round's `finished` calls in the order they began: each
    /// worker learns its answer (or restarts after a kill), an accepted
    /// completion closes its job, and each call joins the history.
    fn learn(&mut self, round: usize, mut finished: Vec<Done>) {
        finished.sort_by_key(|done| done.began);
        for done in finished {
            let worker = &mut self.team[done.worker];
            match &done.returned {
                Returned::Unknown if done.cut_off => {
                    // Its process lives on: it knows its call failed, not
                    // whether it landed, and keeps what it knew before.
                    self.cut_off += 1;
                    worker.learn(round, &done.operation, None);
                    self.moments.push(Noted {
                        worker: done.worker,
                        before: self.calls.len() + 1,
                        at: done.began,
                        moment: Moment::CutOff,
                    });
                }
                Returned::Unknown => {
                    self.kills += 1;
                    worker.restart();
                    // Its program starts again now, while others' calls go on.
                    self.stores[done.worker].start_ahead();
                    self.moments.push(Noted {
                        worker: done.worker,
                        before: self.calls.len() + 1,
                        at: done.began,
                        moment: Moment::Killed,
                    });
                }
                Returned::Answer(answer) => {
                    if matches!(
                        (&done.operation, answer),
                        (Operation::Complete { .. }, Answer::Bool(true))
                    ) {
                        self.done_jobs
                            .insert(done.operation.job_id().unwrap_or_default().to_string());
                    }
                    worker.learn(round, &done.operation, Some(answer));
                }
                Returned::Error(_) => worker.learn(round, &done.operation, None),
            }
            if done.partitioned {
                // Cut off from the server: whatever it was told last, it
                // waits, hearing nothing, until past its lease.
                let mended_in = worker.partitioned(round);
                self.partitions += 1;
                self.links_cut.push((done.worker, mended_in));
                for moment in worker.take_moments() {
                    self.moments.push(Noted {
                        worker: done.worker,
                        before: self.calls.len() + 1,
                        at: done.began,
                        moment,
                    });
                }
            }
            self.calls.push(Call {
                worker: done.worker,
                operation: done.operation,
                began: done.began,
                ended: done.ended,
                returned: done.returned,
            });
        }
    }
}

/// What a round's calls need of the run: the workers' stores, the path
/// their calls name, and the run's start (their intervals' zero).
struct Sending<'r> {
    stores: &'r [Arc<crate::external::ExternalStore>],
    db: &'r Path,
    started: Instant,
    hosts: Option<&'r Arc<Hosts>>,
}

impl Sending<'_> {
    /// Sends `round_calls` and answers what came back; `meanwhile` runs on
    /// this thread once every call is under way.
    ///
    /// `at_once` (a herd, and the round a strike falls in): the calls
    /// are sent together: every call's thread waits for the others before
    /// it sends, so that the calls reach the store as close together as
    /// the operating system lets them, and two claims really race. In any
    /// other round they are made one after another in the seed's order,
    /// so that the seed, not the operating system, decides how they
    /// interleave, and a replay takes the same course. `crashing`: the
    /// server crashes during the round (see [`call`]).
    fn send(
        &self,
        round_calls: Vec<RoundCall>,
        at_once: bool,
        crashing: bool,
        meanwhile: impl FnOnce(),
    ) -> Vec<Done> {
        let sent = round_calls.len();
        let entered = AtomicUsize::new(0);
        let together = Barrier::new(if at_once { sent } else { 1 });
        let (sender, receiver) = mpsc::channel();
        let round = Round {
            db: self.db,
            hosts: self.hosts.map(|hosts| &**hosts),
            crashing,
            started: self.started,
        };
        let round = &round;
        thread::scope(|scope| {
            for (index, operation, interrupt) in round_calls {
                let store = Arc::clone(&self.stores[index]);
                let sender = sender.clone();
                let (entered, together) = (&entered, &together);
                let sending = scope.spawn(move || {
                    together.wait();
                    entered.fetch_add(1, Ordering::SeqCst);
                    let done = call(index, &store, operation, interrupt, round);
                    let _ = sender.send(done);
                });
                if !at_once {
                    // (A call cannot panic: `call` answers every outcome.)
                    let _ = sending.join();
                }
            }
            while entered.load(Ordering::SeqCst) < sent {
                thread::yield_now();
            }
            meanwhile();
        });
        drop(sender);
        receiver.iter().collect()
    }
}

/// The longest a strike waits once a round's calls are sent.
const LONGEST_CUT_DELAY_MICROS: u64 = 400;
