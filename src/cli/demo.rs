//! `lab demo`: the worksheet's story replayed on a real database.
//!
//! A claims the job and stalls; its lease runs out; B claims it with the
//! next fence and completes; A comes back and tries to complete with its
//! old fence. The reference refuses A and keeps B's result. Replayed with a
//! mutant, the same story shows where that protection breaks; what the
//! lab concludes comes from the answers and the final row, whatever the
//! variant did.

use super::args::{without_faults, ImplArgs};
use super::outcome::{say, CliError, Outcome};
use colored::Colorize;
use lease_lab::error::StoreError;
use lease_lab::job::{Fence, Job};
use lease_lab::job_store::JobStore;
use lease_lab::runner::DEFAULT_TIMEOUT;
use lease_lab::variant::{Variant, REFERENCE_ID};
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
    let story = without_faults(|| play(store.as_ref(), &path))?
        .map_err(|error| CliError::Failed(error.to_string()))?;
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
    let mut events = Vec::new();
    let mut note = |time: f64, actor: &'static str, action: String, answer: String| {
        events.push(Event {
            time,
            actor,
            action,
            answer,
        });
    };
    store.init_db(db)?;
    let added = store.enqueue(db, JOB)?;
    note(0.0, "-", format!("enqueue({JOB:?})"), added.to_string());

    let a_fence = store.claim(db, JOB, "A", 100.0, 10.0)?;
    note(100.0, "A", "claim, ttl 10".into(), show_fence(a_fence));
    note(
        101.0,
        "A",
        "stalls (a long pause: GC, swap, a network partition)".into(),
        String::new(),
    );
    note(
        110.0,
        "-",
        "A's lease runs out (until = 110)".into(),
        String::new(),
    );

    let b_fence = store.claim(db, JOB, "B", 110.0, 10.0)?;
    note(110.0, "B", "claim, ttl 10".into(), show_fence(b_fence));
    let b_completed = match b_fence {
        Some(fence) => {
            let done = store.complete(db, JOB, "B", fence, 112.0, B_RESULT)?;
            note(
                112.0,
                "B",
                format!("complete with fence {fence}, result {B_RESULT:?}"),
                accepted(done),
            );
            done
        }
        None => {
            note(
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
    note(
        113.0,
        "A",
        format!("wakes up, complete with its old fence {stale}, result {A_RESULT:?}"),
        accepted(a_completed),
    );
    let final_row = store.state(db, JOB)?;
    Ok(Story {
        events,
        b_fence,
        b_completed,
        a_completed,
        final_row,
    })
}

fn show_fence(fence: Option<Fence>) -> String {
    fence.map_or("none".into(), |fence| format!("fence {fence}"))
}

fn accepted(done: bool) -> String {
    if done { "accepted" } else { "refused" }.to_string()
}

/// The story as a timeline, then the final row and what it shows.
pub fn story_text(story: &Story, variant: &Variant) -> String {
    let mut out = match variant.mutant.as_deref() {
        None => format!("{}\n\n", "The story on the reference store".bold()),
        Some(mutant) => format!(
            "{}\n\n",
            format!(
                "The story on mutant {}: {}",
                mutant.spec.id, mutant.spec.title
            )
            .bold()
        ),
    };
    for event in &story.events {
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
    match &story.final_row {
        Some(row) => writeln!(
            out,
            "\n  final row: owner {}, fence {}, done {}, result {}",
            row.owner.as_deref().unwrap_or("none"),
            row.fence,
            row.done,
            row.result
                .as_deref()
                .map_or("none".to_string(), |r| format!("{r:?}"))
        ),
        None => writeln!(out, "\n  final row: none (the job is gone)"),
    }
    .unwrap();
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
