//! The worksheet's story, played on a real database: what `lab demo`
//! tells.
//!
//! A claims the job and stalls; its lease runs out; B claims it with the
//! next fence and completes; A comes back and tries to complete with its
//! old fence. The reference refuses A and keeps B's result. Played on a
//! mutant, the same story shows where that protection breaks; what the
//! story shows ([`Story::ending`]) comes from the answers and the final
//! row, whatever the variant did.
//!
//! Some mutants break only in another order of the same calls, so there
//! are more stories ([`DemoStory`]); a mutant file names the one that
//! shows its break (`story = "..."`), and [`tell`] plays any of them:
//!
//! - `takeover`, the worksheet's ([`play`]), as above;
//! - `stale-first` ([`play_stale_first`]): A comes back while B, who took
//!   the job over, is still working, so A's late completion comes before
//!   B's. A store that guards completion by the job's state alone refuses
//!   A once B is done, and shows its break only in this order;
//! - `restart` ([`play_restart`]): A claims and releases the job, every
//!   worker restarts and runs `init_db` on the existing file, B claims. B
//!   must get a greater fence than A's, or a fence was handed out twice.
//!
//! The partition story ([`play_partition`]) is the worksheet's with a real
//! stall: A and B are workers on hosts of their own, and after A's claim
//! its link to the server is cut. A runs on, but its renewal gets no
//! answer; its lease runs out, B takes over and completes, the link is
//! mended, and A completes with its old fence.
//!
//! The power-cut story ([`play_power_cut`]) is the other restart the fence
//! must survive: A claims, the power fails before the disk has what was
//! not synced, the machine restarts, B claims. The power cut is the lab's
//! VFS shim ([`crate::vfs_shim`]), so this story runs only on the stores
//! compiled into this process.

use crate::error::StoreError;
use crate::job::{Fence, Job};
use crate::job_store::JobStore;
pub use crate::mutant::DemoStory;
use crate::vfs_shim::{Disk, ShimError};
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
    /// The store's answer, as shown; empty when nothing was asked.
    pub answer: String,
}

/// The events of a story as they happen.
#[derive(Default)]
struct Timeline(Vec<Event>);

impl Timeline {
    /// What `actor` did at `time`, and the store's answer (empty when
    /// nothing was asked).
    fn note(&mut self, time: f64, actor: &'static str, action: String, answer: String) {
        self.0.push(Event {
            time,
            actor,
            action,
            answer,
        });
    }
}

/// The whole story (`takeover` or `stale-first`) as it happened on one
/// implementation.
#[derive(Debug, Clone, PartialEq)]
pub struct Story {
    /// Whether A's late completion came before B's (`stale-first`) or
    /// after it (`takeover`).
    pub stale_first: bool,
    /// Whether A's stall was its link to the server, cut for real (the
    /// partition story).
    pub partition: bool,
    /// The events, in time order.
    pub events: Vec<Event>,
    /// The fence B's claim got, if any.
    pub b_fence: Option<Fence>,
    /// Whether B's completion was accepted.
    pub b_completed: bool,
    /// Whether A's late completion was accepted.
    pub a_completed: bool,
    /// The job's row at the end.
    pub final_row: Option<Job>,
}

/// What the story shows, judged from the answers and the final row, in
/// either order of the two completions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The job's row is gone, and every result with it.
    JobLost,
    /// A's stale result is stored: the lesson's failure.
    StaleWriteLanded,
    /// B took over and completed, A was refused, and B's result is stored.
    Protected,
    /// B's result is stored, but A's stale completion was answered as
    /// accepted: A believes a result that was never written.
    StaleToldSuccess,
    /// B never got the job: the expired lease could not be taken over.
    NoTakeover,
    /// Anything else: the row does not hold B's result.
    Broken,
}

impl Story {
    /// What the story shows.
    pub fn ending(&self) -> Ending {
        let Some(row) = &self.final_row else {
            return Ending::JobLost;
        };
        let result = row.result.as_deref();
        if result == Some(A_RESULT) {
            Ending::StaleWriteLanded
        } else if self.b_fence.is_none() {
            Ending::NoTakeover
        } else if self.b_completed && result == Some(B_RESULT) {
            if self.a_completed {
                Ending::StaleToldSuccess
            } else {
                Ending::Protected
            }
        } else {
            Ending::Broken
        }
    }
}

const JOB: &str = "report";
const B_RESULT: &str = "B's result";
const A_RESULT: &str = "A's stale result";

/// The story to tell on `variant`: the one `asked` for (`--story`), else
/// the one the mutant's file names, else the worksheet's (`takeover`).
pub fn story_for(asked: Option<DemoStory>, variant: &crate::variant::Variant) -> DemoStory {
    asked
        .or_else(|| {
            variant
                .mutant
                .as_deref()
                .and_then(|mutant| mutant.spec.story)
        })
        .unwrap_or(DemoStory::Takeover)
}

/// Plays the worksheet's story (`takeover`) on `store` with a new
/// database at `db`: B completes, then A comes back.
pub fn play(store: &dyn JobStore, db: &Path) -> Result<Story, DemoError> {
    play_takeover([store, store], db, false, None)
}

/// Plays the `stale-first` story on `store` with a new database at `db`:
/// B takes over, A comes back while B is still working and completes,
/// then B completes.
pub fn play_stale_first(store: &dyn JobStore, db: &Path) -> Result<Story, DemoError> {
    play_takeover([store, store], db, true, None)
}

/// How every story but the power cut's begins: a new database, the job
/// enqueued, and A's claim of it with a lease until 110; A's fence.
fn a_claims(
    store: &dyn JobStore,
    db: &Path,
    timeline: &mut Timeline,
) -> Result<Option<Fence>, StoreError> {
    store.init_db(db)?;
    let added = store.enqueue(db, JOB)?;
    timeline.note(0.0, "-", format!("enqueue({JOB:?})"), added.to_string());
    let a_fence = store.claim(db, JOB, "A", 100.0, 10.0)?;
    timeline.note(100.0, "A", "claim, ttl 10".into(), show_fence(a_fence));
    Ok(a_fence)
}

/// A claims and stalls, B takes the expired lease over, and both complete:
/// A first when `stale_first`, else B first. A's calls are made by `a`,
/// B's by `b`. With a `link` (A's to the server), A's stall is the link
/// cut: A tries to renew and gets no answer, and the link is mended just
/// before A comes back.
fn play_takeover(
    workers: [&dyn JobStore; 2],
    db: &Path,
    stale_first: bool,
    link: Option<&dyn Link>,
) -> Result<Story, DemoError> {
    let [a, b] = workers;
    let mut timeline = Timeline::default();
    let a_fence = a_claims(a, db, &mut timeline)?;
    let stale = a_fence.unwrap_or(Fence(1));
    match link {
        None => timeline.note(
            101.0,
            "A",
            "stalls (a long pause: GC, swap, a network partition)".into(),
            String::new(),
        ),
        Some(link) => a_cut_off(a, db, &mut timeline, link, stale)?,
    }
    timeline.note(
        110.0,
        "-",
        "A's lease runs out (until = 110)".into(),
        String::new(),
    );

    let b_fence = b.claim(db, JOB, "B", 110.0, 10.0)?;
    timeline.note(110.0, "B", "claim, ttl 10".into(), show_fence(b_fence));
    let a_back = |timeline: &mut Timeline, time: f64| -> Result<bool, DemoError> {
        let mut back = "wakes up";
        if let Some(link) = link {
            link.mend().map_err(|why| DemoError::Link {
                what: "mended",
                why,
            })?;
            timeline.note(
                time - 1.0,
                "-",
                "A's link is mended: A reaches the server again".into(),
                String::new(),
            );
            back = "back";
        }
        Ok(a_completes(a, db, timeline, stale, time, back)?)
    };
    let (a_completed, b_completed) = if stale_first {
        if b_fence.is_some() {
            timeline.note(
                111.0,
                "B",
                "works on the job (its lease runs until 120)".into(),
                String::new(),
            );
        }
        let a_completed = a_back(&mut timeline, 113.0)?;
        let b_completed = b_completes(b, db, &mut timeline, b_fence, 115.0)?;
        (a_completed, b_completed)
    } else {
        let b_completed = b_completes(b, db, &mut timeline, b_fence, 112.0)?;
        let a_completed = a_back(&mut timeline, 113.0)?;
        (a_completed, b_completed)
    };
    let final_row = b.state(db, JOB)?;
    Ok(Story {
        stale_first,
        partition: link.is_some(),
        events: timeline.0,
        b_fence,
        b_completed,
        a_completed,
        final_row,
    })
}

/// A's link to the server is cut, and A, running on, tries to renew its
/// lease (with `stale`, its fence) and gets no answer.
fn a_cut_off(
    a: &dyn JobStore,
    db: &Path,
    timeline: &mut Timeline,
    link: &dyn Link,
    stale: Fence,
) -> Result<(), DemoError> {
    link.cut()
        .map_err(|why| DemoError::Link { what: "cut", why })?;
    timeline.note(
        101.0,
        "-",
        "A's link to the server is cut: A runs on, cut off from the server".into(),
        String::new(),
    );
    let renewed = a.renew(db, JOB, "A", stale, 105.0, 10.0);
    timeline.note(
        105.0,
        "A",
        format!("renew with fence {stale}, ttl 10"),
        match renewed {
            Ok(done) => accepted(done),
            // A cannot tell whether the server ever had it.
            Err(_) => "no answer: the call failed".into(),
        },
    );
    Ok(())
}

/// B completes at `time` with the fence its claim got, if it got one.
fn b_completes(
    store: &dyn JobStore,
    db: &Path,
    timeline: &mut Timeline,
    b_fence: Option<Fence>,
    time: f64,
) -> Result<bool, StoreError> {
    match b_fence {
        Some(fence) => {
            let done = store.complete(db, JOB, "B", fence, time, B_RESULT)?;
            timeline.note(
                time,
                "B",
                format!("complete with fence {fence}, result {B_RESULT:?}"),
                accepted(done),
            );
            Ok(done)
        }
        None => {
            timeline.note(
                time,
                "B",
                "has no lease, so it cannot complete".into(),
                String::new(),
            );
            Ok(false)
        }
    }
}

/// A comes back at `time` (`back` says how) and completes with its old
/// fence.
fn a_completes(
    store: &dyn JobStore,
    db: &Path,
    timeline: &mut Timeline,
    stale: Fence,
    time: f64,
    back: &str,
) -> Result<bool, StoreError> {
    let done = store.complete(db, JOB, "A", stale, time, A_RESULT)?;
    timeline.note(
        time,
        "A",
        format!("{back}, complete with its old fence {stale}, result {A_RESULT:?}"),
        accepted(done),
    );
    Ok(done)
}

/// A worker's link to the server, which the partition story cuts and
/// mends.
pub trait Link {
    /// Takes the link down: nothing passes either way until it is mended.
    ///
    /// Errors: why it could not be cut.
    fn cut(&self) -> Result<(), String>;
    /// Brings it back up.
    ///
    /// Errors: why it could not be mended.
    fn mend(&self) -> Result<(), String>;
}

/// Plays the partition story with a new database at `db`: A, whose calls
/// are made by `a` (a worker on a host of its own), claims; its link to
/// the server (`link`) is cut; A, still running, tries to renew its lease
/// and gets no answer; the lease runs out, and B (`b`, on another host)
/// claims; the link is mended, and A completes with its old fence, after
/// B completes, or while B still works when `stale_first` (the order a
/// completion guarded by the job's state alone breaks in). What it shows
/// is judged as the worksheet's story is ([`Story::ending`]).
///
/// Errors: a call that must be answered failed, or the link could not be
/// cut or mended.
pub fn play_partition(
    a: &dyn JobStore,
    b: &dyn JobStore,
    link: &dyn Link,
    db: &Path,
    stale_first: bool,
) -> Result<Story, DemoError> {
    play_takeover([a, b], db, stale_first, Some(link))
}

/// A story with a restart between A's claim and B's (`restart`, or the
/// power cut) as it happened on one implementation.
#[derive(Debug, Clone, PartialEq)]
pub struct RestartStory {
    /// The events, in time order.
    pub events: Vec<Event>,
    /// The fence A's claim got before the restart.
    pub a_fence: Option<Fence>,
    /// The fence B's claim got after it.
    pub b_fence: Option<Fence>,
    /// The job's row at the end.
    pub final_row: Option<Job>,
}

/// What a restart story shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestartEnding {
    /// B got a greater fence than A: the fence survived the restart.
    FenceKept,
    /// B got A's fence (or a smaller one) again: two workers hold one token.
    FenceReused,
    /// One of the claims got no fence at all.
    NoFence,
}

impl RestartStory {
    /// What the story shows.
    pub fn ending(&self) -> RestartEnding {
        match (self.a_fence, self.b_fence) {
            (Some(a), Some(b)) if b > a => RestartEnding::FenceKept,
            (Some(_), Some(_)) => RestartEnding::FenceReused,
            _ => RestartEnding::NoFence,
        }
    }
}

/// Plays the `restart` story on `store` with a new database at `db`: A
/// claims and releases the job as its worker shuts down, every worker
/// restarts and runs `init_db` on the existing file, B claims.
pub fn play_restart(store: &dyn JobStore, db: &Path) -> Result<RestartStory, StoreError> {
    let mut timeline = Timeline::default();
    let a_fence = a_claims(store, db, &mut timeline)?;
    let stale = a_fence.unwrap_or(Fence(1));
    let released = store.release(db, JOB, "A", stale)?;
    timeline.note(
        102.0,
        "A",
        format!("shuts down for an upgrade: release with fence {stale}"),
        accepted(released),
    );
    store.init_db(db)?;
    timeline.note(
        105.0,
        "-",
        "every worker restarts and runs init_db on the existing file".into(),
        "ok".into(),
    );
    let b_fence = store.claim(db, JOB, "B", 120.0, 10.0)?;
    timeline.note(120.0, "B", "claim, ttl 10".into(), show_fence(b_fence));
    let final_row = store.state(db, JOB)?;
    Ok(RestartStory {
        events: timeline.0,
        a_fence,
        b_fence,
        final_row,
    })
}

/// Any story, as played.
#[derive(Debug, Clone, PartialEq)]
pub enum Told {
    /// `takeover` or `stale-first`.
    Takeover(Story),
    /// `restart`.
    Restart(RestartStory),
}

/// Plays `story` on `store` with a new database at `db`.
pub fn tell(story: DemoStory, store: &dyn JobStore, db: &Path) -> Result<Told, DemoError> {
    Ok(match story {
        DemoStory::Takeover => Told::Takeover(play(store, db)?),
        DemoStory::StaleFirst => Told::Takeover(play_stale_first(store, db)?),
        DemoStory::Restart => Told::Restart(play_restart(store, db)?),
    })
}

/// Plays the partition story ([`play_partition`]) for real: A and B are
/// the first two of `workers` (on hosts of their own), the server on a
/// cluster of the story's own on another, and A's link is the veth pair
/// [`Hosts`](crate::pg_server::Hosts) cuts. Everything it made is removed
/// before it returns.
///
/// Errors: the hosts, the cluster or the workers could not be made
/// ([`DemoError::Run`]), or the story's own ([`play_partition`]).
pub fn play_partition_on_hosts(
    workers: &crate::chaos::run::Workers,
    stale_first: bool,
) -> Result<Story, DemoError> {
    let apart = crate::chaos::run::Apart::start(workers, 2, &std::env::temp_dir())?;
    let link = HostLink {
        hosts: apart.hosts(),
        worker: 0,
    };
    play_partition(
        apart.store(0),
        apart.store(1),
        &link,
        apart.db(),
        stale_first,
    )
}

/// A worker's link on hosts of their own, as the partition story cuts it.
struct HostLink<'h> {
    hosts: &'h crate::pg_server::Hosts,
    worker: usize,
}

impl Link for HostLink<'_> {
    fn cut(&self) -> Result<(), String> {
        self.hosts
            .cut(self.worker)
            .map_err(|error| error.to_string())
    }

    fn mend(&self) -> Result<(), String> {
        self.hosts
            .mend(self.worker)
            .map_err(|error| error.to_string())
    }
}

/// Why a story could not be told.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// A store failed an operation that the story needs answered (A's
    /// renewal, cut off, is a failure the partition story tells); its own
    /// message.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The simulated power cut failed: the shim could not be installed or
    /// could not track the database, or a file could not be put back.
    #[error("the simulated power cut failed: {0}")]
    Shim(ShimError),
    /// The hosts, the cluster or the workers of the partition story could
    /// not be made.
    #[error(transparent)]
    Run(#[from] crate::chaos::run::RunError),
    /// A's link could not be cut or mended.
    #[error("A's link to the server could not be {what}: {why}")]
    Link {
        /// `cut` or `mended`.
        what: &'static str,
        /// Why.
        why: String,
    },
}

/// Plays the power-cut story on `store` (one compiled into this process)
/// with a new database at `db`.
///
/// Errors: the store's own ([`DemoError::Store`]), or the shim's
/// ([`DemoError::Shim`]: it could not be installed, or a file not put
/// back).
pub fn play_power_cut(store: &dyn JobStore, db: &Path) -> Result<RestartStory, DemoError> {
    let failed = DemoError::Store;
    let shim = DemoError::Shim;
    let mut timeline = Timeline::default();
    store.init_db(db).map_err(failed)?;
    let added = store.enqueue(db, JOB).map_err(failed)?;
    timeline.note(0.0, "-", format!("enqueue({JOB:?})"), added.to_string());
    let disk = Disk::track(db).map_err(shim)?;
    let a_fence = store.claim(db, JOB, "A", 100.0, 10.0).map_err(failed)?;
    timeline.note(100.0, "A", "claim, ttl 10".into(), show_fence(a_fence));
    let cut = disk.cut().map_err(shim)?;
    let lost = match cut.writes_lost {
        0 => "every commit had reached the disk, nothing is lost".to_string(),
        1 => "1 write not yet synced to disk is lost".to_string(),
        n => format!("{n} writes not yet synced to disk are lost"),
    };
    timeline.note(
        105.0,
        "-",
        format!("the power fails: {lost}"),
        String::new(),
    );
    store.init_db(db).map_err(failed)?;
    timeline.note(
        106.0,
        "-",
        "the machine restarts; the store opens the file as the disk kept it".into(),
        String::new(),
    );
    let b_fence = store.claim(db, JOB, "B", 120.0, 10.0).map_err(failed)?;
    timeline.note(120.0, "B", "claim, ttl 10".into(), show_fence(b_fence));
    let final_row = store.state(db, JOB).map_err(failed)?;
    drop(disk);
    Ok(RestartStory {
        events: timeline.0,
        a_fence,
        b_fence,
        final_row,
    })
}

fn show_fence(fence: Option<Fence>) -> String {
    fence.map_or("none".into(), |fence| format!("fence {fence}"))
}

fn accepted(done: bool) -> String {
    if done { "accepted" } else { "refused" }.to_string()
}

#[cfg(test)]
mod tests;
