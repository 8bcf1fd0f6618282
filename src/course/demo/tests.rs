//! The stories of `lab demo`, played on the reference and on mutants.
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
    assert!(matches!(
        error,
        DemoError::Store(StoreError::MissingFolder { .. })
    ));
}

/// The power-cut story fails with the store's error as the store says
/// it, or with the shim's, saying that the simulated power cut failed.
#[test]
fn the_power_cut_story_fails_with_the_store_s_error_or_the_shim_s() {
    let folder = tempfile::tempdir().unwrap();
    let store = Variant::reference().open(DEFAULT_TIMEOUT);
    let error = play_power_cut(store.as_ref(), &folder.path().join("missing/x.db")).unwrap_err();
    let DemoError::Store(cause @ StoreError::MissingFolder { .. }) = &error else {
        panic!("not the store's missing folder: {error:?}");
    };
    assert_eq!(error.to_string(), cause.to_string());
    let db = folder.path().join("tracked.db");
    let _tracked = Disk::track(&db).unwrap();
    let error = play_power_cut(store.as_ref(), &db).unwrap_err();
    let DemoError::Shim(cause @ ShimError::AlreadyTracked { .. }) = &error else {
        panic!("not the shim's refusal to track the database twice: {error:?}");
    };
    assert_eq!(
        error.to_string(),
        format!("the simulated power cut failed: {cause}")
    );
}

/// A's side of a link the test cuts: while it is cut, A's calls fail as a
/// call whose connection was lost does, and reach nothing.
struct Behind<'s> {
    store: &'s dyn JobStore,
    cut: &'s std::sync::atomic::AtomicBool,
}

impl JobStore for Behind<'_> {
    fn call(
        &self,
        db: &Path,
        operation: &crate::operation::Operation,
    ) -> crate::error::Result<crate::operation::Answer> {
        if self.cut.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(StoreError::Server {
                server: "host=10.77.0.1".into(),
                detail: "the connection was lost".into(),
            });
        }
        self.store.call(db, operation)
    }
}

/// The link as the test cuts it; one that will not go down says why.
struct TestLink<'s> {
    cut: &'s std::sync::atomic::AtomicBool,
    refuses: bool,
}

impl Link for TestLink<'_> {
    fn cut(&self) -> Result<(), String> {
        if self.refuses {
            return Err("no such device".into());
        }
        self.cut.store(true, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }

    fn mend(&self) -> Result<(), String> {
        self.cut.store(false, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }
}

/// The partition story on `id` (its link cut by the test, or one that
/// `refuses` to go down), in either order.
fn partitioned(
    id: &str,
    stale_first: bool,
    refuses: bool,
    folder: &Path,
) -> Result<Story, DemoError> {
    let cut = std::sync::atomic::AtomicBool::new(false);
    let store = Variant::find(id).unwrap().open(DEFAULT_TIMEOUT);
    let a = Behind {
        store: store.as_ref(),
        cut: &cut,
    };
    let link = TestLink { cut: &cut, refuses };
    play_partition(
        &a,
        store.as_ref(),
        &link,
        &folder.join(format!("{id}-{stale_first}.db")),
        stale_first,
    )
}

/// The partition story: A's renewal, made while its link is cut, gets no
/// answer and changes nothing; the link is mended before A comes back; the
/// reference refuses A's stale completion in either order, a store that
/// guards completion by the job's state alone (f06a) takes it when A comes
/// back while B works; a link that cannot be cut stops the story, saying
/// why.
#[test]
fn the_partition_story_cuts_a_s_link_and_the_fence_decides() {
    let folder = tempfile::tempdir().unwrap();
    for stale_first in [false, true] {
        let story = partitioned("reference", stale_first, false, folder.path()).unwrap();
        assert!(story.partition && story.stale_first == stale_first);
        assert_eq!(story.ending(), Ending::Protected, "{story:?}");
        let said: Vec<(f64, &str, &str)> = story
            .events
            .iter()
            .map(|event| (event.time, event.actor, event.answer.as_str()))
            .collect();
        assert_eq!(said[2], (101.0, "-", ""), "the cut");
        assert_eq!(said[3], (105.0, "A", "no answer: the call failed"));
        assert_eq!(said[5], (110.0, "B", "fence 2"), "B takes over");
        let mended = story
            .events
            .iter()
            .position(|event| event.action.starts_with("A's link is mended"))
            .unwrap();
        assert_eq!(story.events[mended + 1].actor, "A", "A comes back after");
        assert!(story.events[mended + 1]
            .action
            .starts_with("back, complete with its old fence 1"));
        assert_eq!(story.final_row.as_ref().unwrap().fence, Fence(2));
    }
    let landed = partitioned("f06a", true, false, folder.path()).unwrap();
    assert_eq!(landed.ending(), Ending::StaleWriteLanded, "{landed:?}");
    let refused = partitioned("f06a", false, false, folder.path()).unwrap();
    assert_eq!(refused.ending(), Ending::Protected, "{refused:?}");
    let error = partitioned("reference", false, true, folder.path()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "A's link to the server could not be cut: no such device"
    );
}
