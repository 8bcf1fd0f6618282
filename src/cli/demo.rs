//! `lab demo`: the worksheet's story replayed on a real database.
//!
//! A claims the job and stalls; its lease runs out; B claims it with the
//! next fence and completes; A comes back and tries to complete with its
//! old fence. The reference refuses A and keeps B's result. Replayed with a
//! mutant, the same story shows where that protection breaks; what the
//! lab concludes comes from the answers and the final row, whatever the
//! variant did.
//!
//! `lab demo --power-cut` tells the other story the fence must survive: A
//! claims, the power fails before the disk has what was not synced, the
//! machine restarts, B claims. B must get a greater fence than A's, or two
//! workers hold the same token. The power cut is the lab's VFS shim
//! ([`lease_lab::vfs_shim`]), so this story runs only on the stores
//! compiled into `lab`.

use super::args::ImplArgs;
use super::outcome::{say, CliError, Outcome};
use colored::Colorize;
use lease_lab::error::StoreError;
use lease_lab::job::{Fence, Job};
use lease_lab::job_store::JobStore;
use lease_lab::runner::DEFAULT_TIMEOUT;
use lease_lab::variant::{Variant, REFERENCE_ID};
use lease_lab::vfs_shim::{Disk, ShimError};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// `lab demo`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Replay it on a mutant instead of the reference (e.g. h06h).
    #[arg(long, default_value = REFERENCE_ID)]
    variant: String,
    /// Keep the database at this path (default: a temporary one).
    #[arg(long)]
    db: Option<PathBuf>,
    /// Tell the power-cut story instead: A claims, the power fails, B claims
    /// (try it with --variant h04g, a store that does not sync each commit).
    #[arg(long)]
    power_cut: bool,
    #[command(flatten)]
    implementation: ImplArgs,
}

/// `lab demo`: plays the story and tells it.
pub fn run(args: &Args) -> Outcome {
    let variant = args.implementation.variant(&args.variant)?;
    let folder = tempfile::tempdir()
        .map_err(|error| CliError::Failed(format!("cannot make a temporary folder: {error}")))?;
    let path = args
        .db
        .clone()
        .unwrap_or_else(|| folder.path().join("demo.db"));
    let store = variant.open(DEFAULT_TIMEOUT);
    if args.power_cut {
        if !store.in_this_process() {
            return Err(CliError::Usage(format!(
                "the power cut is simulated under the stores compiled into lab, and {} runs in a program of its own: use --impl rust (the default)",
                args.implementation.subject.name()
            )));
        }
        let story = play_power_cut(store.as_ref(), &path)?;
        return say(&power_cut_text(&story, &variant));
    }
    let story = play(store.as_ref(), &path).map_err(|error| CliError::Failed(error.to_string()))?;
    say(&story_text(&story, &variant))
}

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

/// The whole story as it happened on one implementation.
#[derive(Debug, Clone, PartialEq)]
pub struct Story {
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

/// What the story shows, judged from the answers and the final row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// A's stale result is stored: the lesson's failure.
    StaleWriteLanded,
    /// B took over and completed, A was refused, and B's result is stored.
    Protected,
    /// B never got the job: the expired lease could not be taken over.
    NoTakeover,
    /// Anything else: the row does not hold B's result.
    Broken,
}

impl Story {
    /// What the story shows.
    pub fn ending(&self) -> Ending {
        let result = self
            .final_row
            .as_ref()
            .and_then(|row| row.result.as_deref());
        if result == Some(A_RESULT) {
            Ending::StaleWriteLanded
        } else if self.b_fence.is_none() {
            Ending::NoTakeover
        } else if self.b_completed && !self.a_completed && result == Some(B_RESULT) {
            Ending::Protected
        } else {
            Ending::Broken
        }
    }
}

const JOB: &str = "report";
const B_RESULT: &str = "B's result";
const A_RESULT: &str = "A's stale result";

/// Plays the story on `store` with a new database at `db`.
pub fn play(store: &dyn JobStore, db: &Path) -> Result<Story, StoreError> {
    let mut timeline = Timeline::default();
    store.init_db(db)?;
    let added = store.enqueue(db, JOB)?;
    timeline.note(0.0, "-", format!("enqueue({JOB:?})"), added.to_string());

    let a_fence = store.claim(db, JOB, "A", 100.0, 10.0)?;
    timeline.note(100.0, "A", "claim, ttl 10".into(), show_fence(a_fence));
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
    let b_completed = match b_fence {
        Some(fence) => {
            let done = store.complete(db, JOB, "B", fence, 112.0, B_RESULT)?;
            timeline.note(
                112.0,
                "B",
                format!("complete with fence {fence}, result {B_RESULT:?}"),
                accepted(done),
            );
            done
        }
        None => {
            timeline.note(
                112.0,
                "B",
                "has no lease, so it cannot complete".into(),
                String::new(),
            );
            false
        }
    };

    let stale = a_fence.unwrap_or(Fence(1));
    let a_completed = store.complete(db, JOB, "A", stale, 113.0, A_RESULT)?;
    timeline.note(
        113.0,
        "A",
        format!("wakes up, complete with its old fence {stale}, result {A_RESULT:?}"),
        accepted(a_completed),
    );
    let final_row = store.state(db, JOB)?;
    Ok(Story {
        events: timeline.0,
        b_fence,
        b_completed,
        a_completed,
        final_row,
    })
}

/// The power-cut story as it happened on one implementation.
#[derive(Debug, Clone, PartialEq)]
pub struct PowerCutStory {
    /// The events, in time order.
    pub events: Vec<Event>,
    /// The fence A's claim got before the cut.
    pub a_fence: Option<Fence>,
    /// The fence B's claim got after it.
    pub b_fence: Option<Fence>,
    /// The job's row at the end.
    pub final_row: Option<Job>,
}

/// What the power-cut story shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PowerCutEnding {
    /// B got a greater fence than A: the fence survived the cut.
    FenceKept,
    /// B got A's fence (or a smaller one) again: two workers hold one token.
    FenceReused,
    /// One of the claims got no fence at all.
    NoFence,
}

impl PowerCutStory {
    /// What the story shows.
    pub fn ending(&self) -> PowerCutEnding {
        match (self.a_fence, self.b_fence) {
            (Some(a), Some(b)) if b > a => PowerCutEnding::FenceKept,
            (Some(_), Some(_)) => PowerCutEnding::FenceReused,
            _ => PowerCutEnding::NoFence,
        }
    }
}

/// Plays the power-cut story on `store` (one compiled into this process)
/// with a new database at `db`.
///
/// Errors: the store's own, or the shim's (it could not be installed, or a
/// file not put back), as the command's failure.
pub fn play_power_cut(store: &dyn JobStore, db: &Path) -> Result<PowerCutStory, CliError> {
    let failed = |error: StoreError| CliError::Failed(error.to_string());
    let shim =
        |error: ShimError| CliError::Failed(format!("the simulated power cut failed: {error}"));
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
    Ok(PowerCutStory {
        events: timeline.0,
        a_fence,
        b_fence,
        final_row,
    })
}

/// The power-cut story as a timeline, then the final row and what it shows.
pub fn power_cut_text(story: &PowerCutStory, variant: &Variant) -> String {
    let mut out = format!("{}\n\n", title("The power-cut story", variant).bold());
    out.push_str(&timeline(&story.events));
    out.push_str(&final_row_text(story.final_row.as_ref()));
    let conclusion = match (story.ending(), story.a_fence, story.b_fence) {
        (PowerCutEnding::FenceKept, Some(a), Some(b)) => format!(
            "Fence {a} survived the power cut: B got fence {b}, so a write with A's fence {a} can still be told from B's and refused."
        )
        .green()
        .bold(),
        (PowerCutEnding::FenceReused, Some(a), Some(b)) => format!(
            "Fence {b} was handed out TWICE: A's claim of fence {a} was lost with the power, so B got fence {b} again. Two workers now hold the same token, and nothing that checks fences can tell their writes apart."
        )
        .red()
        .bold(),
        _ => "A claim got no fence at all: the story could not be told on this store."
            .red()
            .bold(),
    };
    writeln!(out, "\n{conclusion}").unwrap();
    if story.ending() == PowerCutEnding::FenceKept && variant.is_reference() {
        writeln!(
            out,
            "Every commit waits until the disk has it (synchronous=FULL). Now a store that does not: lab demo --power-cut --variant h04g"
        )
        .unwrap();
    }
    out
}

/// `NAME on the reference store`, or `NAME on mutant ID: TITLE`.
fn title(name: &str, variant: &Variant) -> String {
    match variant.mutant.as_deref() {
        None => format!("{name} on the reference store"),
        Some(mutant) => format!("{name} on mutant {}: {}", mutant.spec.id, mutant.spec.title),
    }
}

/// The events, one line each: time, actor, action and answer.
fn timeline(events: &[Event]) -> String {
    let mut out = String::new();
    for event in events {
        let answer = match event.answer.as_str() {
            "refused" => "refused".red().bold().to_string(),
            "accepted" => "accepted".green().to_string(),
            other => other.to_string(),
        };
        let arrow = if event.answer.is_empty() {
            String::new()
        } else {
            format!("  -> {answer}")
        };
        writeln!(
            out,
            "  t={:<5} {:<2} {}{}",
            event.time, event.actor, event.action, arrow
        )
        .unwrap();
    }
    out
}

/// The job's row at the end, in one line.
fn final_row_text(row: Option<&Job>) -> String {
    match row {
        Some(row) => format!(
            "\n  final row: owner {}, fence {}, done {}, result {}\n",
            row.owner.as_deref().unwrap_or("none"),
            row.fence,
            row.done,
            row.result
                .as_deref()
                .map_or("none".to_string(), |r| format!("{r:?}"))
        ),
        None => "\n  final row: none (the job is gone)\n".to_string(),
    }
}

fn show_fence(fence: Option<Fence>) -> String {
    fence.map_or("none".into(), |fence| format!("fence {fence}"))
}

fn accepted(done: bool) -> String {
    if done { "accepted" } else { "refused" }.to_string()
}

/// The story as a timeline, then the final row and what it shows.
pub fn story_text(story: &Story, variant: &Variant) -> String {
    let mut out = format!("{}\n\n", title("The story", variant).bold());
    out.push_str(&timeline(&story.events));
    out.push_str(&final_row_text(story.final_row.as_ref()));
    let conclusion = match story.ending() {
        Ending::StaleWriteLanded => {
            "The stale write LANDED: A, whose lease was taken over, overwrote B's result."
                .red()
                .bold()
        }
        Ending::Protected => "A's stale write was refused; B's result stands.".green().bold(),
        Ending::NoTakeover => {
            "B could not take over the expired lease, so no result was stored: the job is stuck with a worker that stalled."
                .red()
                .bold()
        }
        Ending::Broken => {
            "B took over, but its result is not what the row holds: the store lost or refused the current worker's write."
                .red()
                .bold()
        }
    };
    writeln!(out, "\n{conclusion}").unwrap();
    if story.ending() == Ending::Protected && variant.is_reference() {
        writeln!(
            out,
            "Now try it on a store that trusts the lease alone: lab demo --variant h06h"
        )
        .unwrap();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let text = story_text(&story, &Variant::reference());
        assert!(text.contains("B's result stands"), "{text}");
        assert!(text.contains("lab demo --variant h06h"), "{text}");
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
        let text = story_text(&story, &Variant::find("04").unwrap());
        assert!(!text.contains("B's result stands"), "{text}");
        assert!(text.contains("B could not take over"), "{text}");
        assert!(text.contains("final row: owner A, fence 1"), "{text}");
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
            let story = play_power_cut(
                variant.open(DEFAULT_TIMEOUT).as_ref(),
                &folder.path().join(format!("{id}.db")),
            )
            .unwrap();
            (story.clone(), power_cut_text(&story, &variant))
        };
        let (story, text) = play_cut("reference");
        assert_eq!(
            (story.a_fence, story.b_fence),
            (Some(Fence(1)), Some(Fence(2)))
        );
        assert_eq!(story.ending(), PowerCutEnding::FenceKept);
        assert!(
            text.contains("Fence 1 survived the power cut: B got fence 2"),
            "{text}"
        );
        assert!(
            text.contains("lab demo --power-cut --variant h04g"),
            "{text}"
        );
        let (story, text) = play_cut("h04g");
        assert_eq!(
            (story.a_fence, story.b_fence),
            (Some(Fence(1)), Some(Fence(1)))
        );
        assert_eq!(story.ending(), PowerCutEnding::FenceReused);
        assert!(text.contains("Fence 1 was handed out TWICE"), "{text}");
        assert!(
            text.contains("writes not yet synced to disk are lost"),
            "{text}"
        );
        assert_eq!(story.final_row.unwrap().owner.as_deref(), Some("B"));
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
}
