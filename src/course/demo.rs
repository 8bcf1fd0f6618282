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
pub fn play(store: &dyn JobStore, db: &Path) -> Result<Story, StoreError> {
    play_takeover(store, db, false)
}

/// Plays the `stale-first` story on `store` with a new database at `db`:
/// B takes over, A comes back while B is still working and completes,
/// then B completes.
pub fn play_stale_first(store: &dyn JobStore, db: &Path) -> Result<Story, StoreError> {
    play_takeover(store, db, true)
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
/// A first when `stale_first`, else B first.
fn play_takeover(store: &dyn JobStore, db: &Path, stale_first: bool) -> Result<Story, StoreError> {
    let mut timeline = Timeline::default();
    let a_fence = a_claims(store, db, &mut timeline)?;
    timeline.note(
        101.0,
        "A",
        "stalls (a long pause: GC, swap, a network partition)".into(),
        String::new(),
    );
    timeline.note(
        110.0,
        "-",
        "A's lease runs out (until = 110)".into(),
        String::new(),
    );

    let b_fence = store.claim(db, JOB, "B", 110.0, 10.0)?;
    timeline.note(110.0, "B", "claim, ttl 10".into(), show_fence(b_fence));
    let stale = a_fence.unwrap_or(Fence(1));
    let (a_completed, b_completed) = if stale_first {
        if b_fence.is_some() {
            timeline.note(
                111.0,
                "B",
                "works on the job (its lease runs until 120)".into(),
                String::new(),
            );
        }
        let a_completed = a_completes(store, db, &mut timeline, stale, 113.0)?;
        let b_completed = b_completes(store, db, &mut timeline, b_fence, 115.0)?;
        (a_completed, b_completed)
    } else {
        let b_completed = b_completes(store, db, &mut timeline, b_fence, 112.0)?;
        let a_completed = a_completes(store, db, &mut timeline, stale, 113.0)?;
        (a_completed, b_completed)
    };
    let final_row = store.state(db, JOB)?;
    Ok(Story {
        stale_first,
        events: timeline.0,
        b_fence,
        b_completed,
        a_completed,
        final_row,
    })
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

/// A wakes up at `time` and completes with its old fence.
fn a_completes(
    store: &dyn JobStore,
    db: &Path,
    timeline: &mut Timeline,
    stale: Fence,
    time: f64,
) -> Result<bool, StoreError> {
    let done = store.complete(db, JOB, "A", stale, time, A_RESULT)?;
    timeline.note(
        time,
        "A",
        format!("wakes up, complete with its old fence {stale}, result {A_RESULT:?}"),
        accepted(done),
    );
    Ok(done)
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
pub fn tell(story: DemoStory, store: &dyn JobStore, db: &Path) -> Result<Told, StoreError> {
    Ok(match story {
        DemoStory::Takeover => Told::Takeover(play(store, db)?),
        DemoStory::StaleFirst => Told::Takeover(play_stale_first(store, db)?),
        DemoStory::Restart => Told::Restart(play_restart(store, db)?),
    })
}

/// Why the power-cut story could not be told.
#[derive(Debug, thiserror::Error)]
pub enum PowerCutError {
    /// The store failed an operation; its own message.
    #[error(transparent)]
    Store(StoreError),
    /// The simulated power cut failed: the shim could not be installed or
    /// could not track the database, or a file could not be put back.
    #[error("the simulated power cut failed: {0}")]
    Shim(ShimError),
}

/// Plays the power-cut story on `store` (one compiled into this process)
/// with a new database at `db`.
///
/// Errors: the store's own ([`PowerCutError::Store`]), or the shim's
/// ([`PowerCutError::Shim`]: it could not be installed, or a file not put
/// back).
pub fn play_power_cut(store: &dyn JobStore, db: &Path) -> Result<RestartStory, PowerCutError> {
    let failed = PowerCutError::Store;
    let shim = PowerCutError::Shim;
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
mod tests {
    use super::*;
    use crate::runner::DEFAULT_TIMEOUT;
    use crate::variant::Variant;

    fn play_on(id: &str, folder: &Path) -> Story {
        let variant = Variant::find(id).unwrap();
        play(
            variant.open(DEFAULT_TIMEOUT).as_ref(),
            &folder.join(format!("{id}.db")),
        )
        .unwrap()
    }

    #[test]
    fn the_demo_tells_the_story_and_judges_it() {
        let folder = tempfile::tempdir().unwrap();
        let story = play_on("reference", folder.path());
        let answers: Vec<&str> = story
            .events
            .iter()
            .map(|event| event.answer.as_str())
            .collect();
        assert_eq!(
            answers,
            ["true", "fence 1", "", "", "fence 2", "accepted", "refused"]
        );
        assert_eq!(story.events[6].actor, "A");
        assert_eq!(story.events[6].time, 113.0);
        assert_eq!(story.ending(), Ending::Protected);
        let story = play_on("h06h", folder.path());
        assert_eq!(story.ending(), Ending::StaleWriteLanded);
        assert_eq!(story.events[6].answer, "accepted");
    }

    #[test]
    fn a_store_that_refuses_the_takeover_is_not_said_to_protect_b() {
        let folder = tempfile::tempdir().unwrap();
        let story = play_on("04", folder.path());
        assert_eq!(
            story.events[4].answer, "none",
            "04 refuses B at the boundary"
        );
        assert_eq!(
            story.events[5].action,
            "has no lease, so it cannot complete"
        );
        assert_eq!(story.ending(), Ending::NoTakeover);
        let row = story.final_row.unwrap();
        assert_eq!((row.owner.as_deref(), row.fence), (Some("A"), Fence(1)));
    }

    #[test]
    fn a_store_that_loses_b_s_result_is_broken() {
        let folder = tempfile::tempdir().unwrap();
        let story = play_on("h06a", folder.path());
        assert_eq!(story.ending(), Ending::Broken, "{story:?}");
    }

    #[test]
    fn the_power_cut_story_keeps_the_fence_on_the_reference_and_reuses_it_without_full_sync() {
        let folder = tempfile::tempdir().unwrap();
        let play_cut = |id: &str| {
            let variant = Variant::find(id).unwrap();
            play_power_cut(
                variant.open(DEFAULT_TIMEOUT).as_ref(),
                &folder.path().join(format!("{id}.db")),
            )
            .unwrap()
        };
        let story = play_cut("reference");
        assert_eq!(
            (story.a_fence, story.b_fence),
            (Some(Fence(1)), Some(Fence(2)))
        );
        assert_eq!(story.ending(), RestartEnding::FenceKept);
        let story = play_cut("h04g");
        assert_eq!(
            (story.a_fence, story.b_fence),
            (Some(Fence(1)), Some(Fence(1)))
        );
        assert_eq!(story.ending(), RestartEnding::FenceReused);
        assert!(
            story.events[2]
                .action
                .contains("writes not yet synced to disk are lost"),
            "{story:?}"
        );
        assert_eq!(story.final_row.unwrap().owner.as_deref(), Some("B"));
    }

    fn tell_on(story: DemoStory, id: &str, folder: &Path) -> Told {
        let variant = Variant::find(id).unwrap();
        let db = folder.join(format!("{id}-{}.db", story.name()));
        tell(story, variant.open(DEFAULT_TIMEOUT).as_ref(), &db).unwrap()
    }

    /// Whether a story, as told, shows the store protecting B's work (or
    /// the fence, across a restart).
    fn protected(told: &Told) -> bool {
        match told {
            Told::Takeover(story) => story.ending() == Ending::Protected,
            Told::Restart(story) => story.ending() == RestartEnding::FenceKept,
        }
    }

    #[test]
    fn the_reference_comes_out_protected_in_every_story() {
        let folder = tempfile::tempdir().unwrap();
        let told: Vec<Told> = DemoStory::ALL
            .iter()
            .map(|story| tell_on(*story, "reference", folder.path()))
            .collect();
        for (story, told) in DemoStory::ALL.iter().zip(&told) {
            assert!(protected(told), "{}: {told:?}", story.name());
        }
        let [_, Told::Takeover(stale_first), Told::Restart(restart)] = &told[..] else {
            panic!("the stories are takeover, stale-first, restart: {told:?}");
        };
        let answers: Vec<(&str, &str)> = stale_first
            .events
            .iter()
            .map(|event| (event.actor, event.answer.as_str()))
            .collect();
        assert_eq!(
            &answers[4..],
            [
                ("B", "fence 2"),
                ("B", ""),
                ("A", "refused"),
                ("B", "accepted")
            ]
        );
        assert_eq!(
            (restart.a_fence, restart.b_fence),
            (Some(Fence(1)), Some(Fence(2)))
        );
    }

    /// Each mutant that names a story breaks in it, where the reference is
    /// protected (the test above).
    #[test]
    fn each_mutant_s_own_story_shows_its_break() {
        let folder = tempfile::tempdir().unwrap();
        let named: Vec<_> = crate::variant::MUTANTS
            .iter()
            .filter_map(|mutant| Some((mutant.id, mutant.story?)))
            .collect();
        assert!(named.len() >= 3, "{named:?}");
        for (id, story) in named {
            let told = tell_on(story, id, folder.path());
            assert!(!protected(&told), "{id} in {}: {told:?}", story.name());
        }
    }

    #[test]
    fn a_completion_guarded_by_the_job_s_state_lands_only_when_a_comes_back_first() {
        let folder = tempfile::tempdir().unwrap();
        assert_eq!(play_on("f06a", folder.path()).ending(), Ending::Protected);
        let Told::Takeover(story) = tell_on(DemoStory::StaleFirst, "f06a", folder.path()) else {
            panic!("stale-first is a takeover story");
        };
        assert_eq!(story.ending(), Ending::StaleWriteLanded, "{story:?}");
        assert!(story.a_completed && !story.b_completed, "{story:?}");
    }

    #[test]
    fn a_completion_that_deletes_by_id_loses_the_job() {
        let folder = tempfile::tempdir().unwrap();
        for story in [DemoStory::Takeover, DemoStory::StaleFirst] {
            let Told::Takeover(story) = tell_on(story, "f06b", folder.path()) else {
                panic!("a takeover story");
            };
            assert_eq!(story.ending(), Ending::JobLost, "{story:?}");
            assert_eq!(story.final_row, None);
        }
    }

    #[test]
    fn a_stale_completion_told_it_succeeded_is_not_protected() {
        let folder = tempfile::tempdir().unwrap();
        let story = play_on("f06c", folder.path());
        assert_eq!(story.ending(), Ending::StaleToldSuccess, "{story:?}");
        assert_eq!(story.events[6].answer, "accepted");
        let row = story.final_row.unwrap();
        assert_eq!(row.result.as_deref(), Some(B_RESULT));
    }

    #[test]
    fn a_restart_that_forgets_the_fence_hands_it_out_twice() {
        let folder = tempfile::tempdir().unwrap();
        let Told::Restart(story) = tell_on(DemoStory::Restart, "f01a", folder.path()) else {
            panic!("restart is a restart story");
        };
        assert_eq!(
            (story.a_fence, story.b_fence),
            (Some(Fence(1)), Some(Fence(1)))
        );
        assert_eq!(story.ending(), RestartEnding::FenceReused);
        assert_eq!(story.events[2].answer, "accepted", "A's release");
    }

    #[test]
    fn a_missing_folder_is_the_store_s_error() {
        let folder = tempfile::tempdir().unwrap();
        let error = play(
            Variant::reference().open(DEFAULT_TIMEOUT).as_ref(),
            &folder.path().join("missing/x.db"),
        )
        .unwrap_err();
        assert!(matches!(error, StoreError::MissingFolder { .. }));
    }

    /// The power-cut story fails with the store's error as the store says
    /// it, or with the shim's, saying that the simulated power cut failed.
    #[test]
    fn the_power_cut_story_fails_with_the_store_s_error_or_the_shim_s() {
        let folder = tempfile::tempdir().unwrap();
        let store = Variant::reference().open(DEFAULT_TIMEOUT);
        let error =
            play_power_cut(store.as_ref(), &folder.path().join("missing/x.db")).unwrap_err();
        let PowerCutError::Store(cause @ StoreError::MissingFolder { .. }) = &error else {
            panic!("not the store's missing folder: {error:?}");
        };
        assert_eq!(error.to_string(), cause.to_string());
        let db = folder.path().join("tracked.db");
        let _tracked = Disk::track(&db).unwrap();
        let error = play_power_cut(store.as_ref(), &db).unwrap_err();
        let PowerCutError::Shim(cause @ ShimError::AlreadyTracked { .. }) = &error else {
            panic!("not the shim's refusal to track the database twice: {error:?}");
        };
        assert_eq!(
            error.to_string(),
            format!("the simulated power cut failed: {cause}")
        );
    }
}
